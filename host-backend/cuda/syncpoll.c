/* SPDX-License-Identifier: MIT */
/*
 * syncpoll.c - short waits before a synchronisation is handed off
 * (syncpoll.h). A stream or event that is done within a few microseconds
 * (an empty stream, a short kernel) is answered by the serving thread itself,
 * which saves the helper thread's wake-up and the late reply; the bound keeps
 * other guest threads' commands from waiting long behind it. The helper
 * thread, once done, stays awake briefly for the next job.
 */
#include <pthread.h>
#include <sched.h>

#include "cuda/exec_priv.h"
#include "cuda/syncpoll.h"
#include "vc_time.h"

int vc_cu_sync_poll(struct vc_cu_session *x, uint32_t kind, void *h, int *rc)
{
	uint64_t t0 = vc_now_ns();
	CUresult q;

	for (;;) {
		q = kind == VC_CU_SYNC_STREAM ? x->drv->cuStreamQuery(h) : x->drv->cuEventQuery(h);
		if (q != CUDA_ERROR_NOT_READY)
			break;
		if (vc_now_ns() - t0 >= VC_SYNC_POLL_NS)
			return 0;
	}
	/* Any other answer (an error) is left to the synchronisation itself,
	 * which gives the driver's own error for it. */
	if (q != CUDA_SUCCESS)
		return 0;
	/* Done. The driver's synchronisation of finished work costs 1.4 us
	 * (bench/cuda/sync_split.c on an H100 and an H200), and does work of
	 * its own only where the session's code may print (it flushes the
	 * output, which must come before the reply, as natively) or a
	 * stream-ordered pool may need trimming: only then is it made. */
	if (!x->sync_flushes) {
		*rc = CUDA_SUCCESS;
		return 1;
	}
	*rc = (int)(kind == VC_CU_SYNC_STREAM ? x->drv->cuStreamSynchronize(h) : x->drv->cuEventSynchronize(h));
	return 1;
}

void vc_cu_syncer_spin(struct vc_cu_session *x)
{
	uint64_t t0 = vc_now_ns();

	while (!x->sync_head && !x->cb_abort && vc_now_ns() - t0 < VC_SYNC_SPIN_NS) {
		pthread_mutex_unlock(&x->cb_mu);
		sched_yield();
		pthread_mutex_lock(&x->cb_mu);
	}
}
