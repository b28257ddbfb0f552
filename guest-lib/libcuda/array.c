/* SPDX-License-Identifier: MIT */
/*
 * array.c - CUDA arrays, mipmapped arrays, texture and surface objects: the
 * guest's side of host-backend/cuda/array.c. Array handles are the session's
 * ids (as every handle); texture and surface objects are the driver's own
 * values, which kernels take as parameters. Resource descriptors travel as
 * they are: the handles in them are already ids. Copies with arrays are in
 * copy3d.c.
 */
#include <string.h>

#include "vc_cu_guest.h"
#include "vc_cuda_array.h"

static CUresult create(uint32_t kind, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels, uint64_t *handle)
{
	struct vc_cu_req_array_create rq = {.width = d->Width, .height = d->Height, .depth = d->Depth,
					    .format = (uint32_t)d->Format, .channels = d->NumChannels,
					    .flags = d->Flags, .levels = levels, .kind = kind};
	struct vc_cu_rep_array rp;
	uint32_t op = kind == VC_CU_ARR_2D ? VC_CU_cuArrayCreate_v2
		      : kind == VC_CU_ARR_3D ? VC_CU_cuArray3DCreate_v2 : VC_CU_cuMipmappedArrayCreate;
	CUresult rc;

	rc = vc_cu_call(op, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*handle = rp.handle;
	return rc;
}

CUresult CUDAAPI cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *p)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	uint64_t h;
	CUresult rc;

	if (!pHandle || !p)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&d, 0, sizeof(d));
	d.Width = p->Width;
	d.Height = p->Height;
	d.Format = p->Format;
	d.NumChannels = p->NumChannels;
	if ((rc = create(VC_CU_ARR_2D, &d, 0, &h)) == CUDA_SUCCESS)
		*pHandle = (CUarray)(uintptr_t)h;
	return rc;
}

CUresult CUDAAPI cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *p)
{
	uint64_t h;
	CUresult rc;

	if (!pHandle || !p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = create(VC_CU_ARR_3D, p, 0, &h)) == CUDA_SUCCESS)
		*pHandle = (CUarray)(uintptr_t)h;
	return rc;
}

CUresult CUDAAPI cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *p,
					unsigned int numMipmapLevels)
{
	uint64_t h;
	CUresult rc;

	if (!pHandle || !p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = create(VC_CU_ARR_MIPMAP, p, numMipmapLevels, &h)) == CUDA_SUCCESS)
		*pHandle = (CUmipmappedArray)(uintptr_t)h;
	return rc;
}

static CUresult on_handle(uint32_t op, uint64_t handle, void *rep, size_t replen)
{
	struct vc_cu_req_handle rq = {.handle = handle};
	struct vc_cu_prefix none;

	return vc_cu_call(op, &rq, sizeof(rq), NULL, 0, rep ? rep : &none, rep ? replen : 0, NULL, 0, 0);
}

CUresult CUDAAPI cuArrayDestroy(CUarray hArray)
{
	return on_handle(VC_CU_cuArrayDestroy, (uint64_t)(uintptr_t)hArray, NULL, 0);
}

CUresult CUDAAPI cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
	return on_handle(VC_CU_cuMipmappedArrayDestroy, (uint64_t)(uintptr_t)hMipmappedArray, NULL, 0);
}

static CUresult sub(uint32_t op, CUarray *out, uint64_t parent, unsigned idx)
{
	struct vc_cu_req_array_sub rq = {.parent = parent, .index = idx};
	struct vc_cu_rep_array rp;
	CUresult rc;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(op, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*out = (CUarray)(uintptr_t)rp.handle;
	return rc;
}

CUresult CUDAAPI cuArrayGetPlane(CUarray *pPlaneArray, CUarray hArray, unsigned int planeIdx)
{
	return sub(VC_CU_cuArrayGetPlane, pPlaneArray, (uint64_t)(uintptr_t)hArray, planeIdx);
}

CUresult CUDAAPI cuMipmappedArrayGetLevel(CUarray *pLevelArray, CUmipmappedArray hMipmappedArray, unsigned int level)
{
	return sub(VC_CU_cuMipmappedArrayGetLevel, pLevelArray, (uint64_t)(uintptr_t)hMipmappedArray, level);
}

static CUresult sparse(uint32_t op, CUDA_ARRAY_SPARSE_PROPERTIES *out, uint64_t h)
{
	struct vc_cu_rep_sparse rp;
	CUresult rc;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = on_handle(op, h, &rp, sizeof(rp))) == CUDA_SUCCESS)
		memcpy(out, rp.props, sizeof(*out));
	return rc;
}

CUresult CUDAAPI cuArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES *sparseProperties, CUarray array)
{
	return sparse(VC_CU_cuArrayGetSparseProperties, sparseProperties, (uint64_t)(uintptr_t)array);
}

CUresult CUDAAPI cuMipmappedArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES *sparseProperties,
						     CUmipmappedArray mipmap)
{
	return sparse(VC_CU_cuMipmappedArrayGetSparseProperties, sparseProperties, (uint64_t)(uintptr_t)mipmap);
}

/* ---- texture and surface objects ------------------------------------------------------ */

static CUresult obj_create(uint32_t op, unsigned long long *out, const CUDA_RESOURCE_DESC *res,
			   const CUDA_TEXTURE_DESC *tex, const CUDA_RESOURCE_VIEW_DESC *view)
{
	struct vc_cu_req_texobj_create rq;
	struct vc_cu_rep_texobj rp;
	CUresult rc;

	if (!out || !res)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	memcpy(rq.res, res, sizeof(rq.res));
	if (tex)
		memcpy(rq.tex, tex, sizeof(rq.tex));
	if (view) {
		memcpy(rq.view, view, sizeof(rq.view));
		rq.has_view = 1;
	}
	rc = vc_cu_call(op, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*out = rp.value;
	return rc;
}

CUresult CUDAAPI cuTexObjectCreate(CUtexObject *pTexObject, const CUDA_RESOURCE_DESC *pResDesc,
				   const CUDA_TEXTURE_DESC *pTexDesc, const CUDA_RESOURCE_VIEW_DESC *pResViewDesc)
{
	if (!pTexDesc)
		return CUDA_ERROR_INVALID_VALUE;
	return obj_create(VC_CU_cuTexObjectCreate, pTexObject, pResDesc, pTexDesc, pResViewDesc);
}

CUresult CUDAAPI cuSurfObjectCreate(CUsurfObject *pSurfObject, const CUDA_RESOURCE_DESC *pResDesc)
{
	return obj_create(VC_CU_cuSurfObjectCreate, pSurfObject, pResDesc, NULL, NULL);
}

CUresult CUDAAPI cuTexObjectDestroy(CUtexObject texObject)
{
	return on_handle(VC_CU_cuTexObjectDestroy, texObject, NULL, 0);
}

CUresult CUDAAPI cuSurfObjectDestroy(CUsurfObject surfObject)
{
	return on_handle(VC_CU_cuSurfObjectDestroy, surfObject, NULL, 0);
}

static CUresult obj_get(uint32_t op, unsigned long long obj, void *out, size_t n)
{
	struct vc_cu_rep_texobj_desc rp;
	CUresult rc;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = on_handle(op, obj, &rp, sizeof(rp))) == CUDA_SUCCESS)
		memcpy(out, rp.desc, n);
	return rc;
}

CUresult CUDAAPI cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUtexObject texObject)
{
	return obj_get(VC_CU_cuTexObjectGetResourceDesc, texObject, pResDesc, sizeof(*pResDesc));
}

CUresult CUDAAPI cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *pTexDesc, CUtexObject texObject)
{
	return obj_get(VC_CU_cuTexObjectGetTextureDesc, texObject, pTexDesc, sizeof(*pTexDesc));
}

CUresult CUDAAPI cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC *pResViewDesc, CUtexObject texObject)
{
	return obj_get(VC_CU_cuTexObjectGetResourceViewDesc, texObject, pResViewDesc, sizeof(*pResViewDesc));
}

CUresult CUDAAPI cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUsurfObject surfObject)
{
	return obj_get(VC_CU_cuSurfObjectGetResourceDesc, surfObject, pResDesc, sizeof(*pResDesc));
}
