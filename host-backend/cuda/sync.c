/* SPDX-License-Identifier: MIT */
/*
 * sync.c - synchronisation without blocking the serving thread.
 *
 * A guest thread's cuStreamSynchronize may wait on a long kernel, or on a
 * host function that another guest thread has to release; the session's one
 * serving thread must go on executing the other threads' calls meanwhile. So
 * the serving thread records an event where the wait begins (a stream sync
 * waits for exactly the work before it) and hands the wait to a helper thread
 * of the session's, which writes the reply into the caller's slot when the GPU
 * is done and wakes the guest.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/console.h"
#include "cuda/exec_priv.h"
#include "cuda/syncpoll.h"

struct sync_job {
	struct sync_job *next;
	uint32_t kind;
	CUcontext ctx;
	CUevent ev;
	int own_event; /* recorded by us: destroy after the wait */
	CUcontext *all; /* VC_CU_SYNC_ALL: the session's contexts when it was asked */
	uint32_t nall;
	uint32_t slot;
	uint64_t seq;
	bool gone; /* its context is being destroyed: touch it no more (under cb_mu) */
};

/* Whether job @j makes context @c current. */
static bool job_uses(const struct sync_job *j, CUcontext c)
{
	if (j->ctx == c)
		return true;
	for (uint32_t i = 0; i < j->nall; i++)
		if (j->all[i] == c)
			return true;
	return false;
}

/* Reply slot @slot has a job's late reply coming (under cb_mu). A correct
 * guest waits in a slot for one reply at a time, so a second job for a
 * busy slot is a protocol violation; this also bounds the jobs a session
 * can queue by its slot count. */
static bool slot_busy(const struct vc_cu_session *x, uint32_t slot)
{
	return x->sync_slots[slot / 64] >> (slot % 64) & 1;
}

static void slot_mark(struct vc_cu_session *x, uint32_t slot, bool busy)
{
	if (busy)
		x->sync_slots[slot / 64] |= 1ull << (slot % 64);
	else
		x->sync_slots[slot / 64] &= ~(1ull << (slot % 64));
}

static void job_free(struct sync_job *j)
{
	free(j->all);
	free(j);
}

/* Make context @c current for job @j, unless it is going away: under cb_mu,
 * so that vc_cu_sync_ctx_gone() never destroys a context between the check
 * and the switch. Once current here, a destroy is one thread's destroy of a
 * context another thread uses, which the driver answers with an error. */
static CUresult job_enter(struct vc_cu_session *x, struct sync_job *j, CUcontext c)
{
	CUresult rc;

	pthread_mutex_lock(&x->cb_mu);
	rc = j->gone ? CUDA_ERROR_CONTEXT_IS_DESTROYED : x->drv->cuCtxSetCurrent(c);
	pthread_mutex_unlock(&x->cb_mu);
	return rc;
}

/* An event wait that may never end (the session asked a stream to wait for a
 * value): poll, so that a context destroy or the session's end stops it.
 * Each query is made under cb_mu, after checking that the context is not
 * going: vc_cu_sync_ctx_gone() marks the job before the destroy, so the
 * event is never queried once its context may be gone. */
static CUresult poll_event(struct vc_cu_session *x, struct sync_job *j)
{
	struct timespec ts = {0, 20000};
	CUresult rc;

	for (;;) {
		pthread_mutex_lock(&x->cb_mu);
		rc = j->gone || x->cb_abort ? CUDA_ERROR_CONTEXT_IS_DESTROYED : x->drv->cuEventQuery(j->ev);
		pthread_mutex_unlock(&x->cb_mu);
		if (rc != CUDA_ERROR_NOT_READY)
			return rc;
		nanosleep(&ts, NULL);
		if (ts.tv_nsec < 1000000)
			ts.tv_nsec *= 2;
	}
}

/* Wait for the job's work; the first error, as a synchronisation reports it. */
static CUresult job_wait(struct vc_cu_session *x, struct sync_job *j)
{
	CUresult rc = CUDA_SUCCESS, r;

	if (j->kind == VC_CU_SYNC_ALL) {
		for (uint32_t i = 0; i < j->nall; i++)
			if ((r = job_enter(x, j, j->all[i])) || (r = x->drv->cuCtxSynchronize()))
				rc = rc ? rc : r;
		return rc;
	}
	if ((rc = job_enter(x, j, j->ctx)))
		return rc;
	if (j->kind == VC_CU_SYNC_CTX)
		rc = x->drv->cuCtxSynchronize();
	else if (__atomic_load_n(&x->memop_waits, __ATOMIC_RELAXED)) /* set by memops.c */
		rc = poll_event(x, j);
	else
		rc = x->drv->cuEventSynchronize(j->ev);
	pthread_mutex_lock(&x->cb_mu);
	if (j->own_event && !j->gone) /* a destroyed context took its events along */
		x->drv->cuEventDestroy_v2(j->ev);
	pthread_mutex_unlock(&x->cb_mu);
	return rc;
}

static void *syncer(void *arg)
{
	struct vc_cu_session *x = arg;

	vc_cu_capture_relaxed(x);
	pthread_mutex_lock(&x->cb_mu);
	for (;;) {
		struct sync_job *j;
		CUresult rc;

		vc_cu_syncer_spin(x);
		while (!x->sync_head && !x->cb_abort)
			pthread_cond_wait(&x->cb_cv, &x->cb_mu);
		if (!x->sync_head)
			break; /* closing, nothing left */
		j = x->sync_head;
		x->sync_head = j->next;
		x->sync_cur = j;
		pthread_mutex_unlock(&x->cb_mu);

		rc = job_wait(x, j);

		pthread_mutex_lock(&x->cb_mu);
		/* Shared memory is written only while the session is open. The
		 * driver printed the device's printf output during the wait: it
		 * is collected before the reply lets the guest go on. */
		slot_mark(x, j->slot, false); /* free before the reply lets the guest reuse it */
		if (!x->cb_abort) {
			vc_console_publish(x->svc);
			x->svc->reply(x->svc->arg, j->slot, j->seq, rc);
		}
		job_free(j);
		x->sync_cur = NULL;
		pthread_cond_broadcast(&x->cb_cv); /* vc_cu_sync_ctx_gone() may wait for it */
	}
	pthread_mutex_unlock(&x->cb_mu);
	return NULL;
}

static int defer(struct vc_cu_session *x, struct sync_job *j)
{
	struct sync_job **pp;

	pthread_mutex_lock(&x->cb_mu);
	if (slot_busy(x, j->slot)) {
		pthread_mutex_unlock(&x->cb_mu);
		return -VC_FATAL_SLOT;
	}
	if (!x->syncer_started) {
		if (pthread_create(&x->syncer, NULL, syncer, x)) {
			pthread_mutex_unlock(&x->cb_mu);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		x->syncer_started = true;
	}
	for (pp = &x->sync_head; *pp; pp = &(*pp)->next)
		;
	*pp = j;
	slot_mark(x, j->slot, true);
	pthread_cond_broadcast(&x->cb_cv);
	pthread_mutex_unlock(&x->cb_mu);
	return VC_CU_DEFERRED;
}

/* Hand job @j to the helper thread, which answers in the caller's slot.
 * Takes @j. */
static int submit(struct vc_cu_session *x, struct sync_job *j, struct vc_cu_out *out)
{
	int rc;

	j->slot = out->slot;
	j->seq = out->seq;
	rc = defer(x, j);
	if (rc != VC_CU_DEFERRED) {
		if (j->own_event)
			x->drv->cuEventDestroy_v2(j->ev);
		job_free(j);
	}
	return rc;
}

/* Every context of the session, as natively a process's teardown waits for
 * each (and the driver prints what their kernels left in the printf FIFO). */
static int sync_all(struct vc_cu_session *x, struct vc_cu_out *out)
{
	struct sync_job *j = calloc(1, sizeof(*j));
	uint32_t n = 0;

	if (!j)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* At exit a process does not wait natively: this wait is vcuda's own,
	 * for device printf. Where a stream may wait for a value for ever, it
	 * is not made (the last kernels' printf output may be lost). */
	if (__atomic_load_n(&x->memop_waits, __ATOMIC_RELAXED)) { /* set by memops.c on this thread */
		free(j);
		return CUDA_SUCCESS;
	}
	j->kind = VC_CU_SYNC_ALL;
	for (uint32_t i = 0; i < x->nh; i++)
		n += x->h[i].live && x->h[i].kind == VC_H_CUCONTEXT && x->h[i].real;
	if (n && !(j->all = calloc(n, sizeof(*j->all)))) {
		free(j);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (uint32_t i = 0; i < x->nh; i++)
		if (x->h[i].live && x->h[i].kind == VC_H_CUCONTEXT && x->h[i].real)
			j->all[j->nall++] = x->h[i].real;
	return submit(x, j, out);
}

int vc_cu_manual_vcSync(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_sync rq;
	struct sync_job *j;
	CUcontext ctx = NULL;
	void *h;
	int rc;

	if (len < sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	memcpy(&rq, p, sizeof(rq));
	if (rq.kind > VC_CU_SYNC_ALL)
		return -VC_FATAL_PAYLOAD;
	/* Its answer comes late, in a reply slot: sent without one (never by
	 * this library), it has nowhere to go, and waiting for it here would
	 * stop the serving thread, maybe for ever (a stream told to wait for
	 * a value nothing writes). Refused, as an asynchronous error. */
	if (!out->has_slot)
		return CUDA_ERROR_INVALID_VALUE;
	if (rq.kind == VC_CU_SYNC_ALL)
		return sync_all(x, out);
	if (rq.kind == VC_CU_SYNC_CTX && rq.handle)
		rc = vc_cu_enter(x, rq.handle);
	else
		rc = vc_cu_enter(x, rq.ctx);
	if (rc || (rc = x->drv->cuCtxGetCurrent(&ctx)))
		return rc;
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	j = calloc(1, sizeof(*j));
	if (!j)
		return CUDA_ERROR_OUT_OF_MEMORY;
	j->kind = rq.kind;
	j->ctx = ctx;
	if (rq.kind == VC_CU_SYNC_CTX && vc_cu_sync_poll_ctx(x, ctx, &rc)) {
		out->console = true; /* it synchronised here */
		goto err;
	}
	if (rq.kind == VC_CU_SYNC_STREAM) {
		if ((rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.handle, &h)))
			goto err;
		/* A capturing stream must not get an event of ours (it would
		 * become a node): the driver's own answer, at once, ends the
		 * capture as natively. */
		if (vc_cu_capturing(x, h)) {
			rc = x->drv->cuStreamSynchronize(h);
			goto err;
		}
		if (vc_cu_sync_poll(x, VC_CU_SYNC_STREAM, h, &rc)) {
			struct vc_cu_handle *sh = vc_cu_handle_get(x, VC_H_CUSTREAM, rq.handle);

			if (sh && rc == CUDA_SUCCESS)
				sh->busy = 0; /* done: a context's poll need not ask it */
			out->console = true; /* it synchronised here */
			goto err;
		}
		/* A stream of another context than the current one (a green
		 * context's): the event is made in the stream's own context. */
		CUcontext sc = vc_cu_stream_ctx(x, rq.handle);

		if (sc && sc != ctx) {
			if ((rc = x->drv->cuCtxSetCurrent(sc)))
				goto err;
			x->cur_id = UINT64_MAX; /* the next vc_cu_enter() sets the guest's */
			j->ctx = sc;
		}
		if ((rc = x->drv->cuEventCreate(&j->ev, CU_EVENT_DISABLE_TIMING)))
			goto err;
		j->own_event = 1;
		if ((rc = x->drv->cuEventRecord(j->ev, h))) {
			x->drv->cuEventDestroy_v2(j->ev);
			goto err;
		}
	} else if (rq.kind == VC_CU_SYNC_EVENT) {
		if ((rc = vc_cu_lookup(x, VC_H_CUEVENT, rq.handle, &h)))
			goto err;
		if (!h) {
			rc = CUDA_ERROR_INVALID_HANDLE;
			goto err;
		}
		if (vc_cu_sync_poll(x, VC_CU_SYNC_EVENT, h, &rc)) {
			out->console = true; /* it synchronised here */
			goto err;
		}
		j->ev = h;
	}
	return submit(x, j, out);
err:
	free(j);
	return rc;
}

/* With cb_mu held: answer the queued jobs that use @ctx with an error and
 * drop them; tell the running one its context is going. */
static void cancel_jobs(struct vc_cu_session *x, void *ctx)
{
	struct sync_job **pp = &x->sync_head;

	while (*pp) {
		struct sync_job *j = *pp;

		if (!job_uses(j, ctx)) {
			pp = &j->next;
			continue;
		}
		*pp = j->next;
		slot_mark(x, j->slot, false);
		if (!x->cb_abort)
			x->svc->reply(x->svc->arg, j->slot, j->seq, CUDA_ERROR_CONTEXT_IS_DESTROYED);
		job_free(j);
	}
	if (x->sync_cur && job_uses(x->sync_cur, ctx))
		x->sync_cur->gone = true;
}

void vc_cu_sync_ctx_gone(struct vc_cu_session *x, void *ctx)
{
	/* The helper thread makes a waiting job's context current: that context
	 * must outlive the job. Natively a context's destruction waits for its
	 * work as well, so waiting for the jobs on it first changes no answer.
	 * Unless a stream was told to wait for a value: that wait may never
	 * end, and the destroy must not hang on it (nor the session's end).
	 * Then the destroy goes ahead at once, and the synchronisations still
	 * pending on the context are answered with an error. */
	if (!x->syncer_started)
		return;
	pthread_mutex_lock(&x->cb_mu);
	if (__atomic_load_n(&x->memop_waits, __ATOMIC_RELAXED)) { /* set by memops.c on this thread */
		cancel_jobs(x, ctx);
		pthread_mutex_unlock(&x->cb_mu);
		return;
	}
	while (!x->cb_abort) {
		bool busy = x->sync_cur && job_uses(x->sync_cur, ctx);

		for (struct sync_job *j = x->sync_head; !busy && j; j = j->next)
			busy = job_uses(j, ctx);
		if (!busy)
			break;
		pthread_cond_wait(&x->cb_cv, &x->cb_mu);
	}
	pthread_mutex_unlock(&x->cb_mu);
}

void vc_cu_sync_stop(struct vc_cu_session *x)
{
	struct timespec ts;

	if (!x->syncer_started)
		return;
	pthread_mutex_lock(&x->cb_mu);
	x->cb_abort = true;
	pthread_cond_broadcast(&x->cb_cv);
	pthread_mutex_unlock(&x->cb_mu);
	/* It may sit in a long GPU wait; the worker exits right after anyway. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 3;
	if (pthread_timedjoin_np(x->syncer, NULL, &ts) == 0)
		x->syncer_started = false;
}
