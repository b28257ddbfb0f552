/* SPDX-License-Identifier: MIT */
/*
 * test_image.c - the host's check of an image's own size claims against the
 * bytes staged (host-backend/cuda/image.c): well-formed fatbins, ELF cubins
 * and PTX pass; every header that claims more than was staged, or that
 * wraps around, is CUDA_ERROR_INVALID_IMAGE. With VC_TEST_IMAGES set to a
 * list of files (fatbins and cubins nvcc made), those must pass whole and
 * fail cut short.
 */
#include <check.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"

struct fb {
	uint32_t magic;
	uint16_t version, header_size;
	uint64_t fat_size;
};

struct fe {
	uint16_t kind, version;
	uint32_t header_size;
	uint64_t size;
};

/* A fatbin of two entries, 64-byte entry headers and 100 and 36 bytes each. */
static size_t make_fatbin(uint8_t *b)
{
	struct fb h = {0xba55ed50u, 1, 16, 2 * 64 + 100 + 36};
	struct fe e1 = {2, 0x101, 64, 100}, e2 = {1, 0x101, 64, 36};

	memset(b, 0, 16 + h.fat_size);
	memcpy(b, &h, sizeof(h));
	memcpy(b + 16, &e1, sizeof(e1));
	memcpy(b + 16 + 64 + 100, &e2, sizeof(e2));
	return 16 + h.fat_size;
}

START_TEST(fatbin_claims)
{
	static uint8_t b[4096];
	size_t n = make_fatbin(b);
	struct fb h;
	struct fe e;

	ck_assert_int_eq(vc_cu_image_check(b, n), 0);
	ck_assert_int_eq(vc_cu_image_check(b, n + 100), 0); /* staged more than it needs */
	ck_assert_int_eq(vc_cu_image_check(b, n - 1), CUDA_ERROR_INVALID_IMAGE);
	ck_assert_int_eq(vc_cu_image_check(b, 12), CUDA_ERROR_INVALID_IMAGE);
	/* the header claims more than was staged, or wraps around */
	memcpy(&h, b, sizeof(h));
	h.fat_size = UINT64_MAX - 8;
	memcpy(b, &h, sizeof(h));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	h.fat_size = 1u << 20;
	memcpy(b, &h, sizeof(h));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	/* a header size smaller than the header */
	n = make_fatbin(b);
	memcpy(&h, b, sizeof(h));
	h.header_size = 8;
	memcpy(b, &h, sizeof(h));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	/* an entry's payload past the fatbin, and one that wraps */
	n = make_fatbin(b);
	memcpy(&e, b + 16 + 64 + 100, sizeof(e));
	e.size = 37;
	memcpy(b + 16 + 64 + 100, &e, sizeof(e));
	ck_assert_int_eq(vc_cu_image_check(b, n + 64), CUDA_ERROR_INVALID_IMAGE);
	e.size = UINT64_MAX - 63;
	memcpy(b + 16 + 64 + 100, &e, sizeof(e));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	/* an entry header smaller than its fields, or past the end */
	n = make_fatbin(b);
	memcpy(&e, b + 16, sizeof(e));
	e.header_size = 4;
	memcpy(b + 16, &e, sizeof(e));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	e.header_size = 0xfffffff0u;
	memcpy(b + 16, &e, sizeof(e));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
}
END_TEST

/* A 64-bit ELF with @nsec sections (the first NULL) after the header and
 * one program header, then the section header table at the end. */
static size_t make_elf(uint8_t *b)
{
	Elf64_Ehdr e = {0};
	Elf64_Phdr ph = {0};
	Elf64_Shdr sh[3] = {{0}};
	size_t data = sizeof(e) + sizeof(ph);

	memcpy(e.e_ident, ELFMAG, SELFMAG);
	e.e_ident[EI_CLASS] = ELFCLASS64;
	e.e_ehsize = sizeof(e);
	e.e_phoff = sizeof(e);
	e.e_phnum = 1;
	e.e_phentsize = sizeof(ph);
	e.e_shoff = data + 256;
	e.e_shnum = 3;
	e.e_shentsize = sizeof(Elf64_Shdr);
	e.e_shstrndx = 1;
	ph.p_offset = data;
	ph.p_filesz = 128;
	sh[1].sh_type = SHT_STRTAB;
	sh[1].sh_offset = data;
	sh[1].sh_size = 128;
	sh[2].sh_type = SHT_PROGBITS;
	sh[2].sh_offset = data + 128;
	sh[2].sh_size = 128;
	memset(b, 0, e.e_shoff + sizeof(sh));
	memcpy(b, &e, sizeof(e));
	memcpy(b + e.e_phoff, &ph, sizeof(ph));
	memcpy(b + e.e_shoff, sh, sizeof(sh));
	return e.e_shoff + sizeof(sh);
}

START_TEST(elf_claims)
{
	static uint8_t b[4096];
	size_t n = make_elf(b);
	Elf64_Ehdr e;
	Elf64_Shdr sh;
	Elf64_Phdr ph;

	ck_assert_int_eq(vc_cu_image_check(b, n), 0);
	ck_assert_int_eq(vc_cu_image_check(b, n - 1), CUDA_ERROR_INVALID_IMAGE); /* table cut */
	ck_assert_int_eq(vc_cu_image_check(b, 40), CUDA_ERROR_INVALID_IMAGE);    /* header cut */
	memcpy(&e, b, sizeof(e));
	/* a section header table past the end, wrapping, or of tiny entries */
	e.e_shoff = UINT64_MAX - 100;
	memcpy(b, &e, sizeof(e));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	n = make_elf(b);
	e.e_shoff = sizeof(e) + sizeof(Elf64_Phdr) + 256;
	e.e_shentsize = 8;
	memcpy(b, &e, sizeof(e));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	/* the program header table past the end */
	n = make_elf(b);
	memcpy(&e, b, sizeof(e));
	e.e_phnum = 200;
	memcpy(b, &e, sizeof(e));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	/* a section's bytes past the end, or wrapping */
	n = make_elf(b);
	memcpy(&e, b, sizeof(e));
	memcpy(&sh, b + e.e_shoff + 2 * sizeof(sh), sizeof(sh));
	sh.sh_size = 4096;
	memcpy(b + e.e_shoff + 2 * sizeof(sh), &sh, sizeof(sh));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	sh.sh_type = SHT_NOBITS; /* .bss-like: no bytes in the file */
	memcpy(b + e.e_shoff + 2 * sizeof(sh), &sh, sizeof(sh));
	ck_assert_int_eq(vc_cu_image_check(b, n), 0);
	sh.sh_type = SHT_PROGBITS;
	sh.sh_offset = UINT64_MAX - 10;
	sh.sh_size = 100;
	memcpy(b + e.e_shoff + 2 * sizeof(sh), &sh, sizeof(sh));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	/* a segment past the end */
	n = make_elf(b);
	memcpy(&ph, b + e.e_phoff, sizeof(ph));
	ph.p_filesz = 1u << 20;
	memcpy(b + e.e_phoff, &ph, sizeof(ph));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	/* the string table index past the sections; a 32-bit ELF */
	n = make_elf(b);
	memcpy(&e, b, sizeof(e));
	e.e_shstrndx = 9;
	memcpy(b, &e, sizeof(e));
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
	n = make_elf(b);
	b[EI_CLASS] = ELFCLASS32;
	ck_assert_int_eq(vc_cu_image_check(b, n), CUDA_ERROR_INVALID_IMAGE);
}
END_TEST

START_TEST(ptx_and_pointers)
{
	static const char ptx[] = ".version 8.0\n.target sm_75\n";
	uint8_t w[24] = {0xb1, 0x43, 0x62, 0x46};

	ck_assert_int_eq(vc_cu_image_check((const uint8_t *)ptx, sizeof(ptx)), 0);
	/* not terminated within what was staged */
	ck_assert_int_eq(vc_cu_image_check((const uint8_t *)ptx, sizeof(ptx) - 1), CUDA_ERROR_INVALID_IMAGE);
	ck_assert_int_eq(vc_cu_image_check((const uint8_t *)"ab", 2), CUDA_ERROR_INVALID_IMAGE);
	ck_assert_int_eq(vc_cu_image_check((const uint8_t *)"a", 2), 0);
	/* a fatbin wrapper holds a guest pointer: never an image on the host */
	ck_assert_int_eq(vc_cu_image_check(w, sizeof(w)), CUDA_ERROR_INVALID_IMAGE);
}
END_TEST

/* Images nvcc made (VC_TEST_IMAGES="a.fatbin b.cubin"), when given. */
START_TEST(real_images)
{
	const char *list = getenv("VC_TEST_IMAGES");
	char *dup, *tok, *save = NULL;

	if (!list)
		return;
	dup = strdup(list);
	for (tok = strtok_r(dup, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		FILE *f = fopen(tok, "rb");
		static uint8_t b[1 << 22];
		size_t n;

		ck_assert_ptr_nonnull(f);
		n = fread(b, 1, sizeof(b), f);
		fclose(f);
		ck_assert_msg(vc_cu_image_check(b, n) == 0, "%s refused", tok);
		ck_assert_msg(vc_cu_image_check(b, n - 1) == CUDA_ERROR_INVALID_IMAGE, "%s cut short passed", tok);
	}
	free(dup);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("image");
	TCase *t = tcase_create("claims");
	SRunner *r;
	int failed;

	tcase_add_test(t, fatbin_claims);
	tcase_add_test(t, elf_claims);
	tcase_add_test(t, ptx_and_pointers);
	tcase_add_test(t, real_images);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
