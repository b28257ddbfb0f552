/* SPDX-License-Identifier: MIT */
/*
 * hostfn.c - host functions in streams (cuLaunchHostFunc, cuStreamAddCallback).
 *
 * The function runs in the guest process, on a callback thread of this
 * library's, after all earlier work in its stream and before any later work:
 * the host enqueues a real host function in the same stream, which queues the
 * guest's cookie in the shared callback queue and holds the stream until the
 * guest reports the function run. The call itself returns at once, as
 * natively. A host function on a capturing stream is recorded as a graph's
 * host node is: the pair (function, data) is kept and named by its cookie
 * at every run of the graph.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"
#include "vc_client.h"
#include "vc_cu_guest.h"
#include "vc_cuda_graph.h"

struct pending {
	uint64_t cookie; /* 0: free */
	CUhostFn fn;
	CUstreamCallback cb;
	CUstream stream;
	void *data;
};

#define TABLE 4096u /* callbacks queued at once, across streams; a power of two */

static struct pending g_tab[TABLE];
static uint64_t g_next = 1;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static __thread int t_callback_thread;

int vc_cu_in_callback(void)
{
	return t_callback_thread;
}

static void *callback_thread(void *unused)
{
	struct vc_cu_state *st = vc_cu_state();
	uint64_t cookie;

	(void)unused;
	t_callback_thread = 1;
	while (st && vc_client_cb_next(st->client, &cookie) == 0) {
		struct pending p = {0};
		struct pending *slot = &g_tab[cookie % TABLE];

		if (cookie & VC_CU_COOKIE_GRAPH) {
			/* a graph's host node or a user object's destructor (graph_nodes.c) */
			vc_cu_graph_callback(cookie);
			vc_client_cb_finish(st->client);
			continue;
		}
		pthread_mutex_lock(&g_mu);
		if (slot->cookie == cookie) {
			p = *slot;
			slot->cookie = 0;
			pthread_cond_broadcast(&g_cv);
		}
		pthread_mutex_unlock(&g_mu);
		if (p.fn)
			p.fn(p.data);
		else if (p.cb)
			p.cb(p.stream, CUDA_SUCCESS, p.data);
		/* An unknown cookie (never ours) is only acknowledged. */
		vc_client_cb_finish(st->client);
	}
	return NULL;
}

static void start_thread(void)
{
	pthread_t th;

	if (pthread_create(&th, NULL, callback_thread, NULL) == 0)
		pthread_detach(th);
	else
		fprintf(stderr, "vcuda: cannot start the host-callback thread\n");
}

void vc_cu_callbacks_start(void)
{
	pthread_once(&g_once, start_thread);
}

static CUresult enqueue(CUstream stream, CUhostFn fn, CUstreamCallback cb, void *data)
{
	struct vc_cu_req_hostfunc rq = {.stream = vc_cu_stream_id(stream)};
	struct pending *slot;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_once(&g_once, start_thread);
	if (fn && vc_cu_capture_active(stream)) {
		/* Recorded into a graph that may run many times: the pair of a
		 * host node, kept (graph_host.c), not a slot freed after one run.
		 * A stream callback stays refused in a capture, as natively. */
		rc = vc_cu_graph_pair_cookie(fn, data, &rq.cookie);
		return rc ? rc : vc_cu_submit(VC_CU_vcHostFunc, &rq, sizeof(rq), NULL, 0);
	}
	pthread_mutex_lock(&g_mu);
	/* Wait for a free slot: TABLE callbacks are already queued. */
	while (g_tab[g_next % TABLE].cookie)
		pthread_cond_wait(&g_cv, &g_mu);
	rq.cookie = g_next++;
	slot = &g_tab[rq.cookie % TABLE];
	*slot = (struct pending){.cookie = rq.cookie, .fn = fn, .cb = cb, .stream = stream, .data = data};
	pthread_mutex_unlock(&g_mu);
	rc = vc_cu_submit(VC_CU_vcHostFunc, &rq, sizeof(rq), NULL, 0);
	if (rc != CUDA_SUCCESS) {
		pthread_mutex_lock(&g_mu);
		slot->cookie = 0;
		pthread_cond_broadcast(&g_cv);
		pthread_mutex_unlock(&g_mu);
	}
	return rc;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	return enqueue(hStream, fn, NULL, userData);
}

CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
				     unsigned int flags)
{
	if (!callback || flags)
		return CUDA_ERROR_INVALID_VALUE;
	return enqueue(hStream, NULL, callback, userData);
}
