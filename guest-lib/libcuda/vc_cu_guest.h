/* SPDX-License-Identifier: MIT */
/*
 * vc_cu_guest.h - the guest libcuda.so.1's internals: the connection to
 * vcuda-server, the calling thread's context, device facts fetched once at
 * cuInit, and the two ways a call travels (vc_cu_call, vc_cu_submit).
 *
 * Everything here is hidden: the library exports only the driver API (a
 * version script keeps every vc_* symbol local).
 */
#ifndef VC_CU_GUEST_H
#define VC_CU_GUEST_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cudaProfiler.h> /* cuProfiler*, generated stubs */

#include "vc_cuda_manual.h"
#include "vc_cuda_wire.h"

struct vc_client;

/* One measured cuGetProcAddress answer: (name, cudaVersion, flags) -> entry. */
struct vc_procaddr_entry {
	const char *name;
	int version;
	int flags;
	const void *fn;
};
extern const struct vc_procaddr_entry vc_procaddr_table[];
extern const size_t vc_procaddr_count;

/* CUresult names and descriptions (generated). */
struct vc_cu_errstr {
	int code;
	const char *name;
	const char *desc;
};
extern const struct vc_cu_errstr vc_cu_errors[];
extern const size_t vc_cu_nerrors;

/* Device facts, fetched from the host at cuInit. */
struct vc_cu_device {
	struct vc_cu_device_info info;
};

struct vc_cu_state {
	struct vc_client *client;
	int driver_version;
	int device_count;
	struct vc_cu_device dev[16];
};

/** vc_cu_state() - the library's state once cuInit succeeded, else NULL. */
struct vc_cu_state *vc_cu_state(void);

/** vc_cu_current() - the calling thread's current context id (0: none). */
uint64_t vc_cu_current(void);

/** vc_cu_set_current() - make context id @ctx current on the calling thread. */
void vc_cu_set_current(uint64_t ctx);

/** vc_cu_ctx_device() - remember that context id @ctx is on device @dev. */
void vc_cu_ctx_device(uint64_t ctx, int dev);

/** vc_cu_current_device() - the device of the calling thread's context (0 if unknown). */
int vc_cu_current_device(void);

/**
 * vc_cu_ctx_ordinal() - the ordinal of context @ctx's device (kept per
 * context, else the host's answer); 0 when @ctx is none or unknown.
 */
int vc_cu_ctx_ordinal(uint64_t ctx);

/**
 * vc_cu_call() - a synchronous CUDA operation: request @req (@reqlen bytes,
 * starting with struct vc_cu_prefix, which this fills with the current
 * context) and @dlen bytes of @data after it; the reply struct into @rep
 * (@replen bytes) and up to @outcap bytes of reply data into @out. With
 * @syncs, a pending asynchronous error is reported, as CUDA does at
 * synchronising calls.
 */
CUresult vc_cu_call(uint32_t op, void *req, size_t reqlen, const void *data, size_t dlen, void *rep,
		    size_t replen, void *out, size_t outcap, int syncs);

/** vc_cu_call_sized() - vc_cu_call() that also returns the reply data length. */
CUresult vc_cu_call_sized(uint32_t op, void *req, size_t reqlen, const void *data, size_t dlen, void *rep,
			  size_t replen, void *out, size_t outcap, size_t *outlen, int syncs);

/**
 * vc_cu_call_fenced() - vc_cu_call() with @syncs of a blocking operation on
 * the legacy stream (no reply data) that the host may answer once it is
 * queued: the device then says when it is done (vc_client_call_fenced()),
 * which this spins up to @spin_us for, before it synchronises that stream.
 */
CUresult vc_cu_call_fenced(uint32_t op, void *req, size_t reqlen, uint32_t spin_us);

/**
 * vc_cu_submit() - an asynchronous CUDA operation: queued and published; its
 * failure becomes the sticky error reported at the next synchronising call.
 */
CUresult vc_cu_submit(uint32_t op, void *req, size_t reqlen, const void *data, size_t dlen);

/**
 * vc_cu_list() - up to @n ids of the items of @owner (a library's kernels, a
 * graph's nodes: @op says which) into @ids, a page per round trip; how many
 * there are in *@total when not NULL.
 */
CUresult vc_cu_list(uint32_t op, uint64_t owner, uint64_t *ids, uint64_t n, uint64_t *total);

/**
 * vc_cu_module_functions() - up to @max of module @mod's functions into @fns
 * (one round trip when they fit a page); how many it has in *@total.
 */
CUresult vc_cu_module_functions(CUmodule mod, CUfunction *fns, unsigned int max, unsigned int *total);

/** vc_cu_error() - the CUresult for a transport failure @rc (-errno), said once on stderr. */
CUresult vc_cu_error(int rc);

/** vc_cu_take_error() - report a pending asynchronous error (CUDA semantics), or CUDA_SUCCESS. */
CUresult vc_cu_take_error(void);

/**
 * vc_cu_console_check() - after a call that may have synchronised: write the
 * device printf output the host captured meanwhile to stdout (console.c).
 */
void vc_cu_console_check(void);

/** vc_cu_unsupported() - what an entry point vcuda does not implement answers. */
int vc_cu_unsupported(const char *name);

/**
 * vc_cu_refused() - what an entry point refused on purpose answers: @err,
 * with @reason named once on stderr when VCUDA_DEBUG is set (refused.c).
 */
int vc_cu_refused(const char *name, const char *reason, int err);

/** vc_cu_refused_attrs() - device attributes @attrs (@count of them) with the refused families' answered off. */
void vc_cu_refused_attrs(int32_t *attrs, int count);

/** vc_cu_debug() - whether VCUDA_DEBUG is set. */
int vc_cu_debug(void);

/* ---- per-area hooks ---------------------------------------------------------- */

/** vc_cu_mem_is_device() - whether [@p, @p + @n) lies in a device allocation of ours. */
int vc_cu_mem_is_device(uint64_t p, uint64_t n);

/** vc_cu_params_forget() - drop cached parameter layouts (context destroyed). */
void vc_cu_params_forget(void);

/**
 * vc_cu_params_limits_forget() - a function's attributes changed: the
 * dynamic shared memory limits kept with the layouts are asked again when a
 * launch needs one (the offsets and sizes stay), occupancy answers dropped.
 */
void vc_cu_params_limits_forget(void);

/** vc_cu_params_limit() - @func's dynamic shared memory limit, from its layout, asked again if stale. */
CUresult vc_cu_params_limit(uint64_t func, uint32_t *max_dyn_smem);

/**
 * vc_cu_stream_id() - the wire id of stream @s: the calling thread's own
 * stream for CU_STREAM_PER_THREAD, the handle itself otherwise.
 */
uint64_t vc_cu_stream_id(CUstream s);

/**
 * vc_cu_capture_unsafe() - a potentially unsafe call (allocation, freeing,
 * device synchronisation) is about to be made by this thread: CUDA_SUCCESS
 * when its capture mode allows it, else CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * and the captures it would disturb are invalidated (capture.c).
 */
CUresult vc_cu_capture_unsafe(void);

/**
 * vc_cu_capture_active() - whether stream @s is capturing: asked of the host
 * only while some capture may be active in the process (capture.c).
 */
int vc_cu_capture_active(CUstream s);

/* The bytes of a bounce that a copy out of the device writes: @depth planes
 * of @height rows of @width bytes from byte @first, rows @pitch and planes
 * @plane bytes apart. */
struct vc_cu_capcopy_rows {
	uint64_t first, width, height, depth, pitch, plane;
};

/**
 * vc_cu_capcopy_get() - the page-locked bounce buffer that stands in for
 * @n bytes of pageable memory at @host in a captured copy or a copy node
 * (@out: the copy is device to host, writing @rows of them, NULL: all): its
 * pinned-pool offset in *@poff, and the host function (*@fn, *@data) that
 * moves the bytes between it and @host when the graph runs;
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED past the bound (capcopy.c).
 */
CUresult vc_cu_capcopy_get(void *host, uint64_t n, int out, const struct vc_cu_capcopy_rows *rows, uint64_t *poff,
			   CUhostFn *fn, void **data);

/** vc_cu_capcopy_behind() - the program's memory behind bounce buffer @pin, or @pin itself. */
const void *vc_cu_capcopy_behind(const void *pin);

/** vc_cu_pinned_init() - announce the pinned pool to the host; 1 if usable. */
int vc_cu_pinned_init(void);

/** vc_cu_pinned_alloc() - @size bytes of the pinned pool (page rounded), offset in *@off; or NULL. */
void *vc_cu_pinned_alloc(uint64_t size, uint64_t *off);

/**
 * vc_cu_pinned_free() - give an allocation of the pinned pool back; memory
 * pinned in place goes to vc_cu_pinguest_put(), a segment to
 * vc_cu_pinseg_put().
 */
void vc_cu_pinned_free(uint64_t off, uint64_t size);

/**
 * vc_cu_pinseg_get() - page-locked memory beyond the pool: a segment of at
 * least @size bytes of its own (its first @size bytes copied from @src unless
 * NULL), a parked one that fits or a new one, mapped here and by the server
 * at *@p and registered with its driver: its pinned offset in *@off, its
 * device address in *@devptr (pinseg.c). CUDA_SUCCESS;
 * CUDA_ERROR_NOT_SUPPORTED where the transport has no segments (a VM);
 * CUDA_ERROR_OUT_OF_MEMORY past the server's bounds or without memory.
 */
CUresult vc_cu_pinseg_get(uint64_t size, const void *src, void **p, uint64_t *off, uint64_t *devptr);

/**
 * vc_cu_pinseg_put() - segment @off is not used any more: parked (pages and
 * registration kept, inaccessible here) within VCUDA_PINNED_KEEP, else
 * unmapped here and on the server.
 */
void vc_cu_pinseg_put(uint64_t off);

/**
 * vc_cu_pinseg_park_new() - a new segment for @len bytes, its pages made,
 * offered to the server and parked (not registered), unless the parked
 * segments would then pass VCUDA_PINNED_KEEP (-ENOSPC). 0, -EOPNOTSUPP where
 * the transport has no segments, or -errno.
 */
int vc_cu_pinseg_park_new(uint64_t len);

/** vc_cu_pinseg_parked_fits() - whether a parked segment would serve @len bytes. */
int vc_cu_pinseg_parked_fits(uint64_t len);

/** vc_cu_pinseg_fits() - whether a segment made for @seg_len bytes would serve @len bytes. */
int vc_cu_pinseg_fits(uint64_t seg_len, uint64_t len);

/** vc_cu_pinseg_trim() - drop every parked segment; how many there were. */
int vc_cu_pinseg_trim(void);

/** vc_cu_pinseg_addr() - the guest address of pinned offsets [@off, @off + @n) of a segment, or NULL. */
void *vc_cu_pinseg_addr(uint64_t off, uint64_t n);

/** vc_cu_pinseg_alias() - map a segment's pages [@off, @off + @len) again at @addr (MAP_FIXED). 0 or -errno. */
int vc_cu_pinseg_alias(uint64_t off, void *addr, uint64_t len);

/**
 * vc_cu_pinseg_host_register() - the first @len bytes of the segment (or of
 * the pinned pool) at pinned offset @off registered with the server's driver
 * (portable and mapped; charged to the pinned quota as natively): its
 * device address in *@devptr.
 */
CUresult vc_cu_pinseg_host_register(uint64_t off, uint64_t len, uint64_t *devptr);

/**
 * vc_cu_pinseg_host_unmap() - the segment at pinned offset @off unmapped by
 * the server, which drops the driver's registrations in it and their charge
 * to the pinned quota (and lets a guest's pin go: pinguest.c).
 */
void vc_cu_pinseg_host_unmap(uint64_t off);

/**
 * vc_cu_pinguest_get() - in a VM, page-locked memory in place: the
 * process's own pages [@addr, @addr + @len) (page aligned) pinned by the
 * guest's kernel, mapped by the server at the same address and registered
 * with its driver: the pinned offset in *@off, the device address in
 * *@devptr (pinguest.c). No byte moves. CUDA_SUCCESS;
 * CUDA_ERROR_NOT_SUPPORTED where pages cannot be pinned in place
 * (host-locally, or the VM's RAM is not shared with the host: then never
 * asked again); CUDA_ERROR_ALREADY_MAPPED when the address is taken in the
 * server's process; CUDA_ERROR_OUT_OF_MEMORY past the guest's or the
 * server's bounds; CUDA_ERROR_INVALID_VALUE when these pages cannot be pinned.
 */
CUresult vc_cu_pinguest_get(void *addr, uint64_t len, uint64_t *off, uint64_t *devptr);

/**
 * vc_cu_pinguest_alloc() - in a VM, a new page-locked allocation of @len
 * bytes (page rounded) in this process's memory, pinned in place as above:
 * its address in *@p. Errors as vc_cu_pinguest_get().
 */
CUresult vc_cu_pinguest_alloc(uint64_t len, void **p, uint64_t *off, uint64_t *devptr);

/**
 * vc_cu_pinguest_put() - the pin in place at pinned offset @off goes:
 * unregistered and unmapped by the server, then unpinned (and unmapped here
 * when vc_cu_pinguest_alloc() made it). Returns 1, or 0 when @off is no pin
 * in place (a segment: pinseg.c).
 */
int vc_cu_pinguest_put(uint64_t off);

/** vc_cu_pinguest_addr() - the address of pinned offsets [@off, @off + @n) of a pin in place, or NULL. */
void *vc_cu_pinguest_addr(uint64_t off, uint64_t n);

/**
 * vc_cu_aside_take() - move the pages of [@addr, @addr + @len) (page-aligned,
 * one private anonymous mapping) to a new address, leaving the range mapped
 * and empty (aside.c). The new address, or NULL where the kernel cannot
 * (nothing moved).
 */
void *vc_cu_aside_take(void *addr, uint64_t len);

/** vc_cu_aside_restore() - move pages set aside back over @addr (MAP_FIXED). 0 or -errno. */
int vc_cu_aside_restore(void *aside, void *addr, uint64_t len);

/** vc_cu_aside_drop() - unmap [@aside, @aside + @len) (pages set aside, a freed segment) on a thread of ours where one starts. */
void vc_cu_aside_drop(void *aside, uint64_t len);

/**
 * vc_cu_host_classify() - may [@p, @p + @n) be registered with @flags
 * (mapped, readable, writable unless READ_ONLY, no wrap-around)? Returns
 * CUDA_SUCCESS or CUDA_ERROR_INVALID_VALUE, before touching a byte; *@movable
 * says whether the pages are private anonymous read-write memory, the only
 * kind that may move into the pinned pool (hostreg.c).
 */
CUresult vc_cu_host_classify(const void *p, size_t n, unsigned int flags, int *movable);

/** vc_cu_mem_pinned() - whether [@p, @p + @n) is page-locked memory of ours; its pool offset in *@off. */
int vc_cu_mem_pinned(const void *p, uint64_t n, uint64_t *off);

/**
 * vc_cu_params_layout() - the parameter layout of function or kernel @func,
 * from the host once and cached.
 */
CUresult vc_cu_params_layout(uint64_t func, struct vc_cu_param_layout *out);

/**
 * vc_cu_params_pack() - @f's parameters from @kernelParams (per its layout)
 * or from @extra's buffer form, packed into @buf (VC_LAUNCH_PARAMS_MAX
 * bytes); their size in *@size, and the threads a block of @f may have in
 * *@max_threads unless NULL (0: the server does not say).
 */
CUresult vc_cu_params_pack(CUfunction f, void **kernelParams, void **extra, uint8_t *buf, uint32_t *size,
			   uint32_t *max_threads);

/**
 * vc_cu_in_callback() - whether the calling thread is the one that runs host
 * functions (a stream waits on it: it must not wait for the GPU itself).
 */
int vc_cu_in_callback(void);

/**
 * vc_cu_pinned_alias() - map the pool's pages [@off, @off + @len) a second
 * time at @addr (page-aligned, MAP_FIXED). 0 or -errno.
 */
int vc_cu_pinned_alias(uint64_t off, void *addr, uint64_t len);

/**
 * vc_cu_image_stage() - stage @size bytes at @img on the host (0: as many as
 * the image's own format says: fatbin, ELF, PTX); its id in *@image, for one
 * load or link input (module.c).
 */
CUresult vc_cu_image_stage(const void *img, uint64_t size, uint64_t *image);

/**
 * vc_cu_load_jit() - load module or library (@kind, VC_CU_LOAD_*) @img with
 * the @n JIT options @opts/@vals; outputs and log buffers written back as
 * the driver writes them; the handle in *@handle (link.c).
 */
CUresult vc_cu_load_jit(uint32_t kind, const void *img, CUjit_option *opts, void **vals, unsigned int n,
			uint64_t *handle);
/**
 * vc_cu_cluster_query() - a cluster occupancy query @op (vcOccupancyClusters,
 * cuOccupancyMaxPotentialClusterSize) of @func launched as @config: the
 * host's answer into *@out (launch.c).
 */
CUresult vc_cu_cluster_query(uint32_t op, int *out, CUfunction func, const CUlaunchConfig *config);

/** vc_cu_occupancy_forget() - drop cached potential block sizes (occupancy.c). */
void vc_cu_occupancy_forget(void);
/** vc_cu_pinned_addr() - the guest address of [@off, @off + @n) of the pinned pool, or NULL (graph.c). */
void *vc_cu_pinned_addr(uint64_t off, uint64_t n);

/** vc_cu_callbacks_start() - start the thread that runs host functions, once (hostfn.c). */
void vc_cu_callbacks_start(void);

/** vc_cu_graph_callback() - run graph host node or user object destructor @cookie (hostfn.c's thread). */
void vc_cu_graph_callback(uint64_t cookie);

/** vc_cu_streams_forget() - per-thread streams are stale (a context went away). */
void vc_cu_streams_forget(void);

/* ---- managed memory (managed.c, managed_fault.c) ------------------------------ */

/* Granules of managed memory open to the CPU, and managed ranges mapped:
 * written under the managed table's lock, read with one relaxed load. */
extern unsigned long vc_cu_mgd_resident;
extern unsigned long vc_cu_mgd_ranges;

/**
 * vc_cu_managed_flush() - before operation @op, which may let the device
 * run: write back what the CPU wrote to managed memory and close its pages.
 */
void vc_cu_managed_flush(uint32_t op);

/** vc_cu_managed_before() - vc_cu_managed_flush() when the CPU holds managed pages (one load). */
static inline void vc_cu_managed_before(uint32_t op)
{
	if (__atomic_load_n(&vc_cu_mgd_resident, __ATOMIC_RELAXED))
		vc_cu_managed_flush(op);
}

/** vc_cu_managed_any() - whether the process has managed memory mapped (one load). */
static inline int vc_cu_managed_any(void)
{
	return __atomic_load_n(&vc_cu_mgd_ranges, __ATOMIC_RELAXED) != 0;
}

/** vc_cu_managed_has() - whether [@p, @p + @n) lies in one managed range. */
int vc_cu_managed_has(uint64_t p, uint64_t n);

/**
 * vc_cu_managed_free() - cuMemFree of @dptr if it is a managed allocation:
 * 1 with the result in *@rc, or 0 when it is not one.
 */
int vc_cu_managed_free(uint64_t dptr, CUresult *rc);

/** vc_cu_managed_ctx_gone() - context @ctx was destroyed: unmap its managed memory. */
void vc_cu_managed_ctx_gone(uint64_t ctx);

/** vc_cu_managed_attrs() - device attributes @attrs (@count of them) as managed memory works here. */
void vc_cu_managed_attrs(int32_t *attrs, int count);

/**
 * vc_cu_managed_global() - after a module global was looked up: map it here
 * when it is a managed variable. The call's result (CUDA_SUCCESS).
 */
CUresult vc_cu_managed_global(CUdeviceptr *dptr, size_t *bytes);

/**
 * vc_cu_mem_track_managed() - record managed range [@base, @base + @size)
 * for pointer attributes and copies (memory.c). 0 or -1 (no memory).
 */
int vc_cu_mem_track_managed(uint64_t base, uint64_t size);
/** vc_cu_copy2d_array() - a 2D copy with a CUDA array on a side (copy3d.c). */
CUresult vc_cu_copy2d_array(const CUDA_MEMCPY2D *p, CUstream s, int async);

/* ---- green contexts, driver logs (green.c, logs.c) ------------------------------ */

/** vc_cu_green_ctx_post() - after cuCtxFromGreenCtx: its context is on the green context's device. */
CUresult vc_cu_green_ctx_post(CUcontext *pContext, CUgreenCtx hCtx);

/* Log callbacks registered: written under logs.c's lock, read with one relaxed load. */
extern unsigned long vc_cu_log_callbacks;

/** vc_cu_logs_deliver() - fetch the driver's queued log messages and call the callbacks (logs.c). */
void vc_cu_logs_deliver(void);

/** vc_cu_logs_after() - after a call that answered @rc: deliver log messages to callbacks if it failed. */
static inline void vc_cu_logs_after(int rc)
{
	if (rc > 0 && __atomic_load_n(&vc_cu_log_callbacks, __ATOMIC_RELAXED))
		vc_cu_logs_deliver();
}

#endif /* VC_CU_GUEST_H */
