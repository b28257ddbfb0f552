/* SPDX-License-Identifier: MIT */
/*
 * vc_cuda_memmisc.h - wire structs of the hand-written sparse array mapping
 * (cuMemMapArrayAsync), batched decompression (cuMemBatchDecompressAsync),
 * the pools of a location (cuMemGetDefaultMemPool, cuMemGetMemPool,
 * cuMemSetMemPool) and cuPointerSetAttribute. Opcodes come from the
 * generated vc_cuda_wire.h; every request starts with the guest thread's
 * context id. Part of the ABI: the build hashes this file into VC_ABI_HASH.
 *
 * CUDA structs travel as their bytes; the handles in them are already the
 * session's ids (arrays, mipmapped arrays, allocation handles), which the
 * host translates, and every device address in them is checked there.
 */
#ifndef VC_CUDA_MEMMISC_H
#define VC_CUDA_MEMMISC_H

#include <assert.h>
#include <stdint.h>

#include "vc_cuda_wire.h"

/* cuMemMapArrayAsync: `count` CUarrayMapInfo (bytes) after the struct, the
 * resource and the memory handle as ids. The guest cuts longer lists. */
#define VC_CU_MAPARR_MAX 256u
struct vc_cu_req_maparr {
	uint64_t ctx;
	uint64_t stream;
	uint32_t count; /* 1..VC_CU_MAPARR_MAX */
	uint32_t pad;
};
static_assert(sizeof(CUarrayMapInfo) == 96, "CUarrayMapInfo as the wire carries it");

/* cuMemBatchDecompressAsync: `count` CUmemDecompressParams (bytes) after the
 * struct. The reply carries the driver's result and error index, since the
 * index matters on failure (the transport itself succeeds). */
#define VC_CU_DECOMP_MAX 256u
struct vc_cu_req_decomp {
	uint64_t ctx;
	uint64_t stream;
	uint32_t count; /* 1..VC_CU_DECOMP_MAX */
	uint32_t flags;
};
struct vc_cu_rep_decomp {
	int32_t result;       /* CUresult */
	uint32_t pad;
	uint64_t error_index; /* SIZE_MAX: none in particular */
};
static_assert(sizeof(CUmemDecompressParams) == 64, "CUmemDecompressParams as the wire carries it");

/* cuMemGetDefaultMemPool, cuMemGetMemPool (pool unused) and cuMemSetMemPool. */
#define VC_CU_LOCPOOL_DEFAULT 0u
#define VC_CU_LOCPOOL_GET 1u
#define VC_CU_LOCPOOL_SET 2u
struct vc_cu_req_locpool {
	uint64_t ctx;
	uint64_t pool;    /* set: the pool's id */
	int32_t loc_type; /* CUmemLocationType */
	int32_t loc_id;
	int32_t type;     /* CUmemAllocationType */
	uint32_t what;    /* VC_CU_LOCPOOL_* (must match the opcode) */
};
struct vc_cu_rep_locpool {
	uint64_t pool;
};

/* cuPointerSetAttribute: the value is an unsigned int (SYNC_MEMOPS, the only
 * settable attribute). */
struct vc_cu_req_ptrset {
	uint64_t ctx;
	uint64_t ptr;
	int32_t attr;   /* CUpointer_attribute */
	uint32_t value;
};

#endif /* VC_CUDA_MEMMISC_H */
