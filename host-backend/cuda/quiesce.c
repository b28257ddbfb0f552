/* SPDX-License-Identifier: MIT */
/*
 * quiesce.c - a closing session's wait for its work (vc_cu_quiesce(),
 * exec_priv.h): bounded, where a context synchronisation could wait for ever.
 */
#include <stdbool.h>
#include <time.h>

#include "cuda/exec_priv.h"
#include "vc_time.h"

bool vc_cu_quiesce(struct vc_cu_session *x, int ms)
{
	int64_t end = vc_now_ms() + ms;

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
