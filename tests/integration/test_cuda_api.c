/* SPDX-License-Identifier: MIT */
/*
 * test_cuda_api.c - the guest libcuda.so.1 through a running vcuda-server,
 * driver API by driver API (Check; each test forks, so each is a fresh
 * process and session). With the CI stand-in behind the server it covers
 * everything but kernel results: device facts, contexts, memory and copies of
 * every size class, memsets, modules, launches, streams, events, pointer
 * attributes, cuGetProcAddress, error reporting. On a GPU the same tests run
 * against the real driver.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_fixture.h"
#include "vc_time.h"

/* Exported by every libcuda.so.1; cuda.h declares it only for the driver's own build. */
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream);

START_TEST(device_facts)
{
	int n = 0, v = 0, major = 0, drv = 0;
	char name[128];
	size_t mem = 0;
	CUuuid u;

	CK(cuDeviceGetCount(&n));
	ck_assert_int_ge(n, 1);
	CK(cuDriverGetVersion(&drv));
	ck_assert_int_ge(drv, 13000);
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
	ck_assert_int_eq(v, 32);
	CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
	ck_assert_int_ge(major, 7);
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
	ck_assert_int_eq(v, 1024);
	/* the strings end where the driver ended them, whatever the buffer
	 * held (the VM's guest saw "...HBM3V": the terminator was not sent) */
	memset(name, 'V', sizeof(name));
	CK(cuDeviceGetName(name, sizeof(name), 0));
	ck_assert_int_gt(strlen(name), 0);
	ck_assert_uint_lt(strlen(name), sizeof(name));
	ck_assert_int_ne(name[strlen(name) - 1], 'V');
	{
		char bus[64];

		memset(bus, 'V', sizeof(bus));
		CK(cuDeviceGetPCIBusId(bus, sizeof(bus), 0));
		ck_assert_uint_lt(strlen(bus), sizeof(bus));
		ck_assert_int_ne(bus[strlen(bus) - 1], 'V');
	}
	CK(cuDeviceTotalMem(&mem, 0));
	ck_assert_uint_gt(mem, 0);
	CK(cuDeviceGetUuid(&u, 0));
	ck_assert_int_eq(cuDeviceGetAttribute(&v, (CUdevice_attribute)100000, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7), CUDA_ERROR_INVALID_DEVICE);
}
END_TEST

START_TEST(contexts)
{
	CUcontext c = NULL, cur = NULL, popped = NULL;
	CUdevice d;
	unsigned flags;
	int active;

	CK(cuCtxGetCurrent(&cur));
	ck_assert_ptr_eq(cur, g_ctx);
	CK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	ck_assert_int_eq(active, 1);
	CK(cuCtxCreate(&c, NULL, 0, 0));
	ck_assert_ptr_ne(c, g_ctx);
	CK(cuCtxGetCurrent(&cur));
	ck_assert_ptr_eq(cur, c);
	CK(cuCtxGetDevice(&d));
	ck_assert_int_eq(d, 0);
	CK(cuCtxPopCurrent(&popped));
	ck_assert_ptr_eq(popped, c);
	CK(cuCtxPushCurrent(c));
	CK(cuCtxSynchronize());
	CK(cuCtxDestroy(c));
	/* A destroyed context is an error, not a crash. */
	ck_assert_int_eq(cuCtxSetCurrent(c), CUDA_SUCCESS);
	ck_assert_int_eq(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
	CK(cuCtxSetCurrent(g_ctx));
}
END_TEST

static void roundtrip(size_t n)
{
	uint8_t *a = malloc(n), *b = malloc(n);
	CUdeviceptr d;

	for (size_t i = 0; i < n; i++)
		a[i] = (uint8_t)(i * 131 + n);
	memset(b, 0, n);
	CK(cuMemAlloc(&d, n));
	CK(cuMemcpyHtoD(d, a, n));
	CK(cuMemcpyDtoH(b, d, n));
	ck_assert_int_eq(memcmp(a, b, n), 0);
	CK(cuMemFree(d));
	free(a);
	free(b);
}

START_TEST(copies_every_size_class)
{
	/* inline in the ring, inline in the reply, one arena piece, pipelined */
	size_t sizes[] = {1, 7, 4096, 4097, 7000, 65536, 1 << 20, (5 << 20) + 3, 64 << 20, (96 << 20) + 4099};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		roundtrip(sizes[i]);
}
END_TEST

/* A large copy (through the arena on several threads) that runs past its
 * allocation fails as natively, keeps the bytes it should not have
 * touched, and the next copies work. */
START_TEST(large_copy_past_the_allocation_fails)
{
	size_t n = 48 << 20;
	uint8_t *b = malloc(2 * n);
	CUdeviceptr d;

	ck_assert_ptr_nonnull(b);
	CK(cuMemAlloc(&d, n));
	CK(cuMemsetD8(d, 0x11, n));
	memset(b, 0x77, 2 * n);
	ck_assert_int_eq(cuMemcpyDtoH(b, d, 2 * n), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemcpyDtoH(b, d, n));
	ck_assert_uint_eq(b[0], 0x11);
	ck_assert_uint_eq(b[n - 1], 0x11);
	ck_assert_uint_eq(b[2 * n - 1], 0x77);
	/* The other way (written into the arena on several threads). */
	ck_assert_int_eq(cuMemcpyHtoD(d, b, 2 * n), CUDA_ERROR_INVALID_VALUE);
	memset(b, 0x22, n);
	CK(cuMemcpyHtoD(d, b, n));
	memset(b, 0, n);
	CK(cuMemcpyDtoH(b, d, n));
	ck_assert_uint_eq(b[0], 0x22);
	ck_assert_uint_eq(b[n - 1], 0x22);
	CK(cuMemFree(d));
	free(b);
	roundtrip(64 << 20);
}
END_TEST

START_TEST(async_copies_dtod_memsets)
{
	size_t n = 3 << 20;
	uint8_t *a = malloc(n), *b = malloc(n);
	CUdeviceptr d, e;
	CUstream s;
	uint32_t w[4];

	for (size_t i = 0; i < n; i++)
		a[i] = (uint8_t)(i ^ (i >> 8));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc(&d, n));
	CK(cuMemAlloc(&e, n));
	CK(cuMemcpyHtoDAsync(d, a, n, s));
	CK(cuMemcpyDtoDAsync(e, d, n, s));
	CK(cuMemcpyDtoHAsync(b, e, n, s));
	CK(cuStreamSynchronize(s));
	ck_assert_int_eq(memcmp(a, b, n), 0);
	CK(cuMemsetD8Async(e, 0xab, 16, s));
	CK(cuMemsetD16Async(e + 16, 0x1234, 8, s));
	CK(cuMemsetD32(e + 32, 0xdeadbeef, 4));
	CK(cuMemcpyDtoH(b, e, 48));
	ck_assert_uint_eq(b[0], 0xab);
	ck_assert_uint_eq(b[15], 0xab);
	ck_assert_uint_eq(b[16], 0x34);
	ck_assert_uint_eq(b[17], 0x12);
	memcpy(w, b + 32, 16);
	ck_assert_uint_eq(w[0], 0xdeadbeef);
	ck_assert_uint_eq(w[3], 0xdeadbeef);
	/* 2D: 3 rows of 5 bytes, 16 apart */
	CK(cuMemsetD8(e, 0, 64));
	CK(cuMemsetD2D8(e, 16, 0x42, 5, 3));
	CK(cuMemcpyDtoH(b, e, 48));
	ck_assert_uint_eq(b[0], 0x42);
	ck_assert_uint_eq(b[4], 0x42);
	ck_assert_uint_eq(b[5], 0);
	ck_assert_uint_eq(b[36], 0x42);
	ck_assert_uint_eq(b[37], 0);
	/* unified copies: the library tells host from device */
	CK(cuMemcpy((CUdeviceptr)(uintptr_t)b, d, 4096));
	ck_assert_int_eq(memcmp(a, b, 4096), 0);
	CK(cuStreamDestroy(s));
	CK(cuMemFree(d));
	CK(cuMemFree(e));
	free(a);
	free(b);
}
END_TEST

START_TEST(bad_pointers_are_errors)
{
	CUdeviceptr d;
	uint8_t buf[64];

	CK(cuMemAlloc(&d, 64));
	/* past the end of an allocation, a freed one, one never made */
	ck_assert_int_eq(cuMemcpyHtoD(d + 32, buf, 64), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(d));
	ck_assert_int_eq(cuMemcpyDtoH(buf, d, 8), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemsetD8(0x1000, 0, 8), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemFree(0x1000), CUDA_ERROR_INVALID_VALUE);
	/* the session goes on working */
	roundtrip(100);
}
END_TEST

/* A pitch below the width is refused even for a single row, as the driver
 * refuses it (CUDALibrarySamples' cuSOLVER/gesv relies on it natively). */
START_TEST(a_pitch_below_the_width_is_refused_for_one_row)
{
	enum { W = 1024 };
	uint8_t *host = calloc(1, W);
	CUDA_MEMCPY2D c;
	CUdeviceptr d;

	ck_assert_ptr_nonnull(host);
	CK(cuMemAlloc(&d, W));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = host;
	c.srcPitch = 8;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = d;
	c.dstPitch = W;
	c.WidthInBytes = W;
	c.Height = 1;
	ck_assert_int_eq(cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
	c.srcPitch = W;
	CK(cuMemcpy2D(&c));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d;
	c.srcPitch = W;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = host;
	c.dstPitch = 8;
	c.WidthInBytes = W;
	c.Height = 1;
	ck_assert_int_eq(cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
	c.dstPitch = W;
	CK(cuMemcpy2D(&c));
	CK(cuMemFree(d));
	free(host);
}
END_TEST

/* Copies and memsets of zero bytes at a null device pointer succeed, at the
 * call and at the next synchronisation, as with the driver (tests/gpu
 * drv_memset measured these forms on driver 580; numba's empty arrays copy
 * zero bytes at a null device pointer). */
START_TEST(zero_bytes_touch_nothing)
{
	uint8_t host[8] = {0};
	CUdeviceptr d;
	CUstream s;

	CK(cuMemAlloc(&d, 64));
	CK(cuStreamCreate(&s, 0));
	CK(cuMemcpyHtoD(0, host, 0));
	CK(cuMemcpyDtoH(host, 0, 0));
	CK(cuMemcpyDtoD(0, 0, 0));
	CK(cuMemcpyDtoD(d, 0, 0));
	CK(cuMemsetD8(0, 1, 0));
	CK(cuMemcpyHtoDAsync(0, host, 0, s));
	CK(cuMemcpyDtoHAsync(host, 0, 0, s));
	CK(cuMemsetD32Async(0, 1, 0, s));
	CK(cuStreamSynchronize(s));
	CK(cuCtxSynchronize());
	CK(cuStreamDestroy(s));
	CK(cuMemFree(d));
}
END_TEST

START_TEST(modules_and_launches)
{
	static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				  ".visible .entry noop()\n{\n ret;\n}\n";
	CUmodule m;
	CUfunction f;
	CUstream s;
	CUevent a, b;
	float ms = -1;

	CK(cuModuleLoadData(&m, ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	CK(cuStreamCreate(&s, 0));
	CK(cuEventCreate(&a, 0));
	CK(cuEventCreate(&b, 0));
	CK(cuEventRecord(a, s));
	for (int i = 0; i < 100; i++)
		CK(cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, s, NULL, NULL));
	CK(cuEventRecord(b, s));
	CK(cuEventSynchronize(b));
	CK(cuEventElapsedTime(&ms, a, b));
	ck_assert(ms >= 0);
	CK(cuStreamSynchronize(s));
	/* shape errors CUDA reports at once */
	ck_assert_int_eq(cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	/* a handle that was never issued */
	ck_assert_int_eq(cuStreamSynchronize((CUstream)(uintptr_t)0x7c0a000000000999ull), CUDA_ERROR_INVALID_HANDLE);
	CK(cuEventDestroy(a));
	CK(cuEventDestroy(b));
	CK(cuStreamDestroy(s));
	CK(cuModuleUnload(m));
	ck_assert_int_eq(cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

static int on_standin(void);

/* Calls the guest answers without the host (guest-lib/libcuda/fastpath.c)
 * give the host's answers: repeated synchronisations, queries, capture status
 * outside captures, cached attributes, primary context state. */
START_TEST(answers_in_the_guest)
{
	static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				  ".visible .entry noop()\n{\n ret;\n}\n";
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	unsigned flags0, flags;
	int active0, active, v1, v2;
	CUcontext pc;
	CUmodule m;
	CUfunction f;
	CUstream s;
	CUevent e;
	CUgraph g;
	CUdevice dev;
	CUresult rc;

	CK(cuModuleLoadData(&m, ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&e, 0));
	/* nothing submitted since the last one: the same answer, again and again */
	CK(cuCtxSynchronize());
	CK(cuCtxSynchronize());
	CK(cuStreamSynchronize(NULL));
	CK(cuStreamQuery(NULL));
	CK(cuStreamQuery(CU_STREAM_LEGACY));
	CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
	CK(cuEventRecord(e, s));
	CK(cuEventSynchronize(e));
	CK(cuEventSynchronize(e));
	CK(cuEventQuery(e));
	CK(cuStreamSynchronize(s));
	CK(cuStreamQuery(s));
	/* a launch's asynchronous error comes at the first synchronisation,
	 * and a second one (nothing submitted since) answers success */
	CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, (CUstream)(uintptr_t)0x7c0a000000000999ull, NULL, NULL));
	ck_assert_int_eq(cuCtxSynchronize(), CUDA_ERROR_INVALID_HANDLE);
	CK(cuCtxSynchronize());
	/* capture status: NONE outside captures; during one the host answers */
	CK(cuStreamIsCapturing(NULL, &st));
	ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_NONE);
	rc = cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED);
	if (rc == CUDA_SUCCESS) {
		CK(cuStreamIsCapturing(s, &st));
		ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
		CK(cuStreamGetCaptureInfo(s, &st, NULL, NULL, NULL, NULL, NULL));
		ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
		CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
		CK(cuStreamEndCapture(s, &g));
		CK(cuGraphDestroy(g));
	} else {
		/* the stand-in captures no streams */
		ck_assert(on_standin());
		ck_assert_int_eq(rc, CUDA_ERROR_NOT_SUPPORTED);
	}
	CK(cuStreamIsCapturing(s, &st));
	ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_NONE);
	st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	CK(cuStreamGetCaptureInfo(NULL, &st, NULL, NULL, NULL, NULL, NULL));
	ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_NONE);
	ck_assert_int_eq(cuStreamIsCapturing(NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	/* attributes: the same answer twice; a setter is seen at once */
	CK(cuFuncGetAttribute(&v1, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
	CK(cuFuncGetAttribute(&v2, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
	ck_assert_int_eq(v1, v2);
	CK(cuFuncGetAttribute(&v1, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
	CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
	CK(cuFuncGetAttribute(&v2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
	ck_assert_int_eq(v2, 1024);
	/* a repeated set keeps what is known, a changing one is seen at once,
	 * and so is a change back to a value set before */
	CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
	CK(cuFuncGetAttribute(&v2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
	ck_assert_int_eq(v2, 1024);
	CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 2048));
	CK(cuFuncGetAttribute(&v2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
	ck_assert_int_eq(v2, 2048);
	CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
	CK(cuFuncGetAttribute(&v2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
	ck_assert_int_eq(v2, 1024);
	ck_assert_int_eq(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1),
			 CUDA_ERROR_INVALID_VALUE);
	CK(cuFuncGetAttribute(&v2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
	ck_assert_int_eq(v2, 1024);
	/* two functions each setting its own value before every launch (the
	 * repeats answered in the guest): each keeps its own */
	{
		CUmodule m2;
		CUfunction f2;

		CK(cuModuleLoadData(&m2, ptx));
		CK(cuModuleGetFunction(&f2, m2, "noop"));
		for (int i = 0; i < 3; i++) {
			CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
			CK(cuFuncSetAttribute(f2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 3072));
			CK(cuFuncGetAttribute(&v1, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
			CK(cuFuncGetAttribute(&v2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f2));
			ck_assert_int_eq(v1, 1024);
			ck_assert_int_eq(v2, 3072);
		}
		CK(cuModuleUnload(m2));
	}
	/* a launch above 48 KiB of dynamic shared memory follows the limit
	 * set, raised and lowered again (the guest refuses it at once) */
	ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 64 << 10, s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 << 10));
	CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 64 << 10, s, NULL, NULL));
	CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
	ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 64 << 10, s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	CK(cuStreamSynchronize(s));
	CK(cuCtxGetDevice(&dev));
	CK(cuCtxGetDevice(&dev));
	ck_assert_int_eq(dev, 0);
	/* an unloaded function is gone, not answered from what was kept */
	CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
	CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
	CK(cuModuleUnload(m));
	ck_assert_int_eq(cuFuncGetAttribute(&v1, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_HANDLE);
	/* nor is a repeat of a set it had (answered in the guest while it lived) */
	ck_assert_int_eq(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024),
			 CUDA_ERROR_INVALID_HANDLE);
	/* primary context state follows retains and releases */
	CK(cuDevicePrimaryCtxGetState(dev, &flags0, &active0));
	CK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
	ck_assert_uint_eq(flags, flags0);
	ck_assert_int_eq(active, active0);
	ck_assert_int_eq(active, 1);
	CK(cuDevicePrimaryCtxRetain(&pc, dev));
	CK(cuDevicePrimaryCtxRelease(dev));
	CK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
	ck_assert_int_eq(active, 1);
	CK(cuEventDestroy(e));
	CK(cuStreamDestroy(s));
}
END_TEST

START_TEST(pinned_memory_from_the_shared_pool)
{
	size_t n = 6 << 20;
	uint8_t *a, *b;
	void *pa, *pb;
	CUdeviceptr d, da = 0;
	CUstream s;
	unsigned type = 0;
	int mapped = 0;

	CK(cuMemHostAlloc(&pa, n, CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemAllocHost(&pb, n));
	a = pa;
	b = pb;
	for (size_t i = 0; i < n; i++)
		a[i] = (uint8_t)(i * 13 + 5);
	memset(b, 0, n);
	/* Mapped: a device address, the same as the host one where the server
	 * could map the pool at the guest's address (always, host-locally). */
	CK(cuMemHostGetDevicePointer(&da, pa, 0));
	ck_assert_uint_ne(da, 0);
	CK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)pa));
	ck_assert_uint_eq(type, CU_MEMORYTYPE_HOST);
	CK(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, (CUdeviceptr)(uintptr_t)pa));
	ck_assert_int_eq(mapped, 1);
	/* Copies from and into page-locked memory, asynchronous, then checked. */
	CK(cuStreamCreate(&s, 0));
	CK(cuMemAlloc(&d, n));
	CK(cuMemcpyHtoDAsync(d, pa, n, s));
	CK(cuMemcpyDtoHAsync(pb, d, n, s));
	CK(cuStreamSynchronize(s));
	ck_assert_int_eq(memcmp(a, b, n), 0);
	CK(cuMemFreeHost(pa));
	CK(cuMemFreeHost(pb));
	ck_assert_int_eq(cuMemFreeHost(pa), CUDA_ERROR_INVALID_VALUE);
	/* The space comes back: allocate it again. */
	CK(cuMemHostAlloc(&pa, n, 0));
	CK(cuMemFreeHost(pa));
	CK(cuMemFree(d));
	CK(cuStreamDestroy(s));
}
END_TEST

static void *release_later(void *flag)
{
	usleep(50 * 1000);
	__atomic_store_n((uint32_t *)flag, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Blocking copies to and from page-locked memory return with their bytes:
 * what the device wrote just before is in what a copy out brings back, and
 * a copy in is in the device's memory at once, two hundred times over (vcuda
 * answers such a copy once it is queued and the device's write of a fence
 * word ends the wait). A blocking copy queued behind a wait on the legacy
 * stream returns only once the wait is let go (vcuda: its fence does not
 * come within the spin, and the stream's synchronisation waits for it).
 */
START_TEST(blocking_copies_of_page_locked_memory)
{
	const size_t n = 1 << 20, words = n / 4;
	int64_t t0, t1;
	uint32_t *h, *flag, back[4];
	void *ph, *pf;
	CUdeviceptr d, df;
	pthread_t th;

	CK(cuMemAllocHost(&ph, n));
	CK(cuMemHostAlloc(&pf, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemHostGetDevicePointer(&df, pf, 0));
	CK(cuMemAlloc(&d, n));
	h = ph;
	flag = pf;
	*flag = 0;
	for (uint32_t i = 1; i <= 200; i++) {
		CK(cuMemsetD32Async(d, i, words, NULL));
		CK(cuMemcpyDtoH(h, d, n));
		if (h[0] != i || h[words - 1] != i)
			ck_abort_msg("round %u: copied out %u and %u", i, h[0], h[words - 1]);
		h[0] = h[words - 1] = i * 7;
		CK(cuMemcpyHtoD(d, h, n));
		CK(cuMemcpyDtoH(back, d + n - sizeof(back), sizeof(back)));
		if (back[3] != i * 7)
			ck_abort_msg("round %u: the device holds %u after the copy in", i, back[3]);
	}
	CK(cuMemsetD32(d, 9, words));
	CK(cuStreamWaitValue32(NULL, df, 1, CU_STREAM_WAIT_VALUE_GEQ));
	t0 = vc_now_ms();
	ck_assert_int_eq(pthread_create(&th, NULL, release_later, flag), 0);
	CK(cuMemcpyDtoH(h, d, n));
	t1 = vc_now_ms();
	pthread_join(th, NULL);
	ck_assert_uint_eq(h[words - 1], 9);
	ck_assert_int_ge(t1 - t0, 40);
	CK(cuMemFree(d));
	CK(cuMemFreeHost(ph));
	CK(cuMemFreeHost(pf));
}
END_TEST

/* Lets the flag go after three seconds, unless it was let go before: a
 * safety, so that a call that waits for the flag's stream fails a check
 * rather than hanging the test. */
static void *release_if_stuck(void *flag)
{
	for (int i = 0; i < 300 && !__atomic_load_n((uint32_t *)flag, __ATOMIC_ACQUIRE); i++)
		usleep(10 * 1000);
	__atomic_store_n((uint32_t *)flag, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Asynchronous copies from pageable memory return once the source may be
 * used again. Onto an idle stream (vcuda: the device's DMA from the arena,
 * waited for by the host) a buffer overwritten as soon as the call returns
 * leaves the bytes it held at the call on the device: one piece, several,
 * and several filled by the library's helper threads (from 2 MiB). Onto a
 * stream held by a wait that this thread lets go only after the call and
 * a call that needs the host (cuMemGetInfo), both return at once, as
 * natively for a small copy, and the bytes arrive once the stream goes on:
 * vcuda's host must not wait for such a stream (its driver stages the copy
 * instead). So for the legacy stream while a blocking stream is held: the
 * driver orders a copy on the legacy stream behind it.
 */
START_TEST(asynchronous_pageable_copies_return_with_the_source_free)
{
	static const size_t sizes[] = {64 << 10, 1 << 20, 8 << 20};
	const size_t max = 8 << 20;
	uint8_t *h = malloc(max), *back = malloc(max);
	int64_t t0, t1;
	CUdeviceptr d, df;
	size_t mfree, mtotal;
	uint32_t *flag;
	CUstream s, b;
	void *pf;
	pthread_t th;

	ck_assert_ptr_nonnull(h);
	ck_assert_ptr_nonnull(back);
	CK(cuMemAlloc(&d, max));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (int i = 1; i <= 10; i++) {
			uint8_t v = (uint8_t)(k * 16 + i);

			memset(h, v, sizes[k]);
			CK(cuMemcpyHtoDAsync(d, h, sizes[k], s));
			memset(h, 0xEE, sizes[k]);
			CK(cuStreamSynchronize(s));
			CK(cuMemcpyDtoH(back, d, sizes[k]));
			for (size_t j = 0; j < sizes[k]; j += 4093)
				if (back[j] != v)
					ck_abort_msg("%zu bytes, round %d: byte %zu is %u, not %u", sizes[k], i, j,
						     back[j], v);
			if (back[sizes[k] - 1] != v)
				ck_abort_msg("%zu bytes, round %d: the last byte is %u", sizes[k], i, back[sizes[k] - 1]);
		}
	}
	CK(cuStreamCreate(&b, 0));
	CK(cuMemHostAlloc(&pf, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemHostGetDevicePointer(&df, pf, 0));
	flag = pf;
	for (int k = 0; k < 2; k++) {
		CUstream held = k ? b : s, onto = k ? NULL : s;
		uint8_t v = (uint8_t)(0x5A + k);

		*flag = 0;
		CK(cuStreamWaitValue32(held, df, 1, CU_STREAM_WAIT_VALUE_GEQ));
		memset(h, v, 64 << 10);
		ck_assert_int_eq(pthread_create(&th, NULL, release_if_stuck, flag), 0);
		t0 = vc_now_ms();
		CK(cuMemcpyHtoDAsync(d, h, 64 << 10, onto));
		CK(cuMemGetInfo(&mfree, &mtotal));
		t1 = vc_now_ms();
		memset(h, 0, 64 << 10);
		__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		ck_assert_msg(t1 - t0 < 1000,
			      "%s: the calls waited for the held stream", k ? "legacy stream" : "stream");
		CK(cuStreamSynchronize(held));
		CK(cuStreamSynchronize(onto));
		CK(cuMemcpyDtoH(back, d, 64 << 10));
		ck_assert_uint_eq(back[0], v);
		ck_assert_uint_eq(back[(64 << 10) - 1], v);
	}
	CK(cuMemFreeHost(pf));
	CK(cuStreamDestroy(b));
	CK(cuStreamDestroy(s));
	CK(cuMemFree(d));
	free(h);
	free(back);
}
END_TEST

/*
 * While a non-blocking stream captures (relaxed mode), asynchronous pageable
 * copies onto the legacy stream and onto a blocking stream are valid
 * operations, and they leave the capture whole: vcuda's host, deciding
 * whether such a copy's stream is idle, must neither query the capturing
 * stream nor the legacy stream then (either would be an invalid operation
 * that ends the capture). The graph then runs and does its one memset. The
 * CI stand-in does not capture (CUDA_ERROR_NOT_SUPPORTED): there the test
 * ends after the copies' check.
 */
START_TEST(asynchronous_pageable_copies_leave_a_capture_whole)
{
	const size_t n = 1 << 20;
	uint8_t *h = malloc(n), back[16];
	CUdeviceptr d, d2;
	CUstream c, b;
	CUgraphExec ge;
	CUgraph g;
	CUresult rc;

	ck_assert_ptr_nonnull(h);
	memset(h, 0x3C, n);
	CK(cuMemAlloc(&d, n));
	CK(cuMemAlloc(&d2, sizeof(back)));
	CK(cuMemsetD8(d2, 0, sizeof(back)));
	CK(cuStreamCreate(&c, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&b, 0));
	rc = cuStreamBeginCapture(c, CU_STREAM_CAPTURE_MODE_RELAXED);
	ck_assert(rc == CUDA_SUCCESS || rc == CUDA_ERROR_NOT_SUPPORTED);
	if (rc == CUDA_SUCCESS)
		CK(cuMemsetD8Async(d2, 7, sizeof(back), c));
	CK(cuMemcpyHtoDAsync(d, h, n, NULL));
	CK(cuMemcpyHtoDAsync(d, h, n, b));
	if (rc == CUDA_SUCCESS) {
		CK(cuStreamEndCapture(c, &g));
		CK(cuGraphInstantiate(&ge, g, 0));
		CK(cuGraphLaunch(ge, c));
		CK(cuStreamSynchronize(c));
		CK(cuMemcpyDtoH(back, d2, sizeof(back)));
		ck_assert_uint_eq(back[0], 7);
		ck_assert_uint_eq(back[sizeof(back) - 1], 7);
		CK(cuGraphExecDestroy(ge));
		CK(cuGraphDestroy(g));
	}
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(h, d, n));
	ck_assert_uint_eq(h[0], 0x3C);
	ck_assert_uint_eq(h[n - 1], 0x3C);
	CK(cuStreamDestroy(b));
	CK(cuStreamDestroy(c));
	CK(cuMemFree(d2));
	CK(cuMemFree(d));
	free(h);
}
END_TEST

/*
 * Two page-locked buffers of $VCUDA_TEST_PINNED_MIB MiB each (default 48:
 * together past one 64 MiB granule of the pool, which through the device is
 * mapped as it is used), mapped, copied through the device one into the
 * other and compared word by word: in a VM with large session slots
 * (ci/vm-test.sh) gigabytes of them.
 */
START_TEST(pinned_buffers_across_the_pool)
{
	const char *env = getenv("VCUDA_TEST_PINNED_MIB");
	size_t n = (size_t)(env ? strtoul(env, NULL, 10) : 48) << 20, words = n / 8;
	uint64_t *a, *b;
	void *pa, *pb;
	CUdeviceptr d, da;

	ck_assert_uint_gt(n, 0);
	CK(cuMemHostAlloc(&pa, n, CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemHostAlloc(&pb, n, CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemHostGetDevicePointer(&da, pb, 0));
	a = pa;
	b = pb;
	for (size_t i = 0; i < words; i++)
		a[i] = i * 0x9e3779b97f4a7c15ull + 1;
	b[0] = b[words - 1] = 0;
	CK(cuMemAlloc(&d, n));
	CK(cuMemcpyHtoD(d, pa, n));
	CK(cuMemcpyDtoH(pb, d, n));
	for (size_t i = 0; i < words; i++)
		if (b[i] != i * 0x9e3779b97f4a7c15ull + 1)
			ck_abort_msg("word %zu of %zu differs after the round trip", i, words);
	CK(cuMemFree(d));
	CK(cuMemFreeHost(pa));
	CK(cuMemFreeHost(pb));
}
END_TEST

START_TEST(registered_memory_moves_into_the_pool)
{
	size_t n = (3 << 20) + 100;
	uint8_t *raw = malloc(n + 200), *a = raw + 100, *back = malloc(n), *want = malloc(n + 200);
	CUdeviceptr d, da = 0, dp = 0;
	unsigned flags = 0;
	int mapped = 0;

	ck_assert_ptr_nonnull(raw);
	ck_assert_ptr_nonnull(back);
	ck_assert_ptr_nonnull(want);
	for (size_t i = 0; i < n + 200; i++)
		want[i] = (uint8_t)(i * 7 + 3);
	memcpy(raw, want, n + 200);
	CK(cuMemHostRegister(a, n, 0));
	/* Same address, same bytes (its first and last page's neighbours too),
	 * now page-locked and mapped: a device pointer, DMA copies. */
	ck_assert_int_eq(memcmp(raw, want, n + 200), 0);
	CK(cuMemHostGetDevicePointer(&da, a + 10, 0));
	ck_assert_uint_ne(da, 0);
	CK(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, (CUdeviceptr)(uintptr_t)a));
	ck_assert_uint_eq(dp + 10, da);
	CK(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, (CUdeviceptr)(uintptr_t)a));
	ck_assert_int_eq(mapped, 1);
	CK(cuMemHostGetFlags(&flags, a));
	ck_assert_int_eq(cuMemHostRegister(a + 4096, 100, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	CK(cuMemAlloc(&d, n));
	CK(cuMemcpyHtoD(d, a, n));
	CK(cuMemsetD8(d, 0xab, 1));
	memset(a, 0, n);
	CK(cuMemcpyDtoH(a, d, n));
	ck_assert_uint_eq(a[0], 0xab);
	ck_assert_int_eq(memcmp(a + 1, want + 101, n - 1), 0);
	/* Not from inside the range (cuda-python's tests check the code). */
	ck_assert_int_eq(cuMemHostUnregister(a + 10), CUDA_ERROR_INVALID_VALUE);
	/* Unregistered: ordinary memory again, with its bytes, still writable. */
	CK(cuMemHostUnregister(a));
	ck_assert_int_eq(cuMemHostUnregister(a), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	ck_assert_int_eq(cuMemHostGetDevicePointer(&da, a, 0), CUDA_ERROR_INVALID_VALUE);
	memcpy(back, a, n);
	ck_assert_uint_eq(back[0], 0xab);
	ck_assert_uint_eq(back[n - 1], (uint8_t)((n - 1 + 100) * 7 + 3));
	ck_assert_uint_eq(raw[0], 3);
	memset(raw, 1, n + 200);
	/* The pool's pages came back: register again, and the pool is reused. */
	CK(cuMemHostRegister(a, n, 0));
	CK(cuMemHostUnregister(a));
	CK(cuMemFree(d));
	free(raw);
	free(back);
	free(want);
}
END_TEST

static int g_order[8], g_n, g_release;
static CUresult g_status = (CUresult)-1;

static void CUDA_CB cb_mark(void *arg)
{
	g_order[g_n++] = (int)(intptr_t)arg;
}

static void CUDA_CB cb_held(void *arg)
{
	/* Held until the main thread lets go: the enqueue must not wait for it. */
	while (!__atomic_load_n(&g_release, __ATOMIC_ACQUIRE))
		usleep(100);
	g_order[g_n++] = (int)(intptr_t)arg;
}

static void CUDA_CB cb_status(CUstream s, CUresult st, void *arg)
{
	(void)s;
	g_status = st;
	g_order[g_n++] = (int)(intptr_t)arg;
}

START_TEST(host_functions_are_asynchronous_and_ordered)
{
	CUstream s;
	CUdeviceptr d;
	uint8_t b[16];

	CK(cuStreamCreate(&s, 0));
	CK(cuMemAlloc(&d, 16));
	CK(cuLaunchHostFunc(s, cb_mark, (void *)1));
	CK(cuMemsetD8Async(d, 7, 16, s));
	CK(cuLaunchHostFunc(s, cb_held, (void *)2));
	CK(cuStreamAddCallback(s, cb_status, (void *)3, 0));
	/* Enqueueing returned although the held function has not run. */
	ck_assert_int_le(g_n, 1);
	ck_assert_int_eq(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	__atomic_store_n(&g_release, 1, __ATOMIC_RELEASE);
	CK(cuStreamSynchronize(s));
	ck_assert_int_eq(g_n, 3);
	ck_assert_int_eq(g_order[0], 1);
	ck_assert_int_eq(g_order[1], 2);
	ck_assert_int_eq(g_order[2], 3);
	ck_assert_int_eq(g_status, CUDA_SUCCESS);
	CK(cuMemcpyDtoH(b, d, 16));
	ck_assert_uint_eq(b[15], 7);
	CK(cuMemFree(d));
	CK(cuStreamDestroy(s));
}
END_TEST

/* A host function that takes 20 ms, then marks that it ran. */
static void CUDA_CB cb_slow(void *arg)
{
	struct timespec ts = {0, 20 * 1000 * 1000};

	nanosleep(&ts, NULL);
	__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
}

/* A context synchronisation waits for the work of every stream of the
 * context, whichever it is on: a non-blocking stream among others, the
 * per-thread default stream, the legacy one (the server may answer it
 * without the driver's synchronisation once all are done: syncpoll.c). */
START_TEST(a_context_synchronisation_waits_for_every_stream)
{
	CUstream s[3];
	int ran;

	for (int i = 0; i < 3; i++)
		CK(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING));
	CUstream on[] = {s[1], CU_STREAM_PER_THREAD, CU_STREAM_LEGACY};

	/* Twice, and once more after each stream's own synchronisation: a
	 * stream found done, then given work again, is waited for again. */
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
			ran = 0;
			CK(cuLaunchHostFunc(on[i], cb_slow, &ran));
			if (round == 2) {
				CK(cuStreamSynchronize(on[i]));
				ran = 0;
				CK(cuLaunchHostFunc(on[i], cb_slow, &ran));
			}
			CK(cuCtxSynchronize());
			ck_assert_msg(__atomic_load_n(&ran, __ATOMIC_ACQUIRE),
				      "round %d, stream %zu: synchronised before its work ran", round, i);
		}
	/* and with nothing pending, at once */
	CK(cuCtxSynchronize());
	for (int i = 0; i < 3; i++)
		CK(cuStreamDestroy(s[i]));
}
END_TEST

START_TEST(pointer_attributes)
{
	CUdeviceptr d;
	unsigned type = 0;
	void *h;
	int x;
	CUpointer_attribute at[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
	size_t size = 0;
	void *data[2] = {&type, &size};

	CK(cuMemAlloc(&d, 1000));
	CK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 10));
	ck_assert_uint_eq(type, CU_MEMORYTYPE_DEVICE);
	CK(cuPointerGetAttributes(2, at, data, d));
	ck_assert_uint_eq(size, 1000);
	CK(cuMemHostAlloc(&h, 4096, 0));
	CK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)h));
	ck_assert_uint_eq(type, CU_MEMORYTYPE_HOST);
	/* pageable memory: not an error for the plural form, with type 0 */
	type = 99;
	CK(cuPointerGetAttributes(2, at, data, (CUdeviceptr)(uintptr_t)&x));
	ck_assert_uint_eq(type, 0);
	ck_assert_int_eq(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)&x),
			 CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFreeHost(h));
	CK(cuMemFree(d));
}
END_TEST

START_TEST(proc_address_and_errors)
{
	void *fn = NULL;
	CUdriverProcAddressQueryResult st;
	const char *s = NULL;

	CK(cuGetProcAddress_v2("cuMemAlloc", &fn, 3020, 0, &st));
	ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_SUCCESS);
	ck_assert_ptr_eq(fn, (void *)cuMemAlloc_v2);
	CK(cuGetProcAddress_v2("cuStreamSynchronize", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_SUCCESS);
	ck_assert_ptr_eq(fn, (void *)cuStreamSynchronize_ptsz);
	CK(cuGetProcAddress_v2("cuNoSuchThing", &fn, 13000, 0, &st));
	ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	CK(cuGetProcAddress_v2("cuMemAllocAsync", &fn, 10000, 0, &st));
	ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	CK(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
	ck_assert_str_eq(s, "CUDA_ERROR_ILLEGAL_ADDRESS");
	CK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
	ck_assert_str_eq(s, "out of memory");
	ck_assert_int_eq(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
	/* entry points vcuda refuses say so (multicast objects span GPUs) */
	ck_assert_int_eq(cuMulticastGetGranularity(NULL, NULL, 0), CUDA_ERROR_NOT_SUPPORTED);
}
END_TEST

START_TEST(out_of_memory_is_reported)
{
	CUdeviceptr d;
	size_t freeb = 0, total = 0;

	CK(cuMemGetInfo(&freeb, &total));
	ck_assert_int_eq(cuMemAlloc(&d, total + (1ull << 30)), CUDA_ERROR_OUT_OF_MEMORY);
	roundtrip(1000);
}
END_TEST

/* ---- device printf ---------------------------------------------------------------
 * The CI stand-in's test double for device printf (host-backend/cu_standin.h):
 * a function named vc_standin_printf takes an int n, and the next
 * synchronisation writes n lines of PRINTF_LINE to the worker's stdout. The
 * server captures them; the guest library must write them to this process's
 * stdout before the synchronising call returns. Like kernel_printf.cu, the
 * tests put a temporary file on fd 1 and read it back.
 */
#define PRINTF_LINE "vc_standin_printf: line %d of %d\n"
#define CONSOLE_MAX (8u << 20) /* host-backend/console.h: what waits at most */

static int on_standin(void)
{
	char name[128];

	CK(cuDeviceGetName(name, sizeof(name), 0));
	return strstr(name, "stand-in") != NULL;
}

/* Load an image and get the printing function from it (the stand-in loads
 * anything). It declares vprintf, as every image whose code prints does: the
 * server makes a synchronisation's flush only where an image may print
 * (host-backend/cuda/image.c). */
static CUfunction printer(CUmodule *m)
{
	static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				  ".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n"
				  ".visible .entry vc_standin_printf(.param .u32 n)\n{\n ret;\n}\n";
	CUfunction f;

	CK(cuModuleLoadData(m, ptx));
	CK(cuModuleGetFunction(&f, *m, "vc_standin_printf"));
	return f;
}

static void print_on(CUfunction f, CUstream s, int n)
{
	void *args[] = {&n};

	CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

struct text {
	char *p;
	size_t len, cap;
};

static void text_add(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		ck_assert_ptr_nonnull(t->p);
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
}

/* What a launch with @n prints. */
static void text_lines(struct text *t, int n)
{
	char line[96];

	for (int i = 0; i < n; i++)
		text_add(t, line, (size_t)snprintf(line, sizeof(line), PRINTF_LINE, i, n));
}

struct capture {
	FILE *f;
	int saved;
};

/* fd 1 into a temporary file, as kernel_printf.cu does. */
static void capture_begin(struct capture *c)
{
	fflush(stdout);
	c->f = tmpfile();
	ck_assert_ptr_nonnull(c->f);
	c->saved = dup(1);
	ck_assert_int_ge(c->saved, 0);
	ck_assert_int_ge(dup2(fileno(c->f), 1), 0);
}

/* What reached fd 1 so far, read without flushing anything of ours first:
 * device output must already be there when the synchronising call returns. */
static struct text captured(struct capture *c)
{
	struct text t = {0};
	struct stat st;
	char buf[65536];
	off_t off = 0;
	ssize_t n;

	ck_assert_int_eq(fstat(fileno(c->f), &st), 0);
	text_add(&t, "", 0);
	while (off < st.st_size && (n = pread(fileno(c->f), buf, sizeof(buf), off)) > 0) {
		text_add(&t, buf, (size_t)n);
		off += n;
	}
	return t;
}

static void capture_end(struct capture *c)
{
	fflush(stdout);
	ck_assert_int_ge(dup2(c->saved, 1), 0);
	close(c->saved);
	fclose(c->f);
}

static void assert_text(const struct text *got, const struct text *want)
{
	size_t i = 0;

	while (i < got->len && i < want->len && got->p[i] == want->p[i])
		i++;
	ck_assert_msg(got->len == want->len && i == got->len,
		      "device printf text differs at byte %zu (got %zu bytes, want %zu): got \"%.60s\", want \"%.60s\"",
		      i, got->len, want->len, got->p + i, want->p + i);
}

/* A packed parameter buffer larger than the parameters is refused at the
 * launch, as the driver does (the guest knows the layout, so it answers at
 * once too, not at the next synchronisation); the parameters' size and a
 * smaller one launch (driver 580 takes a short buffer). */
START_TEST(parameter_buffer_larger_than_the_parameters_is_refused_at_once)
{
	uint64_t n = 0;
	size_t sizes[] = {8, 5}, fine[] = {4, 2};
	CUmodule m;
	CUfunction f = printer(&m);

	for (size_t i = 0; i < 2; i++) {
		void *big[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &n, CU_LAUNCH_PARAM_BUFFER_SIZE, &sizes[i],
			       CU_LAUNCH_PARAM_END};
		void *ok[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &n, CU_LAUNCH_PARAM_BUFFER_SIZE, &fine[i],
			      CU_LAUNCH_PARAM_END};

		ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, big),
				 CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
		CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, ok));
	}
	CK(cuCtxSynchronize()); /* nothing left behind */
	CK(cuModuleUnload(m));
}
END_TEST

START_TEST(device_printf_reaches_stdout_in_order)
{
	struct text want = {0}, got;
	struct capture c;
	CUmodule m;
	CUfunction f;

	if (!on_standin())
		return;
	f = printer(&m);
	capture_begin(&c);
	/* The program's own buffered output comes first, as natively. */
	printf("program: before\n");
	print_on(f, NULL, 3);
	print_on(f, NULL, 1);
	print_on(f, NULL, 2);
	CK(cuCtxSynchronize());
	got = captured(&c);
	text_add(&want, "program: before\n", 16);
	text_lines(&want, 3);
	text_lines(&want, 1);
	text_lines(&want, 2);
	assert_text(&got, &want);
	printf("program: after\n");
	capture_end(&c);
	CK(cuModuleUnload(m));
	free(got.p);
	free(want.p);
}
END_TEST

START_TEST(device_printf_at_every_synchronisation)
{
	struct text want = {0}, got;
	struct capture c;
	CUmodule m;
	CUfunction f;
	CUstream s;
	CUevent e;
	CUcontext other;
	CUdeviceptr d;
	size_t big = 2 << 20; /* through the staging arena */
	uint8_t *buf = malloc(big);
	int k = 1;

	if (!on_standin())
		return;
	f = printer(&m);
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&e, 0));
	CK(cuMemAlloc(&d, big));
	capture_begin(&c);
#define EXPECT_AFTER(call)                        \
	do {                                      \
		CK(call);                         \
		text_lines(&want, k);             \
		got = captured(&c);               \
		assert_text(&got, &want);         \
		free(got.p);                      \
		k++;                              \
	} while (0)
	print_on(f, s, k);
	EXPECT_AFTER(cuStreamSynchronize(s));
	print_on(f, s, k);
	CK(cuEventRecord(e, s));
	EXPECT_AFTER(cuEventSynchronize(e));
	print_on(f, NULL, k);
	EXPECT_AFTER(cuMemcpyDtoH(buf, d, 64));
	print_on(f, NULL, k);
	EXPECT_AFTER(cuMemcpyHtoD(d, buf, 64));
	print_on(f, NULL, k);
	EXPECT_AFTER(cuMemcpyDtoH(buf, d, big));
	print_on(f, NULL, k);
	EXPECT_AFTER(cuMemcpyHtoD(d, buf, big));
	print_on(f, NULL, k);
	EXPECT_AFTER(cuModuleUnload(m));
	/* A context's destruction flushes what its kernels printed. */
	CK(cuCtxCreate(&other, NULL, 0, 0));
	f = printer(&m);
	print_on(f, NULL, k);
	EXPECT_AFTER(cuCtxDestroy(other));
	CK(cuCtxSetCurrent(g_ctx));
	/* Asynchronous calls do not synchronise: nothing until the next one that does. */
	print_on(f = printer(&m), s, k);
	CK(cuMemcpyHtoDAsync(d, buf, 64, s));
	got = captured(&c);
	assert_text(&got, &want);
	free(got.p);
	EXPECT_AFTER(cuCtxSynchronize());
#undef EXPECT_AFTER
	capture_end(&c);
	CK(cuModuleUnload(m));
	CK(cuMemFree(d));
	CK(cuEventDestroy(e));
	CK(cuStreamDestroy(s));
	free(want.p);
	free(buf);
}
END_TEST

START_TEST(device_printf_larger_than_a_reply)
{
	struct text want = {0}, got;
	struct capture c;
	CUmodule m;
	CUfunction f;

	if (!on_standin())
		return;
	f = printer(&m);
	capture_begin(&c);
	print_on(f, NULL, 40000);
	print_on(f, NULL, 5);
	CK(cuCtxSynchronize());
	got = captured(&c);
	text_lines(&want, 40000);
	text_lines(&want, 5);
	ck_assert_uint_gt(want.len, 1u << 20);
	assert_text(&got, &want);
	capture_end(&c);
	CK(cuModuleUnload(m));
	free(got.p);
	free(want.p);
}
END_TEST

START_TEST(device_printf_past_the_cap_is_dropped_with_a_marker)
{
	struct text all = {0}, want = {0}, got;
	struct capture c;
	char marker[160];
	CUmodule m;
	CUfunction f;
	int n = 300000;

	if (!on_standin())
		return;
	f = printer(&m);
	capture_begin(&c);
	print_on(f, NULL, n);
	CK(cuCtxSynchronize());
	got = captured(&c);
	text_lines(&all, n);
	ck_assert_uint_gt(all.len, CONSOLE_MAX);
	/* The first CONSOLE_MAX bytes, then the marker on a line of its own. */
	text_add(&want, all.p, CONSOLE_MAX);
	if (all.p[CONSOLE_MAX - 1] != '\n')
		text_add(&want, "\n", 1);
	snprintf(marker, sizeof(marker), "vcuda: %zu bytes of device printf output dropped (%u MiB were waiting)\n",
		 all.len - CONSOLE_MAX, CONSOLE_MAX >> 20);
	text_add(&want, marker, strlen(marker));
	assert_text(&got, &want);
	free(got.p);
	/* Then output flows again. */
	print_on(f, NULL, 2);
	CK(cuStreamSynchronize(NULL));
	text_lines(&want, 2);
	got = captured(&c);
	assert_text(&got, &want);
	capture_end(&c);
	CK(cuModuleUnload(m));
	free(got.p);
	free(want.p);
	free(all.p);
}
END_TEST

/* A program that exits without synchronising still prints, as at context
 * teardown natively: the library flushes at exit. (A separate process: this
 * one has not initialised CUDA, so its child may.) */
START_TEST(device_printf_flushed_at_exit)
{
	struct text want = {0}, got;
	struct capture c;
	pid_t pid;
	int st = 0;

	capture_begin(&c);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		CUcontext ctx;
		CUmodule m;
		CUfunction f;

		if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
			_exit(3);
		if (!on_standin())
			_exit(2);
		f = printer(&m);
		print_on(f, NULL, 4);
		exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	got = captured(&c);
	capture_end(&c);
	ck_assert(WIFEXITED(st));
	if (WEXITSTATUS(st) == 2)
		return; /* a GPU: no test double */
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	text_lines(&want, 4);
	assert_text(&got, &want);
	free(got.p);
	free(want.p);
}
END_TEST

/* Whether /proc/self/maps has a parked page-locked segment (a vcuda-pinned
 * memfd mapped inaccessible) at an address other than @not_at, within @ms. */
static int parked_segment_within(uintptr_t not_at, int ms)
{
	for (int waited = 0; waited <= ms; waited += 20) {
		char line[512];
		FILE *f = fopen("/proc/self/maps", "re");
		int found = 0;

		if (!f)
			return 0;
		while (!found && fgets(line, sizeof(line), f)) {
			unsigned long lo = 0;

			found = strstr(line, "vcuda-pinned") && strstr(line, " ---s ") &&
				sscanf(line, "%lx-", &lo) == 1 && lo != not_at;
		}
		fclose(f);
		if (found)
			return 1;
		usleep(20000);
	}
	return 0;
}

/* Whether the mapping at @p is a vcuda-pinned memfd. */
static int is_segment(const void *p)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int yes = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)p >= lo && (uintptr_t)p < hi) {
			yes = strstr(line, "vcuda-pinned") != NULL;
			break;
		}
	}
	fclose(f);
	return yes;
}

/* VCUDA_PINNED_SPARE (guest-lib/libcuda/pinspare.c): a segment is made and
 * parked at cuInit, before any page-locked memory is asked for; the first
 * registration of its size takes it (the program's bytes in it, the device
 * reading them), and another is made. Host-locally only: a VM has no
 * segments. */
START_TEST(a_spare_segment_is_made_ahead_and_taken)
{
	enum { N = 64 << 20 };
	pid_t pid;
	int st = 0;

	if (!getenv("VCUDA_SOCKET") || !*getenv("VCUDA_SOCKET"))
		return; /* not host-local: no segments */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		CUcontext ctx;
		CUdeviceptr d;
		uint8_t *p, *q;

		setenv("VCUDA_PINNED_POOL", "0", 1);
		setenv("VCUDA_PINNED_SPARE", "64M", 1);
		if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
			_exit(3);
		if (!parked_segment_within(0, 10000))
			_exit(4); /* no spare made ahead */
		p = mmap(NULL, N, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q = malloc(N);
		if (p == MAP_FAILED || !q)
			_exit(3);
		for (size_t i = 0; i < N; i++)
			p[i] = (uint8_t)(i * 7 + 1);
		if (cuMemHostRegister(p, N, 0))
			_exit(5);
		if (!is_segment(p))
			_exit(6); /* not moved into a segment */
		if (cuMemAlloc(&d, N) || cuMemcpyHtoD(d, p, N) || cuMemcpyDtoH(q, d, N) || memcmp(p, q, N))
			_exit(7); /* the program's bytes lost on the way */
		if (!parked_segment_within((uintptr_t)p, 10000))
			_exit(8); /* no new spare */
		if (cuMemHostUnregister(p) || cuMemFree(d))
			_exit(9);
		exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cuda_api");
	TCase *t = tcase_create("driver");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, device_facts);
	tcase_add_test(t, contexts);
	tcase_add_test(t, copies_every_size_class);
	tcase_add_test(t, large_copy_past_the_allocation_fails);
	tcase_add_test(t, async_copies_dtod_memsets);
	tcase_add_test(t, bad_pointers_are_errors);
	tcase_add_test(t, a_pitch_below_the_width_is_refused_for_one_row);
	tcase_add_test(t, zero_bytes_touch_nothing);
	tcase_add_test(t, modules_and_launches);
	tcase_add_test(t, answers_in_the_guest);
	tcase_add_test(t, pointer_attributes);
	tcase_add_test(t, host_functions_are_asynchronous_and_ordered);
	tcase_add_test(t, a_context_synchronisation_waits_for_every_stream);
	tcase_add_test(t, pinned_memory_from_the_shared_pool);
	tcase_add_test(t, blocking_copies_of_page_locked_memory);
	tcase_add_test(t, asynchronous_pageable_copies_return_with_the_source_free);
	tcase_add_test(t, asynchronous_pageable_copies_leave_a_capture_whole);
	tcase_add_test(t, registered_memory_moves_into_the_pool);
	tcase_add_test(t, proc_address_and_errors);
	tcase_add_test(t, out_of_memory_is_reported);
	tcase_add_test(t, parameter_buffer_larger_than_the_parameters_is_refused_at_once);
	tcase_add_test(t, device_printf_reaches_stdout_in_order);
	tcase_add_test(t, device_printf_at_every_synchronisation);
	tcase_add_test(t, device_printf_larger_than_a_reply);
	tcase_add_test(t, device_printf_past_the_cap_is_dropped_with_a_marker);
	suite_add_tcase(s, t);
	/* Apart, so that a VM with large slots runs it with gigabytes
	 * (CK_RUN_CASE=pinned, VCUDA_TEST_PINNED_MIB). */
	t = tcase_create("pinned");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, pinned_buffers_across_the_pool);
	suite_add_tcase(s, t);
	/* Without the fixture: the test's child initialises CUDA itself. */
	t = tcase_create("exit");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, device_printf_flushed_at_exit);
	tcase_add_test(t, a_spare_segment_is_made_ahead_and_taken);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
