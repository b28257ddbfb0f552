/* SPDX-License-Identifier: MIT */
/*
 * graph_topo.c - a graph's shape and its executable graphs: edges, root
 * nodes, dependencies and dependents (a page of ids per round trip),
 * dependencies added and removed, nodes destroyed and found in clones, child
 * graphs, kernel node attributes, instantiation in every form, executable
 * graph updates (the nodes they name are ids), the dot print (the host's
 * text, written here to the path the caller gave), graph memory attributes,
 * and capture into an existing graph.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "vc_cu_guest.h"

int vc_cu_graph_edges_plain(const CUgraphEdgeData *edges, size_t n)
{
	static const uint8_t zero[sizeof(CUgraphEdgeData)];

	for (size_t i = 0; edges && i < n; i++)
		if (memcmp(&edges[i], zero, sizeof(zero)))
			return 0;
	return 1;
}

/* ---- lists ------------------------------------------------------------------------------ */

/*
 * @what of @handle: up to *@num entries into @from/@to/@ed (each may be NULL),
 * as the driver fills its arrays: with arrays, the rest NULL and *@num what
 * there were; without, *@num the total.
 */
static CUresult edge_list(uint32_t what, uint64_t handle, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *ed,
			  size_t *num)
{
	struct vc_cu_req_graph_edges rq = {.handle = handle, .what = what, .want_edges = ed != NULL};
	struct vc_cu_rep_list rp = {0};
	struct vc_cu_graph_edge *page;
	uint64_t want, done = 0;
	size_t got;
	CUresult rc = CUDA_SUCCESS;

	if (!num || (ed && !to))
		return CUDA_ERROR_INVALID_VALUE;
	want = to ? *num : 0;
	if (!(page = malloc(VC_CU_GE_PAGE * sizeof(*page))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	do {
		if (done > UINT32_MAX) {
			rc = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		rq.first = (uint32_t)done;
		rq.count = want - done < VC_CU_GE_PAGE ? (uint32_t)(want - done) : VC_CU_GE_PAGE;
		rc = vc_cu_call_sized(VC_CU_vcGraphEdges, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), page,
				      VC_CU_GE_PAGE * sizeof(*page), &got, 0);
		if (rc != CUDA_SUCCESS)
			break;
		if (rp.returned > rq.count || got != rp.returned * sizeof(*page)) {
			rc = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		for (uint32_t i = 0; i < rp.returned; i++, done++) {
			if (from)
				from[done] = (CUgraphNode)(uintptr_t)page[i].from;
			to[done] = (CUgraphNode)(uintptr_t)page[i].to;
			if (ed)
				memcpy(&ed[done], page[i].edge, sizeof(ed[done]));
		}
	} while (rp.returned && done < want && done < rp.total);
	free(page);
	if (rc != CUDA_SUCCESS)
		return rc;
	for (uint64_t i = done; i < want; i++) {
		if (from)
			from[i] = NULL;
		to[i] = NULL;
		if (ed)
			memset(&ed[i], 0, sizeof(ed[i]));
	}
	*num = to ? (size_t)(rp.total < want ? rp.total : want) : (size_t)rp.total;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edgeData,
				    size_t *numEdges)
{
	if (!from != !to)
		return CUDA_ERROR_INVALID_VALUE;
	return edge_list(VC_CU_GE_EDGES, VC_GID(hGraph), from, to, edgeData, numEdges);
}

CUresult CUDAAPI cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges)
{
	return cuGraphGetEdges_v2(hGraph, from, to, NULL, numEdges);
}

CUresult CUDAAPI cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes)
{
	return edge_list(VC_CU_GE_ROOTS, VC_GID(hGraph), NULL, rootNodes, NULL, numRootNodes);
}

CUresult CUDAAPI cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies,
					       CUgraphEdgeData *edgeData, size_t *numDependencies)
{
	return edge_list(VC_CU_GE_DEPS, VC_GID(hNode), NULL, dependencies, edgeData, numDependencies);
}

CUresult CUDAAPI cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *dependencies, size_t *numDependencies)
{
	return cuGraphNodeGetDependencies_v2(hNode, dependencies, NULL, numDependencies);
}

CUresult CUDAAPI cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode *dependentNodes,
						 CUgraphEdgeData *edgeData, size_t *numDependentNodes)
{
	return edge_list(VC_CU_GE_DEPENDENTS, VC_GID(hNode), NULL, dependentNodes, edgeData, numDependentNodes);
}

CUresult CUDAAPI cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode *dependentNodes,
					      size_t *numDependentNodes)
{
	return cuGraphNodeGetDependentNodes_v2(hNode, dependentNodes, NULL, numDependentNodes);
}

/* ---- dependencies ------------------------------------------------------------------------- */

static CUresult deps_call(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *ed,
			  size_t n, uint32_t remove)
{
	struct vc_cu_req_graph_deps rq = {.graph = VC_GID(g), .n = (uint32_t)n, .remove = remove,
					  .has_edges = ed != NULL};
	uint8_t *data;
	CUresult rc;

	if (n && (!from || !to))
		return CUDA_ERROR_INVALID_VALUE;
	if (n > VC_CU_GD_MAX)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!(data = malloc(n * 24 + 1)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < n; i++) {
		uint64_t f = VC_GID(from[i]), t = VC_GID(to[i]);

		memcpy(data + i * 8, &f, 8);
		memcpy(data + (n + i) * 8, &t, 8);
		if (ed)
			memcpy(data + (2 * n + i) * 8, &ed[i], 8);
	}
	rc = vc_cu_call(VC_CU_vcGraphDeps, &rq, sizeof(rq), data, n * (ed ? 24 : 16), NULL, 0, NULL, 0, 0);
	free(data);
	return rc;
}

CUresult CUDAAPI cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
					   const CUgraphEdgeData *edgeData, size_t numDependencies)
{
	return deps_call(hGraph, from, to, edgeData, numDependencies, 0);
}

CUresult CUDAAPI cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
					size_t numDependencies)
{
	return deps_call(hGraph, from, to, NULL, numDependencies, 0);
}

CUresult CUDAAPI cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
					      const CUgraphEdgeData *edgeData, size_t numDependencies)
{
	return deps_call(hGraph, from, to, edgeData, numDependencies, 1);
}

CUresult CUDAAPI cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
					   size_t numDependencies)
{
	return deps_call(hGraph, from, to, NULL, numDependencies, 1);
}

CUresult vc_cu_graph_add_edges(CUgraph g, CUgraphNode node, const CUgraphNode *deps, const CUgraphEdgeData *edges,
			       size_t n)
{
	CUgraphNode *to;
	CUresult rc;

	if (n > VC_CU_GD_MAX)
		rc = CUDA_ERROR_NOT_SUPPORTED;
	else if (!(to = malloc(n * sizeof(*to) + 1)))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	else {
		for (size_t i = 0; i < n; i++)
			to[i] = node;
		rc = deps_call(g, deps, to, edges, n, 0);
		free(to);
	}
	if (rc != CUDA_SUCCESS)
		cuGraphDestroyNode(node);
	return rc;
}

/* ---- calls on a few handles ------------------------------------------------------------------- */

static CUresult gcall(uint32_t op, struct vc_cu_req_graph_call *rq, const void *data, size_t dlen,
		      struct vc_cu_rep_graph_call *rp)
{
	memset(rp, 0, sizeof(*rp));
	return vc_cu_call(op, rq, sizeof(*rq), data, dlen, rp, sizeof(*rp), NULL, 0, 0);
}

CUresult CUDAAPI cuGraphDestroyNode(CUgraphNode hNode)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hNode)};
	struct vc_cu_rep_graph_call rp;

	return gcall(VC_CU_cuGraphDestroyNode, &rq, NULL, 0, &rp);
}

CUresult CUDAAPI cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hGraphExec), .b = VC_GID(hNode), .v0 = isEnabled};
	struct vc_cu_rep_graph_call rp;

	return gcall(VC_CU_cuGraphNodeSetEnabled, &rq, NULL, 0, &rp);
}

CUresult CUDAAPI cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hOriginalNode), .b = VC_GID(hClonedGraph)};
	struct vc_cu_rep_graph_call rp;
	CUresult rc;

	if (!phNode)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = gcall(VC_CU_cuGraphNodeFindInClone, &rq, NULL, 0, &rp)) == CUDA_SUCCESS)
		*phNode = (CUgraphNode)(uintptr_t)rp.h;
	return rc;
}

CUresult CUDAAPI cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hNode)};
	struct vc_cu_rep_graph_call rp;
	CUresult rc;

	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = gcall(VC_CU_cuGraphChildGraphNodeGetGraph, &rq, NULL, 0, &rp)) == CUDA_SUCCESS)
		*phGraph = (CUgraph)(uintptr_t)rp.h;
	return rc;
}

CUresult CUDAAPI cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
					       CUkernelNodeAttrValue *value_out)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hNode), .v0 = (uint64_t)attr};
	struct vc_cu_rep_graph_call rp;
	CUresult rc;

	if (!value_out)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = gcall(VC_CU_cuGraphKernelNodeGetAttribute, &rq, NULL, 0, &rp)) == CUDA_SUCCESS)
		memcpy(value_out, rp.value, sizeof(*value_out));
	return rc;
}

CUresult CUDAAPI cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
					       const CUkernelNodeAttrValue *value)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hNode), .v0 = (uint64_t)attr};
	struct vc_cu_rep_graph_call rp;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(rq.value, value, sizeof(*value));
	return gcall(VC_CU_cuGraphKernelNodeSetAttribute, &rq, NULL, 0, &rp);
}

static CUresult graph_mem_attr(uint32_t op, CUdevice device, CUgraphMem_attribute attr, void *value)
{
	struct vc_cu_req_graph_call rq = {.v0 = (uint64_t)(int64_t)device, .v1 = (uint64_t)attr};
	struct vc_cu_rep_graph_call rp;
	CUresult rc;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	/* Every graph memory attribute is a cuuint64_t. */
	memcpy(rq.value, value, sizeof(cuuint64_t));
	if ((rc = gcall(op, &rq, NULL, 0, &rp)) == CUDA_SUCCESS && op == VC_CU_cuDeviceGetGraphMemAttribute)
		memcpy(value, rp.value, sizeof(cuuint64_t));
	return rc;
}

CUresult CUDAAPI cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
	return graph_mem_attr(VC_CU_cuDeviceGetGraphMemAttribute, device, attr, value);
}

CUresult CUDAAPI cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
	return graph_mem_attr(VC_CU_cuDeviceSetGraphMemAttribute, device, attr, value);
}

/* ---- executable graphs ------------------------------------------------------------------------- */

CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
					      CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hGraph)};
	struct vc_cu_rep_graph_call rp;
	CUresult rc;

	if (!phGraphExec || !p)
		return CUDA_ERROR_INVALID_VALUE;
	rq.b = vc_cu_stream_id(p->hUploadStream);
	if (!p->hUploadStream)
		rq.b = 0;
	rq.v0 = p->flags;
	if ((rc = gcall(VC_CU_cuGraphInstantiateWithParams, &rq, NULL, 0, &rp)))
		return rc;
	/* The result and the node at fault come back on failure too. */
	rc = (CUresult)rp.v1;
	p->result_out = (CUgraphInstantiateResult)rp.v0;
	p->hErrNode_out = (CUgraphNode)(uintptr_t)rp.h2;
	if (rc == CUDA_SUCCESS)
		*phGraphExec = (CUgraphExec)(uintptr_t)rp.h;
	return rc;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
	CUDA_GRAPH_INSTANTIATE_PARAMS p = {.flags = flags};

	/* Upload at instantiation is asked for with WithParams only. */
	if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)
		return CUDA_ERROR_INVALID_VALUE;
	return cuGraphInstantiateWithParams(phGraphExec, hGraph, &p);
}

CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
				       char *logBuffer, size_t bufferSize)
{
	CUDA_GRAPH_INSTANTIATE_PARAMS p = {0};
	CUresult rc = cuGraphInstantiateWithParams(phGraphExec, hGraph, &p);

	if (phErrorNode)
		*phErrorNode = p.hErrNode_out;
	/* The driver's log text stays on the host: the buffer holds an empty string. */
	if (logBuffer && bufferSize)
		logBuffer[0] = 0;
	return rc;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hGraphExec)};
	struct vc_cu_rep_graph_call rp;

	return gcall(VC_CU_cuGraphExecDestroy, &rq, NULL, 0, &rp);
}

CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *info)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hGraphExec), .b = VC_GID(hGraph)};
	struct vc_cu_rep_graph_call rp;
	CUresult rc;

	if (!info)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = gcall(VC_CU_cuGraphExecUpdate_v2, &rq, NULL, 0, &rp)))
		return rc;
	rc = (CUresult)rp.v1;
	if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
		info->result = (CUgraphExecUpdateResult)rp.v0;
		info->errorNode = (CUgraphNode)(uintptr_t)rp.h;
		info->errorFromNode = (CUgraphNode)(uintptr_t)rp.h2;
	}
	return rc;
}

CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
				   CUgraphExecUpdateResult *updateResult_out)
{
	CUgraphExecUpdateResultInfo info = {0};
	CUresult rc;

	if (!hErrorNode_out || !updateResult_out)
		return CUDA_ERROR_INVALID_VALUE;
	rc = cuGraphExecUpdate_v2(hGraphExec, hGraph, &info);
	*hErrorNode_out = info.errorNode;
	*updateResult_out = info.result;
	return rc;
}

/*
 * The dot print: the host prints into a file of its own and hands the text
 * back in pieces; it is written here, to the caller's path, as the driver
 * would have written it.
 */
CUresult CUDAAPI cuGraphDebugDotPrint(CUgraph hGraph, const char *path, unsigned int flags)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hGraph), .v0 = flags};
	struct vc_cu_rep_graph_call rp;
	size_t got, cap = VC_DEFAULT_SLOT_SIZE_MIN_DATA;
	uint8_t *buf;
	CUresult rc;
	FILE *f;

	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(buf = malloc(cap)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	f = NULL;
	do {
		memset(&rp, 0, sizeof(rp));
		rc = vc_cu_call_sized(VC_CU_cuGraphDebugDotPrint, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), buf, cap,
				      &got, 0);
		if (rc != CUDA_SUCCESS)
			break;
		if (!f && !(f = fopen(path, "w"))) {
			rc = CUDA_ERROR_OPERATING_SYSTEM;
			break;
		}
		if (rp.v1 != rq.v1 || (got && fwrite(buf, 1, got, f) != got)) {
			rc = got ? CUDA_ERROR_OPERATING_SYSTEM : CUDA_ERROR_INVALID_VALUE;
			break;
		}
		rq.v1 += got;
	} while (got && rq.v1 < rp.v0);
	if (f && fclose(f) && rc == CUDA_SUCCESS)
		rc = CUDA_ERROR_OPERATING_SYSTEM;
	free(buf);
	return rc;
}

/* ---- capture ---------------------------------------------------------------------------------- */

/* cuStreamBeginCapture and cuStreamGetCaptureInfo (the first versions) are in legacy.c. */

/* Node ids @deps and edge data @ed (@n; NULL: none) after a request. */
static uint8_t *id_block(const CUgraphNode *deps, const CUgraphEdgeData *ed, size_t n, size_t *len)
{
	uint8_t *data = malloc(n * 16 + 1);

	if (!data)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint64_t id = VC_GID(deps[i]);

		memcpy(data + i * 8, &id, 8);
		if (ed)
			memcpy(data + (n + i) * 8, &ed[i], 8);
		else
			memset(data + (n + i) * 8, 0, 8);
	}
	*len = n * 16;
	return data;
}

/* A capture call @op with @n dependencies (and their edge data): checked,
 * then sent as an id block after @rq. */
static CUresult capture_deps_call(uint32_t op, struct vc_cu_req_graph_call *rq, const CUgraphNode *deps,
				  const CUgraphEdgeData *edges, size_t n)
{
	struct vc_cu_rep_graph_call rp;
	uint8_t *data;
	size_t len;
	CUresult rc;

	if (n && !deps)
		return CUDA_ERROR_INVALID_VALUE;
	if (n > VC_CU_CAPTURE_DEPS_MAX)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!(data = id_block(deps, edges, n, &len)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = gcall(op, rq, data, len, &rp);
	free(data);
	return rc;
}

CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
					     const CUgraphEdgeData *dependencyData, size_t numDependencies,
					     CUstreamCaptureMode mode)
{
	struct vc_cu_req_graph_call rq = {.a = vc_cu_stream_id(hStream), .b = VC_GID(hGraph), .v0 = (uint64_t)mode,
					  .v1 = numDependencies};

	return capture_deps_call(VC_CU_cuStreamBeginCaptureToGraph, &rq, dependencies, dependencyData, numDependencies);
}

CUresult CUDAAPI cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode *dependencies,
						      const CUgraphEdgeData *dependencyData, size_t numDependencies,
						      unsigned int flags)
{
	struct vc_cu_req_graph_call rq = {.a = vc_cu_stream_id(hStream), .v0 = flags, .v1 = numDependencies};

	return capture_deps_call(VC_CU_cuStreamUpdateCaptureDependencies_v2, &rq, dependencies, dependencyData,
				 numDependencies);
}

CUresult CUDAAPI cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode *dependencies,
						   size_t numDependencies, unsigned int flags)
{
	return cuStreamUpdateCaptureDependencies_v2(hStream, dependencies, NULL, numDependencies, flags);
}

CUresult CUDAAPI cuGraphConditionalHandleCreate(CUgraphConditionalHandle *pHandle_out, CUgraph hGraph, CUcontext ctx,
						unsigned int defaultLaunchValue, unsigned int flags)
{
	struct vc_cu_req_graph_call rq = {.a = VC_GID(hGraph), .b = VC_GID(ctx), .v0 = defaultLaunchValue,
					  .v1 = flags};
	struct vc_cu_rep_graph_call rp;
	CUresult rc;

	if (!pHandle_out)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = gcall(VC_CU_cuGraphConditionalHandleCreate, &rq, NULL, 0, &rp)) == CUDA_SUCCESS)
		*pHandle_out = rp.v0;
	return rc;
}
