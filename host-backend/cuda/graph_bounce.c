/* SPDX-License-Identifier: MIT */
/*
 * graph_bounce.c - memcpy nodes of pageable memory, added by hand.
 *
 * Natively a memcpy node may name the program's pageable memory, and the
 * graph reads or writes it each time the node runs (cuda-samples' graphs
 * copy a result into a stack variable so, and read it in a host node after).
 * The host cannot reach a guest's pageable pages when the graph runs, so the
 * guest names a bounce buffer of its pinned pool instead (VC_CU_MEM_BOUNCE)
 * with its host pair that moves the bytes between the bounce and the
 * program's memory (guest-lib capcopy.c, as for captured copies). Here the
 * copy node gets a host node beside it that runs the pair: before it when
 * the copy reads the bounce, after it when the copy writes it. So the bytes
 * move when the node runs, in the graph's order.
 *
 * The guest sees one node, the copy. The host node is its companion:
 * - dependencies named on the copy (new nodes' dependencies, edges added or
 *   removed, capture into the graph) are the companion's where the
 *   companion stands on that side: edges out of a copy into the bounce
 *   leave from its companion, edges into a copy from the bounce end at it;
 * - lists (nodes, roots, edges, a node's dependencies and dependents) give
 *   the copy in its companion's place, without the edge between the two;
 * - destroying the copy destroys its companion; disabling it in an
 *   executable graph makes its companion run a function that does nothing
 *   there (the driver disables no host node), and enabling it gives the
 *   companion the pair last set for the copy in that executable graph, else
 *   the one its node in the graph has then;
 * - a copy's parameters set (in its graph or an executable graph) keep it
 *   bounced the same way, its companion taking the new pair; a copy that
 *   would gain, lose or turn its bounce is refused (CUDA_ERROR_NOT_SUPPORTED:
 *   the graph's shape would change).
 * A companion is known by its parameters (our host node function with a
 * record marked as a bounce's, graph_state.c), so clones, child graphs and
 * executable graphs carry it and it is found there too. Sessions that never
 * added one pay nothing: every mapping returns at once.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/graph.h"

#define NEIGHBOURS_STACK 8u
#define PAIRS_MAX (1u << 16)

/* The pair a companion runs in an executable graph, where it was set there. */
struct vc_cu_bounce_pair {
	uint64_t exec; /* the executable graph's id (never reused) */
	CUgraphNode c;
	CUDA_HOST_NODE_PARAMS hp;
};

/* The direction of @n when it is a bounce's host node; 0 for any other node. */
static uint32_t bounce_dir(struct vc_cu_session *x, CUgraphNode n)
{
	CUDA_HOST_NODE_PARAMS hp;
	CUgraphNodeType t;

	if (!n || x->drv->cuGraphNodeGetType(n, &t) || t != CU_GRAPH_NODE_TYPE_HOST ||
	    x->drv->cuGraphHostNodeGetParams(n, &hp))
		return 0;
	return vc_cu_graph_host_bounce(&hp);
}

/* Has this session added a copy with a bounce? (Its graph state is not made for the question.) */
static bool any(struct vc_cu_session *x)
{
	return x->graphs && x->graphs->bounced;
}

/*
 * @n's neighbours on one side (its dependents, or its dependencies) into
 * @v (@cap entries; @ed as many), their count into *@k (at most @cap).
 */
static int neighbours(struct vc_cu_session *x, CUgraphNode n, bool dependents, CUgraphNode *v,
		      CUgraphEdgeData *ed, size_t cap, size_t *k)
{
	*k = cap;
	return dependents ? x->drv->cuGraphNodeGetDependentNodes_v2(n, v, ed, k)
			  : x->drv->cuGraphNodeGetDependencies_v2(n, v, ed, k);
}

/* The copy a bounce's host node @n stands beside, or @n itself. */
static CUgraphNode rep(struct vc_cu_session *x, CUgraphNode n)
{
	CUgraphEdgeData ed[2];
	CUgraphNode v[2];
	uint32_t dir = bounce_dir(x, n);
	size_t k;

	/* The copy into the bounce is its host node's one dependency; the
	 * copy out of it is its host node's one dependent. */
	if (!dir || neighbours(x, n, dir == VC_CU_BOUNCE_IN, v, ed, 2, &k) || k != 1)
		return n;
	return v[0];
}

/*
 * The companion of copy @n on the side its edges leave from (@from) or end
 * at: a host node of direction VC_CU_BOUNCE_OUT among its dependents, or of
 * VC_CU_BOUNCE_IN among its dependencies; NULL when it has none there.
 */
static CUgraphNode companion(struct vc_cu_session *x, CUgraphNode n, bool from)
{
	CUgraphNode stack[NEIGHBOURS_STACK], *v = stack, found = NULL;
	CUgraphEdgeData edst[NEIGHBOURS_STACK], *ed = edst;
	uint32_t want = from ? VC_CU_BOUNCE_OUT : VC_CU_BOUNCE_IN;
	CUgraphNodeType t;
	size_t k = 0;

	if (x->drv->cuGraphNodeGetType(n, &t) || t != CU_GRAPH_NODE_TYPE_MEMCPY ||
	    neighbours(x, n, from, NULL, NULL, 0, &k) || !k)
		return NULL;
	if (k > NEIGHBOURS_STACK) {
		v = calloc(k, sizeof(*v));
		ed = calloc(k, sizeof(*ed));
	}
	if (v && ed && !neighbours(x, n, from, v, ed, k, &k))
		for (size_t i = 0; i < k && !found; i++)
			if (bounce_dir(x, v[i]) == want && rep(x, v[i]) == n)
				found = v[i];
	if (v != stack)
		free(v);
	if (ed != edst)
		free(ed);
	return found;
}

/* The direction of a copy with sides of @src_kind and @dst_kind. */
static uint32_t copy_dir(uint32_t src_kind, uint32_t dst_kind)
{
	return src_kind == VC_CU_MEM_BOUNCE ? VC_CU_BOUNCE_IN : dst_kind == VC_CU_MEM_BOUNCE ? VC_CU_BOUNCE_OUT : 0;
}

/* A companion's parameters: the guest's pair @cookie, its record marked @dir. */
static int companion_params(struct vc_cu_session *x, uint64_t cookie, uint32_t dir, CUgraphNodeParams *hp)
{
	memset(hp, 0, sizeof(*hp));
	hp->type = CU_GRAPH_NODE_TYPE_HOST;
	return vc_cu_graph_host_params(x, cookie, dir, (CUDA_HOST_NODE_PARAMS *)&hp->host);
}

int vc_cu_graph_bounce_add(struct vc_cu_session *x, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
			   const CUgraphNodeParams *np, uint32_t src_kind, uint32_t dst_kind, uint64_t cookie,
			   CUgraphNode *node)
{
	uint32_t dir = copy_dir(src_kind, dst_kind);
	struct vc_cu_graphs *g = vc_cu_graph_state(x);
	CUgraphNode host = NULL, copy = NULL;
	CUgraphNodeParams hp;
	int rc;

	if (!dir)
		return x->drv->cuGraphAddNode_v2(node, graph, ndeps ? deps : NULL, NULL, ndeps,
						 (CUgraphNodeParams *)np);
	if (src_kind == dst_kind)
		return CUDA_ERROR_NOT_SUPPORTED; /* the guest sends one bounce at most */
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = companion_params(x, cookie, dir, &hp)))
		return rc;
	if (dir == VC_CU_BOUNCE_IN) {
		if ((rc = x->drv->cuGraphAddNode_v2(&host, graph, ndeps ? deps : NULL, NULL, ndeps, &hp)))
			return rc;
		if ((rc = x->drv->cuGraphAddNode_v2(&copy, graph, &host, NULL, 1, (CUgraphNodeParams *)np)))
			goto err_host;
	} else {
		if ((rc = x->drv->cuGraphAddNode_v2(&copy, graph, ndeps ? deps : NULL, NULL, ndeps,
						    (CUgraphNodeParams *)np)))
			return rc;
		if ((rc = x->drv->cuGraphAddNode_v2(&host, graph, &copy, NULL, 1, &hp)))
			goto err_copy;
	}
	g->bounced = true;
	*node = copy;
	return 0;
err_copy:
	x->drv->cuGraphDestroyNode(copy);
	return rc;
err_host:
	x->drv->cuGraphDestroyNode(host);
	return rc;
}

/* What a disabled copy's companion runs. */
static void CUDA_CB idle(void *arg)
{
	(void)arg;
}

/* The pair companion @c runs in executable graph @exec when set there, or NULL. */
static struct vc_cu_bounce_pair *pair_of(struct vc_cu_graphs *g, uint64_t exec, CUgraphNode c)
{
	for (uint32_t i = 0; i < g->npairs; i++)
		if (g->pairs[i].exec == exec && g->pairs[i].c == c)
			return &g->pairs[i];
	return NULL;
}

/* Companion @c runs @hp in executable graph @exec from now on. 0 or OOM. */
static int pair_note(struct vc_cu_session *x, uint64_t exec, CUgraphNode c, const CUDA_HOST_NODE_PARAMS *hp)
{
	struct vc_cu_graphs *g = vc_cu_graph_state(x);
	struct vc_cu_bounce_pair *p;

	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!(p = pair_of(g, exec, c))) {
		if (g->npairs == g->cappairs) {
			uint32_t cap = g->cappairs ? g->cappairs * 2 : 16;
			struct vc_cu_bounce_pair *np = cap <= PAIRS_MAX ? realloc(g->pairs, cap * sizeof(*np)) : NULL;

			if (!np)
				return CUDA_ERROR_OUT_OF_MEMORY;
			g->pairs = np;
			g->cappairs = cap;
		}
		p = &g->pairs[g->npairs++];
		p->exec = exec;
		p->c = c;
	}
	p->hp = *hp;
	return 0;
}

void vc_cu_graph_bounce_forget(struct vc_cu_session *x, uint64_t exec_id)
{
	struct vc_cu_graphs *g = x->graphs;

	for (uint32_t i = 0; g && i < g->npairs;)
		if (g->pairs[i].exec == exec_id)
			g->pairs[i] = g->pairs[--g->npairs];
		else
			i++;
}

int vc_cu_graph_bounce_set(struct vc_cu_session *x, CUgraphExec exec, uint64_t exec_id, CUgraphNode n,
			   CUgraphNodeParams *np, uint32_t src_kind, uint32_t dst_kind, uint64_t cookie)
{
	uint32_t dir = copy_dir(src_kind, dst_kind);
	CUgraphNode c = vc_cu_graph_bounce_companion(x, n);
	CUgraphNodeParams hp;
	unsigned on = 1;
	int rc;

	if (!c && !dir)
		return exec ? x->drv->cuGraphExecNodeSetParams(exec, n, np) : x->drv->cuGraphNodeSetParams(n, np);
	if (!c || !dir || src_kind == dst_kind || bounce_dir(x, c) != dir)
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((rc = companion_params(x, cookie, dir, &hp)))
		return rc;
	if ((rc = exec ? x->drv->cuGraphExecNodeSetParams(exec, n, np) : x->drv->cuGraphNodeSetParams(n, np)))
		return rc;
	if (!exec)
		return x->drv->cuGraphNodeSetParams(c, &hp);
	/* Kept for an enable to come; only a new entry can fail, and without
	 * one an enable takes the graph's pair. */
	pair_note(x, exec_id, c, (CUDA_HOST_NODE_PARAMS *)&hp.host);
	/* A copy disabled there keeps its companion idle until enabled. */
	if (!x->drv->cuGraphNodeGetEnabled(exec, n, &on) && !on)
		hp.host.fn = idle;
	return x->drv->cuGraphExecNodeSetParams(exec, c, &hp);
}

CUgraphNode vc_cu_graph_bounce_rep(struct vc_cu_session *x, CUgraphNode n)
{
	return n && any(x) ? rep(x, n) : n;
}

CUgraphNode vc_cu_graph_bounce_end(struct vc_cu_session *x, CUgraphNode n, bool from)
{
	CUgraphNode c;

	if (!n || !any(x))
		return n;
	c = companion(x, n, from);
	return c ? c : n;
}

CUgraphNode vc_cu_graph_bounce_companion(struct vc_cu_session *x, CUgraphNode n)
{
	CUgraphNode c;

	if (!n || !any(x))
		return NULL;
	c = companion(x, n, true);
	return c ? c : companion(x, n, false);
}

void vc_cu_graph_bounce_list(struct vc_cu_session *x, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *ed,
			     size_t *n, bool drop)
{
	size_t k = 0;

	if (!any(x))
		return;
	for (size_t i = 0; i < *n; i++) {
		CUgraphNode t = rep(x, to[i]), f = from ? rep(x, from[i]) : NULL;

		if (drop && t != to[i])
			continue; /* a companion: its copy is in the list too */
		if (from && f == t)
			continue; /* the edge between a copy and its companion */
		to[k] = t;
		if (from)
			from[k] = f;
		if (ed)
			ed[k] = ed[i];
		k++;
	}
	*n = k;
}

int vc_cu_graph_bounce_enable(struct vc_cu_session *x, CUgraphExec exec, uint64_t exec_id, CUgraphNode n, bool on)
{
	CUgraphNode c = vc_cu_graph_bounce_companion(x, n);
	CUDA_HOST_NODE_PARAMS hp = {.fn = idle};
	const struct vc_cu_bounce_pair *p;
	CUgraphNodeParams np;
	int rc;

	if (!c)
		return 0;
	/* Enabled again: the pair last set in this executable graph, else
	 * the one its node in the graph has. */
	if (on && (p = pair_of(x->graphs, exec_id, c)))
		hp = p->hp;
	else if (on && (rc = x->drv->cuGraphHostNodeGetParams(c, &hp)))
		return rc;
	memset(&np, 0, sizeof(np));
	np.type = CU_GRAPH_NODE_TYPE_HOST;
	np.host.fn = hp.fn;
	np.host.userData = hp.userData;
	return x->drv->cuGraphExecNodeSetParams(exec, c, &np);
}
