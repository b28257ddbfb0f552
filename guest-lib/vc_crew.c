/* SPDX-License-Identifier: MIT */
/*
 * vc_crew.c - parked threads running one job at a time (vc_crew.h). Process
 * memory only: the mutex orders everything, no atomics.
 */
#include "vc_crew.h"

#include <stdlib.h>

#include "vc_thread.h"

struct member {
	struct vc_crew *w;
	uint32_t idx;
	uint64_t seen; /* the jobs posted before it started */
};

static void *member_main(void *arg)
{
	struct member m = *(struct member *)arg;
	struct vc_crew *w = m.w;
	uint64_t seen = m.seen; /* not w->gen: the job it was started for is posted by then */

	free(arg);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->quit && w->gen == seen)
			pthread_cond_wait(&w->job_cv, &w->mu);
		if (w->quit)
			break;
		seen = w->gen;
		if (m.idx >= w->want)
			continue; /* this job asked for fewer threads */
		void (*fn)(void *) = w->fn;
		void *a = w->arg;

		pthread_mutex_unlock(&w->mu);
		fn(a);
		pthread_mutex_lock(&w->mu);
		if (!--w->busy)
			pthread_cond_broadcast(&w->idle_cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

void vc_crew_init(struct vc_crew *w)
{
	*w = (struct vc_crew){0};
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->job_cv, NULL);
	pthread_cond_init(&w->idle_cv, NULL);
}

uint32_t vc_crew_run(struct vc_crew *w, uint32_t want, void (*fn)(void *), void *arg)
{
	if (want > VC_CREW_MAX)
		want = VC_CREW_MAX;
	pthread_mutex_lock(&w->mu);
	while (w->n < want) {
		struct member *m = malloc(sizeof(*m));

		if (!m)
			break;
		*m = (struct member){.w = w, .idx = w->n, .seen = w->gen};
		if (vc_thread_start(&w->t[w->n], false, member_main, m)) {
			free(m);
			break;
		}
		w->n++;
	}
	if (want > w->n)
		want = w->n;
	if (want) {
		w->fn = fn;
		w->arg = arg;
		w->busy = want;
		w->want = want;
		w->gen++;
		pthread_cond_broadcast(&w->job_cv);
	}
	pthread_mutex_unlock(&w->mu);
	return want;
}

void vc_crew_wait(struct vc_crew *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->busy)
		pthread_cond_wait(&w->idle_cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

void vc_crew_fini(struct vc_crew *w)
{
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_broadcast(&w->job_cv);
	pthread_mutex_unlock(&w->mu);
	for (uint32_t i = 0; i < w->n; i++)
		pthread_join(w->t[i], NULL);
	w->n = 0;
	pthread_cond_destroy(&w->idle_cv);
	pthread_cond_destroy(&w->job_cv);
	pthread_mutex_destroy(&w->mu);
}
