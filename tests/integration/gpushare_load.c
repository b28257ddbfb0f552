/* SPDX-License-Identifier: MIT */
/*
 * gpushare_load.c - a GPU-bound client for the compute-weight tests: for
 * SECONDS it launches batches of a kernel that spins for KERNEL_US and waits
 * for each batch, then prints how many kernels completed. Two of these on two
 * servers sharing a GPU (vcuda-server --sched) show the share each got.
 *
 *   gpushare_load SECONDS KERNEL_US
 */
#define _DEFAULT_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vc_time.h"

/* spin(cycles): busy-wait on the SM clock (PTX, JIT-compiled for any GPU). */
static const char PTX[] =
	".version 8.0\n.target sm_75\n.address_size 64\n"
	".visible .entry spin(.param .u64 cycles)\n{\n"
	"  .reg .pred %p<2>;\n  .reg .b64 %rd<5>;\n"
	"  ld.param.u64 %rd1, [cycles];\n  mov.u64 %rd2, %clock64;\n"
	"LOOP:\n  mov.u64 %rd3, %clock64;\n  sub.s64 %rd4, %rd3, %rd2;\n"
	"  setp.lt.s64 %p1, %rd4, %rd1;\n  @%p1 bra LOOP;\n  ret;\n}\n";

#define CHECK(x)                                                                     \
	do {                                                                         \
		CUresult r_ = (x);                                                   \
		if (r_ != CUDA_SUCCESS) {                                            \
			fprintf(stderr, "gpushare_load: %s: error %d\n", #x, (int)r_); \
			return 1;                                                    \
		}                                                                    \
	} while (0)

static double now_s(void)
{
	return (double)vc_now_ns() / 1e9;
}

int main(int argc, char **argv)
{
	double secs, t0;
	unsigned long long cycles, done = 0;
	int khz = 0;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUstream s;

	if (argc != 3) {
		fprintf(stderr, "usage: gpushare_load SECONDS KERNEL_US\n");
		return 2;
	}
	secs = atof(argv[1]);
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuDeviceGetAttribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev));
	cycles = strtoull(argv[2], NULL, 10) * (unsigned long long)khz / 1000;
	CHECK(cuModuleLoadData(&mod, PTX));
	CHECK(cuModuleGetFunction(&f, mod, "spin"));
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	t0 = now_s();
	while (now_s() - t0 < secs) {
		void *args[] = {&cycles};

		for (int i = 0; i < 8; i++)
			CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
		CHECK(cuStreamSynchronize(s));
		done += 8;
	}
	printf("kernels %llu in %.2f s\n", done, now_s() - t0);
	return 0;
}
