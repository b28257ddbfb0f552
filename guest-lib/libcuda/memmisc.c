/* SPDX-License-Identifier: MIT */
/*
 * memmisc.c - the guest's side of host-backend/cuda/memmisc.c: sparse array
 * mapping (cuMemMapArrayAsync), batched decompression
 * (cuMemBatchDecompressAsync), the pools of a memory location
 * (cuMemGetDefaultMemPool, cuMemGetMemPool, cuMemSetMemPool) and
 * cuPointerSetAttribute.
 *
 * CUarrayMapInfo and CUmemDecompressParams travel as their bytes: the
 * handles in a map entry (array, mipmapped array, allocation handle) are
 * already the session's ids, and the host translates and checks each.
 * Lists longer than one command holds are sent a command's worth at a
 * time, in order on the same stream; a failure in a later piece leaves the
 * earlier pieces enqueued (natively the whole list is checked first).
 * Both calls wait for the host's verdict, since the driver refuses a bad
 * entry at once; the work itself runs in stream order.
 */
#include <stdint.h>
#include <string.h>

#include "vc_cu_guest.h"
#include "vc_cuda_memmisc.h"

/* ---- sparse array mapping --------------------------------------------------------- */

CUresult CUDAAPI cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream)
{
	struct vc_cu_req_maparr rq;
	struct vc_cu_prefix none;
	CUresult rc = CUDA_SUCCESS;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!mapInfoList || !count)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < count && rc == CUDA_SUCCESS; i += VC_CU_MAPARR_MAX) {
		unsigned int n = count - i < VC_CU_MAPARR_MAX ? count - i : VC_CU_MAPARR_MAX;

		memset(&rq, 0, sizeof(rq));
		rq.stream = vc_cu_stream_id(hStream);
		rq.count = n;
		rc = vc_cu_call(VC_CU_cuMemMapArrayAsync, &rq, sizeof(rq), &mapInfoList[i],
				(size_t)n * sizeof(mapInfoList[0]), &none, 0, NULL, 0, 0);
	}
	return rc;
}

/* ---- batched decompression ----------------------------------------------------------- */

CUresult CUDAAPI cuMemBatchDecompressAsync(CUmemDecompressParams *paramsArray, size_t count, unsigned int flags,
					   size_t *errorIndex, CUstream stream)
{
	struct vc_cu_req_decomp rq;
	struct vc_cu_rep_decomp rp;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!paramsArray || !count) {
		if (errorIndex)
			*errorIndex = SIZE_MAX;
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (size_t i = 0; i < count; i += VC_CU_DECOMP_MAX) {
		size_t n = count - i < VC_CU_DECOMP_MAX ? count - i : VC_CU_DECOMP_MAX;

		memset(&rq, 0, sizeof(rq));
		memset(&rp, 0, sizeof(rp));
		rq.stream = vc_cu_stream_id(stream);
		rq.count = (uint32_t)n;
		rq.flags = flags;
		rc = vc_cu_call(VC_CU_cuMemBatchDecompressAsync, &rq, sizeof(rq), &paramsArray[i],
				n * sizeof(paramsArray[0]), &rp, sizeof(rp), NULL, 0, 0);
		if (rc == CUDA_SUCCESS)
			rc = (CUresult)rp.result;
		if (rc != CUDA_SUCCESS) {
			/* The host's index is within this piece; when it names no
			 * entry the index is left as it was, as by the driver (an
			 * H100 without a decompression engine: NOT_SUPPORTED). */
			if (errorIndex && rp.result && rp.error_index < n)
				*errorIndex = i + rp.error_index;
			return rc;
		}
	}
	return CUDA_SUCCESS;
}

/* ---- the pools of a location ------------------------------------------------------------- */

static CUresult locpool(uint32_t what, CUmemoryPool *out, const CUmemLocation *loc, CUmemAllocationType type,
			CUmemoryPool pool)
{
	static const uint32_t ops[] = {VC_CU_cuMemGetDefaultMemPool, VC_CU_cuMemGetMemPool, VC_CU_cuMemSetMemPool};
	struct vc_cu_req_locpool rq;
	struct vc_cu_rep_locpool rp;
	CUresult rc;

	if (!loc || (what != VC_CU_LOCPOOL_SET && !out))
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	rq.pool = (uint64_t)(uintptr_t)pool;
	rq.loc_type = (int32_t)loc->type;
	rq.loc_id = loc->id;
	rq.type = (int32_t)type;
	rq.what = what;
	rc = vc_cu_call(ops[what], &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS && out)
		*out = (CUmemoryPool)(uintptr_t)rp.pool;
	return rc;
}

CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location, CUmemAllocationType type)
{
	return locpool(VC_CU_LOCPOOL_DEFAULT, pool_out, location, type, NULL);
}

CUresult CUDAAPI cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type)
{
	return locpool(VC_CU_LOCPOOL_GET, pool, location, type, NULL);
}

CUresult CUDAAPI cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type, CUmemoryPool pool)
{
	return locpool(VC_CU_LOCPOOL_SET, NULL, location, type, pool);
}

/* ---- pointer attributes ------------------------------------------------------------------ */

CUresult CUDAAPI cuPointerSetAttribute(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	struct vc_cu_req_ptrset rq;
	struct vc_cu_prefix none;
	unsigned int v;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Only SYNC_MEMOPS is settable; its value is an unsigned int. */
	if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&v, value, sizeof(v));
	memset(&rq, 0, sizeof(rq));
	rq.ptr = ptr;
	rq.attr = (int32_t)attribute;
	rq.value = v;
	return vc_cu_call(VC_CU_cuPointerSetAttribute, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}
