/* SPDX-License-Identifier: MIT */
/*
 * graph.c - the CI stand-in's graphs, and stream capture (never on here).
 */
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"

/* Streams never capture here: every valid stream answers "not capturing". */
static CUresult s_capture_info(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
			       const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *n)
{
	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	*st = CU_STREAM_CAPTURE_STATUS_NONE;
	if (id)
		*id = 0;
	if (g)
		*g = NULL;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (n)
		*n = 0;
	return CUDA_SUCCESS;
}

static CUresult s_is_capturing(CUstream s, CUstreamCaptureStatus *st)
{
	return s_capture_info(s, st, NULL, NULL, NULL, NULL, NULL);
}

/* ---- graphs: built and run here; kernels are counted, copies are made ------------------ */

static CUresult graph_add(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n, CUgraphNodeType type,
			  struct obj **node)
{
	struct obj *gr = (struct obj *)g, **nn;

	if (!vc_si_is(g, T_GRAPH) || gr->dead)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!out || (n && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++)
		if (!vc_si_is(deps[i], T_NODE) || ((struct obj *)deps[i])->graph != gr)
			return CUDA_ERROR_INVALID_VALUE;
	nn = realloc(gr->nodes, (gr->nnodes + 1) * sizeof(*nn));
	if (!nn)
		return CUDA_ERROR_OUT_OF_MEMORY;
	gr->nodes = nn;
	if (vc_si_make(T_NODE, (void **)node))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!((*node)->node = calloc(1, sizeof(*(*node)->node)))) {
		vc_si_del_obj(*node);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	(*node)->node->type = type;
	(*node)->graph = gr;
	gr->nodes[gr->nnodes++] = *node;
	*out = (CUgraphNode)*node;
	return CUDA_SUCCESS;
}

static CUresult s_graph_create(CUgraph *g, unsigned flags)
{
	if (!g || flags)
		return CUDA_ERROR_INVALID_VALUE;
	return vc_si_make(T_GRAPH, (void **)g);
}

static CUresult s_graph_destroy(CUgraph g)
{
	struct obj *gr = (struct obj *)g;

	if (!vc_si_is(g, T_GRAPH) || gr->dead)
		return CUDA_ERROR_INVALID_HANDLE;
	/* Executable graphs outlive their graph, as natively. */
	if (gr->refs)
		gr->dead = 1;
	else
		vc_si_del_obj(g);
	return CUDA_SUCCESS;
}

static CUresult s_graph_nodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
	struct obj *gr = (struct obj *)g;

	if (!vc_si_is(g, T_GRAPH))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodes) {
		for (size_t i = 0; i < *n; i++)
			nodes[i] = i < gr->nnodes ? (CUgraphNode)gr->nodes[i] : NULL;
		*n = *n < gr->nnodes ? *n : gr->nnodes;
	} else {
		*n = gr->nnodes;
	}
	return CUDA_SUCCESS;
}

static CUresult s_node_type(CUgraphNode n, CUgraphNodeType *t)
{
	if (!vc_si_is(n, T_NODE))
		return CUDA_ERROR_INVALID_HANDLE;
	*t = ((struct obj *)n)->node->type;
	return CUDA_SUCCESS;
}

/* Node parameters @p kept in @o, with the packed parameters (extra form only:
 * vcuda always hands them over packed). */
static CUresult kernel_set(struct snode *o, const CUDA_KERNEL_NODE_PARAMS *p)
{
	const void *src = NULL;
	size_t n = 0;

	if (!p || (!vc_si_is(p->func, T_FUNC) && !vc_si_is(p->func, T_KERN) && !vc_si_is(p->kern, T_KERN)) || !p->gridDimX ||
	    !p->blockDimX || p->kernelParams)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; p->extra && p->extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (p->extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			src = p->extra[i + 1];
		else if (p->extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			n = *(const size_t *)p->extra[i + 1];
	}
	if (n > sizeof(o->params) || (n && !src))
		return CUDA_ERROR_INVALID_VALUE;
	o->kp = *p;
	o->kp.kernelParams = NULL;
	o->kp.extra = NULL;
	if (n)
		memcpy(o->params, src, n);
	o->psize = n;
	return CUDA_SUCCESS;
}

static CUresult s_add_kernel(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
			     const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct obj *node;
	CUresult rc = graph_add(out, g, deps, n, CU_GRAPH_NODE_TYPE_KERNEL, &node);

	if (rc)
		return rc;
	if ((rc = kernel_set(node->node, p))) {
		/* Refused parameters add no node. */
		((struct obj *)g)->nnodes--;
		vc_si_del_obj(node);
	}
	return rc;
}

static CUresult s_kernel_set(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!vc_si_is(n, T_NODE) || ((struct obj *)n)->node->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	return kernel_set(((struct obj *)n)->node, p);
}

static CUresult s_kernel_get(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p)
{
	struct snode *o;
	static __thread void *extra[5];
	static __thread size_t size;

	if (!vc_si_is(n, T_NODE) || ((struct obj *)n)->node->type != CU_GRAPH_NODE_TYPE_KERNEL || !p)
		return CUDA_ERROR_INVALID_VALUE;
	o = ((struct obj *)n)->node;
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

static CUresult s_exec_kernel_set(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!vc_si_is(e, T_EXEC) || !vc_si_is(n, T_NODE) || ((struct obj *)n)->graph != ((struct obj *)e)->graph)
		return CUDA_ERROR_INVALID_VALUE;
	/* The executable graph runs the node's kept parameters: updating
	 * them is what the test double can show. */
	return s_kernel_set(n, p);
}

static CUresult s_add_memcpy(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
			     const CUDA_MEMCPY3D *c, CUcontext ctx)
{
	struct obj *node;
	CUresult rc;

	(void)ctx;
	if (!c || c->Height != 1 || c->Depth != 1 || c->srcXInBytes || c->dstXInBytes || c->srcY || c->dstY ||
	    c->srcZ || c->dstZ)
		return CUDA_ERROR_NOT_SUPPORTED; /* the stand-in copies 1D only */
	if ((rc = graph_add(out, g, deps, n, CU_GRAPH_NODE_TYPE_MEMCPY, &node)))
		return rc;
	node->node->copy = *c;
	return CUDA_SUCCESS;
}

static CUresult s_instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	CUresult rc;

	if (!e || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_is(g, T_GRAPH))
		return CUDA_ERROR_INVALID_HANDLE;
	if (((struct obj *)g)->dead)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!(rc = vc_si_make(T_EXEC, (void **)e))) {
		((struct obj *)*e)->graph = (struct obj *)g;
		((struct obj *)g)->refs++;
	}
	return rc;
}

static CUresult s_exec_destroy(CUgraphExec e)
{
	struct obj *g;

	if (!vc_si_is(e, T_EXEC))
		return CUDA_ERROR_INVALID_HANDLE;
	g = ((struct obj *)e)->graph;
	if (--g->refs == 0 && g->dead)
		vc_si_del_obj(g);
	vc_si_del_obj(e);
	return CUDA_SUCCESS;
}

static CUresult s_graph_launch(CUgraphExec e, CUstream s)
{
	struct obj *g;
	CUresult rc = CUDA_SUCCESS;

	if (!vc_si_is(e, T_EXEC) || !vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	g = ((struct obj *)e)->graph;
	for (size_t i = 0; i < g->nnodes && rc == CUDA_SUCCESS; i++) {
		const struct snode *nd = g->nodes[i]->node;
		const CUDA_MEMCPY3D *c = &nd->copy;

		if (nd->type == CU_GRAPH_NODE_TYPE_KERNEL) {
			pthread_mutex_lock(&g_mu);
			g_launches++;
			pthread_mutex_unlock(&g_mu);
		} else if (nd->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
			if (c->srcMemoryType == CU_MEMORYTYPE_HOST && c->dstMemoryType == CU_MEMORYTYPE_DEVICE)
				rc = vc_si_htod(c->dstDevice, c->srcHost, c->WidthInBytes);
			else if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE && c->dstMemoryType == CU_MEMORYTYPE_HOST)
				rc = vc_si_dtoh(c->dstHost, c->srcDevice, c->WidthInBytes);
			else if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE && c->dstMemoryType == CU_MEMORYTYPE_DEVICE)
				rc = vc_si_dtod(c->dstDevice, c->srcDevice, c->WidthInBytes);
			else
				rc = CUDA_ERROR_NOT_SUPPORTED;
		}
	}
	return rc;
}

void vc_si_fill_graph(struct vc_cuda_driver *d)
{
	d->cuStreamGetCaptureInfo_v3 = s_capture_info;
	d->cuStreamIsCapturing = s_is_capturing;
	d->cuGraphCreate = s_graph_create;
	d->cuGraphDestroy = s_graph_destroy;
	d->cuGraphGetNodes = s_graph_nodes;
	d->cuGraphNodeGetType = s_node_type;
	d->cuGraphAddKernelNode_v2 = s_add_kernel;
	d->cuGraphKernelNodeSetParams_v2 = s_kernel_set;
	d->cuGraphKernelNodeGetParams_v2 = s_kernel_get;
	d->cuGraphExecKernelNodeSetParams_v2 = s_exec_kernel_set;
	d->cuGraphAddMemcpyNode = s_add_memcpy;
	d->cuGraphInstantiateWithFlags = s_instantiate;
	d->cuGraphExecDestroy = s_exec_destroy;
	d->cuGraphLaunch = s_graph_launch;
}
