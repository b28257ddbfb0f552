/* SPDX-License-Identifier: MIT */
/*
 * graph_nodes.c - graph nodes of every kind but kernels (graph.c has those):
 * memcpy, memset, host, empty, event record and wait, child graph, memory
 * allocation and free, batch memory operations and conditional nodes, added,
 * read and set (in a graph and in an executable graph) through their own
 * calls and through CUgraphNodeParams. Each travels as one flat description
 * (vcGraphNode, shared/vc_cuda_graph.h).
 * Host nodes name the guest's (function, data) pairs by cookie (graph_host.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "vc_cu_guest.h"

/* ---- the node call ---------------------------------------------------------------------- */

/*
 * vcGraphNode: @action on node @node of graph (or executable graph) @graph
 * with description @b and its @extra entries (@esize bytes each); body graph
 * ids of a new conditional node into @bodies (VC_CU_GN_BODIES_MAX).
 */
static CUresult node_call(uint32_t action, uint64_t graph, uint64_t node, const CUgraphNode *deps, size_t ndeps,
			  const struct vc_cu_node_body *b, const void *extra, size_t esize,
			  struct vc_cu_rep_graph_node_any *rp, uint64_t *bodies)
{
	struct vc_cu_req_graph_node rq;
	uint8_t *data;
	size_t dlen, got = 0;
	CUresult rc;

	if (ndeps && !deps)
		return CUDA_ERROR_INVALID_VALUE;
	if (ndeps > VC_CU_CAPTURE_DEPS_MAX || b->nextra > VC_CU_GN_EXTRA_MAX)
		return CUDA_ERROR_NOT_SUPPORTED;
	memset(&rq, 0, sizeof(rq));
	rq.action = action;
	rq.ndeps = (uint32_t)ndeps;
	rq.graph = graph;
	rq.node = node;
	rq.b = *b;
	dlen = ndeps * 8 + (size_t)b->nextra * esize;
	data = malloc(dlen ? dlen : 1);
	if (!data)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < ndeps; i++) {
		uint64_t id = VC_GID(deps[i]);

		memcpy(data + i * 8, &id, 8);
	}
	if (b->nextra)
		memcpy(data + ndeps * 8, extra, (size_t)b->nextra * esize);
	memset(rp, 0, sizeof(*rp));
	rc = vc_cu_call_sized(VC_CU_vcGraphNode, &rq, sizeof(rq), data, dlen, rp, sizeof(*rp), bodies,
			      bodies ? VC_CU_GN_BODIES_MAX * 8 : 0, &got, 0);
	free(data);
	if (rc == CUDA_SUCCESS && (rp->nbodies > VC_CU_GN_BODIES_MAX || got != rp->nbodies * 8ull))
		return CUDA_ERROR_INVALID_VALUE;
	return rc;
}

/* A node's description back (GET): the body and up to @ecap bytes of extra entries. */
static CUresult node_get(CUgraphNode node, CUgraphNodeType type, struct vc_cu_node_body *b, void *extra,
			 size_t esize)
{
	struct vc_cu_req_graph_node rq;
	struct vc_cu_rep_graph_node_any rp;
	uint8_t *buf;
	size_t got = 0, cap = sizeof(*b) + VC_CU_GN_EXTRA_MAX * 48;
	CUresult rc;

	memset(&rq, 0, sizeof(rq));
	rq.action = VC_CU_GN_GET;
	rq.node = VC_GID(node);
	rq.b.type = (int32_t)type;
	if (!(buf = malloc(cap)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = vc_cu_call_sized(VC_CU_vcGraphNode, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), buf, cap, &got, 0);
	if (rc == CUDA_SUCCESS) {
		memcpy(b, buf, got >= sizeof(*b) ? sizeof(*b) : 0);
		if (got < sizeof(*b) || b->type != (int32_t)type || b->nextra > VC_CU_GN_EXTRA_MAX ||
		    got != sizeof(*b) + (size_t)b->nextra * esize)
			rc = CUDA_ERROR_INVALID_VALUE;
		else if (b->nextra && extra)
			memcpy(extra, buf + sizeof(*b), (size_t)b->nextra * esize);
	}
	free(buf);
	return rc;
}

/* ---- descriptions from the driver API's structs ------------------------------------------ */

static void body_init(struct vc_cu_node_body *b, CUgraphNodeType type)
{
	memset(b, 0, sizeof(*b));
	b->type = (int32_t)type;
}

static void memset_body(struct vc_cu_node_body *b, CUdeviceptr dst, size_t pitch, unsigned value, unsigned elem,
			size_t width, size_t height, CUcontext ctx)
{
	body_init(b, CU_GRAPH_NODE_TYPE_MEMSET);
	b->dst = dst;
	b->pitch = pitch;
	b->value = value;
	b->elem = elem;
	b->width = width;
	b->height = height;
	b->kctx = VC_GID(ctx);
}

static CUresult memcpy_body(struct vc_cu_node_body *b, const CUDA_MEMCPY3D *c, CUcontext ctx)
{
	CUresult rc;

	body_init(b, CU_GRAPH_NODE_TYPE_MEMCPY);
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_graph_copy_sides(c, &b->src, &b->cdst, &b->cookie)))
		return rc;
	b->cwidth = c->WidthInBytes;
	b->cheight = c->Height;
	b->cdepth = c->Depth;
	b->kctx = VC_GID(ctx);
	return CUDA_SUCCESS;
}

static CUresult host_body(struct vc_cu_node_body *b, CUhostFn fn, void *data)
{
	body_init(b, CU_GRAPH_NODE_TYPE_HOST);
	return vc_cu_graph_pair_cookie(fn, data, &b->cookie);
}

static CUresult alloc_body(struct vc_cu_node_body *b, const CUmemPoolProps *props, const CUmemAccessDesc *descs,
			   size_t ndescs, size_t bytesize)
{
	body_init(b, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
	if (ndescs && !descs)
		return CUDA_ERROR_INVALID_VALUE;
	if (ndescs > VC_CU_GN_EXTRA_MAX)
		return CUDA_ERROR_NOT_SUPPORTED;
	memcpy(b->props, props, sizeof(b->props));
	b->nextra = (uint32_t)ndescs;
	b->bytesize = bytesize;
	return CUDA_SUCCESS;
}

static CUresult batch_body(struct vc_cu_node_body *b, const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	body_init(b, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
	if (!p || (p->count && !p->paramArray))
		return CUDA_ERROR_INVALID_VALUE;
	if (p->count > VC_CU_GN_EXTRA_MAX)
		return CUDA_ERROR_NOT_SUPPORTED;
	b->kctx = VC_GID(p->ctx);
	b->nextra = p->count;
	b->flags = p->flags;
	return CUDA_SUCCESS;
}

/*
 * CUgraphNodeParams @np to a description; the extra entries at *@extra of
 * *@esize bytes. Kernel nodes are not described here (graph.c).
 */
static CUresult params_body(const CUgraphNodeParams *np, struct vc_cu_node_body *b, const void **extra,
			    size_t *esize)
{
	*extra = NULL;
	*esize = 0;
	switch (np->type) {
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		if (np->memcpy.flags || np->memcpy.reserved)
			return CUDA_ERROR_INVALID_VALUE;
		return memcpy_body(b, &np->memcpy.copyParams, np->memcpy.copyCtx);
	case CU_GRAPH_NODE_TYPE_MEMSET:
		memset_body(b, np->memset.dst, np->memset.pitch, np->memset.value, np->memset.elementSize,
			    np->memset.width, np->memset.height, np->memset.ctx);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_HOST:
		return host_body(b, np->host.fn, np->host.userData);
	case CU_GRAPH_NODE_TYPE_GRAPH:
		body_init(b, np->type);
		b->graph = VC_GID(np->graph.graph);
		b->ownership = (uint32_t)np->graph.ownership;
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_EMPTY:
		body_init(b, np->type);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		body_init(b, np->type);
		b->event = VC_GID(np->eventWait.event);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		body_init(b, np->type);
		b->event = VC_GID(np->eventRecord.event);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
	case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
		return CUDA_ERROR_INVALID_HANDLE; /* no external semaphore in a VM */
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		*extra = np->alloc.accessDescs;
		*esize = sizeof(CUmemAccessDesc);
		return alloc_body(b, &np->alloc.poolProps, np->alloc.accessDescs, np->alloc.accessDescCount,
				  np->alloc.bytesize);
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		body_init(b, np->type);
		b->dptr = np->free.dptr;
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		*extra = np->memOp.paramArray;
		*esize = sizeof(CUstreamBatchMemOpParams);
		return batch_body(b, (const CUDA_BATCH_MEM_OP_NODE_PARAMS *)&np->memOp);
	case CU_GRAPH_NODE_TYPE_CONDITIONAL:
		body_init(b, np->type);
		b->handle = np->conditional.handle;
		b->ctype = (int32_t)np->conditional.type;
		b->csize = np->conditional.size;
		b->kctx = VC_GID(np->conditional.ctx);
		if (!b->csize)
			return CUDA_ERROR_INVALID_VALUE;
		return b->csize > VC_CU_GN_BODIES_MAX ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/*
 * Add a node described by @b after @deps (with edge data @edges, may be NULL).
 * A conditional node's body graphs go into an array of the library's, which
 * *@bodies is set to: natively the driver's, valid while the node lives (the
 * guest cannot see it go, so it is kept).
 */
/* Conditional nodes' body graph arrays handed to callers (see add()). */
struct body_block {
	struct body_block *next;
	CUgraph g[];
};
static struct body_block *g_bodies;
static pthread_mutex_t g_bodies_mu = PTHREAD_MUTEX_INITIALIZER;

static CUresult add(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,
		    const struct vc_cu_node_body *b, const void *extra, size_t esize, CUdeviceptr *dptr,
		    CUgraph **bodies)
{
	struct vc_cu_rep_graph_node_any rp;
	uint64_t ids[VC_CU_GN_BODIES_MAX];
	int plain = vc_cu_graph_edges_plain(edges, n);
	CUresult rc;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	rc = node_call(VC_CU_GN_ADD, VC_GID(g), 0, plain ? deps : NULL, plain ? n : 0, b, extra, esize, &rp,
		       bodies ? ids : NULL);
	if (rc != CUDA_SUCCESS)
		return rc;
	/* Edges that carry data are added after the node, as the driver
	 * would have made them. */
	if (!plain && (rc = vc_cu_graph_add_edges(g, (CUgraphNode)(uintptr_t)rp.node, deps, edges, n)))
		return rc;
	if (dptr)
		*dptr = rp.dptr;
	if (bodies) {
		struct body_block *blk = calloc(1, sizeof(*blk) + (rp.nbodies + 1) * sizeof(CUgraph));

		if (!blk) {
			cuGraphDestroyNode((CUgraphNode)(uintptr_t)rp.node);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		for (uint32_t i = 0; i < rp.nbodies; i++)
			blk->g[i] = (CUgraph)(uintptr_t)ids[i];
		/* The driver's array lives as long as the node; the body ids
		 * are kept for the process (a few words per conditional node),
		 * on a list, so that they stay reachable. */
		pthread_mutex_lock(&g_bodies_mu);
		blk->next = g_bodies;
		g_bodies = blk;
		pthread_mutex_unlock(&g_bodies_mu);
		*bodies = blk->g;
	}
	*out = (CUgraphNode)(uintptr_t)rp.node;
	return CUDA_SUCCESS;
}

static CUresult set(uint32_t action, CUgraphExec e, CUgraphNode node, const struct vc_cu_node_body *b,
		    const void *extra, size_t esize)
{
	struct vc_cu_rep_graph_node_any rp;

	return node_call(action, VC_GID(e), VC_GID(node), NULL, 0, b, extra, esize, &rp, NULL);
}

/* ---- CUgraphNodeParams --------------------------------------------------------------------- */

static CUresult kernel_v2(const CUgraphNodeParams *np, CUDA_KERNEL_NODE_PARAMS *kp)
{
	memset(kp, 0, sizeof(*kp));
	kp->func = np->kernel.func;
	kp->gridDimX = np->kernel.gridDimX;
	kp->gridDimY = np->kernel.gridDimY;
	kp->gridDimZ = np->kernel.gridDimZ;
	kp->blockDimX = np->kernel.blockDimX;
	kp->blockDimY = np->kernel.blockDimY;
	kp->blockDimZ = np->kernel.blockDimZ;
	kp->sharedMemBytes = np->kernel.sharedMemBytes;
	kp->kernelParams = np->kernel.kernelParams;
	kp->extra = np->kernel.extra;
	kp->kern = np->kernel.kern;
	kp->ctx = np->kernel.ctx;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				   const CUgraphEdgeData *dependencyData, size_t numDependencies,
				   CUgraphNodeParams *nodeParams)
{
	struct vc_cu_node_body b;
	const void *extra;
	size_t esize;
	CUresult rc;

	if (!nodeParams || !phGraphNode)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodeParams->type == CU_GRAPH_NODE_TYPE_KERNEL) {
		CUDA_KERNEL_NODE_PARAMS kp;
		int plain = vc_cu_graph_edges_plain(dependencyData, numDependencies);

		kernel_v2(nodeParams, &kp);
		rc = cuGraphAddKernelNode_v2(phGraphNode, hGraph, plain ? dependencies : NULL,
					     plain ? numDependencies : 0, &kp);
		if (rc == CUDA_SUCCESS && !plain)
			rc = vc_cu_graph_add_edges(hGraph, *phGraphNode, dependencies, dependencyData,
						   numDependencies);
		return rc;
	}
	if ((rc = params_body(nodeParams, &b, &extra, &esize)))
		return rc;
	return add(phGraphNode, hGraph, dependencies, dependencyData, numDependencies, &b, extra, esize,
		   nodeParams->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ? &nodeParams->alloc.dptr : NULL,
		   nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL ? &nodeParams->conditional.phGraph_out : NULL);
}

CUresult CUDAAPI cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				size_t numDependencies, CUgraphNodeParams *nodeParams)
{
	return cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, NULL, numDependencies, nodeParams);
}

static CUresult node_set(uint32_t action, CUgraphExec e, CUgraphNode node, CUgraphNodeParams *np)
{
	struct vc_cu_node_body b;
	const void *extra;
	size_t esize;
	CUresult rc;

	if (!np)
		return CUDA_ERROR_INVALID_VALUE;
	if (np->type == CU_GRAPH_NODE_TYPE_KERNEL) {
		CUDA_KERNEL_NODE_PARAMS kp;

		kernel_v2(np, &kp);
		return action == VC_CU_GN_SET ? cuGraphKernelNodeSetParams_v2(node, &kp)
					      : cuGraphExecKernelNodeSetParams_v2(e, node, &kp);
	}
	if ((rc = params_body(np, &b, &extra, &esize)))
		return rc;
	return set(action, e, node, &b, extra, esize);
}

CUresult CUDAAPI cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
	return node_set(VC_CU_GN_SET, NULL, hNode, nodeParams);
}

CUresult CUDAAPI cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
	return node_set(VC_CU_GN_EXEC_SET, hGraphExec, hNode, nodeParams);
}

/* ---- each kind's own calls ------------------------------------------------------------------ */

CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				     size_t numDependencies)
{
	struct vc_cu_node_body b;

	body_init(&b, CU_GRAPH_NODE_TYPE_EMPTY);
	return add(phGraphNode, hGraph, dependencies, NULL, numDependencies, &b, NULL, 0, NULL, NULL);
}

CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				      size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	struct vc_cu_node_body b;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memset_body(&b, p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, ctx);
	return add(phGraphNode, hGraph, dependencies, NULL, numDependencies, &b, NULL, 0, NULL, NULL);
}

CUresult CUDAAPI cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = node_get(hNode, CU_GRAPH_NODE_TYPE_MEMSET, &b, NULL, 0)))
		return rc;
	p->dst = b.dst;
	p->pitch = b.pitch;
	p->value = b.value;
	p->elementSize = b.elem;
	p->width = b.width;
	p->height = b.height;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memset_body(&b, p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, NULL);
	return set(VC_CU_GN_SET, NULL, hNode, &b, NULL, 0);
}

CUresult CUDAAPI cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	struct vc_cu_node_body b;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memset_body(&b, p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, ctx);
	return set(VC_CU_GN_EXEC_SET, hGraphExec, hNode, &b, NULL, 0);
}

/* One side of a copy back: device memory, or our pinned memory at its guest address. */
static CUresult side_back(const struct vc_cu_copy_side *w, CUmemorytype *type, const void **host,
			  CUdeviceptr *dev, size_t *x, size_t *y, size_t *z, size_t *pitch, size_t *height)
{
	*x = w->x;
	*y = w->y;
	*z = w->z;
	*pitch = w->pitch;
	*height = w->height;
	if (w->kind == VC_CU_MEM_DEVICE) {
		*type = CU_MEMORYTYPE_DEVICE;
		*dev = w->addr;
		return CUDA_SUCCESS;
	}
	*type = CU_MEMORYTYPE_HOST;
	*host = vc_cu_pinned_addr(w->addr, 1);
	if (!*host)
		return CUDA_ERROR_INVALID_VALUE;
	*host = vc_cu_capcopy_behind(*host); /* a bounce stands for the program's memory */
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *p)
{
	struct vc_cu_node_body b;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = node_get(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, &b, NULL, 0)))
		return rc;
	memset(p, 0, sizeof(*p));
	if ((rc = side_back(&b.src, &p->srcMemoryType, &p->srcHost, &p->srcDevice, &p->srcXInBytes, &p->srcY,
			    &p->srcZ, &p->srcPitch, &p->srcHeight)) ||
	    (rc = side_back(&b.cdst, &p->dstMemoryType, (const void **)&p->dstHost, &p->dstDevice,
			    &p->dstXInBytes, &p->dstY, &p->dstZ, &p->dstPitch, &p->dstHeight)))
		return rc;
	p->WidthInBytes = b.cwidth;
	p->Height = b.cheight;
	p->Depth = b.cdepth;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *p)
{
	struct vc_cu_node_body b;
	CUresult rc = memcpy_body(&b, p, NULL);

	return rc ? rc : set(VC_CU_GN_SET, NULL, hNode, &b, NULL, 0);
}

CUresult CUDAAPI cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMCPY3D *p,
						CUcontext ctx)
{
	struct vc_cu_node_body b;
	CUresult rc = memcpy_body(&b, p, ctx);

	return rc ? rc : set(VC_CU_GN_EXEC_SET, hGraphExec, hNode, &b, NULL, 0);
}

CUresult CUDAAPI cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				    size_t numDependencies, const CUDA_HOST_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = host_body(&b, p->fn, p->userData)))
		return rc;
	return add(phGraphNode, hGraph, dependencies, NULL, numDependencies, &b, NULL, 0, NULL, NULL);
}

CUresult CUDAAPI cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	struct vc_cu_host_pair hp;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = node_get(hNode, CU_GRAPH_NODE_TYPE_HOST, &b, NULL, 0)))
		return rc;
	if (!vc_cu_graph_pair(b.cookie, &hp))
		return CUDA_ERROR_INVALID_VALUE;
	p->fn = hp.fn;
	p->userData = hp.data;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = host_body(&b, p->fn, p->userData)))
		return rc;
	return set(VC_CU_GN_SET, NULL, hNode, &b, NULL, 0);
}

CUresult CUDAAPI cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
					      const CUDA_HOST_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = host_body(&b, p->fn, p->userData)))
		return rc;
	return set(VC_CU_GN_EXEC_SET, hGraphExec, hNode, &b, NULL, 0);
}

static CUresult event_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n, CUgraphNodeType t,
			   CUevent ev)
{
	struct vc_cu_node_body b;

	body_init(&b, t);
	b.event = VC_GID(ev);
	return add(out, g, deps, NULL, n, &b, NULL, 0, NULL, NULL);
}

CUresult CUDAAPI cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
					   size_t numDependencies, CUevent event)
{
	return event_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
			  event);
}

CUresult CUDAAPI cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
					 size_t numDependencies, CUevent event)
{
	return event_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

CUresult CUDAAPI cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
					  size_t numDependencies, CUgraph childGraph)
{
	struct vc_cu_node_body b;

	body_init(&b, CU_GRAPH_NODE_TYPE_GRAPH);
	b.graph = VC_GID(childGraph);
	b.ownership = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE;
	return add(phGraphNode, hGraph, dependencies, NULL, numDependencies, &b, NULL, 0, NULL, NULL);
}

CUresult CUDAAPI cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraph childGraph)
{
	struct vc_cu_node_body b;

	body_init(&b, CU_GRAPH_NODE_TYPE_GRAPH);
	b.graph = VC_GID(childGraph);
	return set(VC_CU_GN_EXEC_SET, hGraphExec, hNode, &b, NULL, 0);
}

CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
					size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = alloc_body(&b, &p->poolProps, p->accessDescs, p->accessDescCount, p->bytesize)))
		return rc;
	return add(phGraphNode, hGraph, dependencies, NULL, numDependencies, &b, p->accessDescs,
		   sizeof(CUmemAccessDesc), &p->dptr, NULL);
}

/*
 * The access descriptors a node's parameters point at: the calling thread's,
 * valid until its next query (natively they live as long as the node).
 */
static __thread CUmemAccessDesc t_descs[VC_CU_GN_EXTRA_MAX];
static __thread CUstreamBatchMemOpParams t_ops[VC_CU_GN_EXTRA_MAX];

CUresult CUDAAPI cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = node_get(hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC, &b, t_descs, sizeof(t_descs[0]))))
		return rc;
	memset(p, 0, sizeof(*p));
	memcpy(&p->poolProps, b.props, sizeof(p->poolProps));
	p->accessDescs = b.nextra ? t_descs : NULL;
	p->accessDescCount = b.nextra;
	p->bytesize = b.bytesize;
	p->dptr = b.dptr;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				       size_t numDependencies, CUdeviceptr dptr)
{
	struct vc_cu_node_body b;

	body_init(&b, CU_GRAPH_NODE_TYPE_MEM_FREE);
	b.dptr = dptr;
	return add(phGraphNode, hGraph, dependencies, NULL, numDependencies, &b, NULL, 0, NULL, NULL);
}

CUresult CUDAAPI cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
	struct vc_cu_node_body b;
	CUresult rc;

	if (!dptr_out)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = node_get(hNode, CU_GRAPH_NODE_TYPE_MEM_FREE, &b, NULL, 0)))
		return rc;
	*dptr_out = b.dptr;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphAddBatchMemOpNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
					  size_t numDependencies, const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc = batch_body(&b, p);

	if (rc)
		return rc;
	return add(phGraphNode, hGraph, dependencies, NULL, numDependencies, &b, p->paramArray,
		   sizeof(CUstreamBatchMemOpParams), NULL, NULL);
}

CUresult CUDAAPI cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode, CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = node_get(hNode, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, &b, t_ops, sizeof(t_ops[0]))))
		return rc;
	p->ctx = (CUcontext)(uintptr_t)b.kctx;
	p->count = b.nextra;
	p->paramArray = b.nextra ? t_ops : NULL;
	p->flags = b.flags;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphBatchMemOpNodeSetParams(CUgraphNode hNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc = batch_body(&b, p);

	return rc ? rc : set(VC_CU_GN_SET, NULL, hNode, &b, p->paramArray, sizeof(CUstreamBatchMemOpParams));
}

CUresult CUDAAPI cuGraphExecBatchMemOpNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
						    const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct vc_cu_node_body b;
	CUresult rc = batch_body(&b, p);

	return rc ? rc : set(VC_CU_GN_EXEC_SET, hGraphExec, hNode, &b, p->paramArray,
			     sizeof(CUstreamBatchMemOpParams));
}
