/* SPDX-License-Identifier: MIT */
/*
 * pinspare.c - a page-locked segment made ahead, for programs that register
 * (or allocate page-locked) large buffers and want that call at the speed
 * of a parked segment the first time too.
 *
 * Host-locally a registration moves the program's pages into shared ones,
 * and making a gigabyte of new pages costs 85-130 ms on the GPU machine
 * before the driver's registration: three to five times a native
 * cudaHostRegister (docs/PERFORMANCE.md). A segment parked after a free
 * skips that (pinseg.c). With VCUDA_PINNED_SPARE=SIZE a thread of ours
 * makes one such segment of SIZE bytes at cuInit, and makes it again each
 * time a parked segment is taken while none left fits SIZE: the memory is
 * held ahead, which is why it is the user's choice and off by default. A
 * spare serves what a segment made for SIZE bytes serves (pinseg.c fits():
 * from about 8/9 of SIZE to SIZE and a page). It is kept beside
 * VCUDA_PINNED_KEEP (the parked segments may hold KEEP and the spare), it
 * counts against the server's --pinned-max, and it is not made past
 * either. Not in a VM, which has no segments (and pins a program's pages
 * where they are). A forked child makes none: the thread is its parent's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "pinspare.h"
#include "vc_client.h"
#include "vc_cu_guest.h"
#include "vc_thread.h"

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t len;   /* VCUDA_PINNED_SPARE; 0: off */
	bool want;      /* a kick not yet looked at */
	bool busy;      /* a spare being made */
	bool given_up;  /* the server or the kernel refused segments */
} g_sp = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *maker(void *arg)
{
	(void)arg;
	for (;;) {
		int rc = 0;

		pthread_mutex_lock(&g_sp.mu);
		while (!g_sp.want)
			pthread_cond_wait(&g_sp.cv, &g_sp.mu);
		g_sp.want = false;
		pthread_mutex_unlock(&g_sp.mu);
		/* pinseg.c's lock is never taken under ours (it takes ours
		 * through vc_cu_pinspare_len()). */
		if (!vc_cu_pinseg_parked_fits(g_sp.len)) {
			pthread_mutex_lock(&g_sp.mu);
			g_sp.busy = true;
			pthread_mutex_unlock(&g_sp.mu);
			rc = vc_cu_pinseg_park_new(g_sp.len);
		}
		/* Refused for good (a VM, no memfds): no more tries. Past a
		 * bound, the next take tries again. */
		bool done = rc == -EOPNOTSUPP || rc == -ENOSYS;

		pthread_mutex_lock(&g_sp.mu);
		g_sp.busy = false;
		g_sp.given_up = done;
		pthread_cond_broadcast(&g_sp.cv);
		pthread_mutex_unlock(&g_sp.mu);
		if (rc && vc_cu_debug())
			fprintf(stderr, "vcuda: no page-locked spare of %llu MiB made (%d)\n",
				(unsigned long long)(g_sp.len >> 20), rc);
		if (done)
			return NULL;
	}
}

/* In a forked child the maker is not there: no spare is made or waited for
 * (the lock is the parent's, taken around the fork). */
static void before_fork(void)
{
	pthread_mutex_lock(&g_sp.mu);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&g_sp.mu);
}

static void after_fork_child(void)
{
	g_sp.len = 0;
	g_sp.busy = false;
	g_sp.want = false;
	pthread_mutex_unlock(&g_sp.mu);
}

void vc_cu_pinspare_start(void)
{
	uint64_t len = vc_client_env_size("VCUDA_PINNED_SPARE", 0, 0, UINT64_MAX);

	if (!len || pthread_atfork(before_fork, after_fork_parent, after_fork_child))
		return;
	pthread_mutex_lock(&g_sp.mu);
	g_sp.len = len;
	g_sp.want = true;
	pthread_mutex_unlock(&g_sp.mu);
	if (vc_thread_start(NULL, true, maker, NULL)) {
		pthread_mutex_lock(&g_sp.mu);
		g_sp.len = 0;
		pthread_mutex_unlock(&g_sp.mu);
	}
}

void vc_cu_pinspare_kick(void)
{
	pthread_mutex_lock(&g_sp.mu);
	if (g_sp.len && !g_sp.given_up) {
		g_sp.want = true;
		pthread_cond_signal(&g_sp.cv);
	}
	pthread_mutex_unlock(&g_sp.mu);
}

uint64_t vc_cu_pinspare_len(void)
{
	uint64_t len;

	pthread_mutex_lock(&g_sp.mu);
	len = g_sp.given_up ? 0 : g_sp.len;
	pthread_mutex_unlock(&g_sp.mu);
	return len;
}

int vc_cu_pinspare_wait(uint64_t len)
{
	int waited = 0;

	pthread_mutex_lock(&g_sp.mu);
	while (g_sp.busy && vc_cu_pinseg_fits(g_sp.len, len)) {
		pthread_cond_wait(&g_sp.cv, &g_sp.mu);
		waited = 1;
	}
	pthread_mutex_unlock(&g_sp.mu);
	return waited;
}
