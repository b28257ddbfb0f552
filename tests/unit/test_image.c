/* SPDX-License-Identifier: MIT */
/*
 * test_image.c - the host's check of an image's own size claims against the
 * bytes staged (host-backend/cuda/image.c): well-formed fatbins, ELF cubins
 * and PTX pass; every header that claims more than was staged, or that
 * wraps around, is CUDA_ERROR_INVALID_IMAGE. With VC_TEST_IMAGES set to a
 * list of files (fatbins and cubins nvcc made), those must pass whole and
 * fail cut short. Whether an image may print: only one whose code is all
 * readable (ELF, PTX) and names neither vprintf nor __assertfail does not;
 * a compressed or unknown fatbin entry, or a malformed image, may.
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

/* A fatbin of one entry of @kind with payload @pl (@n bytes), into @b. */
static size_t fatbin_of(uint8_t *b, uint16_t kind, const void *pl, uint64_t n)
{
	struct fb h = {0xba55ed50u, 1, 16, 64 + n};
	struct fe e = {kind, 0x101, 64, n};

	memset(b, 0, 16 + 64);
	memcpy(b, &h, sizeof(h));
	memcpy(b + 16, &e, sizeof(e));
	memcpy(b + 16 + 64, pl, n);
	return 16 + 64 + n;
}

/* Append to the fatbin in @b (@n bytes) an entry of @kind for @arch with
 * payload @pl (@len bytes); the new size. */
static size_t fatbin_add(uint8_t *b, size_t n, uint16_t kind, uint32_t arch, const void *pl, uint64_t len)
{
	struct fb h;
	struct fe e = {kind, 0x101, 64, len};

	memset(b + n, 0, 64);
	memcpy(b + n, &e, sizeof(e));
	memcpy(b + n + 28, &arch, sizeof(arch));
	memcpy(b + n + 64, pl, len);
	memcpy(&h, b, sizeof(h));
	h.fat_size += 64 + len;
	memcpy(b, &h, sizeof(h));
	return n + 64 + len;
}

/* PTX compressed with zstd (libzstd, level 19): one quiet, one naming
 * vprintf (compressed, so the name is not in the bytes). */
static const uint8_t z_quiet[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x39, 0xc9, 0x01, 0x00, 0x2e, 0x76, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e, 0x20, 0x38, 0x2e, 0x30, 0x0a, 0x2e, 0x74, 0x61, 0x72, 0x67, 0x65, 0x74, 0x20, 0x73, 0x6d, 0x5f, 0x37, 0x35, 0x0a, 0x2e, 0x76, 0x69, 0x73, 0x69, 0x62, 0x6c, 0x65, 0x20, 0x2e, 0x65, 0x6e, 0x74, 0x72, 0x79, 0x20, 0x6b, 0x28, 0x29, 0x0a, 0x7b, 0x0a, 0x72, 0x65, 0x74, 0x3b, 0x0a, 0x7d, 0x0a, 0x00};
static const uint8_t z_prints[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x42, 0xf5, 0x01, 0x00, 0x22, 0x84, 0x0e, 0x11, 0x90, 0x7d, 0x40, 0xec, 0x10, 0x6b, 0x51, 0xb1, 0xfb, 0x6b, 0xc7, 0xce, 0xba, 0xeb, 0xab, 0xa5, 0x05, 0x20, 0x3c, 0x3c, 0xa3, 0xad, 0xda, 0x87, 0xf5, 0x62, 0xd8, 0xbb, 0x5c, 0x76, 0xd5, 0x17, 0xde, 0x66, 0x7e, 0xef, 0xd3, 0x3a, 0xbc, 0xdd, 0x87, 0x83, 0x94, 0xbc, 0x8e, 0x1d, 0xb4, 0x0b, 0x7f, 0x20, 0x9f, 0x7c, 0xd2, 0x78, 0xad, 0xd3, 0x1f, 0x00};

/* nvcc 13's default: a cubin for sm_75 and its PTX compressed with zstd.
 * On an sm_90 device the driver compiles the PTX: it is read decompressed
 * (through libzstd, loaded at run time). Entries are padded: bytes after
 * the frame are ignored. A frame cut short cannot be read: it may print. */
START_TEST(zstd_entries_are_read)
{
	static uint8_t b[16384], elf[4096], pl[512];
	struct fb h = {0xba55ed50u, 1, 16, 0};
	size_t n, ne = make_elf(elf);

	memcpy(b, &h, sizeof(h));
	n = fatbin_add(b, sizeof(h), 2, 75, elf, ne);
	memset(pl, 0, sizeof(pl));
	memcpy(pl, z_quiet, sizeof(z_quiet));
	n = fatbin_add(b, n, 1, 75, pl, sizeof(z_quiet) + 40); /* padded */
	ck_assert_int_eq(vc_cu_image_check(b, n), 0);
	ck_assert(!vc_cu_image_may_print(b, n, 90));
	memcpy(b, &h, sizeof(h));
	n = fatbin_add(b, sizeof(h), 2, 75, elf, ne);
	n = fatbin_add(b, n, 1, 75, z_prints, sizeof(z_prints));
	ck_assert(vc_cu_image_may_print(b, n, 90));
	ck_assert(!vc_cu_image_may_print(b, n, 75)); /* the quiet cubin is loaded there */
	memcpy(b, &h, sizeof(h));
	n = fatbin_add(b, sizeof(h), 1, 75, z_quiet, sizeof(z_quiet) - 5);
	ck_assert(vc_cu_image_may_print(b, n, 90));
}
END_TEST

/* As nvcc 13 writes them: a cubin for one architecture and the PTX beside
 * it, compressed. On a device of that architecture the driver loads the
 * cubin: only it counts; on any other the PTX may be compiled, and it
 * cannot be read. */
START_TEST(only_the_cubin_the_driver_loads_counts)
{
	static const uint8_t zstd[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x62, 0xc5, 0x02, 0x00, 0x46, 0xd7, 0x54};
	static uint8_t b[16384], elf[4096];
	struct fb h = {0xba55ed50u, 1, 16, 0};
	size_t n, ne = make_elf(elf);

	memcpy(b, &h, sizeof(h));
	n = fatbin_add(b, sizeof(h), 2, 90, elf, ne);
	n = fatbin_add(b, n, 1, 90, zstd, sizeof(zstd));
	ck_assert_int_eq(vc_cu_image_check(b, n), 0);
	ck_assert(!vc_cu_image_may_print(b, n, 90));
	ck_assert(vc_cu_image_may_print(b, n, 80)); /* no cubin for it: the PTX */
	ck_assert(vc_cu_image_may_print(b, n, 0));
	/* a cubin for another architecture beside it is not loaded here */
	n = fatbin_add(b, n, 2, 80, zstd, sizeof(zstd));
	ck_assert(!vc_cu_image_may_print(b, n, 90));
	ck_assert(vc_cu_image_may_print(b, n, 80));
	/* the cubin that is loaded prints */
	memcpy(elf + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + 1, "vprintf", 8);
	n = fatbin_add(b, n, 2, 90, elf, ne);
	ck_assert_int_eq(vc_cu_image_check(b, n), 0);
	ck_assert(vc_cu_image_may_print(b, n, 90));
}
END_TEST

START_TEST(images_that_may_print)
{
	static const char quiet[] = ".version 8.0\n.target sm_75\n.visible .entry k()\n{\nret;\n}\n";
	static const char prints[] = ".version 8.0\n.target sm_75\n.extern .func (.param .b32 r) vprintf\n";
	static const uint8_t zstd[] = {0x28, 0xb5, 0x2f, 0xfd, 0x60, 0xf8, 0x04, 0xf5, 0x10, 0x00, 0x46, 0xd7};
	static uint8_t b[8192], elf[4096], two[8192];
	size_t n, ne;

	ck_assert(!vc_cu_image_may_print((const uint8_t *)quiet, sizeof(quiet), 0));
	ck_assert(vc_cu_image_may_print((const uint8_t *)prints, sizeof(prints), 0));
	/* a cubin: quiet, then with __assertfail in its string table */
	ne = make_elf(elf);
	ck_assert(!vc_cu_image_may_print(elf, ne, 0));
	n = fatbin_of(b, 2, elf, ne);
	ck_assert_int_eq(vc_cu_image_check(b, n), 0);
	ck_assert(!vc_cu_image_may_print(b, n, 0));
	memcpy(elf + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + 1, "__assertfail", 13);
	ck_assert(vc_cu_image_may_print(elf, ne, 0));
	n = fatbin_of(b, 2, elf, ne);
	ck_assert(vc_cu_image_may_print(b, n, 0));
	/* PTX entries, read as text */
	n = fatbin_of(b, 1, quiet, sizeof(quiet));
	ck_assert(!vc_cu_image_may_print(b, n, 0));
	n = fatbin_of(b, 1, prints, sizeof(prints));
	ck_assert(vc_cu_image_may_print(b, n, 0));
	/* compressed (zstd's magic, as nvcc's -compress-all writes) cannot be
	 * read: it may print */
	n = fatbin_of(b, 2, zstd, sizeof(zstd));
	ck_assert_int_eq(vc_cu_image_check(b, n), 0);
	ck_assert(vc_cu_image_may_print(b, n, 0));
	/* a quiet entry, then one that prints: the second decides */
	n = fatbin_of(two, 1, quiet, sizeof(quiet));
	{
		struct fb h;
		size_t m = fatbin_of(b, 1, prints, sizeof(prints));

		memcpy(two + n, b + 16, m - 16); /* its entry after the first */
		memcpy(&h, two, sizeof(h));
		h.fat_size += m - 16;
		memcpy(two, &h, sizeof(h));
		n += m - 16;
	}
	ck_assert_int_eq(vc_cu_image_check(two, n), 0);
	ck_assert(vc_cu_image_may_print(two, n, 0));
	/* what cannot be read at all may print */
	ck_assert(vc_cu_image_may_print(NULL, 0, 0));
	ck_assert(vc_cu_image_may_print((const uint8_t *)"ab", 2, 0));
	n = fatbin_of(b, 2, elf, ne);
	ck_assert(vc_cu_image_may_print(b, n - 1, 0)); /* an entry past the end */
	ck_assert(vc_cu_image_may_print(b, 20, 0));
	ck_assert(vc_cu_image_may_print(b, 20, 90));
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
	tcase_add_test(t, images_that_may_print);
	tcase_add_test(t, only_the_cubin_the_driver_loads_counts);
	tcase_add_test(t, zstd_entries_are_read);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
