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
#include <unistd.h>

#include "cuda_fixture.h"

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
	/* No memory the old ABI can name: given back, out of memory. */
	ck_assert_int_eq(alloc1(&d1, 256), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(alloc1(NULL, 256), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemGetInfo(&f2, &t2));
	CK(info1(&fr, &tot));
	ck_assert_uint_eq(tot, t2 > 0xffffffffu ? 0xffffffffu : (unsigned int)t2);
	CK(total1(&tot, 0));
	ck_assert_uint_gt(tot, 0);
	/* A 32-bit address names no allocation. */
	ck_assert_int_ne(memset1(0x1000, 0, 16), CUDA_SUCCESS);
	CK(create1(&c, 0, 0));
	CK(cuCtxGetCurrent(&cur));
	ck_assert_ptr_eq(cur, c);
	CK(destroy1(c));
	CK(cuCtxSetCurrent(g_ctx));
	CK(cuModuleLoadData(&m, ".version 8.0\n.target sm_75\n.address_size 64\n.global .u32 g;\n"));
	ck_assert_int_eq(global1(&d1, &n, m, "g"), CUDA_ERROR_INVALID_VALUE); /* its address is above 4 GiB */
	CK(cuModuleUnload(m));
}
END_TEST

/* JIT linking through the host driver: two inputs, the logs written back
 * into the caller's buffers, the linked image kept by the guest and loaded.
 * Over the CI stand-in the linker is a test double (standin/link.c) that
 * concatenates and writes known log lines; on a GPU the same calls link
 * real PTX (tests/gpu/progs/jit_link.cu checks results). */
START_TEST(jit_linking)
{
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
	ck_assert_ptr_nonnull(strstr(image, "visible .func"));
	ck_assert_ptr_nonnull(strstr(info, "vcuda stand-in linker: input a.ptx"));
	ck_assert_ptr_nonnull(strstr(info, "linked 2 inputs"));
	ck_assert_uint_eq((uintptr_t)v[1], strlen(info) + 1);
	memcpy(&ms, &v[4], sizeof(ms));
	ck_assert(ms == 0.5f);
	CK(cuModuleLoadData(&m, image));
	CK(cuModuleUnload(m));
	/* A refused input: its error log comes back with the failure. (The
	 * size options now hold the filled sizes: set them again.) */
	v[1] = (void *)(uintptr_t)sizeof(info);
	v[3] = (void *)(uintptr_t)sizeof(err);
	CK(cuLinkCreate(5, o, v, &ls2));
	ck_assert_int_eq(cuLinkAddData(ls2, CU_JIT_INPUT_PTX, "vc_standin_link_refuse", 23, "bad.ptx", 0, NULL, NULL),
			 CUDA_ERROR_INVALID_PTX);
	ck_assert_str_eq(err, "vcuda stand-in linker: bad.ptx refused");
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
	ck_assert_str_eq(info, "vcuda stand-in JIT: loaded");
	CK(cuModuleUnload(m));
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
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
