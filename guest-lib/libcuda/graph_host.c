/* SPDX-License-Identifier: MIT */
/*
 * graph_host.c - what graphs run in the guest: host nodes' functions and
 * user objects' destructors, and the external semaphore nodes no guest can
 * make.
 *
 * A host node's function runs here, in the guest, on the library's callback
 * thread, at every launch: the host node the driver holds calls a function of
 * the server's that queues this pair's cookie and holds the stream until it
 * has run. Pairs are kept for the process's life (a node's parameters live
 * on in clones and executable graphs, which the guest cannot see go). A user
 * object's destructor is kept until the host queues its cookie, when the
 * driver drops the object's last reference (CUDA's semantics: the graphs and
 * executable graphs holding references decide when).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "vc_cu_guest.h"

#define HOST_PAIRS_MAX (1u << 16)
#define UOBJ_MAX (1u << 16)

struct uobj {
	CUhostFn destroy; /* NULL: free slot */
	void *ptr;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vc_cu_host_pair *g_pairs;
static uint32_t g_npairs, g_cappairs;
static struct uobj *g_uobj;
static uint32_t g_nuobj, g_capuobj;

CUresult vc_cu_graph_pair_cookie(CUhostFn fn, void *data, uint64_t *cookie)
{
	CUresult rc = CUDA_SUCCESS;
	uint32_t i;

	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	vc_cu_callbacks_start(); /* the host node will be queued for it */
	pthread_mutex_lock(&g_mu);
	for (i = 0; i < g_npairs; i++)
		if (g_pairs[i].fn == fn && g_pairs[i].data == data)
			break;
	if (i == g_npairs) {
		if (g_npairs == g_cappairs) {
			uint32_t cap = g_cappairs ? g_cappairs * 2 : 64;
			struct vc_cu_host_pair *np = cap <= HOST_PAIRS_MAX ? realloc(g_pairs, cap * sizeof(*np)) : NULL;

			if (!np) {
				rc = CUDA_ERROR_OUT_OF_MEMORY;
				goto out;
			}
			g_pairs = np;
			g_cappairs = cap;
		}
		g_pairs[g_npairs++] = (struct vc_cu_host_pair){fn, data};
	}
	*cookie = VC_CU_COOKIE_GRAPH | i;
out:
	pthread_mutex_unlock(&g_mu);
	return rc;
}

int vc_cu_graph_pair(uint64_t cookie, struct vc_cu_host_pair *out)
{
	uint64_t i = cookie & ~(VC_CU_COOKIE_GRAPH | VC_CU_COOKIE_UOBJ);
	int ok;

	pthread_mutex_lock(&g_mu);
	ok = (cookie & VC_CU_COOKIE_GRAPH) && !(cookie & VC_CU_COOKIE_UOBJ) && i < g_npairs;
	if (ok)
		*out = g_pairs[i];
	pthread_mutex_unlock(&g_mu);
	return ok;
}

/* A user object's destructor, kept until the host says its last reference went. */
static CUresult uobj_keep(void *ptr, CUhostFn destroy, uint64_t *cookie)
{
	CUresult rc = CUDA_SUCCESS;
	uint32_t i;

	pthread_mutex_lock(&g_mu);
	for (i = 0; i < g_nuobj && g_uobj[i].destroy; i++)
		;
	if (i == g_nuobj) {
		if (g_nuobj == g_capuobj) {
			uint32_t cap = g_capuobj ? g_capuobj * 2 : 64;
			struct uobj *nu = cap <= UOBJ_MAX ? realloc(g_uobj, cap * sizeof(*nu)) : NULL;

			if (!nu) {
				rc = CUDA_ERROR_OUT_OF_MEMORY;
				goto out;
			}
			g_uobj = nu;
			g_capuobj = cap;
		}
		g_nuobj++;
	}
	g_uobj[i] = (struct uobj){destroy, ptr};
	*cookie = VC_CU_COOKIE_GRAPH | VC_CU_COOKIE_UOBJ | i;
out:
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static void uobj_drop(uint64_t cookie, struct uobj *out)
{
	uint64_t i = cookie & ~(VC_CU_COOKIE_GRAPH | VC_CU_COOKIE_UOBJ);

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&g_mu);
	if (i < g_nuobj) {
		*out = g_uobj[i];
		g_uobj[i].destroy = NULL;
	}
	pthread_mutex_unlock(&g_mu);
}

void vc_cu_graph_callback(uint64_t cookie)
{
	struct vc_cu_host_pair hp;
	struct uobj u;

	if (cookie & VC_CU_COOKIE_UOBJ) {
		uobj_drop(cookie, &u);
		if (u.destroy)
			u.destroy(u.ptr);
	} else if (vc_cu_graph_pair(cookie, &hp)) {
		hp.fn(hp.data);
	}
}

CUresult CUDAAPI cuUserObjectCreate(CUuserObject *object_out, void *ptr, CUhostFn destroy,
				    unsigned int initialRefcount, unsigned int flags)
{
	struct vc_cu_req_graph_call rq = {.v0 = initialRefcount, .v1 = flags};
	struct vc_cu_rep_graph_call rp;
	struct uobj u;
	CUresult rc;

	if (!object_out || !destroy || !initialRefcount || flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	vc_cu_callbacks_start(); /* the destructor will be queued for it */
	if ((rc = uobj_keep(ptr, destroy, &rq.a)))
		return rc;
	rc = vc_cu_call(VC_CU_cuUserObjectCreate, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc != CUDA_SUCCESS) {
		uobj_drop(rq.a, &u);
		return rc;
	}
	*object_out = (CUuserObject)(uintptr_t)rp.h;
	return CUDA_SUCCESS;
}

/*
 * External semaphores: a guest cannot import one (refused in a VM), so every
 * semaphore handle it could name is invalid, as the driver answers for one.
 */
CUresult CUDAAPI cuGraphAddExternalSemaphoresSignalNode(CUgraphNode *phGraphNode, CUgraph hGraph,
							const CUgraphNode *dependencies, size_t numDependencies,
							const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *nodeParams)
{
	(void)hGraph, (void)dependencies, (void)numDependencies;
	return !phGraphNode || !nodeParams ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuGraphAddExternalSemaphoresWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph,
						      const CUgraphNode *dependencies, size_t numDependencies,
						      const CUDA_EXT_SEM_WAIT_NODE_PARAMS *nodeParams)
{
	(void)hGraph, (void)dependencies, (void)numDependencies;
	return !phGraphNode || !nodeParams ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
}

/* No node of these kinds exists here: the node named is never one. */
CUresult CUDAAPI cuGraphExternalSemaphoresSignalNodeGetParams(CUgraphNode hNode,
							      CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *params_out)
{
	(void)hNode, (void)params_out;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphExternalSemaphoresSignalNodeSetParams(CUgraphNode hNode,
							      const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *nodeParams)
{
	(void)hNode, (void)nodeParams;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphExternalSemaphoresWaitNodeGetParams(CUgraphNode hNode, CUDA_EXT_SEM_WAIT_NODE_PARAMS *params_out)
{
	(void)hNode, (void)params_out;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphExternalSemaphoresWaitNodeSetParams(CUgraphNode hNode,
							    const CUDA_EXT_SEM_WAIT_NODE_PARAMS *nodeParams)
{
	(void)hNode, (void)nodeParams;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphExecExternalSemaphoresSignalNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
								  const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *nodeParams)
{
	(void)hGraphExec, (void)hNode, (void)nodeParams;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphExecExternalSemaphoresWaitNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
								const CUDA_EXT_SEM_WAIT_NODE_PARAMS *nodeParams)
{
	(void)hGraphExec, (void)hNode, (void)nodeParams;
	return CUDA_ERROR_INVALID_VALUE;
}
