/* SPDX-License-Identifier: MIT */
/*
 * memory.c - device memory: allocations (charged to the quota first, quota.c),
 * frees, copies (inline, through the arena or from the guest's pinned pool)
 * and memsets, every device range checked as this session's.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"
#include "cuda/vmm.h"

int vc_cu_manual_vcMemAlloc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			    struct vc_cu_out *out)
{
	struct vc_cu_req_alloc rq;
	struct vc_cu_rep_alloc rp = {0};
	CUdeviceptr d = 0;
	size_t pitch = 0;
	void *stream, *pool;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	/* Every path charges the quota first; a failure refunds. */
	switch (rq.kind) {
	case VC_CU_ALLOC_PLAIN:
		if ((rc = vc_cu_quota_charge(x, rq.size)))
			return rc;
		rc = x->drv->cuMemAlloc_v2(&d, rq.size);
		if (rc == 0 && (rc = vc_cu_quota_track(x, d, rq.size, x->cur_id)))
			x->drv->cuMemFree_v2(d);
		if (rc)
			vc_cu_quota_refund(x, rq.size);
		break;
	case VC_CU_ALLOC_PITCH: {
		/* The pitch is the driver's choice: charge the least it can be,
		 * then the rest once it is known. */
		uint64_t least = rq.width * rq.height, all;

		if (rq.height && least / rq.height != rq.width)
			return CUDA_ERROR_INVALID_VALUE;
		if ((rc = vc_cu_quota_charge(x, least)))
			return rc;
		rc = x->drv->cuMemAllocPitch_v2(&d, &pitch, rq.width, rq.height, rq.elem);
		if (rc) {
			vc_cu_quota_refund(x, least);
			break;
		}
		all = (uint64_t)pitch * rq.height;
		all = all > least ? all : least;
		if ((rc = vc_cu_quota_charge(x, all - least))) {
			x->drv->cuMemFree_v2(d);
			vc_cu_quota_refund(x, least);
		} else if ((rc = vc_cu_quota_track(x, d, all, x->cur_id))) {
			x->drv->cuMemFree_v2(d);
			vc_cu_quota_refund(x, all);
		}
		break;
	}
	case VC_CU_ALLOC_ASYNC:
		if ((rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
		    (rc = vc_cu_lookup(x, VC_H_CUMEMORYPOOL, rq.pool, &pool)))
			return rc;
		if (x->nasync == x->capasync) {
			uint32_t cap = x->capasync ? x->capasync * 2 : 64;
			uint64_t *na = cap <= VC_CU_MAX_HANDLES ? realloc(x->async_ptr, cap * sizeof(*na)) : NULL;

			if (!na)
				return CUDA_ERROR_OUT_OF_MEMORY;
			x->async_ptr = na;
			x->capasync = cap;
		}
		if ((rc = vc_cu_quota_charge(x, rq.size)))
			return rc;
		x->sync_flushes = true; /* a synchronisation trims the pool (syncpoll.c) */
		rc = pool ? x->drv->cuMemAllocFromPoolAsync(&d, rq.size, pool, stream)
			  : x->drv->cuMemAllocAsync(&d, rq.size, stream);
		if (rc == 0 && (rc = vc_cu_quota_track(x, d, rq.size, 0)))
			x->drv->cuMemFreeAsync(d, stream);
		if (rc)
			vc_cu_quota_refund(x, rq.size);
		else
			x->async_ptr[x->nasync++] = d;
		break;
	default:
		return -VC_FATAL_PAYLOAD;
	}
	if (rc)
		return rc;
	rp.dptr = d;
	rp.pitch = pitch;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_vcMemFree(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			   struct vc_cu_out *out)
{
	struct vc_cu_req_free rq;
	void *stream;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (rq.async) {
		uint32_t i;

		for (i = 0; i < x->nasync && x->async_ptr[i] != rq.dptr; i++)
			;
		/* cuMemAlloc's memory may be freed in stream order too: it must
		 * be the session's, and the driver checks that it is the start
		 * of an allocation, as for cuMemFree. A null pointer is the
		 * driver's to answer (cuSPARSE's solvers free one). */
		if (i == x->nasync && rq.dptr && (rc = vc_cu_check_range(x, rq.dptr, 1)))
			return rc;
		if ((rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
			return rc;
		rc = x->drv->cuMemFreeAsync((CUdeviceptr)rq.dptr, stream);
		if (rc == 0 && rq.dptr) {
			if (i < x->nasync)
				x->async_ptr[i] = x->async_ptr[--x->nasync];
			vc_cu_quota_untrack(x, rq.dptr);
			vc_cu_ipc_freed(x, rq.dptr);
		}
		return rc;
	}
	if (!rq.dptr)
		return 0; /* cuMemFree(0) succeeds natively */
	/* Only the start of an allocation of ours may be freed. */
	if ((rc = vc_cu_check_range(x, rq.dptr, 1)))
		return rc;
	rc = x->drv->cuMemFree_v2((CUdeviceptr)rq.dptr);
	if (rc == 0) {
		vc_cu_quota_untrack(x, rq.dptr);
		vc_cu_ipc_freed(x, rq.dptr);
	}
	return rc;
}

/* A range of the session's, or nothing at all: a copy or memset of zero
 * bytes touches no memory, and the driver answers it whatever its pointers
 * (numba's empty arrays have a null device pointer and copy zero bytes). */
static int check_extent(struct vc_cu_session *x, uint64_t ptr, uint64_t len)
{
	return len ? vc_cu_check_range(x, ptr, len) : 0;
}

/* A blocking copy from or to page-locked memory that the guest sent fenced:
 * queued on the legacy stream, where the blocking call runs, with the
 * device's write of the fence word after it (fence.c); where that cannot
 * be, waited for here. Not where the console may have device printf to
 * collect at the blocking call (exec.c): it would come before the copy is
 * done. */
#define FENCE_LINGER_MAX 5000u /* us: the guest's spin for a blocking page-locked copy stops there too */

static bool fenceable(const struct vc_cu_session *x, const struct vc_cu_req_memcpy *rq,
		      const struct vc_cu_out *out)
{
	return out->fence && !rq->async && rq->host == VC_CU_HOST_PINNED && !rq->stream && !x->may_print;
}

static int fenced(struct vc_cu_session *x, const struct vc_cu_req_memcpy *rq, void *host,
		  struct vc_cu_out *out)
{
	int rc = rq->dir == VC_CU_COPY_HTOD
			 ? x->drv->cuMemcpyHtoDAsync_v2(rq->dst, host, rq->len, CU_STREAM_LEGACY)
			 : x->drv->cuMemcpyDtoHAsync_v2(host, rq->src, rq->len, CU_STREAM_LEGACY);

	if (rc)
		return rc;
	if (vc_cu_fence_queue(x, CU_STREAM_LEGACY, out)) {
		/* The guest's next command comes once the copy is done: be
		 * awake for it, as a blocking call in the driver would have
		 * been (at 20 GB/s, what the guest spins for too). */
		out->linger_us = (uint32_t)(rq->len / 20000 < FENCE_LINGER_MAX ? rq->len / 20000 : FENCE_LINGER_MAX);
		return 0;
	}
	return x->drv->cuStreamSynchronize(CU_STREAM_LEGACY);
}

/* Whether an asynchronous copy from the arena can be the device's DMA from
 * its page-locked mapping @dma, waited for here: the wait must be for this
 * copy alone (as the driver's staging of a large pageable copy waits for
 * its own DMA), never for other work, which may wait in turn for what the
 * guest does after this call. So the stream has nothing pending, nor has
 * what the driver may order the copy behind: nothing, for a non-blocking
 * stream; the legacy stream, for a blocking one (the per-thread one too);
 * every blocking stream, for the legacy one. For the last two every stream
 * of the session is asked (at most IDLE_STREAMS_MAX of them), and none may
 * be capturing: the legacy stream's query would be an invalid operation
 * then (vc_cu_streams_idle()). And no device printf is to be collected at
 * a synchronisation (exec.c). The copy's own stream was found not
 * capturing by the caller. */
#define IDLE_STREAMS_MAX 64u

static bool idle_dma(struct vc_cu_session *x, void *dma, void *stream)
{
	unsigned flags = 0;

	if (!dma || x->may_print)
		return false;
	if (stream && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD &&
	    x->drv->cuStreamGetFlags(stream, &flags) == CUDA_SUCCESS && (flags & CU_STREAM_NON_BLOCKING))
		return x->drv->cuStreamQuery(stream) == CUDA_SUCCESS;
	/* The session's streams hold a blocking one, and the legacy stream is
	 * asked last; the per-thread stream is no handle of the session's. */
	return (stream != CU_STREAM_PER_THREAD || x->drv->cuStreamQuery(stream) == CUDA_SUCCESS) &&
	       vc_cu_streams_idle(x, IDLE_STREAMS_MAX);
}

int vc_cu_manual_vcMemcpy(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			  struct vc_cu_out *out)
{
	struct vc_cu_req_memcpy rq;
	void *stream, *host, *dma = NULL;
	int rc;

	TAKE(rq);
	out->console = !rq.async; /* a blocking copy synchronises */
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
		return rc;
	if (rq.dir == VC_CU_COPY_DTOD) {
		if ((rc = check_extent(x, rq.dst, rq.len)) || (rc = check_extent(x, rq.src, rq.len)))
			return rc;
		return rq.async ? x->drv->cuMemcpyDtoDAsync_v2(rq.dst, rq.src, rq.len, stream)
				: x->drv->cuMemcpyDtoD_v2(rq.dst, rq.src, rq.len);
	}
	if (rq.host == VC_CU_HOST_INLINE) {
		if (rq.dir == VC_CU_COPY_HTOD) {
			if (rq.len > len - sizeof(rq))
				return -VC_FATAL_PAYLOAD;
			host = (void *)(p + sizeof(rq));
		} else {
			if (!out->data)
				return -VC_FATAL_PAYLOAD; /* inline device-to-host needs a reply */
			if (rq.len > out->data_cap)
				return CUDA_ERROR_INVALID_VALUE;
			host = out->data;
			out->data_len = (uint32_t)rq.len;
		}
	} else if (rq.host == VC_CU_HOST_ARENA) {
		host = x->svc->arena(x->svc->arg, rq.arena_off, rq.len);
		if (!host)
			return -VC_FATAL_ARENA;
		out->bulk = true;
		dma = vc_cu_arena_dma(x, rq.arena_off, rq.len);
	} else if (rq.host == VC_CU_HOST_PINNED) {
		/* The guest's own page-locked memory: the copy is DMA and, when
		 * asynchronous, really is (the guest owns those pages). */
		host = vc_cu_pinned_ptr(x, rq.arena_off, rq.len);
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
	} else {
		return -VC_FATAL_PAYLOAD;
	}
	if (rq.async && rq.host != VC_CU_HOST_PINNED && (rc = vc_cu_not_capturing(x, stream)))
		return rc;
	if (rq.dir == VC_CU_COPY_HTOD) {
		if ((rc = check_extent(x, rq.dst, rq.len)))
			return rc;
		/* From the arena, an asynchronous copy onto a stream with work
		 * pending (idle_dma()) takes the session's unregistered
		 * mapping: the driver stages it before returning, without
		 * waiting for the stream, as from pageable memory natively, and
		 * the piece may be reused once this command is done. Onto an
		 * idle stream it is DMA from the page-locked mapping, waited
		 * for: the device reads the piece at its own speed, where the
		 * driver's staging is a second copy by the CPU (256 MiB: 9 GB/s
		 * staged, as natively, 24 GB/s so on the H200 machine). A
		 * blocking one is DMA from the page-locked mapping (arena.c),
		 * complete when the call returns. */
		if (rq.async && idle_dma(x, dma, stream)) {
			rc = x->drv->cuMemcpyHtoDAsync_v2(rq.dst, dma, rq.len, stream);
			return rc ? rc : (int)x->drv->cuStreamSynchronize(stream);
		}
		if (rq.async)
			return x->drv->cuMemcpyHtoDAsync_v2(rq.dst, host, rq.len, stream);
		if (fenceable(x, &rq, out))
			return fenced(x, &rq, host, out);
		return x->drv->cuMemcpyHtoD_v2(rq.dst, dma ? dma : host, rq.len);
	}
	if (rq.dir == VC_CU_COPY_DTOH) {
		if ((rc = check_extent(x, rq.src, rq.len)))
			return rc;
		/* Into pageable memory the async form completes before returning,
		 * so done_seq covers the data, as the guest expects. Into the
		 * arena's page-locked mapping (DMA, arena.c) it would not: the
		 * stream's synchronisation makes it so, which is what a copy
		 * into pageable memory does natively (it waits for the stream's
		 * earlier work, then for itself). */
		if (dma && rq.async) {
			rc = x->drv->cuMemcpyDtoHAsync_v2(dma, rq.src, rq.len, stream);
			return rc ? rc : (int)x->drv->cuStreamSynchronize(stream);
		}
		if (dma)
			return x->drv->cuMemcpyDtoH_v2(dma, rq.src, rq.len);
		if (fenceable(x, &rq, out))
			return fenced(x, &rq, host, out);
		return rq.async ? x->drv->cuMemcpyDtoHAsync_v2(host, rq.src, rq.len, stream)
				: x->drv->cuMemcpyDtoH_v2(host, rq.src, rq.len);
	}
	return -VC_FATAL_PAYLOAD;
}

int vc_cu_manual_vcMemcpy2D(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			    struct vc_cu_out *out)
{
	struct vc_cu_req_memcpy2d rq;
	CUDA_MEMCPY2D c;
	void *stream;
	int rc;

	TAKE(rq);
	out->console = !rq.async; /* a blocking copy synchronises */
	if (!rq.height || !rq.width)
		return 0;
	if (rq.dpitch < rq.width || rq.spitch < rq.width ||
	    rq.height - 1 > (UINT64_MAX - rq.width) / (rq.dpitch > rq.spitch ? rq.dpitch : rq.spitch))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
	    (rc = vc_cu_check_range(x, rq.dst, rq.dpitch * (rq.height - 1) + rq.width)) ||
	    (rc = vc_cu_check_range(x, rq.src, rq.spitch * (rq.height - 1) + rq.width)))
		return rc;
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = rq.src;
	c.srcPitch = rq.spitch;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = rq.dst;
	c.dstPitch = rq.dpitch;
	c.WidthInBytes = rq.width;
	c.Height = rq.height;
	return rq.async ? x->drv->cuMemcpy2DAsync_v2(&c, stream) : x->drv->cuMemcpy2DUnaligned_v2(&c);
}

int vc_cu_manual_vcMemset(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			  struct vc_cu_out *out)
{
	struct vc_cu_req_memset rq;
	void *stream;
	int rc;

	(void)out;
	TAKE(rq);
	uint64_t extent;

	if (rq.elem != 1 && rq.elem != 2 && rq.elem != 4)
		return -VC_FATAL_PAYLOAD;
	if (rq.count > UINT64_MAX / rq.elem)
		return CUDA_ERROR_INVALID_VALUE;
	extent = rq.count * rq.elem;
	if (rq.height && !extent)
		return VC_CUDA_SUCCESS; /* rows of nothing */
	if (rq.height) {
		/* Rows pitch apart: the last row ends at pitch * (height - 1) + width
		 * (pitch >= width > 0 here, so the division is safe). */
		if (rq.pitch < extent || rq.height - 1 > (UINT64_MAX - extent) / rq.pitch)
			return CUDA_ERROR_INVALID_VALUE;
		extent += rq.pitch * (rq.height - 1);
	}
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
	    (rc = check_extent(x, rq.dst, extent)))
		return rc;
	if (rq.height) {
		switch (rq.elem) {
		case 1:
			return rq.async ? x->drv->cuMemsetD2D8Async(rq.dst, rq.pitch, (unsigned char)rq.value, rq.count, rq.height, stream)
					: x->drv->cuMemsetD2D8_v2(rq.dst, rq.pitch, (unsigned char)rq.value, rq.count, rq.height);
		case 2:
			return rq.async ? x->drv->cuMemsetD2D16Async(rq.dst, rq.pitch, (unsigned short)rq.value, rq.count, rq.height, stream)
					: x->drv->cuMemsetD2D16_v2(rq.dst, rq.pitch, (unsigned short)rq.value, rq.count, rq.height);
		default:
			return rq.async ? x->drv->cuMemsetD2D32Async(rq.dst, rq.pitch, rq.value, rq.count, rq.height, stream)
					: x->drv->cuMemsetD2D32_v2(rq.dst, rq.pitch, rq.value, rq.count, rq.height);
		}
	}
	switch (rq.elem) {
	case 1:
		return rq.async ? x->drv->cuMemsetD8Async(rq.dst, (unsigned char)rq.value, rq.count, stream)
				: x->drv->cuMemsetD8_v2(rq.dst, (unsigned char)rq.value, rq.count);
	case 2:
		return rq.async ? x->drv->cuMemsetD16Async(rq.dst, (unsigned short)rq.value, rq.count, stream)
				: x->drv->cuMemsetD16_v2(rq.dst, (unsigned short)rq.value, rq.count);
	default:
		return rq.async ? x->drv->cuMemsetD32Async(rq.dst, rq.value, rq.count, stream)
				: x->drv->cuMemsetD32_v2(rq.dst, rq.value, rq.count);
	}
}
