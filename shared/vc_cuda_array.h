/* SPDX-License-Identifier: MIT */
/*
 * vc_cuda_array.h - wire structs of the hand-written CUDA array, texture and
 * surface operations, and of vcMemcpy3D (every copy with a CUDA array on a
 * side, and every 3D copy). Opcodes come from the generated vc_cuda_wire.h;
 * every request starts with the guest thread's context id. Part of the ABI:
 * the build hashes this file into VC_ABI_HASH.
 *
 * Handles inside CUDA structs (a resource descriptor's array) travel as
 * session ids in place of the pointer: the host translates them.
 */
#ifndef VC_CUDA_ARRAY_H
#define VC_CUDA_ARRAY_H

#include <assert.h>
#include <stdint.h>

#include "vc_cuda_wire.h"

/* ---- arrays ------------------------------------------------------------------ */
#define VC_CU_ARR_2D 0u     /* cuArrayCreate_v2 */
#define VC_CU_ARR_3D 1u     /* cuArray3DCreate_v2 */
#define VC_CU_ARR_MIPMAP 2u /* cuMipmappedArrayCreate */
struct vc_cu_req_array_create {
	uint64_t ctx;
	uint64_t width, height, depth;
	uint32_t format;   /* CUarray_format */
	uint32_t channels;
	uint32_t flags;    /* CUDA_ARRAY3D_* (3D and mipmapped) */
	uint32_t levels;   /* mipmapped */
	uint32_t kind;     /* VC_CU_ARR_* */
	uint32_t pad;
};
struct vc_cu_rep_array {
	uint64_t handle;
};
/* cuArrayGetPlane and cuMipmappedArrayGetLevel: an array that belongs to
 * another (it goes with it and is never destroyed on its own). */
struct vc_cu_req_array_sub {
	uint64_t ctx;
	uint64_t parent;
	uint32_t index;
	uint32_t pad;
};
/* cuArrayDestroy, cuMipmappedArrayDestroy, cuArrayGetSparseProperties,
 * cuMipmappedArrayGetSparseProperties: struct vc_cu_req_handle. */
struct vc_cu_rep_sparse {
	uint8_t props[sizeof(CUDA_ARRAY_SPARSE_PROPERTIES)];
};

/* ---- texture and surface objects ------------------------------------------------ */
/* cuTexObjectCreate and cuSurfObjectCreate (tex and view unused). The
 * object's value is the driver's own (kernels take it as a parameter); the
 * host accepts only values its session created. */
struct vc_cu_req_texobj_create {
	uint64_t ctx;
	uint8_t res[sizeof(CUDA_RESOURCE_DESC)];
	uint8_t tex[sizeof(CUDA_TEXTURE_DESC)];
	uint8_t view[sizeof(CUDA_RESOURCE_VIEW_DESC)];
	uint32_t has_view;
	uint32_t pad;
};
struct vc_cu_rep_texobj {
	uint64_t value;
};
/* cuTexObjectDestroy, cuSurfObjectDestroy and the getters: struct
 * vc_cu_req_handle with the object's value; the getters reply with the
 * descriptor (resource descriptors with ids in place of handles). */
struct vc_cu_rep_texobj_desc {
	uint8_t desc[sizeof(CUDA_RESOURCE_DESC)]; /* the largest of the three */
};
static_assert(sizeof(CUDA_TEXTURE_DESC) <= sizeof(CUDA_RESOURCE_DESC), "texture descriptor fits");
static_assert(sizeof(CUDA_RESOURCE_VIEW_DESC) <= sizeof(CUDA_RESOURCE_DESC), "view descriptor fits");
static_assert(sizeof(struct vc_cu_rep_texobj_desc) <= VC_CU_REP_MAX, "reply fits");

/* ---- copies with arrays and 3D copies (vcMemcpy3D) --------------------------------- */
#define VC_CU_SIDE_DEVICE 0u /* device memory: addr, pitch, height */
#define VC_CU_SIDE_ARRAY 1u  /* a CUDA array: addr is its id */
#define VC_CU_SIDE_STAGED 2u /* the guest's host memory, through the arena as the dense box */
#define VC_CU_SIDE_PINNED 3u /* the guest's pinned pool: addr is the offset of the box's origin */
struct vc_cu_copy3d_side {
	uint64_t addr;
	uint64_t x, y, z; /* x in bytes */
	uint64_t pitch, height;
	uint32_t kind; /* VC_CU_SIDE_* */
	uint32_t pad;
};
/*
 * A box of width bytes x height rows x depth slices. A staged side is the
 * box's bytes packed densely (row r of slice z at (z * height + r) * width);
 * this command moves bytes [piece_off, piece_off + piece_len) of it, which
 * lie at arena_off, and the host cuts the piece into the rows and slices it
 * covers. dims 2 copies with the 2D calls' semantics (depth 1), dims 3 with
 * the 3D calls'. Asynchronous ones are sent without a reply.
 */
struct vc_cu_req_memcpy3d {
	uint64_t ctx;
	uint64_t stream;
	struct vc_cu_copy3d_side src, dst;
	uint64_t width, height, depth;
	uint64_t piece_off, piece_len;
	uint64_t arena_off;
	uint32_t dims;
	uint32_t async;
};

/*
 * vc_cu_array_elem_bytes() - bytes of one element of @format with
 * @channels channels, for the formats whose elements are whole bytes per
 * texel; 0 for the others (planar video, block-compressed).
 */
static inline uint32_t vc_cu_array_elem_bytes(uint32_t format, uint32_t channels)
{
	switch (format) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8:
		return channels;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		return 2 * channels;
	case CU_AD_FORMAT_UNSIGNED_INT32:
	case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT:
		return 4 * channels;
	case CU_AD_FORMAT_UNORM_INT8X1:
	case CU_AD_FORMAT_SNORM_INT8X1:
		return 1;
	case CU_AD_FORMAT_UNORM_INT8X2:
	case CU_AD_FORMAT_SNORM_INT8X2:
	case CU_AD_FORMAT_UNORM_INT16X1:
	case CU_AD_FORMAT_SNORM_INT16X1:
		return 2;
	case CU_AD_FORMAT_UNORM_INT8X4:
	case CU_AD_FORMAT_SNORM_INT8X4:
	case CU_AD_FORMAT_UNORM_INT16X2:
	case CU_AD_FORMAT_SNORM_INT16X2:
	case CU_AD_FORMAT_UNORM_INT_101010_2:
		return 4;
	case CU_AD_FORMAT_UNORM_INT16X4:
	case CU_AD_FORMAT_SNORM_INT16X4:
		return 8;
	default:
		return 0;
	}
}

#endif /* VC_CUDA_ARRAY_H */
