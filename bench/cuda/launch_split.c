/* SPDX-License-Identifier: MIT */
/*
 * launch_split.c - what a launch costs the driver in each form a server could
 * use, timed as throughput (20000 launches of a kernel with four parameters,
 * then a synchronisation; the median of five blocks, in us per launch):
 * cuLaunchKernel with a kernelParams array (what programs pass), with one
 * packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER), and cuLaunchKernelEx with
 * the packed buffer (what vcuda's server does, host-backend/cuda/launch.c),
 * each at two shapes: 391 blocks of 256 threads, and one block of 32 (what
 * cuda_bench's launch rows launch, where the submission is the bound);
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

/* The parameters both ways, made once in main(): an array of pointers to
 * them, and one buffer packed as the server receives them (a at 0, x at 8,
 * y at 16, n at 24). Its size is the parameters' (28, without tail
 * padding): the driver refuses a larger one with
 * CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. */
static void *args[] = {&a, &xp, &yp, &n};
static uint8_t packed[32];
static size_t packed_size = 28;

/* The launches' shape: grid and block width. */
static unsigned gx = 391, bx = 256;
static void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
			CU_LAUNCH_PARAM_END};

/* The executable graph whose kernel node updates() updates. */
static CUgraphExec ge;
static CUgraphNode node;
static CUDA_KERNEL_NODE_PARAMS np;

static void launch_array(void)
{
	CKD(cuLaunchKernel(fn, gx, 1, 1, bx, 1, 1, 0, NULL, args, NULL));
}

static void launch_packed(void)
{
	CKD(cuLaunchKernel(fn, gx, 1, 1, bx, 1, 1, 0, NULL, NULL, extra));
}

static void launch_ex_packed(void)
{
	CUlaunchConfig cfg = {.gridDimX = gx, .gridDimY = 1, .gridDimZ = 1, .blockDimX = bx, .blockDimY = 1,
			      .blockDimZ = 1};

	CKD(cuLaunchKernelEx(&cfg, fn, NULL, extra));
}

static void update(void)
{
	CKD(cuGraphExecKernelNodeSetParams(ge, node, &np));
}

/* @one called N times, then (@wait) a synchronisation: the median of five
 * blocks' time per call. */
static void per_call(const char *name, void (*one)(void), int wait)
{
	double t[BLOCKS];
	char label[96];

	for (int b = 0; b < BLOCKS; b++) {
		double t0 = ckd_now_us();

		for (int i = 0; i < N; i++)
			one();
		if (wait)
			CKD(cuCtxSynchronize());
		t[b] = (ckd_now_us() - t0) / N;
	}
	qsort(t, BLOCKS, sizeof(t[0]), ckd_cmp_double);
	if (wait) /* a launch: its shape in the name */
		snprintf(label, sizeof(label), "%s_%ux%u", name, gx, bx);
	else
		snprintf(label, sizeof(label), "%s", name);
	printf("%s\t%.3f\tus\n", label, t[BLOCKS / 2]);
}

int main(int argc, char **argv)
{
	CUmodule mod;
	CUgraph g;

	ckd_primary();
	CKD(cuModuleLoadData(&mod, ptx));
	CKD(cuModuleGetFunction(&fn, mod, "axpy"));
	CKD(cuMemAlloc(&xp, 4 * n));
	CKD(cuMemAlloc(&yp, 4 * n));
	memcpy(packed, &a, 4);
	memcpy(packed + 8, &xp, 8);
	memcpy(packed + 16, &yp, 8);
	memcpy(packed + 24, &n, 4);
	for (int i = 0; i < 1000; i++)
		launch_array();
	CKD(cuCtxSynchronize());
	for (int shape = 0; shape < 2; shape++) {
		gx = shape ? 1 : 391;
		bx = shape ? 32 : 256;
		per_call("launch_params_array", launch_array, 1);
		if (argc > 1 && !strcmp(argv[1], "array"))
			continue;
		per_call("launch_packed_buffer", launch_packed, 1);
		per_call("launch_ex_packed_buffer", launch_ex_packed, 1);
		per_call("launch_params_array_again", launch_array, 1);
	}
	if (argc > 1 && !strcmp(argv[1], "array"))
		return 0;
	gx = 391;
	bx = 256;

	np = (CUDA_KERNEL_NODE_PARAMS){.func = fn, .gridDimX = 391, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 256,
				       .blockDimY = 1, .blockDimZ = 1, .kernelParams = args};
	CKD(cuGraphCreate(&g, 0));
	CKD(cuGraphAddKernelNode(&node, g, NULL, 0, &np));
	CKD(cuGraphInstantiate(&ge, g, 0));
	per_call("exec_node_update_params_array", update, 0);
	np.kernelParams = NULL;
	np.extra = extra;
	per_call("exec_node_update_packed_buffer", update, 0);
	CKD(cuGraphExecDestroy(ge));
	CKD(cuGraphDestroy(g));
	return 0;
}
