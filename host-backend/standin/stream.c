/* SPDX-License-Identifier: MIT */
/*
 * stream.c - the CI stand-in's streams, events and host functions.
 */
#include <stdlib.h>

#include "standin/standin_priv.h"

/* ---- host functions ------------------------------------------------------------ */

/* Host functions run in order on one thread of their own: work completes at
 * once here, but a host function may block (vcuda's holds the stream until
 * the guest has run the guest's function), so never on the caller's thread. */
struct hostfn {
	struct hostfn *next;
	CUhostFn fn;
	void *arg;
};

static pthread_cond_t g_hf_idle = PTHREAD_COND_INITIALIZER;
static unsigned g_hf_pending; /* host functions queued or running */
static struct hostfn *g_hf_head, **g_hf_tail = &g_hf_head;
static pthread_cond_t g_hf_cv = PTHREAD_COND_INITIALIZER;

static pthread_t g_hf_thread;
static int g_hf_started;

static void *hostfn_thread(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&g_mu);
	for (;;) {
		struct hostfn *h;

		while (!g_hf_head)
			pthread_cond_wait(&g_hf_cv, &g_mu);
		h = g_hf_head;
		g_hf_head = h->next;
		if (!g_hf_head)
			g_hf_tail = &g_hf_head;
		pthread_mutex_unlock(&g_mu);
		h->fn(h->arg);
		free(h);
		pthread_mutex_lock(&g_mu);
		if (--g_hf_pending == 0)
			pthread_cond_broadcast(&g_hf_idle);
	}
	return NULL;
}

/* Synchronisation waits for host functions too, as on a GPU. */
void vc_si_wait_host_funcs(void)
{
	pthread_mutex_lock(&g_mu);
	while (g_hf_pending)
		pthread_cond_wait(&g_hf_idle, &g_mu);
	pthread_mutex_unlock(&g_mu);
}

static CUresult s_host_func(CUstream s, CUhostFn fn, void *arg)
{
	struct hostfn *h;

	if (!vc_si_stream_ok(s) || !fn)
		return CUDA_ERROR_INVALID_VALUE;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->fn = fn;
	h->arg = arg;
	pthread_mutex_lock(&g_mu);
	if (!g_hf_started && pthread_create(&g_hf_thread, NULL, hostfn_thread, NULL) == 0) {
		pthread_detach(g_hf_thread);
		g_hf_started = 1;
	}
	*g_hf_tail = h;
	g_hf_tail = &h->next;
	g_hf_pending++;
	pthread_cond_signal(&g_hf_cv);
	pthread_mutex_unlock(&g_mu);
	return g_hf_started ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- streams and events (all work completes at once) ------------------------------ */

static CUresult s_stream_create(CUstream *s, unsigned flags)
{
	CUresult rc = vc_si_need_ctx();

	if (rc == CUDA_SUCCESS && (rc = vc_si_make(T_STREAM, (void **)s)) == CUDA_SUCCESS)
		((struct obj *)*s)->flags = flags;
	return rc;
}

static CUresult s_stream_create_prio(CUstream *s, unsigned flags, int prio)
{
	CUresult rc = s_stream_create(s, flags);

	if (rc == CUDA_SUCCESS)
		((struct obj *)*s)->priority = prio < -5 ? -5 : prio > 0 ? 0 : prio;
	return rc;
}

static CUresult s_stream_destroy(CUstream s)
{
	if (!vc_si_is(s, T_STREAM))
		return CUDA_ERROR_INVALID_HANDLE;
	vc_si_memops_stream_gone(s);
	vc_si_del_obj(s);
	return CUDA_SUCCESS;
}

static CUresult s_stream_sync(CUstream s)
{
	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	vc_si_wait_host_funcs();
	vc_si_sim_drain();
	return vc_si_synced(vc_si_memops_drain(s));
}

static CUresult s_stream_query(CUstream s)
{
	unsigned n;

	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_mu);
	n = g_hf_pending;
	if (g_sim_ns && g_busy_until > vc_si_sim_now())
		n++;
	pthread_mutex_unlock(&g_mu);
	n += vc_si_memops_pending(s);
	return n ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

static CUresult s_stream_wait(CUstream s, CUevent e, unsigned f)
{
	(void)f;
	return vc_si_stream_ok(s) && vc_si_is(e, T_EVENT) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_stream_flags(CUstream s, unsigned *f)
{
	*f = vc_si_is(s, T_STREAM) ? ((struct obj *)s)->flags : 0;
	return vc_si_stream_ok(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_stream_prio(CUstream s, int *p)
{
	*p = vc_si_is(s, T_STREAM) ? ((struct obj *)s)->priority : 0;
	return vc_si_stream_ok(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_stream_id(CUstream s, unsigned long long *id)
{
	*id = vc_si_is(s, T_STREAM) ? ((struct obj *)s)->id : (unsigned long long)(uintptr_t)s;
	return vc_si_stream_ok(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_event_create(CUevent *e, unsigned flags)
{
	CUresult rc = vc_si_need_ctx();

	if (rc == CUDA_SUCCESS && (rc = vc_si_make(T_EVENT, (void **)e)) == CUDA_SUCCESS)
		((struct obj *)*e)->flags = flags;
	return rc;
}

static CUresult s_event_destroy(CUevent e)
{
	if (!vc_si_is(e, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	vc_si_del_obj(e);
	return CUDA_SUCCESS;
}

static CUresult s_event_record(CUevent e, CUstream s)
{
	if (!vc_si_is(e, T_EVENT) || !vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_mu);
	((struct obj *)e)->done_at = g_busy_until;
	pthread_mutex_unlock(&g_mu);
	vc_si_memops_mark(e, s);
	return CUDA_SUCCESS;
}

static CUresult s_event_record_f(CUevent e, CUstream s, unsigned f)
{
	(void)f;
	return s_event_record(e, s);
}

static CUresult s_event_sync(CUevent e)
{
	if (!vc_si_is(e, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	vc_si_wait_host_funcs(); /* an event recorded after host functions completes after them */
	vc_si_sim_drain();
	return vc_si_synced(vc_si_memops_event_wait(e));
}

static CUresult s_event_query(CUevent e)
{
	unsigned n;

	if (!vc_si_is(e, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_mu);
	n = g_hf_pending;
	if (g_sim_ns && ((struct obj *)e)->done_at > vc_si_sim_now())
		n++;
	pthread_mutex_unlock(&g_mu);
	n += vc_si_memops_event_pending(e);
	return n ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

static CUresult s_event_elapsed(float *ms, CUevent a, CUevent b)
{
	if (!vc_si_is(a, T_EVENT) || !vc_si_is(b, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	*ms = 0.001f; /* nothing ran; positive, as a real interval would be */
	return CUDA_SUCCESS;
}

/* A thread's capture mode, kept and swapped as the driver does. */
static CUresult s_exchange_mode(CUstreamCaptureMode *mode)
{
	static __thread CUstreamCaptureMode t_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUstreamCaptureMode old = t_mode;

	if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	t_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

void vc_si_fill_stream(struct vc_cuda_driver *d)
{
	d->cuThreadExchangeStreamCaptureMode = s_exchange_mode;
	d->cuLaunchHostFunc = s_host_func;
	d->cuStreamCreate = s_stream_create;
	d->cuStreamCreateWithPriority = s_stream_create_prio;
	d->cuStreamDestroy_v2 = s_stream_destroy;
	d->cuStreamSynchronize = s_stream_sync;
	d->cuStreamQuery = s_stream_query;
	d->cuStreamWaitEvent = s_stream_wait;
	d->cuStreamGetFlags = s_stream_flags;
	d->cuStreamGetPriority = s_stream_prio;
	d->cuStreamGetId = s_stream_id;
	d->cuEventCreate = s_event_create;
	d->cuEventDestroy_v2 = s_event_destroy;
	d->cuEventRecord = s_event_record;
	d->cuEventRecordWithFlags = s_event_record_f;
	d->cuEventSynchronize = s_event_sync;
	d->cuEventQuery = s_event_query;
	d->cuEventElapsedTime_v2 = s_event_elapsed;
}
