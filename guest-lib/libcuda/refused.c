/* SPDX-License-Identifier: MIT */
/*
 * refused.c - driver families a guest cannot use, and why (each entry in
 * tools/gen/cuda_api.py carries the reason):
 *
 *  - graphics interop (cuGraphics*): a resource is registered from an
 *    OpenGL, EGL or VDPAU object of the calling process, and no such context
 *    can reach the host's GPU from a guest; so no registered resource can
 *    exist, and every call answers what the driver answers for a handle that
 *    is not one;
 *  - external memory and semaphores: importing (refused, generated stubs)
 *    would hand the host driver a file descriptor or handle of the guest's;
 *    so no imported object can exist, and the calls on them answer what the
 *    driver answers for an invalid handle;
 *  - multicast objects and process checkpoints are refused by generated
 *    stubs (vc_cu_refused() here says why once under VCUDA_DEBUG); a
 *    device's multicast attribute answers 0 (vc_cu_refused_attrs()).
 *
 * The guest-local rules, the same for each call: before cuInit,
 * CUDA_ERROR_NOT_INITIALIZED; a NULL output or array the call needs,
 * CUDA_ERROR_INVALID_VALUE; otherwise the handle is not one the driver
 * made, CUDA_ERROR_INVALID_HANDLE.
 */
#include <stdio.h>

#include "vc_cu_guest.h"

/* Names already explained under VCUDA_DEBUG (the stubs' string literals). */
#define SAID_MAX 64
static const char *g_said[SAID_MAX];

int vc_cu_refused(const char *name, const char *reason, int err)
{
	const char *ename = NULL;

	if (!vc_cu_debug())
		return err;
	for (int i = 0; i < SAID_MAX; i++) {
		const char *seen = __atomic_load_n(&g_said[i], __ATOMIC_RELAXED);

		if (seen == name)
			return err;
		if (!seen) {
			const char *none = NULL;

			/* A slot per name; a lost race only says it twice. */
			if (!__atomic_compare_exchange_n(&g_said[i], &none, name, 0, __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED) && none == name)
				return err;
			break;
		}
	}
	cuGetErrorName((CUresult)err, &ename);
	fprintf(stderr, "vcuda: %s is refused in a guest (%s); it answers %s\n", name, reason,
		ename ? ename : "an error");
	return err;
}

void vc_cu_refused_attrs(int32_t *attrs, int count)
{
	/* A device says it has no multicast: its calls are refused here, and
	 * NCCL (NVLS), PyTorch's symmetric memory and vLLM ask this attribute
	 * before they make a multicast object, whose refusal would end them
	 * instead of taking them down their other path. */
	if ((int)CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED < count)
		attrs[CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED] = 0;
}

/* The common rule: initialised, @need (the pointers the call needs) set. */
static CUresult no_handle(int need)
{
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!need)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_ERROR_INVALID_HANDLE;
}

/* ---- graphics interop: no resource can be registered ------------------------- */

CUresult CUDAAPI cuGraphicsUnregisterResource(CUgraphicsResource resource)
{
	(void)resource;
	return no_handle(1);
}

CUresult CUDAAPI cuGraphicsSubResourceGetMappedArray(CUarray *pArray, CUgraphicsResource resource,
						     unsigned int arrayIndex, unsigned int mipLevel)
{
	(void)resource, (void)arrayIndex, (void)mipLevel;
	return no_handle(pArray != NULL);
}

CUresult CUDAAPI cuGraphicsResourceGetMappedMipmappedArray(CUmipmappedArray *pMipmappedArray,
							   CUgraphicsResource resource)
{
	(void)resource;
	return no_handle(pMipmappedArray != NULL);
}

CUresult CUDAAPI cuGraphicsResourceGetMappedPointer_v2(CUdeviceptr *pDevPtr, size_t *pSize,
						       CUgraphicsResource resource)
{
	/* Both outputs are optional natively. */
	(void)pDevPtr, (void)pSize, (void)resource;
	return no_handle(1);
}

CUresult CUDAAPI cuGraphicsResourceGetMappedPointer(CUdeviceptr_v1 *pDevPtr, unsigned int *pSize,
						    CUgraphicsResource resource)
{
	(void)pDevPtr, (void)pSize, (void)resource;
	return no_handle(1);
}

CUresult CUDAAPI cuGraphicsResourceSetMapFlags_v2(CUgraphicsResource resource, unsigned int flags)
{
	(void)resource, (void)flags;
	return no_handle(1);
}

CUresult CUDAAPI cuGraphicsMapResources(unsigned int count, CUgraphicsResource *resources, CUstream hStream)
{
	(void)hStream;
	return no_handle(count && resources);
}

CUresult CUDAAPI cuGraphicsUnmapResources(unsigned int count, CUgraphicsResource *resources, CUstream hStream)
{
	(void)hStream;
	return no_handle(count && resources);
}

/* ---- external memory and semaphores: none can be imported -------------------- */

CUresult CUDAAPI cuDestroyExternalMemory(CUexternalMemory extMem)
{
	(void)extMem;
	return no_handle(1);
}

CUresult CUDAAPI cuDestroyExternalSemaphore(CUexternalSemaphore extSem)
{
	(void)extSem;
	return no_handle(1);
}

CUresult CUDAAPI cuExternalMemoryGetMappedBuffer(CUdeviceptr *devPtr, CUexternalMemory extMem,
						 const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *bufferDesc)
{
	(void)extMem;
	return no_handle(devPtr && bufferDesc);
}

CUresult CUDAAPI cuExternalMemoryGetMappedMipmappedArray(CUmipmappedArray *mipmap, CUexternalMemory extMem,
							 const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC *mipmapDesc)
{
	(void)extMem;
	return no_handle(mipmap && mipmapDesc);
}

/* No semaphore named: nothing to signal or wait for. */
static CUresult semaphores(const CUexternalSemaphore *sems, const void *params, unsigned int n)
{
	if (vc_cu_state() && n == 0)
		return CUDA_SUCCESS;
	return no_handle(sems && params);
}

CUresult CUDAAPI cuSignalExternalSemaphoresAsync(const CUexternalSemaphore *extSemArray,
						 const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray,
						 unsigned int numExtSems, CUstream stream)
{
	(void)stream;
	return semaphores(extSemArray, paramsArray, numExtSems);
}

CUresult CUDAAPI cuWaitExternalSemaphoresAsync(const CUexternalSemaphore *extSemArray,
					       const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray,
					       unsigned int numExtSems, CUstream stream)
{
	(void)stream;
	return semaphores(extSemArray, paramsArray, numExtSems);
}
