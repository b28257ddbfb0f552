/* SPDX-License-Identifier: MIT */
/*
 * memory.c - device memory, copies, memsets, host memory and pointer
 * attributes.
 *
 * Device pointers are the host GPU's real addresses. The guest keeps a map of
 * its own allocations: cuMemcpy and cuMemcpyAsync must tell host from device
 * addresses themselves, and pointer attributes are answered from it.
 * Copies of up to 4 KiB host-to-device travel inline in the ring, and
 * device-to-host copies that fit a reply slot come back in it; larger ones
 * are pipelined through the staging arena.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fastpath.h"
#include "vc_client.h"
#include "vc_cu_guest.h"
#include "vc_sanitize.h"
#include "vmm.h"

#define INLINE_HTOD_MAX 4096u

/* ---- the allocation map --------------------------------------------------- */

enum kind { K_DEVICE = 1, K_HOST = 2 };

struct range {
	uint64_t base, size;
	uint64_t ctx;
	unsigned flags; /* cuMemHostAlloc flags */
	enum kind kind;
	int owned;      /* host memory this library allocated (cuMemHostAlloc) */
	int pinned;     /* pinned-pool pages, registered with the host's driver */
	uint64_t devptr; /* pinned: its device address */
	uint64_t pool_off; /* pinned: the pool offset of base */
	int managed;    /* device memory that is managed (managed.c maps it here too) */
	int dev;        /* the device whose memory it is; -1: its context's */
};

static struct range *g_r; /* sorted by base, non-overlapping */
static size_t g_n, g_cap;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t find_index(uint64_t p)
{
	size_t lo = 0, hi = g_n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g_r[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo; /* first range with base > p */
}

static int track_range(uint64_t base, uint64_t size, enum kind k, unsigned flags, int owned, int pinned,
		       uint64_t devptr, uint64_t pool_off)
{
	size_t i;

	pthread_mutex_lock(&g_mu);
	if (g_n == g_cap) {
		size_t cap = g_cap ? g_cap * 2 : 64;
		struct range *n = realloc(g_r, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&g_mu);
			return -1;
		}
		g_r = n;
		g_cap = cap;
	}
	i = find_index(base);
	memmove(&g_r[i + 1], &g_r[i], (g_n - i) * sizeof(*g_r));
	g_r[i] = (struct range){.base = base, .size = size ? size : 1, .ctx = vc_cu_current(),
				.flags = flags, .kind = k, .owned = owned, .pinned = pinned, .devptr = devptr,
				.pool_off = pool_off, .dev = -1};
	g_n++;
	pthread_mutex_unlock(&g_mu);
	return 0;
}

static int track(uint64_t base, uint64_t size, enum kind k, unsigned flags, int owned)
{
	return track_range(base, size, k, flags, owned, 0, 0, 0);
}

/* Remove the range starting at @base of kind @k; its record in *@out. */
static int untrack(uint64_t base, enum kind k, struct range *out)
{
	size_t i;
	int rc = -1;

	pthread_mutex_lock(&g_mu);
	i = find_index(base);
	if (i && g_r[i - 1].base == base && g_r[i - 1].kind == k) {
		if (out)
			*out = g_r[i - 1];
		memmove(&g_r[i - 1], &g_r[i], (g_n - i) * sizeof(*g_r));
		g_n--;
		rc = 0;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* The range holding [@p, @p + @n), if any. */
static int lookup(uint64_t p, uint64_t n, struct range *out)
{
	size_t i;
	int rc = -1;

	pthread_mutex_lock(&g_mu);
	i = find_index(p);
	if (i) {
		const struct range *r = &g_r[i - 1];

		if (p - r->base < r->size && n <= r->size - (p - r->base)) {
			*out = *r;
			rc = 0;
		}
	}
	pthread_mutex_unlock(&g_mu);
	/* Not an allocation: a VMM mapping, or memory opened through IPC (vmm.h). */
	if (rc && !vc_cu_vmm_find(p, n, &out->base, &out->size, &out->dev)) {
		out->ctx = vc_cu_current();
		out->managed = 0;
		out->flags = 0;
		out->kind = K_DEVICE;
		out->owned = out->pinned = 0;
		out->devptr = out->pool_off = 0;
		rc = 0;
	}
	return rc;
}

int vc_cu_mem_is_device(uint64_t p, uint64_t n)
{
	struct range r;

	return !lookup(p, n ? n : 1, &r) && r.kind == K_DEVICE;
}

int vc_cu_mem_track_managed(uint64_t base, uint64_t size)
{
	size_t i;

	if (track_range(base, size, K_DEVICE, 0, 0, 0, 0, 0))
		return -1;
	pthread_mutex_lock(&g_mu);
	i = find_index(base);
	if (i && g_r[i - 1].base == base)
		g_r[i - 1].managed = 1;
	pthread_mutex_unlock(&g_mu);
	return 0;
}

/* Whether [@p, @p + @n) is page-locked memory of ours; its pool offset then. */
static int pinned_range(const void *p, uint64_t n, uint64_t *off)
{
	struct range r;

	if (lookup((uint64_t)(uintptr_t)p, n ? n : 1, &r) || r.kind != K_HOST || !r.pinned)
		return 0;
	*off = r.pool_off + ((uint64_t)(uintptr_t)p - r.base);
	return 1;
}

int vc_cu_mem_pinned(const void *p, uint64_t n, uint64_t *off)
{
	return pinned_range(p, n, off);
}

/* ---- allocation ------------------------------------------------------------------- */

static CUresult alloc(uint32_t kind, uint64_t size, uint64_t w, uint64_t h, uint32_t elem, CUstream s,
		      CUmemoryPool pool, CUdeviceptr *dptr, size_t *pitch)
{
	struct vc_cu_req_alloc rq = {.kind = kind, .size = size, .width = w, .height = h, .elem = elem,
				     .stream = vc_cu_stream_id(s), .pool = (uint64_t)(uintptr_t)pool};
	struct vc_cu_rep_alloc rp;
	CUresult rc;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(VC_CU_vcMemAlloc, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	*dptr = rp.dptr;
	if (pitch)
		*pitch = rp.pitch;
	track(rp.dptr, kind == VC_CU_ALLOC_PITCH ? rp.pitch * h : size, K_DEVICE, 0, 0);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	if (vc_cu_capture_unsafe())
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return alloc(VC_CU_ALLOC_PLAIN, bytesize, 0, 0, 0, NULL, NULL, dptr, NULL);
}

CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
				    unsigned int ElementSizeBytes)
{
	if (!pPitch)
		return CUDA_ERROR_INVALID_VALUE;
	return alloc(VC_CU_ALLOC_PITCH, 0, WidthInBytes, Height, ElementSizeBytes, NULL, NULL, dptr, pPitch);
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc(VC_CU_ALLOC_ASYNC, bytesize, 0, 0, 0, hStream, NULL, dptr, NULL);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE; /* 0 would mean the device's current pool */
	return alloc(VC_CU_ALLOC_ASYNC, bytesize, 0, 0, 0, hStream, pool, dptr, NULL);
}

static CUresult mem_free(CUdeviceptr dptr, int async, CUstream s)
{
	struct vc_cu_req_free rq = {.dptr = dptr, .async = (uint32_t)async,
				    .stream = vc_cu_stream_id(s)};
	struct vc_cu_prefix none;
	CUresult rc;

	if (!async && dptr && vc_cu_managed_any() && vc_cu_managed_free(dptr, &rc)) {
		if (rc == CUDA_SUCCESS)
			untrack(dptr, K_DEVICE, NULL);
		return rc;
	}
	if (async)
		rc = vc_cu_submit(VC_CU_vcMemFree, &rq, sizeof(rq), NULL, 0);
	else
		rc = vc_cu_call(VC_CU_vcMemFree, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
	if (rc == CUDA_SUCCESS && dptr && untrack(dptr, K_DEVICE, NULL))
		vc_cu_vmm_untrack(dptr, 1); /* an imported pool pointer */
	return rc;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	if (vc_cu_capture_unsafe())
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return mem_free(dptr, 0, NULL);
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return mem_free(dptr, 1, hStream);
}

/* ---- copies -------------------------------------------------------------------------- */

struct copy {
	uint32_t dir;
	uint64_t dev;
	CUstream stream;
	int async;
};

static void fill(struct vc_cu_req_memcpy *rq, const struct copy *c, uint64_t off, uint64_t n)
{
	memset(rq, 0, sizeof(*rq));
	rq->ctx = vc_cu_current();
	rq->dir = c->dir;
	rq->len = n;
	rq->stream = vc_cu_stream_id(c->stream);
	rq->async = (uint32_t)c->async;
	if (c->dir == VC_CU_COPY_HTOD)
		rq->dst = c->dev + off;
	else
		rq->src = c->dev + off;
}

static int emit_copy(struct vc_client *cl, void *arg, uint64_t off, uint64_t n, uint64_t aoff, uint64_t *seq)
{
	struct vc_cu_req_memcpy rq;

	fill(&rq, arg, off, n);
	rq.host = VC_CU_HOST_ARENA;
	rq.arena_off = aoff;
	return vc_client_submit(cl, VC_CU_vcMemcpy, &rq, sizeof(rq), NULL, 0, 0, seq);
}

/* A copy in one command: queued when asynchronous, else waited for. */
static CUresult send_copy(struct vc_cu_req_memcpy *rq, const void *data, size_t dlen)
{
	struct vc_cu_prefix none;

	/* A copy of nothing waits for the driver's answer, which is given at
	 * the call natively and depends on its pointers alone. */
	if (rq->async && rq->len)
		return vc_cu_submit(VC_CU_vcMemcpy, rq, sizeof(*rq), data, dlen);
	return vc_cu_call(VC_CU_vcMemcpy, rq, sizeof(*rq), data, dlen, &none, 0, NULL, 0, 1);
}

/* A copy from or to page-locked memory at @poff of the pinned pool: the
 * host's DMA from or to the guest's own pages. A blocking one is waited for
 * spinning about as long as its DMA takes (at 20 GB/s, up to PINNED_SPIN_MAX
 * us), as the native driver does, rather than paying a wake-up. It is sent
 * fenced: the host queues it on the legacy stream (where the blocking call
 * runs natively) and answers at once, and the device's write of the fence
 * word after the copy ends the wait, as the driver's own completion record
 * ends a native one; the host's answer and the device's work overlap. Not
 * while a capture is under way in the process: a blocking call then meets
 * the capture rules, which the host applies to the blocking call itself. */
#define PINNED_SPIN_MAX 5000u
static CUresult pinned_copy(const struct copy *c, size_t n, uint64_t poff)
{
	uint32_t spin = n / 20000 + 50 < PINNED_SPIN_MAX ? (uint32_t)(n / 20000 + 50) : PINNED_SPIN_MAX;
	struct vc_cu_req_memcpy rq;

	fill(&rq, c, 0, n);
	rq.host = VC_CU_HOST_PINNED;
	rq.arena_off = poff;
	if (c->async)
		return send_copy(&rq, NULL, 0);
	if (n && !rq.stream && !vc_cu_fast_captures_maybe())
		return vc_cu_call_fenced(VC_CU_vcMemcpy, &rq, sizeof(rq), spin);
	vc_client_spin_next(spin);
	return send_copy(&rq, NULL, 0);
}

static CUresult dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, int async);

/* An asynchronous copy from or to pageable memory on a capturing stream
 * (capcopy.c): recorded as the bounce buffer's DMA and the host function
 * that moves the bytes between it and the program's memory, in that order
 * out of the device and the other way into it. */
static CUresult captured(const struct copy *c, void *host, size_t n)
{
	int out = c->dir == VC_CU_COPY_DTOH;
	CUhostFn fn;
	uint64_t poff;
	void *data;
	CUresult rc;

	if ((rc = vc_cu_capcopy_get(host, n, out, NULL, &poff, &fn, &data)))
		return rc;
	if (!out && (rc = cuLaunchHostFunc(c->stream, fn, data)))
		return rc;
	if ((rc = pinned_copy(c, n, poff)))
		return rc;
	return out ? cuLaunchHostFunc(c->stream, fn, data) : CUDA_SUCCESS;
}

static CUresult htod(CUdeviceptr dst, const void *src, size_t n, CUstream s, int async)
{
	struct copy c = {.dir = VC_CU_COPY_HTOD, .dev = dst, .stream = s, .async = async};
	struct vc_cu_state *st = vc_cu_state();
	struct vc_cu_req_memcpy rq;
	uint64_t poff;
	int rc;

	if (!st)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (n && !src)
		return CUDA_ERROR_INVALID_VALUE;
	/* Managed memory is the device's: never read through the CPU here. */
	if (n && vc_cu_managed_any() && vc_cu_managed_has((uint64_t)(uintptr_t)src, n))
		return dtod(dst, (uint64_t)(uintptr_t)src, n, s, async);
	vc_cu_managed_before(VC_CU_vcMemcpy);
	if (n > INLINE_HTOD_MAX && pinned_range(src, n, &poff))
		return pinned_copy(&c, n, poff); /* one DMA from the guest's own pages, no staging */
	/* Recorded: page-locked memory (a larger source of it took the DMA
	 * above), or a bounce. */
	if (async && n && vc_cu_capture_active(s))
		return n <= INLINE_HTOD_MAX && pinned_range(src, n, &poff)
			       ? pinned_copy(&c, n, poff)
			       : captured(&c, (void *)(uintptr_t)src, n);
	if (n <= INLINE_HTOD_MAX) {
		fill(&rq, &c, 0, n);
		rq.host = VC_CU_HOST_INLINE;
		return send_copy(&rq, src, n);
	}
	/* A blocking copy is the device's DMA from the arena (the server's
	 * registered mapping); so is an asynchronous one onto a stream with
	 * nothing pending, while onto a busy stream the host's driver stages
	 * it, its CPU reading the pieces (host-backend/cuda/memory.c). Written
	 * for the DMA either way: an asynchronous 1 MiB copy onto an idle
	 * stream ran at 13-14 GB/s so, 9 GB/s written for the CPU (the H200
	 * machine, docs/PERFORMANCE.md). */
	rc = vc_client_put(st->client, src, n, emit_copy, &c, VC_CLIENT_PUT_DMA | (async ? VC_CLIENT_PUT_ASYNC : 0));
	if (!async)
		vc_cu_console_check(); /* a blocking copy synchronises */
	return rc < 0 ? vc_cu_error(rc) : (CUresult)rc;
}

static CUresult dtoh(void *dst, CUdeviceptr src, size_t n, CUstream s, int async)
{
	struct copy c = {.dir = VC_CU_COPY_DTOH, .dev = src, .stream = s, .async = async};
	struct vc_cu_state *st = vc_cu_state();
	struct vc_cu_req_memcpy rq;
	struct vc_cu_prefix none;
	uint64_t poff;
	size_t got = 0;
	CUresult r;
	int rc;

	if (!st)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (n && !dst)
		return CUDA_ERROR_INVALID_VALUE;
	if (n && vc_cu_managed_any() && vc_cu_managed_has((uint64_t)(uintptr_t)dst, n))
		return dtod((uint64_t)(uintptr_t)dst, src, n, s, async);
	vc_cu_managed_before(VC_CU_vcMemcpy);
	/* Into page-locked memory the copy is DMA and, when asynchronous,
	 * really asynchronous: the data lands when the stream gets there. */
	if (n && pinned_range(dst, n, &poff))
		return pinned_copy(&c, n, poff);
	if (async && n && vc_cu_capture_active(s))
		return captured(&c, dst, n);
	/* Other device-to-host copies wait for their data even when asynchronous:
	 * into pageable memory they do natively too. */
	if (n <= vc_client_inline_max(st->client) - VC_CU_REP_MAX) {
		fill(&rq, &c, 0, n);
		rq.host = VC_CU_HOST_INLINE;
		r = vc_cu_call_sized(VC_CU_vcMemcpy, &rq, sizeof(rq), NULL, 0, &none, 0, dst, n, &got, !async);
		return r == CUDA_SUCCESS && got != n ? CUDA_ERROR_UNKNOWN : r;
	}
	rc = vc_client_get(st->client, dst, n, emit_copy, &c);
	vc_cu_console_check(); /* a copy to pageable memory synchronises */
	return rc < 0 ? vc_cu_error(rc) : (CUresult)rc;
}

static CUresult dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, int async)
{
	struct vc_cu_req_memcpy rq = {.dir = VC_CU_COPY_DTOD, .dst = dst, .src = src, .len = n,
				      .stream = vc_cu_stream_id(s), .async = (uint32_t)async};

	return send_copy(&rq, NULL, 0);
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return htod(dstDevice, srcHost, ByteCount, NULL, 0);
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
				      CUstream hStream)
{
	return htod(dstDevice, srcHost, ByteCount, hStream, 1);
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return dtoh(dstHost, srcDevice, ByteCount, NULL, 0);
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
				      CUstream hStream)
{
	return dtoh(dstHost, srcDevice, ByteCount, hStream, 1);
}

CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return dtod(dstDevice, srcDevice, ByteCount, NULL, 0);
}

CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
				      CUstream hStream)
{
	return dtod(dstDevice, srcDevice, ByteCount, hStream, 1);
}

/* Unified copies: which side is the device is ours to tell. */
static CUresult unified(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, int async)
{
	int ddev = vc_cu_mem_is_device(dst, n), sdev = vc_cu_mem_is_device(src, n);

	if (ddev && sdev)
		return dtod(dst, src, n, s, async);
	if (ddev)
		return htod(dst, (const void *)(uintptr_t)src, n, s, async);
	if (sdev)
		return dtoh((void *)(uintptr_t)dst, src, n, s, async);
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return unified(dst, src, ByteCount, NULL, 0);
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
	return unified(dst, src, ByteCount, hStream, 1);
}

/* ---- 2D copies -------------------------------------------------------------------------- */

/* Where one side of a 2D copy is: a device address, or a host one. */
static CUresult side(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t pitch,
		     int *is_dev, uint64_t *addr)
{
	if (t == CU_MEMORYTYPE_UNIFIED)
		t = vc_cu_mem_is_device(dev, 1) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST, host = (void *)(uintptr_t)dev;
	if (t == CU_MEMORYTYPE_DEVICE) {
		*is_dev = 1;
		*addr = dev + y * pitch + x;
	} else if (t == CU_MEMORYTYPE_HOST) {
		*is_dev = 0;
		*addr = (uint64_t)(uintptr_t)host + y * pitch + x;
	} else {
		return CUDA_ERROR_NOT_SUPPORTED; /* CUDA arrays */
	}
	return CUDA_SUCCESS;
}

/*
 * Device to device in one command; with a host side, row by row through the
 * 1D copies (asynchronous except the last row of a synchronous copy, so that
 * the rows pipeline and the call returns when the copy is complete).
 */
static CUresult copy2d(const CUDA_MEMCPY2D *p, CUstream s, int async)
{
	int sdev, ddev;
	uint64_t src, dst;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (p->srcMemoryType == CU_MEMORYTYPE_ARRAY || p->dstMemoryType == CU_MEMORYTYPE_ARRAY)
		return vc_cu_copy2d_array(p, s, async); /* copy3d.c */
	if ((rc = side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY, p->srcPitch, &sdev, &src)) ||
	    (rc = side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY, p->dstPitch, &ddev, &dst)))
		return rc;
	if (!p->WidthInBytes || !p->Height)
		return CUDA_SUCCESS;
	/* A pitch below the width is refused whatever the height, as the
	 * driver does (a host side's pitch never reaches it). */
	if (p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (sdev && ddev) {
		struct vc_cu_req_memcpy2d rq = {.dst = dst, .dpitch = p->dstPitch, .src = src, .spitch = p->srcPitch,
						.width = p->WidthInBytes, .height = p->Height,
						.stream = vc_cu_stream_id(s), .async = (uint32_t)async};
		struct vc_cu_prefix none;

		if (async)
			return vc_cu_submit(VC_CU_vcMemcpy2D, &rq, sizeof(rq), NULL, 0);
		return vc_cu_call(VC_CU_vcMemcpy2D, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 1);
	}
	for (size_t r = 0; r < p->Height; r++) {
		int a = async || r + 1 < p->Height;
		uint64_t so = src + r * p->srcPitch, dof = dst + r * p->dstPitch;

		if (!sdev && !ddev)
			memmove((void *)(uintptr_t)dof, (const void *)(uintptr_t)so, p->WidthInBytes);
		else if (ddev)
			rc = htod(dof, (const void *)(uintptr_t)so, p->WidthInBytes, s, a);
		else
			rc = dtoh((void *)(uintptr_t)dof, so, p->WidthInBytes, s, a);
		if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
	return copy2d(pCopy, NULL, 0);
}

CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
	return copy2d(pCopy, NULL, 0);
}

CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	return copy2d(pCopy, hStream, 1);
}

/* ---- memsets --------------------------------------------------------------------- */

static CUresult memset_2d(CUdeviceptr dst, size_t pitch, uint32_t v, uint32_t elem, size_t n, size_t h,
			  CUstream s, int async)
{
	struct vc_cu_req_memset rq = {.dst = dst, .value = v, .elem = elem, .count = n, .pitch = pitch,
				      .height = h, .stream = vc_cu_stream_id(s), .async = (uint32_t)async};
	struct vc_cu_prefix none;

	/* A memset of nothing waits for the driver's answer (as send_copy()). */
	if (async && n)
		return vc_cu_submit(VC_CU_vcMemset, &rq, sizeof(rq), NULL, 0);
	return vc_cu_call(VC_CU_vcMemset, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

static CUresult memset_dev(CUdeviceptr dst, uint32_t v, uint32_t elem, size_t n, CUstream s, int async)
{
	return memset_2d(dst, 0, v, elem, n, 0, s, async);
}

CUresult CUDAAPI cuMemsetD2D8_v2(CUdeviceptr d, size_t pitch, unsigned char uc, size_t w, size_t h)
{
	return h ? memset_2d(d, pitch, uc, 1, w, h, NULL, 0) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD2D16_v2(CUdeviceptr d, size_t pitch, unsigned short us, size_t w, size_t h)
{
	return h ? memset_2d(d, pitch, us, 2, w, h, NULL, 0) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD2D32_v2(CUdeviceptr d, size_t pitch, unsigned int ui, size_t w, size_t h)
{
	return h ? memset_2d(d, pitch, ui, 4, w, h, NULL, 0) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr d, size_t pitch, unsigned char uc, size_t w, size_t h,
				   CUstream s)
{
	return h ? memset_2d(d, pitch, uc, 1, w, h, s, 1) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD2D16Async(CUdeviceptr d, size_t pitch, unsigned short us, size_t w, size_t h,
				    CUstream s)
{
	return h ? memset_2d(d, pitch, us, 2, w, h, s, 1) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int ui, size_t w, size_t h,
				    CUstream s)
{
	return h ? memset_2d(d, pitch, ui, 4, w, h, s, 1) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr d, unsigned char uc, size_t N)
{
	return memset_dev(d, uc, 1, N, NULL, 0);
}

CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr d, unsigned short us, size_t N)
{
	return memset_dev(d, us, 2, N, NULL, 0);
}

CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr d, unsigned int ui, size_t N)
{
	return memset_dev(d, ui, 4, N, NULL, 0);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char uc, size_t N, CUstream s)
{
	return memset_dev(d, uc, 1, N, s, 1);
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr d, unsigned short us, size_t N, CUstream s)
{
	return memset_dev(d, us, 2, N, s, 1);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr d, unsigned int ui, size_t N, CUstream s)
{
	return memset_dev(d, ui, 4, N, s, 1);
}

/* ---- host memory ---------------------------------------------------------------------- */

/* Page-locked memory of ours at pinned offset @off (@size bytes) given back:
 * the pool's unregistered on the host and freed; a segment, which registered
 * itself, parked or unmapped (pinseg.c). */
static void pinned_release(uint64_t off, uint64_t size)
{
	struct vc_cu_req_host_register rq = {.off = off, .size = size};
	struct vc_cu_prefix none;

	if (off >= VC_CU_PINSEG_OFF0) {
		vc_cu_pinned_free(off, size); /* in place (pinguest.c) or a segment (pinseg.c) */
		return;
	}
	vc_cu_call(VC_CU_vcHostUnregister, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
	vc_cu_pinned_free(off, size);
}

/*
 * Page-locked host memory comes from the pinned pool of the shared region
 * (pinned.c): the host registers it with the driver, copies from and to it are
 * DMA, and it is mapped (a device address). Beyond the pool it is memory of
 * its own, registered the same way: in a VM this process's memory pinned in
 * place (pinguest.c), host-locally a segment (pinseg.c). Where neither can
 * be, it is ordinary memory, copied through the staging arena. Memory the
 * program registers (cuMemHostRegister) is tracked for attributes and flags;
 * in a VM its pages are pinned where they are (register_in_place()), else,
 * where the pool or a segment has room, they move there (register_alias()),
 * so that it is page-locked and mapped as natively; else it stays where it
 * is, and its copies are staged too.
 */
CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	struct vc_cu_req_host_register rq = {.size = (bytesize + 4095) & ~(size_t)4095, .flags = Flags};
	struct vc_cu_rep_host_register rp = {0};
	CUresult rc;
	void *p;

	if (vc_cu_capture_unsafe())
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	p = vc_cu_pinned_alloc(rq.size, &rq.off);
	/* From the pinned pool: registered (and mapped) on the host. */
	if (p && (rc = vc_cu_call(VC_CU_vcHostRegister, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0))) {
		vc_cu_pinned_free(rq.off, rq.size);
		return rc;
	}
	/* Beyond the pool, memory of its own, registered: in a VM pinned in
	 * place (pinguest.c), host-locally a segment (pinseg.c); past the
	 * bounds that is CUDA_ERROR_OUT_OF_MEMORY, as natively. */
	if (!p && (rc = vc_cu_pinguest_alloc(rq.size, &p, &rq.off, &rp.devptr)) != CUDA_SUCCESS &&
	    rc != CUDA_ERROR_NOT_SUPPORTED && rc != CUDA_ERROR_INVALID_VALUE)
		return rc;
	if (!p && (rc = vc_cu_pinseg_get(rq.size, NULL, &p, &rq.off, &rp.devptr)) != CUDA_SUCCESS &&
	    rc != CUDA_ERROR_NOT_SUPPORTED)
		return rc;
	if (p) {
		if (track_range((uint64_t)(uintptr_t)p, bytesize, K_HOST, Flags, 1, 1, rp.devptr, rq.off)) {
			pinned_release(rq.off, rq.size);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		*pp = p;
		return CUDA_SUCCESS;
	}
	/* No pool, or it is full: ordinary memory, copied through the arena. */
	if (Flags & CU_MEMHOSTALLOC_DEVICEMAP)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = aligned_alloc(4096, (bytesize + 4095) & ~(size_t)4095);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (track((uint64_t)(uintptr_t)p, bytesize, K_HOST, Flags, 1)) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pp = p;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
	struct range r;

	if (vc_cu_capture_unsafe())
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (!p)
		return CUDA_SUCCESS; /* as natively */
	if (untrack((uint64_t)(uintptr_t)p, K_HOST, &r))
		return CUDA_ERROR_INVALID_VALUE;
	if (!r.owned) { /* registered, not ours to free */
		track_range(r.base, r.size, K_HOST, r.flags, 0, r.pinned, r.devptr, r.pool_off);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (r.pinned) {
		pinned_release(r.pool_off, (r.size + 4095) & ~(uint64_t)4095);
		return CUDA_SUCCESS;
	}
	free(p);
	return CUDA_SUCCESS;
}

/* The whole pages holding [@base, @base + @size): from *@lo, *@len bytes. */
static void page_span(uint64_t base, uint64_t size, uint64_t *lo, uint64_t *len)
{
	*lo = base & ~(uint64_t)4095;
	*len = ((base + size + 4095) & ~(uint64_t)4095) - *lo;
}

/* Whether host memory of ours on pinned-pool pages touches the pages
 * [@lo, @lo + @len). Ranges do not overlap and @lo is page-aligned, so of
 * those starting below @lo only the last one can reach into it. */
static int pinned_pages_overlap(uint64_t lo, uint64_t len)
{
	int hit = 0;
	size_t i;

	pthread_mutex_lock(&g_mu);
	i = find_index(lo);
	for (i = i ? i - 1 : 0; i < g_n && g_r[i].base < lo + len && !hit; i++) {
		const struct range *r = &g_r[i];
		uint64_t a, n;

		page_span(r->base, r->size, &a, &n);
		hit = r->kind == K_HOST && r->pinned && a < lo + len && lo < a + n;
	}
	pthread_mutex_unlock(&g_mu);
	return hit;
}

/*
 * Copy whole pages of the program's memory, the bytes around a registered
 * range included: those are the program's (heap metadata, neighbours), and
 * AddressSanitizer rightly calls reading them a fault of this library, so
 * under it the copy is a plain uninstrumented loop (the barrier keeps the
 * compiler from turning it back into a memcpy call).
 */
#ifdef VC_ASAN
__attribute__((no_sanitize_address)) static void copy_pages(void *dst, const void *src, uint64_t len)
{
	uint64_t *d = dst;
	const uint64_t *s = src;

	for (uint64_t i = 0; i < len / 8; i++) {
		d[i] = s[i];
		__asm__ volatile("" ::: "memory");
	}
}
#else
static void copy_pages(void *dst, const void *src, uint64_t len)
{
	memcpy(dst, src, len);
}
#endif

/* Put anonymous memory with the same bytes back at the pages [@lo, @lo + @len)
 * of a registration. Returns 0, or -errno (the pages then stay the pool's). */
static int unalias(uint64_t lo, uint64_t len)
{
	void *tmp;

	/* Gone already (the program unmapped it): nothing to copy back. */
	if (msync((void *)(uintptr_t)lo, len, MS_ASYNC) < 0)
		return errno == ENOMEM ? 0 : -errno;
	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -errno;
	copy_pages(tmp, (void *)(uintptr_t)lo, len);
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(uintptr_t)lo) == MAP_FAILED) {
		int e = errno;

		munmap(tmp, len);
		return -e;
	}
	return 0;
}

/*
 * Registered memory, page-locked as natively: the pages holding [p, p + size),
 * private anonymous read-write memory (the caller classified them: hostreg.c),
 * are copied into the pinned pool, and the pool's pages are mapped in their
 * place (same addresses, same bytes), so that the host registers them with
 * its driver like any pinned allocation: DMA copies and a device pointer.
 * Whole pages move, so the bytes around the range in its first and last page
 * move with it (same bytes, still where they were). Writes by other threads
 * to those pages while they move would be lost, as a program registering
 * memory it is writing to meanwhile would be wrong natively too. Returns
 * 1 when the memory moved, 0 when it cannot (no pool or no room in it, pages
 * shared with another registration, the host refused: past the VM's pinned
 * quota, say): it is then where it was, with its bytes, for the caller to
 * track only.
 */
static int register_alias(void *p, size_t bytesize, unsigned int Flags)
{
	struct vc_cu_req_host_register rq = {.flags = Flags};
	struct vc_cu_rep_host_register rp = {0};
	uint64_t lo, len;
	void *q, *aside;
	int seg;

	page_span((uint64_t)(uintptr_t)p, bytesize, &lo, &len);
	rq.size = len;
	if ((Flags & (CU_MEMHOSTREGISTER_READ_ONLY | CU_MEMHOSTREGISTER_IOMEMORY)) || pinned_pages_overlap(lo, len))
		return 0;
	q = vc_cu_pinned_alloc(len, &rq.off);
	if (q)
		copy_pages(q, (void *)(uintptr_t)lo, len);
	else if (vc_cu_pinseg_get(len, (void *)(uintptr_t)lo, &q, &rq.off, &rp.devptr) != CUDA_SUCCESS)
		return 0; /* beyond the pool, a segment filled with the pages, registered (pinseg.c) */
	seg = rq.off >= VC_CU_PINSEG_OFF0;
	/* The old pages set aside first, to be freed off the program's time
	 * (aside.c), or else freed as the new ones are mapped over them. */
	aside = vc_cu_aside_take((void *)(uintptr_t)lo, len);
	if (vc_cu_pinned_alias(rq.off, (void *)(uintptr_t)lo, len)) {
		/* Back where they were; were the kernel to refuse, their
		 * bytes are copied into the emptied range. */
		if (aside && vc_cu_aside_restore(aside, (void *)(uintptr_t)lo, len)) {
			copy_pages((void *)(uintptr_t)lo, aside, len);
			vc_cu_aside_drop(aside, len);
		}
		goto err_pool;
	}
	if (aside)
		vc_cu_aside_drop(aside, len);
	if (!seg && vc_cu_call(VC_CU_vcHostRegister, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0))
		goto err_alias;
	if (track_range((uint64_t)(uintptr_t)p, bytesize, K_HOST, Flags, 0, 1,
			rp.devptr + ((uint64_t)(uintptr_t)p - lo), rq.off + ((uint64_t)(uintptr_t)p - lo)))
		goto err_host;
	return 1;

err_host:
	if (!seg) {
		struct vc_cu_prefix none;

		vc_cu_call(VC_CU_vcHostUnregister, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
	}
err_alias:
	if (unalias(lo, len))
		return 0; /* the pages stay the pool's: valid memory, the pool smaller */
err_pool:
	vc_cu_pinned_free(rq.off, len); /* a segment: parked or unmapped */
	return 0;
}

/*
 * Registered memory in a VM, page-locked in place as natively: the pages
 * holding [p, p + size) pinned by the guest's kernel where they are and
 * mapped by the server from the guest's RAM (pinguest.c). Nothing moves or
 * is copied, so it serves any memory the kernel can pin, not only private
 * anonymous memory. Returns 1, or 0 when it cannot (not a VM, no shared RAM,
 * read-only or I/O registrations, pages shared with another registration):
 * the caller goes on as before.
 */
static int register_in_place(void *p, size_t bytesize, unsigned int Flags)
{
	uint64_t lo, len, off, devptr;

	page_span((uint64_t)(uintptr_t)p, bytesize, &lo, &len);
	if ((Flags & (CU_MEMHOSTREGISTER_READ_ONLY | CU_MEMHOSTREGISTER_IOMEMORY)) || pinned_pages_overlap(lo, len))
		return 0;
	if (vc_cu_pinguest_get((void *)(uintptr_t)lo, len, &off, &devptr) != CUDA_SUCCESS)
		return 0;
	if (track_range((uint64_t)(uintptr_t)p, bytesize, K_HOST, Flags, 0, 1, devptr + ((uint64_t)(uintptr_t)p - lo),
			off + ((uint64_t)(uintptr_t)p - lo))) {
		vc_cu_pinguest_put(off);
		return 0;
	}
	return 1;
}

/* Whether host memory of ours overlaps [@p, @p + @n) (no wrap: checked). */
static int host_overlap(uint64_t p, uint64_t n)
{
	int hit = 0;
	size_t i;

	pthread_mutex_lock(&g_mu);
	i = find_index(p);
	for (i = i ? i - 1 : 0; i < g_n && g_r[i].base < p + n && !hit; i++)
		hit = g_r[i].kind == K_HOST && g_r[i].base < p + n && p < g_r[i].base + g_r[i].size;
	pthread_mutex_unlock(&g_mu);
	return hit;
}

CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
	const unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
			       CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
	int movable;
	CUresult rc;

	if (!p || !bytesize || (Flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Wrap-around, unmapped, unreadable or (without READ_ONLY) read-only
	 * pages are refused before a byte is touched (hostreg.c). */
	if ((rc = vc_cu_host_classify(p, bytesize, Flags, &movable)))
		return rc;
	if (host_overlap((uint64_t)(uintptr_t)p, bytesize))
		return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	/* Physically contiguous PCI memory of a third-party device: there is
	 * none in a guest process (the driver says so to unprivileged users). */
	if (Flags & CU_MEMHOSTREGISTER_IOMEMORY)
		return CUDA_ERROR_NOT_PERMITTED;
	if (register_in_place(p, bytesize, Flags) || (movable && register_alias(p, bytesize, Flags)))
		return CUDA_SUCCESS;
	/* Staying where it is, it has no device address. */
	if (Flags & CU_MEMHOSTREGISTER_DEVICEMAP)
		return CUDA_ERROR_NOT_SUPPORTED;
	return track((uint64_t)(uintptr_t)p, bytesize, K_HOST, Flags, 0) ? CUDA_ERROR_OUT_OF_MEMORY
									: CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
	struct range r;

	if (untrack((uint64_t)(uintptr_t)p, K_HOST, &r)) {
		/* Inside a registered range but not its start: the driver's
		 * answer is an invalid value (cuda-python's tests check it). */
		if (!lookup((uint64_t)(uintptr_t)p, 1, &r) && r.kind == K_HOST)
			return CUDA_ERROR_INVALID_VALUE;
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	}
	if (r.owned) { /* cuMemHostAlloc memory is not unregistered */
		track_range(r.base, r.size, K_HOST, r.flags, 1, r.pinned, r.devptr, r.pool_off);
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	}
	if (r.pinned) {
		struct vc_cu_req_host_register rq;
		struct vc_cu_prefix none;
		uint64_t lo, len;

		page_span(r.base, r.size, &lo, &len);
		rq = (struct vc_cu_req_host_register){.off = r.pool_off - (r.base - lo), .size = len};
		/* Pinned in place: the pages stay where they always were. */
		if (vc_cu_pinguest_put(rq.off))
			return CUDA_SUCCESS;
		/* A segment's registration is pinseg.c's, given up as it is put. */
		if (rq.off < VC_CU_PINSEG_OFF0)
			vc_cu_call(VC_CU_vcHostUnregister, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
		/* Its pages become ordinary memory again; if they cannot, they
		 * stay the pool's (the memory stays valid, the pool smaller). */
		if (unalias(lo, len) == 0)
			vc_cu_pinned_free(rq.off, len); /* a segment: parked or unmapped */
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	struct range r;

	if (!pFlags || lookup((uint64_t)(uintptr_t)p, 1, &r) || r.kind != K_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	/* Pinned-pool memory is mapped whatever was asked, as page-locked
	 * memory is natively under unified addressing. */
	*pFlags = r.flags | (r.pinned ? CU_MEMHOSTALLOC_DEVICEMAP : 0);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
	struct range r;

	if (!pdptr || Flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (lookup((uint64_t)(uintptr_t)p, 1, &r) || r.kind != K_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	if (!r.pinned)
		return CUDA_ERROR_NOT_SUPPORTED; /* registered guest memory is not mapped on the host */
	*pdptr = r.devptr + ((uint64_t)(uintptr_t)p - r.base);
	return CUDA_SUCCESS;
}

/* ---- pointer attributes ----------------------------------------------------------------- */

static CUresult attribute(void *data, CUpointer_attribute a, CUdeviceptr ptr, int known, const struct range *r)
{
	uint64_t base = known ? r->base : 0, size = known ? r->size : 0;

	switch (a) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned *)data = !known ? 0 : r->kind == K_DEVICE ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = known ? (CUcontext)(uintptr_t)r->ctx : NULL;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = !known ? 0 : r->kind == K_DEVICE ? ptr
				     : r->pinned ? r->devptr + (ptr - r->base) : 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		*(void **)data = known && (r->kind == K_HOST || r->managed) ? (void *)(uintptr_t)ptr : NULL;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		/* The device the memory was allocated on (or a mapping's
		 * memory is of), not device 0: PyTorch places a tensor made
		 * from a bare pointer by it. */
		*(int *)data = !known ? -2 : r->dev >= 0 ? r->dev : vc_cu_ctx_ordinal(r->ctx);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(int *)data = known && r->managed;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(int *)data = known && (r->kind == K_DEVICE || r->pinned);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = base;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = size;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = base;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute_, CUdeviceptr ptr)
{
	struct range r;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Natively, a pointer the driver does not know is an invalid value here. */
	if (lookup(ptr, 1, &r))
		return CUDA_ERROR_INVALID_VALUE;
	return attribute(data, attribute_, ptr, 1, &r);
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
					 void **data, CUdeviceptr ptr)
{
	struct range r;
	int known;

	if (!attributes || !data)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Natively this succeeds for unknown (pageable) pointers, with zeros. */
	known = !lookup(ptr, 1, &r);
	for (unsigned i = 0; i < numAttributes; i++)
		if (data[i] && attribute(data[i], attributes[i], ptr, known, &r) == CUDA_ERROR_NOT_SUPPORTED)
			memset(data[i], 0, sizeof(int));
	return CUDA_SUCCESS;
}
