/* SPDX-License-Identifier: MIT */
/*
 * quiesce.c - whether a session's streams have work pending: a closing
 * session's wait for its work (vc_cu_quiesce(), exec_priv.h), bounded where a
 * context synchronisation could wait for ever, and the check that nothing is
 * pending at all (vc_cu_streams_idle()).
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

/* The real stream of the session's next live stream handle from *@i on
 * (*@i moves past it), or NULL past the last. */
static void *next_stream(struct vc_cu_session *x, uint32_t *i)
{
	for (; *i < x->nh; (*i)++)
		if (x->h[*i].live && x->h[*i].kind == VC_H_CUSTREAM && x->h[*i].real)
			return x->h[(*i)++].real;
	return NULL;
}

bool vc_cu_streams_idle(struct vc_cu_session *x, uint32_t max)
{
	uint32_t i = 0, n = 0;
	void *s;

	/* A capturing stream is not queried: that would end its capture
	 * (an invalid operation), and neither is the legacy stream then: its
	 * query would be one on a blocking stream that captures. */
	while ((s = next_stream(x, &i)))
		if (++n > max || vc_cu_capturing(x, s) || x->drv->cuStreamQuery(s) != CUDA_SUCCESS)
			return false;
	return x->drv->cuStreamQuery(NULL) == CUDA_SUCCESS;
}

bool vc_cu_quiesce(struct vc_cu_session *x)
{
	int64_t end = vc_now_ms() + __atomic_load_n(&g_close_wait_ms, __ATOMIC_RELAXED);

	for (;;) {
		bool busy = x->drv->cuStreamQuery(NULL) == CUDA_ERROR_NOT_READY;
		uint32_t i = 0;
		void *s;

		while (!busy && (s = next_stream(x, &i)))
			busy = x->drv->cuStreamQuery(s) == CUDA_ERROR_NOT_READY;
		if (!busy)
			return true;
		if (vc_now_ms() > end)
			return false;
		struct timespec ts = {.tv_nsec = 1000000};

		nanosleep(&ts, NULL);
	}
}
