/* SPDX-License-Identifier: MIT */
/*
 * gpushare_load.c - a GPU-bound client for the compute-weight tests: for
 * SECONDS it launches batches of a kernel that spins for KERNEL_US (about
 * 2 ms of them a batch, at least 8, so that short kernels keep the GPU busy
 * too) and waits for each batch, then prints how many kernels completed.
 * These on servers sharing a GPU (vcuda-server --sched) show the share each
 * got. With "idle" it runs one batch and then holds its session, idle, for
 * SECONDS (a VM that is there but does not compete).
 *
 *   gpushare_load SECONDS KERNEL_US [idle]
 *
 * With GPUSHARE_START=NS (CLOCK_MONOTONIC) the clients of one test count
 * over the same window: they work from their start until NS + SECONDS and
 * count only the batches that end after NS, so that one client's head start
 * alone on the GPU (or its run alone after the others end) is not counted.
 */
#define _DEFAULT_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	double secs, t0, start;
	unsigned long long cycles, us, done = 0;
	int batch;
	int khz = 0;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUstream s;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "idle"))) {
		fprintf(stderr, "usage: gpushare_load SECONDS KERNEL_US [idle]\n");
		return 2;
	}
	secs = atof(argv[1]);
	us = strtoull(argv[2], NULL, 10);
	batch = us && us < 250 ? (int)(2000 / us) : 8;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuDeviceGetAttribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev));
	cycles = us * (unsigned long long)khz / 1000;
	CHECK(cuModuleLoadData(&mod, PTX));
	CHECK(cuModuleGetFunction(&f, mod, "spin"));
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	t0 = now_s();
	if (getenv("GPUSHARE_START"))
		start = (double)strtoull(getenv("GPUSHARE_START"), NULL, 10) / 1e9;
	else
		start = t0;
	do {
		void *args[] = {&cycles};

		for (int i = 0; i < batch; i++)
			CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
		CHECK(cuStreamSynchronize(s));
		if (now_s() >= start)
			done += (unsigned long long)batch;
		if (argc == 4) { /* idle: the session stays to the end, its GPU work does not */
			double left = start + secs - now_s();
			struct timespec ts = {.tv_sec = (time_t)left, .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};

			if (left > 0)
				nanosleep(&ts, NULL);
			break;
		}
	} while (now_s() - start < secs);
	printf("kernels %llu in %.2f s\n", done, now_s() - (start > t0 ? start : t0));
	return 0;
}
