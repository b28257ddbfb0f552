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

/** vc_cu_graph_lookup_nodes() - @n node ids at @ids (unaligned) to the driver's nodes. */
int vc_cu_graph_lookup_nodes(struct vc_cu_session *x, const uint8_t *ids, uint32_t n, CUgraphNode *nodes);

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

/**
 * vc_cu_graph_host_params() - a host node's parameters for the driver: a
 * function of ours that runs the guest's pair @cookie. 0 or OOM.
 */
int vc_cu_graph_host_params(struct vc_cu_session *x, uint64_t cookie, CUDA_HOST_NODE_PARAMS *hp);

/** vc_cu_graph_host_cookie() - the guest's cookie behind host node parameters @hp (0 when none). */
int vc_cu_graph_host_cookie(const CUDA_HOST_NODE_PARAMS *hp, uint64_t *cookie);

/* Graph memory charged per executable graph (graph_exec.c). */
struct vc_cu_graph_charge {
	uint64_t exec; /* executable graph id */
	uint64_t bytes;
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
