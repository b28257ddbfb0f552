/* SPDX-License-Identifier: MIT */
/*
 * syncpoll.c - short waits before a synchronisation is handed off
 * (syncpoll.h). A stream or event that is done within a few microseconds
 * (an empty stream, a short kernel) is answered by the serving thread itself,
 * which saves the helper thread's wake-up and the late reply; the bound keeps
 * other guest threads' commands from waiting long behind it. The helper
 * thread, once done, stays awake briefly for the next job.
 */
#include <pthread.h>
#include <sched.h>

#include "cuda/exec_priv.h"
#include "cuda/syncpoll.h"
#include "vc_time.h"

/* The result of a poll that found its work done: the driver's own
 * synchronisation only where it has work of its own (vc_cu_sync_poll()). */
static int done(struct vc_cu_session *x, int kind, void *h)
{
	if (!x->sync_flushes)
		return CUDA_SUCCESS;
	switch (kind) {
	case VC_CU_SYNC_STREAM:
		return (int)x->drv->cuStreamSynchronize(h);
	case VC_CU_SYNC_EVENT:
		return (int)x->drv->cuEventSynchronize(h);
	default:
		return (int)x->drv->cuCtxSynchronize();
	}
}

int vc_cu_sync_poll(struct vc_cu_session *x, uint32_t kind, void *h, int *rc)
{
	uint64_t t0 = vc_now_ns();
	CUresult q;

	for (;;) {
		q = kind == VC_CU_SYNC_STREAM ? x->drv->cuStreamQuery(h) : x->drv->cuEventQuery(h);
		if (q != CUDA_ERROR_NOT_READY)
			break;
		if (vc_now_ns() - t0 >= VC_SYNC_POLL_NS)
			return 0;
	}
	/* Any other answer (an error) is left to the synchronisation itself,
	 * which gives the driver's own error for it. */
	if (q != CUDA_SUCCESS)
		return 0;
	/* Done. The driver's synchronisation of finished work costs 1.4 us
	 * (bench/cuda/sync_split.c on an H100 and an H200), and does work of
	 * its own only where the session's code may print (it flushes the
	 * output, which must come before the reply, as natively) or a
	 * stream-ordered pool may need trimming: only then is it made. */
	*rc = done(x, (int)kind, h);
	return 1;
}

int vc_cu_sync_poll_ctx(struct vc_cu_session *x, CUcontext ctx, int *rc)
{
	void *q[VC_SYNC_POLL_STREAMS + 2];
	struct vc_cu_handle *qh[VC_SYNC_POLL_STREAMS + 2];
	uint32_t n = 0, ns, next = 0;
	const uint32_t *slots = vc_cu_stream_slots(x, &ns);
	uint64_t t0;

	if (x->green || ns > VC_SYNC_POLL_STREAMS)
		return 0;
	/* The legacy stream always (synchronous copies and memsets name no
	 * stream), the serving thread's per-thread stream where a command
	 * named it, and the context's streams named since a poll last found
	 * them done: a query costs about as much as a synchronisation of
	 * finished work (1.4 us, bench/cuda/sync_split.c), so idle streams
	 * are not asked. */
	qh[n] = NULL;
	q[n++] = CU_STREAM_LEGACY;
	if (x->per_thread_used) {
		qh[n] = NULL;
		q[n++] = CU_STREAM_PER_THREAD;
	}
	for (uint32_t i = 0; i < ns; i++) {
		struct vc_cu_handle *h = &x->h[slots[i]];

		/* A stream without a known context (none published it with an
		 * owner) may be this context's: asked too. */
		if (h->busy && h->real &&
		    (h->owner >= x->nh || !x->h[h->owner].live || x->h[h->owner].kind != VC_H_CUCONTEXT ||
		     x->h[h->owner].real == ctx)) {
			qh[n] = h;
			q[n++] = h->real;
		}
	}
	/* A query of a capturing stream would end its capture; the driver's
	 * synchronisation (which a capture in progress may forbid) answers. */
	for (uint32_t i = 1; i < n; i++)
		if (vc_cu_capturing(x, q[i]))
			return 0;
	/* Nothing is submitted while the serving thread polls: a stream found
	 * done stays done (and idle until a command names it again), and the
	 * next poll starts at the first still busy. */
	t0 = vc_now_ns();
	while (next < n) {
		CUresult r = x->drv->cuStreamQuery(q[next]);

		if (r == CUDA_SUCCESS) {
			if (qh[next])
				qh[next]->busy = 0;
			next++;
			continue;
		}
		if (r != CUDA_ERROR_NOT_READY || vc_now_ns() - t0 >= VC_SYNC_POLL_NS)
			return 0;
	}
	*rc = done(x, VC_CU_SYNC_CTX, NULL);
	return 1;
}

void vc_cu_syncer_spin(struct vc_cu_session *x)
{
	uint64_t t0 = vc_now_ns();

	while (!x->sync_head && !x->cb_abort && vc_now_ns() - t0 < VC_SYNC_SPIN_NS) {
		pthread_mutex_unlock(&x->cb_mu);
		sched_yield();
		pthread_mutex_lock(&x->cb_mu);
	}
}
