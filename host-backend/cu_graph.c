/* SPDX-License-Identifier: MIT */
/*
 * cu_graph.c - stream capture queries. The capture itself happens in the
 * host driver, on the session's real stream: launches, copies and memsets
 * the guest sends to a capturing stream are recorded there as they would be
 * natively. cuStreamGetCaptureInfo answers with ids for the graph and its
 * dependency nodes; the guest keeps the dependency array it hands out.
 */
#include "cu_exec_priv.h"

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
	CUgraph graph = NULL;
	size_t ndeps = 0;
	void *stream;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
		return rc;
	rc = x->drv->cuStreamGetCaptureInfo_v3(stream, &status, &id, rq.want_graph ? &graph : NULL,
					       rq.want_deps ? &deps : NULL, rq.want_deps ? &edges : NULL,
					       rq.want_deps ? &ndeps : NULL);
	if (rc)
		return rc;
	rp.status = (int32_t)status;
	rp.id = id;
	if (graph && (rc = vc_cu_publish(x, VC_H_CUGRAPH, graph, &rp.graph)))
		return rc;
	if (ndeps) {
		if (ndeps > VC_CU_CAPTURE_DEPS_MAX || !deps || !out->data ||
		    out->data_cap < ndeps * sizeof(*d))
			return CUDA_ERROR_NOT_SUPPORTED;
		d = (struct vc_cu_capture_dep *)out->data;
		for (size_t i = 0; i < ndeps; i++) {
			if ((rc = vc_cu_publish(x, VC_H_CUGRAPHNODE, deps[i], &d[i].node)))
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
