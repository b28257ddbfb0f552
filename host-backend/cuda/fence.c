/* SPDX-License-Identifier: MIT */
/*
 * fence.c - blocking copies that the device says are done.
 *
 * A blocking copy from or to page-locked memory is the copy engine's DMA and
 * a wait for it. Answered when the driver's blocking call returned, the guest
 * waited for the copy, then for the serving thread to see it done and write
 * the reply, then for the reply to reach it: 1-2 us more than natively on a
 * 27 us copy of 1 MiB (docs/PERFORMANCE.md). A copy the guest sends fenced
 * (VC_CMD_F_FENCE) is queued on the legacy stream, where the blocking call
 * runs natively, with a write of its reply slot's fence word after it
 * (cuStreamWriteValue32, in stream order: the copy's data lands first), and
 * answered at once. The guest then spins on the word as the native driver
 * spins on its own completion record, and the reply travels while the copy
 * runs.
 *
 * The words lie in the region's control page, which this maps a second time
 * from the region's memfd and page-locks (portable: every context) when the
 * first fenced copy comes; the device writes them at the address the driver
 * gives for that mapping. Where that cannot be (no memfd to map, the driver
 * refuses), or the write cannot be queued, the copy is waited for here and
 * the core stores the word before the reply, as for any other command. The
 * registration belongs to the context current when it was made (as the
 * arena's, arena.c): if that context goes, the next write fails, its copy is
 * waited for here, and the next fenced copy registers the page again; after
 * FAILS_MAX failures in a row the session stops trying.
 */
#include "cuda/exec_priv.h"

#define FENCE_PAGE 4096u
#define FAILS_MAX 4u

/* The fence words' page, mapped and registered; 0 where it cannot be. */
static CUdeviceptr words(struct vc_cu_session *x)
{
	CUdeviceptr d = 0;
	void *m;

	if (x->fence_dev)
		return x->fence_dev;
	if (x->fence_fails >= FAILS_MAX || x->svc->fence_file.word_off > FENCE_PAGE - 4 * VC_FENCE_SLOTS)
		return 0;
	m = vc_cu_map_locked(x, x->svc->fence_file.fd, x->svc->fence_file.fd_off, FENCE_PAGE,
			     CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
	if (!m || x->drv->cuMemHostGetDevicePointer_v2(&d, m, 0) || !d) {
		if (m)
			vc_cu_unmap_locked(x, m, FENCE_PAGE);
		x->fence_fails = FAILS_MAX; /* nothing will change: do not try again */
		return 0;
	}
	x->fence_map = m;
	x->fence_dev = d;
	return d;
}

bool vc_cu_fence_queue(struct vc_cu_session *x, CUstream stream, struct vc_cu_out *out)
{
	CUdeviceptr d;

	if (!out->fence || out->slot >= VC_FENCE_SLOTS || !(d = words(x)))
		return false;
	d += x->svc->fence_file.word_off + 4ull * out->slot;
	if (x->drv->cuStreamWriteValue32_v2(stream, d, (cuuint32_t)out->seq, CU_STREAM_WRITE_VALUE_DEFAULT) ==
	    CUDA_SUCCESS) {
		x->fence_fails = 0;
		out->fence_queued = true;
		return true;
	}
	vc_cu_fence_fini(x);
	x->fence_fails++;
	return false;
}

void vc_cu_fence_fini(struct vc_cu_session *x)
{
	if (!x->fence_map)
		return;
	vc_cu_unmap_locked(x, x->fence_map, FENCE_PAGE);
	x->fence_map = NULL;
	x->fence_dev = 0;
}
