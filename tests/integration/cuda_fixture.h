/* SPDX-License-Identifier: MIT */
/*
 * cuda_fixture.h - the Check fixture the driver-API suites share: before each
 * test, device 0's primary context, retained and current (g_ctx); after it,
 * released. CK() asserts a call returned CUDA_SUCCESS. For test programs
 * only: each includes it once.
 */
#ifndef VC_TESTS_CUDA_FIXTURE_H
#define VC_TESTS_CUDA_FIXTURE_H

#include <check.h>
#include <cuda.h>

#define CK(x) ck_assert_int_eq((x), CUDA_SUCCESS)

static CUcontext g_ctx;

static void setup(void)
{
	CUdevice d;

	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&g_ctx, d));
	CK(cuCtxSetCurrent(g_ctx));
}

static void teardown(void)
{
	CK(cuDevicePrimaryCtxRelease(0));
}

#endif /* VC_TESTS_CUDA_FIXTURE_H */
