/* SPDX-License-Identifier: MIT */
/*
 * quiesce.c - a closing session's wait for its work (vc_cu_quiesce(),
 * exec_priv.h): bounded, where a context synchronisation could wait for ever.
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

bool vc_cu_quiesce(struct vc_cu_session *x)
{
	int64_t end = vc_now_ms() + __atomic_load_n(&g_close_wait_ms, __ATOMIC_RELAXED);

	for (;;) {
		bool busy = x->drv->cuStreamQuery(NULL) == CUDA_ERROR_NOT_READY;

		for (uint32_t i = 0; !busy && i < x->nh; i++)
			if (x->h[i].live && x->h[i].kind == VC_H_CUSTREAM && x->h[i].real)
				busy = x->drv->cuStreamQuery(x->h[i].real) == CUDA_ERROR_NOT_READY;
		if (!busy)
			return true;
		if (vc_now_ms() > end)
			return false;
		struct timespec ts = {.tv_nsec = 1000000};

		nanosleep(&ts, NULL);
	}
}
