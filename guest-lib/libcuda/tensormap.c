/* SPDX-License-Identifier: MIT */
/*
 * tensormap.c - tensor maps for Hopper's TMA (Triton and cuBLASLt encode
 * them): the host driver encodes, after checking that the global range the
 * map covers is the session's device memory, and the 128-byte CUtensorMap
 * comes back to be passed to kernels by value. The arrays are read here up
 * to the rank only (a rank the driver refuses is refused before they are).
 */
#include <string.h>

#include "vc_cu_guest.h"

static CUresult tmap_call(struct vc_cu_req_tmap *rq, CUtensorMap *out)
{
	struct vc_cu_rep_tmap rp;
	CUresult rc;

	rc = vc_cu_call(VC_CU_vcTensorMap, rq, sizeof(*rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		memcpy(out, rp.map, sizeof(rp.map));
	return rc;
}

/* The parts every encoding has; CUDA_ERROR_INVALID_VALUE where the driver refuses at once. */
static CUresult common(struct vc_cu_req_tmap *rq, uint32_t kind, CUtensorMap *m, CUtensorMapDataType t,
		       cuuint32_t rank, void *addr, const cuuint64_t *dims, const cuuint64_t *strides,
		       const cuuint32_t *estrides, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
		       CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!m || !dims || !estrides || rank < 1 || rank > VC_CU_TMAP_RANK_MAX || (rank > 1 && !strides))
		return CUDA_ERROR_INVALID_VALUE;
	memset(rq, 0, sizeof(*rq));
	rq->kind = kind;
	rq->dtype = (int32_t)t;
	rq->rank = rank;
	rq->addr = (uint64_t)(uintptr_t)addr;
	rq->interleave = (int32_t)il;
	rq->swizzle = (int32_t)sw;
	rq->l2 = (int32_t)l2;
	rq->oob = (int32_t)oob;
	for (cuuint32_t i = 0; i < rank; i++) {
		rq->dims[i] = dims[i];
		rq->estrides[i] = estrides[i];
		if (i + 1 < rank)
			rq->strides[i] = strides[i];
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
					cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
					const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
					const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
					CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
					CUtensorMapFloatOOBfill oobFill)
{
	struct vc_cu_req_tmap rq;
	CUresult rc = common(&rq, VC_CU_TMAP_TILED, tensorMap, tensorDataType, tensorRank, globalAddress, globalDim,
			     globalStrides, elementStrides, interleave, swizzle, l2Promotion, oobFill);

	if (rc)
		return rc;
	if (!boxDim)
		return CUDA_ERROR_INVALID_VALUE;
	for (cuuint32_t i = 0; i < tensorRank; i++)
		rq.box[i] = boxDim[i];
	return tmap_call(&rq, tensorMap);
}

CUresult CUDAAPI cuTensorMapEncodeIm2col(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
					 cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
					 const cuuint64_t *globalStrides, const int *pixelBoxLowerCorner,
					 const int *pixelBoxUpperCorner, cuuint32_t channelsPerPixel,
					 cuuint32_t pixelsPerColumn, const cuuint32_t *elementStrides,
					 CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
					 CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)
{
	struct vc_cu_req_tmap rq;
	CUresult rc = common(&rq, VC_CU_TMAP_IM2COL, tensorMap, tensorDataType, tensorRank, globalAddress, globalDim,
			     globalStrides, elementStrides, interleave, swizzle, l2Promotion, oobFill);

	if (rc)
		return rc;
	/* Im2col tensors have 3 to 5 dimensions: rank - 2 spatial corners. */
	if (tensorRank < 3 || !pixelBoxLowerCorner || !pixelBoxUpperCorner)
		return CUDA_ERROR_INVALID_VALUE;
	for (cuuint32_t i = 0; i < tensorRank - 2; i++) {
		rq.lower[i] = pixelBoxLowerCorner[i];
		rq.upper[i] = pixelBoxUpperCorner[i];
	}
	rq.cpp = channelsPerPixel;
	rq.ppc = pixelsPerColumn;
	return tmap_call(&rq, tensorMap);
}

CUresult CUDAAPI cuTensorMapEncodeIm2colWide(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
					     cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
					     const cuuint64_t *globalStrides, int pixelBoxLowerCornerWidth,
					     int pixelBoxUpperCornerWidth, cuuint32_t channelsPerPixel,
					     cuuint32_t pixelsPerColumn, const cuuint32_t *elementStrides,
					     CUtensorMapInterleave interleave, CUtensorMapIm2ColWideMode mode,
					     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
					     CUtensorMapFloatOOBfill oobFill)
{
	struct vc_cu_req_tmap rq;
	CUresult rc = common(&rq, VC_CU_TMAP_IM2COL_WIDE, tensorMap, tensorDataType, tensorRank, globalAddress,
			     globalDim, globalStrides, elementStrides, interleave, swizzle, l2Promotion, oobFill);

	if (rc)
		return rc;
	rq.lower_w = pixelBoxLowerCornerWidth;
	rq.upper_w = pixelBoxUpperCornerWidth;
	rq.cpp = channelsPerPixel;
	rq.ppc = pixelsPerColumn;
	rq.mode = (int32_t)mode;
	return tmap_call(&rq, tensorMap);
}

CUresult CUDAAPI cuTensorMapReplaceAddress(CUtensorMap *tensorMap, void *globalAddress)
{
	struct vc_cu_req_tmap rq;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!tensorMap)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	rq.kind = VC_CU_TMAP_REPLACE;
	rq.addr = (uint64_t)(uintptr_t)globalAddress;
	memcpy(rq.map, tensorMap, sizeof(rq.map));
	return tmap_call(&rq, tensorMap);
}
