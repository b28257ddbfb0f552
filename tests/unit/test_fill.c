/* SPDX-License-Identifier: MIT */
/*
 * test_fill.c - shared/vc_fill.c: a shared file's mapping filled from private
 * memory, on several threads past VC_FILL_PARALLEL_MIN, holds every byte in
 * the file (read back through the descriptor, not the mapping); sizes that
 * do not divide among the threads lose nothing at the end; populating makes
 * every page of the file exist; mapping enters a file's existing pages into
 * a second mapping's page tables, writable, without touching a byte.
 */
#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vc_fill.h"

static uint8_t *file_map(int *fd, size_t n)
{
	uint8_t *m;

	*fd = memfd_create("test-fill", MFD_CLOEXEC);
	ck_assert_int_ge(*fd, 0);
	ck_assert_int_eq(ftruncate(*fd, (off_t)n), 0);
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	return m;
}

/* Fill @n bytes (whole pages) and read them back through the descriptor. */
static void fill_and_check(size_t n)
{
	uint8_t *src = malloc(n), *back = malloc(n), *m;
	int fd;

	ck_assert_ptr_nonnull(src);
	ck_assert_ptr_nonnull(back);
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i * 131 + (i >> 12));
	m = file_map(&fd, n);
	ck_assert_int_eq(vc_fill_copy(m, src, n), 0);
	for (size_t done = 0; done < n;) {
		ssize_t r = pread(fd, back + done, n - done, (off_t)done);

		ck_assert_int_gt(r, 0);
		done += (size_t)r;
	}
	ck_assert(memcmp(src, back, n) == 0);
	munmap(m, n);
	close(fd);
	free(src);
	free(back);
}

START_TEST(one_page)
{
	fill_and_check(4096);
}
END_TEST

START_TEST(below_the_parallel_size)
{
	fill_and_check(VC_FILL_PARALLEL_MIN - 4096);
}
END_TEST

START_TEST(parallel_sizes_that_do_not_divide)
{
	/* slices of whole pages, the last one shorter */
	fill_and_check(VC_FILL_PARALLEL_MIN + 3 * 4096);
	fill_and_check(2 * VC_FILL_PARALLEL_MIN - 4096);
}
END_TEST

START_TEST(populate_makes_every_page)
{
	const size_t n = VC_FILL_PARALLEL_MIN + 8 * 4096;
	unsigned char *vec = malloc(n / 4096);
	uint8_t *m;
	int fd;

	ck_assert_ptr_nonnull(vec);
	m = file_map(&fd, n);
	ck_assert_int_eq(mincore(m, n, vec), 0);
	ck_assert_int_eq(vec[0] & 1, 0); /* a new file has no pages */
	ck_assert_int_eq(vc_fill_populate(m, n), 0);
	ck_assert_int_eq(mincore(m, n, vec), 0);
	for (size_t i = 0; i < n / 4096; i++)
		ck_assert_msg(vec[i] & 1, "page %zu not made", i);
	/* made, and zero */
	for (size_t i = 0; i < n; i += 4096)
		ck_assert_int_eq(m[i], 0);
	munmap(m, n);
	close(fd);
	free(vec);
	ck_assert_int_eq(vc_fill_populate(NULL, 0), 0);
	ck_assert_int_eq(vc_fill_copy(NULL, NULL, 0), 0);
}
END_TEST

/* How many pages of [@m, @m + @n) this process's page tables map
 * (/proc/self/pagemap: bit 63 of each page's entry). */
static size_t pages_present(const uint8_t *m, size_t n)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	size_t present = 0;

	ck_assert_int_ge(fd, 0);
	for (size_t i = 0; i < n / 4096; i++) {
		uint64_t e = 0;
		off_t at = (off_t)(((uintptr_t)m / 4096 + i) * sizeof(e));

		ck_assert_int_eq(pread(fd, &e, sizeof(e), at), (ssize_t)sizeof(e));
		present += e >> 63;
	}
	close(fd);
	return present;
}

START_TEST(map_enters_existing_pages)
{
	const size_t n = VC_FILL_PARALLEL_MIN + 8 * 4096;
	uint8_t *src = malloc(n), *a, *b;
	int fd;

	ck_assert_ptr_nonnull(src);
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i * 7 + (i >> 12));
	a = file_map(&fd, n);
	ck_assert_int_eq(vc_fill_copy(a, src, n), 0);
	/* A second mapping of the same pages: nothing of it mapped yet. */
	b = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(b, MAP_FAILED);
	ck_assert_uint_eq(pages_present(b, n), 0);
	ck_assert_int_eq(vc_fill_map(b, n), 0);
	ck_assert_uint_eq(pages_present(b, n), n / 4096);
	ck_assert(memcmp(b, src, n) == 0);
	/* the same pages, writable through either mapping */
	b[n - 1] ^= 0xff;
	ck_assert_int_eq(a[n - 1], (uint8_t)(src[n - 1] ^ 0xff));
	ck_assert_int_eq(vc_fill_map(NULL, 0), 0);
	munmap(b, n);
	munmap(a, n);
	close(fd);
	free(src);
}
END_TEST

/* The plan the segment's files follow: whole-page slices from the start,
 * covering the range, each non-empty, at most VC_FILL_SLICES_MAX of them;
 * one below the parallel size. */
START_TEST(plan_covers_in_whole_pages)
{
	const size_t sizes[] = {4096, VC_FILL_PARALLEL_MIN - 4096, VC_FILL_PARALLEL_MIN,
				VC_FILL_PARALLEL_MIN + 4096, (size_t)1 << 30, ((size_t)1 << 30) + 12288,
				(size_t)5 << 30, (size_t)100 << 20};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned n = 0;
		size_t len = sizes[i], per = vc_fill_plan(len, &n);

		ck_assert_uint_ge(n, 1);
		ck_assert_uint_le(n, VC_FILL_SLICES_MAX);
		ck_assert_uint_le(n, cpus > 1 ? (unsigned)cpus : 1u);
		ck_assert_uint_eq(per % 4096, 0);
		ck_assert_uint_ge((size_t)n * per, len);          /* covered */
		ck_assert_uint_lt((size_t)(n - 1) * per, len);    /* the last slice not empty */
		if (len < VC_FILL_PARALLEL_MIN)
			ck_assert_uint_eq(n, 1);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fill");
	TCase *tc = tcase_create("fill");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_page);
	tcase_add_test(tc, below_the_parallel_size);
	tcase_add_test(tc, parallel_sizes_that_do_not_divide);
	tcase_add_test(tc, populate_makes_every_page);
	tcase_add_test(tc, map_enters_existing_pages);
	tcase_add_test(tc, plan_covers_in_whole_pages);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
