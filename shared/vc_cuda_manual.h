/* SPDX-License-Identifier: MIT */
/*
 * vc_cuda_manual.h - wire structs of the CUDA operations whose both sides are
 * hand-written (contexts, modules and images, launches, memory and copies),
 * and of vcuda's own operations (vc*). Opcodes come from the generated
 * vc_cuda_wire.h; every request starts with the guest thread's context id.
 * Part of the ABI: the build hashes this file into VC_ABI_HASH.
 */
#ifndef VC_CUDA_MANUAL_H
#define VC_CUDA_MANUAL_H

#include <assert.h>
#include <stdint.h>

#include "vc_cuda_wire.h"
#include "vc_wire.h"

/* Reply data a default reply slot holds: slot - reply header - reply struct. */
#define VC_DEFAULT_SLOT_SIZE_MIN_DATA (8192u - 16u - VC_CU_REP_MAX)

/* ---- facts fetched once at cuInit ---------------------------------------- */
#define VC_CU_ATTR_MAX 160 /* > CU_DEVICE_ATTRIBUTE_MAX in CUDA 13.0 */
static_assert(CU_DEVICE_ATTRIBUTE_MAX <= VC_CU_ATTR_MAX, "attribute table size");

struct vc_cu_rep_vcDriverInfo {
	int32_t driver_version;
	int32_t device_count;
};

struct vc_cu_req_vcDeviceInfo {
	uint64_t ctx;
	int32_t dev;
	uint32_t pad;
};
/* Returned in the reply's data area (it is larger than VC_CU_REP_MAX). */
struct vc_cu_device_info {
	char name[256];
	uint8_t uuid[16];
	uint64_t total_mem;
	int32_t pci_domain, pci_bus, pci_device;
	int32_t attr_count;
	int32_t attrs[VC_CU_ATTR_MAX]; /* attrs[a] for a in 1..attr_count-1; 0 where unsupported */
};

/* ---- images (fatbins, cubins, PTX) ---------------------------------------- */
#define VC_CU_IMAGE_MAX (1ull << 30)
struct vc_cu_req_vcImageBegin {
	uint64_t ctx;
	uint64_t size;
};
struct vc_cu_rep_vcImageBegin {
	uint64_t image;
};
/* A piece of an image, from the staging arena or inline after the struct. */
struct vc_cu_req_vcImagePut {
	uint64_t ctx;
	uint64_t image;
	uint64_t offset;
	uint64_t len;
	uint64_t arena_off;
	uint32_t inline_data;
	uint32_t pad;
};
/* vcLoad: cuModuleLoadData(Ex), cuModuleLoadFatBinary or cuLibraryLoadData of
 * the image staged with vcImageBegin/vcImagePut (the load consumes it). JIT
 * and library options are not forwarded: the host driver's defaults apply. */
#define VC_CU_LOAD_MODULE 0u
#define VC_CU_LOAD_LIBRARY 1u
struct vc_cu_req_load {
	uint64_t ctx;
	uint64_t image;
	uint32_t kind; /* VC_CU_LOAD_* */
	uint32_t pad;
};
struct vc_cu_rep_load {
	uint64_t handle;
};

/* ---- contexts ---------------------------------------------------------------- */
struct vc_cu_req_ctx {
	uint64_t ctx;
	uint64_t target; /* context id operated on */
	int32_t dev;
	uint32_t flags;
};
struct vc_cu_rep_ctx {
	uint64_t pctx;
	uint32_t flags;
	int32_t active;
};

/* ---- kernel parameters and launches -------------------------------------------- */
#define VC_CU_PARAMS_MAX 1024 /* parameters per kernel */
struct vc_cu_req_vcFuncParams {
	uint64_t ctx;
	uint64_t func; /* a CUfunction or a CUkernel id */
};
/* Returned in the data area. Parameters live in at most 32 KiB, so 16 bits
 * hold every offset and size. */
struct vc_cu_param_layout {
	uint32_t count;
	uint32_t total; /* bytes of the packed parameter buffer */
	uint32_t max_dyn_smem; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
	uint32_t max_threads;  /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK; 0: not known */
	uint16_t offset[VC_CU_PARAMS_MAX];
	uint16_t size[VC_CU_PARAMS_MAX];
};
static_assert(sizeof(struct vc_cu_param_layout) <= VC_DEFAULT_SLOT_SIZE_MIN_DATA, "fits a reply");

#define VC_CU_LAUNCH_COOPERATIVE 0x1u
#define VC_CU_LAUNCH_ATTRS_MAX 16
struct vc_cu_launch_attr {
	uint32_t id;   /* CUlaunchAttributeID */
	uint32_t pad;
	uint8_t value[64]; /* CUlaunchAttributeValue */
};
static_assert(sizeof(CUlaunchAttributeValue) <= 64, "launch attribute value fits");

struct vc_cu_req_launch {
	uint64_t ctx;
	uint64_t func; /* CUfunction or CUkernel id */
	uint64_t stream;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared_mem;
	uint32_t flags;      /* VC_CU_LAUNCH_* */
	uint32_t nattrs;     /* vc_cu_launch_attr entries after this struct */
	uint32_t param_size; /* packed parameter bytes after the attributes */
};

/* ---- memory ------------------------------------------------------------------------ */
#define VC_CU_ALLOC_PLAIN 0u
#define VC_CU_ALLOC_PITCH 1u
#define VC_CU_ALLOC_ASYNC 2u /* stream-ordered; from `pool` when not 0 */
struct vc_cu_req_alloc {
	uint64_t ctx;
	uint32_t kind; /* VC_CU_ALLOC_* */
	uint32_t pad0;
	uint64_t size;
	uint64_t width, height; /* pitch allocations */
	uint32_t elem;
	uint32_t pad;
	uint64_t stream; /* stream-ordered allocations */
	uint64_t pool;
};
struct vc_cu_rep_alloc {
	uint64_t dptr;
	uint64_t pitch;
};
struct vc_cu_req_free {
	uint64_t ctx;
	uint64_t dptr;
	uint64_t stream;
	uint32_t async; /* cuMemFreeAsync */
	uint32_t pad;
};

/* Where the host side of a copy is. */
#define VC_CU_HOST_INLINE 0u /* HtoD: after the struct; DtoH: in the reply data */
#define VC_CU_HOST_ARENA 1u  /* the staging arena at arena_off */
#define VC_CU_HOST_PINNED 2u /* the pinned pool at arena_off: DMA, no staging */

#define VC_CU_COPY_HTOD 0u
#define VC_CU_COPY_DTOH 1u
#define VC_CU_COPY_DTOD 2u
struct vc_cu_req_memcpy {
	uint64_t ctx;
	uint32_t dir; /* VC_CU_COPY_* */
	uint32_t pad0;
	uint64_t dst; /* device address (HtoD, DtoD) */
	uint64_t src; /* device address (DtoH, DtoD) */
	uint64_t len;
	uint64_t stream;
	uint64_t arena_off;
	uint32_t host;  /* VC_CU_HOST_* */
	uint32_t async; /* the guest asked for an ...Async call */
};

/* vcMemcpy2D: device to device, rows pitch apart (host sides travel row by
 * row through the 1D copies). */
struct vc_cu_req_memcpy2d {
	uint64_t ctx;
	uint64_t dst, dpitch;
	uint64_t src, spitch;
	uint64_t width, height;
	uint64_t stream;
	uint32_t async;
	uint32_t pad;
};

struct vc_cu_req_memset {
	uint64_t ctx;
	uint64_t dst;
	uint64_t count; /* elements (per row when height > 0) */
	uint64_t stream;
	uint32_t value;
	uint32_t elem; /* 1, 2 or 4 */
	uint32_t async;
	uint32_t pad;
	uint64_t pitch;  /* 2D memsets: bytes between rows */
	uint64_t height; /* 2D memsets: rows; 0 for a 1D memset */
};

/* ---- host callbacks ---------------------------------------------------------------- */
struct vc_cu_req_hostfunc {
	uint64_t ctx;
	uint64_t stream;
	uint64_t cookie; /* the guest's callback id, echoed back when it is due */
};

/* ---- the pinned pool ----------------------------------------------------------------- */
/* vcPinnedBase: where the guest mapped the pool; the host maps it at the same
 * address where it can (then a pinned pointer means the same on both sides,
 * as with unified addressing natively). */
struct vc_cu_req_pinned_base {
	uint64_t ctx;
	uint64_t guest_base;
};
struct vc_cu_rep_pinned_base {
	uint64_t host_base;
	uint32_t identity; /* host_base == guest_base */
	uint32_t pad;
};
/* vcHostRegister / vcHostUnregister: an allocation of the pool, page aligned. */
struct vc_cu_req_host_register {
	uint64_t ctx;
	uint64_t off;
	uint64_t size;
	uint32_t flags; /* CU_MEMHOSTALLOC_* as given to cuMemHostAlloc */
	uint32_t pad;
};
struct vc_cu_rep_host_register {
	uint64_t devptr; /* the allocation's device address */
};
/* vcPinnedSegment: page-locked memory beyond the pool.
 * MAP: the guest created a memfd of @size bytes, mapped it at @guest_addr and
 * passed it on its socket under @token (struct vc_segfd_msg); or, @files > 1,
 * that many memfds laid end to end, passed under @token, @token + 1, ...,
 * each @part bytes but the last, which holds the rest (so that their pages
 * are made on several threads without queueing on one file's locks:
 * shared/vc_fill.h). The host maps it at the same address and answers where
 * the segment lies among the pinned
 * offsets (@off of the reply, VC_CU_PINSEG_OFF0 and up), by which
 * vcHostRegister, copies (VC_CU_HOST_PINNED) and graph nodes name it as they
 * name the pool's memory. CUDA_ERROR_ALREADY_MAPPED: the address is taken in
 * the host's process (the guest may map the segment elsewhere and retry).
 * UNMAP: the segment at @off goes (its registrations first).
 * MAP_GUEST (a VM session): the guest process's own pages [@guest_addr,
 * @guest_addr + @size), pinned in place by its kernel as pin (@entry, @gen)
 * of the guest-pin area (vc_gpin.h), are mapped at the same address from the
 * guest's RAM and become a segment as above; the pin is let go when the
 * segment goes, or at once when the MAP fails (unless a mapping of it lives),
 * and the guest's kernel may unpin it then (CUDA_ERROR_NOT_SUPPORTED: the
 * host holds no RAM of this guest).
 * MAP with VC_CU_PINSEG_PREFAULT in @flags (a segment made ahead of its use,
 * its pages made by the guest): the host enters the pages into its own page
 * tables on a thread of its own, off the session's serving thread, so that
 * the segment's first registration finds them mapped; at most one such
 * prefault runs per session (others are skipped), and it is waited for
 * before the segment is registered or goes. Other bits: INVALID_VALUE. */
#define VC_CU_PINSEG_MAP 0u
#define VC_CU_PINSEG_UNMAP 1u
#define VC_CU_PINSEG_MAP_GUEST 2u
#define VC_CU_PINSEG_OFF0 (1ull << 48) /* pool offsets lie below, segments' from here */
struct vc_cu_req_pinseg {
	uint64_t ctx;
	uint64_t token;      /* MAP: the descriptor's token */
	uint64_t guest_addr; /* MAP: page aligned */
	uint64_t size;       /* MAP: a multiple of 4 KiB */
	uint64_t off;        /* UNMAP: the segment's offset */
	uint32_t op;         /* VC_CU_PINSEG_* */
	uint32_t files;      /* MAP: its memfds, 1 to VC_CU_PINSEG_FILES_MAX (0 means 1) */
	uint64_t part;       /* MAP with files > 1: bytes of each file but the last, whole pages */
	uint32_t entry;      /* MAP_GUEST: the pin's entry in the guest-pin area */
	uint32_t flags;      /* MAP: VC_CU_PINSEG_PREFAULT or 0 (0 from older guests) */
	uint64_t gen;        /* MAP_GUEST: the pin's generation */
};
#define VC_CU_PINSEG_FILES_MAX 16u
#define VC_CU_PINSEG_PREFAULT 1u
struct vc_cu_rep_pinseg {
	uint64_t off;
};

/* ---- synchronisation ------------------------------------------------------------------ */
/* vcSync: cuStreamSynchronize, cuEventSynchronize, cuCtxSynchronize(_v2). The
 * host waits off its serving thread and replies when the GPU is done, so that
 * one guest thread's wait never holds up another's calls. */
#define VC_CU_SYNC_STREAM 0u
#define VC_CU_SYNC_EVENT 1u
#define VC_CU_SYNC_CTX 2u
#define VC_CU_SYNC_ALL 3u /* every context of the session (process exit); handle unused */
struct vc_cu_req_sync {
	uint64_t ctx;
	uint64_t handle; /* stream, event or context id (0: the current context) */
	uint32_t kind;   /* VC_CU_SYNC_* */
	uint32_t pad;
};

/* ---- device printf output ---------------------------------------------------------- */
/* vcConsole: the next bytes of the device printf output that the host's worker
 * captured from its stdout, in order, as reply data (at most `max` bytes and
 * what the slot holds). The guest asks while vc_ctrl.con_total is ahead of
 * `end`, and writes the bytes to its own stdout. */
struct vc_cu_req_vcConsole {
	uint64_t ctx;
	uint32_t max; /* reply data bytes the guest takes at most */
	uint32_t pad;
};
struct vc_cu_rep_vcConsole {
	uint64_t end;  /* bytes handed out so far, this reply's included (compare with con_total) */
	uint64_t left; /* bytes still waiting after this reply */
};

/* ---- export-table slots the host answers ---------------------------------------- */
struct vc_cu_req_vcExportSlot {
	uint64_t ctx;
	uint32_t table; /* VC_CU_EXPTAB_*: which table */
	uint32_t slot;
	uint64_t target; /* context id (21318c60), function id or device (1734dc26) */
	uint64_t arg;
	int32_t dev;
	uint32_t arg2;
};
/* A reply's value; for 1734dc26 slot 4 (the TPC maps) the two arrays follow
 * as reply data, the first's length in the value's high 32 bits, the
 * second's in its low 32 bits. */
struct vc_cu_rep_vcExportSlot {
	uint64_t value;
};
#define VC_CU_EXPTAB_PRIMARY 0u /* 6bd5fb6c slot 2: a device's primary context */
#define VC_CU_EXPTAB_CTXQ 1u    /* 21318c60 slots 4, 39, 51 */
#define VC_CU_EXPTAB_CLUSTER 2u /* 1734dc26: the cluster prototype table (cuBLASLt) */
#define VC_CU_TPC_MAP_MAX 4096u /* bytes of each TPC map the host hands back at most */

/* ---- names and kernel lists ------------------------------------------------------ */
/* Lists of handles, a page at a time (cuLibraryEnumerateKernels of a
 * library, cuGraphGetNodes of a graph): ids of items [first, first + count)
 * in the reply data, and how many there are. */
#define VC_CU_LIST_PAGE 512u
struct vc_cu_req_list {
	uint64_t ctx;
	uint64_t owner; /* the library or graph id */
	uint32_t first;
	uint32_t count; /* at most VC_CU_LIST_PAGE */
};
struct vc_cu_rep_list {
	uint64_t total;    /* items the owner has */
	uint32_t returned; /* ids in the reply data */
	uint32_t pad;
};
static_assert(VC_CU_LIST_PAGE * 8 <= VC_DEFAULT_SLOT_SIZE_MIN_DATA, "a page fits a reply");

/* An operation on one handle: cuKernelGetName and cuFuncGetName (the name,
 * NUL included, in the reply data), cuGraphKernelNodeGetParams_v2,
 * cuGraphDestroy. */
struct vc_cu_req_handle {
	uint64_t ctx;
	uint64_t handle;
};
#define VC_CU_NAME_MAX 4096u /* longer names are cut (the guest keeps a copy) */
static_assert(VC_CU_NAME_MAX <= VC_DEFAULT_SLOT_SIZE_MIN_DATA, "a name fits a reply");

/* ---- stream capture ---------------------------------------------------------------- */
/* cuStreamGetCaptureInfo_v3 (and _v2): the status and, while capturing, the
 * graph and the dependency nodes with their edge data (reply data: ndeps
 * struct vc_cu_capture_dep). More than VC_CU_CAPTURE_DEPS_MAX dependencies is
 * answered CUDA_ERROR_NOT_SUPPORTED. */
#define VC_CU_CAPTURE_DEPS_MAX 256u
struct vc_cu_req_capture_info {
	uint64_t ctx;
	uint64_t stream;
	uint32_t want_graph;
	uint32_t want_deps;
};
struct vc_cu_rep_capture_info {
	int32_t status; /* CUstreamCaptureStatus */
	uint32_t ndeps;
	uint64_t id;
	uint64_t graph; /* graph id, 0 when not asked or not capturing */
};
struct vc_cu_capture_dep {
	uint64_t node;          /* CUgraphNode id */
	uint8_t edge[8];        /* CUgraphEdgeData */
};
static_assert(sizeof(CUgraphEdgeData) == 8, "edge data travels as 8 bytes");
static_assert(VC_CU_CAPTURE_DEPS_MAX * sizeof(struct vc_cu_capture_dep) <= VC_DEFAULT_SLOT_SIZE_MIN_DATA,
	      "dependencies fit a reply");

/* ---- graph nodes ------------------------------------------------------------------- */
/* A kernel node's parameters, both ways. The parameters travel packed (the
 * function's layout, as for launches); the host hands them to the driver as
 * a packed buffer and reads them back from the driver's node. */
struct vc_cu_kernel_node {
	uint64_t func; /* CUfunction or CUkernel id */
	uint64_t kern; /* reply: the CUkernel id, when the node names one */
	uint64_t kctx; /* context id; 0: the current one */
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared_mem;
	uint32_t param_size; /* packed parameter bytes */
};
/* cuGraphAddKernelNode_v2, cuGraphKernelNodeSetParams_v2 and
 * cuGraphExecKernelNodeSetParams_v2: after the struct, ndeps node ids
 * (adding), then the packed parameters. */
struct vc_cu_req_graph_kernel {
	uint64_t ctx;
	uint64_t graph; /* the graph (add) or the executable graph (exec set) */
	uint64_t node;  /* set: the node */
	uint32_t ndeps;
	uint32_t pad;
	struct vc_cu_kernel_node k;
};
struct vc_cu_rep_graph_node {
	uint64_t node;
};
/* cuGraphKernelNodeGetParams_v2 (struct vc_cu_req_handle): the parameters
 * in the reply struct, the packed bytes in the reply data. */
/* cuGraphAddMemcpyNode: one side of a copy. Host memory must be the guest's
 * page-locked memory (the pinned pool, by offset): a graph may run long after
 * the call, when staged bytes would be gone. A copy of pageable memory of
 * the program's names a bounce buffer of the pinned pool instead
 * (VC_CU_MEM_BOUNCE, one side at most), with the guest's host pair that
 * moves the bytes between the two (@cookie, a graph cookie): the host runs
 * it beside the copy, before a copy from the bounce and after a copy into
 * it, and keeps that host node out of the guest's sight. */
#define VC_CU_MEM_DEVICE 0u
#define VC_CU_MEM_PINNED 1u
#define VC_CU_MEM_BOUNCE 2u
struct vc_cu_copy_side {
	uint64_t x, y, z;
	uint64_t addr;   /* device address, or offset in the pinned pool */
	uint64_t pitch, height;
	uint32_t kind;   /* VC_CU_MEM_* */
	uint32_t pad;
};
struct vc_cu_req_graph_memcpy {
	uint64_t ctx;
	uint64_t graph;
	uint64_t kctx;   /* the context the copy belongs to; 0: the current one */
	uint32_t ndeps;  /* node ids after the struct */
	uint32_t pad;
	struct vc_cu_copy_side src, dst;
	uint64_t width, height, depth;
	uint64_t cookie; /* with a VC_CU_MEM_BOUNCE side: the pair moving its bytes */
};

/* ---- memory pools ------------------------------------------------------------------ */
/* cuMemPoolCreate: the properties as the guest gave them; the Windows
 * security attributes pointer must be 0 (it means nothing on Linux). */
struct vc_cu_req_pool_create {
	uint64_t ctx;
	uint8_t props[sizeof(CUmemPoolProps)];
};
struct vc_cu_rep_pool_create {
	uint64_t pool;
};
/* cuMemPoolSetAttribute / cuMemPoolGetAttribute: every attribute's value is
 * an int or a cuuint64_t; it travels as 64 bits. */
struct vc_cu_req_pool_attr {
	uint64_t ctx;
	uint64_t pool;
	int32_t attr;
	uint32_t pad;
	uint64_t value; /* set */
};
struct vc_cu_rep_pool_attr {
	uint64_t value; /* get */
};

/* Bytes of pool attribute @attr's value (an int or a cuuint64_t), 0 for an
 * attribute this version does not know (both sides refuse it). */
static inline unsigned vc_cu_pool_attr_size(int attr)
{
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		return sizeof(int);
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		return sizeof(cuuint64_t);
	default:
		return 0;
	}
}

/* ---- JIT linking and loads with JIT options (link.c on both sides) ---------- */
/* A CUjit_option array travels as (option, value) pairs. Scalar values are
 * sent as they are; the log buffers (CU_JIT_INFO/ERROR_LOG_BUFFER) are the
 * host's own, as large as the matching *_SIZE_BYTES value (at most
 * VC_CU_JIT_LOG_MAX), and come back in the reply data; output values (wall
 * time, the filled log sizes, threads per block) come back in the reply. */
#define VC_CU_JIT_MAX 64u             /* options per call (the driver has 35 kinds) */
#define VC_CU_JIT_LOG_MAX (64u << 10) /* bytes of each log buffer the host keeps */
#define VC_CU_LINK_NAME_MAX 256u
struct vc_cu_jit_opt {
	int32_t opt;
	uint32_t pad;
	uint64_t value;
};
struct vc_cu_jit {
	uint32_t n;
	uint32_t pad;
	struct vc_cu_jit_opt o[VC_CU_JIT_MAX];
};
/* The outputs of a call with JIT options. The reply data holds n uint64_t
 * (each option's value after the call, for the options of the call, or of
 * vcLinkCreate for a link), then info_len bytes of the info log, then
 * err_len bytes of the error log (each cut to what the data area holds). */
struct vc_cu_rep_jit {
	uint64_t handle; /* link id, module or library id */
	uint64_t size;   /* vcLinkComplete: bytes of the linked image */
	uint32_t n;
	uint32_t info_len, err_len;
	int32_t result; /* the call's CUresult: the logs come back on failure too */
};
static_assert(sizeof(struct vc_cu_rep_jit) <= VC_CU_REP_MAX, "jit reply");
static_assert(8 * VC_CU_JIT_MAX + 2 * 1024 <= VC_DEFAULT_SLOT_SIZE_MIN_DATA, "jit outputs and some log fit");
/* vcLinkCreate */
struct vc_cu_req_link_create {
	uint64_t ctx;
	struct vc_cu_jit jit;
};
/* vcLinkAdd: image (staged with vcImageBegin/vcImagePut, consumed) as input
 * @type named @name (NUL-terminated in name[]). */
struct vc_cu_req_link_add {
	uint64_t ctx;
	uint64_t link;
	uint64_t image;
	int32_t type;
	uint32_t pad;
	char name[VC_CU_LINK_NAME_MAX];
	struct vc_cu_jit jit;
};
/* vcLinkComplete, vcLinkDestroy */
struct vc_cu_req_link {
	uint64_t ctx;
	uint64_t link;
};
/* vcLinkRead: bytes [offset, offset + len) of the linked image, in the reply data */
struct vc_cu_req_link_read {
	uint64_t ctx;
	uint64_t link;
	uint64_t offset;
	uint64_t len;
};
/* vcLoadJit: cuModuleLoadDataEx or cuLibraryLoadData with JIT options */
struct vc_cu_req_load_jit {
	uint64_t ctx;
	uint64_t image;
	uint32_t kind; /* VC_CU_LOAD_* */
	uint32_t pad;
	struct vc_cu_jit jit;
};

/* CUjit_option values whose value is an array of pointers into the caller's
 * memory (symbol and kernel name lists, symbol addresses): not forwarded. */
static inline int vc_cu_jit_is_array(int opt)
{
	return opt == CU_JIT_GLOBAL_SYMBOL_NAMES || opt == CU_JIT_GLOBAL_SYMBOL_ADDRESSES ||
	       opt == CU_JIT_REFERENCED_KERNEL_NAMES || opt == CU_JIT_REFERENCED_VARIABLE_NAMES;
}
/* ---- managed memory (managed*.c on both sides) ------------------------------ */
/* cuMemAllocManaged: @size rounded up to whole pages by the guest, which maps
 * the same range in its own process. */
struct vc_cu_req_managed_alloc {
	uint64_t ctx;
	uint64_t size;
	uint32_t flags;
	uint32_t pad;
};
struct vc_cu_rep_managed_alloc {
	uint64_t dptr;
};
/* vcManagedFree (reply: none), vcManagedQuery (reply: vc_cu_rep_managed_query). */
struct vc_cu_req_managed_ptr {
	uint64_t ctx;
	uint64_t dptr;
};
struct vc_cu_rep_managed_query {
	uint64_t base;    /* the managed allocation holding dptr: for a module's */
	uint64_t size;    /* variables, the span from its first to its last one */
	uint32_t managed; /* 0: not managed memory of this session */
	uint32_t npieces; /* the variables of that span, in the reply data, one
			   * vc_cu_managed_piece each, by address (0: one piece,
			   * the whole span) */
};
/* One __managed__ variable: the driver makes each its own range (a copy may
 * not cross from one to the next), packed in one segment per module. */
#define VC_CU_MANAGED_PIECES_MAX 256u
struct vc_cu_managed_piece {
	uint64_t base;
	uint64_t size;
};

/* cuMemRangeGetAttribute(s): the answers come back in the reply data, one
 * after another, size[i] bytes each. */
#define VC_CU_RANGE_ATTRS_MAX 16u
#define VC_CU_RANGE_DATA_MAX 1024u
struct vc_cu_req_range_attrs {
	uint64_t ctx;
	uint64_t dptr;
	uint64_t count;
	uint32_t n;
	uint32_t pad;
	int32_t attr[VC_CU_RANGE_ATTRS_MAX];
	uint64_t size[VC_CU_RANGE_ATTRS_MAX];
};

/* Batched prefetches and discards: after the struct, @count ranges, then
 * @nlocs locations with the index of the first range each applies to. */
#define VC_CU_BATCH_PREFETCH 0u
#define VC_CU_BATCH_DISCARD 1u
#define VC_CU_BATCH_DISCARD_PREFETCH 2u
#define VC_CU_BATCH_MAX 512u
struct vc_cu_req_mem_batch {
	uint64_t ctx;
	uint64_t stream;
	uint64_t flags;
	uint32_t kind; /* VC_CU_BATCH_* */
	uint32_t count;
	uint32_t nlocs;
	uint32_t pad;
};
struct vc_cu_batch_range {
	uint64_t dptr;
	uint64_t size;
};
struct vc_cu_batch_loc {
	int32_t type; /* CUmemLocationType */
	int32_t id;
	uint64_t first;
};
static_assert(sizeof(struct vc_cu_req_range_attrs) == 224, "range attributes request");
static_assert(sizeof(struct vc_cu_req_mem_batch) == 40, "batch request");
static_assert(sizeof(struct vc_cu_batch_loc) == 16, "batch location");
/* ---- streams, launches, contexts, limits, tensor maps -------------------------------- */
/* vcStreamMemOp: cuStreamWriteValue32/64 and cuStreamWaitValue32/64 (form
 * SINGLE, one op, the driver's own call for it) and cuStreamBatchMemOp (form
 * BATCH): `count` struct vc_cu_memop after the struct. Every address is
 * checked as device memory of the session before the driver sees it. */
#define VC_CU_MEMOP_MAX 256u /* operations in one batch */
#define VC_CU_MEMOP_SINGLE 0u
#define VC_CU_MEMOP_BATCH 1u
struct vc_cu_memop {
	uint32_t op;    /* CUstreamBatchMemOpType */
	uint32_t flags; /* the operation's flags */
	uint64_t addr;  /* device address (values), 0 otherwise */
	uint64_t value; /* 32-bit values in the low half */
};
struct vc_cu_req_memop {
	uint64_t ctx;
	uint64_t stream;
	uint32_t form;  /* VC_CU_MEMOP_* */
	uint32_t count; /* at most VC_CU_MEMOP_MAX; 1 for SINGLE */
	uint32_t flags; /* cuStreamBatchMemOp's flags */
	uint32_t pad;
};

/* cuStreamGetAttribute / cuStreamSetAttribute: a CUstreamAttrValue's bytes.
 * An access policy window's base is a device address (checked as the
 * session's memory); no stream attribute carries a handle. */
struct vc_cu_req_stream_attr {
	uint64_t ctx;
	uint64_t stream;
	uint32_t attr; /* CUstreamAttrID */
	uint32_t pad;
	uint8_t value[64]; /* set */
};
struct vc_cu_rep_stream_attr {
	uint8_t value[64]; /* get */
};

/* vcTensorMap: cuTensorMapEncodeTiled, ...Im2col, ...Im2colWide (the host
 * driver encodes after checking that the global range the map covers is the
 * session's device memory) and cuTensorMapReplaceAddress (of a map the
 * session encoded: `map`). The 128-byte CUtensorMap comes back. */
#define VC_CU_TMAP_TILED 0u
#define VC_CU_TMAP_IM2COL 1u
#define VC_CU_TMAP_IM2COL_WIDE 2u
#define VC_CU_TMAP_REPLACE 3u
#define VC_CU_TMAP_RANK_MAX 5u
struct vc_cu_req_tmap {
	uint64_t ctx;
	uint32_t kind; /* VC_CU_TMAP_* */
	int32_t dtype; /* CUtensorMapDataType */
	uint32_t rank;
	int32_t interleave, swizzle, l2, oob, mode; /* enums; mode: Im2colWide */
	uint32_t cpp, ppc;                          /* channels per pixel, pixels per column */
	int32_t lower[3], upper[3];                 /* Im2col pixel box corners (rank - 2 used) */
	int32_t lower_w, upper_w;                   /* Im2colWide */
	uint32_t box[VC_CU_TMAP_RANK_MAX];          /* Tiled */
	uint32_t estrides[VC_CU_TMAP_RANK_MAX];
	uint32_t pad;
	uint64_t addr;
	uint64_t dims[VC_CU_TMAP_RANK_MAX];
	uint64_t strides[VC_CU_TMAP_RANK_MAX - 1];
	uint8_t map[128]; /* REPLACE: the map */
};
struct vc_cu_rep_tmap {
	uint8_t map[128];
};
static_assert(sizeof(CUtensorMap) == 128, "a tensor map is 128 bytes");

/* cuCtxCreate_v3, and cuCtxCreate_v4 with execution affinity: the reply is
 * struct vc_cu_rep_ctx. */
#define VC_CU_AFFINITY_MAX 8u
struct vc_cu_req_ctx_affinity {
	uint64_t ctx;
	int32_t dev;
	uint32_t flags;
	uint32_t nparams;
	uint32_t pad;
	struct {
		int32_t type; /* CUexecAffinityType */
		uint32_t value;
	} params[VC_CU_AFFINITY_MAX];
};
/* cuCtxGetExecAffinity */
struct vc_cu_req_exec_affinity {
	uint64_t ctx;
	int32_t type;
	uint32_t pad;
};
struct vc_cu_rep_exec_affinity {
	int32_t type;
	uint32_t value;
};

/* cuDeviceGetHostAtomicCapabilities and cuDeviceGetP2PAtomicCapabilities. */
#define VC_CU_ATOMIC_OPS_MAX 48u
struct vc_cu_req_atomic_caps {
	uint64_t ctx;
	int32_t src, dst; /* dst: P2P only */
	uint32_t count;
	uint32_t p2p;
	int32_t ops[VC_CU_ATOMIC_OPS_MAX];
};
struct vc_cu_rep_atomic_caps {
	uint32_t caps[VC_CU_ATOMIC_OPS_MAX];
};
static_assert(sizeof(struct vc_cu_rep_atomic_caps) <= VC_CU_REP_MAX, "reply fits");

#endif /* VC_CUDA_MANUAL_H */
