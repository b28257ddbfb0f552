/* SPDX-License-Identifier: MIT */
/*
 * demo.c - vcuda-demo: a CUDA program (the driver API of the guest
 * libcuda.so.1) doing GPU work through a running vcuda-server, saying what
 * happened at each step. The same on a GPU and over the CI stand-in: its one
 * kernel stores a word, which the stand-in's test double of the same name
 * does too (tests/lib/vt_kernels.h). Exits non-zero if a result is wrong.
 *
 *   VCUDA_SOCKET=PATH vcuda-demo
 */
#include <cuda.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vc_time.h"
#include "vt_kernels.h"

static double now_s(void)
{
	return (double)vc_now_ns() / 1e9;
}

static const char *res(CUresult rc)
{
	const char *name = NULL;

	return cuGetErrorName(rc, &name) == CUDA_SUCCESS && name ? name : "unknown CUDA error";
}

static char *buf_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *buf_printf(const char *fmt, ...)
{
	static char b[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	return b;
}

/* One step: its description and result; a result other than @want ends the demo. */
#define STEP_WANT(want, call, ...)                                               \
	do {                                                                     \
		CUresult rc_ = (call);                                           \
		printf("  %-62s %s\n", buf_printf(__VA_ARGS__), res(rc_));       \
		if (rc_ != (want))                                               \
			return 1;                                                \
	} while (0)
#define STEP(call, ...) STEP_WANT(CUDA_SUCCESS, call, __VA_ARGS__)

static CUresult check(int ok)
{
	return ok ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

int main(void)
{
	size_t n = 64u << 20, total = 0;
	CUdeviceptr d, e;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUstream st;
	char name[128] = "";
	int ver = 0;
	uint8_t *a, *b;
	double t;

	STEP(cuInit(0), "cuInit: open a session with vcuda-server");
	STEP(cuDriverGetVersion(&ver), "driver version (the host's): %d.%d", ver / 1000, ver % 1000 / 10);
	STEP(cuDeviceGet(&dev, 0), "device 0");
	STEP(cuDeviceGetName(name, sizeof(name), dev), "name: %.40s", name);
	STEP(cuDeviceTotalMem(&total, dev), "memory: %zu MiB", total >> 20);
	STEP(cuDevicePrimaryCtxRetain(&ctx, dev), "retain the primary context");
	STEP(cuCtxSetCurrent(ctx), "make it current");
	STEP(cuModuleLoadData(&mod, vt_store_ptx), "load a module from PTX (JIT-compiled on the host)");
	STEP(cuModuleGetFunction(&fn, mod, VT_STORE_KERNEL), "get its kernel %s", VT_STORE_KERNEL);
	STEP(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING), "create a stream");

	a = malloc(n);
	b = malloc(n);
	if (!a || !b)
		return 1;
	for (size_t i = 0; i < n; i++)
		a[i] = (uint8_t)(i * 2654435761u >> 24);
	STEP(cuMemAlloc(&d, n), "allocate 64 MiB of device memory");
	printf("  %-62s 0x%llx\n", "  device address (the GPU's own)", (unsigned long long)d);
	STEP(cuMemAlloc(&e, 4096), "allocate 4 KiB");

	t = now_s();
	STEP(cuMemcpyHtoD(d, a, n), "copy 64 MiB host->device through the arena (%.2f GB/s)",
	     (double)n / (now_s() - t + 1e-9) / 1e9);
	t = now_s();
	STEP(cuMemcpyDtoH(b, d, n), "copy 64 MiB device->host (%.2f GB/s)", (double)n / (now_s() - t + 1e-9) / 1e9);
	STEP(check(!memcmp(a, b, n)), "compare all 64 MiB byte for byte");

	CUdeviceptr at = e;
	unsigned int v = 0x600DCAFE;
	void *params[2] = {&at, &v};
	uint32_t word = 0, last = 0;

	STEP(cuMemsetD32Async(e, 0xC0FFEE11, 1024, st), "memset32 4 KiB to 0xC0FFEE11 (asynchronous)");
	STEP(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, params, NULL),
	     "launch %s<<<1, 1>>>(4 KiB buffer, 0x%08x)", VT_STORE_KERNEL, v);
	STEP(cuStreamSynchronize(st), "synchronize the stream");
	STEP(cuMemcpyDtoH(&word, e, 4), "read back the word the kernel stored");
	printf("  %-62s 0x%08x\n", "  value", word);
	STEP(cuMemcpyDtoH(&last, e + 4092, 4), "read back the last word of the memset");
	printf("  %-62s 0x%08x\n", "  value", last);
	STEP(check(word == v && last == 0xC0FFEE11), "both are what was written");

	/* A CUDA error is a result, not a crash: read from a freed allocation. */
	STEP(cuMemFree(e), "free the 4 KiB allocation");
	STEP_WANT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(&word, e, 4),
		  "read from the freed allocation (expected: an error)");

	CUresult rc = CUDA_SUCCESS;

	t = now_s();
	for (int i = 0; i < 10000 && rc == CUDA_SUCCESS; i++)
		rc = cuStreamQuery(st);
	STEP(rc, "10000 synchronous round trips (cuStreamQuery): %.2f us each", (now_s() - t) * 1e6 / 10000);
	STEP(cuMemFree(d), "free 64 MiB");
	STEP(cuStreamDestroy(st), "destroy the stream");
	STEP(cuModuleUnload(mod), "unload the module");
	STEP(cuDevicePrimaryCtxRelease(dev), "release the primary context");
	printf("vcuda-demo: done\n");
	free(a);
	free(b);
	return 0;
}
