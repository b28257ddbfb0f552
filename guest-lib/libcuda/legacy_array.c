/* SPDX-License-Identifier: MIT */
/*
 * legacy_array.c - the per-thread-stream forms of the first-version stream
 * memory operations (the first-version array and array-copy names answer in
 * legacy.c, with the other first-version calls).
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
#include "vc_cu_guest.h"

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
