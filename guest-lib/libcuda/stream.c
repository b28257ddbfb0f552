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
