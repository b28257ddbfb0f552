/* SPDX-License-Identifier: MIT */
/*
 * test_fatbin.c - guest-lib/libcuda/fatbin.c: a fat binary keeps, in order
 * and byte for byte, the cubins of the devices' major architectures, PTX no
 * newer than the newest device and entries of other kinds, with its size
 * word rewritten; nothing comes back (the original is sent) when nothing
 * would be dropped, when nothing a device can run would be left, or when
 * the image is not well formed, however it is cut or corrupted.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbin.h"

#define EHDR 64u

struct spec {
	uint16_t kind; /* 1 PTX, 2 cubin, else another kind */
	uint32_t arch;
	uint32_t len; /* payload bytes */
};

/* A fat binary of the entries @e[0..@n), each payload filled with its
 * index + 1; its size in *@size. */
static uint8_t *build(const struct spec *e, int n, uint64_t *size)
{
	uint64_t total = 16, fat;
	uint32_t magic = VC_CU_FATBIN_MAGIC, hdr = EHDR;
	uint16_t version = 1, hsize = 16, ever = 0x0101;
	uint8_t *b, *w;

	for (int i = 0; i < n; i++)
		total += EHDR + e[i].len;
	b = calloc(1, total);
	ck_assert_ptr_nonnull(b);
	fat = total - 16;
	memcpy(b, &magic, 4);
	memcpy(b + 4, &version, 2);
	memcpy(b + 6, &hsize, 2);
	memcpy(b + 8, &fat, 8);
	w = b + 16;
	for (int i = 0; i < n; i++) {
		uint64_t len = e[i].len;

		memcpy(w, &e[i].kind, 2);
		memcpy(w + 2, &ever, 2);
		memcpy(w + 4, &hdr, 4);
		memcpy(w + 8, &len, 8);
		memcpy(w + 28, &e[i].arch, 4);
		memset(w + EHDR, i + 1, e[i].len);
		w += EHDR + e[i].len;
	}
	*size = total;
	return b;
}

/* Whether @out (@size bytes) holds exactly the entries @keep of @e, in order. */
static void expect(const uint8_t *out, uint64_t size, const struct spec *e, const int *keep, int nkeep)
{
	uint64_t at = 16, fat;

	memcpy(&fat, out + 8, 8);
	ck_assert_uint_eq(fat, size - 16);
	for (int k = 0; k < nkeep; k++) {
		const struct spec *s = &e[keep[k]];
		uint32_t arch;
		uint16_t kind;

		ck_assert_uint_le(at + EHDR + s->len, size);
		memcpy(&kind, out + at, 2);
		memcpy(&arch, out + at + 28, 4);
		ck_assert_uint_eq(kind, s->kind);
		ck_assert_uint_eq(arch, s->arch);
		for (uint32_t j = 0; j < s->len; j++)
			ck_assert_uint_eq(out[at + EHDR + j], keep[k] + 1);
		at += EHDR + s->len;
	}
	ck_assert_uint_eq(at, size);
}

/* What a PyTorch build carries: sm_75 ... sm_120 cubins and PTX. */
static const struct spec g_framework[] = {
	{2, 75, 100}, {2, 80, 200}, {2, 86, 150}, {2, 90, 300}, {1, 80, 40}, {2, 100, 120}, {2, 120, 90}, {1, 120, 60},
};

START_TEST(keeps_what_an_h100_runs)
{
	uint64_t size, tsize = 0;
	uint8_t *b = build(g_framework, 8, &size), *t;
	const int keep[] = {3, 4}; /* the sm_90 cubin, the sm_80 PTX */

	t = vc_cu_fatbin_trim(b, size, 1u << 9, 90, &tsize);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(tsize, 16 + 2 * EHDR + 300 + 40);
	ck_assert_int_eq(memcmp(t, b, 8), 0); /* magic, version, header size */
	expect(t, tsize, g_framework, keep, 2);
	free(t);
	free(b);
}
END_TEST

START_TEST(several_devices_keep_each_ones_code)
{
	uint64_t size, tsize = 0;
	uint8_t *b = build(g_framework, 8, &size), *t;
	const int keep[] = {1, 2, 3, 4}; /* sm_80, sm_86, sm_90 cubins, sm_80 PTX */

	/* an A100 (8.0) and an H100 (9.0) */
	t = vc_cu_fatbin_trim(b, size, 1u << 8 | 1u << 9, 90, &tsize);
	ck_assert_ptr_nonnull(t);
	expect(t, tsize, g_framework, keep, 4);
	free(t);
	free(b);
}
END_TEST

START_TEST(other_kinds_stay)
{
	const struct spec e[] = {{2, 100, 64}, {8, 75, 32}, {2, 90, 16}};
	const int keep[] = {1, 2};
	uint64_t size, tsize = 0;
	uint8_t *b = build(e, 3, &size), *t;

	t = vc_cu_fatbin_trim(b, size, 1u << 9, 90, &tsize);
	ck_assert_ptr_nonnull(t);
	expect(t, tsize, e, keep, 2);
	free(t);
	free(b);
}
END_TEST

START_TEST(nothing_to_drop_or_nothing_left)
{
	const struct spec only90[] = {{2, 90, 32}, {1, 90, 8}};
	const struct spec none_run[] = {{2, 80, 32}, {2, 100, 32}, {1, 120, 8}, {8, 90, 8}};
	uint64_t size, tsize = 7;
	uint8_t *b;

	b = build(only90, 2, &size);
	ck_assert_ptr_null(vc_cu_fatbin_trim(b, size, 1u << 9, 90, &tsize));
	free(b);
	/* No code for the GPU: the driver must see the original, as natively. */
	b = build(none_run, 4, &size);
	ck_assert_ptr_null(vc_cu_fatbin_trim(b, size, 1u << 9, 90, &tsize));
	free(b);
	ck_assert_uint_eq(tsize, 7);
}
END_TEST

START_TEST(malformed_images_are_left_alone)
{
	uint64_t size, tsize, fat;
	uint8_t *b = build(g_framework, 8, &size), *c = malloc(size + 64);
	uint32_t small = 16, huge = 0xffffffffu;
	uint64_t too_long = UINT64_MAX - 10;

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_null(vc_cu_fatbin_trim(NULL, size, 1u << 9, 90, &tsize));
	/* every cut short of the whole: the size word no longer matches */
	for (uint64_t n = 0; n < size; n++)
		ck_assert_ptr_null(vc_cu_fatbin_trim(b, n, 1u << 9, 90, &tsize));
	/* the size word matching a cut inside an entry (a cut between two
	 * entries is a smaller well-formed image) */
	for (uint64_t n = 17; n < size; n++) {
		uint64_t edge = 16;
		int between = 0;
		void *t;

		for (int i = 0; i < 8 && !between; i++) {
			edge += EHDR + g_framework[i].len;
			between = n == edge;
		}
		memcpy(c, b, n);
		fat = n - 16;
		memcpy(c + 8, &fat, 8);
		t = vc_cu_fatbin_trim(c, n, 1u << 9, 90, &tsize);
		if (!between)
			ck_assert_ptr_null(t);
		free(t);
	}
	/* bytes past the last entry */
	memcpy(c, b, size);
	memset(c + size, 0, 64);
	fat = size + 64 - 16;
	memcpy(c + 8, &fat, 8);
	ck_assert_ptr_null(vc_cu_fatbin_trim(c, size + 64, 1u << 9, 90, &tsize));
	/* an entry header too short, too long, a payload past the end */
	memcpy(c, b, size);
	memcpy(c + 16 + 4, &small, 4);
	ck_assert_ptr_null(vc_cu_fatbin_trim(c, size, 1u << 9, 90, &tsize));
	memcpy(c, b, size);
	memcpy(c + 16 + 4, &huge, 4);
	ck_assert_ptr_null(vc_cu_fatbin_trim(c, size, 1u << 9, 90, &tsize));
	memcpy(c, b, size);
	memcpy(c + 16 + 8, &too_long, 8);
	ck_assert_ptr_null(vc_cu_fatbin_trim(c, size, 1u << 9, 90, &tsize));
	/* another magic */
	memcpy(c, b, size);
	c[0] ^= 1;
	ck_assert_ptr_null(vc_cu_fatbin_trim(c, size, 1u << 9, 90, &tsize));
	free(c);
	free(b);
}
END_TEST

/* Every single byte of the headers changed, every way: an answer or none,
 * never a read outside the image (the sanitizer builds run this). */
START_TEST(corrupted_headers_never_read_outside)
{
	uint64_t size, tsize;
	uint8_t *b = build(g_framework, 8, &size), *c = malloc(size);
	uint64_t hdrs[9] = {0};

	ck_assert_ptr_nonnull(c);
	for (int i = 1, at = 16; i < 9; i++) {
		hdrs[i] = (uint64_t)at;
		at += EHDR + g_framework[i - 1].len;
	}
	for (int h = 0; h < 9; h++)
		for (uint64_t off = hdrs[h]; off < hdrs[h] + (h ? 32 : 16); off++)
			for (int v = 0; v < 256; v += 17) {
				uint8_t *t;

				memcpy(c, b, size);
				c[off] = (uint8_t)v;
				t = vc_cu_fatbin_trim(c, size, 1u << 9, 90, &tsize);
				if (t)
					ck_assert_uint_le(tsize, size);
				free(t);
			}
	free(c);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fatbin");
	TCase *tc = tcase_create("trim");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, keeps_what_an_h100_runs);
	tcase_add_test(tc, several_devices_keep_each_ones_code);
	tcase_add_test(tc, other_kinds_stay);
	tcase_add_test(tc, nothing_to_drop_or_nothing_left);
	tcase_add_test(tc, malformed_images_are_left_alone);
	tcase_add_test(tc, corrupted_headers_never_read_outside);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
