/* SPDX-License-Identifier: MIT */
/*
 * vc_cuda_graph.h - wire structs of the graph operations both of whose sides
 * are hand-written: nodes of every kind but kernels (vcGraphNode), a graph's
 * edges and node lists (vcGraphEdges), dependencies added and removed
 * (vcGraphDeps), and the calls that hand back node or graph ids, executable
 * graph updates, instantiation, the dot print, user objects and capture into
 * an existing graph. Opcodes come from the generated vc_cuda_wire.h; every
 * request starts with the guest thread's context id. Part of the ABI: the
 * build hashes this file into VC_ABI_HASH.
 */
#ifndef VC_CUDA_GRAPH_H
#define VC_CUDA_GRAPH_H

#include <assert.h>
#include <stdint.h>

#include "vc_cuda_manual.h"

/* Host-callback cookies of graphs (the guest's own numbering: cuLaunchHostFunc's
 * cookies never have these bits): a host node's (function, data) pair, or a
 * user object's destructor, which the guest runs when the host queues it. */
#define VC_CU_COOKIE_GRAPH (1ull << 63)
#define VC_CU_COOKIE_UOBJ (1ull << 62)

/* ---- nodes of every kind but kernels: vcGraphNode ------------------------------- */
#define VC_CU_GN_ADD 0u      /* cuGraphAdd*Node, cuGraphAddNode(_v2) */
#define VC_CU_GN_SET 1u      /* cuGraph*NodeSetParams, cuGraphNodeSetParams */
#define VC_CU_GN_EXEC_SET 2u /* cuGraphExec*NodeSetParams, cuGraphExecNodeSetParams */
#define VC_CU_GN_GET 3u      /* cuGraph*NodeGetParams */
#define VC_CU_GN_EXTRA_MAX 128u /* access descriptors (alloc) or operations (batch) */
#define VC_CU_GN_BODIES_MAX 64u /* body graphs of a conditional node */

/*
 * A node's parameters, one flat struct for every kind (@type says which
 * fields count). Handles are ids; host memory of a memcpy node is an offset
 * in the pinned pool (struct vc_cu_copy_side). The host function of a host
 * node is the guest's: @cookie names the (function, data) pair the guest
 * keeps, run in the guest through the host-callback queue at every launch.
 */
struct vc_cu_node_body {
	int32_t type;    /* CUgraphNodeType */
	uint32_t nextra; /* entries after the dependencies: CUmemAccessDesc or CUstreamBatchMemOpParams */
	uint64_t kctx;   /* context id of a memcpy, memset, batch or conditional node; 0: the current one */
	/* memset */
	uint64_t dst, pitch, width, height;
	uint32_t value, elem;
	/* memcpy */
	struct vc_cu_copy_side src, cdst;
	uint64_t cwidth, cheight, cdepth;
	/* host; a memcpy node's bounce pair (VC_CU_MEM_BOUNCE) */
	uint64_t cookie;
	/* event record, event wait */
	uint64_t event;
	/* child graph */
	uint64_t graph;
	uint32_t ownership; /* CUgraphChildGraphNodeOwnership */
	/* batch memory operations (their count is nextra) */
	uint32_t flags;
	/* memory allocation (and free: dptr) */
	uint8_t props[sizeof(CUmemPoolProps)];
	uint64_t bytesize, dptr;
	/* conditional */
	uint64_t handle;
	int32_t ctype; /* CUgraphConditionalNodeType */
	uint32_t csize;
};
static_assert(sizeof(CUmemAccessDesc) == 12, "access descriptors travel as 12 bytes");
static_assert(sizeof(CUstreamBatchMemOpParams) == 48, "batch operations travel as 48 bytes");

/* After the struct: ndeps node ids, then b.nextra extra entries. */
struct vc_cu_req_graph_node {
	uint64_t ctx;
	uint32_t action; /* VC_CU_GN_* */
	uint32_t ndeps;
	uint64_t graph; /* add: the graph; exec set: the executable graph */
	uint64_t node;  /* set, exec set, get */
	struct vc_cu_node_body b;
};
/* Reply: the node (add), a memory allocation node's address (add), and
 * nbodies body graph ids of a conditional node in the reply data (add);
 * get: the body, then its extra entries, in the reply data. */
struct vc_cu_rep_graph_node_any {
	uint64_t node;
	uint64_t dptr;
	uint32_t nbodies;
	uint32_t pad;
};
static_assert(sizeof(struct vc_cu_node_body) + VC_CU_GN_EXTRA_MAX * 48 <= VC_DEFAULT_SLOT_SIZE_MIN_DATA,
	      "a node's parameters fit a reply");

/* ---- edges and node lists: vcGraphEdges ----------------------------------------- */
#define VC_CU_GE_EDGES 0u      /* cuGraphGetEdges(_v2) of a graph */
#define VC_CU_GE_ROOTS 1u      /* cuGraphGetRootNodes of a graph */
#define VC_CU_GE_DEPS 2u       /* cuGraphNodeGetDependencies(_v2) of a node */
#define VC_CU_GE_DEPENDENTS 3u /* cuGraphNodeGetDependentNodes(_v2) of a node */
#define VC_CU_GE_PAGE 300u
struct vc_cu_req_graph_edges {
	uint64_t ctx;
	uint64_t handle; /* the graph or the node */
	uint32_t what;   /* VC_CU_GE_* */
	uint32_t want_edges; /* edge data asked for (_v2 with an edgeData array) */
	uint32_t first;
	uint32_t count; /* at most VC_CU_GE_PAGE */
};
/* Reply: the total, and `returned` entries in the reply data. */
struct vc_cu_graph_edge {
	uint64_t from; /* edges: the from node; other lists: 0 */
	uint64_t to;   /* edges: the to node; other lists: the node */
	uint8_t edge[8];
};
static_assert(VC_CU_GE_PAGE * sizeof(struct vc_cu_graph_edge) <= VC_DEFAULT_SLOT_SIZE_MIN_DATA, "a page fits");

/* ---- dependencies: vcGraphDeps ---------------------------------------------------- */
#define VC_CU_GD_MAX 256u
/* After the struct: n from ids, n to ids, and with has_edges n edge data. */
struct vc_cu_req_graph_deps {
	uint64_t ctx;
	uint64_t graph;
	uint32_t n;
	uint32_t remove; /* cuGraphRemoveDependencies(_v2) */
	uint32_t has_edges;
	uint32_t pad;
};

/* ---- calls on a few handles ---------------------------------------------------------- */
/*
 * cuGraphNodeFindInClone (a: node, b: cloned graph), cuGraphChildGraphNodeGetGraph
 * (a: node), cuGraphDestroyNode (a: node), cuGraphExecDestroy (a: exec),
 * cuGraphExecUpdate_v2 (a: exec, b: graph), cuGraphInstantiateWithParams
 * (a: graph, b: upload stream, v0: flags), cuGraphKernelNodeGetAttribute and
 * SetAttribute (a: node, v0: attribute; the value in `value`),
 * cuDeviceGet/SetGraphMemAttribute (v0: device, v1: attribute, the value in
 * the first 8 bytes of `value`), cuStreamBeginCaptureToGraph (a: stream, b:
 * graph, v0: mode; ids and edge data after the struct as for vcGraphDeps,
 * v1 of them), cuStreamUpdateCaptureDependencies_v2 (a: stream, v0: flags,
 * v1 ids and edge data after), cuGraphDebugDotPrint (a: graph, v0: flags,
 * v1: offset of the piece asked for), cuUserObjectCreate (v0: initial count,
 * v1: flags, a: the guest's destructor cookie).
 */
struct vc_cu_req_graph_call {
	uint64_t ctx;
	uint64_t a, b;
	uint64_t v0, v1;
	uint8_t value[64]; /* CUlaunchAttributeValue, or a graph memory attribute */
};
struct vc_cu_rep_graph_call {
	uint64_t h;      /* the node, graph, executable graph or user object */
	uint64_t h2;     /* exec update: the error-from node; instantiate: the error node */
	uint64_t v0;     /* exec update: the result; instantiate: result_out; dot print: total bytes */
	uint64_t v1;     /* exec update, instantiate: the driver's CUresult (the reply comes on failure
			  * too, with the nodes at fault); dot print: this piece's offset */
	uint8_t value[64];
};

#endif /* VC_CUDA_GRAPH_H */
