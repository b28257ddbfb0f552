/* SPDX-License-Identifier: MIT */
/*
 * vc_cuda_texref.h - wire structs of the hand-written texture and surface
 * reference operations (the rest are generated). Opcodes come from the
 * generated vc_cuda_wire.h; every request starts with the guest thread's
 * context id. Part of the ABI: the build hashes this file into VC_ABI_HASH.
 *
 * cuTexRefDestroy, cuTexRefGetArray, cuTexRefGetMipmappedArray,
 * cuSurfRefGetArray and cuTexRefGetBorderColor take a struct
 * vc_cu_req_handle (the reference's id); the getters of arrays reply with a
 * struct vc_cu_rep_texref_array, the border colour with a struct
 * vc_cu_rep_texref_border.
 */
#ifndef VC_CUDA_TEXREF_H
#define VC_CUDA_TEXREF_H

#include <assert.h>
#include <stdint.h>

#include "vc_cuda_wire.h"

/* cuTexRefSetAddress_v2 (desc unused, pitch 0) and cuTexRefSetAddress2D_v3
 * (bytes unused). */
struct vc_cu_req_texref_addr {
	uint64_t ctx;
	uint64_t texref;
	uint64_t dptr;
	uint64_t bytes;  /* 1D: the bytes bound */
	uint64_t pitch;  /* 2D: bytes from one row to the next */
	uint64_t width;  /* 2D: CUDA_ARRAY_DESCRIPTOR */
	uint64_t height;
	uint32_t format;
	uint32_t channels;
};
struct vc_cu_rep_texref_addr {
	uint64_t offset; /* 1D: the byte offset the driver reports */
};

/* cuTexRefSetBorderColor; the reply of cuTexRefGetBorderColor. */
struct vc_cu_req_texref_border {
	uint64_t ctx;
	uint64_t texref;
	float color[4];
};
struct vc_cu_rep_texref_border {
	float color[4];
};

/* cuTexRefGetArray, cuTexRefGetMipmappedArray, cuSurfRefGetArray: the id
 * the session gave the array (0: none bound). */
struct vc_cu_rep_texref_array {
	uint64_t handle;
};

static_assert(sizeof(struct vc_cu_req_texref_addr) == 64, "texref address request is pinned");
static_assert(sizeof(struct vc_cu_req_texref_border) == 32, "texref border request is pinned");

#endif /* VC_CUDA_TEXREF_H */
