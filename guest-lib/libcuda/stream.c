/* SPDX-License-Identifier: MIT */
/*
 * stream.c - the per-thread default stream. Natively each host thread has a
 * default stream of its own (CU_STREAM_PER_THREAD, or stream 0 in the _ptsz
 * and _ptds variants); the server has one thread per session, so its own
 * per-thread stream would be shared by all guest threads and one thread's
 * blocked work would hold up another's. Each guest thread gets a real stream
 * instead, created on first use in each context. Like the per-thread default
 * stream, it synchronises with the legacy default stream.
 */
#include <stdint.h>

#include "fastpath.h"
#include "stats.h"
#include "vc_cu_guest.h"

#define PER_THREAD 4 /* contexts one thread uses at once, typically 1 */

static uint64_t g_gen = 1; /* bumped whenever a context goes away */
static __thread struct {
	uint64_t ctx, gen;
	CUstream s;
} t_streams[PER_THREAD];
static __thread unsigned t_next;

void vc_cu_streams_forget(void)
{
	__atomic_add_fetch(&g_gen, 1, __ATOMIC_RELAXED);
}

uint64_t vc_cu_stream_id(CUstream s)
{
	uint64_t ctx = vc_cu_current(), gen = __atomic_load_n(&g_gen, __ATOMIC_RELAXED);
	CUstream mine = NULL;
	unsigned k;

	if (s != CU_STREAM_PER_THREAD || !ctx)
		return (uint64_t)(uintptr_t)s;
	for (k = 0; k < PER_THREAD; k++)
		if (t_streams[k].ctx == ctx && t_streams[k].gen == gen)
			return (uint64_t)(uintptr_t)t_streams[k].s;
	if (cuStreamCreate(&mine, CU_STREAM_DEFAULT) != CUDA_SUCCESS)
		return (uint64_t)(uintptr_t)s; /* the host's per-thread stream, shared */
	k = t_next++ % PER_THREAD;
	t_streams[k].ctx = ctx;
	t_streams[k].gen = gen;
	t_streams[k].s = mine;
	return (uint64_t)(uintptr_t)mine;
}

/* ---- synchronisation: the host replies when the GPU is done ----------------- */

static CUresult sync_op(uint32_t kind, uint64_t handle, uint64_t raw)
{
	static const enum vc_cu_fast_kind fast[] = {[VC_CU_SYNC_STREAM] = VC_FAST_STREAM,
						    [VC_CU_SYNC_EVENT] = VC_FAST_EVENT,
						    [VC_CU_SYNC_CTX] = VC_FAST_CTX};
	static const enum vc_cu_stat_local stat[] = {[VC_CU_SYNC_STREAM] = VC_STAT_STREAM_SYNC,
						     [VC_CU_SYNC_EVENT] = VC_STAT_EVENT_SYNC,
						     [VC_CU_SYNC_CTX] = VC_STAT_CTX_SYNC};
	struct vc_cu_req_sync rq = {.kind = kind, .handle = handle};
	struct vc_cu_prefix none;
	uint64_t w;
	CUresult rc;

	/* A context's own synchronisation names it; the current one by default. */
	if (kind == VC_CU_SYNC_CTX && !handle)
		handle = vc_cu_current();
	/* Nothing submitted since the last one completed: the same answer,
	 * without a round trip (fastpath.c says why it is exact). */
	if (vc_cu_fast_idle(fast[kind], handle, raw, 1)) {
		VC_STATS_LOCAL(stat[kind]);
		return CUDA_SUCCESS;
	}
	w = vc_cu_fast_work();
	/* Reports a pending asynchronous error too, as synchronising calls do. */
	rc = vc_cu_call(VC_CU_vcSync, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 1);
	if (rc == CUDA_SUCCESS)
		vc_cu_fast_done(fast[kind], handle, raw, 1, w);
	return rc;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	return sync_op(VC_CU_SYNC_STREAM, vc_cu_stream_id(hStream), (uint64_t)(uintptr_t)hStream);
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	if (!hEvent)
		return CUDA_ERROR_INVALID_HANDLE;
	return sync_op(VC_CU_SYNC_EVENT, (uint64_t)(uintptr_t)hEvent, 0);
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
	if (vc_cu_capture_unsafe())
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return sync_op(VC_CU_SYNC_CTX, 0, 0);
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	return sync_op(VC_CU_SYNC_CTX, (uint64_t)(uintptr_t)ctx, 0);
}
