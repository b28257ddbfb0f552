/* SPDX-License-Identifier: MIT */
/*
 * graph_nodes.c - vcGraphNode: nodes of every kind but kernels (graph.c),
 * added, set in a graph or an executable graph, and read back. The guest's
 * flat description becomes the driver's CUgraphNodeParams after every handle
 * in it was looked up in the session's tables and every device range it
 * names was checked: memset targets, memcpy sides, the addresses of batch
 * memory operations. The nodes, and the graphs they own (a child graph moved
 * into its node, a conditional node's bodies), belong to their graph. Host
 * nodes run a function of ours that hands the guest's cookie to the guest
 * (graph_exec.c).
 */
#include <stdlib.h>

#include "cuda/graph.h"

/* What a description points at once it is the driver's parameters. */
struct scratch {
	CUmemAccessDesc descs[VC_CU_GN_EXTRA_MAX];
	CUstreamBatchMemOpParams ops[VC_CU_GN_EXTRA_MAX];
};

/* Bytes of each extra entry a node of @type carries (0: none). */
static size_t extra_size(int32_t type)
{
	if (type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		return sizeof(CUmemAccessDesc);
	if (type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP)
		return sizeof(CUstreamBatchMemOpParams);
	return 0;
}

/* Context id @id, or the current context when 0. */
static int node_ctx(struct vc_cu_session *x, uint64_t id, CUcontext *ctx)
{
	void *c = NULL;
	int rc = vc_cu_lookup(x, VC_H_CUCONTEXT, id ? id : x->cur_id, &c);

	*ctx = c;
	return rc;
}

static int memset_params(struct vc_cu_session *x, const struct vc_cu_node_body *b, CUDA_MEMSET_NODE_PARAMS_v2 *m)
{
	uint64_t rows, end;
	int rc;

	if (b->elem != 1 && b->elem != 2 && b->elem != 4)
		return CUDA_ERROR_INVALID_VALUE;
	if (b->width && b->height) {
		/* The last byte: (height - 1) * pitch + width * elem. */
		if (__builtin_mul_overflow(b->height - 1, b->pitch, &rows) ||
		    __builtin_mul_overflow(b->width, (uint64_t)b->elem, &end) || __builtin_add_overflow(end, rows, &end))
			return CUDA_ERROR_INVALID_VALUE;
		if ((rc = vc_cu_graph_check_range(x, b->dst, end)))
			return rc;
	}
	memset(m, 0, sizeof(*m));
	m->dst = b->dst;
	m->pitch = b->pitch;
	m->value = b->value;
	m->elementSize = b->elem;
	m->width = b->width;
	m->height = b->height;
	return node_ctx(x, b->kctx, &m->ctx);
}

static int memcpy_params(struct vc_cu_session *x, const struct vc_cu_node_body *b, CUDA_MEMCPY_NODE_PARAMS *m)
{
	CUDA_MEMCPY3D *c = &m->copyParams;
	int rc;

	memset(m, 0, sizeof(*m));
	if ((rc = vc_cu_graph_copy_side(x, &b->src, b->cwidth, b->cheight, b->cdepth, &c->srcMemoryType, &c->srcHost,
					&c->srcDevice, &c->srcXInBytes, &c->srcY, &c->srcZ, &c->srcPitch,
					&c->srcHeight)) ||
	    (rc = vc_cu_graph_copy_side(x, &b->cdst, b->cwidth, b->cheight, b->cdepth, &c->dstMemoryType,
					(const void **)&c->dstHost, &c->dstDevice, &c->dstXInBytes, &c->dstY, &c->dstZ,
					&c->dstPitch, &c->dstHeight)))
		return rc;
	c->WidthInBytes = b->cwidth;
	c->Height = b->cheight;
	c->Depth = b->cdepth;
	return node_ctx(x, b->kctx, &m->copyCtx);
}

/* Batch memory operations: known kinds, addresses of this session's. */
static int batch_params(struct vc_cu_session *x, const struct vc_cu_node_body *b, const uint8_t *extra,
			struct scratch *s, CUDA_BATCH_MEM_OP_NODE_PARAMS_v2 *m)
{
	int rc;

	memset(m, 0, sizeof(*m));
	memcpy(s->ops, extra, (size_t)b->nextra * sizeof(s->ops[0]));
	for (uint32_t i = 0; i < b->nextra; i++) {
		CUstreamBatchMemOpParams *op = &s->ops[i];

		switch (op->operation) {
		case CU_STREAM_MEM_OP_WAIT_VALUE_32:
		case CU_STREAM_MEM_OP_WRITE_VALUE_32:
			rc = vc_cu_graph_check_range(x, op->waitValue.address, 4);
			op->waitValue.alias = 0;
			break;
		case CU_STREAM_MEM_OP_WAIT_VALUE_64:
		case CU_STREAM_MEM_OP_WRITE_VALUE_64:
			rc = vc_cu_graph_check_range(x, op->waitValue.address, 8);
			op->waitValue.alias = 0;
			break;
		case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
		case CU_STREAM_MEM_OP_BARRIER:
			rc = 0;
			break;
		default:
			rc = CUDA_ERROR_INVALID_VALUE;
		}
		if (rc)
			return rc;
	}
	m->count = b->nextra;
	m->paramArray = b->nextra ? s->ops : NULL;
	m->flags = b->flags;
	return node_ctx(x, b->kctx, &m->ctx);
}

/* The guest's description @b (extra entries at @extra) as driver parameters @np. */
static int body_params(struct vc_cu_session *x, const struct vc_cu_node_body *b, const uint8_t *extra,
		       struct scratch *s, CUgraphNodeParams *np)
{
	void *h;
	int rc;

	memset(np, 0, sizeof(*np));
	np->type = (CUgraphNodeType)b->type;
	switch (b->type) {
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return memset_params(x, b, &np->memset);
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return memcpy_params(x, b, &np->memcpy);
	case CU_GRAPH_NODE_TYPE_HOST:
		return vc_cu_graph_host_params(x, b->cookie, 0, (CUDA_HOST_NODE_PARAMS *)&np->host);
	case CU_GRAPH_NODE_TYPE_GRAPH:
		if (b->ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE && b->ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE)
			return CUDA_ERROR_INVALID_VALUE;
		np->graph.ownership = (CUgraphChildGraphNodeOwnership)b->ownership;
		rc = vc_cu_lookup(x, VC_H_CUGRAPH, b->graph, &h);
		np->graph.graph = h;
		/* A graph moved into a node must be free-standing. */
		if (rc == 0 && b->ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE &&
		    vc_cu_owner_of(x, b->graph) != UINT32_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		return rc;
	case CU_GRAPH_NODE_TYPE_EMPTY:
		return 0;
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		rc = vc_cu_lookup(x, VC_H_CUEVENT, b->event, &h);
		np->eventRecord.event = h; /* the wait node's struct is the same */
		return rc;
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		memcpy(&np->alloc.poolProps, b->props, sizeof(np->alloc.poolProps));
		/* A Windows security attributes pointer means nothing here. */
		if (np->alloc.poolProps.win32SecurityAttributes)
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(s->descs, extra, (size_t)b->nextra * sizeof(s->descs[0]));
		np->alloc.accessDescs = b->nextra ? s->descs : NULL;
		np->alloc.accessDescCount = b->nextra;
		np->alloc.bytesize = b->bytesize;
		return 0;
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		np->free.dptr = b->dptr;
		return 0;
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		return batch_params(x, b, extra, s, &np->memOp);
	case CU_GRAPH_NODE_TYPE_CONDITIONAL:
		if (!b->csize || b->csize > VC_CU_GN_BODIES_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		np->conditional.handle = b->handle;
		np->conditional.type = (CUgraphConditionalNodeType)b->ctype;
		np->conditional.size = b->csize;
		/* phGraph_out is the driver's answer: its array of body graphs. */
		return node_ctx(x, b->kctx, &np->conditional.ctx);
	default:
		/* Kernel nodes come packed (graph.c); external semaphores cannot be named. */
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* A node added: its id, and what it made (an address, body graphs, a moved graph's owner). */
static int added(struct vc_cu_session *x, const struct vc_cu_req_graph_node *rq, const CUgraphNodeParams *np,
		 void *node, struct vc_cu_out *out)
{
	struct vc_cu_rep_graph_node_any rp = {0};
	uint64_t *ids = (uint64_t *)out->data;
	uint32_t ni;
	int rc;

	if ((rc = vc_cu_graph_publish_node(x, rq->graph, node, &rp.node)))
		return rc;
	ni = (uint32_t)(rp.node & 0xffffffu);
	if (np->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
		rp.dptr = np->alloc.dptr;
		if ((rc = vc_cu_graph_note_alloc(x, np->alloc.dptr, np->alloc.bytesize)))
			return rc;
	}
	if (np->type == CU_GRAPH_NODE_TYPE_GRAPH && np->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE)
		x->h[rq->b.graph & 0xffffffu].owner = ni;
	if (np->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
		if (!ids || out->data_cap < np->conditional.size * sizeof(*ids) || !np->conditional.phGraph_out)
			return CUDA_ERROR_INVALID_VALUE;
		for (uint32_t i = 0; i < np->conditional.size; i++)
			if ((rc = vc_cu_graph_publish_owned(x, VC_H_CUGRAPH, rp.node, np->conditional.phGraph_out[i],
							    &ids[i])))
				return rc;
		rp.nbodies = np->conditional.size;
		out->data_len = rp.nbodies * (uint32_t)sizeof(*ids);
	}
	REPLY(rp);
	return 0;
}

/* One side of a memcpy node back: device memory, or an offset in the pinned pool. */
static int side_back(struct vc_cu_session *x, CUmemorytype type, const void *host, CUdeviceptr dev, size_t xb,
		     size_t y, size_t z, size_t pitch, size_t height, struct vc_cu_copy_side *w)
{
	w->x = xb;
	w->y = y;
	w->z = z;
	w->pitch = pitch;
	w->height = height;
	if (type == CU_MEMORYTYPE_DEVICE) {
		w->kind = VC_CU_MEM_DEVICE;
		w->addr = dev;
		return 0;
	}
	if (type != CU_MEMORYTYPE_HOST || vc_cu_pinned_off(x, host, &w->addr))
		return CUDA_ERROR_NOT_SUPPORTED; /* never made by the guest */
	w->kind = VC_CU_MEM_PINNED;
	return 0;
}

/* vcGraphNode GET: the description of node @node (id @id) of kind @b->type. */
static int node_get(struct vc_cu_session *x, uint64_t id, void *node, struct vc_cu_node_body *b, uint8_t *extra)
{
	CUgraphNodeType t;
	void *h = NULL;
	int rc;

	if ((rc = x->drv->cuGraphNodeGetType(node, &t)))
		return rc;
	if ((int32_t)t != b->type)
		return CUDA_ERROR_INVALID_VALUE; /* as the driver's getter of another kind answers */
	switch (t) {
	case CU_GRAPH_NODE_TYPE_MEMSET: {
		CUDA_MEMSET_NODE_PARAMS m;

		if ((rc = x->drv->cuGraphMemsetNodeGetParams(node, &m)))
			return rc;
		b->dst = m.dst;
		b->pitch = m.pitch;
		b->value = m.value;
		b->elem = m.elementSize;
		b->width = m.width;
		b->height = m.height;
		return 0;
	}
	case CU_GRAPH_NODE_TYPE_MEMCPY: {
		CUDA_MEMCPY3D c;

		if ((rc = x->drv->cuGraphMemcpyNodeGetParams(node, &c)))
			return rc;
		if ((rc = side_back(x, c.srcMemoryType, c.srcHost, c.srcDevice, c.srcXInBytes, c.srcY, c.srcZ,
				    c.srcPitch, c.srcHeight, &b->src)) ||
		    (rc = side_back(x, c.dstMemoryType, c.dstHost, c.dstDevice, c.dstXInBytes, c.dstY, c.dstZ,
				    c.dstPitch, c.dstHeight, &b->cdst)))
			return rc;
		b->cwidth = c.WidthInBytes;
		b->cheight = c.Height;
		b->cdepth = c.Depth;
		return 0;
	}
	case CU_GRAPH_NODE_TYPE_HOST: {
		CUDA_HOST_NODE_PARAMS hp;

		if ((rc = x->drv->cuGraphHostNodeGetParams(node, &hp)))
			return rc;
		return vc_cu_graph_host_cookie(&hp, &b->cookie) ? CUDA_ERROR_INVALID_VALUE : 0;
	}
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		rc = t == CU_GRAPH_NODE_TYPE_EVENT_RECORD ? x->drv->cuGraphEventRecordNodeGetEvent(node, (CUevent *)&h)
							  : x->drv->cuGraphEventWaitNodeGetEvent(node, (CUevent *)&h);
		return rc ? rc : vc_cu_publish(x, VC_H_CUEVENT, h, &b->event);
	case CU_GRAPH_NODE_TYPE_GRAPH:
		if ((rc = x->drv->cuGraphChildGraphNodeGetGraph(node, (CUgraph *)&h)))
			return rc;
		return vc_cu_graph_publish_owned(x, VC_H_CUGRAPH, id, h, &b->graph);
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
		CUDA_MEM_ALLOC_NODE_PARAMS m;

		if ((rc = x->drv->cuGraphMemAllocNodeGetParams(node, &m)))
			return rc;
		if (m.accessDescCount > VC_CU_GN_EXTRA_MAX || (m.accessDescCount && !m.accessDescs))
			return CUDA_ERROR_NOT_SUPPORTED;
		m.poolProps.win32SecurityAttributes = NULL;
		memcpy(b->props, &m.poolProps, sizeof(b->props));
		b->bytesize = m.bytesize;
		b->dptr = m.dptr;
		b->nextra = (uint32_t)m.accessDescCount;
		if (b->nextra)
			memcpy(extra, m.accessDescs, b->nextra * sizeof(CUmemAccessDesc));
		return 0;
	}
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		return x->drv->cuGraphMemFreeNodeGetParams(node, (CUdeviceptr *)&b->dptr);
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
		CUDA_BATCH_MEM_OP_NODE_PARAMS m;

		if ((rc = x->drv->cuGraphBatchMemOpNodeGetParams(node, &m)))
			return rc;
		if (m.count > VC_CU_GN_EXTRA_MAX || (m.count && !m.paramArray))
			return CUDA_ERROR_NOT_SUPPORTED;
		if (!m.ctx || vc_cu_find(x, VC_H_CUCONTEXT, m.ctx, &b->kctx))
			b->kctx = 0;
		b->flags = m.flags;
		b->nextra = m.count;
		if (m.count)
			memcpy(extra, m.paramArray, m.count * sizeof(CUstreamBatchMemOpParams));
		return 0;
	}
	default:
		return CUDA_ERROR_INVALID_VALUE; /* no getter natively either */
	}
}

static int do_get(struct vc_cu_session *x, const struct vc_cu_req_graph_node *rq, struct vc_cu_out *out)
{
	struct vc_cu_rep_graph_node_any rp = {0};
	struct vc_cu_node_body b;
	void *node;
	int rc;

	if (!out->data || out->data_cap < sizeof(b) + VC_CU_GN_EXTRA_MAX * sizeof(CUstreamBatchMemOpParams))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq->node, &node)))
		return rc;
	memset(&b, 0, sizeof(b));
	b.type = rq->b.type;
	if ((rc = node_get(x, rq->node, node, &b, out->data + sizeof(b))))
		return rc;
	memcpy(out->data, &b, sizeof(b));
	out->data_len = (uint32_t)(sizeof(b) + b.nextra * extra_size(b.type));
	REPLY(rp);
	return 0;
}

int vc_cu_manual_vcGraphNode(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	CUgraphNode deps[VC_CU_CAPTURE_DEPS_MAX];
	struct vc_cu_req_graph_node rq;
	CUgraphNodeParams np;
	struct scratch *s;
	void *graph, *node = NULL;
	bool memcpy_node, bounce;
	size_t esize;
	int rc;

	TAKE(rq);
	esize = extra_size(rq.b.type);
	if (rq.action > VC_CU_GN_GET || rq.ndeps > VC_CU_CAPTURE_DEPS_MAX || rq.b.nextra > VC_CU_GN_EXTRA_MAX ||
	    (rq.b.nextra && !esize) || (rq.action != VC_CU_GN_ADD && rq.ndeps) ||
	    (uint64_t)rq.ndeps * 8 + (uint64_t)rq.b.nextra * esize > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (rq.action == VC_CU_GN_GET)
		return do_get(x, &rq, out);
	if (!(s = malloc(sizeof(*s))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = body_params(x, &rq.b, p + sizeof(rq) + (size_t)rq.ndeps * 8, s, &np);
	if (rc)
		goto out;
	memcpy_node = rq.b.type == CU_GRAPH_NODE_TYPE_MEMCPY;
	bounce = memcpy_node && (rq.b.src.kind == VC_CU_MEM_BOUNCE || rq.b.cdst.kind == VC_CU_MEM_BOUNCE);
	switch (rq.action) {
	case VC_CU_GN_ADD:
		if ((rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.graph, &graph)) ||
		    (rc = vc_cu_graph_lookup_nodes(x, p + sizeof(rq), rq.ndeps, deps)))
			break;
		if ((rc = vc_cu_graph_bounce_add(x, graph, deps, rq.ndeps, &np, bounce ? rq.b.src.kind : 0,
						 bounce ? rq.b.cdst.kind : 0, rq.b.cookie, (CUgraphNode *)&node)))
			break;
		rc = added(x, &rq, &np, node, out);
		break;
	case VC_CU_GN_SET:
		if ((rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.node, &node)))
			break;
		if (memcpy_node)
			rc = vc_cu_graph_bounce_set(x, NULL, 0, node, &np, bounce ? rq.b.src.kind : 0,
						    bounce ? rq.b.cdst.kind : 0, rq.b.cookie);
		else
			rc = x->drv->cuGraphNodeSetParams(node, &np);
		break;
	default:
		if ((rc = vc_cu_lookup(x, VC_H_CUGRAPHEXEC, rq.graph, &graph)) ||
		    (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.node, &node)))
			break;
		if (memcpy_node)
			rc = vc_cu_graph_bounce_set(x, graph, rq.graph, node, &np, bounce ? rq.b.src.kind : 0,
						    bounce ? rq.b.cdst.kind : 0, rq.b.cookie);
		else
			rc = x->drv->cuGraphExecNodeSetParams(graph, node, &np);
		break;
	}
out:
	free(s);
	return rc;
}
