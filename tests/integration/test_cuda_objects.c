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
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_fixture.h"
#include "vc_sock.h"
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

/* The pools of a location (CUDA 13): the default pool and the current one
 * are the session's handles, the same as the device's; a pool set is got. */
START_TEST(pools_of_a_location)
{
	CUmemLocation loc = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}, bad = loc;
	CUmemPoolProps props;
	CUmemoryPool pool, def, dev_def, cur;

	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location = loc;
	CK(cuMemGetDefaultMemPool(&def, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
	CK(cuDeviceGetDefaultMemPool(&dev_def, 0));
	ck_assert_ptr_eq(def, dev_def);
	CK(cuMemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
	ck_assert_ptr_eq(cur, def);
	CK(cuMemPoolCreate(&pool, &props));
	CK(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, pool));
	CK(cuMemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
	ck_assert_ptr_eq(cur, pool);
	CK(cuDeviceGetMemPool(&cur, 0));
	ck_assert_ptr_eq(cur, pool);
	CK(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, def));
	CK(cuMemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
	ck_assert_ptr_eq(cur, def);
	/* locations and types CUDA 13 does not name, NULL arguments, a pool
	 * that is not the session's */
	bad.type = CU_MEM_LOCATION_TYPE_NONE; /* only for managed pools */
	ck_assert_int_eq(cuMemGetMemPool(&cur, &bad, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_ERROR_INVALID_VALUE);
	bad.type = (CUmemLocationType)42; /* no location type CUDA names: the H100's driver (580) */
	ck_assert_int_eq(cuMemGetDefaultMemPool(&cur, &bad, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(cuMemGetDefaultMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_INVALID), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemGetDefaultMemPool(NULL, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemGetMemPool(&cur, NULL, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemSetMemPool(&loc, (CUmemAllocationType)9, pool), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, (CUmemoryPool)(uintptr_t)0x5678),
			 CUDA_ERROR_INVALID_HANDLE);
	CK(cuMemPoolDestroy(pool));
	ck_assert_int_eq(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, pool), CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

/* cuPointerSetAttribute: SYNC_MEMOPS on the session's memory, nothing else. */
START_TEST(pointer_set_attribute)
{
	unsigned int one = 1, zero = 0;
	CUdeviceptr d;

	CK(cuMemAlloc(&d, 4096));
	CK(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
	CK(cuPointerSetAttribute(&zero, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d + 100));
	ck_assert_int_eq(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 0x1000), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_CONTEXT, d), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuPointerSetAttribute(NULL, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(d));
	ck_assert_int_eq(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* Batched decompression: every range is the session's before the driver
 * sees it (the error index names the entry); a GPU without a decompression
 * engine, like the stand-in's recorded H200, answers its own error. */
START_TEST(batch_decompress)
{
	CUmemDecompressParams p[2];
	size_t idx = 7;
	CUdeviceptr d;
	CUresult rc;
	int algos = 0;

	CK(cuMemAlloc(&d, 1 << 16));
	memset(p, 0, sizeof(p));
	for (int i = 0; i < 2; i++) {
		p[i].src = (const void *)(uintptr_t)(d + (size_t)i * 8192);
		p[i].srcNumBytes = 4096;
		p[i].dst = (void *)(uintptr_t)(d + 16384 + (size_t)i * 8192);
		p[i].dstNumBytes = 8192;
		p[i].dstActBytes = (cuuint32_t *)(uintptr_t)(d + 60000 + (size_t)i * 4);
		p[i].algo = CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE;
	}
	CK(cuDeviceGetAttribute(&algos, CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK, 0));
	p[1].dst = (void *)(uintptr_t)(d + (1 << 16) - 100); /* runs past the allocation */
	if (!algos) {
		/* no engine (the H100, driver 580; the stand-in's H200): refused
		 * before the entries are looked at, the error index untouched */
		ck_assert_int_eq(cuMemBatchDecompressAsync(p, 2, 0, &idx, NULL), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_uint_eq(idx, 7);
	} else {
		ck_assert_int_eq(cuMemBatchDecompressAsync(p, 2, 0, &idx, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_uint_eq(idx, 1);
	}
	p[1].dst = (void *)(uintptr_t)(d + 16384 + 8192);
	p[0].dstActBytes = (cuuint32_t *)(uintptr_t)0x1000;
	idx = 7;
	if (algos) {
		ck_assert_int_eq(cuMemBatchDecompressAsync(p, 2, 0, &idx, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_uint_eq(idx, 0);
	}
	p[0].dstActBytes = (cuuint32_t *)(uintptr_t)(d + 60000);
	ck_assert_int_eq(cuMemBatchDecompressAsync(NULL, 2, 0, &idx, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemBatchDecompressAsync(p, 0, 0, &idx, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemBatchDecompressAsync(p, 2, 0, NULL, (CUstream)(uintptr_t)0x999), CUDA_ERROR_INVALID_HANDLE);
	/* well-formed: the driver's answer (no engine: an error of its own) */
	rc = cuMemBatchDecompressAsync(p, 2, 0, &idx, NULL);
	if (!algos)
		ck_assert_int_ne(rc, CUDA_SUCCESS);
	CK(cuMemFree(d));
}
END_TEST

CUresult v1_WriteValue32_ptsz(CUstream, CUdeviceptr, cuuint32_t, unsigned int) __asm__("cuStreamWriteValue32_ptsz");
CUresult v1_WriteValue64_ptsz(CUstream, CUdeviceptr, cuuint64_t, unsigned int) __asm__("cuStreamWriteValue64_ptsz");
CUresult v1_WaitValue32_ptsz(CUstream, CUdeviceptr, cuuint32_t, unsigned int) __asm__("cuStreamWaitValue32_ptsz");
CUresult v1_WaitValue64_ptsz(CUstream, CUdeviceptr, cuuint64_t, unsigned int) __asm__("cuStreamWaitValue64_ptsz");
CUresult v2_WriteValue32_ptsz(CUstream, CUdeviceptr, cuuint32_t, unsigned int) __asm__("cuStreamWriteValue32_v2_ptsz");
CUresult v1_BatchMemOp_ptsz(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int)
	__asm__("cuStreamBatchMemOp_ptsz");

/* The first-version memory operations' per-thread forms: on the calling
 * thread's default stream when given NULL, where the device serves the v1
 * forms at all (CAN_USE_STREAM_MEM_OPS_V1; the recorded H200 does not, as
 * without the nvidia module's switch): else the driver's NOT_SUPPORTED. */
START_TEST(stream_memops_v1_per_thread)
{
	CUstreamBatchMemOpParams ops[2];
	uint32_t w[4] = {0};
	uint64_t q = 0;
	CUdeviceptr d;
	int v1 = 0;

	CK(cuMemAlloc(&d, 64));
	CK(cuMemsetD8(d, 0, 64));
	CK(cuDeviceGetAttribute(&v1, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, 0));
	if (!v1) {
		memset(ops, 0, sizeof(ops));
		ops[0].operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
		ops[0].writeValue.address = d;
		ck_assert_int_eq(v1_WriteValue32_ptsz(NULL, d, 0x11, 0), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(v1_WaitValue32_ptsz(NULL, d, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(v1_WriteValue64_ptsz(NULL, d, 1, 0), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(v1_WaitValue64_ptsz(NULL, d, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(v1_BatchMemOp_ptsz(NULL, 1, ops, 0), CUDA_ERROR_NOT_SUPPORTED);
		/* the _v2 forms need no switch */
		CK(v2_WriteValue32_ptsz(NULL, d, 0x11, 0));
		CK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
		CK(cuMemcpyDtoH(w, d, 4));
		ck_assert_uint_eq(w[0], 0x11);
		CK(cuMemFree(d));
		return;
	}
	CK(v1_WriteValue32_ptsz(NULL, d, 0x11, 0));
	CK(v1_WaitValue32_ptsz(NULL, d, 0x11, CU_STREAM_WAIT_VALUE_EQ));
	CK(v1_WriteValue64_ptsz(NULL, d + 8, 0x2200000022ull, 0));
	CK(v1_WaitValue64_ptsz(CU_STREAM_PER_THREAD, d + 8, 0x2200000022ull, CU_STREAM_WAIT_VALUE_GEQ));
	memset(ops, 0, sizeof(ops));
	ops[0].operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
	ops[0].writeValue.address = d + 4;
	ops[0].writeValue.value = 0x33;
	ops[1].operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
	ops[1].writeValue.address = d + 16;
	ops[1].writeValue.value64 = 0x44;
	CK(v1_BatchMemOp_ptsz(NULL, 2, ops, 0));
	CK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
	CK(cuMemcpyDtoH(w, d, sizeof(w)));
	ck_assert_uint_eq(w[0], 0x11);
	ck_assert_uint_eq(w[1], 0x33);
	CK(cuMemcpyDtoH(&q, d + 8, 8));
	ck_assert_uint_eq(q, 0x2200000022ull);
	CK(cuMemcpyDtoH(&q, d + 16, 8));
	ck_assert_uint_eq(q, 0x44);
	ck_assert_int_eq(v1_WriteValue32_ptsz(NULL, 0x1000, 1, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(d));
}
END_TEST

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
	/* pageable memory stands behind a bounce buffer (test_graphs runs
	 * such copies); the node goes with its unseen host node */
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = pageable;
	c.WidthInBytes = sizeof(pageable);
	CK(cuGraphAddMemcpyNode(&nodes[0], g, &kn, 1, &c, g_ctx));
	CK(cuGraphDestroyNode(nodes[0]));
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
	/* an executable graph's update goes without a reply: its failure is
	 * the sticky error, reported once, at the next synchronisation */
	CK(cuGraphExecKernelNodeSetParams(ge, kn, &kp));
	ck_assert_int_eq(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
	CK(cuStreamSynchronize(s));
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

/* The cluster prototype export table (1734dc26) that cuBLASLt's
 * half-precision GEMMs ask for: its shape, the TPC maps (slot 4) owned and
 * freed (slot 13) by the caller, device and function cluster facts. */
START_TEST(cluster_export_table)
{
	static const CUuuid id = {{0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1,
				   0xe7, 0xdd, 0x8b, 0xca}};
	const uint64_t *t = NULL;
	unsigned char *vgpc = NULL, *mtpc = NULL;
	int x = -1, y = -1, z = -1, v = -1;
	CUresult (*tpc)(unsigned char **, unsigned char **);
	CUresult (*tpc_free)(unsigned char *, unsigned char *);
	CUresult (*dev_launch)(CUdevice, int *);
	CUresult (*set_dim)(CUfunction, int, int, int);
	CUresult (*get_dim)(CUfunction, int *, int *, int *);
	static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				  ".visible .entry noop()\n{\n ret;\n}\n";
	CUmodule m;
	CUfunction f;

	CK(cuGetExportTable((const void **)&t, &id));
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t[0], 136);
	memcpy(&tpc, &t[4], sizeof(tpc));
	memcpy(&tpc_free, &t[13], sizeof(tpc_free));
	memcpy(&dev_launch, &t[8], sizeof(dev_launch));
	memcpy(&set_dim, &t[1], sizeof(set_dim));
	memcpy(&get_dim, &t[5], sizeof(get_dim));
	/* the maps are this process's memory: readable, and freed by slot 13 */
	CK(tpc(&vgpc, &mtpc));
	ck_assert_ptr_nonnull(vgpc);
	ck_assert_ptr_nonnull(mtpc);
	ck_assert_int_le(vgpc[0], 64);
	ck_assert_int_le(mtpc[0], 64);
	CK(tpc_free(vgpc, mtpc));
	ck_assert_int_eq(tpc(NULL, &mtpc), CUDA_ERROR_INVALID_VALUE);
	CK(dev_launch(0, &v));
	ck_assert_int_eq(v, 1); /* clusters launch on an H100/H200 (and its stand-in) */
	ck_assert_int_ne(dev_launch(99, &v), CUDA_SUCCESS);
	/* a function's default cluster shape round-trips where the driver takes it */
	CK(cuModuleLoadData(&m, ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	if (set_dim(f, 2, 1, 1) == CUDA_SUCCESS) {
		CK(get_dim(f, &x, &y, &z));
		ck_assert_int_eq(x, 2);
		ck_assert_int_eq(y, 1);
		ck_assert_int_eq(z, 1);
		CK(set_dim(f, 0, 0, 0));
	}
	ck_assert_int_eq(get_dim((CUfunction)(uintptr_t)0x7c0a000000000999ull, &x, &y, &z), CUDA_ERROR_INVALID_HANDLE);
	CK(cuModuleUnload(m));
}
END_TEST

/* Families a guest cannot have (guest-lib/libcuda/refused.c): graphics and
 * external objects never exist, so their handles are invalid; importing,
 * multicast objects and checkpoints are refused with the driver's code. */
START_TEST(refused_families)
{
	CUgraphicsResource res = (CUgraphicsResource)(uintptr_t)0x1234;
	CUexternalMemory em = (CUexternalMemory)(uintptr_t)0x1234;
	CUexternalSemaphore es = (CUexternalSemaphore)(uintptr_t)0x1234;
	CUDA_EXTERNAL_MEMORY_HANDLE_DESC md;
	CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp;
	CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd;
	CUmulticastObjectProp mp;
	CUdeviceptr dp;
	CUarray arr;
	size_t n;

	memset(&md, 0, sizeof(md));
	memset(&sp, 0, sizeof(sp));
	memset(&bd, 0, sizeof(bd));
	memset(&mp, 0, sizeof(mp));
	ck_assert_int_eq(cuGraphicsUnregisterResource(res), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGraphicsMapResources(1, &res, NULL), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGraphicsMapResources(1, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuGraphicsUnmapResources(1, &res, NULL), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGraphicsResourceGetMappedPointer(&dp, &n, res), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGraphicsSubResourceGetMappedArray(&arr, res, 0, 0), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGraphicsSubResourceGetMappedArray(NULL, res, 0, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuGraphicsResourceSetMapFlags(res, 0), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuImportExternalMemory(&em, &md), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(cuImportExternalSemaphore(&es, NULL), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(cuDestroyExternalMemory(em), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuDestroyExternalSemaphore(es), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuExternalMemoryGetMappedBuffer(&dp, em, &bd), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuExternalMemoryGetMappedBuffer(NULL, em, &bd), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuSignalExternalSemaphoresAsync(&es, &sp, 1, NULL), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuSignalExternalSemaphoresAsync(&es, &sp, 0, NULL), CUDA_SUCCESS);
	ck_assert_int_eq(cuMulticastGetGranularity(&n, &mp, CU_MULTICAST_GRANULARITY_MINIMUM),
			 CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(cuMulticastCreate(NULL, &mp), CUDA_ERROR_NOT_SUPPORTED);
	{
		/* and the device says it has none, though the stand-in's has */
		int mc = 7;

		CK(cuDeviceGetAttribute(&mc, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0));
		ck_assert_int_eq(mc, 0);
	}
	ck_assert_int_eq(cuCheckpointProcessLock(1, NULL), CUDA_ERROR_NOT_SUPPORTED);
	/* The context still works. */
	CK(cuMemAlloc(&dp, 64));
	CK(cuMemFree(dp));
}
END_TEST

/* The first-version entry points (guest-lib/libcuda/legacy.c), reached by
 * name as binaries built against old headers reach them. The stand-in's
 * device addresses, like a GPU's, lie above 4 GiB. */
START_TEST(legacy_names)
{
	CUresult (*alloc1)(unsigned int *, unsigned int) = (CUresult(*)(unsigned int *, unsigned int))dlsym(RTLD_DEFAULT, "cuMemAlloc");
	CUresult (*info1)(unsigned int *, unsigned int *) = (CUresult(*)(unsigned int *, unsigned int *))dlsym(RTLD_DEFAULT, "cuMemGetInfo");
	CUresult (*total1)(unsigned int *, CUdevice) = (CUresult(*)(unsigned int *, CUdevice))dlsym(RTLD_DEFAULT, "cuDeviceTotalMem");
	CUresult (*memset1)(unsigned int, unsigned char, unsigned int) = (CUresult(*)(unsigned int, unsigned char, unsigned int))dlsym(RTLD_DEFAULT, "cuMemsetD8");
	CUresult (*create1)(CUcontext *, unsigned int, CUdevice) = (CUresult(*)(CUcontext *, unsigned int, CUdevice))dlsym(RTLD_DEFAULT, "cuCtxCreate");
	CUresult (*destroy1)(CUcontext) = (CUresult(*)(CUcontext))dlsym(RTLD_DEFAULT, "cuCtxDestroy");
	CUresult (*global1)(unsigned int *, unsigned int *, CUmodule, const char *) =
		(CUresult(*)(unsigned int *, unsigned int *, CUmodule, const char *))dlsym(RTLD_DEFAULT, "cuModuleGetGlobal");
	unsigned int d1 = 0, fr = 0, tot = 0, n = 0;
	size_t f2, t2;
	CUcontext c, cur;
	CUmodule m;

	ck_assert_ptr_nonnull(alloc1);
	/* In a context of a later API version: the driver's INVALID_CONTEXT;
	 * and no first-version context can be made (both measured on an H100). */
	ck_assert_int_eq(alloc1(&d1, 256), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(info1(&fr, &tot), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(memset1(0x1000, 0, 16), CUDA_ERROR_INVALID_CONTEXT);
	CK(total1(&tot, 0)); /* a device's, no context's */
	ck_assert_uint_gt(tot, 0);
	ck_assert_int_eq(create1(&c, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(create1(NULL, 0, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuCtxGetCurrent(&cur));
	ck_assert_ptr_eq(cur, g_ctx);
	CK(cuModuleLoadData(&m, ".version 8.0\n.target sm_75\n.address_size 64\n.global .u32 g;\n"));
	ck_assert_int_eq(global1(&d1, &n, m, "g"), CUDA_ERROR_INVALID_CONTEXT);
	CK(cuModuleUnload(m));
	(void)destroy1;
	(void)f2;
	(void)t2;
}
END_TEST

/* JIT linking through the host driver: two inputs, the logs written back
 * into the caller's buffers, the linked image kept by the guest and loaded.
 * Over the CI stand-in the linker is a test double (standin/link.c) that
 * concatenates and writes known log lines; on a GPU the same calls link
 * real PTX (tests/gpu/progs/jit_link.cu checks results). */
START_TEST(jit_linking)
{
	CUresult rc;
	static const char a[] = ".version 8.0\n.target sm_90\n.address_size 64\n.extern .func (.param .b32 r) f(.param .b32 x);\n";
	static const char b[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .func (.param .b32 r) f(.param .b32 x)\n{ ret; }\n";
	char info[512], err[512], path[] = "/tmp/vcuda-jit-XXXXXX";
	CUjit_option o[5] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
			     CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME};
	void *v[5] = {info, (void *)(uintptr_t)sizeof(info), err, (void *)(uintptr_t)sizeof(err), NULL};
	CUjit_option bad = (CUjit_option)999, arr = CU_JIT_GLOBAL_SYMBOL_NAMES;
	void *bv = NULL, *image;
	CUlinkState ls, ls2;
	CUmodule m;
	size_t size;
	float ms;
	int fd;

	memset(info, 'x', sizeof(info));
	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(cuLinkCreate(1, &bad, &bv, &ls), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuLinkCreate(1, &arr, &bv, &ls), CUDA_ERROR_NOT_SUPPORTED);
	CK(cuLinkCreate(5, o, v, &ls));
	CK(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)a, sizeof(a), "a.ptx", 0, NULL, NULL));
	CK(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)b, sizeof(b), "b.ptx", 0, NULL, NULL));
	ck_assert_int_eq(cuLinkAddData(ls, CU_JIT_INPUT_PTX, NULL, 4, "c", 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuLinkAddData(ls, CU_JIT_INPUT_CUBIN, (void *)a, sizeof(a), "c", 0, NULL, NULL),
			 CUDA_ERROR_INVALID_IMAGE); /* not an ELF image: refused before the driver parses it */
	CK(cuLinkComplete(ls, &image, &size));
	ck_assert_uint_gt(size, sizeof(a) + sizeof(b) - 4);
	if (standin()) { /* the stand-in's linker double concatenates and says so */
		ck_assert_ptr_nonnull(strstr(image, "visible .func"));
		ck_assert_ptr_nonnull(strstr(info, "vcuda stand-in linker: input a.ptx"));
		ck_assert_ptr_nonnull(strstr(info, "linked 2 inputs"));
	}
	memcpy(&ms, &v[4], sizeof(ms));
	if (standin()) { /* the double's log size and wall time; the driver writes 0 for an empty log */
		ck_assert_uint_eq((uintptr_t)v[1], strlen(info) + 1);
		ck_assert(ms == 0.5f);
	} else {
		ck_assert(ms >= 0.0f); /* the driver's own wall time, written back */
	}
	CK(cuModuleLoadData(&m, image));
	CK(cuModuleUnload(m));
	/* A refused input: its error log comes back with the failure. (The
	 * size options now hold the filled sizes: set them again.) */
	v[1] = (void *)(uintptr_t)sizeof(info);
	v[3] = (void *)(uintptr_t)sizeof(err);
	CK(cuLinkCreate(5, o, v, &ls2));
	rc = cuLinkAddData(ls2, CU_JIT_INPUT_PTX, "vc_standin_link_refuse", 23, "bad.ptx", 0, NULL, NULL);
	if (standin()) { /* the double's code and log */
		ck_assert_int_eq(rc, CUDA_ERROR_INVALID_PTX);
		ck_assert_str_eq(err, "vcuda stand-in linker: bad.ptx refused");
	} else {
		ck_assert_int_ne(rc, CUDA_SUCCESS); /* not PTX: the driver (580) says CUDA_ERROR_INVALID_IMAGE */
	}
	CK(cuLinkDestroy(ls2));
	ck_assert_int_eq(cuLinkDestroy(ls2), CUDA_ERROR_INVALID_HANDLE);
	CK(cuLinkDestroy(ls));
	/* Files are read in the guest. */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, b, sizeof(b) - 1), (ssize_t)sizeof(b) - 1);
	close(fd);
	CK(cuModuleLoad(&m, path));
	CK(cuModuleUnload(m));
	CK(cuLinkCreate(0, NULL, NULL, &ls));
	CK(cuLinkAddFile(ls, CU_JIT_INPUT_PTX, path, 0, NULL, NULL));
	CK(cuLinkComplete(ls, &image, &size));
	CK(cuLinkDestroy(ls));
	unlink(path);
	ck_assert_int_eq(cuModuleLoad(&m, path), CUDA_ERROR_FILE_NOT_FOUND);
	/* Loads with JIT options write their logs back too. */
	memset(info, 0, sizeof(info));
	v[1] = (void *)(uintptr_t)sizeof(info);
	CK(cuModuleLoadDataEx(&m, b, 2, o, v));
	if (standin()) /* the driver may log nothing for a load that went well */
		ck_assert_str_eq(info, "vcuda stand-in JIT: loaded");
	CK(cuModuleUnload(m));
}
END_TEST

/* ---- virtual memory management (VMM) ------------------------------------------- */

static CUmemAllocationProp device_prop(void)
{
	CUmemAllocationProp p;

	memset(&p, 0, sizeof(p));
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = 0;
	return p;
}

static void expect_bytes(CUdeviceptr d, unsigned char v, size_t n)
{
	unsigned char *b = malloc(n);

	ck_assert_ptr_nonnull(b);
	CK(cuMemcpyDtoH(b, d, n));
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(b[i] == v, "byte %zu is %u, not %u", i, b[i], v);
	free(b);
}

START_TEST(vmm_reserve_map_copy)
{
	CUmemAllocationProp prop = device_prop(), got;
	CUmemLocation loc = prop.location;
	CUmemAccessDesc acc = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CUmemGenericAllocationHandle h, h2, hr;
	size_t g = 0, rec = 0, again = 0;
	unsigned long long fl = 99;
	unsigned int mt = 0;
	CUdeviceptr va, va2, base = 0;
	size_t size = 0;
	unsigned char pat[4096], back[4096];

	/* granularity: minimum and recommended, the same answer when asked again */
	CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CK(cuMemGetAllocationGranularity(&rec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	CK(cuMemGetAllocationGranularity(&again, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	ck_assert_uint_gt(g, 0);
	ck_assert_uint_eq(rec % g, 0);
	ck_assert_uint_eq(again, g);
	/* a range of 4 granules, 2 backed, accessible, written and read */
	CK(cuMemAddressReserve(&va, 4 * g, 0, 0, 0));
	CK(cuMemCreate(&h, 2 * g, &prop, 0));
	CK(cuMemMap(va, 2 * g, 0, h, 0));
	CK(cuMemSetAccess(va, 2 * g, &acc, 1));
	CK(cuMemGetAccess(&fl, &loc, va + g));
	ck_assert_uint_eq(fl, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	for (int i = 0; i < 4096; i++)
		pat[i] = (unsigned char)(i * 7 + 3);
	CK(cuMemcpyHtoD(va + 100, pat, sizeof(pat)));
	CK(cuMemcpyDtoH(back, va + 100, sizeof(back)));
	ck_assert_mem_eq(back, pat, sizeof(pat));
	CK(cuMemsetD8(va + g - 64, 0x11, 128)); /* across the granule boundary */
	expect_bytes(va + g - 64, 0x11, 128);
	CK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va + 5));
	ck_assert_uint_eq(mt, CU_MEMORYTYPE_DEVICE);
	{
		/* the device whose memory it is (the host says so at the mapping) */
		int ord = -7, managed = 7;

		CK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va + 5));
		ck_assert_int_eq(ord, prop.location.id);
		CK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, va + 5));
		ck_assert_int_eq(managed, 0);
	}
	/* growth, as PyTorch's expandable segments do: the next chunk mapped
	 * right after; copies may span both */
	CK(cuMemCreate(&h2, 2 * g, &prop, 0));
	CK(cuMemMap(va + 2 * g, 2 * g, 0, h2, 0));
	CK(cuMemSetAccess(va + 2 * g, 2 * g, &acc, 1));
	CK(cuMemsetD8(va + 2 * g - 4096, 0x5c, 8192));
	expect_bytes(va + 2 * g - 4096, 0x5c, 8192);
	CK(cuMemcpy((CUdeviceptr)(uintptr_t)back, va + 2 * g - 2048, 4096)); /* unified: the guest knows it is device memory */
	for (int i = 0; i < 4096; i++)
		ck_assert_uint_eq(back[i], 0x5c);
	CK(cuMemcpyDtoD(va + 3 * g, va + 100, 4096));
	CK(cuMemcpyDtoH(back, va + 3 * g, sizeof(back)));
	ck_assert_mem_eq(back, pat, sizeof(pat));
	/* the handle that was mapped, again, and its properties */
	CK(cuMemRetainAllocationHandle(&hr, (void *)(uintptr_t)(va + 2 * g + 10)));
	ck_assert_uint_eq(hr, h2);
	CK(cuMemRelease(hr));
	CK(cuMemGetAllocationPropertiesFromHandle(&got, h));
	ck_assert_int_eq(got.type, CU_MEM_ALLOCATION_TYPE_PINNED);
	ck_assert_int_eq(got.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
	ck_assert_ptr_null(got.win32HandleMetaData);
	CK(cuMemGetAddressRange(&base, &size, va + 200));
	ck_assert_uint_ge(base, va);
	/* the same physical memory at a second address shows the same bytes */
	CK(cuMemAddressReserve(&va2, 4 * g, 0, 0, 0));
	CK(cuMemMap(va2, 2 * g, 0, h, 0));
	CK(cuMemSetAccess(va2, 2 * g, &acc, 1));
	CK(cuMemcpyDtoH(back, va2 + 100, sizeof(back)));
	ck_assert_mem_eq(back, pat, sizeof(pat));
	/* refusals: part of a mapping, over a mapping, not mapped, forged and
	 * foreign handles, a range that is not one reserved, a Windows pointer */
	ck_assert_int_eq(cuMemUnmap(va, g), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemMap(va, 2 * g, 0, h2, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemsetD8(va2 + 2 * g, 0, 16), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemMap(va2 + 2 * g, 2 * g, 0, (CUmemGenericAllocationHandle)0x1234, 0),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemMap(va2 + 2 * g, 2 * g, 0, h ^ (1ull << 24), 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemRelease(0x7d00000000000001ull), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemAddressFree(va, 2 * g), CUDA_ERROR_INVALID_VALUE);
	got = device_prop();
	got.win32HandleMetaData = &got;
	ck_assert_int_eq(cuMemCreate(&hr, 2 * g, &got, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemGetHandleForAddressRange(&base, va, g, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
			 CUDA_ERROR_NOT_SUPPORTED);
	/* released while mapped: the memory stays until the last unmap */
	CK(cuMemRelease(h));
	CK(cuMemRelease(h2));
	ck_assert_int_eq(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
	expect_bytes(va + 2 * g - 4096, 0x5c, 4096);
	CK(cuMemUnmap(va, 4 * g)); /* two whole mappings at once */
	CK(cuMemcpyDtoH(back, va2 + 100, sizeof(back)));
	ck_assert_mem_eq(back, pat, sizeof(pat));
	CK(cuMemUnmap(va2, 2 * g));
	ck_assert_int_eq(cuMemsetD8(va, 0, 16), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemAddressFree(va, 4 * g));
	CK(cuMemAddressFree(va2, 4 * g));
}
END_TEST

/* A session that ends holding ranges, mappings and handles: the server takes them back. */
START_TEST(vmm_left_at_exit)
{
	CUmemAllocationProp prop = device_prop();
	CUmemAccessDesc acc = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	size_t g = 0;

	CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	CK(cuMemAddressReserve(&va, 8 * g, 0, 0, 0));
	for (int i = 0; i < 4; i++) {
		CK(cuMemCreate(&h, g, &prop, 0));
		CK(cuMemMap(va + (size_t)i * g, g, 0, h, 0));
		if (i & 1)
			CK(cuMemRelease(h));
	}
	CK(cuMemSetAccess(va, 4 * g, &acc, 1));
	CK(cuMemsetD32(va, 0xfeedf00d, g)); /* one call over four mappings */
}
END_TEST

/* ---- IPC between processes of one VM ------------------------------------------------ */

/* A second vcuda-server (the CI stand-in behind it) on a socket of its own:
 * another VM. Its pid in *@pid; 0 where no server binary is at hand (the
 * test VM's guest, whose only server is the host's). */
static void start_other_server(const char *sock, pid_t *pid)
{
	char exe[4096], bin[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ck_assert_int_gt(n, 0);
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(bin, sizeof(bin), "%s/../bin/vcuda-server", exe);
	*pid = 0;
	if (access(bin, X_OK))
		return;
	unlink(sock);
	*pid = fork();
	if (*pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(bin, bin, "--socket", sock, "--executor", "ci-standin", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && access(sock, F_OK); i++)
		usleep(20000);
	ck_assert_int_eq(access(sock, F_OK), 0);
}

struct exported {
	CUipcMemHandle mem;
	CUipcEventHandle ev;
	int ok;
};

/* In a child (before any CUDA in it): on the server at @sock, 1 MiB set to
 * 0xa5 and a recorded interprocess event, their handles into @out; then wait
 * for a byte on @hold, which keeps them alive. */
static void exporter(const char *sock, int out, int hold)
{
	struct exported e = {0};
	CUcontext c;
	CUdeviceptr d;
	CUevent ev;
	char b;

	if (sock)
		setenv("VCUDA_SOCKET", sock, 1);
	e.ok = cuInit(0) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&c, 0) == CUDA_SUCCESS &&
	       cuCtxSetCurrent(c) == CUDA_SUCCESS && cuMemAlloc(&d, 1 << 20) == CUDA_SUCCESS &&
	       cuMemsetD8(d, 0xa5, 1 << 20) == CUDA_SUCCESS && cuIpcGetMemHandle(&e.mem, d) == CUDA_SUCCESS &&
	       cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS &&
	       cuEventRecord(ev, NULL) == CUDA_SUCCESS && cuIpcGetEventHandle(&e.ev, ev) == CUDA_SUCCESS &&
	       cuCtxSynchronize() == CUDA_SUCCESS;
	(void)!write(out, &e, sizeof(e));
	(void)!read(hold, &b, 1);
	_exit(0);
}

START_TEST(ipc_handles_of_this_vm_only)
{
	char sock[64];
	struct exported mine, theirs;
	int p1[2], p2[2], hold[2];
	pid_t srv, c1, c2;
	CUipcMemHandle forged;
	CUipcEventHandle forged_ev;
	CUcontext ctx;
	CUdeviceptr d = 0;
	CUevent ev;
	CUresult rc;

	snprintf(sock, sizeof(sock), "/tmp/vcuda-ipc-test-%d.sock", (int)getpid());
	start_other_server(sock, &srv);
	ck_assert_int_eq(pipe(p1), 0);
	ck_assert_int_eq(pipe(p2), 0);
	ck_assert_int_eq(pipe(hold), 0);
	/* CUDA only in the children first: each is a session of its own */
	if ((c1 = fork()) == 0)
		exporter(NULL, p1[1], hold[0]);
	c2 = 0;
	if (srv && (c2 = fork()) == 0)
		exporter(sock, p2[1], hold[0]);
	ck_assert_int_eq(read(p1[0], &mine, sizeof(mine)), (ssize_t)sizeof(mine));
	ck_assert(mine.ok);
	if (srv) {
		ck_assert_int_eq(read(p2[0], &theirs, sizeof(theirs)), (ssize_t)sizeof(theirs));
		ck_assert(theirs.ok);
	}
	CK(cuInit(0));
	CK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CK(cuCtxSetCurrent(ctx));
	/* forged handles, and handles of another server (VM): nothing else */
	memset(&forged, 0x42, sizeof(forged));
	memset(&forged_ev, 0x42, sizeof(forged_ev));
	ck_assert_int_eq(cuIpcOpenMemHandle(&d, forged, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuIpcOpenEventHandle(&ev, forged_ev), CUDA_ERROR_INVALID_VALUE);
	if (srv) {
		ck_assert_int_eq(cuIpcOpenMemHandle(&d, theirs.mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
				 CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(cuIpcOpenEventHandle(&ev, theirs.ev), CUDA_ERROR_INVALID_VALUE);
	}
	forged = mine.mem;
	forged.reserved[20] ^= 1; /* its id changed: the MAC no longer holds */
	ck_assert_int_eq(cuIpcOpenMemHandle(&d, forged, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
			 CUDA_ERROR_INVALID_VALUE);
	/* a handle of this VM is honoured; the stand-in then refuses to open it
	 * (its memory is its worker's own RAM), a GPU opens it */
	rc = cuIpcOpenMemHandle(&d, mine.mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
	if (standin()) {
		ck_assert_int_eq(rc, CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(cuIpcOpenEventHandle(&ev, mine.ev), CUDA_ERROR_NOT_SUPPORTED);
	} else {
		CK(rc);
		expect_bytes(d, 0xa5, 1 << 20);
		CK(cuIpcCloseMemHandle(d));
		CK(cuIpcOpenEventHandle(&ev, mine.ev));
		CK(cuEventSynchronize(ev));
		CK(cuEventDestroy(ev));
	}
	(void)!write(hold[1], "xx", 2);
	waitpid(c1, NULL, 0);
	if (srv) {
		waitpid(c2, NULL, 0);
		kill(srv, SIGTERM);
		waitpid(srv, NULL, 0);
		unlink(sock);
	}
}
END_TEST

/* ---- POSIX file-descriptor shareable handles between processes ----------------------- */

/* One descriptor over unix socket @s (shared/vc_sock.h), with a byte @b. */
static int send_fd(int s, int fd, char b)
{
	return vc_sock_send(s, &b, 1, &fd, 1);
}

/* The descriptor sent over @s, or -1 (its byte into *@b). */
static int recv_fd(int s, char *b)
{
	int fd = -1, n = 0;

	return vc_sock_recv(s, b, 1, &fd, 1, &n, 10000) == 1 && n == 1 ? fd : -1;
}

/* Two granules of device memory exportable as a descriptor, mapped at *@va
 * and set to @v; its handle in *@h. */
static int fd_alloc(CUmemGenericAllocationHandle *h, CUdeviceptr *va, size_t *g, unsigned char v)
{
	CUmemAllocationProp prop = device_prop();
	CUmemAccessDesc acc = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};

	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	return cuMemGetAllocationGranularity(g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) ||
	       cuMemCreate(h, 2 * *g, &prop, 0) || cuMemAddressReserve(va, 2 * *g, 0, 0, 0) ||
	       cuMemMap(*va, 2 * *g, 0, *h, 0) || cuMemSetAccess(*va, 2 * *g, &acc, 1) ||
	       cuMemsetD8(*va, v, 2 * *g) || cuCtxSynchronize();
}

/* In a child (before any CUDA in it), on the server at @sock (NULL: the
 * fixture's): memory set to 0x5c exported as a descriptor, sent over @s
 * with 'k' ('!' when a step failed); then, told 'c' over @s, whether its
 * bytes became 0x3e (sent back as 'y' or 'n'); then a second allocation's
 * descriptor sent after that allocation was released and unmapped. */
static void fd_exporter(const char *sock, int s)
{
	CUmemGenericAllocationHandle h, h2;
	CUdeviceptr va, va2;
	CUcontext c;
	size_t g = 0;
	int fd = -1, fd2 = -1, ok;
	char b = 0;

	if (sock)
		setenv("VCUDA_SOCKET", sock, 1);
	ok = cuInit(0) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&c, 0) == CUDA_SUCCESS &&
	     cuCtxSetCurrent(c) == CUDA_SUCCESS && !fd_alloc(&h, &va, &g, 0x5c) &&
	     cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS;
	if (send_fd(s, ok ? fd : 0, ok ? 'k' : '!') || !ok || read(s, &b, 1) != 1)
		_exit(1);
	if (fd >= 0)
		close(fd);
	{
		unsigned char *back = malloc(2 * g);

		ok = back && cuMemcpyDtoH(back, va, 2 * g) == CUDA_SUCCESS;
		for (size_t i = 0; ok && i < 2 * g; i++)
			ok = back[i] == 0x3e;
		free(back);
	}
	(void)!write(s, ok ? "y" : "n", 1);
	ok = !fd_alloc(&h2, &va2, &g, 0x77) &&
	     cuMemExportToShareableHandle(&fd2, h2, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS &&
	     cuMemUnmap(va2, 2 * g) == CUDA_SUCCESS && cuMemRelease(h2) == CUDA_SUCCESS;
	send_fd(s, ok ? fd2 : 0, ok ? 'k' : '!');
	(void)!read(s, &b, 1); /* hold the first allocation until the parent is done */
	_exit(0);
}

START_TEST(ipc_fd_between_processes)
{
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h;
	CUmemoryPool pool;
	CUcontext ctx;
	CUdeviceptr va;
	size_t g = 0;
	char sock[64], b = 0;
	int sv[2], so[2], fd, fd2, other, forged, pp[2];
	pid_t c1, c2 = 0, srv;
	static const char head[8] = {'v', 'c', 'u', 'd', 'a', 'S', 'H', '1'};
	unsigned char junk[64];

	snprintf(sock, sizeof(sock), "/tmp/vcuda-ipcfd-test-%d.sock", (int)getpid());
	start_other_server(sock, &srv);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, so), 0);
	/* CUDA only in the children first: each is a session of its own */
	if ((c1 = fork()) == 0)
		fd_exporter(NULL, sv[1]);
	if (srv && (c2 = fork()) == 0)
		fd_exporter(sock, so[1]);
	fd = recv_fd(sv[0], &b);
	ck_assert_int_eq(b, 'k');
	ck_assert_int_ge(fd, 0);
	other = -1;
	if (srv) {
		other = recv_fd(so[0], &b);
		ck_assert_int_eq(b, 'k');
	}
	CK(cuInit(0));
	CK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CK(cuCtxSetCurrent(ctx));
	/* the other process's memory, through its descriptor: its bytes, and
	 * what is written here is what it reads */
	CK(cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	close(fd);
	{
		CUmemAllocationProp prop = device_prop();

		CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
		acc.location = prop.location;
		acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	}
	CK(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
	CK(cuMemMap(va, 2 * g, 0, h, 0));
	CK(cuMemSetAccess(va, 2 * g, &acc, 1));
	expect_bytes(va, 0x5c, 2 * g);
	CK(cuMemsetD8(va, 0x3e, 2 * g));
	CK(cuCtxSynchronize());
	ck_assert_int_eq(write(sv[0], "c", 1), 1);
	ck_assert_int_eq(read(sv[0], &b, 1), 1);
	ck_assert_int_eq(b, 'y');
	/* an allocation released and unmapped by its exporter: gone */
	fd2 = recv_fd(sv[0], &b);
	ck_assert_int_eq(b, 'k');
	{
		CUmemGenericAllocationHandle h2;

		ck_assert_int_eq(cuMemImportFromShareableHandle(&h2, (void *)(intptr_t)fd2,
								CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
				 CUDA_ERROR_INVALID_VALUE);
	}
	close(fd2);
	/* another server's (VM's) descriptor; a descriptor that is no handle;
	 * one made to look like ours with a forged token */
	if (srv) {
		ck_assert_int_eq(cuMemImportFromShareableHandle(&h, (void *)(intptr_t)other,
								CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
				 CUDA_ERROR_INVALID_VALUE);
		close(other);
	}
	ck_assert_int_eq(pipe(pp), 0);
	ck_assert_int_eq(cuMemImportFromShareableHandle(&h, (void *)(intptr_t)pp[0],
							CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
			 CUDA_ERROR_INVALID_VALUE);
	close(pp[0]);
	close(pp[1]);
	forged = memfd_create("forged", MFD_ALLOW_SEALING);
	ck_assert_int_ge(forged, 0);
	memset(junk, 0x42, sizeof(junk));
	ck_assert_int_eq(write(forged, head, sizeof(head)), (ssize_t)sizeof(head));
	ck_assert_int_eq(write(forged, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	ck_assert_int_eq(fcntl(forged, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK), 0);
	ck_assert_int_eq(cuMemImportFromShareableHandle(&h, (void *)(intptr_t)forged,
							CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)forged,
							    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
			 CUDA_ERROR_INVALID_VALUE);
	close(forged);
	CK(cuMemUnmap(va, 2 * g));
	CK(cuMemRelease(h));
	CK(cuMemAddressFree(va, 2 * g));
	ck_assert_int_eq(write(sv[0], "x", 1), 1);
	waitpid(c1, NULL, 0);
	if (srv) {
		(void)!write(so[0], "xx", 2);
		waitpid(c2, NULL, 0);
		kill(srv, SIGTERM);
		waitpid(srv, NULL, 0);
		unlink(sock);
	}
}
END_TEST

/* A pool's descriptor names that pool only while it lives: once destroyed,
 * the descriptor is refused, and a pool made afterwards (in the stand-in, at
 * the same address) hands out descriptors of its own. */
START_TEST(ipc_pool_fd_follows_the_pool)
{
	CUmemPoolProps props;
	CUmemoryPool pool, imp;
	CUcontext ctx;
	int fd1 = -1, fd2 = -1;

	CK(cuInit(0));
	CK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CK(cuCtxSetCurrent(ctx));
	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 0;
	CK(cuMemPoolCreate(&pool, &props));
	CK(cuMemPoolExportToShareableHandle(&fd1, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	ck_assert_int_ge(fd1, 0);
	CK(cuMemPoolImportFromShareableHandle(&imp, (void *)(intptr_t)fd1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	CK(cuMemPoolDestroy(imp));
	CK(cuMemPoolDestroy(pool));
	ck_assert_int_eq(cuMemPoolImportFromShareableHandle(&imp, (void *)(intptr_t)fd1,
							    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
			 CUDA_ERROR_INVALID_VALUE);
	CK(cuMemPoolCreate(&pool, &props));
	CK(cuMemPoolExportToShareableHandle(&fd2, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	CK(cuMemPoolImportFromShareableHandle(&imp, (void *)(intptr_t)fd2, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	CK(cuMemPoolDestroy(imp));
	ck_assert_int_eq(cuMemPoolImportFromShareableHandle(&imp, (void *)(intptr_t)fd1,
							    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
			 CUDA_ERROR_INVALID_VALUE);
	CK(cuMemPoolDestroy(pool));
	close(fd1);
	close(fd2);
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

/* A stream waiting on a value holds its synchronisation (on another guest
 * thread) without holding up the session, until another stream writes the
 * value. (A wait nobody ever satisfies also holds a context destroy on the
 * real driver, natively too: the stand-in's destroy goes ahead, so that case
 * is not asserted here.) */
START_TEST(wait_value_never_written)
{
	struct waiter w = {0};
	CUdeviceptr d, e;
	CUstream other;
	pthread_t t;

	CK(cuCtxCreate(&w.ctx, NULL, 0, 0));
	CK(cuMemAlloc(&d, 64));
	CK(cuMemsetD8(d, 0, 64));
	CK(cuStreamCreate(&w.s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
	CK(cuStreamWaitValue32(w.s, d, 1, CU_STREAM_WAIT_VALUE_EQ));
	ck_assert_int_eq(pthread_create(&t, NULL, sync_thread, &w), 0);
	usleep(200 * 1000);
	ck_assert_int_eq(cuStreamQuery(w.s), CUDA_ERROR_NOT_READY);
	/* the session goes on while the wait holds (no cuMemFree here: it
	 * synchronises the device, natively too) */
	CK(cuMemAlloc(&e, 64));
	CK(cuStreamQuery(other));
	CK(cuStreamWriteValue32(other, d, 1, 0));
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	CK(w.rc);
	CK(cuStreamQuery(w.s));
	CK(cuStreamDestroy(w.s));
	CK(cuStreamDestroy(other));
	CK(cuMemFree(e));
	CK(cuMemFree(d));
	CK(cuCtxDestroy(w.ctx));
	CK(cuCtxSetCurrent(g_ctx));
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

/* A second device, where there is one (ci/check.sh runs this suite over two
 * stand-in devices too): its own identity, contexts on it, and memory made
 * on it answering its ordinal whichever context asks. */
START_TEST(second_device)
{
	CUmemAllocationProp prop = device_prop(), got;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h;
	CUdeviceptr d, va;
	CUcontext p1, cur;
	CUuuid u0, u1;
	CUdevice dev = -1;
	char bus0[32], bus1[32];
	void *host;
	size_t g = 0;
	int n = 0, ord = -7, mc = 7;

	CK(cuDeviceGetCount(&n));
	if (n < 2)
		return; /* one device: nothing to tell apart */
	CK(cuDeviceGet(&dev, 1));
	ck_assert_int_eq(dev, 1);
	CK(cuDeviceGetUuid(&u0, 0));
	CK(cuDeviceGetUuid(&u1, 1));
	ck_assert(memcmp(u0.bytes, u1.bytes, sizeof(u0.bytes)) != 0);
	CK(cuDeviceGetPCIBusId(bus0, sizeof(bus0), 0));
	CK(cuDeviceGetPCIBusId(bus1, sizeof(bus1), 1));
	ck_assert_str_ne(bus0, bus1);
	CK(cuDeviceGetByPCIBusId(&dev, bus1));
	ck_assert_int_eq(dev, 1);
	CK(cuDeviceGetAttribute(&mc, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 1));
	ck_assert_int_eq(mc, 0);
	/* device 1's primary context, current: its device; device 0's asked by name */
	CK(cuDevicePrimaryCtxRetain(&p1, 1));
	CK(cuCtxSetCurrent(p1));
	CK(cuCtxGetDevice(&dev));
	ck_assert_int_eq(dev, 1);
	CK(cuCtxGetDevice_v2(&dev, g_ctx));
	ck_assert_int_eq(dev, 0);
	/* memory made there: ordinal 1, asked from device 0's context too */
	CK(cuMemAlloc(&d, 4096));
	CK(cuMemAllocHost(&host, 4096));
	prop.location.id = 1;
	CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CK(cuMemCreate(&h, g, &prop, 0));
	CK(cuMemGetAllocationPropertiesFromHandle(&got, h));
	ck_assert_int_eq(got.location.id, 1);
	CK(cuCtxSetCurrent(g_ctx)); /* mapped from device 0's context */
	CK(cuMemAddressReserve(&va, g, 0, 0, 0));
	CK(cuMemMap(va, g, 0, h, 0));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CK(cuMemSetAccess(va, g, &acc, 1));
	CK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d));
	ck_assert_int_eq(ord, 1);
	CK(cuPointerGetAttribute(&cur, CU_POINTER_ATTRIBUTE_CONTEXT, d));
	ck_assert_ptr_eq(cur, p1);
	ord = -7;
	CK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)host));
	ck_assert_int_eq(ord, 1);
	ord = -7;
	CK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va));
	ck_assert_int_eq(ord, 1);
	CK(cuMemsetD8(va, 0x3c, g));
	expect_bytes(va, 0x3c, g);
	CK(cuMemUnmap(va, g));
	CK(cuMemAddressFree(va, g));
	CK(cuMemRelease(h));
	CK(cuCtxSetCurrent(p1));
	CK(cuMemFreeHost(host));
	CK(cuMemFree(d));
	CK(cuCtxSetCurrent(g_ctx));
	CK(cuDevicePrimaryCtxRelease(1));
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
	/* a GPU without MPS has no SM-count affinity: the driver says so */
	CUresult arc = cuCtxCreate_v3(&c2, &aff, 1, 0, 0);
	ck_assert(arc == CUDA_SUCCESS || arc == CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
	if (arc == CUDA_SUCCESS) {
		CK(cuCtxGetExecAffinity(&got, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
		ck_assert_uint_le(got.param.smCount.val, (unsigned)sms);
		CK(cuCtxDestroy(c2));
	}
	cp.execAffinityParams = &aff;
	cp.numExecAffinityParams = 1;
	ck_assert_int_eq(cuCtxCreate_v4(&c2, &cp, 0, 0), arc);
	if (arc == CUDA_SUCCESS)
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
	ck_assert_int_eq(cuCtxEnablePeerAccess(g_ctx, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
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

/* Green contexts and device resources: the driver's rules for splits and
 * descriptors, a green context's context, streams and events, and what is
 * left of them once it is destroyed. */
START_TEST(green_contexts)
{
	CUdevResource dev, grp[2], rem, other[1], bad;
	CUdevResourceDesc desc, desc2;
	CUgreenCtx g, g2, gs = NULL;
	CUcontext gc, gc2, sc, cur;
	CUstream s, s2, ps;
	CUevent ev, pev;
	CUmodule mod;
	CUfunction f;
	CUdeviceptr d;
	unsigned nb = 0, val = 0, sms = 0;
	unsigned long long id = 0, id2 = 0;
	int attr = 0;

	CK(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
	CK(cuDeviceGetDevResource(0, &dev, CU_DEV_RESOURCE_TYPE_SM));
	ck_assert_int_eq(dev.type, CU_DEV_RESOURCE_TYPE_SM);
	ck_assert_uint_eq(dev.sm.smCount, (unsigned)attr);
	ck_assert_uint_gt(dev.sm.minSmPartitionSize, 0);
	ck_assert_int_eq(cuDeviceGetDevResource(0, &bad, CU_DEV_RESOURCE_TYPE_INVALID), CUDA_ERROR_INVALID_RESOURCE_TYPE);
	ck_assert_int_eq(cuDeviceGetDevResource(0, NULL, CU_DEV_RESOURCE_TYPE_SM), CUDA_ERROR_INVALID_VALUE);
	/* how many groups a split would make, then two of them and the rest */
	CK(cuDevSmResourceSplitByCount(NULL, &nb, &dev, NULL, 0, 16));
	ck_assert_uint_ge(nb, 2);
	if (standin())
		ck_assert_uint_eq(nb, (unsigned)attr / 16); /* 16 is a multiple of 8 */
	nb = 2;
	CK(cuDevSmResourceSplitByCount(grp, &nb, &dev, &rem, 0, 12));
	ck_assert_uint_eq(nb, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(grp[i].type, CU_DEV_RESOURCE_TYPE_SM);
		ck_assert_uint_ge(grp[i].sm.smCount, 12);
		/* the H100's driver (580) leaves a group's alignment 0: the
		 * guest gets the driver's union as it is */
		if (grp[i].sm.smCoscheduledAlignment)
			ck_assert_uint_eq(grp[i].sm.smCount % grp[i].sm.smCoscheduledAlignment, 0);
		sms += grp[i].sm.smCount;
	}
	ck_assert_uint_eq(rem.sm.smCount, dev.sm.smCount - sms);
	if (standin())
		ck_assert_uint_eq(grp[0].sm.smCount, 16); /* 12 rounded up to the alignment */
	/* a resource of another type, or changed, or of another split */
	bad = grp[0];
	bad.type = CU_DEV_RESOURCE_TYPE_INVALID;
	ck_assert_int_eq(cuDevSmResourceSplitByCount(NULL, &nb, &bad, NULL, 0, 8), CUDA_ERROR_INVALID_RESOURCE_TYPE);
	ck_assert_int_eq(cuDevResourceGenerateDesc(&desc, &bad, 1), CUDA_ERROR_INVALID_RESOURCE_TYPE);
	bad = grp[0];
	bad.sm.smCount += 8; /* the H100's driver (580): a configuration it cannot make */
	ck_assert_int_eq(cuDevResourceGenerateDesc(&desc, &bad, 1), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
	nb = 1;
	CK(cuDevSmResourceSplitByCount(other, &nb, &dev, NULL, 0, 8));
	bad = other[0];
	{
		CUdevResource two[2] = {grp[1], bad};

		/* groups of two splits: the stand-in refuses them; the H100's
		 * driver (580) makes a descriptor of them */
		if (standin())
			ck_assert_int_eq(cuDevResourceGenerateDesc(&desc, two, 2),
					 CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
	}
	ck_assert_int_eq(cuDevResourceGenerateDesc(NULL, grp, 1), CUDA_ERROR_INVALID_VALUE);
	CK(cuDevResourceGenerateDesc(&desc, grp, 1));
	CK(cuDevResourceGenerateDesc(&desc2, grp, 2));
	/* green contexts, their resources and their context */
	if (standin())
		ck_assert_int_eq(cuGreenCtxCreate(&g, desc, 0, 0), CUDA_ERROR_INVALID_VALUE); /* DEFAULT_STREAM is required */
	ck_assert_int_eq(cuGreenCtxCreate(&g, (CUdevResourceDesc)(uintptr_t)0x4000000012345678ull, 0,
					  CU_GREEN_CTX_DEFAULT_STREAM), CUDA_ERROR_INVALID_HANDLE);
	CK(cuGreenCtxCreate(&g, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
	CK(cuGreenCtxCreate(&g2, desc2, 0, CU_GREEN_CTX_DEFAULT_STREAM));
	CK(cuGreenCtxGetDevResource(g, &bad, CU_DEV_RESOURCE_TYPE_SM));
	ck_assert_uint_eq(bad.sm.smCount, grp[0].sm.smCount);
	CK(cuGreenCtxGetDevResource(g2, &bad, CU_DEV_RESOURCE_TYPE_SM));
	ck_assert_uint_eq(bad.sm.smCount, sms);
	CK(cuCtxFromGreenCtx(&gc, g));
	CK(cuCtxFromGreenCtx(&gc2, g));
	ck_assert_ptr_eq(gc, gc2);
	CK(cuCtxFromGreenCtx(&gc2, g2));
	ck_assert_ptr_ne(gc, gc2);
	CK(cuCtxGetDevResource(gc, &bad, CU_DEV_RESOURCE_TYPE_SM));
	ck_assert_uint_eq(bad.sm.smCount, grp[0].sm.smCount);
	CK(cuGreenCtxGetId(g, &id));
	CK(cuGreenCtxGetId(g2, &id2));
	ck_assert_uint_ne(id, id2);
	/* the resources a green context reports split again */
	nb = 1;
	CK(cuDevSmResourceSplitByCount(other, &nb, &bad, NULL, 0, 8));
	/* streams on it, whatever context is current */
	ck_assert_int_eq(cuGreenCtxStreamCreate(&s, g, 0, 0), CUDA_ERROR_INVALID_VALUE); /* NON_BLOCKING is required */
	CK(cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
	CK(cuGreenCtxStreamCreate(&s2, g, CU_STREAM_NON_BLOCKING, -1));
	CK(cuStreamGetGreenCtx(s, &gs));
	ck_assert_ptr_eq(gs, g);
	CK(cuStreamGetCtx(s, &sc));
	ck_assert_ptr_eq(sc, gc);
	gs = g2;
	CK(cuStreamGetCtx_v2(s2, &sc, &gs));
	/* the _v2 call names the device's primary context beside the green
	 * context (the H100's driver 580; the stand-in has no primary context
	 * of the worker's and names the green context's) */
	ck_assert_ptr_eq(sc, standin() ? gc : g_ctx);
	ck_assert_ptr_eq(gs, g);
	/* work in the green context: memory, a kernel on its stream, its
	 * synchronisation (made in the stream's context, not the current one) */
	CK(cuCtxSetCurrent(gc));
	CK(cuCtxGetCurrent(&cur));
	ck_assert_ptr_eq(cur, gc);
	CK(cuMemAlloc(&d, 4096));
	CK(cuMemsetD32Async(d, 0, 1024, s));
	CK(cuModuleLoadData(&mod, vt_store_ptx));
	CK(cuModuleGetFunction(&f, mod, VT_STORE_KERNEL));
	val = 0xc0ffee;
	{
		void *args[] = {&d, &val};

		CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	}
	CK(cuCtxSetCurrent(g_ctx));
	CK(cuStreamSynchronize(s));
	CK(cuCtxSetCurrent(gc));
	val = 0;
	CK(cuMemcpyDtoH(&val, d, sizeof(val)));
	ck_assert_uint_eq(val, 0xc0ffee);
	/* events across the green context and the primary context */
	CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	CK(cuGreenCtxRecordEvent(g, ev));
	CK(cuCtxSetCurrent(g_ctx));
	CK(cuStreamCreate(&ps, CU_STREAM_NON_BLOCKING));
	CK(cuStreamWaitEvent(ps, ev, 0));
	CK(cuEventCreate(&pev, CU_EVENT_DISABLE_TIMING));
	CK(cuEventRecord(pev, ps));
	CK(cuGreenCtxWaitEvent(g, pev));
	CK(cuStreamWaitEvent(s, pev, 0));
	CK(cuEventSynchronize(ev));
	CK(cuStreamSynchronize(s));
	if (standin()) /* "from the same primary context": vcuda's primary context is a context of its own */
		ck_assert_int_eq(cuGreenCtxRecordEvent(g, pev), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGreenCtxRecordEvent(g, NULL), CUDA_ERROR_INVALID_HANDLE);
	/* destroyed: its streams, its context and its id go with it */
	CK(cuStreamDestroy(s));
	CK(cuGreenCtxDestroy(g));
	ck_assert_int_eq(cuGreenCtxGetId(g, &id), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(cuGreenCtxDestroy(g), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(cuStreamQuery(s2), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(cuCtxFromGreenCtx(&gc, g), CUDA_ERROR_INVALID_CONTEXT);
	CK(cuCtxSetCurrent(gc));
	ck_assert_int_eq(cuStreamCreate(&s, 0), CUDA_ERROR_INVALID_CONTEXT);
	CK(cuCtxSetCurrent(g_ctx));
	CK(cuEventDestroy(pev));
	CK(cuStreamDestroy(ps));
	/* the second one is left with a stream: the session's end releases them */
	CK(cuGreenCtxStreamCreate(&s, g2, CU_STREAM_NON_BLOCKING, 0));
}
END_TEST

static int g_log_calls;
static char g_log_text[256];

static void log_cb(void *data, CUlogLevel level, char *message, size_t length)
{
	(void)level;
	ck_assert_ptr_eq(data, &g_log_calls);
	ck_assert_uint_eq(strlen(message), length);
	g_log_calls++;
	snprintf(g_log_text, sizeof(g_log_text), "%s", message);
}

/* The driver's error log: iterators, dumps to memory and to the guest's
 * file, callbacks on the failing thread; refused families around it. */
START_TEST(driver_logs)
{
	CUlogIterator it = 0, it2 = 0;
	CUlogsCallbackHandle h;
	CUdevResource r;
	char buf[26000], path[] = "/tmp/vcuda-logs-XXXXXX";
	size_t size;
	int fd, st = standin();
	off_t len;

	CK(cuLogsCurrent(&it, 0));
	CK(cuLogsCurrent(&it2, 1)); /* the H100's driver takes any flags (measured) */
	ck_assert_int_eq(cuLogsCurrent(NULL, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_INVALID), CUDA_ERROR_INVALID_RESOURCE_TYPE);
	it2 = it;
	size = sizeof(buf);
	CK(cuLogsDumpToMemory(&it, buf, &size, 0));
	ck_assert_uint_gt(size, 0);
	ck_assert_uint_eq(strlen(buf), size);
	if (st)
		ck_assert_ptr_nonnull(strstr(buf, "cuDeviceGetDevResource"));
	size = sizeof(buf);
	CK(cuLogsDumpToMemory(&it, buf, &size, 0)); /* the iterator moved past it */
	ck_assert_uint_eq(size, 0);
	size = 4;
	if (st) { /* the stand-in's answer; the H100's driver says CUDA_SUCCESS */
		ck_assert_int_eq(cuLogsDumpToMemory(&it2, buf, &size, 0), CUDA_ERROR_INVALID_VALUE); /* no message fits */
		ck_assert_uint_eq(size, 0);
	}
	ck_assert_int_eq(cuLogsDumpToMemory(NULL, NULL, &size, 0), CUDA_ERROR_INVALID_VALUE);
	/* a file of the guest's */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	CK(cuLogsDumpToFile(NULL, path, 0));
	len = lseek(fd, 0, SEEK_END);
	ck_assert_int_gt(len, 0);
	close(fd);
	unlink(path);
	ck_assert_int_eq(cuLogsDumpToFile(NULL, "/nonexistent-dir/x", 0), CUDA_ERROR_INVALID_VALUE);
	/* callbacks: called before the failing call returns, until unregistered */
	ck_assert_int_eq(cuLogsRegisterCallback(NULL, NULL, &h), CUDA_ERROR_INVALID_VALUE);
	CK(cuLogsRegisterCallback(log_cb, &g_log_calls, &h));
	ck_assert_int_eq(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_INVALID), CUDA_ERROR_INVALID_RESOURCE_TYPE);
	if (st) {
		ck_assert_int_eq(g_log_calls, 1);
		ck_assert_ptr_nonnull(strstr(g_log_text, "cuDeviceGetDevResource"));
	}
	CK(cuLogsUnregisterCallback(h));
	ck_assert_int_eq(cuLogsUnregisterCallback(h), CUDA_ERROR_INVALID_VALUE);
	g_log_calls = 0;
	ck_assert_int_eq(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_INVALID), CUDA_ERROR_INVALID_RESOURCE_TYPE);
	ck_assert_int_eq(g_log_calls, 0);
	/* refused: core dumps (the host's files), NvSci, the host's device events */
	{
		int v = 0;
		size_t vs = sizeof(v);

		ck_assert_int_eq(cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &v, &vs), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, "/tmp/x", &vs), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(cuDeviceGetNvSciSyncAttributes(&v, 0, CUDA_NVSCISYNC_ATTR_SIGNAL), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(cuDeviceUnregisterAsyncNotification(0, NULL), CUDA_ERROR_NOT_SUPPORTED);
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
	tcase_add_test(t, cluster_export_table);
	tcase_add_test(t, refused_families);
	tcase_add_test(t, legacy_names);
	tcase_add_test(t, jit_linking);
	tcase_add_test(t, vmm_reserve_map_copy);
	tcase_add_test(t, vmm_left_at_exit);
	tcase_add_test(t, stream_memory_ops);
	tcase_add_test(t, wait_value_never_written);
	tcase_add_test(t, stream_attributes);
	tcase_add_test(t, launch_attributes_and_legacy);
	tcase_add_test(t, tensor_maps);
	tcase_add_test(t, contexts_and_devices);
	tcase_add_test(t, second_device);
	tcase_add_test(t, pools_of_a_location);
	tcase_add_test(t, pointer_set_attribute);
	tcase_add_test(t, batch_decompress);
	tcase_add_test(t, stream_memops_v1_per_thread);
	tcase_add_test(t, green_contexts);
	tcase_add_test(t, driver_logs);
	suite_add_tcase(s, t);
	t = tcase_create("ipc"); /* no fixture: CUDA only after the children are forked */
	tcase_set_timeout(t, 30);
	tcase_add_test(t, ipc_handles_of_this_vm_only);
	tcase_add_test(t, ipc_fd_between_processes);
	tcase_add_test(t, ipc_pool_fd_follows_the_pool);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
