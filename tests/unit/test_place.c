/* SPDX-License-Identifier: MIT */
/*
 * test_place.c - where the session region goes (guest-lib/vc_place.c): in
 * the zone, usable, the next place when the first is taken (a forked
 * process's second session), and anywhere when the zone is full.
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

int main(void)
{
	Suite *s = suite_create("place");
	TCase *t = tcase_create("place");
	SRunner *r;
	int failed;

	tcase_add_test(t, maps_in_the_zone_and_is_usable);
	tcase_add_test(t, a_taken_place_gives_the_next);
	tcase_add_test(t, a_full_zone_falls_back_to_anywhere);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
