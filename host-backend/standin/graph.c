/* SPDX-License-Identifier: MIT */
/*
 * graph.c - the CI stand-in's graphs as they are built: nodes of every kind
 * with their parameters (kernel, memcpy, memset, host, child graph, empty,
 * event record and wait, memory allocation and free, batch memory
 * operations, conditional), edges with their data, clones, and stream
 * capture (never on here). Executable graphs, their launch and update are
 * graph_run.c's.
 */
#include <stddef.h>
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

static int is_graph(const void *g)
{
	return vc_si_is(g, T_GRAPH);
}

static struct snode *node_of(const void *n)
{
	return vc_si_is(n, T_NODE) ? ((struct obj *)n)->node : NULL;
}

static void obj_fini(struct obj *o)
{
	struct snode *s = o->node;

	if (s) {
		free(s->deps);
		free(s->edata);
		free(s->descs);
		free(s->ops);
		free(s->bodies);
		if (s->alloc_owned) {
			pthread_mutex_lock(&g_mu);
			vc_smem_free(&g_mem, s->alloc.dptr);
			pthread_mutex_unlock(&g_mu);
		}
	}
	for (size_t i = 0; i < o->nurefs; i++) {
		struct suobj *u = o->urefs[i].u;

		if (u->tag == T_UOBJ && u->refs <= o->urefs[i].count) {
			u->tag = 0;
			u->destroy(u->ptr);
		} else if (u->tag == T_UOBJ) {
			u->refs -= o->urefs[i].count;
		}
	}
	free(o->urefs);
	o->urefs = NULL;
	o->nurefs = 0;
}

/* Edge @from -> @to with data @ed (NULL: default); CUDA_ERROR_INVALID_VALUE when it exists. */
static CUresult edge_add(struct obj *to, struct obj *from, const CUgraphEdgeData *ed)
{
	struct snode *t = to->node;
	struct obj **nd;
	CUgraphEdgeData *ne;

	if (from == to)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < t->ndeps; i++)
		if (t->deps[i] == from)
			return CUDA_ERROR_INVALID_VALUE;
	nd = realloc(t->deps, (t->ndeps + 1) * sizeof(*nd));
	if (!nd)
		return CUDA_ERROR_OUT_OF_MEMORY;
	t->deps = nd;
	ne = realloc(t->edata, (t->ndeps + 1) * sizeof(*ne));
	if (!ne)
		return CUDA_ERROR_OUT_OF_MEMORY;
	t->edata = ne;
	if (ed)
		t->edata[t->ndeps] = *ed;
	else
		memset(&t->edata[t->ndeps], 0, sizeof(*ne));
	t->deps[t->ndeps++] = from;
	return CUDA_SUCCESS;
}

static CUresult node_new(struct obj *gr, CUgraphNodeType type, struct obj **node)
{
	struct obj **nn = realloc(gr->nodes, (gr->nnodes + 1) * sizeof(*nn));

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
	return CUDA_SUCCESS;
}

/* Remove node @n from its graph's list and from every edge. */
static void node_unlink(struct obj *n)
{
	struct obj *gr = n->graph;

	for (size_t i = 0; i < gr->nnodes; i++) {
		struct snode *s = gr->nodes[i]->node;

		for (size_t k = 0; k < s->ndeps; k++)
			if (s->deps[k] == n) {
				s->deps[k] = s->deps[--s->ndeps];
				s->edata[k] = s->edata[s->ndeps];
				k--;
			}
	}
	for (size_t i = 0; i < gr->nnodes; i++)
		if (gr->nodes[i] == n) {
			memmove(&gr->nodes[i], &gr->nodes[i + 1], (gr->nnodes - i - 1) * sizeof(gr->nodes[0]));
			gr->nnodes--;
			break;
		}
}

/* ---- node parameters -------------------------------------------------------------------- */

/* Kernel parameters, in the extra form only (vcuda always hands them over packed). */
static CUresult kernel_set(struct snode *o, const CUDA_KERNEL_NODE_PARAMS *p)
{
	const void *src = NULL;
	size_t n = 0;

	/* The shape as a launch checks it (launch.c): a block of more than
	 * 1024 threads is refused by the driver here too. */
	if (!p || (!vc_si_is(p->func, T_FUNC) && !vc_si_is(p->func, T_KERN) && !vc_si_is(p->kern, T_KERN)) ||
	    !p->gridDimX || !p->gridDimY || !p->gridDimZ || !p->blockDimX || !p->blockDimY || !p->blockDimZ ||
	    (uint64_t)p->blockDimX * p->blockDimY * p->blockDimZ > 1024 || p->kernelParams)
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

/* Whether [@d, @d + @n) is "device" memory here. */
static int dev_ok(CUdeviceptr d, size_t n)
{
	int ok;

	pthread_mutex_lock(&g_mu);
	ok = vc_smem_find(&g_mem, d, n ? n : 1) != NULL;
	pthread_mutex_unlock(&g_mu);
	return ok;
}

static CUresult memset_set(struct snode *o, const CUDA_MEMSET_NODE_PARAMS_v2 *m)
{
	size_t rows = m->height ? m->height - 1 : 0;

	if ((m->elementSize != 1 && m->elementSize != 2 && m->elementSize != 4) || !m->width || !m->height ||
	    (m->height > 1 && m->pitch < m->width * m->elementSize))
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(m->dst, rows * m->pitch + m->width * m->elementSize))
		return CUDA_ERROR_INVALID_VALUE;
	o->mset = *m;
	return CUDA_SUCCESS;
}

static CUresult memcpy_set(struct snode *o, const CUDA_MEMCPY3D *c)
{
	if (!c || !c->WidthInBytes || !c->Height || !c->Depth)
		return CUDA_ERROR_INVALID_VALUE;
	/* rows and planes within their pitches, as the driver asks */
	if ((c->Height > 1 || c->Depth > 1) && (c->srcPitch < c->srcXInBytes + c->WidthInBytes ||
						c->dstPitch < c->dstXInBytes + c->WidthInBytes))
		return CUDA_ERROR_INVALID_VALUE;
	if (c->Depth > 1 && (c->srcHeight < c->srcY + c->Height || c->dstHeight < c->dstY + c->Height))
		return CUDA_ERROR_INVALID_VALUE;
	o->copy = *c;
	return CUDA_SUCCESS;
}

static CUresult alloc_set(struct snode *o, CUDA_MEM_ALLOC_NODE_PARAMS_v2 *a)
{
	uint64_t va;
	int rc;

	if (!a->bytesize || (a->accessDescCount && !a->accessDescs) || a->accessDescCount > 64 ||
	    a->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    a->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->accessDescCount && !(o->descs = malloc(a->accessDescCount * sizeof(*o->descs))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (a->accessDescCount)
		memcpy(o->descs, a->accessDescs, a->accessDescCount * sizeof(*o->descs));
	/* The address is reserved as the node is added, as natively. */
	pthread_mutex_lock(&g_mu);
	rc = vc_smem_alloc(&g_mem, a->bytesize, NULL, &va);
	pthread_mutex_unlock(&g_mu);
	if (rc)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->dptr = va;
	memcpy(&o->alloc, a, sizeof(o->alloc));
	o->alloc.accessDescs = o->descs;
	o->alloc_owned = 1;
	return CUDA_SUCCESS;
}

static CUresult batch_set(struct snode *o, const CUDA_BATCH_MEM_OP_NODE_PARAMS_v2 *b)
{
	CUstreamBatchMemOpParams *ops;

	if (!b->count || !b->paramArray || b->count > 256)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < b->count; i++) {
		const CUstreamBatchMemOpParams *op = &b->paramArray[i];
		unsigned n = op->operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
					     op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 ? 4 : 8;

		if (op->operation != CU_STREAM_MEM_OP_BARRIER && op->operation != CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES &&
		    !dev_ok(op->writeValue.address, n))
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (!(ops = malloc(b->count * sizeof(*ops))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(ops, b->paramArray, b->count * sizeof(*ops));
	free(o->ops);
	o->ops = ops;
	memcpy(&o->batch, b, sizeof(o->batch));
	o->batch.paramArray = ops;
	return CUDA_SUCCESS;
}

static CUresult cond_set(struct obj *n, CUDA_CONDITIONAL_NODE_PARAMS *c)
{
	struct snode *o = n->node;

	if (!c->size || c->size > 64 || (c->type == CU_GRAPH_COND_TYPE_IF && c->size > 2) ||
	    (c->type == CU_GRAPH_COND_TYPE_WHILE && c->size != 1) || c->type > CU_GRAPH_COND_TYPE_SWITCH)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(o->bodies = calloc(c->size, sizeof(*o->bodies))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned i = 0; i < c->size; i++) {
		if (vc_si_make(T_GRAPH, (void **)&o->bodies[i]))
			return CUDA_ERROR_OUT_OF_MEMORY;
		vc_si_adopt(o->bodies[i], n);
		o->nbodies++;
	}
	c->phGraph_out = (CUgraph *)o->bodies; /* the node's own array, as natively */
	o->chandle = c->handle;
	o->ctype = c->type;
	return CUDA_SUCCESS;
}

CUresult vc_si_graph_set(struct obj *n, CUgraphNodeParams *np, int adding)
{
	struct snode *o = n->node;
	struct obj *child;
	CUresult rc;

	if (!np || np->type != o->type)
		return CUDA_ERROR_INVALID_VALUE;
	switch (np->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		return kernel_set(o, (const CUDA_KERNEL_NODE_PARAMS *)&np->kernel);
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return memcpy_set(o, &np->memcpy.copyParams);
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return memset_set(o, &np->memset);
	case CU_GRAPH_NODE_TYPE_HOST:
		if (!np->host.fn)
			return CUDA_ERROR_INVALID_VALUE;
		o->host.fn = np->host.fn;
		o->host.userData = np->host.userData;
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_GRAPH:
		if (!is_graph(np->graph.graph))
			return CUDA_ERROR_INVALID_VALUE;
		if (adding && np->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE)
			child = (struct obj *)np->graph.graph; /* moved: the node owns it now */
		else if ((rc = vc_si_graph_clone((struct obj *)np->graph.graph, &child)))
			return rc;
		if (o->child)
			vc_si_del_obj(o->child);
		vc_si_adopt(child, n);
		o->child = child;
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_EMPTY:
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		if (!vc_si_is(np->eventRecord.event, T_EVENT))
			return CUDA_ERROR_INVALID_VALUE;
		o->event = np->eventRecord.event;
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		return adding ? alloc_set(o, &np->alloc) : CUDA_ERROR_INVALID_VALUE;
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		if (!adding || !dev_ok(np->free.dptr, 1))
			return CUDA_ERROR_INVALID_VALUE;
		o->fptr = np->free.dptr;
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		return batch_set(o, &np->memOp);
	case CU_GRAPH_NODE_TYPE_CONDITIONAL:
		return adding ? cond_set(n, &np->conditional) : CUDA_ERROR_INVALID_VALUE;
	default:
		return CUDA_ERROR_INVALID_VALUE; /* external semaphores: none here */
	}
}

static CUresult s_add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *ed,
			   size_t n, CUgraphNodeParams *np)
{
	struct obj *gr = (struct obj *)g, *node;
	CUresult rc;

	if (!is_graph(g))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!out || !np || (n && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++)
		if (!vc_si_is(deps[i], T_NODE) || ((struct obj *)deps[i])->graph != gr)
			return CUDA_ERROR_INVALID_VALUE;
	if ((rc = node_new(gr, np->type, &node)))
		return rc;
	rc = vc_si_graph_set(node, np, 1);
	for (size_t i = 0; rc == CUDA_SUCCESS && i < n; i++)
		rc = edge_add(node, (struct obj *)deps[i], ed ? &ed[i] : NULL);
	if (rc) {
		/* Refused parameters add no node. */
		node_unlink(node);
		vc_si_del_obj(node);
		return rc;
	}
	*out = (CUgraphNode)node;
	return CUDA_SUCCESS;
}

static CUresult s_add_kernel(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
			     const CUDA_KERNEL_NODE_PARAMS *p)
{
	CUgraphNodeParams np = {.type = CU_GRAPH_NODE_TYPE_KERNEL};

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&np.kernel, p, sizeof(*p));
	return s_add_node(out, g, deps, NULL, n, &np);
}

static CUresult s_add_memcpy(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n, const CUDA_MEMCPY3D *c,
			     CUcontext ctx)
{
	CUgraphNodeParams np = {.type = CU_GRAPH_NODE_TYPE_MEMCPY};

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	np.memcpy.copyParams = *c;
	np.memcpy.copyCtx = ctx;
	return s_add_node(out, g, deps, NULL, n, &np);
}

static CUresult s_node_set(CUgraphNode n, CUgraphNodeParams *np)
{
	return node_of(n) ? vc_si_graph_set((struct obj *)n, np, 0) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_kernel_set(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	CUgraphNodeParams np = {.type = CU_GRAPH_NODE_TYPE_KERNEL};

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&np.kernel, p, sizeof(*p));
	return s_node_set(n, &np);
}

/* ---- graphs, edges, clones ---------------------------------------------------------------- */

static CUresult s_graph_create(CUgraph *g, unsigned flags)
{
	if (!g || flags)
		return CUDA_ERROR_INVALID_VALUE;
	return vc_si_make(T_GRAPH, (void **)g);
}

static CUresult s_graph_destroy(CUgraph g)
{
	if (!is_graph(g))
		return CUDA_ERROR_INVALID_HANDLE;
	/* Executable graphs have copies of their own, as natively. */
	vc_si_del_obj(g);
	return CUDA_SUCCESS;
}

/* The driver's way with output arrays: fill up to *@n, NULL the rest; count when @out is NULL. */
static void hand_out(struct obj *const *items, size_t total, CUgraphNode *out, size_t *n)
{
	if (out) {
		for (size_t i = 0; i < *n; i++)
			out[i] = i < total ? (CUgraphNode)items[i] : NULL;
		*n = *n < total ? *n : total;
	} else {
		*n = total;
	}
}

static CUresult s_graph_nodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
	if (!is_graph(g))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	hand_out(((struct obj *)g)->nodes, ((struct obj *)g)->nnodes, nodes, n);
	return CUDA_SUCCESS;
}

static CUresult s_node_type(CUgraphNode n, CUgraphNodeType *t)
{
	if (!node_of(n))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!t)
		return CUDA_ERROR_INVALID_VALUE;
	*t = node_of(n)->type;
	return CUDA_SUCCESS;
}

static int edge_plain(const CUgraphEdgeData *e)
{
	static const CUgraphEdgeData zero;

	return !memcmp(e, &zero, sizeof(zero));
}

/*
 * Edges into nodes (@to_of), or out of node @of (dependents): as lists of
 * (from, to, data). With @ed NULL, edges with data cannot be handed out.
 */
static CUresult list_edges(struct obj *gr, struct obj *only_to, struct obj *only_from, CUgraphNode *from,
			   CUgraphNode *to, CUgraphEdgeData *ed, size_t *n)
{
	size_t total = 0, cap = to ? *n : 0;

	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < gr->nnodes; i++) {
		struct snode *s = gr->nodes[i]->node;

		if (only_to && gr->nodes[i] != only_to)
			continue;
		for (size_t k = 0; k < s->ndeps; k++) {
			if (only_from && s->deps[k] != only_from)
				continue;
			if (to && !ed && !edge_plain(&s->edata[k]))
				return CUDA_ERROR_LOSSY_QUERY; /* filling would lose it */
			if (total < cap) {
				if (from)
					from[total] = (CUgraphNode)s->deps[k];
				to[total] = only_to ? (CUgraphNode)s->deps[k] : (CUgraphNode)gr->nodes[i];
				if (ed)
					ed[total] = s->edata[k];
			}
			total++;
		}
	}
	for (size_t i = total; i < cap; i++) {
		if (from)
			from[i] = NULL;
		to[i] = NULL;
	}
	*n = to ? (total < cap ? total : cap) : total;
	return CUDA_SUCCESS;
}

static CUresult s_edges(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *ed, size_t *n)
{
	if (!is_graph(g))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!from != !to || (ed && !to))
		return CUDA_ERROR_INVALID_VALUE;
	return list_edges((struct obj *)g, NULL, NULL, from, to, ed, n);
}

static CUresult s_deps(CUgraphNode node, CUgraphNode *deps, CUgraphEdgeData *ed, size_t *n)
{
	if (!node_of(node))
		return CUDA_ERROR_INVALID_HANDLE;
	if (ed && !deps)
		return CUDA_ERROR_INVALID_VALUE;
	return list_edges(((struct obj *)node)->graph, (struct obj *)node, NULL, NULL, deps, ed, n);
}

static CUresult s_dependents(CUgraphNode node, CUgraphNode *out, CUgraphEdgeData *ed, size_t *n)
{
	if (!node_of(node))
		return CUDA_ERROR_INVALID_HANDLE;
	if (ed && !out)
		return CUDA_ERROR_INVALID_VALUE;
	return list_edges(((struct obj *)node)->graph, NULL, (struct obj *)node, NULL, out, ed, n);
}

static CUresult s_roots(CUgraph g, CUgraphNode *roots, size_t *n)
{
	struct obj *gr = (struct obj *)g, **r;
	size_t k = 0;

	if (!is_graph(g))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(r = calloc(gr->nnodes + 1, sizeof(*r))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < gr->nnodes; i++)
		if (!gr->nodes[i]->node->ndeps)
			r[k++] = gr->nodes[i];
	hand_out(r, k, roots, n);
	free(r);
	return CUDA_SUCCESS;
}

static CUresult change_deps(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *ed,
			    size_t n, int remove)
{
	struct obj *gr = (struct obj *)g;
	CUresult rc = CUDA_SUCCESS;

	if (!is_graph(g))
		return CUDA_ERROR_INVALID_HANDLE;
	if (n && (!from || !to))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++)
		if (!node_of(from[i]) || !node_of(to[i]) || ((struct obj *)from[i])->graph != gr ||
		    ((struct obj *)to[i])->graph != gr)
			return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n && rc == CUDA_SUCCESS; i++) {
		struct snode *t = node_of(to[i]);
		size_t k;

		if (!remove) {
			rc = edge_add((struct obj *)to[i], (struct obj *)from[i], ed ? &ed[i] : NULL);
			continue;
		}
		for (k = 0; k < t->ndeps && t->deps[k] != (struct obj *)from[i]; k++)
			;
		if (k == t->ndeps)
			return CUDA_ERROR_INVALID_VALUE;
		t->deps[k] = t->deps[--t->ndeps];
		t->edata[k] = t->edata[t->ndeps];
	}
	return rc;
}

static CUresult s_add_deps(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *ed,
			   size_t n)
{
	return change_deps(g, from, to, ed, n, 0);
}

static CUresult s_remove_deps(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
			      const CUgraphEdgeData *ed, size_t n)
{
	return change_deps(g, from, to, ed, n, 1);
}

static CUresult s_destroy_node(CUgraphNode n)
{
	if (!node_of(n))
		return CUDA_ERROR_INVALID_HANDLE;
	node_unlink((struct obj *)n);
	vc_si_del_obj(n);
	return CUDA_SUCCESS;
}

/* A copy of node @s's parameters into @d (arrays and child graphs copied). */
static CUresult node_copy(struct obj *dn, const struct snode *s)
{
	struct snode *d = dn->node;

	memcpy(&d->kp, &s->kp, sizeof(*d) - offsetof(struct snode, kp));
	d->descs = NULL;
	d->ops = NULL;
	d->bodies = NULL;
	d->child = NULL;
	d->alloc_owned = 0; /* the clone's address is the original's */
	d->nbodies = 0;
	if (s->alloc.accessDescCount) {
		if (!(d->descs = malloc(s->alloc.accessDescCount * sizeof(*d->descs))))
			return CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(d->descs, s->descs, s->alloc.accessDescCount * sizeof(*d->descs));
		d->alloc.accessDescs = d->descs;
	}
	if (s->ops) {
		if (!(d->ops = malloc(s->batch.count * sizeof(*d->ops))))
			return CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(d->ops, s->ops, s->batch.count * sizeof(*d->ops));
		d->batch.paramArray = d->ops;
	}
	if (s->child) {
		if (vc_si_graph_clone(s->child, &d->child))
			return CUDA_ERROR_OUT_OF_MEMORY;
		vc_si_adopt(d->child, dn);
	}
	if (s->nbodies && !(d->bodies = calloc(s->nbodies, sizeof(*d->bodies))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned i = 0; i < s->nbodies; i++) {
		if (vc_si_graph_clone(s->bodies[i], &d->bodies[i]))
			return CUDA_ERROR_OUT_OF_MEMORY;
		vc_si_adopt(d->bodies[i], dn);
		d->nbodies++;
	}
	return CUDA_SUCCESS;
}

CUresult vc_si_graph_clone(struct obj *g, struct obj **out)
{
	struct obj *c;
	CUresult rc;

	if ((rc = vc_si_make(T_GRAPH, (void **)&c)))
		return rc;
	c->origin = g;
	for (size_t i = 0; i < g->nnodes && rc == CUDA_SUCCESS; i++) {
		struct obj *n;

		if (!(rc = node_new(c, g->nodes[i]->node->type, &n))) {
			n->node->orig = g->nodes[i];
			rc = node_copy(n, g->nodes[i]->node);
		}
	}
	/* Edges by position: node i of the clone is node i of the original. */
	for (size_t i = 0; i < g->nnodes && rc == CUDA_SUCCESS; i++) {
		const struct snode *s = g->nodes[i]->node;

		for (size_t k = 0; k < s->ndeps && rc == CUDA_SUCCESS; k++) {
			size_t j;

			for (j = 0; j < g->nnodes && g->nodes[j] != s->deps[k]; j++)
				;
			rc = edge_add(c->nodes[i], c->nodes[j], &s->edata[k]);
		}
	}
	if (rc == CUDA_SUCCESS && g->nurefs) {
		/* References to user objects are the clone's too. */
		if (!(c->urefs = malloc(g->nurefs * sizeof(*c->urefs))))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		for (size_t i = 0; rc == CUDA_SUCCESS && i < g->nurefs; i++) {
			c->urefs[i] = g->urefs[i];
			c->urefs[i].u->refs += g->urefs[i].count;
			c->nurefs++;
		}
	}
	if (rc) {
		vc_si_del_obj(c);
		return rc;
	}
	*out = c;
	return CUDA_SUCCESS;
}

static CUresult s_clone(CUgraph *out, CUgraph g)
{
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if (!is_graph(g))
		return CUDA_ERROR_INVALID_HANDLE;
	return vc_si_graph_clone((struct obj *)g, (struct obj **)out);
}

static CUresult s_find_in_clone(CUgraphNode *out, CUgraphNode orig, CUgraph clone)
{
	struct obj *c = (struct obj *)clone;

	if (!out || !node_of(orig) || !is_graph(clone))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < c->nnodes; i++)
		if (c->nodes[i]->node->orig == (struct obj *)orig) {
			*out = (CUgraphNode)c->nodes[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

void vc_si_fill_graph(struct vc_cuda_driver *d)
{
	vc_si_obj_fini = obj_fini;
	d->cuStreamGetCaptureInfo_v3 = s_capture_info;
	d->cuStreamIsCapturing = s_is_capturing;
	d->cuGraphCreate = s_graph_create;
	d->cuGraphDestroy = s_graph_destroy;
	d->cuGraphGetNodes = s_graph_nodes;
	d->cuGraphNodeGetType = s_node_type;
	d->cuGraphAddNode_v2 = s_add_node;
	d->cuGraphNodeSetParams = s_node_set;
	d->cuGraphAddKernelNode_v2 = s_add_kernel;
	d->cuGraphKernelNodeSetParams_v2 = s_kernel_set;
	d->cuGraphAddMemcpyNode = s_add_memcpy;
	d->cuGraphGetEdges_v2 = s_edges;
	d->cuGraphGetRootNodes = s_roots;
	d->cuGraphNodeGetDependencies_v2 = s_deps;
	d->cuGraphNodeGetDependentNodes_v2 = s_dependents;
	d->cuGraphAddDependencies_v2 = s_add_deps;
	d->cuGraphRemoveDependencies_v2 = s_remove_deps;
	d->cuGraphDestroyNode = s_destroy_node;
	d->cuGraphClone = s_clone;
	d->cuGraphNodeFindInClone = s_find_in_clone;
}
