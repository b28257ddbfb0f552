/* SPDX-License-Identifier: MIT */
/*
 * test_place.c - where the session region goes (guest-lib/vc_place.c): in
 * the zone, usable, the next place when the first is taken (a forked
 * process's second session), and anywhere when the zone is full; and where
 * page-locked segments are reserved: aligned, in their own zone, one after
 * another, past a place that is taken.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "vc_place.h"

#define LEN (3u << 20)

static void *anon(void)
{
	return vc_place_map(LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

START_TEST(maps_in_the_zone_and_is_usable)
{
	uint8_t *p = anon();

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_uint_ge((uintptr_t)p, 0x5fffull << 32);
	ck_assert_uint_lt((uintptr_t)p, 0x7000ull << 32);
	memset(p, 0xa5, LEN);
	ck_assert_uint_eq(p[LEN - 1], 0xa5);
	munmap(p, LEN);
}
END_TEST

START_TEST(a_taken_place_gives_the_next)
{
	uint8_t *a = anon(), *b = anon();

	ck_assert_ptr_ne(a, MAP_FAILED);
	ck_assert_ptr_ne(b, MAP_FAILED);
	ck_assert_ptr_ne(a, b);
	ck_assert_uint_eq((uintptr_t)b - (uintptr_t)a, 1u << 30); /* one step above */
	munmap(a, LEN);
	munmap(b, LEN);
}
END_TEST

START_TEST(a_full_zone_falls_back_to_anywhere)
{
	void *m[17];
	unsigned n = 0;

	for (; n < 16; n++) {
		m[n] = anon();
		ck_assert_ptr_ne(m[n], MAP_FAILED);
	}
	m[n] = anon(); /* all 16 places taken */
	ck_assert_ptr_ne(m[n], MAP_FAILED);
	for (unsigned i = 0; i < 16; i++)
		ck_assert_ptr_ne(m[n], m[i]);
	for (unsigned i = 0; i <= n; i++)
		munmap(m[i], LEN);
}
END_TEST

#define SEG_ZONE (0x3fffull << 32)
#define SEG_END (0x5fffull << 32)

START_TEST(segments_reserved_in_their_zone_in_order)
{
	const size_t len = (5u << 20) + 4096, align = 2u << 20;
	uint8_t *a = vc_place_reserve(len, align), *b = vc_place_reserve(len, align);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_ge((uintptr_t)a, SEG_ZONE);
	ck_assert_uint_lt((uintptr_t)b + len, SEG_END);
	ck_assert_uint_eq((uintptr_t)a % align, 0);
	ck_assert_uint_eq((uintptr_t)b % align, 0);
	/* The next place, past a gap: nothing of the first's is shared. */
	ck_assert_uint_ge((uintptr_t)b, (uintptr_t)a + len + align);
	/* A real mapping (mprotect fails where nothing is mapped), made
	 * usable here as the caller's files would make it. */
	ck_assert_int_eq(mprotect(a, 4096, PROT_READ | PROT_WRITE), 0);
	a[0] = 1;
	munmap(a, len);
	munmap(b, len);
}
END_TEST

START_TEST(a_taken_segment_place_is_passed_over)
{
	const size_t len = 4u << 20, align = 2u << 20;
	uint8_t *a = vc_place_reserve(len, align), *next, *c;

	ck_assert_ptr_nonnull(a);
	/* Somebody else's mapping where the next place would be. */
	next = a + len + align;
	ck_assert_ptr_eq(mmap(next, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0), next);
	c = vc_place_reserve(len, align);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_gt((uintptr_t)c, (uintptr_t)next);
	munmap(next, 4096);
	munmap(a, len);
	munmap(c, len);
}
END_TEST

START_TEST(segment_reservations_refuse_odd_requests)
{
	ck_assert_ptr_null(vc_place_reserve(0, 2u << 20));
	ck_assert_ptr_null(vc_place_reserve(4096, 3u << 20)); /* not a power of two */
	ck_assert_ptr_null(vc_place_reserve(4096, 512));      /* under a page */
	ck_assert_ptr_null(vc_place_reserve((size_t)1 << 46, 2u << 20)); /* larger than the zone can hold */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("place");
	TCase *t = tcase_create("place");
	SRunner *r;
	int failed;

	tcase_add_test(t, maps_in_the_zone_and_is_usable);
	tcase_add_test(t, a_taken_place_gives_the_next);
	tcase_add_test(t, a_full_zone_falls_back_to_anywhere);
	tcase_add_test(t, segments_reserved_in_their_zone_in_order);
	tcase_add_test(t, a_taken_segment_place_is_passed_over);
	tcase_add_test(t, segment_reservations_refuse_odd_requests);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
