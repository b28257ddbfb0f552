/* SPDX-License-Identifier: MIT */
/*
 * ipc.c - IPC between processes of one VM: memory and event handles, FABRIC
 * shareable handles of allocations and pools, pool pointers, pool access.
 * Remoted to the host, where each process is a session of its own worker and
 * the driver's IPC works between them. The handles the guest holds are
 * tokens of the server (shared/vc_cuda_vmm.h), not the driver's bytes; the
 * server honours a token only when one of its own sessions made it. A
 * file descriptor the program gets is a memfd holding such a token (the
 * driver's descriptor stays on the host, with the server); Windows handles
 * are refused with CUDA_ERROR_NOT_SUPPORTED.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
	vc_cu_vmm_track(rp.value, rp.size, vc_cu_ctx_ordinal(vc_cu_current())); /* the opener's device */
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

/*
 * FABRIC travels as the token itself. A POSIX file descriptor is a sealed
 * memfd of this process holding the token after a header: the program
 * passes it to another process as it would the driver's (SCM_RIGHTS, or
 * pidfd_getfd), and the importer's library reads the token back. A Windows
 * handle cannot exist here.
 */
static const char FD_MAGIC[8] = {'v', 'c', 'u', 'd', 'a', 'S', 'H', '1'};

static CUresult shareable(CUmemAllocationHandleType t)
{
	switch (t) {
	case CU_MEM_HANDLE_TYPE_FABRIC:
	case CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR:
		return CUDA_SUCCESS;
	case CU_MEM_HANDLE_TYPE_WIN32:
	case CU_MEM_HANDLE_TYPE_WIN32_KMT:
		return vc_cu_state() ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_NOT_INITIALIZED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* Hand the token in @rp out as handle type @t at @out. */
static CUresult give(CUmemAllocationHandleType t, const struct vc_cu_rep_ipc *rp, void *out)
{
	uint8_t b[sizeof(FD_MAGIC) + sizeof(rp->token)];
	int fd;

	if (t != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
		memcpy(out, rp->token, sizeof(CUmemFabricHandle));
		return CUDA_SUCCESS;
	}
	memcpy(b, FD_MAGIC, sizeof(FD_MAGIC));
	memcpy(b + sizeof(FD_MAGIC), rp->token, sizeof(rp->token));
	fd = memfd_create("vcuda-shareable", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (pwrite(fd, b, sizeof(b), 0) != (ssize_t)sizeof(b) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy(out, &fd, sizeof(fd));
	return CUDA_SUCCESS;
}

/* The token behind handle @h of type @t (not NULL unless a descriptor: 0 is
 * one) into @rq. A descriptor that is not one of ours (not a sealed memfd
 * with the header) is CUDA_ERROR_INVALID_VALUE. */
static CUresult take(CUmemAllocationHandleType t, const void *h, struct vc_cu_req_ipc *rq)
{
	uint8_t b[sizeof(FD_MAGIC) + sizeof(rq->token) + 1];
	int fd = (int)(intptr_t)h, seals;

	if (t != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
		memcpy(rq->token, h, sizeof(CUmemFabricHandle));
		return CUDA_SUCCESS;
	}
	seals = fd < 0 ? -1 : fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_WRITE) ||
	    pread(fd, b, sizeof(b), 0) != (ssize_t)(sizeof(b) - 1) || memcmp(b, FD_MAGIC, sizeof(FD_MAGIC)))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(rq->token, b + sizeof(FD_MAGIC), sizeof(rq->token));
	return CUDA_SUCCESS;
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
	return give(handleType, &rp, shareableHandle);
}

CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
						CUmemAllocationHandleType shHandleType)
{
	struct vc_cu_req_ipc rq = {.type = (int32_t)shHandleType};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!handle || (!osHandle && shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = shareable(shHandleType)) || (rc = take(shHandleType, osHandle, &rq)) ||
	    (rc = ipc(VC_CU_cuMemImportFromShareableHandle, &rq, &rp)))
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
	return give(handleType, &rp, handle_out);
}

CUresult CUDAAPI cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
						    CUmemAllocationHandleType handleType, unsigned long long flags)
{
	struct vc_cu_req_ipc rq = {.type = (int32_t)handleType, .flags = flags};
	struct vc_cu_rep_ipc rp;
	CUresult rc;

	if (!pool_out || (!handle && handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = shareable(handleType)) || (rc = take(handleType, handle, &rq)) ||
	    (rc = ipc(VC_CU_cuMemPoolImportFromShareableHandle, &rq, &rp)))
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
	vc_cu_vmm_track(rp.value, rp.size, vc_cu_ctx_ordinal(vc_cu_current())); /* the opener's device */
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
