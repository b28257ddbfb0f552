/* SPDX-License-Identifier: MIT */
/*
 * graph_run.c - the CI stand-in's executable graphs: instantiation (an
 * executable graph is a copy of its graph, so that later changes to either
 * stay apart, as natively), launch (nodes in dependency order: copies,
 * memsets and memory writes made, host functions called, kernels counted,
 * disabled nodes skipped), per-node updates, whole-graph updates with the
 * driver's reasons for a refusal, node enabling, kernel node attributes,
 * the dot print, user objects, conditional handles and graph memory
 * attributes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"

#define INSTANTIATE_FLAGS                                                                                       \
	(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |                  \
	 CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

static struct suobj *g_uobj_free; /* user object records for reuse, under g_mu */
static uint64_t g_graph_mem_high; /* CU_GRAPH_MEM_ATTR_*_HIGH, under g_mu */

static struct obj *exec_of(CUgraphExec e)
{
	return vc_si_is(e, T_EXEC) ? (struct obj *)e : NULL;
}

static CUresult instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	struct obj *x, *copy;
	CUresult rc;

	if (!e || (flags & ~(unsigned long long)INSTANTIATE_FLAGS))
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_is(g, T_GRAPH))
		return CUDA_ERROR_INVALID_HANDLE;
	if ((rc = vc_si_graph_clone((struct obj *)g, &copy)))
		return rc;
	if ((rc = vc_si_make(T_EXEC, (void **)&x))) {
		vc_si_del_obj(copy);
		return rc;
	}
	vc_si_adopt(copy, x);
	x->graph = copy;
	x->exec_flags = flags;
	*e = (CUgraphExec)x;
	return CUDA_SUCCESS;
}

static CUresult s_instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	return instantiate(e, g, flags);
}

static CUresult s_instantiate_params(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	CUresult rc;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_stream_ok(p->hUploadStream))
		return CUDA_ERROR_INVALID_HANDLE;
	rc = instantiate(e, g, p->flags);
	p->hErrNode_out = NULL;
	p->result_out = rc == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
	return rc;
}

static CUresult s_exec_flags(CUgraphExec e, cuuint64_t *flags)
{
	if (!exec_of(e))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = exec_of(e)->exec_flags;
	return CUDA_SUCCESS;
}

static CUresult s_exec_destroy(CUgraphExec e)
{
	if (!exec_of(e))
		return CUDA_ERROR_INVALID_HANDLE;
	vc_si_del_obj(e); /* its copy of the graph goes with it */
	return CUDA_SUCCESS;
}

/* ---- launch ------------------------------------------------------------------------------ */

static CUresult run_graph(struct obj *g, int depth);

static CUresult run_memset(const CUDA_MEMSET_NODE_PARAMS_v2 *m)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	uint8_t *p;

	pthread_mutex_lock(&g_mu);
	for (size_t y = 0; y < m->height; y++) {
		p = vc_smem_ptr(&g_mem, m->dst + y * m->pitch, m->width * m->elementSize);
		if (!p)
			goto out;
		for (size_t i = 0; i < m->width; i++)
			memcpy(p + i * m->elementSize, &m->value, m->elementSize);
	}
	rc = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* One row of copy @c: plane @z, row @y. */
static CUresult copy_row(const CUDA_MEMCPY3D *c, size_t y, size_t z)
{
	size_t so = c->srcXInBytes + (c->srcY + y) * c->srcPitch + (c->srcZ + z) * c->srcPitch * c->srcHeight;
	size_t d = c->dstXInBytes + (c->dstY + y) * c->dstPitch + (c->dstZ + z) * c->dstPitch * c->dstHeight;

	if (c->srcMemoryType == CU_MEMORYTYPE_HOST && c->dstMemoryType == CU_MEMORYTYPE_DEVICE)
		return vc_si_htod(c->dstDevice + d, (const uint8_t *)c->srcHost + so, c->WidthInBytes);
	if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE && c->dstMemoryType == CU_MEMORYTYPE_HOST)
		return vc_si_dtoh((uint8_t *)c->dstHost + d, c->srcDevice + so, c->WidthInBytes);
	if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE && c->dstMemoryType == CU_MEMORYTYPE_DEVICE)
		return vc_si_dtod(c->dstDevice + d, c->srcDevice + so, c->WidthInBytes);
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* A copy node: row by row (offsets, pitches and planes as the driver takes them). */
static CUresult run_copy(const CUDA_MEMCPY3D *c)
{
	CUresult rc = CUDA_SUCCESS;

	for (size_t z = 0; z < c->Depth && rc == CUDA_SUCCESS; z++)
		for (size_t y = 0; y < c->Height && rc == CUDA_SUCCESS; y++)
			rc = copy_row(c, y, z);
	return rc;
}

/* Memory writes are made; waits and barriers have nothing to wait for here. */
static CUresult run_batch(const CUDA_BATCH_MEM_OP_NODE_PARAMS *b)
{
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&g_mu);
	for (unsigned i = 0; i < b->count && rc == CUDA_SUCCESS; i++) {
		const CUstreamBatchMemOpParams *op = &b->paramArray[i];
		uint8_t *p;

		if (op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 || op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_64) {
			size_t n = op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 ? 4 : 8;

			p = vc_smem_ptr(&g_mem, op->writeValue.address, n);
			if (!p)
				rc = CUDA_ERROR_INVALID_VALUE;
			else if (n == 4)
				memcpy(p, &op->writeValue.value, 4);
			else
				memcpy(p, &op->writeValue.value64, 8);
		}
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult run_node(struct snode *s, int depth)
{
	switch (s->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		pthread_mutex_lock(&g_mu);
		g_launches++;
		pthread_mutex_unlock(&g_mu);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return run_copy(&s->copy);
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return run_memset(&s->mset);
	case CU_GRAPH_NODE_TYPE_HOST:
		s->host.fn(s->host.userData);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_GRAPH:
		return run_graph(s->child, depth + 1);
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		pthread_mutex_lock(&g_mu);
		if (vc_si_is(s->event, T_EVENT))
			((struct obj *)s->event)->done_at = g_busy_until;
		pthread_mutex_unlock(&g_mu);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		pthread_mutex_lock(&g_mu);
		if (s->alloc.bytesize > g_graph_mem_high)
			g_graph_mem_high = s->alloc.bytesize;
		pthread_mutex_unlock(&g_mu);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		return run_batch(&s->batch);
	default:
		/* Empty nodes, event waits (work is done at once here), frees
		 * (the address stays reserved), conditional nodes (their
		 * condition is set by kernels, which do not run here). */
		return CUDA_SUCCESS;
	}
}

/* Graph @g's nodes in dependency order (Kahn), disabled ones skipped. */
static CUresult run_graph(struct obj *g, int depth)
{
	size_t n = g->nnodes, done = 0;
	unsigned char *ran;
	CUresult rc = CUDA_SUCCESS;

	if (depth > 16)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(ran = calloc(n + 1, 1)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	while (done < n && rc == CUDA_SUCCESS) {
		size_t before = done;

		for (size_t i = 0; i < n && rc == CUDA_SUCCESS; i++) {
			struct snode *s = g->nodes[i]->node;
			size_t k;

			if (ran[i])
				continue;
			for (k = 0; k < s->ndeps; k++) {
				size_t j;

				for (j = 0; j < n && g->nodes[j] != s->deps[k]; j++)
					;
				if (j < n && !ran[j])
					break;
			}
			if (k < s->ndeps)
				continue;
			if (!s->disabled)
				rc = run_node(s, depth);
			ran[i] = 1;
			done++;
		}
		if (done == before)
			rc = CUDA_ERROR_INVALID_VALUE; /* a cycle */
	}
	free(ran);
	return rc;
}

static CUresult s_graph_launch(CUgraphExec e, CUstream s)
{
	if (!exec_of(e) || !vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	vc_si_wait_host_funcs(); /* host functions queued before it run first, in stream order */
	return run_graph(exec_of(e)->graph, 0);
}

static CUresult s_graph_upload(CUgraphExec e, CUstream s)
{
	return exec_of(e) && vc_si_stream_ok(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- executable graph nodes ------------------------------------------------------------------ */

/* The node of executable graph @e standing for node @n (of its graph, or of the last update's). */
static struct obj *exec_node(CUgraphExec e, CUgraphNode n)
{
	struct obj *x = exec_of(e);

	if (!x || !vc_si_is(n, T_NODE))
		return NULL;
	for (size_t i = 0; i < x->graph->nnodes; i++) {
		struct snode *s = x->graph->nodes[i]->node;

		if (s->orig == (struct obj *)n || s->upd == (struct obj *)n)
			return x->graph->nodes[i];
	}
	return NULL;
}

static CUresult s_exec_node_set(CUgraphExec e, CUgraphNode n, CUgraphNodeParams *np)
{
	struct obj *en = exec_node(e, n);

	if (!exec_of(e))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!en || !np || np->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || np->type == CU_GRAPH_NODE_TYPE_MEM_FREE ||
	    np->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
		return CUDA_ERROR_INVALID_VALUE;
	return vc_si_graph_set(en, np, 0);
}

static CUresult s_exec_kernel_set(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	CUgraphNodeParams np = {.type = CU_GRAPH_NODE_TYPE_KERNEL};

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&np.kernel, p, sizeof(*p));
	return s_exec_node_set(e, n, &np);
}

static CUresult s_exec_record_set(CUgraphExec e, CUgraphNode n, CUevent ev)
{
	CUgraphNodeParams np = {.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD};

	np.eventRecord.event = ev;
	return s_exec_node_set(e, n, &np);
}

static CUresult s_exec_wait_set(CUgraphExec e, CUgraphNode n, CUevent ev)
{
	CUgraphNodeParams np = {.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT};

	np.eventWait.event = ev;
	return s_exec_node_set(e, n, &np);
}

/* Only kernel, memcpy and memset nodes can be disabled, as natively. */
static struct snode *switchable(CUgraphExec e, CUgraphNode n)
{
	struct obj *en = exec_node(e, n);
	CUgraphNodeType t = en ? en->node->type : CU_GRAPH_NODE_TYPE_EMPTY;

	return t == CU_GRAPH_NODE_TYPE_KERNEL || t == CU_GRAPH_NODE_TYPE_MEMCPY || t == CU_GRAPH_NODE_TYPE_MEMSET
		       ? en->node
		       : NULL;
}

static CUresult s_set_enabled(CUgraphExec e, CUgraphNode n, unsigned on)
{
	struct snode *s = switchable(e, n);

	if (!exec_of(e))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!s)
		return CUDA_ERROR_INVALID_VALUE;
	s->disabled = !on;
	return CUDA_SUCCESS;
}

static CUresult s_get_enabled(CUgraphExec e, CUgraphNode n, unsigned *on)
{
	struct snode *s = switchable(e, n);

	if (!exec_of(e))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!s || !on)
		return CUDA_ERROR_INVALID_VALUE;
	*on = !s->disabled;
	return CUDA_SUCCESS;
}

/*
 * cuGraphExecUpdate: the graph must have the executable graph's shape (as
 * many nodes, of the same kinds, with the same edges, in the same order);
 * then every node's parameters are taken over (enabled states stay).
 */
static CUresult s_exec_update(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
	struct obj *x = exec_of(e), *gr = (struct obj *)g, *eg;

	if (!info)
		return CUDA_ERROR_INVALID_VALUE;
	memset(info, 0, sizeof(*info));
	if (!x || !vc_si_is(g, T_GRAPH)) {
		info->result = CU_GRAPH_EXEC_UPDATE_ERROR;
		return CUDA_ERROR_INVALID_VALUE;
	}
	eg = x->graph;
	info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
	if (gr->nnodes != eg->nnodes)
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	for (size_t i = 0; i < gr->nnodes; i++) {
		struct snode *a = gr->nodes[i]->node, *b = eg->nodes[i]->node;

		if (a->type != b->type) {
			info->result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
			info->errorNode = (CUgraphNode)gr->nodes[i];
			return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
		}
		for (size_t k = 0; k < a->ndeps; k++) {
			size_t j;

			for (j = 0; j < gr->nnodes && gr->nodes[j] != a->deps[k]; j++)
				;
			if (a->ndeps != b->ndeps || j == gr->nnodes || b->deps[k] != eg->nodes[j]) {
				info->errorNode = (CUgraphNode)gr->nodes[i];
				info->errorFromNode = (CUgraphNode)a->deps[k];
				return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
			}
		}
		if (a->ndeps != b->ndeps) {
			info->errorNode = (CUgraphNode)gr->nodes[i];
			return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
		}
		if ((a->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && a->alloc.bytesize != b->alloc.bytesize) ||
		    (a->type == CU_GRAPH_NODE_TYPE_MEM_FREE && a->fptr != b->fptr)) {
			info->result = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
			info->errorNode = (CUgraphNode)gr->nodes[i];
			return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
		}
	}
	for (size_t i = 0; i < gr->nnodes; i++) {
		struct snode *a = gr->nodes[i]->node, *b = eg->nodes[i]->node;

		b->kp = a->kp;
		memcpy(b->params, a->params, a->psize);
		b->psize = a->psize;
		b->copy = a->copy;
		b->mset = a->mset;
		b->host = a->host;
		b->event = a->event;
		b->upd = gr->nodes[i];
	}
	info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	return CUDA_SUCCESS;
}

/* ---- kernel node attributes ------------------------------------------------------------------ */

static CUresult s_attr_get(CUgraphNode n, CUkernelNodeAttrID id, CUkernelNodeAttrValue *v)
{
	struct snode *s = vc_si_is(n, T_NODE) ? ((struct obj *)n)->node : NULL;

	if (!s || s->type != CU_GRAPH_NODE_TYPE_KERNEL || !v)
		return CUDA_ERROR_INVALID_VALUE;
	memset(v, 0, sizeof(*v));
	for (unsigned i = 0; i < s->nattrs; i++)
		if (s->attrs[i].id == id)
			*v = s->attrs[i].v;
	return CUDA_SUCCESS;
}

static CUresult s_attr_set(CUgraphNode n, CUkernelNodeAttrID id, const CUkernelNodeAttrValue *v)
{
	struct snode *s = vc_si_is(n, T_NODE) ? ((struct obj *)n)->node : NULL;
	unsigned i;

	if (!s || s->type != CU_GRAPH_NODE_TYPE_KERNEL || !v || id <= 0 || id > CU_LAUNCH_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < s->nattrs && s->attrs[i].id != id; i++)
		;
	if (i == SNODE_ATTRS)
		return CUDA_ERROR_NOT_SUPPORTED;
	s->attrs[i].id = id;
	s->attrs[i].v = *v;
	if (i == s->nattrs)
		s->nattrs++;
	return CUDA_SUCCESS;
}

static CUresult s_attr_copy(CUgraphNode dst, CUgraphNode src)
{
	struct snode *d = vc_si_is(dst, T_NODE) ? ((struct obj *)dst)->node : NULL;
	struct snode *s = vc_si_is(src, T_NODE) ? ((struct obj *)src)->node : NULL;

	if (!d || !s || d->type != CU_GRAPH_NODE_TYPE_KERNEL || s->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(d->attrs, s->attrs, sizeof(d->attrs));
	d->nattrs = s->nattrs;
	return CUDA_SUCCESS;
}

/* ---- the dot print ----------------------------------------------------------------------------- */

static const char *const kinds[] = {"KERNEL", "MEMCPY", "MEMSET", "HOST", "GRAPH", "EMPTY", "WAIT_EVENT",
				    "EVENT_RECORD", "EXT_SEMAS_SIGNAL", "EXT_SEMAS_WAIT", "MEM_ALLOC", "MEM_FREE",
				    "BATCH_MEM_OP", "CONDITIONAL"};

static void dot_graph(FILE *f, const struct obj *g, const char *prefix)
{
	for (size_t i = 0; i < g->nnodes; i++) {
		unsigned t = (unsigned)g->nodes[i]->node->type;

		fprintf(f, "\"%snode%zu\" [label=\"%s %zu\"];\n", prefix, i, t < 14 ? kinds[t] : "?", i);
	}
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct snode *s = g->nodes[i]->node;

		for (size_t k = 0; k < s->ndeps; k++)
			for (size_t j = 0; j < g->nnodes; j++)
				if (g->nodes[j] == s->deps[k])
					fprintf(f, "\"%snode%zu\" -> \"%snode%zu\";\n", prefix, j, prefix, i);
	}
}

static CUresult s_dot_print(CUgraph g, const char *path, unsigned flags)
{
	FILE *f;

	(void)flags;
	if (!vc_si_is(g, T_GRAPH))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!path || !(f = fopen(path, "w")))
		return CUDA_ERROR_OPERATING_SYSTEM;
	fprintf(f, "digraph dot {\n");
	dot_graph(f, (struct obj *)g, "");
	fprintf(f, "}\n");
	return fclose(f) ? CUDA_ERROR_OPERATING_SYSTEM : CUDA_SUCCESS;
}

/* ---- user objects ----------------------------------------------------------------------------- */

static struct suobj *uobj(CUuserObject o)
{
	struct suobj *u = (struct suobj *)o;

	return u && u->tag == T_UOBJ ? u : NULL;
}

static void uobj_drop(struct suobj *u, unsigned count)
{
	if (u->refs > count) {
		u->refs -= count;
		return;
	}
	u->tag = 0;
	u->destroy(u->ptr);
	pthread_mutex_lock(&g_mu);
	u->next_free = g_uobj_free;
	g_uobj_free = u;
	pthread_mutex_unlock(&g_mu);
}

static CUresult s_uobj_create(CUuserObject *out, void *ptr, CUhostFn destroy, unsigned refs, unsigned flags)
{
	struct suobj *u;

	if (!out || !destroy || !refs || flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	u = g_uobj_free;
	if (u)
		g_uobj_free = u->next_free;
	pthread_mutex_unlock(&g_mu);
	/* Records are reused, never freed: a stale handle reads a dead tag. */
	if (!u && !(u = calloc(1, sizeof(*u))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*u = (struct suobj){.tag = T_UOBJ, .refs = refs, .destroy = destroy, .ptr = ptr};
	*out = (CUuserObject)u;
	return CUDA_SUCCESS;
}

static CUresult s_uobj_retain(CUuserObject o, unsigned count)
{
	if (!uobj(o))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	uobj(o)->refs += count;
	return CUDA_SUCCESS;
}

static CUresult s_uobj_release(CUuserObject o, unsigned count)
{
	if (!uobj(o))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	uobj_drop(uobj(o), count);
	return CUDA_SUCCESS;
}

static CUresult s_graph_retain(CUgraph g, CUuserObject o, unsigned count, unsigned flags)
{
	struct obj *gr = (struct obj *)g;
	struct suobj *u = uobj(o);
	struct suref *nr;
	size_t i;

	if (!vc_si_is(g, T_GRAPH) || !u)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!count || (flags & ~(unsigned)CU_GRAPH_USER_OBJECT_MOVE))
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < gr->nurefs && gr->urefs[i].u != u; i++)
		;
	if (i == gr->nurefs) {
		if (!(nr = realloc(gr->urefs, (gr->nurefs + 1) * sizeof(*nr))))
			return CUDA_ERROR_OUT_OF_MEMORY;
		gr->urefs = nr;
		gr->urefs[gr->nurefs++] = (struct suref){u, 0};
	}
	gr->urefs[i].count += count;
	/* Moved references are the caller's no more; others are new ones. */
	if (!(flags & CU_GRAPH_USER_OBJECT_MOVE))
		u->refs += count;
	return CUDA_SUCCESS;
}

static CUresult s_graph_release(CUgraph g, CUuserObject o, unsigned count)
{
	struct obj *gr = (struct obj *)g;
	struct suobj *u = uobj(o);
	size_t i;

	if (!vc_si_is(g, T_GRAPH) || !u)
		return CUDA_ERROR_INVALID_HANDLE;
	for (i = 0; i < gr->nurefs && gr->urefs[i].u != u; i++)
		;
	if (!count || i == gr->nurefs || gr->urefs[i].count < count)
		return CUDA_ERROR_INVALID_VALUE;
	gr->urefs[i].count -= count;
	if (!gr->urefs[i].count)
		gr->urefs[i] = gr->urefs[--gr->nurefs];
	uobj_drop(u, count);
	return CUDA_SUCCESS;
}

/* ---- conditional handles, graph memory ------------------------------------------------------------ */

static CUresult s_cond_handle(CUgraphConditionalHandle *h, CUgraph g, CUcontext ctx, unsigned def, unsigned flags)
{
	static uint64_t next = 1;

	(void)ctx;
	if (!vc_si_is(g, T_GRAPH))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!h || (flags & ~(unsigned)CU_GRAPH_COND_ASSIGN_DEFAULT) || def > 1)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	*h = next++;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_mem_attr_get(CUdevice dev, CUgraphMem_attribute a, void *v)
{
	if (!vc_si_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!v || a < CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT || a > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	/* Graph memory is reserved with its node here and nothing stays mapped. */
	*(cuuint64_t *)v = a == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH || a == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH
				   ? g_graph_mem_high
				   : 0;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_mem_attr_set(CUdevice dev, CUgraphMem_attribute a, void *v)
{
	if (!vc_si_dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	/* Only the high watermarks can be set, and only to 0 (a reset). */
	if (!v || (a != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && a != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) ||
	    *(cuuint64_t *)v)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	g_graph_mem_high = 0;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_mem_trim(CUdevice dev)
{
	return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

void vc_si_fill_graph_run(struct vc_cuda_driver *d)
{
	d->cuGraphInstantiateWithFlags = s_instantiate;
	d->cuGraphInstantiateWithParams = s_instantiate_params;
	d->cuGraphExecGetFlags = s_exec_flags;
	d->cuGraphExecDestroy = s_exec_destroy;
	d->cuGraphLaunch = s_graph_launch;
	d->cuGraphUpload = s_graph_upload;
	d->cuGraphExecNodeSetParams = s_exec_node_set;
	d->cuGraphExecKernelNodeSetParams_v2 = s_exec_kernel_set;
	d->cuGraphExecEventRecordNodeSetEvent = s_exec_record_set;
	d->cuGraphExecEventWaitNodeSetEvent = s_exec_wait_set;
	d->cuGraphNodeSetEnabled = s_set_enabled;
	d->cuGraphNodeGetEnabled = s_get_enabled;
	d->cuGraphExecUpdate_v2 = s_exec_update;
	d->cuGraphKernelNodeGetAttribute = s_attr_get;
	d->cuGraphKernelNodeSetAttribute = s_attr_set;
	d->cuGraphKernelNodeCopyAttributes = s_attr_copy;
	d->cuGraphDebugDotPrint = s_dot_print;
	d->cuUserObjectCreate = s_uobj_create;
	d->cuUserObjectRetain = s_uobj_retain;
	d->cuUserObjectRelease = s_uobj_release;
	d->cuGraphRetainUserObject = s_graph_retain;
	d->cuGraphReleaseUserObject = s_graph_release;
	d->cuGraphConditionalHandleCreate = s_cond_handle;
	d->cuDeviceGetGraphMemAttribute = s_mem_attr_get;
	d->cuDeviceSetGraphMemAttribute = s_mem_attr_set;
	d->cuDeviceGraphMemTrim = s_mem_trim;
}
