/* SPDX-License-Identifier: MIT */
/*
 * capture.c - cuStreamGetCaptureInfo. The host answers with the status, the
 * graph's id and the dependency nodes; the arrays handed to the caller are
 * the calling thread's, valid until its next query (natively they are valid
 * until the next call that changes the stream's capture).
 */
#include <string.h>

#include "vc_cuda_manual.h"
#include "vc_cu_guest.h"

static __thread CUgraphNode t_deps[VC_CU_CAPTURE_DEPS_MAX];
static __thread CUgraphEdgeData t_edges[VC_CU_CAPTURE_DEPS_MAX];

/* Ask the host; *@lossy: some dependency has edge data (_v2 cannot say it). */
static CUresult capture_info(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
			     const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps, int *lossy)
{
	struct vc_cu_req_capture_info rq = {.stream = vc_cu_stream_id(hStream), .want_graph = graph != NULL,
					    .want_deps = deps != NULL || ndeps != NULL};
	struct vc_cu_capture_dep d[VC_CU_CAPTURE_DEPS_MAX];
	struct vc_cu_rep_capture_info rp;
	static const uint8_t zero[8];
	size_t got = 0;
	CUresult rc;

	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call_sized(VC_CU_cuStreamGetCaptureInfo_v3, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), d,
			      sizeof(d), &got, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (rp.ndeps > VC_CU_CAPTURE_DEPS_MAX || got != rp.ndeps * sizeof(d[0]))
		return CUDA_ERROR_INVALID_VALUE;
	*lossy = 0;
	for (uint32_t i = 0; i < rp.ndeps; i++) {
		t_deps[i] = (CUgraphNode)(uintptr_t)d[i].node;
		memcpy(&t_edges[i], d[i].edge, sizeof(t_edges[i]));
		*lossy |= memcmp(d[i].edge, zero, sizeof(zero)) != 0;
	}
	*status = (CUstreamCaptureStatus)rp.status;
	if (id)
		*id = rp.id;
	if (graph)
		*graph = (CUgraph)(uintptr_t)rp.graph;
	if (deps)
		*deps = rp.ndeps ? t_deps : NULL;
	if (edges)
		*edges = rp.ndeps ? t_edges : NULL;
	if (ndeps)
		*ndeps = rp.ndeps;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
					   cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out,
					   const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	int lossy;

	return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
			    numDependencies_out, &lossy);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
					   cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out,
					   size_t *numDependencies_out)
{
	int lossy = 0;
	CUresult rc = capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
				   numDependencies_out, &lossy);

	/* As natively: _v2 cannot return edge data, so it refuses to drop it. */
	return rc == CUDA_SUCCESS && lossy ? CUDA_ERROR_LOSSY_QUERY : rc;
}
