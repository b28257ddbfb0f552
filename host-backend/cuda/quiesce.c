/* SPDX-License-Identifier: MIT */
/*
 * quiesce.c - a closing session's wait for its work (vc_cu_quiesce(),
 * exec_priv.h): bounded, where a context synchronisation could wait for ever;
 * and the query of all the session's streams it is made of.
 */
#include <stdbool.h>
#include <time.h>

#include "cuda/exec_priv.h"
#include "vc_time.h"
#include "vcuda/server.h"

/* The wait at a close, in ms: set before sessions are served (an embedder's
 * start), read by the closes; not shared memory, a relaxed atomic. */
static unsigned g_close_wait_ms = 2000;

void vc_exec_cuda_set_close_wait(unsigned ms)
{
	__atomic_store_n(&g_close_wait_ms, ms, __ATOMIC_RELAXED);
}

int vc_cu_streams_query(struct vc_cu_session *x, uint32_t max)
{
	CUresult first = x->drv->cuStreamQuery(NULL), q;
	uint32_t n = 0;

	for (uint32_t i = 0; first != CUDA_ERROR_NOT_READY && i < x->nh; i++) {
		if (!x->h[i].live || x->h[i].kind != VC_H_CUSTREAM || !x->h[i].real)
			continue;
		q = ++n > max ? CUDA_ERROR_NOT_READY : x->drv->cuStreamQuery(x->h[i].real);
		if (q == CUDA_ERROR_NOT_READY || first == CUDA_SUCCESS)
			first = q;
	}
	return (int)first;
}

bool vc_cu_quiesce(struct vc_cu_session *x)
{
	int64_t end = vc_now_ms() + __atomic_load_n(&g_close_wait_ms, __ATOMIC_RELAXED);

	for (;;) {
		if (vc_cu_streams_query(x, UINT32_MAX) != CUDA_ERROR_NOT_READY)
			return true;
		if (vc_now_ms() > end)
			return false;
		struct timespec ts = {.tv_nsec = 1000000};

		nanosleep(&ts, NULL);
	}
}
