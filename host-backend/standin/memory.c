/* SPDX-License-Identifier: MIT */
/*
 * memory.c - the CI stand-in's device memory, host RAM behind synthetic
 * addresses (standin/mem.h): allocations, frees, queries, copies, memsets
 * and registered host memory.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "standin/standin_priv.h"

/* ---- memory ------------------------------------------------------------------ */

CUresult vc_si_alloc(CUdeviceptr *d, size_t n)
{
	uint64_t va;
	int rc;

	if (!t_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&g_mu);
	rc = vc_smem_alloc(&g_mem, n, t_ctx, &va);
	pthread_mutex_unlock(&g_mu);
	if (rc)
		return rc == -EINVAL ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
	*d = va;
	return CUDA_SUCCESS;
}

static CUresult s_alloc_pitch(CUdeviceptr *d, size_t *pitch, size_t w, size_t h, unsigned e)
{
	size_t p = (w + 511) & ~(size_t)511;

	if (!w || !h || (e != 4 && e != 8 && e != 16) || h > SIZE_MAX / p)
		return CUDA_ERROR_INVALID_VALUE;
	*pitch = p;
	return vc_si_alloc(d, p * h);
}

CUresult vc_si_alloc_async(CUdeviceptr *d, size_t n, CUstream s)
{
	return vc_si_stream_ok(s) ? vc_si_alloc(d, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_free(CUdeviceptr d)
{
	int rc;

	pthread_mutex_lock(&g_mu);
	rc = vc_smem_free(&g_mem, d);
	pthread_mutex_unlock(&g_mu);
	return rc ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult s_free_async(CUdeviceptr d, CUstream s)
{
	return vc_si_stream_ok(s) ? s_free(d) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_info(size_t *freeb, size_t *total)
{
	pthread_mutex_lock(&g_mu);
	*freeb = g_limit - g_mem.in_use;
	*total = g_limit;
	pthread_mutex_unlock(&g_mu);
	return vc_si_need_ctx();
}

static uint64_t g_ptr_queries; /* cuPointerGetAttributes calls: a relaxed atomic count */

uint64_t vc_cuda_driver_standin_pointer_queries(void)
{
	return __atomic_load_n(&g_ptr_queries, __ATOMIC_RELAXED);
}

static CUresult s_ptr_attrs(unsigned n, CUpointer_attribute *a, void **data, CUdeviceptr p)
{
	struct vc_smem_alloc *al;

	__atomic_fetch_add(&g_ptr_queries, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&g_mu);
	al = vc_smem_find(&g_mem, p, 1);
	for (unsigned i = 0; i < n; i++) {
		switch (a[i]) {
		case CU_POINTER_ATTRIBUTE_CONTEXT:
			*(CUcontext *)data[i] = al ? (CUcontext)al->owner : NULL;
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
			*(CUdeviceptr *)data[i] = al ? al->base : 0;
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
			*(size_t *)data[i] = al ? al->size : 0;
			break;
		case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
			*(unsigned *)data[i] = al ? CU_MEMORYTYPE_DEVICE : 0;
			break;
		case CU_POINTER_ATTRIBUTE_IS_MANAGED:
			*(int *)data[i] = al && al->managed;
			break;
		default:
			memset(data[i], 0, sizeof(int));
		}
	}
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	struct vc_smem_alloc *al;
	CUresult rc = CUDA_ERROR_NOT_FOUND;

	pthread_mutex_lock(&g_mu);
	al = vc_smem_find(&g_mem, p, 1);
	if (al) {
		if (base)
			*base = al->base;
		if (size)
			*size = al->size;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* Copies hold the lock while they move bytes: another thread's free must not
 * pull the memory away mid-copy. A copy of zero bytes succeeds whatever its
 * pointers, as the driver's did on the GPU machine (tests/gpu drv_memset). */
static CUresult copy(void *dst, uint64_t ddev, const void *src, uint64_t sdev, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	if (!n)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&g_mu);
	if (!d)
		d = vc_smem_ptr(&g_mem, ddev, n);
	if (!s)
		s = vc_smem_ptr(&g_mem, sdev, n);
	if (d && s) {
		memmove(d, s, n);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* Blocking copies are synchronisation points; asynchronous ones are not. A
 * blocking copy runs on the legacy stream: after the memory operations
 * queued there (a wait holds it up, as natively). */
static CUresult blocking(void *hd, CUdeviceptr dd, const void *hs, CUdeviceptr ds, size_t n)
{
	if (vc_si_need_ctx() == CUDA_SUCCESS)
		vc_si_memops_drain(NULL);
	return vc_si_synced(copy(hd, dd, hs, ds, n));
}

CUresult vc_si_htod(CUdeviceptr d, const void *s, size_t n)
{
	return blocking(NULL, d, s, 0, n);
}

CUresult vc_si_dtoh(void *d, CUdeviceptr s, size_t n)
{
	return blocking(d, 0, NULL, s, n);
}

CUresult vc_si_dtod(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	return blocking(NULL, d, NULL, s, n);
}

static CUresult s_htod_a(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
	return vc_si_stream_ok(st) ? copy(NULL, d, s, 0, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_dtoh_a(void *d, CUdeviceptr s, size_t n, CUstream st)
{
	return vc_si_stream_ok(st) ? copy(d, 0, NULL, s, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_dtod_a(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	return vc_si_stream_ok(st) ? copy(NULL, d, NULL, s, n) : CUDA_ERROR_INVALID_HANDLE;
}

/* 2D copies between device ranges, the only kind the executor asks for
 * (host rows are staged by the guest); row by row. */
static CUresult copy2d(const CUDA_MEMCPY2D *c)
{
	CUresult rc = CUDA_SUCCESS;

	if (c && (c->srcMemoryType != CU_MEMORYTYPE_DEVICE || c->dstMemoryType != CU_MEMORYTYPE_DEVICE ||
		  c->srcXInBytes || c->srcY || c->dstXInBytes || c->dstY))
		return vc_si_copy2d_any(c); /* arrays, host sides, offsets (array.c) */
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	if (c->srcPitch < c->WidthInBytes || c->dstPitch < c->WidthInBytes)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t y = 0; y < c->Height && rc == CUDA_SUCCESS; y++)
		rc = copy(NULL, c->dstDevice + y * c->dstPitch, NULL, c->srcDevice + y * c->srcPitch,
			  c->WidthInBytes);
	return rc;
}

static CUresult s_copy2d(const CUDA_MEMCPY2D *c)
{
	return vc_si_synced(copy2d(c));
}

static CUresult s_copy2d_a(const CUDA_MEMCPY2D *c, CUstream st)
{
	return vc_si_stream_ok(st) ? copy2d(c) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fill(CUdeviceptr d, uint32_t v, unsigned elem, size_t n)
{
	uint8_t *p;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	if (n > SIZE_MAX / elem)
		return rc;
	if (!n)
		return CUDA_SUCCESS; /* as copy() */
	pthread_mutex_lock(&g_mu);
	p = vc_smem_ptr(&g_mem, d, n * elem);
	if (p) {
		for (size_t i = 0; i < n; i++)
			memcpy(p + i * elem, &v, elem);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult s_set8(CUdeviceptr d, unsigned char v, size_t n)
{
	return fill(d, v, 1, n);
}

static CUresult s_set16(CUdeviceptr d, unsigned short v, size_t n)
{
	return fill(d, v, 2, n);
}

static CUresult s_set32(CUdeviceptr d, unsigned int v, size_t n)
{
	return fill(d, v, 4, n);
}

static CUresult s_set8a(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return vc_si_stream_ok(s) ? fill(d, v, 1, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_set16a(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
	return vc_si_stream_ok(s) ? fill(d, v, 2, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_set32a(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	return vc_si_stream_ok(s) ? fill(d, v, 4, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fill2d(CUdeviceptr d, size_t pitch, uint32_t v, unsigned elem, size_t w, size_t h)
{
	for (size_t r = 0; r < h; r++) {
		CUresult rc = fill(d + r * pitch, v, elem, w);

		if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

static CUresult s_2d8(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h)
{
	return fill2d(d, p, v, 1, w, h);
}

static CUresult s_2d16(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h)
{
	return fill2d(d, p, v, 2, w, h);
}

static CUresult s_2d32(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h)
{
	return fill2d(d, p, v, 4, w, h);
}

static CUresult s_2d8a(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s)
{
	return vc_si_stream_ok(s) ? fill2d(d, p, v, 1, w, h) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_2d16a(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h, CUstream s)
{
	return vc_si_stream_ok(s) ? fill2d(d, p, v, 2, w, h) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_2d32a(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h, CUstream s)
{
	return vc_si_stream_ok(s) ? fill2d(d, p, v, 4, w, h) : CUDA_ERROR_INVALID_HANDLE;
}

void vc_si_fill_memory(struct vc_cuda_driver *d)
{
	d->cuMemAlloc_v2 = vc_si_alloc;
	d->cuMemAllocPitch_v2 = s_alloc_pitch;
	d->cuMemAllocAsync = vc_si_alloc_async;
	d->cuMemFree_v2 = s_free;
	d->cuMemFreeAsync = s_free_async;
	d->cuMemGetInfo_v2 = s_info;
	d->cuMemGetAddressRange_v2 = s_range;
	d->cuPointerGetAttributes = s_ptr_attrs;
	d->cuMemcpyHtoD_v2 = vc_si_htod;
	d->cuMemcpyDtoH_v2 = vc_si_dtoh;
	d->cuMemcpyDtoD_v2 = vc_si_dtod;
	d->cuMemcpyHtoDAsync_v2 = s_htod_a;
	d->cuMemcpyDtoHAsync_v2 = s_dtoh_a;
	d->cuMemcpyDtoDAsync_v2 = s_dtod_a;
	d->cuMemcpy2DUnaligned_v2 = s_copy2d;
	d->cuMemcpy2DAsync_v2 = s_copy2d_a;
	d->cuMemsetD8_v2 = s_set8;
	d->cuMemsetD16_v2 = s_set16;
	d->cuMemsetD32_v2 = s_set32;
	d->cuMemsetD8Async = s_set8a;
	d->cuMemsetD16Async = s_set16a;
	d->cuMemsetD32Async = s_set32a;
	d->cuMemsetD2D8_v2 = s_2d8;
	d->cuMemsetD2D16_v2 = s_2d16;
	d->cuMemsetD2D32_v2 = s_2d32;
	d->cuMemsetD2D8Async = s_2d8a;
	d->cuMemsetD2D16Async = s_2d16a;
	d->cuMemsetD2D32Async = s_2d32a;
}
