/* SPDX-License-Identifier: MIT */
/*
 * graph.c - graphs built by hand: kernel, memcpy and memset nodes, a graph's
 * node list, and kernel node parameters both ways. Graphs live in the host
 * driver; what the guest names are ids. Kernel parameters travel packed by
 * the function's layout, as for launches; host memory in a graph must be
 * page-locked memory of ours, which the host can reach whenever the graph
 * runs, or, in a copy node, pageable memory standing behind a bounce
 * buffer of it (capcopy.c; the host keeps the node that moves the bytes
 * beside the copy, host-backend/cuda/graph_bounce.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vc_cuda_manual.h"
#include "vc_cu_guest.h"
#include "graph.h"

#define ID(h) ((uint64_t)(uintptr_t)(h))

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
	struct vc_cu_req_handle rq = {.handle = ID(hGraph)};
	struct vc_cu_prefix none;

	return vc_cu_call(VC_CU_cuGraphDestroy, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	uint64_t *ids = NULL, total = 0, want;
	CUresult rc;

	if (!numNodes)
		return CUDA_ERROR_INVALID_VALUE;
	want = nodes ? *numNodes : 0;
	if (want && !(ids = calloc(want, sizeof(*ids))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = vc_cu_list(VC_CU_cuGraphGetNodes, ID(hGraph), ids, want, &total);
	if (rc == CUDA_SUCCESS) {
		/* As natively: the rest of the array is NULL, and the count is
		 * what was obtained (all of them when only counting). */
		for (uint64_t i = 0; i < want; i++)
			nodes[i] = (CUgraphNode)(uintptr_t)ids[i];
		*numNodes = nodes && total > want ? want : total;
	}
	free(ids);
	return rc;
}

/* Send kernel node parameters @np with @op (add, set, exec set). */
static CUresult kernel_node(uint32_t op, uint64_t graph, uint64_t node, const CUgraphNode *deps, size_t ndeps,
			    const CUDA_KERNEL_NODE_PARAMS *np, CUgraphNode *out)
{
	struct {
		struct vc_cu_req_graph_kernel rq;
		uint8_t rest[VC_CU_CAPTURE_DEPS_MAX * 8 + VC_LAUNCH_PARAMS_MAX];
	} *m;
	struct vc_cu_rep_graph_node rp = {0};
	CUfunction f;
	uint32_t psize = 0;
	CUresult rc;

	if (!np || (ndeps && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	if (ndeps > VC_CU_CAPTURE_DEPS_MAX)
		return CUDA_ERROR_NOT_SUPPORTED;
	f = np->func ? np->func : (CUfunction)np->kern;
	if (!f)
		return CUDA_ERROR_INVALID_VALUE;
	m = malloc(sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&m->rq, 0, sizeof(m->rq));
	for (size_t i = 0; i < ndeps; i++) {
		uint64_t id = ID(deps[i]);

		memcpy(m->rest + i * 8, &id, 8);
	}
	rc = vc_cu_params_pack(f, np->kernelParams, np->extra, m->rest + ndeps * 8, &psize, NULL);
	if (rc)
		goto out;
	m->rq.graph = graph;
	m->rq.node = node;
	m->rq.ndeps = (uint32_t)ndeps;
	m->rq.k.func = ID(f);
	m->rq.k.kctx = np->func ? 0 : ID(np->ctx);
	m->rq.k.grid[0] = np->gridDimX;
	m->rq.k.grid[1] = np->gridDimY;
	m->rq.k.grid[2] = np->gridDimZ;
	m->rq.k.block[0] = np->blockDimX;
	m->rq.k.block[1] = np->blockDimY;
	m->rq.k.block[2] = np->blockDimZ;
	m->rq.k.shared_mem = np->sharedMemBytes;
	m->rq.k.param_size = psize;
	/* An executable graph's update is sent without a reply: it only
	 * changes what the graph's next launches run, and a program that
	 * relaunches a graph updates its kernels' arguments before every
	 * launch (XLA's command buffers, JAX's: nine round trips per call).
	 * A failure the checks above could not see (a kernel of another
	 * context) becomes the sticky error, as a launch's does. */
	if (op == VC_CU_cuGraphExecKernelNodeSetParams_v2)
		rc = vc_cu_submit(op, &m->rq, sizeof(m->rq), m->rest, ndeps * 8 + psize);
	else
		rc = vc_cu_call(op, &m->rq, sizeof(m->rq), m->rest, ndeps * 8 + psize, &rp, out ? sizeof(rp) : 0,
				NULL, 0, 0);
	if (rc == CUDA_SUCCESS && out)
		*out = (CUgraphNode)(uintptr_t)rp.node;
out:
	free(m);
	return rc;
}

CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
					 size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	if (!phGraphNode)
		return CUDA_ERROR_INVALID_VALUE;
	return kernel_node(VC_CU_cuGraphAddKernelNode_v2, ID(hGraph), 0, dependencies, numDependencies, nodeParams,
			   phGraphNode);
}

CUresult CUDAAPI cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	return kernel_node(VC_CU_cuGraphKernelNodeSetParams_v2, 0, ID(hNode), NULL, 0, nodeParams, NULL);
}

CUresult CUDAAPI cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
						   const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	return kernel_node(VC_CU_cuGraphExecKernelNodeSetParams_v2, ID(hGraphExec), ID(hNode), NULL, 0, nodeParams,
			   NULL);
}

/*
 * The parameters a node handed out: the packed bytes and the pointer array
 * into them, kept per node until its parameters are asked for again (natively
 * they stay valid while the node's parameters do not change).
 */
struct kparams {
	struct kparams *next;
	uint64_t node;
	void *ptrs[VC_CU_PARAMS_MAX];
	uint8_t buf[VC_LAUNCH_PARAMS_MAX];
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct kparams *g_kparams;

CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct vc_cu_req_handle rq = {.handle = ID(hNode)};
	struct vc_cu_param_layout *pl = NULL;
	struct vc_cu_kernel_node rp;
	struct kparams *kp, **pp;
	size_t got = 0;
	CUresult rc;

	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	kp = calloc(1, sizeof(*kp));
	pl = malloc(sizeof(*pl));
	rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (!kp || !pl)
		goto err;
	rc = vc_cu_call_sized(VC_CU_cuGraphKernelNodeGetParams_v2, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp),
			      kp->buf, sizeof(kp->buf), &got, 0);
	if (rc)
		goto err;
	if ((rc = vc_cu_params_layout(rp.func, pl)))
		goto err;
	rc = CUDA_ERROR_INVALID_VALUE;
	if (got != rp.param_size || got < pl->total)
		goto err;
	for (uint32_t i = 0; i < pl->count; i++)
		kp->ptrs[i] = kp->buf + pl->offset[i];
	kp->node = rq.handle;
	pthread_mutex_lock(&g_mu);
	for (pp = &g_kparams; *pp; pp = &(*pp)->next)
		if ((*pp)->node == rq.handle) {
			struct kparams *old = *pp;

			*pp = old->next;
			free(old);
			break;
		}
	kp->next = g_kparams;
	g_kparams = kp;
	pthread_mutex_unlock(&g_mu);
	memset(nodeParams, 0, sizeof(*nodeParams));
	nodeParams->func = (CUfunction)(uintptr_t)rp.func;
	nodeParams->kern = (CUkernel)(uintptr_t)rp.kern;
	nodeParams->ctx = (CUcontext)(uintptr_t)rp.kctx;
	nodeParams->gridDimX = rp.grid[0];
	nodeParams->gridDimY = rp.grid[1];
	nodeParams->gridDimZ = rp.grid[2];
	nodeParams->blockDimX = rp.block[0];
	nodeParams->blockDimY = rp.block[1];
	nodeParams->blockDimZ = rp.block[2];
	nodeParams->sharedMemBytes = rp.shared_mem;
	nodeParams->kernelParams = pl->count ? kp->ptrs : NULL;
	free(pl);
	return CUDA_SUCCESS;
err:
	free(pl);
	free(kp);
	return rc;
}

/*
 * One side of a graph copy into @w: device memory, or page-locked memory of
 * ours (a graph may run long after the call: only memory the host can reach
 * then will do; the host checks the extent). The program's pageable memory
 * is left to a bounce: its address into *@pageable. Managed memory is the
 * device's (its pages move): never bounced.
 */
static CUresult side(struct vc_cu_copy_side *w, CUmemorytype type, const void *host, CUdeviceptr dev, size_t x,
		     size_t y, size_t z, size_t pitch, size_t height, void **pageable)
{
	uint64_t off;

	w->x = x;
	w->y = y;
	w->z = z;
	w->pitch = pitch;
	w->height = height;
	switch (type) {
	case CU_MEMORYTYPE_DEVICE:
		w->kind = VC_CU_MEM_DEVICE;
		w->addr = dev;
		return CUDA_SUCCESS;
	case CU_MEMORYTYPE_UNIFIED:
		if (vc_cu_mem_is_device(dev, 1)) {
			w->kind = VC_CU_MEM_DEVICE;
			w->addr = dev;
			return CUDA_SUCCESS;
		}
		host = (const void *)(uintptr_t)dev;
		/* fall through */
	case CU_MEMORYTYPE_HOST:
		if (vc_cu_mem_pinned(host, 1, &off)) {
			w->kind = VC_CU_MEM_PINNED;
			w->addr = off;
			return CUDA_SUCCESS;
		}
		if (!host || (vc_cu_managed_any() && vc_cu_managed_has((uint64_t)(uintptr_t)host, 1)))
			return CUDA_ERROR_NOT_SUPPORTED;
		*pageable = (void *)(uintptr_t)host;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_NOT_SUPPORTED; /* CUDA arrays */
	}
}

/*
 * Side @w of copy @c naming pageable memory at @host: a bounce buffer of the
 * pinned pool (capcopy.c) holding the bytes from @host to the last the copy
 * touches (offsets, pitches and planes stay the copy's), and the cookie of
 * the pair that moves them (@out: device to host, only the rows the copy
 * writes) into *@cookie.
 */
static CUresult bounce(struct vc_cu_copy_side *w, const CUDA_MEMCPY3D *c, void *host, int out, uint64_t *cookie)
{
	struct vc_cu_capcopy_rows r = {.width = c->WidthInBytes, .height = c->Height, .depth = c->Depth,
				       .pitch = w->pitch};
	uint64_t n, last, poff;
	CUhostFn fn;
	void *data;
	int movable;
	CUresult rc;

	if (!c->WidthInBytes || !c->Height || !c->Depth ||
	    ((c->Height > 1 || c->Depth > 1) && w->pitch < w->x + c->WidthInBytes) ||
	    (c->Depth > 1 && w->height < w->y + c->Height))
		return CUDA_ERROR_INVALID_VALUE;
	/* The first byte: x + y * pitch + z * pitch * height; the last rows
	 * and planes on from it. */
	if (__builtin_mul_overflow(w->pitch, w->height, &r.plane) ||
	    __builtin_mul_overflow(w->y, w->pitch, &r.first) || __builtin_mul_overflow(w->z, r.plane, &n) ||
	    __builtin_add_overflow(r.first, n, &r.first) || __builtin_add_overflow(r.first, w->x, &r.first) ||
	    __builtin_mul_overflow((uint64_t)c->Height - 1, w->pitch, &last) ||
	    __builtin_mul_overflow((uint64_t)c->Depth - 1, r.plane, &n) || __builtin_add_overflow(last, n, &last) ||
	    __builtin_add_overflow(last, c->WidthInBytes, &last) || __builtin_add_overflow(last, r.first, &n))
		return CUDA_ERROR_INVALID_VALUE;
	/* Memory the library's thread can read (out of the device: write)
	 * when the graph runs: a device address the guest does not know
	 * (unified addressing) is not taken for the program's pages. */
	if (vc_cu_host_classify(host, n, out ? 0 : CU_MEMHOSTREGISTER_READ_ONLY, &movable))
		return CUDA_ERROR_NOT_SUPPORTED;
	/* Out of the device, only the bytes the copy writes go back: all of
	 * them when they are the whole bounce. */
	rc = vc_cu_capcopy_get(host, n, out, r.first || n != r.width * r.height * r.depth ? &r : NULL, &poff, &fn,
			       &data);
	if (rc == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		return CUDA_ERROR_NOT_SUPPORTED; /* the bounces' bound */
	if (rc || (rc = vc_cu_graph_pair_cookie(fn, data, cookie)))
		return rc;
	w->kind = VC_CU_MEM_BOUNCE;
	w->addr = poff;
	return CUDA_SUCCESS;
}

CUresult vc_cu_graph_copy_sides(const CUDA_MEMCPY3D *c, struct vc_cu_copy_side *src, struct vc_cu_copy_side *dst,
				uint64_t *cookie)
{
	void *ps = NULL, *pd = NULL;
	CUresult rc;

	*cookie = 0;
	if ((rc = side(src, c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ,
		       c->srcPitch, c->srcHeight, &ps)) ||
	    (rc = side(dst, c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ,
		       c->dstPitch, c->dstHeight, &pd)))
		return rc;
	if (c->srcLOD || c->dstLOD)
		return CUDA_ERROR_INVALID_VALUE;
	if (ps && pd)
		return CUDA_ERROR_NOT_SUPPORTED; /* one bounce per copy */
	return ps || pd ? bounce(ps ? src : dst, c, ps ? ps : pd, !ps, cookie) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				      size_t numDependencies, const CUDA_MEMCPY3D *c, CUcontext ctx)
{
	struct {
		struct vc_cu_req_graph_memcpy rq;
		uint64_t deps[VC_CU_CAPTURE_DEPS_MAX];
	} m;
	struct vc_cu_rep_graph_node rp;
	CUresult rc;

	if (!phGraphNode || !c || (numDependencies && !dependencies))
		return CUDA_ERROR_INVALID_VALUE;
	if (numDependencies > VC_CU_CAPTURE_DEPS_MAX)
		return CUDA_ERROR_NOT_SUPPORTED;
	memset(&m.rq, 0, sizeof(m.rq));
	if ((rc = vc_cu_graph_copy_sides(c, &m.rq.src, &m.rq.dst, &m.rq.cookie)))
		return rc;
	m.rq.graph = ID(hGraph);
	m.rq.kctx = ID(ctx);
	m.rq.ndeps = (uint32_t)numDependencies;
	m.rq.width = c->WidthInBytes;
	m.rq.height = c->Height;
	m.rq.depth = c->Depth;
	for (size_t i = 0; i < numDependencies; i++)
		m.deps[i] = ID(dependencies[i]);
	rc = vc_cu_call(VC_CU_cuGraphAddMemcpyNode, &m.rq, sizeof(m.rq), m.deps, numDependencies * 8, &rp,
			sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*phGraphNode = (CUgraphNode)(uintptr_t)rp.node;
	return rc;
}

/* ---- kernel nodes under their CUDA 11 names: no CUkernel, no context ---------------- */

static void kernel_v1_to_v2(const CUDA_KERNEL_NODE_PARAMS_v1 *a, CUDA_KERNEL_NODE_PARAMS *b)
{
	memset(b, 0, sizeof(*b));
	b->func = a->func;
	b->gridDimX = a->gridDimX;
	b->gridDimY = a->gridDimY;
	b->gridDimZ = a->gridDimZ;
	b->blockDimX = a->blockDimX;
	b->blockDimY = a->blockDimY;
	b->blockDimZ = a->blockDimZ;
	b->sharedMemBytes = a->sharedMemBytes;
	b->kernelParams = a->kernelParams;
	b->extra = a->extra;
}

CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				      size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS p;

	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	kernel_v1_to_v2(nodeParams, &p);
	return cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS p;

	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	kernel_v1_to_v2(nodeParams, &p);
	return cuGraphKernelNodeSetParams_v2(hNode, &p);
}

CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS p;

	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	kernel_v1_to_v2(nodeParams, &p);
	return cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, &p);
}

CUresult CUDAAPI cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUresult rc;

	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = cuGraphKernelNodeGetParams_v2(hNode, &p)))
		return rc;
	/* A node made from a CUkernel names it where the function goes. */
	nodeParams->func = p.func ? p.func : (CUfunction)p.kern;
	nodeParams->gridDimX = p.gridDimX;
	nodeParams->gridDimY = p.gridDimY;
	nodeParams->gridDimZ = p.gridDimZ;
	nodeParams->blockDimX = p.blockDimX;
	nodeParams->blockDimY = p.blockDimY;
	nodeParams->blockDimZ = p.blockDimZ;
	nodeParams->sharedMemBytes = p.sharedMemBytes;
	nodeParams->kernelParams = p.kernelParams;
	nodeParams->extra = NULL;
	return CUDA_SUCCESS;
}
