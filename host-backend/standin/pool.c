/* SPDX-License-Identifier: MIT */
/*
 * pool.c - the CI stand-in's memory pools. A pool made for POSIX descriptors
 * exports a memfd named for it; importing one makes a pool of its own (the
 * stand-in's pool allocations are its worker's RAM, never shared).
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "standin/standin_priv.h"

/* ---- memory pools: attributes are kept, allocations come from device memory ---- */

static struct obj g_default_pool = {.tag = T_POOL};

static CUresult s_pool_create(CUmemoryPool *p, const CUmemPoolProps *props)
{
	CUresult rc;

	if (!p || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !vc_si_dev_ok(props->location.id))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_si_make(T_POOL, (void **)p)))
		return rc;
	((struct obj *)*p)->pool_handles = (unsigned)props->handleTypes;
	return CUDA_SUCCESS;
}

static const char g_pool_name[] = "vcuda-standin-pool";

static CUresult s_pool_export(void *out, CUmemoryPool p, CUmemAllocationHandleType t, unsigned long long flags)
{
	int fd;

	if (!out || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_is(p, T_POOL))
		return CUDA_ERROR_INVALID_HANDLE;
	if (t != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!(((struct obj *)p)->pool_handles & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		return CUDA_ERROR_INVALID_VALUE; /* not made to be exported so */
	if ((fd = memfd_create(g_pool_name, MFD_CLOEXEC)) < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(out, &fd, sizeof(fd));
	return CUDA_SUCCESS;
}

static CUresult s_pool_import(CUmemoryPool *p, void *os, CUmemAllocationHandleType t, unsigned long long flags)
{
	CUresult rc;

	if (!p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (t != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!vc_si_memfd_named((int)(intptr_t)os, g_pool_name))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_si_make(T_POOL, (void **)p)))
		return rc;
	((struct obj *)*p)->pool_handles = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	return CUDA_SUCCESS;
}

static CUresult s_pool_destroy(CUmemoryPool p)
{
	if (!vc_si_is(p, T_POOL) || (struct obj *)p == &g_default_pool)
		return vc_si_is(p, T_POOL) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
	vc_si_del_obj(p);
	return CUDA_SUCCESS;
}

static CUresult s_default_pool(CUmemoryPool *p, CUdevice d)
{
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	*p = (CUmemoryPool)&g_default_pool;
	return CUDA_SUCCESS;
}

static CUresult s_pool_attr(CUmemoryPool p, CUmemPool_attribute a, void *v, int set)
{
	struct obj *o = (struct obj *)p;
	cuuint64_t zero = 0;

	if (!vc_si_is(p, T_POOL))
		return CUDA_ERROR_INVALID_HANDLE;
	switch (a) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		if (set)
			memcpy(&o->pool_int[a - 1], v, sizeof(int));
		else
			memcpy(v, &o->pool_int[a - 1], sizeof(int));
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		if (set)
			memcpy(&o->pool_threshold, v, sizeof(cuuint64_t));
		else
			memcpy(v, &o->pool_threshold, sizeof(cuuint64_t));
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (set)
			return memcmp(v, &zero, sizeof(zero)) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
		memset(v, 0, sizeof(cuuint64_t));
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		if (set)
			return CUDA_ERROR_INVALID_VALUE;
		memset(v, 0, sizeof(cuuint64_t));
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult s_pool_set(CUmemoryPool p, CUmemPool_attribute a, void *v)
{
	return s_pool_attr(p, a, v, 1);
}

static CUresult s_pool_get(CUmemoryPool p, CUmemPool_attribute a, void *v)
{
	return s_pool_attr(p, a, v, 0);
}

static CUresult s_alloc_pool(CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s)
{
	if (!vc_si_is(p, T_POOL))
		return CUDA_ERROR_INVALID_HANDLE;
	return vc_si_alloc_async(d, n, s);
}

void vc_si_fill_pool(struct vc_cuda_driver *d)
{
	d->cuMemPoolCreate = s_pool_create;
	d->cuMemPoolDestroy = s_pool_destroy;
	d->cuMemPoolSetAttribute = s_pool_set;
	d->cuMemPoolGetAttribute = s_pool_get;
	d->cuDeviceGetDefaultMemPool = s_default_pool;
	d->cuDeviceGetMemPool = s_default_pool;
	d->cuMemAllocFromPoolAsync = s_alloc_pool;
	d->cuMemPoolExportToShareableHandle = s_pool_export;
	d->cuMemPoolImportFromShareableHandle = s_pool_import;
}
