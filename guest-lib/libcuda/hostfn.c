/* SPDX-License-Identifier: MIT */
/*
 * hostfn.c - host functions in streams (cuLaunchHostFunc, cuStreamAddCallback).
 *
 * The callback runs in the guest process, after all earlier work in the
 * stream and before any later work. This version gets that order by waiting
 * for the stream and running the callback on the calling thread before
 * returning, so the call is not asynchronous: a program that makes a
 * callback wait for something its own thread does after enqueueing it would
 * block. The asynchronous form (a host callback that holds the stream until
 * the guest's callback thread has run it) needs a host-to-guest callback queue
 * in the shared region; see docs/ARCHITECTURE.md, "Next steps".
 */
#include "vc_cu_guest.h"

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	CUresult rc;

	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	rc = cuStreamSynchronize(hStream);
	if (rc != CUDA_SUCCESS)
		return rc;
	fn(userData);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
				     unsigned int flags)
{
	CUresult rc;

	if (!callback || flags)
		return CUDA_ERROR_INVALID_VALUE;
	/* A callback is told the stream's status instead of failing the call. */
	rc = cuStreamSynchronize(hStream);
	callback(hStream, rc, userData);
	return CUDA_SUCCESS;
}
