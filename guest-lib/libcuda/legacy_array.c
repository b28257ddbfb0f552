/* SPDX-License-Identifier: MIT */
/*
 * legacy_array.c - the first-version array and array-copy entry points
 * (CUDA_ARRAY_DESCRIPTOR_v1, CUDA_ARRAY3D_DESCRIPTOR_v1, CUDA_MEMCPY3D_v1,
 * unsigned int offsets and sizes, CUdeviceptr_v1), which CUDA 13 headers
 * #define to their _v2 successors but the driver still exports, and the
 * per-thread-stream forms of the first-version stream memory operations.
 *
 * Each maps onto the _v2 call (array.c, copy3d.c, memops.c), which does the
 * work and answers the driver's errors, with legacy.c's 32-bit rules: a
 * 32-bit device pointer or size is zero-extended (a pointer below 4 GiB
 * names no allocation on a 64-bit device, so the copy answers as for any
 * unknown address); a value the old descriptor cannot hold (an array
 * dimension of 4 Gi elements or more) answers CUDA_ERROR_INVALID_VALUE and
 * leaves the output alone.
 *
 * The v1 memory operations (cuStreamWaitValue32 and kin) take the same
 * arguments and CUstreamBatchMemOpParams layout as their _v2 successors;
 * their _ptsz forms are the _v2 calls on the calling thread's default
 * stream, as the per-thread variants mean. The driver serves the v1 forms
 * only where CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 says so (the
 * nvidia module's NVreg_EnableStreamMemOPs; the _v2 forms need no such
 * switch), and answers CUDA_ERROR_NOT_SUPPORTED elsewhere: the host's own
 * attribute, which the guest reports, decides here too.
 */
#include <limits.h>
#include <string.h>

#include "vc_cu_guest.h"

static int fits32(size_t v)
{
	return v <= UINT_MAX;
}

/* ---- arrays -------------------------------------------------------------------- */

CUresult CUDAAPI cuArrayCreate(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR_v1 *pAllocateArray)
{
	V1_CONTEXT();
	CUDA_ARRAY_DESCRIPTOR d;

	if (!pAllocateArray)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&d, 0, sizeof(d));
	d.Width = pAllocateArray->Width;
	d.Height = pAllocateArray->Height;
	d.Format = pAllocateArray->Format;
	d.NumChannels = pAllocateArray->NumChannels;
	return cuArrayCreate_v2(pHandle, &d);
}

CUresult CUDAAPI cuArray3DCreate(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR_v1 *pAllocateArray)
{
	V1_CONTEXT();
	CUDA_ARRAY3D_DESCRIPTOR d;

	if (!pAllocateArray)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&d, 0, sizeof(d));
	d.Width = pAllocateArray->Width;
	d.Height = pAllocateArray->Height;
	d.Depth = pAllocateArray->Depth;
	d.Format = pAllocateArray->Format;
	d.NumChannels = pAllocateArray->NumChannels;
	d.Flags = pAllocateArray->Flags;
	return cuArray3DCreate_v2(pHandle, &d);
}

CUresult CUDAAPI cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR_v1 *pArrayDescriptor, CUarray hArray)
{
	V1_CONTEXT();
	CUDA_ARRAY_DESCRIPTOR d;
	CUresult rc;

	if (!pArrayDescriptor)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuArrayGetDescriptor_v2(&d, hArray)) != CUDA_SUCCESS)
		return rc;
	if (!fits32(d.Width) || !fits32(d.Height))
		return CUDA_ERROR_INVALID_VALUE;
	pArrayDescriptor->Width = (unsigned int)d.Width;
	pArrayDescriptor->Height = (unsigned int)d.Height;
	pArrayDescriptor->Format = d.Format;
	pArrayDescriptor->NumChannels = d.NumChannels;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR_v1 *pArrayDescriptor, CUarray hArray)
{
	V1_CONTEXT();
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUresult rc;

	if (!pArrayDescriptor)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuArray3DGetDescriptor_v2(&d, hArray)) != CUDA_SUCCESS)
		return rc;
	if (!fits32(d.Width) || !fits32(d.Height) || !fits32(d.Depth))
		return CUDA_ERROR_INVALID_VALUE;
	pArrayDescriptor->Width = (unsigned int)d.Width;
	pArrayDescriptor->Height = (unsigned int)d.Height;
	pArrayDescriptor->Depth = (unsigned int)d.Depth;
	pArrayDescriptor->Format = d.Format;
	pArrayDescriptor->NumChannels = d.NumChannels;
	pArrayDescriptor->Flags = d.Flags;
	return CUDA_SUCCESS;
}

/* ---- copies with arrays --------------------------------------------------------------- */

CUresult CUDAAPI cuMemcpyHtoA(CUarray dstArray, unsigned int dstOffset, const void *srcHost, unsigned int ByteCount)
{
	V1_CONTEXT();
	return cuMemcpyHtoA_v2(dstArray, dstOffset, srcHost, ByteCount);
}

CUresult CUDAAPI cuMemcpyAtoH(void *dstHost, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount)
{
	V1_CONTEXT();
	return cuMemcpyAtoH_v2(dstHost, srcArray, srcOffset, ByteCount);
}

CUresult CUDAAPI cuMemcpyHtoAAsync(CUarray dstArray, unsigned int dstOffset, const void *srcHost,
				   unsigned int ByteCount, CUstream hStream)
{
	V1_CONTEXT();
	return cuMemcpyHtoAAsync_v2(dstArray, dstOffset, srcHost, ByteCount, hStream);
}

CUresult CUDAAPI cuMemcpyAtoHAsync(void *dstHost, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount,
				   CUstream hStream)
{
	V1_CONTEXT();
	return cuMemcpyAtoHAsync_v2(dstHost, srcArray, srcOffset, ByteCount, hStream);
}

CUresult CUDAAPI cuMemcpyAtoD(CUdeviceptr_v1 dstDevice, CUarray srcArray, unsigned int srcOffset,
			      unsigned int ByteCount)
{
	V1_CONTEXT();
	return cuMemcpyAtoD_v2(dstDevice, srcArray, srcOffset, ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoA(CUarray dstArray, unsigned int dstOffset, CUdeviceptr_v1 srcDevice,
			      unsigned int ByteCount)
{
	V1_CONTEXT();
	return cuMemcpyDtoA_v2(dstArray, dstOffset, srcDevice, ByteCount);
}

CUresult CUDAAPI cuMemcpyAtoA(CUarray dstArray, unsigned int dstOffset, CUarray srcArray, unsigned int srcOffset,
			      unsigned int ByteCount)
{
	V1_CONTEXT();
	return cuMemcpyAtoA_v2(dstArray, dstOffset, srcArray, srcOffset, ByteCount);
}

/* The old 3D descriptor, field by field, in the current one. */
static void copy3d(CUDA_MEMCPY3D *c, const CUDA_MEMCPY3D_v1 *o)
{
	memset(c, 0, sizeof(*c));
	c->srcXInBytes = o->srcXInBytes;
	c->srcY = o->srcY;
	c->srcZ = o->srcZ;
	c->srcLOD = o->srcLOD;
	c->srcMemoryType = o->srcMemoryType;
	c->srcHost = o->srcHost;
	c->srcDevice = o->srcDevice;
	c->srcArray = o->srcArray;
	c->reserved0 = o->reserved0;
	c->srcPitch = o->srcPitch;
	c->srcHeight = o->srcHeight;
	c->dstXInBytes = o->dstXInBytes;
	c->dstY = o->dstY;
	c->dstZ = o->dstZ;
	c->dstLOD = o->dstLOD;
	c->dstMemoryType = o->dstMemoryType;
	c->dstHost = o->dstHost;
	c->dstDevice = o->dstDevice;
	c->dstArray = o->dstArray;
	c->reserved1 = o->reserved1;
	c->dstPitch = o->dstPitch;
	c->dstHeight = o->dstHeight;
	c->WidthInBytes = o->WidthInBytes;
	c->Height = o->Height;
	c->Depth = o->Depth;
}

CUresult CUDAAPI cuMemcpy3D(const CUDA_MEMCPY3D_v1 *pCopy)
{
	V1_CONTEXT();
	CUDA_MEMCPY3D c;

	if (!pCopy)
		return CUDA_ERROR_INVALID_VALUE;
	copy3d(&c, pCopy);
	return cuMemcpy3D_v2(&c);
}

CUresult CUDAAPI cuMemcpy3DAsync(const CUDA_MEMCPY3D_v1 *pCopy, CUstream hStream)
{
	V1_CONTEXT();
	CUDA_MEMCPY3D c;

	if (!pCopy)
		return CUDA_ERROR_INVALID_VALUE;
	copy3d(&c, pCopy);
	return cuMemcpy3DAsync_v2(&c, hStream);
}

/* ---- the v1 memory operations on the per-thread default stream ------------------------ */

static CUstream per_thread(CUstream s)
{
	return s ? s : CU_STREAM_PER_THREAD;
}

/* CUDA_SUCCESS when the device serves the v1 memory operations (64-bit ones
 * with @wide), else the driver's CUDA_ERROR_NOT_SUPPORTED. */
static CUresult v1_memops(int wide)
{
	int on = 0;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = cuDeviceGetAttribute(&on, wide ? CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1
					  : CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1,
				  vc_cu_current_device());
	if (rc != CUDA_SUCCESS)
		return rc;
	return on ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuStreamWriteValue32_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
	CUresult rc = v1_memops(0);

	return rc != CUDA_SUCCESS ? rc : cuStreamWriteValue32_v2(per_thread(stream), addr, value, flags);
}

CUresult CUDAAPI cuStreamWriteValue64_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags)
{
	CUresult rc = v1_memops(1);

	return rc != CUDA_SUCCESS ? rc : cuStreamWriteValue64_v2(per_thread(stream), addr, value, flags);
}

CUresult CUDAAPI cuStreamWaitValue32_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
	CUresult rc = v1_memops(0);

	return rc != CUDA_SUCCESS ? rc : cuStreamWaitValue32_v2(per_thread(stream), addr, value, flags);
}

CUresult CUDAAPI cuStreamWaitValue64_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags)
{
	CUresult rc = v1_memops(1);

	return rc != CUDA_SUCCESS ? rc : cuStreamWaitValue64_v2(per_thread(stream), addr, value, flags);
}

CUresult CUDAAPI cuStreamBatchMemOp_ptsz(CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray,
					 unsigned int flags)
{
	CUresult rc = v1_memops(0);

	/* 64-bit operations in a batch need the 64-bit switch too. */
	for (unsigned int i = 0; rc == CUDA_SUCCESS && paramArray && i < count; i++)
		if (paramArray[i].operation == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
		    paramArray[i].operation == CU_STREAM_MEM_OP_WRITE_VALUE_64)
			rc = v1_memops(1);
	return rc != CUDA_SUCCESS ? rc : cuStreamBatchMemOp_v2(per_thread(stream), count, paramArray, flags);
}
