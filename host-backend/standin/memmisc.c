/* SPDX-License-Identifier: MIT */
/*
 * memmisc.c - the CI stand-in's sparse array mapping, batched
 * decompression, pools of a location and cuPointerSetAttribute.
 *
 * Test doubles with the driver's shapes: a map entry's array must be a
 * sparse or deferred-mapping array of the stand-in (asked of its own array
 * entries), a map's memory an allocation handle of its own (cuMemCreate);
 * nothing is really mapped (the stand-in's sparse and deferred-mapping
 * arrays hold no bytes).
 * Decompression answers CUDA_ERROR_NOT_SUPPORTED after its argument checks,
 * as on a GPU without a decompression engine (the recorded H200 reports no
 * algorithm). Pools: the device's current pool is kept here, so
 * cuDeviceGetMemPool and cuMemGetMemPool see cuDeviceSetMemPool and
 * cuMemSetMemPool (this file's fill runs after pool.c's).
 */
#include <stdint.h>
#include <string.h>

#include "standin/standin_priv.h"

static const struct vc_cuda_driver *g_d; /* the table, for the array and pool entries it has */
static CUmemoryPool g_current;           /* device 0's current pool (pinned); NULL: the default */

/* ---- sparse array mapping ------------------------------------------------------- */

static CUresult map_entry_ok(const CUarrayMapInfo *e)
{
	CUDA_ARRAY_SPARSE_PROPERTIES sp;
	CUDA_ARRAY_MEMORY_REQUIREMENTS r;
	CUmemAllocationProp prop;
	int mip = e->resourceType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;

	if (e->resourceType != CU_RESOURCE_TYPE_ARRAY && !mip)
		return CUDA_ERROR_INVALID_VALUE;
	/* Sparse (tile properties) or deferred mapping (requirements). */
	if ((mip ? g_d->cuMipmappedArrayGetSparseProperties(&sp, e->resource.mipmap)
		 : g_d->cuArrayGetSparseProperties(&sp, e->resource.array)) != CUDA_SUCCESS &&
	    (mip ? g_d->cuMipmappedArrayGetMemoryRequirements(&r, e->resource.mipmap, 0)
		 : g_d->cuArrayGetMemoryRequirements(&r, e->resource.array, 0)) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_VALUE;
	if (e->subresourceType != CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL &&
	    e->subresourceType != CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL)
		return CUDA_ERROR_INVALID_VALUE;
	if (e->flags || e->reserved[0] || e->reserved[1] || e->deviceBitMask != 1)
		return CUDA_ERROR_INVALID_VALUE;
	switch (e->memOperationType) {
	case CU_MEM_OPERATION_TYPE_UNMAP:
		return e->memHandle.memHandle ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	case CU_MEM_OPERATION_TYPE_MAP:
		if (e->memHandleType != CU_MEM_HANDLE_TYPE_GENERIC ||
		    g_d->cuMemGetAllocationPropertiesFromHandle(&prop, e->memHandle.memHandle) != CUDA_SUCCESS)
			return CUDA_ERROR_INVALID_VALUE;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult s_map_array(CUarrayMapInfo *list, unsigned count, CUstream s)
{
	CUresult rc;

	if (!list || !count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	for (unsigned i = 0; i < count; i++)
		if ((rc = map_entry_ok(&list[i])))
			return rc;
	return CUDA_SUCCESS;
}

/* ---- batched decompression --------------------------------------------------------- */

static CUresult s_decompress(CUmemDecompressParams *p, size_t count, unsigned flags, size_t *idx, CUstream s)
{
	if (idx)
		*idx = SIZE_MAX;
	if (!p || !count || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- pools of a location ------------------------------------------------------------ */

/* Device 0's pinned pools are the stand-in's only ones. */
static CUresult loc_ok(const CUmemLocation *l, CUmemAllocationType t)
{
	if (!l || t != CU_MEM_ALLOCATION_TYPE_PINNED || l->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	return l->id == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult current(CUmemoryPool *p)
{
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&g_mu);
	/* A destroyed current pool leaves the default current, as natively. */
	if (g_current && vc_si_is(g_current, T_POOL))
		*p = g_current;
	else
		rc = g_d->cuDeviceGetDefaultMemPool(p, 0);
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult s_dev_get_pool(CUmemoryPool *p, CUdevice d)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	return current(p);
}

static CUresult s_dev_set_pool(CUdevice d, CUmemoryPool p)
{
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!vc_si_is(p, T_POOL))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	g_current = p;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_default_pool(CUmemoryPool *p, CUmemLocation *l, CUmemAllocationType t)
{
	CUresult rc;

	if (!p || (rc = loc_ok(l, t)))
		return p ? rc : CUDA_ERROR_INVALID_VALUE;
	return g_d->cuDeviceGetDefaultMemPool(p, 0);
}

static CUresult s_get_pool(CUmemoryPool *p, CUmemLocation *l, CUmemAllocationType t)
{
	CUresult rc;

	if (!p || (rc = loc_ok(l, t)))
		return p ? rc : CUDA_ERROR_INVALID_VALUE;
	return current(p);
}

static CUresult s_set_pool(CUmemLocation *l, CUmemAllocationType t, CUmemoryPool p)
{
	CUresult rc;

	if ((rc = loc_ok(l, t)))
		return rc;
	return s_dev_set_pool(0, p);
}

/* ---- pointer attributes ---------------------------------------------------------------- */

static CUresult s_ptr_set(const void *v, CUpointer_attribute a, CUdeviceptr p)
{
	int found;

	if (!v || a != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	found = vc_smem_find(&g_mem, p, 1) != NULL;
	pthread_mutex_unlock(&g_mu);
	return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

void vc_si_fill_memmisc(struct vc_cuda_driver *d)
{
	g_d = d;
	d->cuMemMapArrayAsync = s_map_array;
	d->cuMemBatchDecompressAsync = s_decompress;
	d->cuMemGetDefaultMemPool = s_default_pool;
	d->cuMemGetMemPool = s_get_pool;
	d->cuMemSetMemPool = s_set_pool;
	d->cuDeviceGetMemPool = s_dev_get_pool; /* replaces pool.c's: the current pool lives here */
	d->cuDeviceSetMemPool = s_dev_set_pool;
	d->cuPointerSetAttribute = s_ptr_set;
}
