/* SPDX-License-Identifier: MIT */
/*
 * texref.c - the guest's side of the legacy texture and surface references
 * (host-backend/cuda/texref.c) that the generator cannot describe: destroying
 * one, binding an address (the host checks the range), the border colour
 * (four floats each way), the arrays bound (ids the session gave), and the
 * first versions of the address calls. References are ids of the session's
 * tables, as every handle; the rest of the family is generated.
 *
 * The first versions (cuTexRefGetAddress, cuTexRefSetAddress,
 * cuTexRefSetAddress2D: 32-bit CUdeviceptr_v1 and unsigned int sizes) map
 * onto their successors with legacy.c's rules: inputs are zero-extended,
 * and an address that does not fit 32 bits answers
 * CUDA_ERROR_INVALID_VALUE and leaves the output alone.
 */
#include <limits.h>
#include <string.h>

#include "vc_cu_guest.h"
#include "vc_cuda_texref.h"

/* Deprecated, and still what this file serves. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

CUresult CUDAAPI cuTexRefDestroy(CUtexref hTexRef)
{
	struct vc_cu_req_handle rq = {.handle = (uint64_t)(uintptr_t)hTexRef};
	struct vc_cu_prefix none;

	return vc_cu_call(VC_CU_cuTexRefDestroy, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

/* ---- binding addresses ------------------------------------------------------------- */

CUresult CUDAAPI cuTexRefSetAddress_v2(size_t *ByteOffset, CUtexref hTexRef, CUdeviceptr dptr, size_t bytes)
{
	struct vc_cu_req_texref_addr rq = {.texref = (uint64_t)(uintptr_t)hTexRef, .dptr = dptr, .bytes = bytes};
	struct vc_cu_rep_texref_addr rp;
	CUresult rc;

	rc = vc_cu_call(VC_CU_cuTexRefSetAddress_v2, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	/* NULL is allowed: an allocation's own address has offset 0. */
	if (rc == CUDA_SUCCESS && ByteOffset)
		*ByteOffset = (size_t)rp.offset;
	return rc;
}

CUresult CUDAAPI cuTexRefSetAddress2D_v3(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR *desc, CUdeviceptr dptr,
					 size_t Pitch)
{
	struct vc_cu_req_texref_addr rq = {.texref = (uint64_t)(uintptr_t)hTexRef, .dptr = dptr, .pitch = Pitch};
	struct vc_cu_rep_texref_addr rp;

	if (!desc)
		return CUDA_ERROR_INVALID_VALUE;
	rq.width = desc->Width;
	rq.height = desc->Height;
	rq.format = (uint32_t)desc->Format;
	rq.channels = desc->NumChannels;
	return vc_cu_call(VC_CU_cuTexRefSetAddress2D_v3, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
}

/* ---- the border colour ------------------------------------------------------------- */

CUresult CUDAAPI cuTexRefSetBorderColor(CUtexref hTexRef, float *pBorderColor)
{
	struct vc_cu_req_texref_border rq = {.texref = (uint64_t)(uintptr_t)hTexRef};
	struct vc_cu_prefix none;

	if (!pBorderColor)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(rq.color, pBorderColor, sizeof(rq.color));
	return vc_cu_call(VC_CU_cuTexRefSetBorderColor, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

CUresult CUDAAPI cuTexRefGetBorderColor(float *pBorderColor, CUtexref hTexRef)
{
	struct vc_cu_req_handle rq = {.handle = (uint64_t)(uintptr_t)hTexRef};
	struct vc_cu_rep_texref_border rp;
	CUresult rc;

	if (!pBorderColor)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(VC_CU_cuTexRefGetBorderColor, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		memcpy(pBorderColor, rp.color, sizeof(rp.color));
	return rc;
}

/* ---- the arrays bound -------------------------------------------------------------- */

static CUresult bound_array(uint32_t op, uint64_t ref, uint64_t *out)
{
	struct vc_cu_req_handle rq = {.handle = ref};
	struct vc_cu_rep_texref_array rp;
	CUresult rc;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(op, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*out = rp.handle;
	return rc;
}

CUresult CUDAAPI cuTexRefGetArray(CUarray *phArray, CUtexref hTexRef)
{
	uint64_t h;
	CUresult rc = bound_array(VC_CU_cuTexRefGetArray, (uint64_t)(uintptr_t)hTexRef, phArray ? &h : NULL);

	if (rc == CUDA_SUCCESS)
		*phArray = (CUarray)(uintptr_t)h;
	return rc;
}

CUresult CUDAAPI cuTexRefGetMipmappedArray(CUmipmappedArray *phMipmappedArray, CUtexref hTexRef)
{
	uint64_t h;
	CUresult rc = bound_array(VC_CU_cuTexRefGetMipmappedArray, (uint64_t)(uintptr_t)hTexRef,
				  phMipmappedArray ? &h : NULL);

	if (rc == CUDA_SUCCESS)
		*phMipmappedArray = (CUmipmappedArray)(uintptr_t)h;
	return rc;
}

CUresult CUDAAPI cuSurfRefGetArray(CUarray *phArray, CUsurfref hSurfRef)
{
	uint64_t h;
	CUresult rc = bound_array(VC_CU_cuSurfRefGetArray, (uint64_t)(uintptr_t)hSurfRef, phArray ? &h : NULL);

	if (rc == CUDA_SUCCESS)
		*phArray = (CUarray)(uintptr_t)h;
	return rc;
}

/* ---- first versions (legacy.c's rules) ----------------------------------------------- */

CUresult CUDAAPI cuTexRefGetAddress(CUdeviceptr_v1 *pdptr, CUtexref hTexRef)
{
	CUdeviceptr d;
	CUresult rc;

	if (!pdptr)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuTexRefGetAddress_v2(&d, hTexRef)) != CUDA_SUCCESS)
		return rc;
	if (d > UINT_MAX)
		return CUDA_ERROR_INVALID_VALUE; /* no 32-bit address names it */
	*pdptr = (CUdeviceptr_v1)d;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTexRefSetAddress(unsigned int *ByteOffset, CUtexref hTexRef, CUdeviceptr_v1 dptr,
				    unsigned int bytes)
{
	size_t off;
	CUresult rc = cuTexRefSetAddress_v2(&off, hTexRef, (CUdeviceptr)dptr, bytes);

	/* The offset is below the texture alignment: it always fits. */
	if (rc == CUDA_SUCCESS && ByteOffset)
		*ByteOffset = (unsigned int)off;
	return rc;
}

CUresult CUDAAPI cuTexRefSetAddress2D(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR_v1 *desc, CUdeviceptr_v1 dptr,
				      unsigned int Pitch)
{
	CUDA_ARRAY_DESCRIPTOR d;

	if (!desc)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&d, 0, sizeof(d));
	d.Width = desc->Width;
	d.Height = desc->Height;
	d.Format = desc->Format;
	d.NumChannels = desc->NumChannels;
	return cuTexRefSetAddress2D_v3(hTexRef, &d, (CUdeviceptr)dptr, Pitch);
}
