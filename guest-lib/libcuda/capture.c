/* SPDX-License-Identifier: MIT */
/*
 * capture.c - cuStreamGetCaptureInfo, and capture modes (below). The host
 * answers a query with the status, the graph's id and the dependency nodes;
 * the arrays handed to the caller are
 * the calling thread's, valid until its next query (natively they are valid
 * until the next call that changes the stream's capture).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "fastpath.h"
#include "stats.h"
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

	*lossy = 0;
	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	if (vc_cu_fast_not_capturing(hStream)) {
		/* No capture is active: the host would answer NONE, and the
		 * other outputs as it answers them then (valid only for ACTIVE). */
		VC_STATS_LOCAL(VC_STAT_STREAM_CAPTURE_INFO);
		memset(&rp, 0, sizeof(rp));
		goto answer;
	}
	rc = vc_cu_call_sized(VC_CU_cuStreamGetCaptureInfo_v3, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), d,
			      sizeof(d), &got, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (rp.ndeps > VC_CU_CAPTURE_DEPS_MAX || got != rp.ndeps * sizeof(d[0]))
		return CUDA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < rp.ndeps; i++) {
		t_deps[i] = (CUgraphNode)(uintptr_t)d[i].node;
		memcpy(&t_edges[i], d[i].edge, sizeof(t_edges[i]));
		*lossy |= memcmp(d[i].edge, zero, sizeof(zero)) != 0;
	}
answer:
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

/*
 * Capture modes (cuThreadExchangeStreamCaptureMode). On the host, every
 * guest thread's calls run on the session's one serving thread (and its
 * synchronisation helper), so the driver's per-thread rule cannot see guest
 * threads: the host runs them in relaxed mode, and the guest applies CUDA's
 * rule here. A thread may not make a potentially unsafe call (allocation,
 * freeing, synchronisation: vc_cu_capture_unsafe()) when its mode is not
 * relaxed and either it began a capture that is not relaxed, or its mode is
 * global and some capture begun in global mode is active. The call then
 * answers CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and the offending captures
 * are invalidated: their end answers CUDA_ERROR_STREAM_CAPTURE_INVALIDATED.
 */
#define VC_CAPTURES_MAX 256

struct vc_capture {
	uint64_t stream; /* the stream's id; 0: free entry */
	pthread_t owner;
	int mode;
	int invalid;
};

static __thread int t_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static pthread_mutex_t g_cap_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vc_capture g_caps[VC_CAPTURES_MAX];
static atomic_int g_ncaps; /* active captures: the fast path reads only this */

CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	int old;

	/* Any value is taken, as natively (measured: 7 answers success). */
	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	old = t_mode;
	t_mode = (int)*mode;
	*mode = (CUstreamCaptureMode)old;
	return CUDA_SUCCESS;
}

CUresult vc_cu_capture_unsafe(void)
{
	CUresult rc = CUDA_SUCCESS;
	pthread_t self;

	if (!atomic_load_explicit(&g_ncaps, memory_order_relaxed) || t_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_SUCCESS;
	self = pthread_self();
	pthread_mutex_lock(&g_cap_mu);
	for (int i = 0; i < VC_CAPTURES_MAX; i++) {
		struct vc_capture *c = &g_caps[i];
		int own = pthread_equal(c->owner, self);

		if (!c->stream || c->mode == CU_STREAM_CAPTURE_MODE_RELAXED)
			continue;
		if (own || (t_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
			c->invalid = 1;
			rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
	}
	pthread_mutex_unlock(&g_cap_mu);
	return rc;
}

int vc_cu_capture_active(CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	if (!vc_cu_fast_captures_maybe())
		return 0; /* no capture begun: nothing to ask */
	return cuStreamIsCapturing(s, &st) == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

CUresult vc_gen_cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode);
CUresult vc_gen_cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	uint64_t id = vc_cu_stream_id(hStream);
	CUresult rc = vc_gen_cuStreamBeginCapture_v2(hStream, mode);
	int i;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g_cap_mu);
	for (i = 0; i < VC_CAPTURES_MAX && g_caps[i].stream; i++)
		;
	if (i < VC_CAPTURES_MAX) {
		g_caps[i] = (struct vc_capture){.stream = id ? id : UINT64_MAX, .owner = pthread_self(),
						.mode = (int)mode};
		atomic_fetch_add_explicit(&g_ncaps, 1, memory_order_relaxed);
	}
	/* Past VC_CAPTURES_MAX concurrent captures the rule is not applied to
	 * the newest: the host, in relaxed mode, lets its unsafe calls through. */
	pthread_mutex_unlock(&g_cap_mu);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	uint64_t id = vc_cu_stream_id(hStream);
	int invalid = 0;
	CUresult rc;

	id = id ? id : UINT64_MAX;
	rc = vc_gen_cuStreamEndCapture(hStream, phGraph);
	if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
		return rc; /* not capturing, or captured by another thread: still active */
	pthread_mutex_lock(&g_cap_mu);
	for (int i = 0; i < VC_CAPTURES_MAX; i++) {
		if (g_caps[i].stream == id) {
			invalid = g_caps[i].invalid;
			g_caps[i].stream = 0;
			atomic_fetch_sub_explicit(&g_ncaps, 1, memory_order_relaxed);
			break;
		}
	}
	pthread_mutex_unlock(&g_cap_mu);
	if (rc == CUDA_SUCCESS && invalid) {
		/* As natively: an invalidated capture hands back no graph. */
		cuGraphDestroy(*phGraph);
		*phGraph = NULL;
		rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	}
	return rc;
}
