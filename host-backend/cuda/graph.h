/* SPDX-License-Identifier: MIT */
/*
 * graph.h - what the executor's graph files share (graph.c, graph_nodes.c,
 * graph_topo.c, graph_exec.c): node ids that belong to their graph, copy
 * sides, device ranges a node may touch, and the guest's host functions and
 * user object destructors, which the driver calls through records of ours.
 */
#ifndef VC_CU_GRAPH_H
#define VC_CU_GRAPH_H

#include "cuda/exec_priv.h"
#include "vc_cuda_graph.h"

/**
 * vc_cu_graph_publish_node() - the id of node @node of graph (or owning node)
 * id @owner; it goes when its owner goes.
 */
int vc_cu_graph_publish_node(struct vc_cu_session *x, uint64_t owner, void *node, uint64_t *id);

/** vc_cu_graph_publish_owned() - vc_cu_publish() handle @real of @kind, owned by id @owner. */
int vc_cu_graph_publish_owned(struct vc_cu_session *x, int kind, uint64_t owner, void *real, uint64_t *id);

/**
 * vc_cu_graph_lookup_nodes() - @n node ids at @ids (unaligned) to the
 * driver's nodes, as dependencies: the nodes edges leave from (a bounced
 * copy's companion, graph_bounce.c).
 */
int vc_cu_graph_lookup_nodes(struct vc_cu_session *x, const uint8_t *ids, uint32_t n, CUgraphNode *nodes);

/** vc_cu_graph_lookup_targets() - vc_cu_graph_lookup_nodes() for the nodes edges reach. */
int vc_cu_graph_lookup_targets(struct vc_cu_session *x, const uint8_t *ids, uint32_t n, CUgraphNode *nodes);

/**
 * vc_cu_graph_forget_tree() - forget every node and graph id that table slot
 * @idx owns, and what they own in turn (not @idx itself).
 */
void vc_cu_graph_forget_tree(struct vc_cu_session *x, uint32_t idx);

/**
 * vc_cu_graph_copy_side() - one side of a memcpy node: device memory as it is,
 * pinned pool memory at its host address, checked to hold every byte.
 */
int vc_cu_graph_copy_side(struct vc_cu_session *x, const struct vc_cu_copy_side *w, uint64_t width,
			  uint64_t height, uint64_t depth, CUmemorytype *type, const void **host, CUdeviceptr *dev,
			  size_t *xb, size_t *y, size_t *z, size_t *pitch, size_t *pheight);

/**
 * vc_cu_graph_check_range() - is [@ptr, @ptr + @len) the session's device
 * memory (vc_cu_check_range()) or inside a memory allocation node's range?
 */
int vc_cu_graph_check_range(struct vc_cu_session *x, uint64_t ptr, uint64_t len);

/** vc_cu_graph_note_alloc() - an allocation node reserved [@dptr, @dptr + @size). 0 or OOM. */
int vc_cu_graph_note_alloc(struct vc_cu_session *x, uint64_t dptr, uint64_t size);

/* A bounce's host node (graph_bounce.c): it fills the bounce before the copy
 * that reads it, or empties it after the copy that writes it. */
#define VC_CU_BOUNCE_IN 1u
#define VC_CU_BOUNCE_OUT 2u

/**
 * vc_cu_graph_host_params() - a host node's parameters for the driver: a
 * function of ours that runs the guest's pair @cookie; @bounce (a
 * VC_CU_BOUNCE_* or 0) marks the pair's record as a bounce's. 0 or OOM.
 */
int vc_cu_graph_host_params(struct vc_cu_session *x, uint64_t cookie, uint32_t bounce, CUDA_HOST_NODE_PARAMS *hp);

/** vc_cu_graph_host_cookie() - the guest's cookie behind host node parameters @hp (0 when none). */
int vc_cu_graph_host_cookie(const CUDA_HOST_NODE_PARAMS *hp, uint64_t *cookie);

/** vc_cu_graph_host_bounce() - the VC_CU_BOUNCE_* of host node parameters @hp; 0 for any other. */
uint32_t vc_cu_graph_host_bounce(const CUDA_HOST_NODE_PARAMS *hp);

/**
 * vc_cu_graph_bounce_add() - add memcpy node @np to @graph after @ndeps
 * @deps, into *@node; with a VC_CU_MEM_BOUNCE side (@src_kind, @dst_kind),
 * beside the host node running the guest's pair @cookie (graph_bounce.c).
 */
int vc_cu_graph_bounce_add(struct vc_cu_session *x, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
			   const CUgraphNodeParams *np, uint32_t src_kind, uint32_t dst_kind, uint64_t cookie,
			   CUgraphNode *node);

/**
 * vc_cu_graph_bounce_set() - set copy @n's parameters @np in executable graph
 * @exec of id @exec_id (NULL: in its graph); a bounced copy stays bounced in the same
 * direction (@src_kind, @dst_kind, @cookie as for vc_cu_graph_bounce_add()),
 * its companion running the new pair; else CUDA_ERROR_NOT_SUPPORTED.
 */
int vc_cu_graph_bounce_set(struct vc_cu_session *x, CUgraphExec exec, uint64_t exec_id, CUgraphNode n,
			   CUgraphNodeParams *np, uint32_t src_kind, uint32_t dst_kind, uint64_t cookie);

/**
 * vc_cu_graph_bounce_end() - the node an edge leaving (@from) or reaching
 * node @n joins: a bounced copy's companion on that side, else @n.
 */
CUgraphNode vc_cu_graph_bounce_end(struct vc_cu_session *x, CUgraphNode n, bool from);

/** vc_cu_graph_bounce_rep() - the copy a companion @n stands beside, or @n itself. */
CUgraphNode vc_cu_graph_bounce_rep(struct vc_cu_session *x, CUgraphNode n);

/** vc_cu_graph_bounce_companion() - the companion host node of copy @n, or NULL. */
CUgraphNode vc_cu_graph_bounce_companion(struct vc_cu_session *x, CUgraphNode n);

/**
 * vc_cu_graph_bounce_enable() - copy @n was enabled (@on) or disabled in
 * @exec of id @exec_id: its companion there moves the bytes, or does
 * nothing. 0 or the driver's error.
 */
int vc_cu_graph_bounce_enable(struct vc_cu_session *x, CUgraphExec exec, uint64_t exec_id, CUgraphNode n, bool on);

/** vc_cu_graph_bounce_forget() - executable graph @exec_id was destroyed or updated: its companions' pairs go. */
void vc_cu_graph_bounce_forget(struct vc_cu_session *x, uint64_t exec_id);

/**
 * vc_cu_graph_bounce_list() - a list of @n nodes @to (edges: with @from and
 * edge data @ed, each may be NULL) as the guest sees it: companions as their
 * copies, the edges between the two gone; with @drop, companions left out.
 */
void vc_cu_graph_bounce_list(struct vc_cu_session *x, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *ed,
			     size_t *n, bool drop);

/* Graph memory charged per executable graph (graph_exec.c). */
struct vc_cu_graph_charge {
	uint64_t exec; /* executable graph id */
	uint64_t bytes;
	int32_t dev;   /* the device its memory is counted on (the instantiating context's) */
};

/* What a session keeps for its graphs (graph_state.c). */
struct vc_cu_graphs {
	struct vc_cu_graph_anchor *a; /* host node records, reached by the driver's calls */
	struct vc_cu_graph_charge *charges;
	uint32_t ncharges, capcharges;
	struct vc_cu_graph_range *ranges; /* memory allocation nodes' addresses */
	uint32_t nranges, capranges;
	char *dot; /* the last dot print, handed out in pieces */
	uint64_t dot_len, dot_graph;
	bool bounced; /* a copy with a bounce was added (graph_bounce.c) */
	struct vc_cu_bounce_pair *pairs; /* what companions run in executable graphs, where set there */
	uint32_t npairs, cappairs;
};

/** vc_cu_graph_state() - the session's graph state, made on first use; NULL without memory. */
struct vc_cu_graphs *vc_cu_graph_state(struct vc_cu_session *x);

/**
 * vc_cu_graph_close() - the session closes (callbacks stopped): graphs owned
 * by nodes are forgotten (their owner destroys them), host nodes and
 * destructors queue nothing more for the guest, and the references the
 * guest still holds on user objects are released.
 */
void vc_cu_graph_close(struct vc_cu_session *x);

/** vc_cu_graph_fini() - free the graph state (contexts destroyed: no host node runs any more). */
void vc_cu_graph_fini(struct vc_cu_session *x);

#endif /* VC_CU_GRAPH_H */
