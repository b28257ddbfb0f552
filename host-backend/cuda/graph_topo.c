/* SPDX-License-Identifier: MIT */
/*
 * graph_topo.c - a graph's shape: its edges, root nodes, a node's
 * dependencies and dependents (a page of ids per round trip, each id
 * belonging to the graph), dependencies added and removed, nodes destroyed
 * (with what they own), enabled and found in a clone, child graphs, and kernel node
 * attributes (their values are plain data: dimensions, priorities, device
 * addresses of an access policy window, which the driver checks).
 */
#include <stdlib.h>

#include "cuda/graph.h"

/* The driver's list @what of @h: @total entries into freshly allocated arrays. */
static int fetch(struct vc_cu_session *x, uint32_t what, void *h, bool want_edges, CUgraphNode **from,
		 CUgraphNode **to, CUgraphEdgeData **ed, size_t *total)
{
	size_t n = 0;
	int rc;

	*from = *to = NULL;
	*ed = NULL;
	switch (what) {
	case VC_CU_GE_EDGES:
		rc = x->drv->cuGraphGetEdges_v2(h, NULL, NULL, NULL, &n);
		break;
	case VC_CU_GE_ROOTS:
		rc = x->drv->cuGraphGetRootNodes(h, NULL, &n);
		break;
	case VC_CU_GE_DEPS:
		rc = x->drv->cuGraphNodeGetDependencies_v2(h, NULL, NULL, &n);
		break;
	default:
		rc = x->drv->cuGraphNodeGetDependentNodes_v2(h, NULL, NULL, &n);
		break;
	}
	if (rc)
		return rc;
	if (n > VC_CU_MAX_HANDLES)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*total = n;
	if (!n)
		return 0;
	*from = calloc(n, sizeof(**from));
	*to = calloc(n, sizeof(**to));
	*ed = calloc(n, sizeof(**ed));
	if (!*from || !*to || !*ed)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* Without edge data asked for, the driver refuses to drop any (LOSSY_QUERY). */
	switch (what) {
	case VC_CU_GE_EDGES:
		return x->drv->cuGraphGetEdges_v2(h, *from, *to, want_edges ? *ed : NULL, total);
	case VC_CU_GE_ROOTS:
		return x->drv->cuGraphGetRootNodes(h, *to, total);
	case VC_CU_GE_DEPS:
		return x->drv->cuGraphNodeGetDependencies_v2(h, *to, want_edges ? *ed : NULL, total);
	default:
		return x->drv->cuGraphNodeGetDependentNodes_v2(h, *to, want_edges ? *ed : NULL, total);
	}
}

int vc_cu_manual_vcGraphEdges(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_graph_edges rq;
	struct vc_cu_rep_list rp = {0};
	struct vc_cu_graph_edge *e = (struct vc_cu_graph_edge *)out->data;
	CUgraphNode *from = NULL, *to = NULL;
	CUgraphEdgeData *ed = NULL;
	uint64_t owner;
	size_t total = 0;
	void *h;
	int rc;

	TAKE(rq);
	if (rq.what > VC_CU_GE_DEPENDENTS || rq.count > VC_CU_GE_PAGE)
		return -VC_FATAL_PAYLOAD;
	if (!out->data || out->data_cap < rq.count * sizeof(*e))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (rq.what <= VC_CU_GE_ROOTS) {
		rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.handle, &h);
		owner = rq.handle;
	} else {
		rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.handle, &h);
		owner = rc ? 0 : vc_cu_owner_of(x, rq.handle);
		/* A bounced copy's edges on its companion's side are its companion's. */
		if (!rc)
			h = vc_cu_graph_bounce_end(x, h, rq.what == VC_CU_GE_DEPENDENTS);
	}
	if (rc || (rc = fetch(x, rq.what, h, rq.want_edges, &from, &to, &ed, &total)))
		goto out;
	if (total)
		vc_cu_graph_bounce_list(x, rq.what == VC_CU_GE_EDGES ? from : NULL, to, ed, &total, false);
	rp.total = total;
	for (uint64_t i = rq.first; i < total && rp.returned < rq.count; i++, rp.returned++) {
		struct vc_cu_graph_edge *o = &e[rp.returned];

		memset(o, 0, sizeof(*o));
		if ((rq.what == VC_CU_GE_EDGES && (rc = vc_cu_graph_publish_node(x, owner, from[i], &o->from))) ||
		    (rc = vc_cu_graph_publish_node(x, owner, to[i], &o->to)))
			goto out;
		memcpy(o->edge, &ed[i], sizeof(o->edge));
	}
	out->data_len = rp.returned * (uint32_t)sizeof(*e);
	REPLY(rp);
out:
	free(from);
	free(to);
	free(ed);
	return rc;
}

int vc_cu_manual_vcGraphDeps(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_graph_deps rq;
	CUgraphNode *from = NULL, *to = NULL;
	CUgraphEdgeData *ed = NULL;
	void *graph;
	int rc;

	(void)out;
	TAKE(rq);
	if (rq.n > VC_CU_GD_MAX || rq.remove > 1 || rq.has_edges > 1 ||
	    (uint64_t)rq.n * (rq.has_edges ? 24 : 16) > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.graph, &graph)))
		return rc;
	from = calloc(rq.n + 1, sizeof(*from));
	to = calloc(rq.n + 1, sizeof(*to));
	ed = calloc(rq.n + 1, sizeof(*ed));
	rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (!from || !to || !ed)
		goto out;
	if ((rc = vc_cu_graph_lookup_nodes(x, p + sizeof(rq), rq.n, from)) ||
	    (rc = vc_cu_graph_lookup_targets(x, p + sizeof(rq) + (size_t)rq.n * 8, rq.n, to)))
		goto out;
	if (rq.has_edges)
		memcpy(ed, p + sizeof(rq) + (size_t)rq.n * 16, (size_t)rq.n * sizeof(*ed));
	rc = rq.remove ? x->drv->cuGraphRemoveDependencies_v2(graph, from, to, rq.has_edges ? ed : NULL, rq.n)
		       : x->drv->cuGraphAddDependencies_v2(graph, from, to, rq.has_edges ? ed : NULL, rq.n);
out:
	free(from);
	free(to);
	free(ed);
	return rc;
}

int vc_cu_manual_cuGraphDestroyNode(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				    struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	void *node, *companion;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.a, &node)))
		return rc;
	companion = vc_cu_graph_bounce_companion(x, node);
	if ((rc = x->drv->cuGraphDestroyNode(node)))
		return rc;
	if (companion)
		x->drv->cuGraphDestroyNode(companion); /* a bounced copy's host node goes with it */
	/* A child graph or conditional bodies it owned went with it. */
	vc_cu_graph_forget_tree(x, (uint32_t)(rq.a & 0xffffffu));
	vc_cu_forget(x, VC_H_CUGRAPHNODE, rq.a);
	return 0;
}

int vc_cu_manual_cuGraphNodeSetEnabled(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				       struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	void *exec, *node;
	int rc;

	(void)out;
	TAKE(rq);
	if (rq.v0 > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHEXEC, rq.a, &exec)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.b, &node)))
		return rc;
	if ((rc = x->drv->cuGraphNodeSetEnabled(exec, node, (unsigned)rq.v0)))
		return rc;
	return vc_cu_graph_bounce_enable(x, exec, rq.a, node, rq.v0 != 0);
}

int vc_cu_manual_cuGraphNodeFindInClone(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_rep_graph_call rp = {0};
	void *node, *clone, *found = NULL;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.a, &node)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.b, &clone)))
		return rc;
	if ((rc = x->drv->cuGraphNodeFindInClone((CUgraphNode *)&found, node, clone)) ||
	    (rc = vc_cu_graph_publish_node(x, rq.b, found, &rp.h)))
		return rc;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuGraphChildGraphNodeGetGraph(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					       struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_rep_graph_call rp = {0};
	void *node, *child = NULL;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.a, &node)))
		return rc;
	/* The node's own graph: it belongs to the node, and goes with it. */
	if ((rc = x->drv->cuGraphChildGraphNodeGetGraph(node, (CUgraph *)&child)) ||
	    (rc = vc_cu_graph_publish_owned(x, VC_H_CUGRAPH, rq.a, child, &rp.h)))
		return rc;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuGraphKernelNodeGetAttribute(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					       struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_rep_graph_call rp = {0};
	CUkernelNodeAttrValue v;
	void *node;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.a, &node)))
		return rc;
	memset(&v, 0, sizeof(v));
	if ((rc = x->drv->cuGraphKernelNodeGetAttribute(node, (CUkernelNodeAttrID)rq.v0, &v)))
		return rc;
	memcpy(rp.value, &v, sizeof(v));
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuGraphKernelNodeSetAttribute(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					       struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	CUkernelNodeAttrValue v;
	void *node;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHNODE, rq.a, &node)))
		return rc;
	memcpy(&v, rq.value, sizeof(v));
	/* A device-updatable node's device handle is the driver's to fill in. */
	if (rq.v0 == CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE)
		v.deviceUpdatableKernelNode.devNode = NULL;
	return x->drv->cuGraphKernelNodeSetAttribute(node, (CUkernelNodeAttrID)rq.v0, &v);
}

int vc_cu_manual_cuGraphConditionalHandleCreate(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_rep_graph_call rp = {0};
	CUgraphConditionalHandle h = 0;
	void *graph, *ctx;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.a, &graph)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUCONTEXT, rq.b, &ctx)))
		return rc;
	if (rq.v0 > UINT32_MAX || rq.v1 > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	/* The handle is a value kernels use on the device: it travels as it is. */
	if ((rc = x->drv->cuGraphConditionalHandleCreate(&h, graph, ctx, (unsigned)rq.v0, (unsigned)rq.v1)))
		return rc;
	rp.v0 = h;
	REPLY(rp);
	return 0;
}
