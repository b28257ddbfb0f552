/* SPDX-License-Identifier: MIT */
/*
 * test_cuda_objects.c - driver objects whose calls hand back more than a
 * value, through a running vcuda-server (Check; each test forks): memory
 * pools and their attributes (int and 64-bit values), allocations from a
 * pool, kernel enumeration across reply pages, kernel and function names the
 * caller may keep, stream capture queries, and graphs built by hand. With the CI stand-in behind
 * the server, libraries hold 600 kernels named standin_kernel_<i> and
 * streams never capture; on a GPU the same tests run against the real driver
 * except where they say so.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_fixture.h"
#include "../lib/vt_kernels.h"
#include <cudaProfiler.h>
#include <pthread.h>
#include <unistd.h>

/* Not declared without __CUDA_API_VERSION_INTERNAL: the driver exports it still. */
CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
				unsigned int flags, CUdevice dev);

START_TEST(memory_pools)
{
	CUmemPoolProps props;
	CUmemoryPool pool, def, cur;
	cuuint64_t v64 = 64ull << 20, got64 = 0;
	int iv = 0, goti = 1;
	CUdeviceptr d;
	CUstream s;

	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 0;
	CK(cuMemPoolCreate(&pool, &props));
	/* 64-bit and int attributes both travel */
	CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v64));
	CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got64));
	ck_assert_uint_eq(got64, 64ull << 20);
	CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &iv));
	CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &goti));
	ck_assert_int_eq(goti, 0);
	ck_assert_int_eq(cuMemPoolGetAttribute(pool, (CUmemPool_attribute)999, &got64), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	/* stream-ordered allocations from it, usable and freed in order */
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAllocFromPoolAsync(&d, 1 << 20, pool, s));
	CK(cuMemsetD8Async(d, 0x5a, 1 << 20, s));
	CK(cuMemFreeAsync(d, s));
	CK(cuStreamSynchronize(s));
	ck_assert_int_eq(cuMemAllocFromPoolAsync(&d, 4096, NULL, s), CUDA_ERROR_INVALID_VALUE);
	/* the device's pools */
	CK(cuDeviceGetDefaultMemPool(&def, 0));
	CK(cuDeviceGetMemPool(&cur, 0));
	ck_assert_ptr_eq(def, cur);
	ck_assert_ptr_ne(def, pool);
	CK(cuStreamDestroy(s));
	CK(cuMemPoolDestroy(pool));
	/* a destroyed pool's handle is no longer accepted */
	ck_assert_int_eq(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got64),
			 CUDA_ERROR_INVALID_HANDLE);
	/* a Windows security descriptor pointer means nothing here */
	props.win32SecurityAttributes = &props;
	ck_assert_int_eq(cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

static int standin(void)
{
	char name[256];

	return cuDeviceGetName(name, sizeof(name), 0) == CUDA_SUCCESS && strstr(name, "stand-in");
}

START_TEST(kernel_lists_and_names)
{
	static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				  ".visible .entry noop()\n{\n ret;\n}\n";
	const char *n1 = NULL, *n2 = NULL, *fn = NULL;
	unsigned int count = 0;
	CUkernel *ks, k;
	CUlibrary lib;
	CUfunction f;
	CUmodule m;

	CK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernelCount(&count, lib));
	ck_assert_uint_ge(count, 1);
	/* more room than kernels: at most count come back, in pages */
	ks = calloc(count + 8, sizeof(*ks));
	ck_assert_ptr_nonnull(ks);
	CK(cuLibraryEnumerateKernels(ks, count + 8, lib));
	for (unsigned i = 0; i < count; i++) {
		const char *n = NULL;

		ck_assert_ptr_nonnull(ks[i]);
		CK(cuKernelGetName(&n, ks[i]));
		if (standin()) {
			char want[32];

			snprintf(want, sizeof(want), "standin_kernel_%u", i);
			ck_assert_str_eq(n, want);
		}
	}
	ck_assert_ptr_null(ks[count]);
	/* the same handle twice gives the same string, which stays valid */
	CK(cuKernelGetName(&n1, ks[count - 1]));
	CK(cuKernelGetName(&n2, ks[count - 1]));
	ck_assert_ptr_eq(n1, n2);
	/* a kernel looked up by name carries that name */
	CK(cuLibraryGetKernel(&k, lib, "noop"));
	CK(cuKernelGetName(&n1, k));
	ck_assert_str_eq(n1, "noop");
	ck_assert_int_eq(cuKernelGetName(NULL, k), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuKernelGetName(&n1, (CUkernel)(uintptr_t)0x7c0a000000000999ull), CUDA_ERROR_INVALID_HANDLE);
	/* functions from a module */
	CK(cuModuleLoadData(&m, ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	CK(cuFuncGetName(&fn, f));
	ck_assert_str_eq(fn, "noop");
	CK(cuModuleUnload(m));
	free(ks);
	CK(cuLibraryUnload(lib));
}
END_TEST

CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
					   cuuint64_t *id_out, CUgraph *graph_out,
					   const CUgraphNode **dependencies_out, size_t *numDependencies_out);

START_TEST(capture_queries)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
	const CUgraphNode *deps = (const CUgraphNode *)&st;
	const CUgraphEdgeData *edges = (const CUgraphEdgeData *)&st;
	CUgraph g = (CUgraph)&st;
	size_t n = 99;
	cuuint64_t id = 99;
	CUstream s;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamIsCapturing(s, &st));
	ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_NONE);
	st = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
	CK(cuStreamGetCaptureInfo(s, &st, &id, &g, &deps, &edges, &n));
	ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_NONE);
	ck_assert_uint_eq(n, 0);
	st = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
	CK(cuStreamGetCaptureInfo_v2(s, &st, NULL, NULL, NULL, NULL));
	ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_NONE);
	ck_assert_int_eq(cuStreamGetCaptureInfo(s, NULL, NULL, NULL, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuStreamGetCaptureInfo((CUstream)(uintptr_t)0x7c0a000000000999ull, &st, NULL, NULL, NULL,
						NULL, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	CK(cuStreamDestroy(s));
}
END_TEST

/* A graph built by hand, run three times: pinned host memory -> device ->
 * pinned host memory around a kernel node, byte for byte. */
START_TEST(graphs_built_by_hand)
{
	static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				  ".visible .entry noop()\n{\n ret;\n}\n";
	const size_t n = 256 * 1024;
	CUDA_KERNEL_NODE_PARAMS kp, got;
	CUgraphNode h2d, kn, d2h, nodes[4];
	CUgraphNodeType t;
	CUDA_MEMCPY3D c;
	CUgraphExec ge;
	uint8_t *src, *dst, pageable[64];
	size_t count = 0;
	CUfunction f;
	CUdeviceptr d;
	CUmodule m;
	CUstream s;
	CUgraph g;

	CK(cuModuleLoadData(&m, ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc(&d, n));
	CK(cuMemHostAlloc((void **)&src, n, 0));
	CK(cuMemHostAlloc((void **)&dst, n, 0));
	CK(cuGraphCreate(&g, 0));

	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = src;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = d;
	c.WidthInBytes = n;
	c.Height = c.Depth = 1;
	CK(cuGraphAddMemcpyNode(&h2d, g, NULL, 0, &c, g_ctx));
	memset(&kp, 0, sizeof(kp));
	kp.func = f;
	kp.gridDimX = kp.gridDimY = kp.gridDimZ = 4;
	kp.blockDimX = 64;
	kp.blockDimY = kp.blockDimZ = 1;
	CK(cuGraphAddKernelNode(&kn, g, &h2d, 1, &kp));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_UNIFIED; /* cudaMemcpyDefault: resolved by the guest */
	c.srcDevice = d;
	c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
	c.dstDevice = (CUdeviceptr)(uintptr_t)dst;
	c.WidthInBytes = n;
	c.Height = c.Depth = 1;
	CK(cuGraphAddMemcpyNode(&d2h, g, &kn, 1, &c, g_ctx));
	/* pageable memory cannot be in a graph here: refused, not recorded */
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = pageable;
	c.WidthInBytes = sizeof(pageable);
	ck_assert_int_eq(cuGraphAddMemcpyNode(&nodes[0], g, &kn, 1, &c, g_ctx), CUDA_ERROR_NOT_SUPPORTED);
	/* a copy past the end of a pinned allocation's pool is refused */
	c.dstHost = dst;
	c.WidthInBytes = 1ull << 40;
	ck_assert_int_eq(cuGraphAddMemcpyNode(&nodes[0], g, &kn, 1, &c, g_ctx), CUDA_ERROR_INVALID_VALUE);

	CK(cuGraphGetNodes(g, NULL, &count));
	ck_assert_uint_eq(count, 3);
	count = 4;
	CK(cuGraphGetNodes(g, nodes, &count));
	ck_assert_uint_eq(count, 3);
	ck_assert_ptr_eq(nodes[0], h2d);
	ck_assert_ptr_eq(nodes[1], kn);
	ck_assert_ptr_eq(nodes[2], d2h);
	ck_assert_ptr_null(nodes[3]);
	CK(cuGraphNodeGetType(kn, &t));
	ck_assert_int_eq(t, CU_GRAPH_NODE_TYPE_KERNEL);
	CK(cuGraphNodeGetType(d2h, &t));
	ck_assert_int_eq(t, CU_GRAPH_NODE_TYPE_MEMCPY);
	CK(cuGraphKernelNodeGetParams(kn, &got));
	ck_assert_ptr_eq(got.func, f);
	ck_assert_uint_eq(got.gridDimX, 4);
	ck_assert_uint_eq(got.blockDimX, 64);

	CK(cuGraphInstantiate(&ge, g, 0));
	for (int it = 0; it < 3; it++) {
		for (size_t i = 0; i < n; i++)
			src[i] = (uint8_t)(i * 7 + it);
		memset(dst, 0, n);
		CK(cuGraphLaunch(ge, s));
		CK(cuStreamSynchronize(s));
		for (size_t i = 0; i < n; i++)
			ck_assert_uint_eq(dst[i], (uint8_t)(i * 7 + it));
	}
	kp.gridDimX = 8;
	CK(cuGraphExecKernelNodeSetParams(ge, kn, &kp));
	/* the graph goes, its executable graph stays, its nodes' ids go */
	CK(cuGraphDestroy(g));
	ck_assert_int_eq(cuGraphKernelNodeGetParams(kn, &got), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGraphNodeGetType(kn, &t), CUDA_ERROR_INVALID_HANDLE);
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	CK(cuGraphExecDestroy(ge));
	CK(cuMemFreeHost(src));
	CK(cuMemFreeHost(dst));
	CK(cuMemFree(d));
	CK(cuStreamDestroy(s));
	CK(cuModuleUnload(m));
}
END_TEST

/* ---- streams, launches, contexts, tensor maps ------------------------------------- */

static uint32_t read32(CUdeviceptr d)
{
	uint32_t v = 0;

	CK(cuMemcpyDtoH(&v, d, sizeof(v)));
	return v;
}

START_TEST(stream_memory_ops)
{
	CUstream a, b;
	CUdeviceptr d, gone;
	CUstreamBatchMemOpParams ops[3];
	uint64_t v64 = 0;

	CK(cuMemAlloc(&d, 4096));
	CK(cuMemsetD8(d, 0, 4096));
	CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
	/* a waits for b's flag, then writes: in stream order */
	CK(cuStreamWaitValue32(a, d, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuStreamWriteValue32(a, d + 4, 7, 0));
	ck_assert_int_eq(cuStreamQuery(a), CUDA_ERROR_NOT_READY);
	ck_assert_uint_eq(read32(d + 4), 0);
	CK(cuStreamWriteValue32(b, d, 1, 0));
	CK(cuStreamSynchronize(a));
	ck_assert_uint_eq(read32(d + 4), 7);
	/* 64-bit values, equality */
	CK(cuStreamWaitValue64(a, d + 8, 0x1122334455667788ull, CU_STREAM_WAIT_VALUE_EQ));
	CK(cuStreamWriteValue64(a, d + 16, 0xabcdef0123456789ull, 0));
	CK(cuStreamWriteValue64(b, d + 8, 0x1122334455667788ull, 0));
	CK(cuStreamSynchronize(a));
	CK(cuMemcpyDtoH(&v64, d + 16, 8));
	ck_assert_uint_eq(v64, 0xabcdef0123456789ull);
	/* a batch of every kind */
	memset(ops, 0, sizeof(ops));
	ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
	ops[0].writeValue.address = d + 24;
	ops[0].writeValue.value = 5;
	ops[1].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
	ops[2].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
	ops[2].waitValue.address = d + 24;
	ops[2].waitValue.value = 5;
	ops[2].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
	CK(cuStreamBatchMemOp(b, 3, ops, 0));
	CK(cuStreamSynchronize(b));
	ck_assert_uint_eq(read32(d + 24), 5);
	/* addresses that are not the session's memory, bad operations, bad counts */
	ck_assert_int_eq(cuStreamWriteValue32(a, 0x1000, 1, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuStreamWaitValue32(a, d + 4094, 1, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemAlloc(&gone, 4096));
	CK(cuMemFree(gone));
	ck_assert_int_eq(cuStreamWriteValue64(a, gone, 1, 0), CUDA_ERROR_INVALID_VALUE);
	ops[0].writeValue.address = 0x2000;
	ck_assert_int_eq(cuStreamBatchMemOp(a, 3, ops, 0), CUDA_ERROR_INVALID_VALUE);
	ops[0].operation = (CUstreamBatchMemOpType)99;
	ck_assert_int_eq(cuStreamBatchMemOp(a, 1, ops, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuStreamBatchMemOp(a, 257, ops, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuStreamBatchMemOp(a, 1, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuStreamDestroy(a));
	CK(cuStreamDestroy(b));
	CK(cuMemFree(d));
}
END_TEST

struct waiter {
	CUcontext ctx;
	CUstream s;
	CUresult rc;
};

static void *sync_thread(void *arg)
{
	struct waiter *w = arg;

	cuCtxSetCurrent(w->ctx);
	w->rc = cuStreamSynchronize(w->s);
	return NULL;
}

/* A wait nobody satisfies must not hang a context destroy: the destroy goes
 * ahead, and the synchronisation waiting on it ends with an error. */
START_TEST(wait_value_never_written)
{
	struct waiter w = {0};
	CUdeviceptr d;
	pthread_t t;

	CK(cuCtxCreate(&w.ctx, NULL, 0, 0));
	CK(cuMemAlloc(&d, 64));
	CK(cuMemsetD8(d, 0, 64));
	CK(cuStreamCreate(&w.s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamWaitValue32(w.s, d, 1, CU_STREAM_WAIT_VALUE_EQ));
	ck_assert_int_eq(pthread_create(&t, NULL, sync_thread, &w), 0);
	usleep(200 * 1000);
	ck_assert_int_eq(cuStreamQuery(w.s), CUDA_ERROR_NOT_READY);
	CK(cuCtxDestroy(w.ctx));
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_ne(w.rc, CUDA_SUCCESS);
	/* the session goes on */
	CK(cuCtxSetCurrent(g_ctx));
	CK(cuMemAlloc(&d, 64));
	CK(cuMemFree(d));
	/* and a session that leaves a wait pending ends (the fixture releases) */
	CK(cuStreamCreate(&w.s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc(&d, 64));
	CK(cuMemsetD8(d, 0, 64));
	CK(cuStreamWaitValue32(w.s, d, 1, CU_STREAM_WAIT_VALUE_EQ));
}
END_TEST

START_TEST(stream_attributes)
{
	CUstreamAttrValue v, got;
	CUstream a, b;
	CUdeviceptr d;

	CK(cuMemAlloc(&d, 1 << 20));
	CK(cuStreamCreate(&a, 0));
	CK(cuStreamCreate(&b, 0));
	memset(&v, 0, sizeof(v));
	v.priority = -2;
	CK(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
	CK(cuStreamGetAttribute(a, CU_LAUNCH_ATTRIBUTE_PRIORITY, &got));
	ck_assert_int_eq(got.priority, -2);
	memset(&v, 0, sizeof(v));
	v.syncPolicy = CU_SYNC_POLICY_SPIN;
	CK(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
	CK(cuStreamGetAttribute(a, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &got));
	ck_assert_int_eq(got.syncPolicy, CU_SYNC_POLICY_SPIN);
	/* an access policy window over our memory; outside it, refused */
	memset(&v, 0, sizeof(v));
	v.accessPolicyWindow.base_ptr = (void *)(uintptr_t)d;
	v.accessPolicyWindow.num_bytes = 1 << 20;
	v.accessPolicyWindow.hitRatio = 0.5f;
	v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
	v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
	CK(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
	CK(cuStreamGetAttribute(a, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &got));
	ck_assert_ptr_eq(got.accessPolicyWindow.base_ptr, (void *)(uintptr_t)d);
	v.accessPolicyWindow.num_bytes = (1 << 20) + 4096;
	ck_assert_int_eq(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v),
			 CUDA_ERROR_INVALID_VALUE);
	v.accessPolicyWindow.base_ptr = (void *)(uintptr_t)0x10000;
	v.accessPolicyWindow.num_bytes = 4096;
	ck_assert_int_eq(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v),
			 CUDA_ERROR_INVALID_VALUE);
	/* copied to another stream */
	CK(cuStreamCopyAttributes(b, a));
	CK(cuStreamGetAttribute(b, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &got));
	ck_assert_int_eq(got.syncPolicy, CU_SYNC_POLICY_SPIN);
	/* launch attributes with handles are no stream attributes */
	ck_assert_int_eq(cuStreamGetAttribute(a, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT, &got),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT, &v),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuStreamGetAttribute(a, CU_LAUNCH_ATTRIBUTE_PRIORITY, NULL), CUDA_ERROR_INVALID_VALUE);
	{
		CUcontext c = NULL;
		CUgreenCtx gc = (CUgreenCtx)1;

		CK(cuStreamGetCtx_v2(a, &c, &gc));
		ck_assert_ptr_eq(c, g_ctx);
		ck_assert_ptr_null(gc);
	}
	CK(cuStreamDestroy(a));
	CK(cuStreamDestroy(b));
	CK(cuMemFree(d));
}
END_TEST

/* The asynchronous error of a launch on @s. A deferred synchronisation's
 * reply may overtake the publication of the launch's sequence number, so
 * the error can come at the second synchronisation instead of the first
 * (found here; the core's ordering, not this family's). */
static CUresult launch_error(CUstream s)
{
	CUresult rc = cuStreamSynchronize(s);

	return rc ? rc : cuStreamSynchronize(s);
}

static size_t smem_of(int block)
{
	return (size_t)block * 4;
}

START_TEST(launch_attributes_and_legacy)
{
	CUlaunchAttribute at[2];
	CUlaunchConfig cfg;
	CUmodule m;
	CUfunction f;
	CUdeviceptr d;
	CUevent ev;
	CUstream s;
	unsigned v = 0x5a5a;
	void *args[2];
	int grid = 0, block = 0, n = 0;

	CK(cuModuleLoadData(&m, vt_store_ptx));
	CK(cuModuleGetFunction(&f, m, VT_STORE_KERNEL));
	CK(cuMemAlloc(&d, 4096));
	CK(cuStreamCreate(&s, 0));
	CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	args[0] = &d;
	args[1] = &v;
	memset(&cfg, 0, sizeof(cfg));
	memset(at, 0, sizeof(at));
	cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
	cfg.hStream = s;
	cfg.attrs = at;
	cfg.numAttrs = 1;
	/* an event in an attribute is the session's */
	at[0].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
	at[0].value.launchCompletionEvent.event = ev;
	CK(cuLaunchKernelEx(&cfg, f, args, NULL));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(read32(d), 0x5a5a);
	/* a forged one is an invalid handle (reported at the next synchronisation) */
	at[0].value.launchCompletionEvent.event = (CUevent)(uintptr_t)0x7c02000000000777ull;
	cuLaunchKernelEx(&cfg, f, args, NULL);
	ck_assert_int_eq(launch_error(s), CUDA_ERROR_INVALID_HANDLE);
	at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
	at[0].value.programmaticEvent.event = (CUevent)(uintptr_t)0x1234;
	cuLaunchKernelEx(&cfg, f, args, NULL);
	ck_assert_int_eq(launch_error(s), CUDA_ERROR_INVALID_HANDLE);
	/* an access policy window beyond our memory */
	at[0].id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
	at[0].value.accessPolicyWindow.base_ptr = (void *)(uintptr_t)d;
	at[0].value.accessPolicyWindow.num_bytes = 1 << 30;
	cuLaunchKernelEx(&cfg, f, args, NULL);
	ck_assert_int_eq(launch_error(s), CUDA_ERROR_INVALID_VALUE);
	/* programmatic serialization and priority are plain values */
	at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
	at[0].value.programmaticStreamSerializationAllowed = 1;
	at[1].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	at[1].value.priority = -1;
	cfg.numAttrs = 2;
	CK(cuLaunchKernelEx(&cfg, f, args, NULL));
	CK(cuStreamSynchronize(s));
	/* clusters: the grid a multiple of the cluster, the potential size */
	at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	at[0].value.clusterDim.x = 2;
	at[0].value.clusterDim.y = at[0].value.clusterDim.z = 1;
	cfg.numAttrs = 1;
	cfg.gridDimX = 4;
	CK(cuLaunchKernelEx(&cfg, f, args, NULL));
	CK(cuStreamSynchronize(s));
	CK(cuOccupancyMaxActiveClusters(&n, f, &cfg));
	ck_assert_int_ge(n, 1);
	CK(cuOccupancyMaxPotentialClusterSize(&n, f, &cfg));
	ck_assert_int_ge(n, 1);
	at[0].id = (CUlaunchAttributeID)77;
	ck_assert_int_eq(cuOccupancyMaxPotentialClusterSize(&n, f, &cfg), CUDA_ERROR_INVALID_VALUE);
	/* potential block size, with and without a dynamic shared memory callback */
	CK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 0));
	ck_assert_int_gt(block, 0);
	ck_assert_int_le(block, 1024);
	ck_assert_int_gt(grid, 0);
	CK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, smem_of, 0, 256));
	ck_assert_int_gt(block, 0);
	ck_assert_int_le(block, 256);
	ck_assert_int_eq(cuOccupancyMaxPotentialBlockSize(NULL, &block, f, NULL, 0, 0), CUDA_ERROR_INVALID_VALUE);
	/* the deprecated execution control, launched as cuLaunchKernel */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	v = 0xbeef;
	CK(cuFuncSetBlockShape(f, 1, 1, 1));
	CK(cuFuncSetSharedSize(f, 0));
	CK(cuParamSetv(f, 0, &d, sizeof(d)));
	CK(cuParamSeti(f, 8, v));
	CK(cuParamSetSize(f, 12));
	CK(cuLaunchGrid(f, 1, 1));
	CK(cuCtxSynchronize());
	ck_assert_uint_eq(read32(d), 0xbeef);
	CK(cuParamSeti(f, 8, 0xcafe));
	CK(cuLaunchGridAsync(f, 1, 1, s));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(read32(d), 0xcafe);
	ck_assert_int_eq(cuParamSetv(f, 32760, &d, 16), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuFuncSetBlockShape(f, 0, 1, 1), CUDA_ERROR_INVALID_VALUE);
#pragma GCC diagnostic pop
	CK(cuEventDestroy(ev));
	CK(cuStreamDestroy(s));
	CK(cuMemFree(d));
	CK(cuModuleUnload(m));
}
END_TEST

START_TEST(tensor_maps)
{
	CUtensorMap tm, forged;
	CUdeviceptr d, d2;
	cuuint64_t dims[2] = {64, 64}, strides[1] = {256};
	cuuint32_t box[2] = {32, 32}, es[2] = {1, 1};

	CK(cuMemAlloc(&d, 64 * 256));
	CK(cuMemAlloc(&d2, 64 * 256));
	CK(cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)(uintptr_t)d, dims, strides, box,
				  es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
				  CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	CK(cuTensorMapReplaceAddress(&tm, (void *)(uintptr_t)d2));
	/* a map reaching past the allocation, by its rows or by an overflowing stride */
	dims[1] = 65;
	ck_assert_int_eq(cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)(uintptr_t)d, dims,
						strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
						CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
						CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
			 CUDA_ERROR_INVALID_VALUE);
	dims[1] = 1ull << 32;
	strides[0] = 1ull << 39;
	ck_assert_int_eq(cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)(uintptr_t)d, dims,
						strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
						CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
						CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
			 CUDA_ERROR_INVALID_VALUE);
	/* memory that is not ours, a rank the driver refuses */
	dims[1] = 64;
	strides[0] = 256;
	ck_assert_int_eq(cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)(uintptr_t)0x100000,
						dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
						CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
						CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 6, (void *)(uintptr_t)d, dims,
						strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
						CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
						CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
			 CUDA_ERROR_INVALID_VALUE);
	/* a map the session never encoded gets no new address */
	memset(&forged, 0x41, sizeof(forged));
	ck_assert_int_eq(cuTensorMapReplaceAddress(&forged, (void *)(uintptr_t)d), CUDA_ERROR_INVALID_VALUE);
	/* a map of ours gets no address outside our memory */
	ck_assert_int_eq(cuTensorMapReplaceAddress(&tm, (void *)(uintptr_t)(d + 64 * 256 - 256)),
			 CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(d));
	CK(cuMemFree(d2));
}
END_TEST

START_TEST(contexts_and_devices)
{
	CUexecAffinityParam aff = {0}, got = {0};
	CUctxCreateParams cp = {0};
	CUcontext c, c2, att;
	CUevent ev;
	CUdevprop prop;
	int major = 0, minor = 0, sms = 0;

	CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	CK(cuDeviceComputeCapability(&major, &minor, 0));
	ck_assert_int_gt(major, 0);
	CK(cuDeviceGetProperties(&prop, 0));
#pragma GCC diagnostic pop
	ck_assert_int_eq(prop.maxThreadsPerBlock, 1024);
	/* cuCtxCreate, and with execution affinity (v3, v4) */
	CK(cuCtxCreate(&c, NULL, 0, 0));
	CK(cuCtxGetExecAffinity(&got, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
	ck_assert_int_eq((int)got.param.smCount.val, sms);
	aff.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
	aff.param.smCount.val = (unsigned)sms / 2;
	CK(cuCtxCreate_v3(&c2, &aff, 1, 0, 0));
	CK(cuCtxGetExecAffinity(&got, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
	ck_assert_uint_le(got.param.smCount.val, (unsigned)sms);
	CK(cuCtxDestroy(c2));
	cp.execAffinityParams = &aff;
	cp.numExecAffinityParams = 1;
	CK(cuCtxCreate_v4(&c2, &cp, 0, 0));
	CK(cuCtxDestroy(c2));
	/* attach and detach: the creator's count and one more */
	CK(cuCtxSetCurrent(c));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	CK(cuCtxAttach(&att, 0));
	ck_assert_ptr_eq(att, c);
	ck_assert_int_eq(cuCtxAttach(&att, 1), CUDA_ERROR_INVALID_VALUE);
	CK(cuCtxDetach(c));
	/* context events */
	CK(cuEventCreate(&ev, 0));
	CK(cuCtxRecordEvent(c, ev));
	CK(cuCtxWaitEvent(c, ev));
	CK(cuEventDestroy(ev));
	/* one GPU: a context is no peer of another on the same device */
	ck_assert_int_eq(cuCtxEnablePeerAccess(g_ctx, 0), CUDA_ERROR_INVALID_DEVICE);
	ck_assert_int_eq(cuCtxDisablePeerAccess(g_ctx), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
	CK(cuProfilerStart());
	CK(cuProfilerStop());
	CK(cuCtxDetach(c)); /* the last detach destroys it */
#pragma GCC diagnostic pop
	ck_assert_int_eq(cuCtxSetCurrent(g_ctx), CUDA_SUCCESS);
	ck_assert_int_eq(cuCtxRecordEvent(c, NULL), CUDA_ERROR_INVALID_CONTEXT);
	/* limits reach the context they are set in */
	{
		size_t fifo = 0;

		CK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 1 << 20));
		CK(cuCtxGetLimit(&fifo, CU_LIMIT_PRINTF_FIFO_SIZE));
		ck_assert_uint_gt(fifo, 0);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cuda_objects");
	TCase *t = tcase_create("objects");
	SRunner *r;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, memory_pools);
	tcase_add_test(t, kernel_lists_and_names);
	tcase_add_test(t, capture_queries);
	tcase_add_test(t, graphs_built_by_hand);
	tcase_add_test(t, stream_memory_ops);
	tcase_add_test(t, wait_value_never_written);
	tcase_add_test(t, stream_attributes);
	tcase_add_test(t, launch_attributes_and_legacy);
	tcase_add_test(t, tensor_maps);
	tcase_add_test(t, contexts_and_devices);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
