/* SPDX-License-Identifier: MIT */
/*
 * graph_exec.c - executable graphs and what runs in the guest: instantiation
 * (charging graph memory to the quota), updates (the nodes at fault named by
 * the guest's ids), destruction, the dot print, graph memory attributes,
 * and capture into an existing graph.
 *
 * Graph memory: a graph's allocation nodes reserve their addresses when
 * added, and the driver maps memory for them when an executable graph made
 * of the graph is launched (one launch of it at a time may hold them). So an
 * instantiation is charged the sum of its allocation nodes' sizes (child
 * graphs included) and fails with CUDA_ERROR_OUT_OF_MEMORY past the quota;
 * the charge is refunded when the executable graph is destroyed. Memory a
 * launch left allocated after that (freed later by cuMemFreeAsync) is no
 * longer counted.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resources/acct.h"
#include "cuda/graph.h"

#define DOT_MAX (64u << 20)

/* Bytes the allocation nodes of @graph (and its child graphs) allocate; @depth bounds nesting. */
static int graph_mem(struct vc_cu_session *x, CUgraph graph, int depth, uint64_t *bytes)
{
	CUgraphNode *nodes = NULL;
	size_t n = 0;
	int rc;

	if (depth > 64)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuGraphGetNodes(graph, NULL, &n)) || !n)
		return rc;
	if (n > VC_CU_MAX_HANDLES || !(nodes = calloc(n, sizeof(*nodes))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = x->drv->cuGraphGetNodes(graph, nodes, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		CUDA_MEM_ALLOC_NODE_PARAMS m;
		CUgraphNodeType t;
		CUgraph child;

		if ((rc = x->drv->cuGraphNodeGetType(nodes[i], &t)))
			break;
		if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC && !(rc = x->drv->cuGraphMemAllocNodeGetParams(nodes[i], &m)) &&
		    __builtin_add_overflow(*bytes, (uint64_t)m.bytesize, bytes))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		if (t == CU_GRAPH_NODE_TYPE_GRAPH && !(rc = x->drv->cuGraphChildGraphNodeGetGraph(nodes[i], &child)))
			rc = graph_mem(x, child, depth + 1, bytes);
	}
	free(nodes);
	return rc;
}

int vc_cu_manual_cuGraphInstantiateWithParams(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					      struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_rep_graph_call rp = {0};
	CUDA_GRAPH_INSTANTIATE_PARAMS ip;
	struct vc_cu_graphs *g;
	CUgraphExec exec = NULL;
	uint64_t bytes = 0;
	void *graph, *stream;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.a, &graph)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.b, &stream)))
		return rc;
	if (!(g = vc_cu_graph_state(x)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (g->ncharges == g->capcharges) {
		uint32_t cap = g->capcharges ? g->capcharges * 2 : 16;
		struct vc_cu_graph_charge *nc = realloc(g->charges, cap * sizeof(*nc));

		if (!nc)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->charges = nc;
		g->capcharges = cap;
	}
	if ((rc = graph_mem(x, graph, 0, &bytes)) || (rc = vc_cu_quota_charge(x, bytes)))
		return rc;
	memset(&ip, 0, sizeof(ip));
	ip.flags = rq.v0;
	ip.hUploadStream = stream;
	rc = x->drv->cuGraphInstantiateWithParams(&exec, graph, &ip);
	rp.v0 = (uint64_t)ip.result_out;
	rp.v1 = (uint64_t)rc;
	if (ip.hErrNode_out && vc_cu_find(x, VC_H_CUGRAPHNODE, ip.hErrNode_out, &rp.h2) &&
	    vc_cu_graph_publish_node(x, rq.a, ip.hErrNode_out, &rp.h2))
		rp.h2 = 0;
	if (rc == 0 && (rc = vc_cu_publish(x, VC_H_CUGRAPHEXEC, exec, &rp.h))) {
		x->drv->cuGraphExecDestroy(exec);
		rp.v1 = (uint64_t)rc;
	}
	if (rp.v1) {
		vc_cu_quota_refund(x, bytes);
		rp.h = 0;
	} else {
		int dev = vc_cu_quota_device(x);

		g->charges[g->ncharges++] = (struct vc_cu_graph_charge){rp.h, bytes, dev};
		vc_acct_on_device(dev, bytes, true);
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuGraphExecDestroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				    struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_graphs *g = x->graphs;
	void *exec;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHEXEC, rq.a, &exec)))
		return rc;
	if ((rc = x->drv->cuGraphExecDestroy(exec)))
		return rc;
	vc_cu_forget(x, VC_H_CUGRAPHEXEC, rq.a);
	vc_cu_graph_bounce_forget(x, rq.a);
	for (uint32_t i = 0; g && i < g->ncharges; i++)
		if (g->charges[i].exec == rq.a) {
			vc_cu_quota_gone(x, g->charges[i].dev, g->charges[i].bytes);
			g->charges[i] = g->charges[--g->ncharges];
			break;
		}
	return 0;
}

int vc_cu_manual_cuGraphExecUpdate_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				      struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_rep_graph_call rp = {0};
	CUgraphExecUpdateResultInfo info;
	void *exec, *graph;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPHEXEC, rq.a, &exec)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.b, &graph)))
		return rc;
	memset(&info, 0, sizeof(info));
	rc = x->drv->cuGraphExecUpdate_v2(exec, graph, &info);
	if (rc == 0)
		vc_cu_graph_bounce_forget(x, rq.a); /* its companions run the update graph's pairs */
	rp.v0 = (uint64_t)info.result;
	rp.v1 = (uint64_t)rc;
	/* The nodes at fault are the update graph's (ids it may not have shown yet). */
	if (info.errorNode && vc_cu_find(x, VC_H_CUGRAPHNODE, info.errorNode, &rp.h) &&
	    vc_cu_graph_publish_node(x, rq.b, info.errorNode, &rp.h))
		rp.h = 0;
	if (info.errorFromNode && vc_cu_find(x, VC_H_CUGRAPHNODE, info.errorFromNode, &rp.h2) &&
	    vc_cu_graph_publish_node(x, rq.b, info.errorFromNode, &rp.h2))
		rp.h2 = 0;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuDeviceGetGraphMemAttribute(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					      struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_rep_graph_call rp = {0};
	cuuint64_t v = 0;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if ((rc = x->drv->cuDeviceGetGraphMemAttribute((CUdevice)rq.v0, (CUgraphMem_attribute)rq.v1, &v)))
		return rc;
	memcpy(rp.value, &v, sizeof(v));
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuDeviceSetGraphMemAttribute(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					      struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	cuuint64_t v;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	memcpy(&v, rq.value, sizeof(v));
	return x->drv->cuDeviceSetGraphMemAttribute((CUdevice)rq.v0, (CUgraphMem_attribute)rq.v1, &v);
}

/* ---- the dot print ------------------------------------------------------------------------ */

/*
 * Flags whose output would show the guest host addresses of the server's
 * (node handles, host node functions and their records, pinned memory
 * mapped elsewhere than in the guest) are dropped; "verbose" stands for
 * every other one.
 */
static unsigned dot_flags(struct vc_cu_session *x, uint64_t flags)
{
	unsigned f = (unsigned)flags;

	if (f & CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE)
		f = 0xffffu & ~(unsigned)CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE;
	f &= ~(unsigned)(CU_GRAPH_DEBUG_DOT_FLAGS_HANDLES | CU_GRAPH_DEBUG_DOT_FLAGS_HOST_NODE_PARAMS);
	if (!x->pinned_identity)
		f &= ~(unsigned)CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS;
	return f;
}

/* Print @graph into a memory file of ours and keep the text. */
static int dot_print(struct vc_cu_session *x, struct vc_cu_graphs *g, void *graph, uint64_t id, uint64_t flags)
{
	char path[64];
	struct stat st;
	ssize_t got;
	int fd, rc;

	free(g->dot);
	g->dot = NULL;
	g->dot_len = g->dot_graph = 0;
	fd = memfd_create("vcuda-dot", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OPERATING_SYSTEM;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = x->drv->cuGraphDebugDotPrint(graph, path, dot_flags(x, flags));
	if (rc == 0 && (fstat(fd, &st) || st.st_size < 0))
		rc = CUDA_ERROR_OPERATING_SYSTEM;
	if (rc == 0 && (uint64_t)st.st_size > DOT_MAX)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == 0 && !(g->dot = malloc((size_t)st.st_size + 1)))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == 0) {
		got = pread(fd, g->dot, (size_t)st.st_size, 0);
		if (got != (ssize_t)st.st_size)
			rc = CUDA_ERROR_OPERATING_SYSTEM;
		g->dot_len = (uint64_t)st.st_size;
		g->dot_graph = id;
	}
	close(fd);
	return rc;
}

int vc_cu_manual_cuGraphDebugDotPrint(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				      struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_rep_graph_call rp = {0};
	struct vc_cu_graphs *g;
	uint64_t n;
	void *graph;
	int rc;

	TAKE(rq);
	if (!out->data)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.a, &graph)))
		return rc;
	if (!(g = vc_cu_graph_state(x)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* The first piece prints; the next ones read what it printed. */
	if (rq.v1 == 0 && (rc = dot_print(x, g, graph, rq.a, rq.v0)))
		return rc;
	if (g->dot_graph != rq.a || rq.v1 > g->dot_len)
		return CUDA_ERROR_INVALID_VALUE;
	n = g->dot_len - rq.v1 < out->data_cap ? g->dot_len - rq.v1 : out->data_cap;
	memcpy(out->data, g->dot + rq.v1, n);
	out->data_len = (uint32_t)n;
	rp.v0 = g->dot_len;
	rp.v1 = rq.v1;
	REPLY(rp);
	return 0;
}

/* ---- capture into an existing graph ------------------------------------------------------ */

/* @n node ids and edge data after the request (@p, @len) to @deps and @ed. */
static int capture_deps(struct vc_cu_session *x, const uint8_t *p, uint32_t len, uint64_t n, CUgraphNode *deps,
			CUgraphEdgeData *ed)
{
	if (n > VC_CU_CAPTURE_DEPS_MAX || n * 16 > len)
		return -VC_FATAL_PAYLOAD;
	memcpy(ed, p + n * 8, n * sizeof(*ed));
	return vc_cu_graph_lookup_nodes(x, p, (uint32_t)n, deps);
}

int vc_cu_manual_cuStreamBeginCaptureToGraph(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					     struct vc_cu_out *out)
{
	CUgraphNode deps[VC_CU_CAPTURE_DEPS_MAX];
	CUgraphEdgeData ed[VC_CU_CAPTURE_DEPS_MAX];
	struct vc_cu_req_graph_call rq;
	void *stream, *graph;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = capture_deps(x, p + sizeof(rq), len - (uint32_t)sizeof(rq), rq.v1, deps, ed)))
		return rc;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.a, &stream)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUGRAPH, rq.b, &graph)))
		return rc;
	return x->drv->cuStreamBeginCaptureToGraph(stream, graph, rq.v1 ? deps : NULL, rq.v1 ? ed : NULL, rq.v1,
						   (CUstreamCaptureMode)rq.v0);
}

int vc_cu_manual_cuStreamUpdateCaptureDependencies_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						      struct vc_cu_out *out)
{
	CUgraphNode deps[VC_CU_CAPTURE_DEPS_MAX];
	CUgraphEdgeData ed[VC_CU_CAPTURE_DEPS_MAX];
	struct vc_cu_req_graph_call rq;
	void *stream;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = capture_deps(x, p + sizeof(rq), len - (uint32_t)sizeof(rq), rq.v1, deps, ed)))
		return rc;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.a, &stream)))
		return rc;
	if (rq.v0 > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	return x->drv->cuStreamUpdateCaptureDependencies_v2(stream, rq.v1 ? deps : NULL, rq.v1 ? ed : NULL, rq.v1,
							    (unsigned)rq.v0);
}

