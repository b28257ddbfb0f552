/* SPDX-License-Identifier: MIT */
/*
 * cu_sync.c - synchronisation without blocking the serving thread.
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

#include "cu_exec_priv.h"

struct sync_job {
	struct sync_job *next;
	uint32_t kind;
	CUcontext ctx;
	CUevent ev;
	int own_event; /* recorded by us: destroy after the wait */
	uint32_t slot;
	uint64_t seq;
};

static void *syncer(void *arg)
{
	struct vc_cu_session *x = arg;

	pthread_mutex_lock(&x->cb_mu);
	for (;;) {
		struct sync_job *j;
		CUresult rc;
		bool sig = false;

		while (!x->sync_head && !x->cb_abort)
			pthread_cond_wait(&x->cb_cv, &x->cb_mu);
		if (!x->sync_head)
			break; /* closing, nothing left */
		j = x->sync_head;
		x->sync_head = j->next;
		pthread_mutex_unlock(&x->cb_mu);

		x->drv->cuCtxSetCurrent(j->ctx);
		rc = j->kind == VC_CU_SYNC_CTX ? x->drv->cuCtxSynchronize() : x->drv->cuEventSynchronize(j->ev);
		if (j->own_event)
			x->drv->cuEventDestroy_v2(j->ev);

		pthread_mutex_lock(&x->cb_mu);
		/* Shared memory is written only while the session is open. */
		if (!x->cb_abort)
			sig = vc_ring_host_reply(x->ring, j->slot, j->seq, rc, NULL, 0);
		if (sig)
			x->wake(x->wake_arg);
		free(j);
	}
	pthread_mutex_unlock(&x->cb_mu);
	return NULL;
}

static int defer(struct vc_cu_session *x, struct sync_job *j, struct vc_cu_out *out)
{
	struct sync_job **pp;

	pthread_mutex_lock(&x->cb_mu);
	if (!x->syncer_started) {
		if (pthread_create(&x->syncer, NULL, syncer, x)) {
			pthread_mutex_unlock(&x->cb_mu);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		x->syncer_started = true;
	}
	x->ring = out->ring;
	x->wake = out->wake;
	x->wake_arg = out->wake_arg;
	for (pp = &x->sync_head; *pp; pp = &(*pp)->next)
		;
	*pp = j;
	pthread_cond_broadcast(&x->cb_cv);
	pthread_mutex_unlock(&x->cb_mu);
	return VC_CU_DEFERRED;
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
	if (rq.kind > VC_CU_SYNC_CTX)
		return -VC_FATAL_PAYLOAD;
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
		j->ev = h;
	}
	if (!out->has_slot) {
		/* Sent without a reply slot (not by this library): wait here. */
		rc = j->kind == VC_CU_SYNC_CTX ? x->drv->cuCtxSynchronize() : x->drv->cuEventSynchronize(j->ev);
		if (j->own_event)
			x->drv->cuEventDestroy_v2(j->ev);
		free(j);
		return rc;
	}
	j->slot = out->slot;
	j->seq = out->seq;
	rc = defer(x, j, out);
	if (rc != VC_CU_DEFERRED)
		goto err;
	return rc;
err:
	free(j);
	return rc;
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
