/* SPDX-License-Identifier: MIT */
/*
 * sched.c - a session's part in compute weights (gpushare.h): before a kernel
 * launch, wait if this server is ahead of its competitors; after it, while a
 * competitor exists, record an event on the launch's stream and let a
 * tracker thread measure how long this session has work in flight, charging
 * it to the server's virtual time. Alone on the GPU a session does neither
 * beyond one look at the scheduling file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "cuda/exec_priv.h"
#include "resources/gpushare.h"
#include "vc_time.h"

#define TRACKS 16
#define TICK_NS 50000L /* how soon a drained GPU is seen free (gpushare.c's turns) */

struct track {
	void *ctx, *stream, *event;
	bool pending;
};

struct vc_cu_sched {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool started, stop, busy;
	uint64_t last_ns; /* charged up to here */
	const struct vc_cuda_driver *drv;
	struct track t[TRACKS];
};

/* With mu held: charge the time since the last look; end busy when nothing is pending. */
static void settle(struct vc_cu_sched *s)
{
	bool pending = false;
	uint64_t now = vc_now_ns();

	for (int i = 0; i < TRACKS; i++) {
		struct track *t = &s->t[i];

		if (!t->pending)
			continue;
		s->drv->cuCtxSetCurrent(t->ctx);
		if (s->drv->cuEventQuery(t->event) == CUDA_ERROR_NOT_READY)
			pending = true;
		else
			t->pending = false; /* done, or an error: stop waiting for it */
	}
	if (s->busy) {
		/* The work ended somewhere since the last look: charge half of
		 * that interval, the expected part, not all of it (a lag every
		 * turn would otherwise weigh most on the lightest server, whose
		 * turns are the shortest). */
		vc_sched_charge(pending ? now - s->last_ns : (now - s->last_ns) / 2);
		s->last_ns = now;
		if (!pending) {
			s->busy = false;
			vc_sched_busy(false);
		}
	}
}

static void *tracker(void *arg)
{
	struct vc_cu_sched *s = arg;

	/* Ticks this short want the timer's slack (50 us by default) gone. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		struct timespec ts = {.tv_nsec = TICK_NS};

		if (!s->busy) {
			pthread_cond_wait(&s->cv, &s->mu);
			continue;
		}
		pthread_mutex_unlock(&s->mu);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&s->mu);
		settle(s);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

void vc_cu_sched_before(struct vc_cu_session *x)
{
	(void)x;
	if (vc_sched_enabled())
		vc_sched_gate();
}

void vc_cu_sched_after(struct vc_cu_session *x, void *ctx, void *stream)
{
	struct vc_cu_sched *s = x->sched;
	struct track *t = NULL;

	if (!vc_sched_enabled() || (!s && !vc_sched_competing()))
		return;
	/* Not into a graph being captured: the tracking event would be a node. */
	if (vc_cu_capturing(x, stream))
		return;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return;
		pthread_mutex_init(&s->mu, NULL);
		pthread_cond_init(&s->cv, NULL);
		s->drv = x->drv;
		if (pthread_create(&s->thread, NULL, tracker, s)) {
			free(s);
			return;
		}
		s->started = true;
		x->sched = s;
	}
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < TRACKS && !t; i++)
		if (s->t[i].event && s->t[i].ctx == ctx && s->t[i].stream == stream)
			t = &s->t[i];
	for (int i = 0; i < TRACKS && !t; i++) {
		if (s->t[i].event && !s->t[i].pending && s->t[i].ctx == ctx) {
			t = &s->t[i]; /* reuse a quiet one of this context */
			t->stream = stream;
		}
	}
	for (int i = 0; i < TRACKS && !t; i++) {
		if (!s->t[i].event && x->drv->cuEventCreate((CUevent *)&s->t[i].event, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS) {
			t = &s->t[i];
			t->ctx = ctx;
			t->stream = stream;
		}
	}
	if (t && x->drv->cuEventRecord(t->event, stream) == CUDA_SUCCESS) {
		t->pending = true;
		if (!s->busy) {
			s->busy = true;
			s->last_ns = vc_now_ns();
			vc_sched_busy(true);
			pthread_cond_signal(&s->cv);
		}
	}
	pthread_mutex_unlock(&s->mu);
}

void vc_cu_sched_ctx_gone(struct vc_cu_session *x, void *ctx)
{
	struct vc_cu_sched *s = x->sched;

	if (!s)
		return;
	/* Before the context goes: its events go with it, unqueried. */
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < TRACKS; i++)
		if (s->t[i].event && s->t[i].ctx == ctx)
			s->t[i] = (struct track){0};
	settle(s);
	pthread_mutex_unlock(&s->mu);
}

void vc_cu_sched_stop(struct vc_cu_session *x)
{
	struct vc_cu_sched *s = x->sched;

	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	if (s->busy)
		vc_sched_busy(false);
	for (int i = 0; i < TRACKS; i++)
		if (s->t[i].event)
			x->drv->cuEventDestroy_v2(s->t[i].event);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
	x->sched = NULL;
}
