/* SPDX-License-Identifier: MIT */
/*
 * vmm.c - virtual memory management, remoted to the host's driver: address
 * ranges, physical allocations, mappings, access and allocation handles.
 * Handles are the session's ids (never the driver's values). The guest
 * records its mappings (vmm.h), so that cuMemcpy and pointer attributes see
 * them as device memory, and caches granularity answers (JAX and PyTorch
 * ask often; the answer for given properties never changes).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vc_cuda_vmm.h"
#include "vc_cu_guest.h"
#include "vmm.h"

/* ---- the record of device ranges ------------------------------------------------- */

struct vrange {
	uint64_t va, size;
	int dev; /* the device whose memory it is; -1: not known */
};

static struct vrange *g_m; /* sorted by va, non-overlapping */
static size_t g_n, g_cap;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

/* First range with va > @p. */
static size_t after(uint64_t p)
{
	size_t lo = 0, hi = g_n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g_m[mid].va <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int vc_cu_vmm_find(uint64_t p, uint64_t n, uint64_t *base, uint64_t *size, int *dev)
{
	int rc = -1;
	size_t i;

	pthread_mutex_lock(&g_mu);
	i = after(p);
	if (i && p - g_m[i - 1].va < g_m[i - 1].size) {
		uint64_t at = g_m[i - 1].va + g_m[i - 1].size;

		*base = g_m[i - 1].va;
		*size = g_m[i - 1].size;
		*dev = g_m[i - 1].dev;
		/* A range may span mappings that follow each other. */
		while (p + n > at && i < g_n && g_m[i].va == at)
			at += g_m[i++].size;
		rc = p + n <= at ? 0 : -1;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

int vc_cu_vmm_track(uint64_t va, uint64_t size, int dev)
{
	size_t i;

	pthread_mutex_lock(&g_mu);
	if (g_n == g_cap) {
		size_t cap = g_cap ? g_cap * 2 : 64;
		struct vrange *m = realloc(g_m, cap * sizeof(*m));

		if (!m) {
			pthread_mutex_unlock(&g_mu);
			return -1;
		}
		g_m = m;
		g_cap = cap;
	}
	i = after(va);
	memmove(&g_m[i + 1], &g_m[i], (g_n - i) * sizeof(*g_m));
	g_m[i] = (struct vrange){.va = va, .size = size ? size : 1, .dev = dev};
	g_n++;
	pthread_mutex_unlock(&g_mu);
	return 0;
}

void vc_cu_vmm_untrack(uint64_t va, uint64_t size)
{
	size_t a, b;

	pthread_mutex_lock(&g_mu);
	a = after(va);
	if (a && g_m[a - 1].va == va)
		a--;
	for (b = a; b < g_n && g_m[b].va - va < size; b++)
		;
	memmove(&g_m[a], &g_m[b], (g_n - b) * sizeof(*g_m));
	g_n -= b - a;
	pthread_mutex_unlock(&g_mu);
}

/* ---- the driver API ---------------------------------------------------------------- */

static CUresult call(uint32_t op, struct vc_cu_req_vmm *rq, const void *data, size_t dlen, uint64_t *value)
{
	struct vc_cu_rep_vmm rp = {0};
	CUresult rc = vc_cu_call(op, rq, sizeof(*rq), data, dlen, &rp, value ? sizeof(rp) : 0, NULL, 0, 0);

	if (rc == CUDA_SUCCESS && value)
		*value = rp.value;
	return rc;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
				     unsigned long long flags)
{
	struct vc_cu_req_vmm rq = {.size = size, .offset = alignment, .ptr = addr, .flags = flags};
	uint64_t v;
	CUresult rc;

	if (!ptr)
		return CUDA_ERROR_INVALID_VALUE;
	rc = call(VC_CU_cuMemAddressReserve, &rq, NULL, 0, &v);
	if (rc == CUDA_SUCCESS)
		*ptr = (CUdeviceptr)v;
	return rc;
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct vc_cu_req_vmm rq = {.ptr = ptr, .size = size};
	CUresult rc = call(VC_CU_cuMemAddressFree, &rq, NULL, 0, NULL);

	if (rc == CUDA_SUCCESS)
		vc_cu_vmm_untrack(ptr, size);
	return rc;
}

/* The properties as given; a Windows metadata pointer is refused as the host would. */
static CUresult props(struct vc_cu_req_vmm_create *rq, const CUmemAllocationProp *prop)
{
	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(rq->prop, prop, sizeof(rq->prop));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
			     unsigned long long flags)
{
	struct vc_cu_req_vmm_create rq = {.size = size, .flags = flags};
	struct vc_cu_rep_vmm rp;
	CUresult rc;

	if (!handle || (rc = props(&rq, prop)))
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(VC_CU_cuMemCreate, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*handle = rp.value;
	return rc;
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct vc_cu_req_vmm rq = {.handle = handle};

	return call(VC_CU_cuMemRelease, &rq, NULL, 0, NULL);
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
			  unsigned long long flags)
{
	struct vc_cu_req_vmm rq = {.ptr = ptr, .size = size, .offset = offset, .handle = handle, .flags = flags};
	uint64_t dev = UINT64_MAX; /* the device whose memory it is, as the host says */
	CUresult rc = call(VC_CU_cuMemMap, &rq, NULL, 0, &dev);

	if (rc == CUDA_SUCCESS &&
	    vc_cu_vmm_track(ptr, size, dev < (uint64_t)vc_cu_state()->device_count ? (int)dev : -1)) {
		/* Mapped but unknown to this library: undo rather than mislead. */
		struct vc_cu_req_vmm un = {.ptr = ptr, .size = size};

		call(VC_CU_cuMemUnmap, &un, NULL, 0, NULL);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return rc;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct vc_cu_req_vmm rq = {.ptr = ptr, .size = size};
	CUresult rc = call(VC_CU_cuMemUnmap, &rq, NULL, 0, NULL);

	if (rc == CUDA_SUCCESS)
		vc_cu_vmm_untrack(ptr, size);
	return rc;
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	struct vc_cu_req_vmm rq = {.ptr = ptr, .size = size, .count = (uint32_t)count};

	/* More descriptors than devices is no use; the wire carries VC_CU_ACCESS_MAX. */
	if (!desc || !count || count > VC_CU_ACCESS_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	return call(VC_CU_cuMemSetAccess, &rq, desc, count * sizeof(*desc), NULL);
}

/* ---- granularity, cached ------------------------------------------------------------- */

#define GRAN_CACHE 16
static struct {
	uint8_t key[sizeof(CUmemAllocationProp) + sizeof(int)];
	size_t value;
	int used;
} g_gran[GRAN_CACHE];
static unsigned g_gran_next;

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
					       CUmemAllocationGranularity_flags option)
{
	struct vc_cu_req_vmm_create rq = {.option = (int32_t)option};
	struct vc_cu_rep_vmm rp;
	uint8_t key[sizeof(g_gran[0].key)];
	CUresult rc;

	if (!granularity || (rc = props(&rq, prop)))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(key, rq.prop, sizeof(rq.prop));
	memcpy(key + sizeof(rq.prop), &rq.option, sizeof(int));
	pthread_mutex_lock(&g_mu);
	for (unsigned i = 0; i < GRAN_CACHE; i++)
		if (g_gran[i].used && !memcmp(g_gran[i].key, key, sizeof(key))) {
			*granularity = g_gran[i].value;
			pthread_mutex_unlock(&g_mu);
			return CUDA_SUCCESS;
		}
	pthread_mutex_unlock(&g_mu);
	rc = vc_cu_call(VC_CU_cuMemGetAllocationGranularity, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	*granularity = (size_t)rp.value;
	pthread_mutex_lock(&g_mu);
	unsigned k = g_gran_next++ % GRAN_CACHE;

	memcpy(g_gran[k].key, key, sizeof(key));
	g_gran[k].value = (size_t)rp.value;
	g_gran[k].used = 1;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	struct vc_cu_req_vmm rq = {.ptr = (uint64_t)(uintptr_t)addr};
	uint64_t v;
	CUresult rc;

	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	rc = call(VC_CU_cuMemRetainAllocationHandle, &rq, NULL, 0, &v);
	if (rc == CUDA_SUCCESS)
		*handle = v;
	return rc;
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
							 CUmemGenericAllocationHandle handle)
{
	struct vc_cu_req_vmm rq = {.handle = handle};
	struct vc_cu_rep_vmm_prop rp;
	CUresult rc;

	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(VC_CU_cuMemGetAllocationPropertiesFromHandle, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp),
			NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		memcpy(prop, rp.prop, sizeof(*prop));
	return rc;
}

/*
 * Refused: a dma-buf descriptor for another device (an RDMA NIC) would be a
 * descriptor of the host's worker, which no process in the VM can use; the
 * driver's answer where dma-buf is not available.
 */
CUresult CUDAAPI cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
					       CUmemRangeHandleType handleType, unsigned long long flags)
{
	(void)dptr;
	(void)size;
	(void)flags;
	if (!handle || handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	return CUDA_ERROR_NOT_SUPPORTED;
}
