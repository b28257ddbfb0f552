/* SPDX-License-Identifier: MIT */
/*
 * launch_split.c - what a launch costs the driver in each form a server could
 * use, timed as throughput (20000 launches of a kernel with four parameters,
 * then a synchronisation; the median of five blocks, in us per launch):
 * cuLaunchKernel with a kernelParams array (what programs pass), with one
 * packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER), and cuLaunchKernelEx with
 * the packed buffer (what vcuda's server does, host-backend/cuda/launch.c);
 * and an executable graph's kernel node update (cuGraphExecKernelNodeSetParams,
 * which XLA makes for every node before every launch) both ways, timed per
 * call.
 * Linked against libcuda.so.1: run natively, or through vcuda with the guest
 * library's path first (there every form reaches the server as its one
 * form). Not a test: a measuring tool whose figures docs/PERFORMANCE.md
 * quotes; prints one "name<TAB>us" line per figure.
 *
 *   launch_split
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckd.h"

#define N 20000
#define BLOCKS 5

static const char ptx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
			  ".visible .entry axpy(.param .f32 a, .param .u64 x, .param .u64 y, .param .u32 n)\n"
			  "{\nret;\n}\n";

static CUfunction fn;
static float a = 2.0f;
static CUdeviceptr xp, yp;
static unsigned int n = 100000;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *p, const void *q)
{
	double x = *(const double *)p, y = *(const double *)q;

	return (x > y) - (x < y);
}

/* Launch form @form once. */
static void launch(int form)
{
	void *args[] = {&a, &xp, &yp, &n};
	uint8_t buf[32];
	size_t size = 32;
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			 CU_LAUNCH_PARAM_END};

	memcpy(buf, &a, 4);
	memset(buf + 4, 0, 4);
	memcpy(buf + 8, &xp, 8);
	memcpy(buf + 16, &yp, 8);
	memcpy(buf + 24, &n, 4);
	memset(buf + 28, 0, 4);
	if (form == 0) {
		CKD(cuLaunchKernel(fn, 391, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	} else if (form == 1) {
		CKD(cuLaunchKernel(fn, 391, 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
	} else {
		CUlaunchConfig cfg = {.gridDimX = 391, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 256,
				      .blockDimY = 1, .blockDimZ = 1};

		CKD(cuLaunchKernelEx(&cfg, fn, NULL, extra));
	}
}

/* An executable graph's kernel node updated @N times with its parameters
 * as an array (@packed 0) or one packed buffer (1, what the server passes
 * on for cuGraphExecKernelNodeSetParams): us per update, the median of
 * five blocks. */
static void updates(const char *name, CUgraphExec ge, CUgraphNode node, int packed)
{
	void *args[] = {&a, &xp, &yp, &n};
	uint8_t buf[32] = {0};
	size_t size = 32;
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			 CU_LAUNCH_PARAM_END};
	CUDA_KERNEL_NODE_PARAMS np = {.func = fn, .gridDimX = 391, .gridDimY = 1, .gridDimZ = 1,
				      .blockDimX = 256, .blockDimY = 1, .blockDimZ = 1};
	double t[BLOCKS];

	memcpy(buf, &a, 4);
	memcpy(buf + 8, &xp, 8);
	memcpy(buf + 16, &yp, 8);
	memcpy(buf + 24, &n, 4);
	if (packed)
		np.extra = extra;
	else
		np.kernelParams = args;
	for (int b = 0; b < BLOCKS; b++) {
		double t0 = now_us();

		for (int i = 0; i < N; i++)
			CKD(cuGraphExecKernelNodeSetParams(ge, node, &np));
		t[b] = (now_us() - t0) / N;
	}
	qsort(t, BLOCKS, sizeof(t[0]), cmp);
	printf("%s\t%.3f\tus\n", name, t[BLOCKS / 2]);
}

static void block_of(const char *name, int form)
{
	double t[BLOCKS];

	for (int b = 0; b < BLOCKS; b++) {
		double t0 = now_us();

		for (int i = 0; i < N; i++)
			launch(form);
		CKD(cuCtxSynchronize());
		t[b] = (now_us() - t0) / N;
	}
	qsort(t, BLOCKS, sizeof(t[0]), cmp);
	printf("%s\t%.3f\tus\n", name, t[BLOCKS / 2]);
}

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;

	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));
	CKD(cuModuleLoadData(&mod, ptx));
	CKD(cuModuleGetFunction(&fn, mod, "axpy"));
	CKD(cuMemAlloc(&xp, 4 * n));
	CKD(cuMemAlloc(&yp, 4 * n));
	for (int i = 0; i < 1000; i++)
		launch(0);
	CKD(cuCtxSynchronize());
	block_of("launch_params_array", 0);
	if (argc > 1 && !strcmp(argv[1], "array"))
		return 0;
	block_of("launch_packed_buffer", 1);
	block_of("launch_ex_packed_buffer", 2);
	block_of("launch_params_array_again", 0);

	CUgraph g;
	CUgraphExec ge;
	CUgraphNode node;
	void *args[] = {&a, &xp, &yp, &n};
	CUDA_KERNEL_NODE_PARAMS np = {.func = fn, .gridDimX = 391, .gridDimY = 1, .gridDimZ = 1,
				      .blockDimX = 256, .blockDimY = 1, .blockDimZ = 1, .kernelParams = args};

	CKD(cuGraphCreate(&g, 0));
	CKD(cuGraphAddKernelNode(&node, g, NULL, 0, &np));
	CKD(cuGraphInstantiate(&ge, g, 0));
	updates("exec_node_update_params_array", ge, node, 0);
	updates("exec_node_update_packed_buffer", ge, node, 1);
	CKD(cuGraphExecDestroy(ge));
	CKD(cuGraphDestroy(g));
	return 0;
}
