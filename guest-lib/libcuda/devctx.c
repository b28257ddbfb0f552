/* SPDX-License-Identifier: MIT */
/*
 * devctx.c - context and device queries whose arguments are arrays or
 * unions (execution affinity, atomic capabilities), and the answers that
 * need no host: the LUID (a Windows adapter's, none on Linux), unified
 * functions (a host code pointer of the worker's means nothing here), the
 * profiler's deprecated initialisation.
 */
#include <string.h>

#include "vc_cu_guest.h"

CUresult CUDAAPI cuCtxGetExecAffinity(CUexecAffinityParam *pExecAffinity, CUexecAffinityType type)
{
	struct vc_cu_req_exec_affinity rq = {.type = (int32_t)type};
	struct vc_cu_rep_exec_affinity rp;
	CUresult rc;

	if (!pExecAffinity)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(VC_CU_cuCtxGetExecAffinity, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS) {
		memset(pExecAffinity, 0, sizeof(*pExecAffinity));
		pExecAffinity->type = (CUexecAffinityType)rp.type;
		pExecAffinity->param.smCount.val = rp.value;
	}
	return rc;
}

static CUresult atomic_caps(uint32_t op, unsigned *caps, const CUatomicOperation *ops, unsigned count, CUdevice src,
			    CUdevice dst)
{
	struct vc_cu_req_atomic_caps rq;
	struct vc_cu_rep_atomic_caps rp;
	CUresult rc;

	if (!caps || !ops || !count)
		return CUDA_ERROR_INVALID_VALUE;
	if (count > VC_CU_ATOMIC_OPS_MAX) /* more than there are operations, several times over */
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	rq.src = src;
	rq.dst = dst;
	rq.count = count;
	rq.p2p = op == VC_CU_cuDeviceGetP2PAtomicCapabilities;
	for (unsigned i = 0; i < count; i++)
		rq.ops[i] = (int32_t)ops[i];
	rc = vc_cu_call(op, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		for (unsigned i = 0; i < count; i++)
			caps[i] = rp.caps[i];
	return rc;
}

CUresult CUDAAPI cuDeviceGetHostAtomicCapabilities(unsigned int *capabilities, const CUatomicOperation *operations,
						   unsigned int count, CUdevice dev)
{
	return atomic_caps(VC_CU_cuDeviceGetHostAtomicCapabilities, capabilities, operations, count, dev, 0);
}

CUresult CUDAAPI cuDeviceGetP2PAtomicCapabilities(unsigned int *capabilities, const CUatomicOperation *operations,
						  unsigned int count, CUdevice srcDevice, CUdevice dstDevice)
{
	return atomic_caps(VC_CU_cuDeviceGetP2PAtomicCapabilities, capabilities, operations, count, srcDevice,
			   dstDevice);
}

CUresult CUDAAPI cuDeviceGetLuid(char *luid, unsigned int *deviceNodeMask, CUdevice dev)
{
	struct vc_cu_state *st = vc_cu_state();

	if (!st)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!luid || !deviceNodeMask)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= st->device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	/* A LUID names a WDDM adapter: Linux drivers have none. */
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuLibraryGetUnifiedFunction(void **fptr, CUlibrary library, const char *symbol)
{
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!fptr || !symbol)
		return CUDA_ERROR_INVALID_VALUE;
	if (!library)
		return CUDA_ERROR_INVALID_HANDLE;
	/* A unified function's pointer is host code in the process that
	 * loaded the library: the server's worker, not this program. */
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuProfilerInitialize(const char *configFile, const char *outputFile, CUoutput_mode outputMode)
{
	(void)configFile, (void)outputFile, (void)outputMode;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	/* The command-line profiler it configured is gone; tools attach with
	 * cuProfilerStart/Stop. Nothing for the host's driver to write. */
	return vc_cu_current() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
