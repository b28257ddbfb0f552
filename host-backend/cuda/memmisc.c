/* SPDX-License-Identifier: MIT */
/*
 * memmisc.c - sparse array mapping (cuMemMapArrayAsync), batched
 * decompression (cuMemBatchDecompressAsync), the pools of a memory location
 * (cuMemGetDefaultMemPool, cuMemGetMemPool, cuMemSetMemPool) and
 * cuPointerSetAttribute.
 *
 * Map entries name an array or mipmapped array and an allocation handle by
 * the session's ids: each is looked up (arrays in the handle table,
 * allocations in vmm.c's), every enum is checked, and a mapping must lie
 * within its allocation: a miptail's bytes, a sparse level's tiles (64 KiB
 * each, by the array's tile extent), or a deferred-mapping array's memory
 * requirement, from the entry's offset. Memory mapped into an array stays
 * charged while the array holds it, as a mapping's does: the session keeps
 * one hold per (array, allocation) pair, given up when the array is
 * destroyed (array.c calls vc_cu_maparr_gone()), found dead (its context
 * destroyed it) or the session ends. An unmap does not give it up, since
 * other tiles may still map the same allocation.
 *
 * Decompression entries are device addresses of the session (source,
 * destination and the actual-size word), checked before the driver sees
 * them; the driver's result and error index travel in the reply. On a GPU
 * without a decompression engine the driver answers its own error.
 *
 * Pools of a location are published as the session's ids (an existing id
 * for a pool the session knows, its default pool included).
 */
#include <stdlib.h>
#include <string.h>

#include "vc_cuda_memmisc.h"
#include "cuda/memmisc.h"
#include "cuda/vmm.h"

#define MAX_HOLDS (1u << 16)
#define SPARSE_TILE_BYTES 65536ull /* a sparse array's tile, on every GPU that has them */

struct hold {
	uint64_t array; /* array or mipmapped array id */
	uint32_t slot;  /* vmm.c's slot of the allocation */
	bool mip;
};

struct vc_cu_memmisc {
	struct hold *h;
	uint32_t n, cap;
};

static struct vc_cu_memmisc *state(struct vc_cu_session *x)
{
	if (!x->memmisc)
		x->memmisc = calloc(1, sizeof(*x->memmisc));
	return x->memmisc;
}

/* Give up hold @i (the array no longer holds the memory). */
static void unhold(struct vc_cu_session *x, uint32_t i)
{
	struct vc_cu_memmisc *m = x->memmisc;

	vc_cu_vmm_pin(x, m->h[i].slot, false);
	m->h[i] = m->h[--m->n];
}

/* Give up the holds of arrays that are no longer the session's. */
static void sweep(struct vc_cu_session *x)
{
	struct vc_cu_memmisc *m = x->memmisc;
	void *real;

	for (uint32_t i = 0; m && i < m->n;) {
		if (vc_cu_lookup(x, m->h[i].mip ? VC_H_CUMIPMAPPEDARRAY : VC_H_CUARRAY, m->h[i].array, &real) || !real)
			unhold(x, i);
		else
			i++;
	}
}

void vc_cu_maparr_gone(struct vc_cu_session *x, uint64_t array)
{
	struct vc_cu_memmisc *m = x->memmisc;

	for (uint32_t i = 0; m && i < m->n;) {
		if (m->h[i].array == array)
			unhold(x, i);
		else
			i++;
	}
}

void vc_cu_memmisc_fini(struct vc_cu_session *x)
{
	/* vmm.c's close releases the allocations and their charges. */
	if (x->memmisc) {
		free(x->memmisc->h);
		free(x->memmisc);
		x->memmisc = NULL;
	}
}

/* Room for @more holds. 0 or CUDA_ERROR_OUT_OF_MEMORY. */
static int hold_room(struct vc_cu_memmisc *m, uint32_t more)
{
	uint32_t c = m->cap ? m->cap : 64;
	struct hold *nh;

	if (more > MAX_HOLDS - m->n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	while (c < m->n + more)
		c *= 2;
	if (c == m->cap)
		return 0;
	if (!(nh = realloc(m->h, c * sizeof(*nh))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->h = nh;
	m->cap = c;
	return 0;
}

static void hold_add(struct vc_cu_session *x, uint64_t array, bool mip, uint32_t slot)
{
	struct vc_cu_memmisc *m = x->memmisc;

	for (uint32_t i = 0; i < m->n; i++)
		if (m->h[i].array == array && m->h[i].slot == slot)
			return;
	m->h[m->n++] = (struct hold){.array = array, .slot = slot, .mip = mip};
	vc_cu_vmm_pin(x, slot, true);
}

/* ---- cuMemMapArrayAsync ----------------------------------------------------------- */

static uint64_t tiles(uint64_t extent, uint64_t tile)
{
	return tile ? (extent + tile - 1) / tile : 0;
}

/* The bytes entry @e maps, from the array @real's own properties. */
static int mapped_bytes(struct vc_cu_session *x, const CUarrayMapInfo *e, void *real, bool mip, uint64_t *out)
{
	CUDA_ARRAY_SPARSE_PROPERTIES sp;
	CUDA_ARRAY_MEMORY_REQUIREMENTS r;
	uint64_t n;
	CUdevice dev;
	int rc;

	memset(&sp, 0, sizeof(sp));
	rc = mip ? x->drv->cuMipmappedArrayGetSparseProperties(&sp, real) : x->drv->cuArrayGetSparseProperties(&sp, real);
	if (rc == CUDA_SUCCESS) {
		if (e->subresourceType == CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL) {
			*out = e->subresource.miptail.size;
			return 0;
		}
		n = tiles(e->subresource.sparseLevel.extentWidth, sp.tileExtent.width);
		if (__builtin_mul_overflow(n, tiles(e->subresource.sparseLevel.extentHeight, sp.tileExtent.height), &n) ||
		    __builtin_mul_overflow(n, tiles(e->subresource.sparseLevel.extentDepth, sp.tileExtent.depth), &n) ||
		    __builtin_mul_overflow(n, SPARSE_TILE_BYTES, &n))
			return CUDA_ERROR_INVALID_VALUE;
		*out = n;
		return 0;
	}
	/* Not sparse: a deferred-mapping array takes its whole requirement. */
	memset(&r, 0, sizeof(r));
	if ((rc = x->drv->cuCtxGetDevice(&dev)))
		return rc;
	rc = mip ? x->drv->cuMipmappedArrayGetMemoryRequirements(&r, real, dev)
		 : x->drv->cuArrayGetMemoryRequirements(&r, real, dev);
	if (rc)
		return CUDA_ERROR_INVALID_VALUE; /* neither sparse nor deferred, as the driver says */
	*out = r.size;
	return 0;
}

/* Entry @e from the guest, its ids turned into the driver's handles; the
 * array's id in *@array, the allocation's slot in *@slot (UINT32_MAX: an
 * unmap). */
static int map_entry_in(struct vc_cu_session *x, CUarrayMapInfo *e, uint64_t *array, uint32_t *slot)
{
	bool mip = e->resourceType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
	uint64_t real_mem, size, need;
	void *real;
	int rc;

	*slot = UINT32_MAX;
	if (e->resourceType != CU_RESOURCE_TYPE_ARRAY && !mip)
		return CUDA_ERROR_INVALID_VALUE;
	*array = mip ? (uint64_t)(uintptr_t)e->resource.mipmap : (uint64_t)(uintptr_t)e->resource.array;
	if ((rc = vc_cu_lookup(x, mip ? VC_H_CUMIPMAPPEDARRAY : VC_H_CUARRAY, *array, &real)))
		return rc;
	if (!real)
		return CUDA_ERROR_INVALID_HANDLE;
	if (mip)
		e->resource.mipmap = real;
	else
		e->resource.array = real;
	if (e->subresourceType != CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL &&
	    e->subresourceType != CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL)
		return CUDA_ERROR_INVALID_VALUE;
	switch (e->memOperationType) {
	case CU_MEM_OPERATION_TYPE_UNMAP:
		/* The driver ignores an unmap's memory handle (measured on an
		 * H100): never translated, never handed on. */
		e->memHandle.memHandle = 0;
		return 0;
	case CU_MEM_OPERATION_TYPE_MAP:
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (e->memHandleType != CU_MEM_HANDLE_TYPE_GENERIC)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_vmm_info(x, e->memHandle.memHandle, &real_mem, &size, slot)))
		return rc;
	if ((rc = mapped_bytes(x, e, real, mip, &need)))
		return rc;
	if (need > size || e->offset > size - need)
		return CUDA_ERROR_INVALID_VALUE;
	e->memHandle.memHandle = real_mem;
	return 0;
}

int vc_cu_manual_cuMemMapArrayAsync(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_maparr rq;
	struct vc_cu_memmisc *m;
	CUarrayMapInfo *e = NULL;
	uint64_t *arrays = NULL;
	uint32_t *slots = NULL, maps = 0;
	void *stream;
	int rc;

	(void)out;
	TAKE(rq);
	if (!rq.count || rq.count > VC_CU_MAPARR_MAX ||
	    (uint64_t)rq.count * sizeof(CUarrayMapInfo) > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
		return rc;
	if (!(m = state(x)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	sweep(x);
	e = calloc(rq.count, sizeof(*e));
	arrays = calloc(rq.count, sizeof(*arrays));
	slots = calloc(rq.count, sizeof(*slots));
	if (!e || !arrays || !slots) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	for (uint32_t i = 0; i < rq.count; i++) {
		memcpy(&e[i], p + sizeof(rq) + (size_t)i * sizeof(*e), sizeof(*e));
		if ((rc = map_entry_in(x, &e[i], &arrays[i], &slots[i])))
			goto out;
		maps += slots[i] != UINT32_MAX;
	}
	if ((rc = hold_room(m, maps)))
		goto out;
	if ((rc = x->drv->cuMemMapArrayAsync(e, rq.count, stream)))
		goto out;
	for (uint32_t i = 0; i < rq.count; i++)
		if (slots[i] != UINT32_MAX)
			hold_add(x, arrays[i], e[i].resourceType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY, slots[i]);
out:
	free(slots);
	free(arrays);
	free(e);
	return rc;
}

/* ---- cuMemBatchDecompressAsync ---------------------------------------------------- */

static int decomp_entry_ok(struct vc_cu_session *x, const CUmemDecompressParams *d)
{
	/* The driver reads srcNumBytes and writes at dst, and writes the
	 * actual size, a 32-bit word, at dstActBytes. */
	if (vc_cu_check_range(x, (uint64_t)(uintptr_t)d->src, d->srcNumBytes ? d->srcNumBytes : 1) ||
	    vc_cu_check_range(x, (uint64_t)(uintptr_t)d->dst, d->dstNumBytes ? d->dstNumBytes : 1) ||
	    vc_cu_check_range(x, (uint64_t)(uintptr_t)d->dstActBytes, sizeof(cuuint32_t)))
		return CUDA_ERROR_INVALID_VALUE;
	return 0;
}

int vc_cu_manual_cuMemBatchDecompressAsync(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					   struct vc_cu_out *out)
{
	struct vc_cu_req_decomp rq;
	struct vc_cu_rep_decomp rp = {.error_index = UINT64_MAX};
	CUmemDecompressParams *d;
	size_t idx = SIZE_MAX;
	void *stream;
	int rc;

	TAKE(rq);
	if (!rq.count || rq.count > VC_CU_DECOMP_MAX ||
	    (uint64_t)rq.count * sizeof(CUmemDecompressParams) > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
		return rc;
	{
		/* A device without the engine refuses the batch before looking
		 * at it (the H100, driver 580: CUDA_ERROR_NOT_SUPPORTED for
		 * entries out of range too, the error index untouched). */
		CUdevice dev;
		int algos = 0;

		if (!x->drv->cuCtxGetDevice(&dev) &&
		    !x->drv->cuDeviceGetAttribute(&algos, CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK, dev) &&
		    !algos) {
			rp.result = CUDA_ERROR_NOT_SUPPORTED;
			REPLY(rp);
			return 0;
		}
	}
	if (!(d = calloc(rq.count, sizeof(*d))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(d, p + sizeof(rq), (size_t)rq.count * sizeof(*d));
	rc = 0;
	for (uint32_t i = 0; i < rq.count && !rc; i++)
		if ((rc = decomp_entry_ok(x, &d[i])))
			idx = i;
	if (!rc)
		rc = x->drv->cuMemBatchDecompressAsync(d, rq.count, rq.flags, &idx, stream);
	free(d);
	rp.result = rc;
	rp.error_index = rc ? (uint64_t)idx : UINT64_MAX;
	REPLY(rp);
	return 0;
}

/* ---- the pools of a location ---------------------------------------------------- */

/*
 * The location and type pairs CUDA 13 documents for these calls: 0, or
 * CUDA_ERROR_INVALID_VALUE for a pair it does not; a location type CUDA does
 * not name is CUDA_ERROR_NOT_SUPPORTED (the H100's driver 580 answers
 * cuMemGetDefaultMemPool so).
 */
static int location_ok(int32_t loc, int32_t type)
{
	if (type != CU_MEM_ALLOCATION_TYPE_PINNED && type != CU_MEM_ALLOCATION_TYPE_MANAGED)
		return CUDA_ERROR_INVALID_VALUE;
	switch (loc) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
		return 0;
	case CU_MEM_LOCATION_TYPE_NONE:
		return type == CU_MEM_ALLOCATION_TYPE_MANAGED ? 0 : CUDA_ERROR_INVALID_VALUE;
	case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
		return CUDA_ERROR_INVALID_VALUE;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

static int locpool(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out, uint32_t what)
{
	struct vc_cu_req_locpool rq;
	struct vc_cu_rep_locpool rp = {0};
	CUmemLocation loc;
	CUmemoryPool pool = NULL;
	void *real;
	int rc;

	TAKE(rq);
	if (rq.what != what)
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if ((rc = location_ok(rq.loc_type, rq.type)))
		return rc;
	loc.type = (CUmemLocationType)rq.loc_type;
	loc.id = rq.loc_id;
	switch (what) {
	case VC_CU_LOCPOOL_SET:
		if ((rc = vc_cu_lookup(x, VC_H_CUMEMORYPOOL, rq.pool, &real)))
			return rc;
		return x->drv->cuMemSetMemPool(&loc, (CUmemAllocationType)rq.type, real);
	case VC_CU_LOCPOOL_DEFAULT:
		rc = x->drv->cuMemGetDefaultMemPool(&pool, &loc, (CUmemAllocationType)rq.type);
		break;
	default:
		rc = x->drv->cuMemGetMemPool(&pool, &loc, (CUmemAllocationType)rq.type);
		break;
	}
	if (rc)
		return rc;
	/* The session's id for it: the one it has, or a new one. */
	if ((rc = vc_cu_publish(x, VC_H_CUMEMORYPOOL, pool, &rp.pool)))
		return rc;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemGetDefaultMemPool(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					struct vc_cu_out *out)
{
	return locpool(x, p, len, out, VC_CU_LOCPOOL_DEFAULT);
}

int vc_cu_manual_cuMemGetMemPool(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	return locpool(x, p, len, out, VC_CU_LOCPOOL_GET);
}

int vc_cu_manual_cuMemSetMemPool(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	return locpool(x, p, len, out, VC_CU_LOCPOOL_SET);
}

/* ---- cuPointerSetAttribute ---------------------------------------------------------- */

int vc_cu_manual_cuPointerSetAttribute(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				       struct vc_cu_out *out)
{
	struct vc_cu_req_ptrset rq;
	unsigned int v;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	/* SYNC_MEMOPS is the only settable attribute, on the session's memory. */
	if (rq.attr != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS || vc_cu_check_memop_range(x, rq.ptr, 1))
		return CUDA_ERROR_INVALID_VALUE;
	v = rq.value;
	return x->drv->cuPointerSetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)rq.ptr);
}
