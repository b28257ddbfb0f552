/* SPDX-License-Identifier: MIT */
/*
 * graph_get.c - the CI stand-in's graph nodes read back, kind by kind (and
 * the event nodes' own setters).
 */
#include <string.h>

#include "standin/standin_priv.h"

/* The node @n if it is of @type, else NULL. */
static struct snode *typed(CUgraphNode n, CUgraphNodeType type)
{
	struct snode *o = vc_si_is(n, T_NODE) ? ((struct obj *)n)->node : NULL;

	return o && o->type == type ? o : NULL;
}

static CUresult s_kernel_get(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_KERNEL);
	static __thread void *extra[5];
	static __thread size_t size;

	if (!o || !p)
		return CUDA_ERROR_INVALID_VALUE;
	*p = o->kp;
	size = o->psize;
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = o->params;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = &size;
	extra[4] = CU_LAUNCH_PARAM_END;
	p->extra = extra;
	return CUDA_SUCCESS;
}

static CUresult s_memcpy_get(CUgraphNode n, CUDA_MEMCPY3D *p)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_MEMCPY);

	if (!o || !p)
		return CUDA_ERROR_INVALID_VALUE;
	*p = o->copy;
	return CUDA_SUCCESS;
}

static CUresult s_memset_get(CUgraphNode n, CUDA_MEMSET_NODE_PARAMS *p)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_MEMSET);

	if (!o || !p)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(p, &o->mset, sizeof(*p));
	return CUDA_SUCCESS;
}

static CUresult s_host_get(CUgraphNode n, CUDA_HOST_NODE_PARAMS *p)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_HOST);

	if (!o || !p)
		return CUDA_ERROR_INVALID_VALUE;
	*p = o->host;
	return CUDA_SUCCESS;
}

static CUresult s_record_get(CUgraphNode n, CUevent *e)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_EVENT_RECORD);

	if (!o || !e)
		return CUDA_ERROR_INVALID_VALUE;
	*e = o->event;
	return CUDA_SUCCESS;
}

static CUresult s_wait_get(CUgraphNode n, CUevent *e)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_WAIT_EVENT);

	if (!o || !e)
		return CUDA_ERROR_INVALID_VALUE;
	*e = o->event;
	return CUDA_SUCCESS;
}

static CUresult event_set(CUgraphNode n, CUevent e, CUgraphNodeType t)
{
	CUgraphNodeParams np = {.type = t};

	if (!typed(n, t))
		return CUDA_ERROR_INVALID_VALUE;
	np.eventRecord.event = e;
	return vc_si_graph_set((struct obj *)n, &np, 0);
}

static CUresult s_record_set(CUgraphNode n, CUevent e)
{
	return event_set(n, e, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

static CUresult s_wait_set(CUgraphNode n, CUevent e)
{
	return event_set(n, e, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}

static CUresult s_child_get(CUgraphNode n, CUgraph *g)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_GRAPH);

	if (!o || !g)
		return CUDA_ERROR_INVALID_VALUE;
	*g = (CUgraph)o->child;
	return CUDA_SUCCESS;
}

static CUresult s_alloc_get(CUgraphNode n, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_MEM_ALLOC);

	if (!o || !p)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(p, &o->alloc, sizeof(*p));
	return CUDA_SUCCESS;
}

static CUresult s_free_get(CUgraphNode n, CUdeviceptr *d)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_MEM_FREE);

	if (!o || !d)
		return CUDA_ERROR_INVALID_VALUE;
	*d = o->fptr;
	return CUDA_SUCCESS;
}

static CUresult s_batch_get(CUgraphNode n, CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
	struct snode *o = typed(n, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);

	if (!o || !p)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(p, &o->batch, sizeof(*p));
	return CUDA_SUCCESS;
}

void vc_si_fill_graph_get(struct vc_cuda_driver *d)
{
	d->cuGraphKernelNodeGetParams_v2 = s_kernel_get;
	d->cuGraphMemcpyNodeGetParams = s_memcpy_get;
	d->cuGraphMemsetNodeGetParams = s_memset_get;
	d->cuGraphHostNodeGetParams = s_host_get;
	d->cuGraphEventRecordNodeGetEvent = s_record_get;
	d->cuGraphEventWaitNodeGetEvent = s_wait_get;
	d->cuGraphEventRecordNodeSetEvent = s_record_set;
	d->cuGraphEventWaitNodeSetEvent = s_wait_set;
	d->cuGraphChildGraphNodeGetGraph = s_child_get;
	d->cuGraphMemAllocNodeGetParams = s_alloc_get;
	d->cuGraphMemFreeNodeGetParams = s_free_get;
	d->cuGraphBatchMemOpNodeGetParams = s_batch_get;
}
