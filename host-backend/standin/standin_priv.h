/* SPDX-License-Identifier: MIT */
/*
 * standin_priv.h - what the files of the CI STAND-IN FOR THE CUDA DRIVER
 * (standin.h) share: the object records, the global state and the helpers
 * that more than one API family calls. One file per API family fills its part
 * of the driver table (vc_si_fill_*()); core.c holds the rest.
 *
 * One per process, like the real driver, and thread-safe like it: sessions
 * are served on threads of their own. Objects are small heap records with a
 * tag, so that a handle of one kind is never taken for another; device memory
 * is a vc_smem owned by contexts.
 */
#ifndef VC_STANDIN_PRIV_H
#define VC_STANDIN_PRIV_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "standin/standin.h"
#include "standin/mem.h"

/* A module's or library's global, made when first asked for: the image is
 * not parsed, so every global has GLOBAL_BYTES of zeroed device memory. */
#define GLOBAL_BYTES 65536u
struct sglobal {
	struct sglobal *next;
	char name[128];
	CUdeviceptr d;
};

enum tag { T_CTX = 0x43545831, T_MOD, T_LIB, T_FUNC, T_KERN, T_STREAM, T_EVENT, T_POOL, T_GRAPH, T_NODE,
	   T_EXEC, T_UOBJ, T_GREEN, T_RDESC };

/* Every stand-in library holds this many kernels (more than one page of
 * cuLibraryEnumerateKernels), named standin_kernel_<i>. */
#define LIB_KERNELS 600u

struct obj {
	enum tag tag;
	struct obj *ctx;   /* owning context (contexts: themselves) */
	struct obj *parent; /* the module, library or kernel that made it, deleted with it; NULL: none */
	struct obj *lnext, *lprev; /* every live object (core.c); lnext: the reuse list once deleted */
	unsigned flags;
	int priority;
	int dev;           /* contexts: their device */
	int printer;       /* functions and kernels: VC_STANDIN_PRINTF_NAME */
	int store;         /* functions and kernels: VC_STANDIN_STORE_NAME */
	uint64_t id;
	uint64_t done_at; /* events: when the simulated work before them ends */
	char name[64];    /* functions and kernels */
	int max_dyn_smem; /* functions and kernels: raised with cuFuncSetAttribute, 0: the default */
	struct obj **kern; /* libraries: their kernels, made at the first enumeration */
	struct obj *mfunc; /* modules: their one function (standin_function), once listed; kernels: their function */
	struct sglobal *globals; /* modules and libraries: globals asked for so far */
	uint64_t pool_threshold; /* pools: CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
	int pool_int[3];         /* pools: the three int attributes, by attribute - 1 */
	unsigned pool_handles;   /* pools: the shareable handle types they were made for */
	/* graphs: their nodes in the order they were added; executable
	 * graphs: their own copy of the graph (graph_run.c) */
	struct obj **nodes;
	size_t nnodes;
	struct obj *graph;
	struct obj *origin;  /* a graph's clone: the graph it was cloned from */
	unsigned long long exec_flags; /* executable graphs: instantiation flags */
	struct suref *urefs; /* graphs: user object references they own */
	size_t nurefs;
	struct snode *node; /* nodes: what they do */
};

/* A user object, and a graph's references to one (graph_run.c). */
struct suobj {
	uint32_t tag; /* T_UOBJ while alive */
	unsigned refs;
	CUhostFn destroy;
	void *ptr;
	struct suobj *next_free;
};
struct suref {
	struct suobj *u;
	unsigned count;
};

#define SNODE_ATTRS 8
/* A graph node's work, kept apart so that other objects stay small. */
struct snode {
	CUgraphNodeType type;
	struct obj **deps;          /* incoming edges, with their data */
	CUgraphEdgeData *edata;
	size_t ndeps;
	struct obj *orig;           /* a clone's node: the node it was cloned from */
	struct obj *upd;            /* an executable graph's node: the update graph's node */
	int disabled;               /* executable graphs' nodes */
	CUDA_KERNEL_NODE_PARAMS kp; /* kernelParams and extra not kept */
	uint8_t params[4096];       /* the packed parameters */
	size_t psize;
	struct {
		CUlaunchAttributeID id;
		CUlaunchAttributeValue v;
	} attrs[SNODE_ATTRS];
	unsigned nattrs;
	CUDA_MEMCPY3D copy;
	CUDA_MEMSET_NODE_PARAMS_v2 mset;
	CUDA_HOST_NODE_PARAMS host;
	CUevent event;
	struct obj *child;          /* child graph nodes: their own graph */
	CUDA_MEM_ALLOC_NODE_PARAMS alloc; /* accessDescs: descs */
	CUmemAccessDesc *descs;
	int alloc_owned;            /* the node made the allocation (clones share it) */
	CUdeviceptr fptr;           /* memory free nodes */
	CUDA_BATCH_MEM_OP_NODE_PARAMS batch; /* paramArray: ops */
	CUstreamBatchMemOpParams *ops;
	CUgraphConditionalHandle chandle;
	CUgraphConditionalNodeType ctype;
	struct obj **bodies;        /* conditional nodes: their body graphs */
	unsigned nbodies;
};

/* ---- the global state (core.c) ------------------------------------------------- */

extern struct vc_smem g_mem;   /* the "device" memory, under g_mu */
extern pthread_mutex_t g_mu;   /* the stand-in's shared state */
extern uint64_t g_limit;       /* bytes of "device" memory, set once by the first vc_cuda_driver_standin() */
extern uint64_t g_launches;    /* kernel launches recorded, under g_mu */
extern __thread struct obj *t_ctx; /* the calling thread's current context, or NULL */

/* Devices: one, or VCUDA_STANDIN_DEVICES (up to 4) alike, each with the
 * recorded profile, sharing the one memory (device.c). */
#define VC_SI_DEVICES_MAX 4
extern int vc_si_ndev;

/** vc_si_dev_ok() - whether @d is one of the stand-in's devices. */
static inline int vc_si_dev_ok(int d)
{
	return d >= 0 && d < vc_si_ndev;
}
/* The simulated engine (see core.c): kernel time per launch in ns (0: work
 * completes at once), and when this process's queued work ends (under g_mu). */
extern uint64_t g_sim_ns, g_busy_until;

/* ---- objects (core.c) ------------------------------------------------------------ */

/** vc_si_new_obj() - a zeroed record tagged @t, of the current context, or NULL. */
struct obj *vc_si_new_obj(enum tag t);

/** vc_si_make() - a new object tagged @t in *@out; CUDA_ERROR_OUT_OF_MEMORY if none. */
CUresult vc_si_make(enum tag t, void **out);

/** vc_si_is() - whether handle @h is an object tagged @t (special handles, small integers, are not). */
int vc_si_is(const void *h, enum tag t);

/** vc_si_stream_ok() - whether @s is a stream, NULL or one of the two special handles. */
int vc_si_stream_ok(CUstream s);

/**
 * vc_si_del_obj() - delete object @h and what it owns (its kernels, module
 * function, nodes, globals' records, and the objects it is the parent of).
 * The record is kept for reuse, never freed, so that a stale handle reads a
 * dead tag instead of freed memory.
 */
void vc_si_del_obj(void *h);

/**
 * vc_si_memfd_named() - whether descriptor @fd is a memfd whose name starts
 * with @name (what the stand-in exports: its allocations', its pools').
 */
int vc_si_memfd_named(int fd, const char *name);

/** vc_si_adopt() - @child is deleted with @parent. */
void vc_si_adopt(void *child, void *parent);

/**
 * vc_si_del_ctx_objects() - delete what lived in context @c: its modules
 * (with their functions), streams and events. Libraries, pools and graphs
 * belong to no context and stay.
 */
void vc_si_del_ctx_objects(void *c);

/* ---- the simulated engine (core.c) ----------------------------------------------- */

/** vc_si_sim_now() - CLOCK_MONOTONIC in ns. */
uint64_t vc_si_sim_now(void);

/** vc_si_sim_submit() - with g_mu held: when a launch made at @now ends (ns). */
uint64_t vc_si_sim_submit(uint64_t now);

/** vc_si_sim_drain() - wait for the simulated work queued so far. */
void vc_si_sim_drain(void);

/**
 * vc_si_sim_setup() - read the simulated engine's settings
 * (VCUDA_STANDIN_KERNEL_US, VCUDA_STANDIN_ENGINE) and open a shared engine.
 */
void vc_si_sim_setup(void);

/* ---- helpers of the API families ------------------------------------------------- */

/** vc_si_need_ctx() - CUDA_SUCCESS with a current context, else CUDA_ERROR_INVALID_CONTEXT (core.c). */
CUresult vc_si_need_ctx(void);

/** vc_si_printf_flush() - a synchronisation point: write the printf double's queued lines (printf.c). */
void vc_si_printf_flush(void);

/** vc_si_printf_queue() - with g_mu held: a launch of the printf double prints @n lines at the next flush. */
void vc_si_printf_queue(int n);

/** vc_si_synced() - vc_si_printf_flush(), then @rc: for calls that synchronise (printf.c). */
CUresult vc_si_synced(CUresult rc);

/** vc_si_wait_host_funcs() - wait until no host function is queued or running (stream.c). */
void vc_si_wait_host_funcs(void);

/** vc_si_alloc() - cuMemAlloc: @n bytes of the current context's device memory (memory.c). */
CUresult vc_si_alloc(CUdeviceptr *d, size_t n);

/** vc_si_alloc_async() - cuMemAllocAsync: vc_si_alloc() once @s is a valid stream (memory.c). */
CUresult vc_si_alloc_async(CUdeviceptr *d, size_t n, CUstream s);

/** vc_si_htod() - cuMemcpyHtoD, a synchronisation point (memory.c). */
CUresult vc_si_htod(CUdeviceptr d, const void *s, size_t n);

/** vc_si_dtoh() - cuMemcpyDtoH, a synchronisation point (memory.c). */
CUresult vc_si_dtoh(void *d, CUdeviceptr s, size_t n);

/** vc_si_dtod() - cuMemcpyDtoD, a synchronisation point (memory.c). */
CUresult vc_si_dtod(CUdeviceptr d, CUdeviceptr s, size_t n);

/* ---- stream memory operations (memops.c): what synchronisations see ------------------ */

/**
 * vc_si_host_ptr() - [@a, @a + @len) inside a range registered with
 * cuMemHostRegister (its device address is itself): the pointer, else NULL
 * (hostreg.c).
 */
uint8_t *vc_si_host_ptr(uint64_t a, uint64_t len);

/** vc_si_memops_pending() - whether stream @s has memory operations held by a wait. */
int vc_si_memops_pending(CUstream s);

/** vc_si_memops_drain() - wait until stream @s's memory operations ran (or its context went). */
CUresult vc_si_memops_drain(CUstream s);

/** vc_si_memops_drain_ctx() - wait until every stream of context @c ran its memory operations. */
CUresult vc_si_memops_drain_ctx(const void *c);

/** vc_si_memops_mark() - event @e is recorded on @s: it completes after @s's queued operations. */
void vc_si_memops_mark(CUevent e, CUstream s);

/** vc_si_memops_event_pending() - whether event @e waits for held memory operations. */
int vc_si_memops_event_pending(CUevent e);

/** vc_si_memops_event_wait() - wait until it does not (or its context went). */
CUresult vc_si_memops_event_wait(CUevent e);

/** vc_si_memops_stream_gone() - stream @s is destroyed: its queue drains on its own. */
void vc_si_memops_stream_gone(CUstream s);

/** vc_si_memops_ctx_gone() - context @c is destroyed: its queues go, waits on them end. */
void vc_si_memops_ctx_gone(const void *c);
/**
 * vc_si_copy2d_any() - a 2D copy with any kind of side (arrays, host
 * memory, device memory at offsets), row by row (array.c).
 */
CUresult vc_si_copy2d_any(const CUDA_MEMCPY2D *c);

/* ---- the table: each family sets its entries (core.c's build() calls them) ---------- */

/** vc_si_fill_device() - driver version and device queries (device.c). */
void vc_si_fill_device(struct vc_cuda_driver *d);

/** vc_si_fill_ctx() - contexts (ctx.c). */
void vc_si_fill_ctx(struct vc_cuda_driver *d);

/** vc_si_fill_memory() - allocations, copies, memsets, page-locked allocations (memory.c). */
void vc_si_fill_memory(struct vc_cuda_driver *d);

/**
 * vc_si_fill_memmisc() - sparse array mapping, decompression, pools of a
 * location, the current pool, cuPointerSetAttribute (memmisc.c); after
 * vc_si_fill_pool(), whose cuDeviceGetMemPool it replaces.
 */
void vc_si_fill_memmisc(struct vc_cuda_driver *d);

/** vc_si_fill_pool() - memory pools and allocations from them (pool.c). */
void vc_si_fill_pool(struct vc_cuda_driver *d);

/** vc_si_fill_module() - modules, libraries, functions and kernels (module.c). */
void vc_si_fill_module(struct vc_cuda_driver *d);

/** vc_si_fill_launch() - kernel launches and occupancy (launch.c). */
void vc_si_fill_launch(struct vc_cuda_driver *d);

/** vc_si_fill_graph() - graphs and stream capture (graph.c). */
void vc_si_fill_graph(struct vc_cuda_driver *d);

/**
 * vc_si_obj_fini - called with the object lock held before core.c deletes a
 * graph or a node: frees what it holds besides its record (edges, copies of
 * arrays, user object references). Set by graph.c when it fills the table.
 */
extern void (*vc_si_obj_fini)(struct obj *o);

/** vc_si_graph_clone() - a copy of graph @g (its nodes and edges, child graphs too) in *@out (graph.c). */
CUresult vc_si_graph_clone(struct obj *g, struct obj **out);

/** vc_si_graph_set() - node parameters @np into node @n; @adding: a new node (graph.c). */
CUresult vc_si_graph_set(struct obj *n, CUgraphNodeParams *np, int adding);

/** vc_si_fill_graph_get() - graph nodes' parameters read back (graph_get.c). */
void vc_si_fill_graph_get(struct vc_cuda_driver *d);

/** vc_si_fill_graph_run() - executable graphs, user objects, the dot print (graph_run.c). */
void vc_si_fill_graph_run(struct vc_cuda_driver *d);

/** vc_si_fill_stream() - streams, events and host functions (stream.c). */
void vc_si_fill_stream(struct vc_cuda_driver *d);

/** vc_si_fill_export() - cuGetExportTable (export.c). */
void vc_si_fill_export(struct vc_cuda_driver *d);

/** vc_si_fill_link() - the JIT linker test double and loads with JIT options (link.c). */
void vc_si_fill_link(struct vc_cuda_driver *d);
/** vc_si_fill_managed() - managed memory, advice, prefetches, range attributes (managed.c). */
void vc_si_fill_managed(struct vc_cuda_driver *d);

/** vc_si_lib_global() - cuLibraryGetGlobal: library @l's global @name, made when first asked (module.c). */
CUresult vc_si_lib_global(CUdeviceptr *d, size_t *n, CUlibrary l, const char *name);
/** vc_si_fill_vmm() - virtual memory management and IPC (vmm.c). */
void vc_si_fill_vmm(struct vc_cuda_driver *d);
/** vc_si_fill_hostreg() - cuMemHostRegister and its pair (hostreg.c). */
void vc_si_fill_hostreg(struct vc_cuda_driver *d);

/** vc_si_fill_memops() - stream memory operations and attributes (memops.c). */
void vc_si_fill_memops(struct vc_cuda_driver *d);

/** vc_si_fill_texref() - texture and surface references; wraps the module loads (texref.c). */
void vc_si_fill_texref(struct vc_cuda_driver *d);
/** vc_si_fill_tensormap() - tensor maps, as a test double (tensormap.c). */
void vc_si_fill_tensormap(struct vc_cuda_driver *d);

/** vc_si_fill_ctxdev() - contexts with affinity, peer access, device properties, profiler (ctxdev.c). */
void vc_si_fill_ctxdev(struct vc_cuda_driver *d);
/** vc_si_fill_array() - arrays, texture and surface objects, 3D copies (array.c). */
void vc_si_fill_array(struct vc_cuda_driver *d);

/**
 * vc_si_fill_green() - device resources, green contexts and their streams
 * (green.c); after vc_si_fill_ctxdev(): it answers cuStreamGetCtx_v2 and
 * cuStreamGetGreenCtx for green contexts' streams too.
 */
void vc_si_fill_green(struct vc_cuda_driver *d);

/** vc_si_fill_logs() - the driver's error log and its callbacks (logs.c). */
void vc_si_fill_logs(struct vc_cuda_driver *d);

/** vc_si_log() - a failed call @fn answered @rc: log it as the driver logs API errors (logs.c). Returns @rc. */
CUresult vc_si_log(const char *fn, CUresult rc);

#endif /* VC_STANDIN_PRIV_H */
