/* SPDX-License-Identifier: MIT */
/*
 * pool.c - memory pools: creation and attributes, remoted to the host's
 * driver (allocations from a pool are in memory.c, with every other
 * allocation).
 */
#include <string.h>

#include "vc_cuda_manual.h"
#include "vc_cu_guest.h"

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	struct vc_cu_req_pool_create rq;
	struct vc_cu_rep_pool_create rp;
	CUresult rc;

	if (!pool || !poolProps)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	memcpy(rq.props, poolProps, sizeof(rq.props));
	rc = vc_cu_call(VC_CU_cuMemPoolCreate, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*pool = (CUmemoryPool)(uintptr_t)rp.pool;
	return rc;
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	struct vc_cu_req_pool_attr rq = {.pool = (uint64_t)(uintptr_t)pool, .attr = (int32_t)attr};
	struct vc_cu_prefix none;
	int iv;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	switch (vc_cu_pool_attr_size(attr)) {
	case sizeof(int):
		memcpy(&iv, value, sizeof(iv));
		rq.value = (uint64_t)(int64_t)iv;
		break;
	case sizeof(cuuint64_t):
		memcpy(&rq.value, value, sizeof(rq.value));
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return vc_cu_call(VC_CU_cuMemPoolSetAttribute, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	struct vc_cu_req_pool_attr rq = {.pool = (uint64_t)(uintptr_t)pool, .attr = (int32_t)attr};
	struct vc_cu_rep_pool_attr rp;
	size_t n = vc_cu_pool_attr_size(attr);
	CUresult rc;
	int iv;

	if (!value || !n)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(VC_CU_cuMemPoolGetAttribute, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (n == sizeof(int)) {
		iv = (int)rp.value;
		memcpy(value, &iv, sizeof(iv));
	} else {
		memcpy(value, &rp.value, sizeof(rp.value));
	}
	return CUDA_SUCCESS;
}
