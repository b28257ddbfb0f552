/* SPDX-License-Identifier: MIT */
/*
 * test_crew.c - the parked helper threads of large bulk copies
 * (guest-lib/vc_crew.c): every job runs on exactly the threads it asked
 * for, once each, jobs after jobs on the same threads, and the crew stops
 * cleanly. Built under ThreadSanitizer in CI as well.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "vc_crew.h"

struct job {
	pthread_mutex_t mu;
	uint32_t calls;
	pthread_t who[VC_CREW_MAX * 2];
	uint64_t sum; /* of the words the callers added */
};

static void job_fn(void *arg)
{
	struct job *j = arg;

	pthread_mutex_lock(&j->mu);
	if (j->calls < VC_CREW_MAX * 2)
		j->who[j->calls] = pthread_self();
	j->calls++;
	j->sum += 1000;
	pthread_mutex_unlock(&j->mu);
}

/* Runs one job on @want threads: how many ran it, checked distinct. */
static uint32_t run_job(struct vc_crew *w, uint32_t want, struct job *j)
{
	uint32_t n;

	memset(j, 0, sizeof(*j));
	pthread_mutex_init(&j->mu, NULL);
	n = vc_crew_run(w, want, job_fn, j);
	vc_crew_wait(w);
	ck_assert_uint_eq(j->calls, n);
	ck_assert_uint_eq(j->sum, 1000ull * n);
	for (uint32_t a = 0; a < n; a++)
		for (uint32_t b = a + 1; b < n; b++)
			ck_assert(!pthread_equal(j->who[a], j->who[b]));
	pthread_mutex_destroy(&j->mu);
	return n;
}

START_TEST(each_job_runs_once_on_each_thread_asked_for)
{
	struct vc_crew w;
	struct job j;

	vc_crew_init(&w);
	ck_assert_uint_eq(run_job(&w, 3, &j), 3);
	ck_assert_uint_eq(w.n, 3);
	/* Fewer: the first threads only; more: the crew grows. */
	ck_assert_uint_eq(run_job(&w, 1, &j), 1);
	ck_assert_uint_eq(run_job(&w, 5, &j), 5);
	ck_assert_uint_eq(w.n, 5);
	ck_assert_uint_eq(run_job(&w, 2, &j), 2);
	/* Capped at VC_CREW_MAX. */
	ck_assert_uint_eq(run_job(&w, VC_CREW_MAX + 4, &j), VC_CREW_MAX);
	ck_assert_uint_eq(w.n, VC_CREW_MAX);
	vc_crew_fini(&w);
}
END_TEST

START_TEST(many_jobs_back_to_back_reuse_the_threads)
{
	struct vc_crew w;
	struct job j;
	pthread_t first[3];

	vc_crew_init(&w);
	ck_assert_uint_eq(run_job(&w, 3, &j), 3);
	memcpy(first, j.who, sizeof(first));
	for (int i = 0; i < 5000; i++) {
		uint32_t want = 1 + (uint32_t)i % 3;

		ck_assert_uint_eq(run_job(&w, want, &j), want);
		/* Always threads the crew started at first: none per job. */
		for (uint32_t a = 0; a < want; a++) {
			bool known = false;

			for (int b = 0; b < 3; b++)
				known |= pthread_equal(j.who[a], first[b]) != 0;
			ck_assert(known);
		}
	}
	ck_assert_uint_eq(w.n, 3);
	vc_crew_fini(&w);
}
END_TEST

START_TEST(no_job_no_threads_and_fini_of_an_unused_crew)
{
	struct vc_crew w;
	struct job j;

	vc_crew_init(&w);
	ck_assert_uint_eq(run_job(&w, 0, &j), 0);
	ck_assert_uint_eq(w.n, 0);
	vc_crew_wait(&w); /* nothing to wait for */
	vc_crew_fini(&w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("crew");
	TCase *t = tcase_create("crew");
	SRunner *r;
	int failed;

	tcase_set_timeout(t, 60);
	tcase_add_test(t, each_job_runs_once_on_each_thread_asked_for);
	tcase_add_test(t, many_jobs_back_to_back_reuse_the_threads);
	tcase_add_test(t, no_job_no_threads_and_fini_of_an_unused_crew);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
