/* SPDX-License-Identifier: MIT */
/*
 * vc_cuda_vmm.h - wire structs of virtual memory management (cuMemAddress*,
 * cuMemCreate, cuMemMap, access, granularity, handles) and of IPC between
 * processes of one VM (cuIpc*, shareable handles, pool pointers). Both sides
 * are hand-written (guest-lib/libcuda/vmm.c and ipc.c, host-backend/cuda/
 * vmm.c and ipc.c); opcodes come from the generated vc_cuda_wire.h. Part of
 * the ABI: the build hashes this file into VC_ABI_HASH.
 *
 * A CUmemGenericAllocationHandle travels as an id of the session's own
 * table, never as the host driver's value. An IPC handle (and a FABRIC
 * shareable handle, a pool pointer's export data) the guest sees is a token
 * of the server (resources/ipc.h), never the driver's bytes.
 */
#ifndef VC_CUDA_VMM_H
#define VC_CUDA_VMM_H

#include <assert.h>
#include <stdint.h>

#include "vc_cuda_wire.h"

/* Access descriptors one cuMemSetAccess / cuMemPoolSetAccess carries at most. */
#define VC_CU_ACCESS_MAX 64u

/*
 * Most VMM operations: which fields mean what is said per operation.
 *   cuMemAddressReserve  size, offset = alignment, ptr = fixed address, flags
 *   cuMemAddressFree     ptr, size
 *   cuMemMap             ptr, size, offset, handle, flags
 *   cuMemUnmap           ptr, size
 *   cuMemRelease         handle
 *   cuMemSetAccess       ptr, size, count descriptors after the struct
 *   cuMemRetainAllocationHandle  ptr
 *   cuMemGetAllocationPropertiesFromHandle  handle (reply: struct vc_cu_rep_vmm_prop)
 *   cuMemPoolSetAccess   handle = pool id, count descriptors after the struct
 *   cuMemPoolGetAccess   handle = pool id, location
 *   cuIpcCloseMemHandle  ptr
 */
struct vc_cu_req_vmm {
	uint64_t ctx;
	uint64_t ptr;
	uint64_t size;
	uint64_t offset;
	uint64_t handle;
	uint64_t flags;
	uint32_t count;
	uint32_t pad;
	uint8_t location[sizeof(CUmemLocation)];
};
struct vc_cu_rep_vmm {
	uint64_t value; /* the address, handle id, granularity, access flags, event id */
};
static_assert(sizeof(CUmemAccessDesc) == 12, "access descriptors travel as 12 bytes");
static_assert(sizeof(CUmemLocation) == 8, "a location travels as 8 bytes");

/* cuMemCreate (size, flags) and cuMemGetAllocationGranularity (option): the
 * properties as the guest gave them; the Windows handle metadata pointer
 * must be 0 (it means nothing on Linux, and a guest pointer nothing here). */
struct vc_cu_req_vmm_create {
	uint64_t ctx;
	uint64_t size;
	uint64_t flags;
	int32_t option;
	uint32_t pad;
	uint8_t prop[sizeof(CUmemAllocationProp)];
};
struct vc_cu_rep_vmm_prop {
	uint8_t prop[sizeof(CUmemAllocationProp)]; /* win32HandleMetaData cleared */
};

/*
 * IPC and shareable handles: a token of the server in place of the driver's
 * bytes. VC_CU_IPC_TOKEN bytes, the size of CUipcMemHandle, CUipcEventHandle,
 * CUmemFabricHandle and CUmemPoolPtrExportData alike.
 *   cuIpcGetMemHandle      ptr -> token
 *   cuIpcOpenMemHandle_v2  token, flags -> value = address
 *   cuIpcGetEventHandle    handle = event id -> token
 *   cuIpcOpenEventHandle   token -> value = event id
 *   cuMemExportToShareableHandle (FABRIC)    handle, flags -> token
 *   cuMemImportFromShareableHandle (FABRIC)  token -> value = handle id
 *   cuMemPoolExportToShareableHandle (FABRIC)   handle = pool id, flags -> token
 *   cuMemPoolImportFromShareableHandle (FABRIC) token, flags -> value = pool id
 *   cuMemPoolExportPointer  ptr -> token
 *   cuMemPoolImportPointer  handle = pool id, token -> value = address
 */
#define VC_CU_IPC_TOKEN 64u
struct vc_cu_req_ipc {
	uint64_t ctx;
	uint64_t ptr;
	uint64_t handle;
	uint64_t flags;
	int32_t type; /* CUmemAllocationHandleType, shareable handles */
	uint32_t pad;
	uint8_t token[VC_CU_IPC_TOKEN];
};
struct vc_cu_rep_ipc {
	uint64_t value;
	uint64_t size; /* memory opened or imported: its extent */
	uint8_t token[VC_CU_IPC_TOKEN];
};
static_assert(sizeof(CUipcMemHandle) == VC_CU_IPC_TOKEN && sizeof(CUipcEventHandle) == VC_CU_IPC_TOKEN &&
		      sizeof(CUmemFabricHandle) == VC_CU_IPC_TOKEN &&
		      sizeof(CUmemPoolPtrExportData) == VC_CU_IPC_TOKEN,
	      "IPC handles are tokens of one size");

#endif /* VC_CUDA_VMM_H */
