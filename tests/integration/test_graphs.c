/* SPDX-License-Identifier: MIT */
/*
 * test_graphs.c - graphs with every node kind, through a running
 * vcuda-server (Check; each test forks): built by hand, read back,
 * instantiated, launched (copies, memsets, memory writes and host nodes
 * checked where the CI stand-in computes them: it counts kernels), updated
 * node by node and as a whole, relaunched; clones, edges with their data,
 * node destruction, copies of pageable memory (a bounce and a host node
 * the guest never sees), the dot print written in the guest, user objects whose
 * destructor runs in the guest, and what is refused (external semaphores,
 * nodes of a destroyed graph, ranges not ours).
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_fixture.h"

static const char k_ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
			    ".visible .entry noop()\n{\n ret;\n}\n";

static int g_runs_a, g_runs_b;

static void CUDA_CB host_a(void *p)
{
	g_runs_a += *(int *)p;
}

static void CUDA_CB host_b(void *p)
{
	g_runs_b += *(int *)p;
}

static void CUDA_CB uobj_gone(void *p)
{
	__atomic_store_n((int *)p, 1, __ATOMIC_SEQ_CST);
}

static CUgraphNode memset_node(CUgraph g, const CUgraphNode *deps, size_t n, CUdeviceptr d, unsigned v,
			       size_t count)
{
	CUDA_MEMSET_NODE_PARAMS m = {.dst = d, .value = v, .elementSize = 4, .width = count, .height = 1};
	CUgraphNode node;

	CK(cuGraphAddMemsetNode(&node, g, deps, n, &m, g_ctx));
	return node;
}

static void copy_params(CUDA_MEMCPY3D *c, CUmemorytype st, const void *sh, CUdeviceptr sd, CUmemorytype dt,
			void *dh, CUdeviceptr dd, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->srcMemoryType = st;
	c->srcHost = sh;
	c->srcDevice = sd;
	c->dstMemoryType = dt;
	c->dstHost = dh;
	c->dstDevice = dd;
	c->WidthInBytes = n;
	c->Height = c->Depth = 1;
}

/* How many times @node is among the @n nodes at @v (lists come in the
 * driver's order, which is not the order of adding). */
static int times_in(const CUgraphNode *v, size_t n, CUgraphNode node)
{
	int k = 0;

	for (size_t i = 0; i < n; i++)
		k += v[i] == node;
	return k;
}

/* The one node @node depends on (@dependents: the one depending on it); there must be one. */
static CUgraphNode only_neighbour(CUgraphNode node, int dependents)
{
	CUgraphNode v[8];
	size_t n = 8;

	if (dependents)
		CK(cuGraphNodeGetDependentNodes(node, v, NULL, &n));
	else
		CK(cuGraphNodeGetDependencies(node, v, NULL, &n));
	ck_assert_uint_eq(n, 1);
	return v[0];
}

static uint32_t word(const uint8_t *p, size_t i)
{
	uint32_t v;

	memcpy(&v, p + i * 4, 4);
	return v;
}

START_TEST(every_node_kind)
{
	CUgraphNode n_ms, n_h2d, n_k, n_host, n_rec, n_wait, n_empty, n_child, n_alloc, n_free, n_batch, n_cond,
		n_d2h, deps[4], got_n[16];
	CUgraph g, child, body[1], got_g;
	CUgraphExec ge;
	CUgraphNodeParams np;
	CUDA_KERNEL_NODE_PARAMS kp;
	CUDA_HOST_NODE_PARAMS hp;
	CUDA_MEMSET_NODE_PARAMS ms;
	CUDA_MEM_ALLOC_NODE_PARAMS ap;
	CUDA_BATCH_MEM_OP_NODE_PARAMS bp;
	CUstreamBatchMemOpParams op;
	CUDA_MEMCPY3D c;
	CUgraphConditionalHandle ch;
	CUgraphNodeType t;
	CUdeviceptr d, d2, dp;
	CUevent ev, got_ev;
	CUfunction f;
	CUmodule m;
	CUstream s;
	uint8_t *src, *dst;
	size_t count;
	int one = 1;
	unsigned on;
	CUfunctionLoadingState loaded;

	CK(cuModuleLoadData(&m, k_ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	/* Loaded on demand (lazy loading), loaded once asked for. */
	CK(cuFuncLoad(f));
	CK(cuFuncIsLoaded(&loaded, f));
	ck_assert_int_eq(loaded, CU_FUNCTION_LOADING_STATE_LOADED);
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&ev, 0));
	CK(cuMemAlloc(&d, 4096));
	CK(cuMemAlloc(&d2, 4096));
	CK(cuMemHostAlloc((void **)&src, 4096, 0));
	CK(cuMemHostAlloc((void **)&dst, 4096, 0));
	CK(cuMemsetD8(d, 0, 4096));
	for (int i = 0; i < 4096; i++)
		src[i] = (uint8_t)(i * 3);
	CK(cuGraphCreate(&g, 0));

	n_ms = memset_node(g, NULL, 0, d, 0x11111111u, 256);
	copy_params(&c, CU_MEMORYTYPE_HOST, src, 0, CU_MEMORYTYPE_DEVICE, NULL, d2, 4096);
	CK(cuGraphAddMemcpyNode(&n_h2d, g, &n_ms, 1, &c, g_ctx));
	memset(&kp, 0, sizeof(kp));
	kp.func = f;
	kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
	/* A block of 32 x 32 x 32 threads is more than a block may hold:
	 * refused when the node is added, as the driver does. */
	kp.blockDimX = kp.blockDimY = kp.blockDimZ = 32;
	ck_assert_int_eq(cuGraphAddKernelNode(&n_k, g, &n_h2d, 1, &kp), CUDA_ERROR_INVALID_VALUE);
	kp.blockDimY = kp.blockDimZ = 1;
	CK(cuGraphAddKernelNode(&n_k, g, &n_h2d, 1, &kp));
	hp.fn = host_a;
	hp.userData = &one;
	CK(cuGraphAddHostNode(&n_host, g, &n_k, 1, &hp));
	CK(cuGraphAddEventRecordNode(&n_rec, g, &n_host, 1, ev));
	CK(cuGraphAddEventWaitNode(&n_wait, g, NULL, 0, ev));
	deps[0] = n_rec;
	deps[1] = n_wait;
	CK(cuGraphAddEmptyNode(&n_empty, g, deps, 2));
	/* a child graph: a memset of the second buffer's upper half */
	CK(cuGraphCreate(&child, 0));
	memset_node(child, NULL, 0, d2 + 2048, 0x7e7e7e7eu, 512);
	CK(cuGraphAddChildGraphNode(&n_child, g, &n_empty, 1, child));
	CK(cuGraphDestroy(child)); /* the node has its own copy */
	/* memory a launch allocates and frees */
	memset(&ap, 0, sizeof(ap));
	ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ap.bytesize = 1 << 20;
	CK(cuGraphAddMemAllocNode(&n_alloc, g, NULL, 0, &ap));
	ck_assert_uint_ne(ap.dptr, 0);
	CK(cuGraphAddMemFreeNode(&n_free, g, &n_alloc, 1, ap.dptr));
	/* a memory write after the memset */
	memset(&op, 0, sizeof(op));
	op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
	op.writeValue.address = d + 2048;
	op.writeValue.value = 0xc0ffee;
	memset(&bp, 0, sizeof(bp));
	bp.ctx = g_ctx;
	bp.count = 1;
	bp.paramArray = &op;
	CK(cuGraphAddBatchMemOpNode(&n_batch, g, &n_ms, 1, &bp));
	/* a conditional node: its body graph comes back as a graph of ours */
	CK(cuGraphConditionalHandleCreate(&ch, g, g_ctx, 0, 0));
	memset(&np, 0, sizeof(np));
	np.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
	np.conditional.handle = ch;
	np.conditional.type = CU_GRAPH_COND_TYPE_IF;
	np.conditional.size = 1;
	np.conditional.ctx = g_ctx;
	CK(cuGraphAddNode(&n_cond, g, &n_child, NULL, 1, &np));
	ck_assert_ptr_nonnull(np.conditional.phGraph_out);
	body[0] = np.conditional.phGraph_out[0];
	CK(cuGraphAddEmptyNode(&got_n[0], body[0], NULL, 0));
	count = 0;
	CK(cuGraphGetNodes(body[0], NULL, &count));
	ck_assert_uint_eq(count, 1);
	deps[0] = n_cond;
	deps[1] = n_batch;
	copy_params(&c, CU_MEMORYTYPE_DEVICE, NULL, d, CU_MEMORYTYPE_HOST, dst, 0, 4096);
	CK(cuGraphAddMemcpyNode(&n_d2h, g, deps, 2, &c, g_ctx));

	/* the graph's shape */
	CK(cuGraphGetNodes(g, NULL, &count));
	ck_assert_uint_eq(count, 13);
	CK(cuGraphGetRootNodes(g, NULL, &count));
	ck_assert_uint_eq(count, 3); /* memset, event wait, alloc */
	count = 4;
	CK(cuGraphGetRootNodes(g, got_n, &count));
	ck_assert_uint_eq(count, 3);
	/* The H100's driver answers alloc, wait, memset. */
	ck_assert_int_eq(times_in(got_n, 3, n_ms), 1);
	ck_assert_int_eq(times_in(got_n, 3, n_wait), 1);
	ck_assert_int_eq(times_in(got_n, 3, n_alloc), 1);
	ck_assert_ptr_null(got_n[3]);
	CK(cuGraphGetEdges(g, NULL, NULL, NULL, &count));
	ck_assert_uint_eq(count, 12);
	count = 4;
	CK(cuGraphNodeGetDependencies(n_empty, got_n, NULL, &count));
	ck_assert_uint_eq(count, 2);
	ck_assert_int_eq(times_in(got_n, 2, n_rec), 1);
	ck_assert_int_eq(times_in(got_n, 2, n_wait), 1);
	count = 4;
	CK(cuGraphNodeGetDependentNodes(n_ms, got_n, NULL, &count));
	ck_assert_uint_eq(count, 2);
	CK(cuGraphNodeGetType(n_cond, &t));
	ck_assert_int_eq(t, CU_GRAPH_NODE_TYPE_CONDITIONAL);
	CK(cuGraphNodeGetType(n_batch, &t));
	ck_assert_int_eq(t, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);

	/* parameters read back */
	CK(cuGraphMemsetNodeGetParams(n_ms, &ms));
	ck_assert_uint_eq(ms.dst, d);
	ck_assert_uint_eq(ms.value, 0x11111111u);
	ck_assert_uint_eq(ms.width, 256);
	CK(cuGraphHostNodeGetParams(n_host, &hp));
	ck_assert_ptr_eq(hp.fn, host_a);
	ck_assert_ptr_eq(hp.userData, &one);
	CK(cuGraphMemcpyNodeGetParams(n_h2d, &c));
	ck_assert_ptr_eq(c.srcHost, src);
	ck_assert_uint_eq(c.dstDevice, d2);
	CK(cuGraphEventRecordNodeGetEvent(n_rec, &got_ev));
	ck_assert_ptr_eq(got_ev, ev);
	CK(cuGraphEventWaitNodeGetEvent(n_wait, &got_ev));
	ck_assert_ptr_eq(got_ev, ev);
	CK(cuGraphChildGraphNodeGetGraph(n_child, &got_g));
	CK(cuGraphGetNodes(got_g, NULL, &count));
	ck_assert_uint_eq(count, 1);
	memset(&ap, 0, sizeof(ap));
	CK(cuGraphMemAllocNodeGetParams(n_alloc, &ap));
	ck_assert_uint_eq(ap.bytesize, 1 << 20);
	CK(cuGraphMemFreeNodeGetParams(n_free, &dp));
	ck_assert_uint_eq(dp, ap.dptr);
	memset(&bp, 0, sizeof(bp));
	CK(cuGraphBatchMemOpNodeGetParams(n_batch, &bp));
	ck_assert_uint_eq(bp.count, 1);
	ck_assert_uint_eq(bp.paramArray[0].writeValue.address, d + 2048);
	ck_assert_ptr_eq(bp.ctx, g_ctx);
	/* a getter of another kind is refused */
	ck_assert_int_eq(cuGraphMemsetNodeGetParams(n_host, &ms), CUDA_ERROR_INVALID_VALUE);

	/* instantiated and launched twice: copies, memsets, writes made, host node run each time */
	CK(cuGraphInstantiate(&ge, g, 0));
	for (int it = 0; it < 2; it++) {
		memset(dst, 0, 4096);
		CK(cuGraphLaunch(ge, s));
		CK(cuStreamSynchronize(s));
		ck_assert_int_eq(g_runs_a, it + 1);
		for (size_t i = 0; i < 256; i++)
			ck_assert_uint_eq(word(dst, i), 0x11111111u);
		ck_assert_uint_eq(word(dst, 512), 0xc0ffee);
	}
	CK(cuMemcpyDtoH(dst, d2, 4096));
	ck_assert_uint_eq(dst[1], 3);
	ck_assert_uint_eq(dst[2048], 0x7e);

	/* per-node updates of the executable graph, which leave the graph alone */
	ms.value = 0x22222222u;
	CK(cuGraphExecMemsetNodeSetParams(ge, n_ms, &ms, g_ctx));
	hp.fn = host_b;
	CK(cuGraphExecHostNodeSetParams(ge, n_host, &hp));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(word(dst, 0), 0x22222222u);
	ck_assert_int_eq(g_runs_a, 2);
	ck_assert_int_eq(g_runs_b, 1);
	CK(cuGraphMemsetNodeGetParams(n_ms, &ms));
	ck_assert_uint_eq(ms.value, 0x11111111u);
	/* a disabled node does not run */
	CK(cuGraphNodeSetEnabled(ge, n_ms, 0));
	CK(cuGraphNodeGetEnabled(ge, n_ms, &on));
	ck_assert_uint_eq(on, 0);
	CK(cuMemsetD8(d, 0, 1024));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(word(dst, 0), 0);
	ck_assert_int_eq(cuGraphNodeSetEnabled(ge, n_host, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuGraphNodeSetEnabled(ge, n_ms, 1));

	/* the graph changed, then the executable graph updated as a whole */
	ms.value = 0x33333333u;
	CK(cuGraphMemsetNodeSetParams(n_ms, &ms));
	hp.fn = host_a;
	CK(cuGraphHostNodeSetParams(n_host, &hp));
	{
		CUgraphExecUpdateResultInfo info;

		CK(cuGraphExecUpdate(ge, g, &info));
		ck_assert_int_eq(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
	}
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(word(dst, 0), 0x33333333u);
	ck_assert_int_eq(g_runs_a, 3);
	CK(cuGraphExecDestroy(ge));
	CK(cuGraphDestroy(g));
	/* the nodes and the body graph went with their graph */
	ck_assert_int_eq(cuGraphMemsetNodeGetParams(n_ms, &ms), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGraphGetNodes(body[0], NULL, &count), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGraphGetNodes(got_g, NULL, &count), CUDA_ERROR_INVALID_HANDLE);

	CK(cuEventDestroy(ev));
	CK(cuMemFreeHost(src));
	CK(cuMemFreeHost(dst));
	CK(cuMemFree(d));
	CK(cuMemFree(d2));
	CK(cuStreamDestroy(s));
	CK(cuModuleUnload(m));
}
END_TEST

/* Updates the driver refuses, with its reasons and the nodes at fault as ours. */
START_TEST(exec_update_refused)
{
	CUgraphExecUpdateResultInfo info;
	CUgraphNode a, b, c2;
	CUgraph g, g2;
	CUgraphExec ge;
	CUevent ev;

	CK(cuEventCreate(&ev, 0));
	CK(cuGraphCreate(&g, 0));
	CK(cuGraphAddEmptyNode(&a, g, NULL, 0));
	CK(cuGraphAddEventRecordNode(&b, g, &a, 1, ev));
	CK(cuGraphInstantiate(&ge, g, 0));
	/* another shape */
	CK(cuGraphCreate(&g2, 0));
	CK(cuGraphAddEmptyNode(&c2, g2, NULL, 0));
	ck_assert_int_eq(cuGraphExecUpdate(ge, g2, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	ck_assert_int_eq(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
	/* a node of another kind in the same place */
	CK(cuGraphAddEmptyNode(&a, g2, &c2, 1));
	ck_assert_int_eq(cuGraphExecUpdate(ge, g2, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	ck_assert_int_eq(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
	ck_assert_ptr_eq(info.errorNode, a);
	{
		cuuint64_t flags = 1;

		CK(cuGraphExecGetFlags(ge, &flags));
		ck_assert_uint_eq(flags, 0);
	}
	CK(cuGraphExecDestroy(ge));
	CK(cuGraphDestroy(g2));
	CK(cuGraphDestroy(g));
	CK(cuEventDestroy(ev));
}
END_TEST

/* Clones, found nodes, edges with data, dependencies added, removed, nodes destroyed. */
START_TEST(clones_and_edges)
{
	CUgraphNode a, b, c, ca, cb, from[4], to[4];
	CUgraphEdgeData ed[4], prog;
	CUDA_KERNEL_NODE_PARAMS kp;
	CUgraphNodeParams np;
	CUgraphNodeType t;
	CUfunction f;
	CUmodule m;
	size_t n;
	CUgraph g, gc;

	/* A programmatic edge joins two kernel nodes: the real driver refuses
	 * one from an empty node (natively and through vcuda alike, H100). The
	 * kernel nodes name their context and their function was launched
	 * once, as in a node the driver made by capture; so built, the test
	 * passes on the H100 through vcuda. */
	CK(cuModuleLoadData(&m, k_ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	CK(cuCtxSynchronize());
	memset(&kp, 0, sizeof(kp));
	kp.func = f;
	kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
	kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
	kp.ctx = g_ctx;
	CK(cuGraphCreate(&g, 0));
	CK(cuGraphAddEmptyNode(&a, g, NULL, 0));
	CK(cuGraphAddKernelNode(&b, g, &a, 1, &kp));
	memset(&np, 0, sizeof(np));
	np.type = CU_GRAPH_NODE_TYPE_KERNEL;
	np.kernel.func = f;
	np.kernel.gridDimX = np.kernel.gridDimY = np.kernel.gridDimZ = 1;
	np.kernel.blockDimX = np.kernel.blockDimY = np.kernel.blockDimZ = 1;
	np.kernel.ctx = g_ctx;
	memset(&prog, 0, sizeof(prog));
	prog.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
	prog.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
	CK(cuGraphAddNode(&c, g, &b, &prog, 1, &np));
	n = 4;
	CK(cuGraphGetEdges(g, from, to, ed, &n));
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_eq(from[1], b);
	ck_assert_ptr_eq(to[1], c);
	ck_assert_int_eq(ed[1].type, CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
	/* without room for the edge data, the query would lose it */
	n = 4;
	ck_assert_int_eq(cuGraphGetEdges(g, from, to, NULL, &n), CUDA_ERROR_LOSSY_QUERY);
	/* a clone: new nodes, found from the original's */
	CK(cuGraphClone(&gc, g));
	CK(cuGraphNodeFindInClone(&ca, a, gc));
	CK(cuGraphNodeFindInClone(&cb, b, gc));
	ck_assert_ptr_ne(ca, a);
	CK(cuGraphNodeGetType(ca, &t));
	ck_assert_int_eq(t, CU_GRAPH_NODE_TYPE_EMPTY);
	/* (into a node of its own: the driver writes it, failing) */
	ck_assert_int_eq(cuGraphNodeFindInClone(&from[0], a, g), CUDA_ERROR_INVALID_VALUE);
	/* dependencies across graphs are refused; within one, removed and added */
	ck_assert_int_eq(cuGraphAddDependencies(g, &ca, &b, NULL, 1), CUDA_ERROR_INVALID_VALUE);
	CK(cuGraphRemoveDependencies(gc, &ca, &cb, NULL, 1));
	ck_assert_int_eq(cuGraphRemoveDependencies(gc, &ca, &cb, NULL, 1), CUDA_ERROR_INVALID_VALUE);
	CK(cuGraphGetRootNodes(gc, NULL, &n));
	ck_assert_uint_eq(n, 2);
	CK(cuGraphAddDependencies(gc, &ca, &cb, NULL, 1));
	CK(cuGraphGetRootNodes(gc, NULL, &n));
	ck_assert_uint_eq(n, 1);
	/* a destroyed node goes with its edges, and its id with it */
	CK(cuGraphDestroyNode(cb));
	CK(cuGraphGetNodes(gc, NULL, &n));
	ck_assert_uint_eq(n, 2);
	CK(cuGraphGetEdges(gc, NULL, NULL, NULL, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(cuGraphNodeGetType(cb, &t), CUDA_ERROR_INVALID_HANDLE);
	/* the original is untouched */
	CK(cuGraphGetNodes(g, NULL, &n));
	ck_assert_uint_eq(n, 3);
	CK(cuGraphDestroy(gc));
	CK(cuGraphDestroy(g));
	ck_assert_int_eq(cuGraphNodeGetType(a, &t), CUDA_ERROR_INVALID_HANDLE);
	CK(cuModuleUnload(m));
}
END_TEST

/* What the host functions of the pageable-copy graph below see and do. */
struct pageable_run {
	uint32_t *in;   /* pageable: written before the copy into the device */
	uint32_t *out;  /* pageable: written by the copy out of it */
	uint32_t gen;   /* which launch */
	uint32_t seen;  /* out[5] when the node after the copy out ran */
};

static void CUDA_CB pageable_fill(void *p)
{
	struct pageable_run *r = p;

	r->gen++;
	for (int i = 0; i < 64; i++)
		r->in[i] = r->gen * 1000u + (uint32_t)i;
}

static void CUDA_CB pageable_look(void *p)
{
	struct pageable_run *r = p;

	r->seen = r->out[5];
}

static void check_run(const struct pageable_run *r, uint32_t gen)
{
	ck_assert_uint_eq(r->gen, gen);
	for (int i = 0; i < 64; i++)
		ck_assert_uint_eq(r->out[i], gen * 1000u + (uint32_t)i);
	/* the bytes were the program's when the next node ran, not later */
	ck_assert_uint_eq(r->seen, gen * 1000u + 5);
}

/*
 * Memcpy nodes of the program's pageable memory, as cuda-samples' graphs
 * make them: a host node fills a heap buffer, a node copies it into the
 * device and another copies it back into a second one, which a host node
 * reads. Natively the bytes move when the nodes run; through vcuda too (a
 * bounce buffer, and a host node beside each copy that the guest never
 * sees). Lists, edges and parameters read back are the native ones.
 */
START_TEST(pageable_copies)
{
	CUgraphNode fill, h2d, d2h, look, v[8], from[8], to[8], ch2d, cd2h, e1, e2;
	struct pageable_run r = {0};
	CUDA_HOST_NODE_PARAMS hp;
	CUgraphNodeParams np;
	CUDA_MEMCPY3D c, c2, got;
	CUgraph g, gc, g3;
	CUgraphExec ge, gce, g3e;
	uint32_t alt[64] = {0}, grid[16];
	CUdeviceptr d;
	CUstream s;
	size_t n;

	r.in = calloc(64, 4);
	r.out = calloc(64, 4);
	ck_assert_ptr_nonnull(r.in);
	ck_assert_ptr_nonnull(r.out);
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc(&d, 256));
	CK(cuGraphCreate(&g, 0));
	memset(&hp, 0, sizeof(hp));
	hp.fn = pageable_fill;
	hp.userData = &r;
	CK(cuGraphAddHostNode(&fill, g, NULL, 0, &hp));
	copy_params(&c, CU_MEMORYTYPE_HOST, r.in, 0, CU_MEMORYTYPE_DEVICE, NULL, d, 256);
	CK(cuGraphAddMemcpyNode(&h2d, g, &fill, 1, &c, g_ctx));
	/* the copy out through CUgraphNodeParams, unified addressing */
	memset(&np, 0, sizeof(np));
	np.type = CU_GRAPH_NODE_TYPE_MEMCPY;
	copy_params(&np.memcpy.copyParams, CU_MEMORYTYPE_DEVICE, NULL, d, CU_MEMORYTYPE_UNIFIED, NULL,
		    (CUdeviceptr)(uintptr_t)r.out, 256);
	np.memcpy.copyCtx = g_ctx;
	CK(cuGraphAddNode(&d2h, g, &h2d, NULL, 1, &np));
	hp.fn = pageable_look;
	CK(cuGraphAddHostNode(&look, g, &d2h, 1, &hp));

	/* the guest's view: four nodes in a chain */
	n = 8;
	CK(cuGraphGetNodes(g, v, &n));
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(times_in(v, n, fill) + times_in(v, n, h2d) + times_in(v, n, d2h) + times_in(v, n, look), 4);
	n = 8;
	CK(cuGraphGetRootNodes(g, v, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(v[0], fill);
	n = 8;
	CK(cuGraphGetEdges(g, from, to, NULL, &n));
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++)
		ck_assert((from[i] == fill && to[i] == h2d) || (from[i] == h2d && to[i] == d2h) ||
			  (from[i] == d2h && to[i] == look));
	ck_assert_ptr_eq(only_neighbour(h2d, 0), fill);
	ck_assert_ptr_eq(only_neighbour(d2h, 1), look);
	ck_assert_ptr_eq(only_neighbour(look, 0), d2h);
	/* parameters read back name the program's memory */
	CK(cuGraphMemcpyNodeGetParams(d2h, &got));
	ck_assert_int_eq(got.dstMemoryType, CU_MEMORYTYPE_HOST);
	ck_assert_ptr_eq(got.dstHost, r.out);
	CK(cuGraphMemcpyNodeGetParams(h2d, &got));
	ck_assert_ptr_eq(got.srcHost, r.in);
	ck_assert_uint_eq(got.WidthInBytes, 256);

	/* launched twice: each run's bytes, when each node ran */
	CK(cuGraphInstantiate(&ge, g, 0));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_run(&r, 1);
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_run(&r, 2);
	/* a disabled copy out writes nothing into the program's memory */
	CK(cuGraphNodeSetEnabled(ge, d2h, 0));
	memset(r.out, 0, 256);
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(r.gen, 3);
	ck_assert_uint_eq(r.out[5], 0);
	ck_assert_uint_eq(r.seen, 0);
	CK(cuGraphNodeSetEnabled(ge, d2h, 1));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_run(&r, 4);
	/* a bounced copy's parameters set: out of the device into another
	 * buffer, then back; into device memory it would lose its bounce */
	copy_params(&c2, CU_MEMORYTYPE_DEVICE, NULL, d, CU_MEMORYTYPE_HOST, alt, 0, 256);
	CK(cuGraphExecMemcpyNodeSetParams(ge, d2h, &c2, g_ctx));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(alt[5], 5 * 1000u + 5);
	ck_assert_uint_eq(r.out[5], 4 * 1000u + 5);
	/* set while disabled: nothing written until enabled, then where set */
	CK(cuGraphNodeSetEnabled(ge, d2h, 0));
	CK(cuGraphExecMemcpyNodeSetParams(ge, d2h, &c2, g_ctx));
	alt[5] = 0;
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(alt[5], 0);
	CK(cuGraphNodeSetEnabled(ge, d2h, 1));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(alt[5], 7 * 1000u + 5);
	ck_assert_uint_eq(r.out[5], 4 * 1000u + 5);
	copy_params(&c2, CU_MEMORYTYPE_DEVICE, NULL, d, CU_MEMORYTYPE_HOST, r.out, 0, 256);
	CK(cuGraphExecMemcpyNodeSetParams(ge, d2h, &c2, g_ctx));
	CK(cuGraphMemcpyNodeSetParams(d2h, &c2));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_run(&r, 8);
	copy_params(&c2, CU_MEMORYTYPE_DEVICE, NULL, d, CU_MEMORYTYPE_DEVICE, NULL, d, 16);
	ck_assert_int_eq(cuGraphMemcpyNodeSetParams(d2h, &c2), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(cuGraphExecMemcpyNodeSetParams(ge, d2h, &c2, g_ctx), CUDA_ERROR_NOT_SUPPORTED);

	/* a clone carries the copies with their bounces */
	CK(cuGraphClone(&gc, g));
	n = 8;
	CK(cuGraphGetNodes(gc, NULL, &n));
	ck_assert_uint_eq(n, 4);
	CK(cuGraphNodeFindInClone(&cd2h, d2h, gc));
	CK(cuGraphNodeFindInClone(&ch2d, h2d, gc));
	CK(cuGraphInstantiate(&gce, gc, 0));
	CK(cuGraphLaunch(gce, s));
	CK(cuStreamSynchronize(s));
	check_run(&r, 9);

	/* edges added from a copy out and into a copy in, as the guest sees them */
	CK(cuGraphAddEmptyNode(&e1, gc, &cd2h, 1));
	CK(cuGraphAddEmptyNode(&e2, gc, NULL, 0));
	CK(cuGraphAddDependencies(gc, &e2, &ch2d, NULL, 1));
	n = 8;
	CK(cuGraphGetEdges(gc, NULL, NULL, NULL, &n));
	ck_assert_uint_eq(n, 5);
	ck_assert_ptr_eq(only_neighbour(e1, 0), cd2h);
	n = 8;
	CK(cuGraphNodeGetDependencies(ch2d, v, NULL, &n));
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(times_in(v, n, e2), 1);
	CK(cuGraphLaunch(gce, s)); /* the executable clone is the graph as it was */
	CK(cuStreamSynchronize(s));
	check_run(&r, 10);
	/* a copy out cannot turn into a copy in (the graph's shape would change) */
	ck_assert_int_eq(cuGraphMemcpyNodeSetParams(d2h, &c), CUDA_ERROR_NOT_SUPPORTED);
	/* a copy out goes with its host node: the nodes after it are roots */
	CK(cuGraphDestroyNode(cd2h));
	n = 8;
	CK(cuGraphGetNodes(gc, NULL, &n));
	ck_assert_uint_eq(n, 5);
	n = 8;
	CK(cuGraphGetRootNodes(gc, NULL, &n));
	ck_assert_uint_eq(n, 4);
	n = 8;
	CK(cuGraphGetEdges(gc, NULL, NULL, NULL, &n));
	ck_assert_uint_eq(n, 2);

	/* a copy out into rows with gaps, from an offset: the gaps keep the
	 * program's bytes (the device holds the last launch's input) */
	for (int i = 0; i < 16; i++)
		grid[i] = 0xeeeeeeeeu;
	copy_params(&c, CU_MEMORYTYPE_DEVICE, NULL, d, CU_MEMORYTYPE_HOST, grid, 0, 8);
	c.Height = 3;
	c.srcPitch = 8;
	c.dstPitch = 16;
	c.dstXInBytes = 4;
	c.dstY = 1;
	CK(cuGraphCreate(&g3, 0));
	CK(cuGraphAddMemcpyNode(&v[0], g3, NULL, 0, &c, g_ctx));
	CK(cuGraphMemcpyNodeGetParams(v[0], &got));
	ck_assert_ptr_eq(got.dstHost, grid);
	ck_assert_uint_eq(got.dstXInBytes, 4);
	ck_assert_uint_eq(got.dstY, 1);
	ck_assert_uint_eq(got.dstPitch, 16);
	CK(cuGraphInstantiate(&g3e, g3, 0));
	CK(cuGraphLaunch(g3e, s));
	CK(cuStreamSynchronize(s));
	for (int i = 0; i < 16; i++) {
		int row = i / 4 - 1, col = i % 4 - 1;

		if (row >= 0 && col >= 0 && col < 2)
			ck_assert_uint_eq(grid[i], 10 * 1000u + (uint32_t)(row * 2 + col));
		else
			ck_assert_uint_eq(grid[i], 0xeeeeeeeeu);
	}
	CK(cuGraphExecDestroy(g3e));
	CK(cuGraphDestroy(g3));

	/* a copy a bounce cannot stand for: both sides pageable */
	copy_params(&c, CU_MEMORYTYPE_HOST, r.in, 0, CU_MEMORYTYPE_HOST, r.out, 0, 16);
	ck_assert_int_eq(cuGraphAddMemcpyNode(&v[0], g, NULL, 0, &c, g_ctx), CUDA_ERROR_NOT_SUPPORTED);
	/* an address that is no memory of the program's is never read or
	 * written as its pages */
	copy_params(&c, CU_MEMORYTYPE_DEVICE, NULL, d, CU_MEMORYTYPE_UNIFIED, NULL, 0x1000, 16);
	ck_assert_int_ne(cuGraphAddMemcpyNode(&v[0], g, NULL, 0, &c, g_ctx), CUDA_SUCCESS);

	CK(cuGraphExecDestroy(gce));
	CK(cuGraphExecDestroy(ge));
	CK(cuGraphDestroy(gc));
	CK(cuGraphDestroy(g));
	CK(cuMemFree(d));
	CK(cuStreamDestroy(s));
	free(r.in);
	free(r.out);
}
END_TEST

/* The dot print is written by the guest library, to the path given. */
START_TEST(dot_print_in_guest)
{
	char path[] = "/tmp/vcuda-dot-XXXXXX", buf[4096];
	CUgraphNode a, b;
	CUgraph g;
	size_t n;
	FILE *f;
	int fd;

	CK(cuGraphCreate(&g, 0));
	CK(cuGraphAddEmptyNode(&a, g, NULL, 0));
	CK(cuGraphAddEmptyNode(&b, g, &a, 1));
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	CK(cuGraphDebugDotPrint(g, path, CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE));
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	unlink(path);
	buf[n] = 0;
	ck_assert_ptr_nonnull(strstr(buf, "digraph"));
	ck_assert_ptr_nonnull(strstr(buf, "->"));
	ck_assert_int_eq(cuGraphDebugDotPrint(g, "/nonexistent-dir/x.dot", 0), CUDA_ERROR_OPERATING_SYSTEM);
	CK(cuGraphDestroy(g));
}
END_TEST

/* A user object's destructor runs in the guest once its last reference went. */
START_TEST(user_objects)
{
	CUuserObject o;
	CUgraph g, gc;
	int gone = 0;

	ck_assert_int_eq(cuUserObjectCreate(&o, &gone, uobj_gone, 1, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuUserObjectCreate(&o, &gone, uobj_gone, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
	CK(cuGraphCreate(&g, 0));
	/* More than the program holds: refused (natively the object would be
	 * freed under whoever still uses it) */
	ck_assert_int_eq(cuUserObjectRelease(o, 2), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuGraphRetainUserObject(g, o, 2, CU_GRAPH_USER_OBJECT_MOVE), CUDA_ERROR_INVALID_VALUE);
	CK(cuGraphRetainUserObject(g, o, 1, CU_GRAPH_USER_OBJECT_MOVE));
	ck_assert_int_eq(cuUserObjectRelease(o, 1), CUDA_ERROR_INVALID_VALUE); /* it moved */
	CK(cuGraphClone(&gc, g)); /* the clone holds a reference too */
	CK(cuUserObjectRetain(o, 1));
	CK(cuUserObjectRelease(o, 1));
	CK(cuGraphDestroy(g));
	usleep(100 * 1000);
	ck_assert_int_eq(__atomic_load_n(&gone, __ATOMIC_SEQ_CST), 0);
	CK(cuGraphDestroy(gc));
	for (int i = 0; i < 200 && !__atomic_load_n(&gone, __ATOMIC_SEQ_CST); i++)
		usleep(10 * 1000);
	ck_assert_int_eq(__atomic_load_n(&gone, __ATOMIC_SEQ_CST), 1);
	ck_assert_int_eq(cuUserObjectRelease(o, 1), CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

/* What a VM cannot do or a guest must not reach is refused with the driver's codes. */
START_TEST(refused)
{
	CUDA_EXT_SEM_SIGNAL_NODE_PARAMS sp;
	CUDA_MEMSET_NODE_PARAMS m = {.value = 1, .elementSize = 4, .width = 16, .height = 1};
	CUgraphNode n;
	CUgraph g;
	CUdeviceptr d;

	CK(cuGraphCreate(&g, 0));
	memset(&sp, 0, sizeof(sp));
	ck_assert_int_eq(cuGraphAddExternalSemaphoresSignalNode(&n, g, NULL, 0, &sp), CUDA_ERROR_INVALID_HANDLE);
	/* memory that is not the session's */
	m.dst = 0x1000;
	ck_assert_int_eq(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, g_ctx), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemAlloc(&d, 64));
	m.dst = d;
	m.width = 17; /* one element past the end */
	ck_assert_int_eq(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, g_ctx), CUDA_ERROR_INVALID_VALUE);
	m.elementSize = 3;
	m.width = 1;
	ck_assert_int_eq(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, g_ctx), CUDA_ERROR_INVALID_VALUE);
	m.elementSize = 4;
	CK(cuGraphAddMemsetNode(&n, g, NULL, 0, &m, g_ctx));
	/* a node id is no graph id, and the other way round */
	ck_assert_int_eq(cuGraphAddEmptyNode(&n, (CUgraph)n, NULL, 0), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuGraphDestroyNode((CUgraphNode)g), CUDA_ERROR_INVALID_HANDLE);
	CK(cuGraphDestroy(g));
	ck_assert_int_eq(cuGraphDestroyNode(n), CUDA_ERROR_INVALID_HANDLE);
	CK(cuMemFree(d));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("graphs");
	TCase *t = tcase_create("graphs");
	SRunner *r;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, every_node_kind);
	tcase_add_test(t, exec_update_refused);
	tcase_add_test(t, clones_and_edges);
	tcase_add_test(t, pageable_copies);
	tcase_add_test(t, dot_print_in_guest);
	tcase_add_test(t, user_objects);
	tcase_add_test(t, refused);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
