/* SPDX-License-Identifier: MIT */
/*
 * graph.h - what the guest's graph files (graph.c, graph_nodes.c,
 * graph_topo.c, graph_exec.c) share: copy sides, the node call, and the
 * (function, data) pairs of host nodes. Internal to the library.
 */
#ifndef VC_CU_GRAPH_GUEST_H
#define VC_CU_GRAPH_GUEST_H

#include <cuda.h>

#include "vc_cuda_graph.h"

#define VC_GID(h) ((uint64_t)(uintptr_t)(h))

/**
 * vc_cu_graph_copy_sides() - both sides of graph copy @c into @src and @dst:
 * device memory, or page-locked memory of ours (a graph may run long after
 * the call, when staged bytes would be gone). The program's pageable memory
 * on one side becomes a bounce buffer (VC_CU_MEM_BOUNCE) whose host pair's
 * cookie goes into *@cookie (else 0); on both sides, CUDA_ERROR_NOT_SUPPORTED.
 * The host decides whether the node may have one.
 */
CUresult vc_cu_graph_copy_sides(const CUDA_MEMCPY3D *c, struct vc_cu_copy_side *src, struct vc_cu_copy_side *dst,
				uint64_t *cookie);

/**
 * vc_cu_graph_add_edges() - add @node after @deps (@n of them) with edge data
 * @edges through cuGraphAddDependencies_v2; on failure @node is destroyed.
 */
CUresult vc_cu_graph_add_edges(CUgraph g, CUgraphNode node, const CUgraphNode *deps,
			       const CUgraphEdgeData *edges, size_t n);

/** vc_cu_graph_edges_plain() - whether edge data @edges (@n, may be NULL) are all the default. */
int vc_cu_graph_edges_plain(const CUgraphEdgeData *edges, size_t n);

/* A host node's function and its data, as the guest gave them. */
struct vc_cu_host_pair {
	CUhostFn fn;
	void *data;
};

/** vc_cu_graph_pair_cookie() - the cookie of pair (@fn, @data), made on first use (graph_host.c). */
CUresult vc_cu_graph_pair_cookie(CUhostFn fn, void *data, uint64_t *cookie);

/** vc_cu_graph_pair() - the pair behind @cookie into *@out; 0 when it is none of ours. */
int vc_cu_graph_pair(uint64_t cookie, struct vc_cu_host_pair *out);

#endif /* VC_CU_GRAPH_GUEST_H */
