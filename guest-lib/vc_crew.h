/* SPDX-License-Identifier: MIT */
/*
 * vc_crew.h - a few threads of the guest library's own, started once and
 * parked between jobs, that run one job at a time: the helpers of large
 * bulk copies (vc_client.c), which now start at 2 MiB, a copy of a few
 * hundred microseconds, where creating and joining three threads for each
 * copy would be a cost of its own. (On the H100 machine the 4 MiB copies of
 * seed_bench's split were within noise either way; the threshold is what
 * moved them, docs/PERFORMANCE.md.)
 */
#ifndef VC_CREW_H
#define VC_CREW_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define VC_CREW_MAX 8u

struct vc_crew {
	pthread_mutex_t mu;
	pthread_cond_t job_cv;  /* a job posted, or quit */
	pthread_cond_t idle_cv; /* the last thread left the job */
	pthread_t t[VC_CREW_MAX];
	uint32_t n;             /* threads started */
	uint32_t want;          /* threads the current job runs on (the first ones) */
	uint32_t busy;          /* of those, still in it */
	uint64_t gen;           /* jobs posted */
	void (*fn)(void *);
	void *arg;
	bool quit;
};

/** vc_crew_init() - an empty crew: no thread runs until vc_crew_run(). */
void vc_crew_init(struct vc_crew *w);

/**
 * vc_crew_run() - run @fn(@arg) on up to @want threads of the crew at once
 * (started on first use, at most VC_CREW_MAX), each calling it once. One
 * job at a time: the caller serialises jobs and ends each with
 * vc_crew_wait(). Returns how many threads run it (0: none could be
 * started, nothing runs).
 */
uint32_t vc_crew_run(struct vc_crew *w, uint32_t want, void (*fn)(void *), void *arg);

/** vc_crew_wait() - wait until every thread running the current job has
 * returned from it. */
void vc_crew_wait(struct vc_crew *w);

/** vc_crew_fini() - stop and join the crew's threads (none may be in a
 * job) and free what it holds. */
void vc_crew_fini(struct vc_crew *w);

#endif /* VC_CREW_H */
