/* SPDX-License-Identifier: MIT */
/*
 * test_optimes.c - host-backend/core/optimes.c, the serving thread's time per
 * CUDA operation (vcuda-server --op-times): the report's first line counts
 * every operation and kind; the rows come in order of total time, each with
 * its calls, total, mean and max; operations outside the CUDA range are not
 * counted; @max bounds the rows; an absent table reports nothing.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/optimes.h"
#include "vc_cuda_wire.h"

struct lines {
	char text[8][160];
	int n;
};

static void keep(void *arg, const char *text)
{
	struct lines *l = arg;

	ck_assert_int_lt(l->n, 8);
	snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", text);
}

START_TEST(rows_by_total_time)
{
	struct vc_optimes *t = vc_optimes_create();
	struct lines l = {0};

	ck_assert_ptr_nonnull(t);
	vc_optimes_add(t, VC_CU_vcLaunch, 1000);
	vc_optimes_add(t, VC_CU_vcLaunch, 3000);
	vc_optimes_add(t, VC_CU_vcMemcpy, 9000);
	vc_optimes_add(t, VC_CU_vcSync, 500);
	vc_optimes_add(t, VC_CU_OP_BASE - 1, 1000000); /* not a CUDA operation */
	vc_optimes_add(t, VC_CU_OP_END_, 1000000);
	ck_assert_int_eq(vc_optimes_report(t, 20, keep, &l), 4);
	ck_assert_str_eq(l.text[0], "4 operations of 3 kinds took 13.5 us on the serving thread");
	ck_assert_ptr_nonnull(strstr(l.text[1], "vcMemcpy"));
	ck_assert_ptr_nonnull(strstr(l.text[1], " 1 calls"));
	ck_assert_ptr_nonnull(strstr(l.text[2], "vcLaunch"));
	ck_assert_ptr_nonnull(strstr(l.text[2], " 2 calls"));
	ck_assert_ptr_nonnull(strstr(l.text[2], "4.0 us "));      /* total */
	ck_assert_ptr_nonnull(strstr(l.text[2], "2.00 us each")); /* mean */
	ck_assert_ptr_nonnull(strstr(l.text[2], "3.0 us max"));
	ck_assert_ptr_nonnull(strstr(l.text[3], "vcSync"));
	/* At most @max rows after the summary. */
	l.n = 0;
	ck_assert_int_eq(vc_optimes_report(t, 1, keep, &l), 2);
	ck_assert_ptr_nonnull(strstr(l.text[1], "vcMemcpy"));
	vc_optimes_destroy(t);
}
END_TEST

START_TEST(no_table_no_report)
{
	struct lines l = {0};

	vc_optimes_add(NULL, VC_CU_vcLaunch, 1);
	ck_assert_int_eq(vc_optimes_report(NULL, 20, keep, &l), 0);
	ck_assert_int_eq(l.n, 0);
	vc_optimes_destroy(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("optimes");
	TCase *tc = tcase_create("optimes");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, rows_by_total_time);
	tcase_add_test(tc, no_table_no_report);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
