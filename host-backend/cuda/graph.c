/* SPDX-License-Identifier: MIT */
/*
 * graph.c - graphs. They live in the host driver. Capture happens there,
 * on the session's real stream: launches, copies and memsets the guest sends
 * to a capturing stream are recorded as they would be natively (copies
 * staged through the arena are refused, memory.c). cuStreamGetCaptureInfo
 * answers with ids for the graph and its dependency nodes. Nodes built by
 * hand: kernel nodes take the guest's packed parameters as a buffer; memcpy
 * nodes reach host memory only in the guest's pinned pool, which stays
 * mapped for as long as the session does.
 */
#include <stdlib.h>

#include "cuda/graph.h"

/*
 * Nodes belong to their graph: destroying the graph forgets their ids, so
 * that a node of a destroyed graph is an invalid handle, never a dangling
 * pointer handed to the driver. Graphs that nodes own (child graphs, the
 * bodies of conditional nodes) belong to their node the same way.
 */
int vc_cu_graph_publish_owned(struct vc_cu_session *x, int kind, uint64_t owner, void *real, uint64_t *id)
{
	int rc = vc_cu_publish(x, kind, real, id);

	if (rc == 0 && *id)
		x->h[*id & 0xffffffu].owner = (uint32_t)(owner & 0xffffffu);
	return rc;
}

int vc_cu_graph_publish_node(struct vc_cu_session *x, uint64_t owner, void *node, uint64_t *id)
{
	return vc_cu_graph_publish_owned(x, VC_H_CUGRAPHNODE, owner, node, id);
}

void vc_cu_graph_forget_tree(struct vc_cu_session *x, uint32_t idx)
{
	uint8_t *mark = calloc(x->nh ? x->nh : 1, 1);
	bool more = true;

	if (!mark) {
		/* No memory for the walk: one level, which is every node. */
		for (uint32_t i = 0; i < x->nh; i++)
			if (x->h[i].live && x->h[i].owner == idx && i != idx &&
			    (x->h[i].kind == VC_H_CUGRAPHNODE || x->h[i].kind == VC_H_CUGRAPH))
				vc_cu_forget_slot(x, i);
		return;
	}
	if (idx < x->nh)
		mark[idx] = 1;
	while (more) {
		more = false;
		for (uint32_t i = 0; i < x->nh; i++) {
			const struct vc_cu_handle *h = &x->h[i];

			if (!mark[i] && h->live && (h->kind == VC_H_CUGRAPHNODE || h->kind == VC_H_CUGRAPH) &&
			    h->owner < x->nh && mark[h->owner])
				mark[i] = more = true;
		}
	}
	for (uint32_t i = 0; i < x->nh; i++)
		if (mark[i] && i != idx)
			vc_cu_forget_slot(x, i);
	free(mark);
}

int vc_cu_manual_cuGraphDestroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_handle rq;
	uint32_t gi;
	void *graph;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.handle, &graph)))
		return rc;
	if (!graph)
		return CUDA_ERROR_INVALID_VALUE; /* cuGraphDestroy(NULL), as natively */
	gi = (uint32_t)(rq.handle & 0xffffffu);
	/* A graph a node owns (moved into a child graph node, a conditional
	 * node's body) goes with its node: destroying it would free it twice. */
	if (vc_cu_owner_of(x, rq.handle) != UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuGraphDestroy(graph)))
		return rc;
	vc_cu_graph_forget_tree(x, gi);
	vc_cu_forget(x, VC_H_CUGRAPH, rq.handle);
	return 0;
}

int vc_cu_manual_cuStreamGetCaptureInfo_v3(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					   struct vc_cu_out *out)
{
	struct vc_cu_req_capture_info rq;
	struct vc_cu_rep_capture_info rp = {0};
	CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
	const CUgraphEdgeData *edges = NULL;
	const CUgraphNode *deps = NULL;
	struct vc_cu_capture_dep *d;
	cuuint64_t id = 0;
	uint64_t graph_id;
	CUgraph graph = NULL;
	size_t ndeps = 0;
	void *stream;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
		return rc;
	/* The graph is asked for always: its nodes belong to it. */
	rc = x->drv->cuStreamGetCaptureInfo_v3(stream, &status, &id, &graph,
					       rq.want_deps ? &deps : NULL, rq.want_deps ? &edges : NULL,
					       rq.want_deps ? &ndeps : NULL);
	if (rc)
		return rc;
	rp.status = (int32_t)status;
	rp.id = id;
	if (graph && (rc = vc_cu_publish(x, VC_H_CUGRAPH, graph, &rp.graph)))
		return rc;
	graph_id = rp.graph;
	if (!rq.want_graph)
		rp.graph = 0;
	if (ndeps) {
		if (ndeps > VC_CU_CAPTURE_DEPS_MAX || !deps || !out->data ||
		    out->data_cap < ndeps * sizeof(*d))
			return CUDA_ERROR_NOT_SUPPORTED;
		d = (struct vc_cu_capture_dep *)out->data;
		for (size_t i = 0; i < ndeps; i++) {
			/* a companion as its copy */
			if ((rc = vc_cu_graph_publish_node(x, graph_id, vc_cu_graph_bounce_rep(x, deps[i]), &d[i].node)))
				return rc;
			if (edges)
				memcpy(d[i].edge, &edges[i], sizeof(d[i].edge));
			else
				memset(d[i].edge, 0, sizeof(d[i].edge));
		}
		rp.ndeps = (uint32_t)ndeps;
		out->data_len = (uint32_t)(ndeps * sizeof(*d));
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuGraphGetNodes(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_list rq;
	CUgraphNode *all = NULL;
	size_t total = 0;
	void *graph;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.owner, &graph)))
		return rc;
	if ((rc = x->drv->cuGraphGetNodes(graph, NULL, &total)))
		return rc;
	if (total > VC_CU_MAX_HANDLES)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (total && !(all = calloc(total, sizeof(*all))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (total && !(rc = x->drv->cuGraphGetNodes(graph, all, &total)))
		vc_cu_graph_bounce_list(x, NULL, all, NULL, &total, true); /* companions unseen */
	if (!rc)
		rc = vc_cu_list_reply(x, &rq, VC_H_CUGRAPHNODE, (void *const *)all, total, true, out);
	free(all);
	return rc;
}

static int lookup_ends(struct vc_cu_session *x, const uint8_t *ids, uint32_t n, CUgraphNode *nodes, bool from)
{
	uint64_t id;
	int rc;

	for (uint32_t i = 0; i < n; i++) {
		memcpy(&id, ids + (size_t)i * 8, 8);
		if ((rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, id, (void **)&nodes[i])))
			return rc;
		nodes[i] = vc_cu_graph_bounce_end(x, nodes[i], from);
	}
	return 0;
}

int vc_cu_graph_lookup_nodes(struct vc_cu_session *x, const uint8_t *ids, uint32_t n, CUgraphNode *nodes)
{
	return lookup_ends(x, ids, n, nodes, true);
}

int vc_cu_graph_lookup_targets(struct vc_cu_session *x, const uint8_t *ids, uint32_t n, CUgraphNode *nodes)
{
	return lookup_ends(x, ids, n, nodes, false);
}

/*
 * A kernel node request: its dependencies into @deps and its parameters
 * into @np, with @extra pointing at the packed parameters in @p.
 */
static int kernel_request(struct vc_cu_session *x, const struct vc_cu_req_graph_kernel *rq, const uint8_t *p,
			  uint32_t len, CUgraphNode *deps, CUDA_KERNEL_NODE_PARAMS *np, void **extra, size_t *psize)
{
	void *f, *ctx = NULL;
	bool is_kernel;
	int rc;

	if (rq->ndeps > VC_CU_CAPTURE_DEPS_MAX || rq->k.param_size > VC_LAUNCH_PARAMS_MAX ||
	    (uint64_t)rq->ndeps * 8 + rq->k.param_size > len - sizeof(*rq))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_graph_lookup_nodes(x, p + sizeof(*rq), rq->ndeps, deps)) ||
	    (rc = vc_cu_lookup_func(x, rq->k.func, &f, &is_kernel)))
		return rc;
	if (rq->k.kctx && (rc = vc_cu_lookup(x, VC_H_CUCONTEXT, rq->k.kctx, &ctx)))
		return rc;
	memset(np, 0, sizeof(*np));
	/* A CUkernel goes in its own field, with its context (NULL: current). */
	if (!is_kernel) {
		np->func = f;
	} else {
		np->kern = f;
		np->ctx = ctx;
	}
	np->gridDimX = rq->k.grid[0];
	np->gridDimY = rq->k.grid[1];
	np->gridDimZ = rq->k.grid[2];
	np->blockDimX = rq->k.block[0];
	np->blockDimY = rq->k.block[1];
	np->blockDimZ = rq->k.block[2];
	np->sharedMemBytes = rq->k.shared_mem;
	*psize = rq->k.param_size;
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = (void *)(p + sizeof(*rq) + (size_t)rq->ndeps * 8);
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = psize;
	extra[4] = CU_LAUNCH_PARAM_END;
	np->extra = *psize ? extra : NULL;
	return 0;
}

int vc_cu_manual_cuGraphAddKernelNode_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					 struct vc_cu_out *out)
{
	CUgraphNode deps[VC_CU_CAPTURE_DEPS_MAX], node;
	struct vc_cu_req_graph_kernel rq;
	struct vc_cu_rep_graph_node rp = {0};
	CUDA_KERNEL_NODE_PARAMS np;
	void *graph, *extra[5];
	size_t psize;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.graph, &graph)) ||
	    (rc = kernel_request(x, &rq, p, len, deps, &np, extra, &psize)))
		return rc;
	if ((rc = x->drv->cuGraphAddKernelNode_v2(&node, graph, rq.ndeps ? deps : NULL, rq.ndeps, &np)))
		return rc;
	if ((rc = vc_cu_graph_publish_node(x, rq.graph, node, &rp.node)))
		return rc;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuGraphKernelNodeSetParams_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					       struct vc_cu_out *out)
{
	CUgraphNode deps[VC_CU_CAPTURE_DEPS_MAX];
	struct vc_cu_req_graph_kernel rq;
	CUDA_KERNEL_NODE_PARAMS np;
	void *node, *extra[5];
	size_t psize;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.node, &node)) ||
	    (rc = kernel_request(x, &rq, p, len, deps, &np, extra, &psize)))
		return rc;
	return x->drv->cuGraphKernelNodeSetParams_v2(node, &np);
}

int vc_cu_manual_cuGraphExecKernelNodeSetParams_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						   struct vc_cu_out *out)
{
	CUgraphNode deps[VC_CU_CAPTURE_DEPS_MAX];
	struct vc_cu_req_graph_kernel rq;
	CUDA_KERNEL_NODE_PARAMS np;
	void *exec, *node, *extra[5];
	size_t psize;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHEXEC, rq.graph, &exec)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.node, &node)) ||
	    (rc = kernel_request(x, &rq, p, len, deps, &np, extra, &psize)))
		return rc;
	return x->drv->cuGraphExecKernelNodeSetParams_v2(exec, node, &np);
}

/* The packed parameters of node parameters @np into @buf (@cap bytes). */
static int pack_node_params(struct vc_cu_session *x, const CUDA_KERNEL_NODE_PARAMS *np, uint8_t *buf,
			    uint32_t cap, uint32_t *size)
{
	struct vc_cu_param_layout *pl;
	int rc;

	*size = 0;
	if (np->extra) {
		const void *src = NULL;
		size_t n = 0;

		for (int i = 0; i < 8 && np->extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (np->extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				src = np->extra[i + 1];
			else if (np->extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				n = *(const size_t *)np->extra[i + 1];
		}
		if (n > cap || (n && !src))
			return CUDA_ERROR_NOT_SUPPORTED;
		if (n)
			memcpy(buf, src, n);
		*size = (uint32_t)n;
		return 0;
	}
	if (!np->kernelParams)
		return 0;
	pl = malloc(sizeof(*pl));
	if (!pl)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = vc_cu_func_layout(x, np->func ? (void *)np->func : (void *)np->kern, !np->func, pl);
	if (rc == 0 && pl->total > cap)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	for (uint32_t i = 0; rc == 0 && i < pl->count; i++)
		memcpy(buf + pl->offset[i], np->kernelParams[i], pl->size[i]);
	if (rc == 0)
		*size = pl->total;
	free(pl);
	return rc;
}

int vc_cu_manual_cuGraphKernelNodeGetParams_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					       struct vc_cu_out *out)
{
	struct vc_cu_req_handle rq;
	struct vc_cu_kernel_node rp = {0};
	CUDA_KERNEL_NODE_PARAMS np;
	void *node;
	int rc;

	TAKE(rq);
	if (!out->data)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.handle, &node)))
		return rc;
	memset(&np, 0, sizeof(np));
	if ((rc = x->drv->cuGraphKernelNodeGetParams_v2(node, &np)))
		return rc;
	/* The function as the guest knows it: a kernel standing for one keeps
	 * its kernel id. */
	if (np.func && vc_cu_find(x, VC_H_CUKERNEL, np.func, &rp.func) != 0 &&
	    (rc = vc_cu_publish(x, VC_H_CUFUNCTION, np.func, &rp.func)))
		return rc;
	if (np.kern && (rc = vc_cu_publish(x, VC_H_CUKERNEL, np.kern, &rp.kern)))
		return rc;
	if (!rp.func)
		rp.func = rp.kern;
	if (np.ctx && vc_cu_find(x, VC_H_CUCONTEXT, np.ctx, &rp.kctx) != 0)
		rp.kctx = 0;
	rp.grid[0] = np.gridDimX;
	rp.grid[1] = np.gridDimY;
	rp.grid[2] = np.gridDimZ;
	rp.block[0] = np.blockDimX;
	rp.block[1] = np.blockDimY;
	rp.block[2] = np.blockDimZ;
	rp.shared_mem = np.sharedMemBytes;
	if ((rc = pack_node_params(x, &np, out->data, out->data_cap < VC_LAUNCH_PARAMS_MAX ? out->data_cap
											   : VC_LAUNCH_PARAMS_MAX,
				   &rp.param_size)))
		return rc;
	out->data_len = rp.param_size;
	REPLY(rp);
	return 0;
}

int vc_cu_graph_copy_side(struct vc_cu_session *x, const struct vc_cu_copy_side *w, uint64_t width,
			  uint64_t height, uint64_t depth, CUmemorytype *type, const void **host, CUdeviceptr *dev,
			  size_t *xb, size_t *y, size_t *z, size_t *pitch, size_t *pheight)
{
	uint64_t rows, planes, end;

	*xb = w->x;
	*y = w->y;
	*z = w->z;
	*pitch = w->pitch;
	*pheight = w->height;
	if (w->kind != VC_CU_MEM_DEVICE && w->kind != VC_CU_MEM_PINNED && w->kind != VC_CU_MEM_BOUNCE)
		return -VC_FATAL_PAYLOAD;
	if (!width || !height || !depth) {
		/* Nothing touched: the driver says what it thinks of it. */
		if (w->kind != VC_CU_MEM_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		*type = CU_MEMORYTYPE_DEVICE;
		*dev = w->addr;
		return 0;
	}
	/* The last byte: x + width + (y + height - 1) * pitch + (z + depth - 1) * pitch * pheight. */
	if (__builtin_add_overflow(w->y, height - 1, &rows) || __builtin_mul_overflow(rows, w->pitch, &rows) ||
	    __builtin_add_overflow(w->z, depth - 1, &planes) || __builtin_mul_overflow(planes, w->pitch, &planes) ||
	    __builtin_mul_overflow(planes, w->height, &planes) || __builtin_add_overflow(w->x, width, &end) ||
	    __builtin_add_overflow(end, rows, &end) || __builtin_add_overflow(end, planes, &end))
		return CUDA_ERROR_INVALID_VALUE;
	if (w->kind == VC_CU_MEM_DEVICE) {
		/* Device memory of this session's, or of its graphs' allocation nodes. */
		*type = CU_MEMORYTYPE_DEVICE;
		*dev = w->addr;
		return vc_cu_graph_check_range(x, w->addr, end);
	}
	*type = CU_MEMORYTYPE_HOST;
	*host = vc_cu_pinned_ptr(x, w->addr, end);
	return *host ? 0 : CUDA_ERROR_INVALID_VALUE;
}

int vc_cu_manual_cuGraphAddMemcpyNode(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				      struct vc_cu_out *out)
{
	CUgraphNode deps[VC_CU_CAPTURE_DEPS_MAX], node;
	struct vc_cu_req_graph_memcpy rq;
	struct vc_cu_rep_graph_node rp = {0};
	void *graph, *ctx = NULL;
	CUDA_MEMCPY3D c;
	int rc;

	TAKE(rq);
	if (rq.ndeps > VC_CU_CAPTURE_DEPS_MAX || (uint64_t)rq.ndeps * 8 > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	memset(&c, 0, sizeof(c));
	if ((rc = vc_cu_graph_copy_side(x, &rq.src, rq.width, rq.height, rq.depth, &c.srcMemoryType, &c.srcHost,
					&c.srcDevice, &c.srcXInBytes, &c.srcY, &c.srcZ, &c.srcPitch, &c.srcHeight)) ||
	    (rc = vc_cu_graph_copy_side(x, &rq.dst, rq.width, rq.height, rq.depth, &c.dstMemoryType,
					(const void **)&c.dstHost, &c.dstDevice, &c.dstXInBytes, &c.dstY, &c.dstZ,
					&c.dstPitch, &c.dstHeight)))
		return rc;
	c.WidthInBytes = rq.width;
	c.Height = rq.height;
	c.Depth = rq.depth;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.graph, &graph)) ||
	    (rc = vc_cu_graph_lookup_nodes(x, p + sizeof(rq), rq.ndeps, deps)))
		return rc;
	if (rq.kctx && (rc = vc_cu_lookup(x, VC_H_CUCONTEXT, rq.kctx, &ctx)))
		return rc;
	if (!ctx)
		vc_cu_lookup(x, VC_H_CUCONTEXT, x->cur_id, &ctx);
	if (rq.src.kind == VC_CU_MEM_BOUNCE || rq.dst.kind == VC_CU_MEM_BOUNCE) {
		CUgraphNodeParams np;

		memset(&np, 0, sizeof(np));
		np.type = CU_GRAPH_NODE_TYPE_MEMCPY;
		np.memcpy.copyParams = c;
		np.memcpy.copyCtx = ctx;
		rc = vc_cu_graph_bounce_add(x, graph, deps, rq.ndeps, &np, rq.src.kind, rq.dst.kind, rq.cookie, &node);
	} else {
		rc = x->drv->cuGraphAddMemcpyNode(&node, graph, rq.ndeps ? deps : NULL, rq.ndeps, &c, ctx);
	}
	if (rc)
		return rc;
	if ((rc = vc_cu_graph_publish_node(x, rq.graph, node, &rp.node)))
		return rc;
	REPLY(rp);
	return 0;
}
