/* SPDX-License-Identifier: MIT */
/*
 * legacy.c - the driver's first-version entry points whose prototypes differ
 * from their successors' (32-bit CUdeviceptr_v1 and unsigned int sizes,
 * CUDA_MEMCPY2D_v1, CUDA_ARRAY_DESCRIPTOR_v1, CUDA_MEMCPY3D_v1, no capture
 * mode), still exported by the driver for binaries built against CUDA
 * 2.x/3.1 headers and handed out by cuGetProcAddress for those versions.
 * Those with the very same prototype as their successor are generated
 * aliases instead (gen_cuda.py); the first-version stream memory operations
 * are in legacy_array.c.
 *
 * The first-version (API 3000) calls that work in a context run in none the
 * driver makes today: it answers the first-version cuCtxCreate with
 * CUDA_ERROR_OUT_OF_MEMORY (such a context must fit a 32-bit address space)
 * and those calls, in a context of a later API version, with
 * CUDA_ERROR_INVALID_CONTEXT (both measured on an H100, driver 580). They
 * answer so here, whatever their arguments. cuDeviceTotalMem needs no
 * context: it saturates at 4 GiB - 1. docs/driver-coverage.md lists the
 * functions.
 */
#include <limits.h>

#include "vc_cu_guest.h"

/* ---- devices and contexts -------------------------------------------------------- */

CUresult CUDAAPI cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
	size_t b;
	CUresult rc;

	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuDeviceTotalMem_v2(&b, dev)) == CUDA_SUCCESS)
		*bytes = b > UINT_MAX ? UINT_MAX : (unsigned int)b;
	return rc;
}

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	(void)flags;
	(void)dev;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	return vc_cu_state() ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_NOT_INITIALIZED;
}

/* ---- memory, copies, memsets, arrays: no first-version context exists ------------- */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter" /* the driver reads none of them */
#define NO_V1_CONTEXT(name, ...)                 \
	CUresult CUDAAPI name(__VA_ARGS__)       \
	{                                        \
		return CUDA_ERROR_INVALID_CONTEXT; \
	}

NO_V1_CONTEXT(cuMemGetInfo, unsigned int *free, unsigned int *total)
NO_V1_CONTEXT(cuMemAlloc, CUdeviceptr_v1 *dptr, unsigned int bytesize)
NO_V1_CONTEXT(cuMemAllocPitch, CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes, unsigned int Height, unsigned int ElementSizeBytes)
NO_V1_CONTEXT(cuMemFree, CUdeviceptr_v1 dptr)
NO_V1_CONTEXT(cuMemGetAddressRange, CUdeviceptr_v1 *pbase, unsigned int *psize, CUdeviceptr_v1 dptr)
NO_V1_CONTEXT(cuMemAllocHost, void **pp, unsigned int bytesize)
NO_V1_CONTEXT(cuMemHostGetDevicePointer, CUdeviceptr_v1 *pdptr, void *p, unsigned int Flags)
NO_V1_CONTEXT(cuModuleGetGlobal, CUdeviceptr_v1 *dptr, unsigned int *bytes, CUmodule hmod, const char *name)
NO_V1_CONTEXT(cuMemcpyHtoD, CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount)
NO_V1_CONTEXT(cuMemcpyDtoH, void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
NO_V1_CONTEXT(cuMemcpyDtoD, CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
NO_V1_CONTEXT(cuMemcpyHtoDAsync, CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount, CUstream hStream)
NO_V1_CONTEXT(cuMemcpyDtoHAsync, void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount, CUstream hStream)
NO_V1_CONTEXT(cuMemcpyDtoDAsync, CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount, CUstream hStream)
NO_V1_CONTEXT(cuMemcpy2D, const CUDA_MEMCPY2D_v1 *pCopy)
NO_V1_CONTEXT(cuMemcpy2DUnaligned, const CUDA_MEMCPY2D_v1 *pCopy)
NO_V1_CONTEXT(cuMemcpy2DAsync, const CUDA_MEMCPY2D_v1 *pCopy, CUstream hStream)
NO_V1_CONTEXT(cuMemsetD8, CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N)
NO_V1_CONTEXT(cuMemsetD16, CUdeviceptr_v1 dstDevice, unsigned short us, unsigned int N)
NO_V1_CONTEXT(cuMemsetD32, CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N)
NO_V1_CONTEXT(cuMemsetD2D8, CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned char uc, unsigned int Width, unsigned int Height)
NO_V1_CONTEXT(cuMemsetD2D16, CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned short us, unsigned int Width, unsigned int Height)
NO_V1_CONTEXT(cuMemsetD2D32, CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned int ui, unsigned int Width, unsigned int Height)
NO_V1_CONTEXT(cuArrayCreate, CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR_v1 *pAllocateArray)
NO_V1_CONTEXT(cuArray3DCreate, CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR_v1 *pAllocateArray)
NO_V1_CONTEXT(cuArrayGetDescriptor, CUDA_ARRAY_DESCRIPTOR_v1 *pArrayDescriptor, CUarray hArray)
NO_V1_CONTEXT(cuArray3DGetDescriptor, CUDA_ARRAY3D_DESCRIPTOR_v1 *pArrayDescriptor, CUarray hArray)
NO_V1_CONTEXT(cuMemcpyHtoA, CUarray dstArray, unsigned int dstOffset, const void *srcHost, unsigned int ByteCount)
NO_V1_CONTEXT(cuMemcpyAtoH, void *dstHost, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount)
NO_V1_CONTEXT(cuMemcpyHtoAAsync, CUarray dstArray, unsigned int dstOffset, const void *srcHost, unsigned int ByteCount, CUstream hStream)
NO_V1_CONTEXT(cuMemcpyAtoHAsync, void *dstHost, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount, CUstream hStream)
NO_V1_CONTEXT(cuMemcpyAtoD, CUdeviceptr_v1 dstDevice, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount)
NO_V1_CONTEXT(cuMemcpyDtoA, CUarray dstArray, unsigned int dstOffset, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
NO_V1_CONTEXT(cuMemcpyAtoA, CUarray dstArray, unsigned int dstOffset, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount)
NO_V1_CONTEXT(cuMemcpy3D, const CUDA_MEMCPY3D_v1 *pCopy)
NO_V1_CONTEXT(cuMemcpy3DAsync, const CUDA_MEMCPY3D_v1 *pCopy, CUstream hStream)

#undef NO_V1_CONTEXT
#pragma GCC diagnostic pop

/* ---- stream capture: the first forms, before capture modes ------------------------ */

CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
	/* CUDA 10.0 captured in what 10.1 named the global mode. */
	return cuStreamBeginCapture_v2(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
					cuuint64_t *id_out)
{
	return cuStreamGetCaptureInfo_v2(hStream, captureStatus_out, id_out, NULL, NULL, NULL);
}
