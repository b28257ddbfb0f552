/* SPDX-License-Identifier: MIT */
/*
 * legacy.c - the driver's first-version entry points whose prototypes differ
 * from their successors' (32-bit CUdeviceptr_v1 and unsigned int sizes,
 * CUDA_MEMCPY2D_v1, no capture mode), still exported by the driver for
 * binaries built against CUDA 2.x/3.1 headers and handed out by
 * cuGetProcAddress for those versions. Those with the very same prototype as
 * their successor are generated aliases instead (gen_cuda.py).
 *
 * Each maps onto the current call, which does the work (and answers the
 * driver's errors), with the 32-bit rules of the old ABI:
 *  - inputs: a 32-bit device pointer or size is zero-extended; a pointer
 *    below 4 GiB names no allocation on a 64-bit device, so the current call
 *    answers as for any unknown address;
 *  - a new allocation whose address or pitch does not fit 32 bits is given
 *    back and the call answers CUDA_ERROR_OUT_OF_MEMORY (no memory the old
 *    ABI can name);
 *  - an existing address or size that does not fit (a global's, a pinned
 *    buffer's device pointer, an allocation's range) answers
 *    CUDA_ERROR_INVALID_VALUE and leaves the outputs alone;
 *  - memory totals (cuMemGetInfo, cuDeviceTotalMem) saturate at 4 GiB - 1.
 *  - the context: the driver answers CUDA_ERROR_INVALID_CONTEXT to a
 *    first-version call in a context of a later API version and cannot make
 *    a first-version one (vc_cu_legacy_ctx(), cuCtxCreate below).
 * The 32-bit rules are vcuda's reading of the old ABI on a 64-bit device;
 * docs/driver-coverage.md lists the functions.
 */
#include <limits.h>
#include <string.h>

#include "vc_cu_guest.h"

static int fits32(unsigned long long v)
{
	return v <= UINT_MAX;
}

static unsigned int sat32(size_t v)
{
	return v > UINT_MAX ? UINT_MAX : (unsigned int)v;
}

/* ---- devices and contexts -------------------------------------------------------- */

CUresult CUDAAPI cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
	size_t b;
	CUresult rc;

	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuDeviceTotalMem_v2(&b, dev)) == CUDA_SUCCESS)
		*bytes = sat32(b);
	return rc;
}

/*
 * No first-version (API 3000) context can be made on the GPUs vcuda serves:
 * the driver answers the first-version cuCtxCreate with
 * CUDA_ERROR_OUT_OF_MEMORY (measured on an H100, driver 580; such a context
 * must fit a 32-bit address space), and first-version calls in a context of
 * a later API version with CUDA_ERROR_INVALID_CONTEXT. So both answer so
 * here; the conversions below are what those calls would run.
 */
CUresult vc_cu_legacy_ctx(void)
{
	return CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	(void)flags;
	(void)dev;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	return vc_cu_state() ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_NOT_INITIALIZED;
}

/* ---- memory --------------------------------------------------------------------- */

CUresult CUDAAPI cuMemGetInfo(unsigned int *free, unsigned int *total)
{
	V1_CONTEXT();
	size_t f, t;
	CUresult rc;

	if (!free || !total)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuMemGetInfo_v2(&f, &t)) == CUDA_SUCCESS) {
		*free = sat32(f);
		*total = sat32(t);
	}
	return rc;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	V1_CONTEXT();
	CUdeviceptr d;
	CUresult rc;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuMemAlloc_v2(&d, bytesize)) != CUDA_SUCCESS)
		return rc;
	if (!fits32(d)) {
		cuMemFree_v2(d);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = (CUdeviceptr_v1)d;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
				 unsigned int Height, unsigned int ElementSizeBytes)
{
	V1_CONTEXT();
	CUdeviceptr d;
	size_t pitch;
	CUresult rc;

	if (!dptr || !pPitch)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuMemAllocPitch_v2(&d, &pitch, WidthInBytes, Height, ElementSizeBytes)) != CUDA_SUCCESS)
		return rc;
	if (!fits32(d) || !fits32(pitch)) {
		cuMemFree_v2(d);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = (CUdeviceptr_v1)d;
	*pPitch = (unsigned int)pitch;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr)
{
	V1_CONTEXT();
	return cuMemFree_v2(dptr);
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr_v1 *pbase, unsigned int *psize, CUdeviceptr_v1 dptr)
{
	V1_CONTEXT();
	CUdeviceptr b;
	size_t n;
	CUresult rc;

	if ((rc = cuMemGetAddressRange_v2(&b, &n, dptr)) != CUDA_SUCCESS)
		return rc;
	if (!fits32(b) || !fits32(n))
		return CUDA_ERROR_INVALID_VALUE;
	if (pbase)
		*pbase = (CUdeviceptr_v1)b;
	if (psize)
		*psize = (unsigned int)n;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost(void **pp, unsigned int bytesize)
{
	V1_CONTEXT();
	return cuMemAllocHost_v2(pp, bytesize);
}

CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr_v1 *pdptr, void *p, unsigned int Flags)
{
	V1_CONTEXT();
	CUdeviceptr d;
	CUresult rc;

	if (!pdptr)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuMemHostGetDevicePointer_v2(&d, p, Flags)) != CUDA_SUCCESS)
		return rc;
	if (!fits32(d))
		return CUDA_ERROR_INVALID_VALUE;
	*pdptr = (CUdeviceptr_v1)d;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr_v1 *dptr, unsigned int *bytes, CUmodule hmod, const char *name)
{
	V1_CONTEXT();
	CUdeviceptr d;
	size_t n;
	CUresult rc;

	if ((rc = cuModuleGetGlobal_v2(&d, &n, hmod, name)) != CUDA_SUCCESS)
		return rc;
	if (!fits32(d) || !fits32(n))
		return CUDA_ERROR_INVALID_VALUE;
	if (dptr)
		*dptr = (CUdeviceptr_v1)d;
	if (bytes)
		*bytes = (unsigned int)n;
	return CUDA_SUCCESS;
}

/* ---- copies and memsets -------------------------------------------------------------- */

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount)
{
	V1_CONTEXT();
	return cuMemcpyHtoD_v2(dstDevice, srcHost, ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
	V1_CONTEXT();
	return cuMemcpyDtoH_v2(dstHost, srcDevice, ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
	V1_CONTEXT();
	return cuMemcpyDtoD_v2(dstDevice, srcDevice, ByteCount);
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,
				   CUstream hStream)
{
	V1_CONTEXT();
	return cuMemcpyHtoDAsync_v2(dstDevice, srcHost, ByteCount, hStream);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
				   CUstream hStream)
{
	V1_CONTEXT();
	return cuMemcpyDtoHAsync_v2(dstHost, srcDevice, ByteCount, hStream);
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
				   CUstream hStream)
{
	V1_CONTEXT();
	return cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, hStream);
}

/* The old descriptor, field by field, in the current one. */
static void copy2d(CUDA_MEMCPY2D *c, const CUDA_MEMCPY2D_v1 *o)
{
	memset(c, 0, sizeof(*c));
	c->srcXInBytes = o->srcXInBytes;
	c->srcY = o->srcY;
	c->srcMemoryType = o->srcMemoryType;
	c->srcHost = o->srcHost;
	c->srcDevice = o->srcDevice;
	c->srcArray = o->srcArray;
	c->srcPitch = o->srcPitch;
	c->dstXInBytes = o->dstXInBytes;
	c->dstY = o->dstY;
	c->dstMemoryType = o->dstMemoryType;
	c->dstHost = o->dstHost;
	c->dstDevice = o->dstDevice;
	c->dstArray = o->dstArray;
	c->dstPitch = o->dstPitch;
	c->WidthInBytes = o->WidthInBytes;
	c->Height = o->Height;
}

CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D_v1 *pCopy)
{
	V1_CONTEXT();
	CUDA_MEMCPY2D c;

	if (!pCopy)
		return CUDA_ERROR_INVALID_VALUE;
	copy2d(&c, pCopy);
	return cuMemcpy2D_v2(&c);
}

CUresult CUDAAPI cuMemcpy2DUnaligned(const CUDA_MEMCPY2D_v1 *pCopy)
{
	V1_CONTEXT();
	CUDA_MEMCPY2D c;

	if (!pCopy)
		return CUDA_ERROR_INVALID_VALUE;
	copy2d(&c, pCopy);
	return cuMemcpy2DUnaligned_v2(&c);
}

CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D_v1 *pCopy, CUstream hStream)
{
	V1_CONTEXT();
	CUDA_MEMCPY2D c;

	if (!pCopy)
		return CUDA_ERROR_INVALID_VALUE;
	copy2d(&c, pCopy);
	return cuMemcpy2DAsync_v2(&c, hStream);
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N)
{
	V1_CONTEXT();
	return cuMemsetD8_v2(dstDevice, uc, N);
}

CUresult CUDAAPI cuMemsetD16(CUdeviceptr_v1 dstDevice, unsigned short us, unsigned int N)
{
	V1_CONTEXT();
	return cuMemsetD16_v2(dstDevice, us, N);
}

CUresult CUDAAPI cuMemsetD32(CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N)
{
	V1_CONTEXT();
	return cuMemsetD32_v2(dstDevice, ui, N);
}

CUresult CUDAAPI cuMemsetD2D8(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned char uc,
			      unsigned int Width, unsigned int Height)
{
	V1_CONTEXT();
	return cuMemsetD2D8_v2(dstDevice, dstPitch, uc, Width, Height);
}

CUresult CUDAAPI cuMemsetD2D16(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned short us,
			       unsigned int Width, unsigned int Height)
{
	V1_CONTEXT();
	return cuMemsetD2D16_v2(dstDevice, dstPitch, us, Width, Height);
}

CUresult CUDAAPI cuMemsetD2D32(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned int ui,
			       unsigned int Width, unsigned int Height)
{
	V1_CONTEXT();
	return cuMemsetD2D32_v2(dstDevice, dstPitch, ui, Width, Height);
}

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
