/* SPDX-License-Identifier: MIT */
/*
 * exec.c - the CUDA executor's interface (vcuda/executor.h): a session's
 * open, its calls (decoded by the generated vc_cu_dispatch()), whether it is
 * busy, and its teardown, which ends the state each family keeps (host
 * callbacks, the synchronisation helper, the compute-weight tracker, the
 * pinned mapping, the quota table). No family calls back into this file.
 */
#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/console.h"
#include "cuda/exec_priv.h"
#include "cuda/vmm.h"
#include "cuda/memmisc.h"
#include "cuda/graph.h"
#include "vcuda/server.h"

static int cu_open(void *factory, const struct vc_session_services *svc, void **ctx)
{
	struct vc_cu_session *x = calloc(1, sizeof(*x));

	if (!x)
		return -ENOMEM;
	x->drv = factory;
	x->svc = svc;
	pthread_mutex_init(&x->cb_mu, NULL);
	pthread_cond_init(&x->cb_cv, NULL);
	if (vc_cu_handles_init(x)) {
		free(x);
		return -ENOMEM;
	}
	*ctx = x;
	return 0;
}

/* Release host callbacks still holding streams, and wait (a while) for the
 * driver to return them: after this, nothing touches the shared region. */
static void stop_callbacks(struct vc_cu_session *x)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2;
	pthread_mutex_lock(&x->cb_mu);
	x->cb_abort = true;
	while (x->cb_inflight &&
	       pthread_cond_timedwait(&x->cb_cv, &x->cb_mu, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&x->cb_mu);
}

/* Closed sessions kept for callbacks the driver may still run (cu_close()). */
static pthread_mutex_t g_kept_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vc_cu_session *g_kept;

static void cu_close(void *ctx)
{
	struct vc_cu_session *x = ctx;

	stop_callbacks(x);
	vc_cu_logs_close(x); /* the driver calls the log callback no more */
	vc_cu_sync_stop(x);
	vc_cu_sched_stop(x);
	vc_cu_link_fini(x); /* links belong to no context */
	vc_cu_texref_close(x); /* texture references the guest created */
	vc_cu_arrays_close(x); /* texture and surface objects, then arrays */
	/* Destroying a context frees everything in it: memory, modules, streams,
	 * events. Stream-ordered allocations come from the device's pools, which
	 * outlive contexts: free them first, inside one of ours. */
	for (uint32_t i = 0; x->nasync && i < x->nh; i++) {
		if (x->h[i].live && x->h[i].kind == VC_H_CUCONTEXT && x->h[i].real &&
		    x->drv->cuCtxSetCurrent(x->h[i].real) == CUDA_SUCCESS) {
			for (uint32_t k = 0; k < x->nasync; k++)
				x->drv->cuMemFreeAsync((CUdeviceptr)x->async_ptr[k], NULL);
			vc_cu_quiesce(x);
			break;
		}
	}
	/* Graphs, libraries and pools belong to no context: executable graphs
	 * first (they may run a graph), then graphs (their nodes may name a
	 * library's kernels), then libraries, then the pools the guest made (a
	 * device's own pool refuses, harmlessly). A worker's exit would free
	 * them anyway; an embedder that serves many sessions in one process
	 * (tests, fuzzers) must not accumulate them. */
	static const int kinds[] = {VC_H_CUGRAPHEXEC, VC_H_CUGRAPH, VC_H_CULIBRARY, VC_H_CUMEMORYPOOL};

	vc_cu_graph_close(x); /* graphs owned by nodes go with their owner */

	for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (uint32_t i = 0; i < x->nh; i++) {
			struct vc_cu_handle *h = &x->h[i];

			if (!h->live || h->kind != kinds[k] || !h->real)
				continue;
			if (kinds[k] == VC_H_CUGRAPHEXEC)
				x->drv->cuGraphExecDestroy(h->real);
			else if (kinds[k] == VC_H_CUGRAPH)
				x->drv->cuGraphDestroy(h->real);
			else if (kinds[k] == VC_H_CULIBRARY)
				x->drv->cuLibraryUnload(h->real);
			else
				x->drv->cuMemPoolDestroy(h->real);
		}
	/* IPC memory opened, then mappings, allocations and ranges (vmm.h):
	 * they belong to no context. */
	vc_cu_ipc_fini(x);
	vc_cu_memmisc_fini(x); /* holds on allocations mapped into arrays */
	vc_cu_vmm_fini(x);
	vc_cu_green_close(x); /* green contexts, and their contexts, are not cuCtxDestroy'd */
	/* The arena's and the fence words' page-locked mappings, unregistered
	 * inside one of ours. */
	for (uint32_t i = 0; (x->arena_dma || x->fence_map) && i < x->nh; i++)
		if (x->h[i].live && x->h[i].kind == VC_H_CUCONTEXT && x->h[i].real &&
		    x->drv->cuCtxSetCurrent(x->h[i].real) == CUDA_SUCCESS)
			break;
	vc_cu_arena_fini(x);
	vc_cu_fence_fini(x);
	x->drv->cuCtxSetCurrent(NULL);
	for (uint32_t i = 0; i < x->nh; i++)
		if (x->h[i].live && x->h[i].kind == VC_H_CUCONTEXT && x->h[i].real)
			x->drv->cuCtxDestroy_v2(x->h[i].real);
	vc_cu_pinned_fini(x); /* registrations went with the contexts */
	vc_cu_graph_fini(x);  /* no host node can run any more */
	for (int i = 0; i < VC_CU_MAX_IMAGES; i++)
		free(x->img[i].buf);
	free(x->async_ptr);
	/* What the session held stays charged until the listener reaps this
	 * process: it reports those bytes as freed, and returns them. */
	vc_cu_quota_fini(x);
	vc_cu_managed_fini(x);
	free(x->pregs);
	vc_cu_tmap_fini(x);
	vc_cu_handles_fini(x);
	/* Callbacks the driver never ran keep their record; the worker exits
	 * right after this, so the mutex is only destroyed when none is left. */
	if (!x->cb_inflight && !x->syncer_started) {
		pthread_mutex_destroy(&x->cb_mu);
		pthread_cond_destroy(&x->cb_cv);
		free(x);
		return;
	}
	/* Kept on purpose, where it can still be found: an embedder that serves
	 * many sessions in one process (the fuzzers) would otherwise count it
	 * lost. */
	pthread_mutex_lock(&g_kept_mu);
	x->kept_next = g_kept;
	g_kept = x;
	pthread_mutex_unlock(&g_kept_mu);
}

static bool cu_busy(void *ctx)
{
	struct vc_cu_session *x = ctx;

	/* A heuristic for idle reclaim, read from the heartbeat thread. */
	return __atomic_load_n(&x->sync_head, __ATOMIC_RELAXED) != NULL ||
	       __atomic_load_n(&x->cb_inflight, __ATOMIC_RELAXED) != 0;
}

static int cu_call(void *ctx, uint32_t op, const uint8_t *req, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_session *x = ctx;
	int rc;

	vc_cu_capture_relaxed(x);
	rc = vc_cu_dispatch(x, op, req, len, out);

	/* The driver writes device printf to stdout at synchronisation points:
	 * blocking copies, context destroys, module loads, module and library
	 * unloads here (synchronisations answered late collect on their own
	 * thread, sync.c). Collected before the reply lets the guest go on,
	 * failed calls included: a faulting kernel may have printed first.
	 * Only once an image that may print was loaded: the collection reads
	 * the pipe, a system call (0.2-0.3 us on the GPU machine,
	 * bench/cuda/copy_split.c) on every blocking copy. Anything else that
	 * reaches stdout is published by the console's own thread. */
	if (rc >= 0 && rc != VC_CU_DEFERRED && x->may_print &&
	    (out->console || op == VC_CU_cuModuleUnload || op == VC_CU_cuLibraryUnload))
		vc_console_publish(x->svc);
	return rc;
}

const struct vc_executor_ops vc_exec_cuda_ops = {
	.name = "cuda",
	.open = cu_open,
	.close = cu_close,
	.call = cu_call,
	.busy = cu_busy,
};
