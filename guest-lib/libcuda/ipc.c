/* SPDX-License-Identifier: MIT */
/*
 * ipc.c - IPC between processes of one VM: memory and event handles, FABRIC
 * shareable handles of allocations and pools, pool pointers, pool access.
 * Remoted to the host, where each process is a session of its own worker and
 * the driver's IPC works between them. The handles the guest holds are
 * tokens of the server (shared/vc_cuda_vmm.h), not the driver's bytes; the
 * server honours a token only when one of its own sessions made it.
 * File-descriptor and Windows shareable handles are refused with
 * CUDA_ERROR_NOT_SUPPORTED: the driver's descriptor would live in the host's
 * worker, out of reach of any process in the VM.
 */
#include <string.h>

#include "vc_cuda_vmm.h"
#include "vc_cu_guest.h"
#include "vmm.h"

#define ID(h) ((uint64_t)(uintptr_t)(h))

static CUresult ipc(uint32_t op, struct vc_cu_req_ipc *rq, struct vc_cu_rep_ipc *rp)
{
	memset(rp, 0, sizeof(*rp));
	return vc_cu_call(op, rq, sizeof(*rq), NULL, 0, rp, sizeof(*rp), NULL, 0, 0);
}

CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	struct vc_cu_req_ipc rq = {.ptr = dptr};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!pHandle)
		return CUDA_ERROR_INVALID_VALUE;
	rc = ipc(VC_CU_cuIpcGetMemHandle, &rq, &rp);
	if (rc == CUDA_SUCCESS)
		memcpy(pHandle, rp.token, sizeof(*pHandle));
	return rc;
}

CUresult CUDAAPI cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
	struct vc_cu_req_ipc rq = {.flags = Flags};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!pdptr)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(rq.token, &handle, sizeof(rq.token));
	rc = ipc(VC_CU_cuIpcOpenMemHandle_v2, &rq, &rp);
	if (rc != CUDA_SUCCESS)
		return rc;
	vc_cu_vmm_track(rp.value, rp.size);
	*pdptr = (CUdeviceptr)rp.value;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	struct vc_cu_req_vmm rq = {.ptr = dptr};
	struct vc_cu_prefix none;
	CUresult rc = vc_cu_call(VC_CU_cuIpcCloseMemHandle, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);

	if (rc == CUDA_SUCCESS)
		vc_cu_vmm_untrack(dptr, 1);
	return rc;
}

CUresult CUDAAPI cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
	struct vc_cu_req_ipc rq = {.handle = ID(event)};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!pHandle)
		return CUDA_ERROR_INVALID_VALUE;
	rc = ipc(VC_CU_cuIpcGetEventHandle, &rq, &rp);
	if (rc == CUDA_SUCCESS)
		memcpy(pHandle, rp.token, sizeof(*pHandle));
	return rc;
}

CUresult CUDAAPI cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
	struct vc_cu_req_ipc rq = {0};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!phEvent)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(rq.token, &handle, sizeof(rq.token));
	rc = ipc(VC_CU_cuIpcOpenEventHandle, &rq, &rp);
	if (rc == CUDA_SUCCESS)
		*phEvent = (CUevent)(uintptr_t)rp.value;
	return rc;
}

/* ---- shareable handles --------------------------------------------------------------- */

/* FABRIC travels as a token; a descriptor or a Windows handle cannot cross. */
static CUresult shareable(CUmemAllocationHandleType t)
{
	switch (t) {
	case CU_MEM_HANDLE_TYPE_FABRIC:
		return CUDA_SUCCESS;
	case CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR:
	case CU_MEM_HANDLE_TYPE_WIN32:
	case CU_MEM_HANDLE_TYPE_WIN32_KMT:
		return vc_cu_state() ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_NOT_INITIALIZED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult CUDAAPI cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
					      CUmemAllocationHandleType handleType, unsigned long long flags)
{
	struct vc_cu_req_ipc rq = {.handle = handle, .type = (int32_t)handleType, .flags = flags};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!shareableHandle)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = shareable(handleType)) || (rc = ipc(VC_CU_cuMemExportToShareableHandle, &rq, &rp)))
		return rc;
	memcpy(shareableHandle, rp.token, sizeof(CUmemFabricHandle));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
						CUmemAllocationHandleType shHandleType)
{
	struct vc_cu_req_ipc rq = {.type = (int32_t)shHandleType};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!handle || !osHandle)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = shareable(shHandleType)))
		return rc;
	memcpy(rq.token, osHandle, sizeof(CUmemFabricHandle));
	if ((rc = ipc(VC_CU_cuMemImportFromShareableHandle, &rq, &rp)))
		return rc;
	*handle = rp.value;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
						  CUmemAllocationHandleType handleType, unsigned long long flags)
{
	struct vc_cu_req_ipc rq = {.handle = ID(pool), .type = (int32_t)handleType, .flags = flags};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!handle_out)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = shareable(handleType)) || (rc = ipc(VC_CU_cuMemPoolExportToShareableHandle, &rq, &rp)))
		return rc;
	memcpy(handle_out, rp.token, sizeof(CUmemFabricHandle));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
						    CUmemAllocationHandleType handleType, unsigned long long flags)
{
	struct vc_cu_req_ipc rq = {.type = (int32_t)handleType, .flags = flags};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!pool_out || !handle)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = shareable(handleType)))
		return rc;
	memcpy(rq.token, handle, sizeof(CUmemFabricHandle));
	if ((rc = ipc(VC_CU_cuMemPoolImportFromShareableHandle, &rq, &rp)))
		return rc;
	*pool_out = (CUmemoryPool)(uintptr_t)rp.value;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr)
{
	struct vc_cu_req_ipc rq = {.ptr = ptr};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!shareData_out)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = ipc(VC_CU_cuMemPoolExportPointer, &rq, &rp)))
		return rc;
	memcpy(shareData_out, rp.token, sizeof(*shareData_out));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *shareData)
{
	struct vc_cu_req_ipc rq = {.handle = ID(pool)};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!ptr_out || !shareData)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(rq.token, shareData, sizeof(rq.token));
	if ((rc = ipc(VC_CU_cuMemPoolImportPointer, &rq, &rp)))
		return rc;
	vc_cu_vmm_track(rp.value, rp.size);
	*ptr_out = (CUdeviceptr)rp.value;
	return CUDA_SUCCESS;
}

/* ---- pool access ------------------------------------------------------------------- */

CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
	struct vc_cu_req_vmm rq = {.handle = ID(pool), .count = (uint32_t)count};
	struct vc_cu_prefix none;

	if ((!map && count) || count > VC_CU_ACCESS_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	return vc_cu_call(VC_CU_cuMemPoolSetAccess, &rq, sizeof(rq), map, count * sizeof(*map), &none, 0, NULL, 0,
			  0);
}

CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool, CUmemLocation *location)
{
	struct vc_cu_req_vmm rq = {.handle = ID(memPool)};
	struct vc_cu_rep_vmm rp;
	CUresult rc;

	if (!flags || !location)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(rq.location, location, sizeof(rq.location));
	rc = vc_cu_call(VC_CU_cuMemPoolGetAccess, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*flags = (CUmemAccess_flags)rp.value;
	return rc;
}
