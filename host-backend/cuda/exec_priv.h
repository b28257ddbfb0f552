/* SPDX-License-Identifier: MIT */
/*
 * exec_priv.h - the CUDA executor's session state, shared by its interface
 * (exec.c), its handle table (handles.c), the generated decoders
 * (vc_cuda_host_gen.c) and the hand-written handlers, one file per API family
 * (ctx.c, device.c, module.c, launch.c, memory.c, hostfn.c, export.c,
 * console.c, sync.c, pinned.c, pool.c, names.c, graph.c).
 *
 * Each handler copies its request out of the private span first, validates
 * it, then calls the driver. Protocol violations return -VC_FATAL_*; CUDA
 * errors return the driver's code.
 *
 * A session owns every driver object it creates: contexts (its "primary"
 * contexts are contexts of its own, so that one client's fault never reaches
 * another's), and through them modules, streams, events and memory. The guest
 * names them by 64-bit ids from per-session tables; a handle never crosses
 * between sessions, and host pointers are never shown to the guest.
 */
#ifndef VC_CU_EXEC_PRIV_H
#define VC_CU_EXEC_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "vc_cuda_driver_gen.h"
#include "vc_cuda_manual.h"
#include "vc_cuda_wire.h"
#include "vc_wire.h"

#define VC_CU_MAX_DEVICES 16
#define VC_CU_MAX_HANDLES (1u << 20)
#define VC_CU_MAX_IMAGES 8

/*
 * For hand-written handlers (which have @p, @len and @out in scope): copy the
 * request struct out of the private span first (a short one is a protocol
 * violation), and set the reply struct.
 */
#define TAKE(req)                                    \
	do {                                         \
		if (len < sizeof(req))               \
			return -VC_FATAL_PAYLOAD;    \
		memcpy(&(req), p, sizeof(req));      \
	} while (0)

#define REPLY(r_)                                    \
	do {                                         \
		memcpy(out->rep, &(r_), sizeof(r_)); \
		out->rep_len = sizeof(r_);           \
	} while (0)

struct vc_cu_handle {
	void *real;
	uint32_t gen;
	uint16_t kind;
	uint8_t live;
	uint8_t busy; /* a stream: named by a command since a poll last found it
		       * done (vc_cu_lookup() sets it, syncpoll.c clears it) */
	uint32_t next_free;
	uint32_t owner; /* index of the handle it belongs to (UINT32_MAX: none), set
			 * with vc_cu_set_owner(): it is forgotten with its owner */
	uint32_t nchild; /* live handles that name this one their owner */
	uint32_t refs;   /* a user object: the references the guest holds (graph_state.c) */
};

struct vc_cu_image {
	uint64_t id;
	uint8_t *buf;
	uint64_t size;
};

#include "vcuda/executor.h"

/* A device allocation of the session and what it was charged (quota.c). */
struct vc_cu_alloc {
	uint64_t dptr;  /* 0: empty slot */
	uint64_t bytes;
	uint64_t ctx;   /* the context id it belongs to; 0: a stream-ordered one */
	int32_t dev;    /* the device it is counted on (vc_acct_on_device()); -1: none */
};

/* A device range the driver confirmed as one of the session's tracked
 * allocations (quota.c's range cache). */
struct vc_cu_range {
	uint64_t start, size; /* size 0: empty */
};

#define VC_CU_RANGES 8

/* A range of the pinned pool registered with the driver (pinned.c). */
struct vc_cu_preg {
	uint64_t off, size;
};

struct vc_cu_session {
	const struct vc_cuda_driver *drv;
	uint64_t cur_id;           /* context id current on the serving thread */
	/* emulated primary contexts, per device */
	uint64_t primary[VC_CU_MAX_DEVICES];
	uint32_t primary_refs[VC_CU_MAX_DEVICES];
	uint32_t primary_flags[VC_CU_MAX_DEVICES];
	/* handle table */
	struct vc_cu_handle *h;
	uint32_t nh, caph, free_head;
	/* reverse map (kind, real) -> index + 1, open addressing */
	uint32_t *rmap;
	uint32_t rcap;
	/* the table slots of live streams, in no order (handles.c), for the
	 * serving thread's poll of a context synchronisation (syncpoll.c) */
	uint32_t *streams;
	uint32_t nstreams, capstreams;
	bool per_thread_used; /* a command named the serving thread's per-thread stream */
	/* stream-ordered allocations (they belong to no context) */
	uint64_t *async_ptr;
	uint32_t nasync, capasync;
	/* every device allocation and its charge against the quota */
	struct vc_cu_alloc *allocs;
	uint32_t acap, nalloc;
	/* allocations the driver confirmed whole, so that a copy inside one
	 * needs no cuPointerGetAttributes (quota.c); emptied whenever a
	 * tracked allocation may have gone */
	struct vc_cu_range ranges[VC_CU_RANGES];
	uint32_t range_next;
	/* staged images */
	struct vc_cu_image img[VC_CU_MAX_IMAGES];
	uint64_t next_image;
	uint64_t img_bytes; /* staged image bytes held, at most VC_CU_IMAGE_MAX */
	uint64_t mem_limit; /* device memory quota, 0 = none */
	/* host callbacks: run by the driver's thread, which queues them for the
	 * guest and holds the stream until the guest has run them */
	pthread_mutex_t cb_mu;
	pthread_cond_t cb_cv;
	const struct vc_session_services *svc; /* the session's, from open to close */
	bool cb_abort;               /* the session is closing: touch shared memory no more */
	uint32_t cb_inflight;        /* callbacks handed to the driver, not yet returned */
	/* the guest's pinned pool (pinned.c) */
	uint8_t *pinned;        /* its host address, NULL until the guest said where it is */
	uint64_t pinned_size;
	bool pinned_identity;   /* mapped at the guest's own address */
	struct vc_cu_preg *pregs; /* registered ranges, charged as pinned memory */
	uint32_t npregs, cappregs;
	struct vc_cu_psegs *psegs; /* segments beyond the pool (pinseg.c), NULL until the first */
	/* the staging arena mapped again and page-locked (arena.c) */
	uint8_t *arena_dma;     /* NULL until the first arena copy, or where it cannot be */
	bool arena_tried;       /* the mapping and registration were attempted */
	/* the fence words' page mapped again and page-locked (fence.c) */
	void *fence_map;        /* NULL until the first fenced copy, or where it cannot be */
	CUdeviceptr fence_dev;  /* its address for the device */
	uint32_t fence_fails;   /* writes that failed in a row (FAILS_MAX: no more tries) */
	/* compute weights: the tracker of work in flight (sched.c), NULL until needed */
	struct vc_cu_sched *sched;
	/* synchronisations waiting off the serving thread (sync.c) */
	struct sync_job *sync_head;
	struct sync_job *sync_cur; /* the job the helper thread waits for now */
	uint64_t sync_slots[VC_SLOTS_MAX / 64]; /* reply slots a queued job will answer (under cb_mu) */
	/* A synchronisation of a finished stream or event still has work of
	 * its own in the driver: device printf or assert output to flush (an
	 * image that may print was loaded: vc_cu_image_may_print()), or a
	 * stream-ordered pool to trim (an asynchronous allocation was made).
	 * Set once, never cleared (syncpoll.c). Serving thread only. */
	bool sync_flushes;
	/* An image that may print was loaded (vc_cu_image_may_print()): the
	 * driver may write device printf at a blocking call, which the
	 * console then collects before the reply (exec.c). Set once, never
	 * cleared. Serving thread only. */
	bool may_print;
	pthread_t syncer;
	bool syncer_started;
	struct vc_cu_session *kept_next; /* closed, kept for callbacks still due (exec.c) */
	/* managed ranges: allocations and __managed__ globals (managed.c), NULL until the first */
	struct vc_cu_managed *managed;
	/* virtual memory management and IPC (vmm.h), NULL until first used */
	struct vc_cu_vmm *vmm;
	/* streams, launches, tensor maps (attrs.c, memops.c, tensormap.c) */
	bool memop_waits;           /* a stream was told to wait for a value: waits may never end */
	struct vc_cu_tmaps *tmaps;  /* tensor maps the session encoded, NULL until one */
	/* texture and surface objects, planes and levels (array.c), NULL until needed */
	struct vc_cu_arrays *arr;
	/* graphs: host node records, graph memory charges, the last dot print (graph_exec.c) */
	struct vc_cu_graphs *graphs;
	/* allocations mapped into sparse arrays, held for them (memmisc.c), NULL until one */
	struct vc_cu_memmisc *memmisc;
	/* green contexts and device resources (green.c), the driver's logs (logs.c), NULL until used */
	struct vc_cu_green *green;
	struct vc_cu_logs *logs;
	/* the worker's primary contexts retained for green contexts (green.c):
	 * memory made in a green context may be theirs (handles.c's range check) */
	void *green_primary[VC_CU_MAX_DEVICES];
};

/** vc_cu_capture_relaxed() - put the calling host thread in relaxed capture mode, once. */
void vc_cu_capture_relaxed(struct vc_cu_session *x);

/**
 * vc_cu_pinned_ptr() - host address of [@off, @off + @len) of the pinned pool,
 * or NULL when it lies outside.
 */
void *vc_cu_pinned_ptr(struct vc_cu_session *x, uint64_t off, uint64_t len);

/**
 * vc_cu_pinned_off() - the pinned offset of host address @host of this
 * process (the pool, wherever it is mapped, or a segment), in *@off.
 * Returns 0, or -ENOENT when it is neither.
 */
int vc_cu_pinned_off(struct vc_cu_session *x, const void *host, uint64_t *off);

/**
 * vc_cu_pinned_at() - [@ptr, @ptr + @len) as a device address of mapped
 * pinned memory: the pool where it is mapped at the guest's address, or a
 * segment (always so mapped). Its pinned offset in *@off; 0 or -ENOENT.
 */
int vc_cu_pinned_at(struct vc_cu_session *x, uint64_t ptr, uint64_t len, uint64_t *off);

/** vc_cu_pinseg_ptr() - host address of [@off, @off + @len) of one segment (pinseg.c), or NULL. */
void *vc_cu_pinseg_ptr(struct vc_cu_session *x, uint64_t off, uint64_t len);

/** vc_cu_pinseg_find() - the segment holding [@addr, @addr + @len): its pinned offset in *@off; 0 or -ENOENT. */
int vc_cu_pinseg_find(struct vc_cu_session *x, uint64_t addr, uint64_t len, uint64_t *off);

/**
 * vc_cu_pinseg_mapped() - whether the segment holding [@off, @off + @len)
 * has its pages in our page tables already (a VC_CU_PINSEG_PREFAULT MAP's
 * prefault, waited for here if it still runs). False for anything else.
 */
bool vc_cu_pinseg_mapped(struct vc_cu_session *x, uint64_t off, uint64_t len);

/** vc_cu_pinseg_fini() - unmap every segment (session teardown, after the contexts). */
void vc_cu_pinseg_fini(struct vc_cu_session *x);

/**
 * vc_cu_map_locked() - @size bytes of the region's memfd @fd from @fd_off
 * mapped a second time and registered with the driver with @flags (a
 * context current; arena.c). Returns the mapping, or NULL where @fd is -1,
 * the mapping fails or the driver refuses.
 */
void *vc_cu_map_locked(struct vc_cu_session *x, int fd, uint64_t fd_off, uint64_t size, unsigned flags);

/** vc_cu_unmap_locked() - unregister and unmap a vc_cu_map_locked() mapping. */
void vc_cu_unmap_locked(struct vc_cu_session *x, void *m, uint64_t size);

/**
 * vc_cu_arena_dma() - host address of [@off, @off + @len) of the staging
 * arena in its page-locked mapping (arena.c), mapped and registered on the
 * first call (a context must be current); NULL where there is none or the
 * range is outside the arena: the caller then uses the session's mapping.
 */
void *vc_cu_arena_dma(struct vc_cu_session *x, uint64_t off, uint64_t len);

/** vc_cu_arena_fini() - unregister and unmap the arena's page-locked mapping (teardown, a context current). */
void vc_cu_arena_fini(struct vc_cu_session *x);

/**
 * vc_cu_fence_queue() - for a command sent fenced (@out->fence), queue on
 * @stream, after the work just queued there, the device's write of its
 * fence word (fence.c), mapping and registering the words' page the first
 * time (a context must be current). True when queued (@out->fence_queued
 * set); false when the caller must wait for the work itself.
 */
bool vc_cu_fence_queue(struct vc_cu_session *x, CUstream stream, struct vc_cu_out *out);

/** vc_cu_fence_fini() - unregister and unmap the fence words' page (teardown, a context current). */
void vc_cu_fence_fini(struct vc_cu_session *x);

/**
 * vc_cu_quota_charge() - count @bytes of device memory against the quota
 * before allocating them. Returns 0 or CUDA_ERROR_OUT_OF_MEMORY.
 */
int vc_cu_quota_charge(struct vc_cu_session *x, uint64_t bytes);

/** vc_cu_quota_refund() - give back a charge whose allocation failed or ended. */
void vc_cu_quota_refund(struct vc_cu_session *x, uint64_t bytes);

/**
 * vc_cu_quota_gone() - memory that was charged and counted on device @dev
 * (vc_acct_on_device(); -1: none) is gone: its charge and its count.
 */
void vc_cu_quota_gone(struct vc_cu_session *x, int dev, uint64_t bytes);

/**
 * vc_cu_quota_device() - the device of the current context, which memory
 * made now is counted on in the per-device views (the guest NVML's); -1
 * when there is none.
 */
int vc_cu_quota_device(struct vc_cu_session *x);

/**
 * vc_cu_quota_track() - remember allocation @dptr of context @ctx (0: stream
 * ordered) and its charge @bytes, refunded when it is freed; it is counted
 * on the current context's device until then. Returns 0 or
 * CUDA_ERROR_OUT_OF_MEMORY (the table could not grow).
 */
int vc_cu_quota_track(struct vc_cu_session *x, uint64_t dptr, uint64_t bytes, uint64_t ctx);

/** vc_cu_quota_untrack() - @dptr was freed: refund its charge (nothing if unknown). */
void vc_cu_quota_untrack(struct vc_cu_session *x, uint64_t dptr);

/** vc_cu_quota_ctx_gone() - context @ctx was destroyed with its allocations: refund them. */
void vc_cu_quota_ctx_gone(struct vc_cu_session *x, uint64_t ctx);

/**
 * vc_cu_quota_meminfo() - cuMemGetInfo's answer seen through the server's
 * quota (generated decoder's host_post): with a quota, *@total becomes
 * min(quota, device total) and *@free min(device free, total - what the
 * server's sessions hold). Returns CUDA_SUCCESS.
 */
int vc_cu_quota_meminfo(struct vc_cu_session *x, size_t *free, size_t *total);

/* How a call changes the guest's references on a user object (besides a
 * cuGraphRetainUserObject's flags, CU_GRAPH_USER_OBJECT_MOVE: they move). */
#define VC_CU_UOBJ_ADD 0x100u
#define VC_CU_UOBJ_DROP 0x200u

/**
 * vc_cu_uobj_check() - may the guest's references on user object @object
 * change by @count as @how says (VC_CU_UOBJ_*, a graph retain's flags, 0
 * for no change)? First forgets the ids of objects the driver destroyed.
 * A release or a move of more than the guest holds, or a count past 32
 * bits, is CUDA_ERROR_INVALID_VALUE (generated decoders' host_pre).
 */
int vc_cu_uobj_check(struct vc_cu_session *x, uint64_t object, uint64_t count, uint64_t how);

/** vc_cu_uobj_note() - the driver took the change vc_cu_uobj_check() allowed: count it (host_post). */
int vc_cu_uobj_note(struct vc_cu_session *x, uint64_t object, uint64_t count, uint64_t how);

/**
 * vc_cu_ipc_pool_gone() - memory pool @pool (an id, still in the table) was
 * destroyed: its shareable handles (FABRIC bytes, the listener's descriptor)
 * go, so that a pool made later at the same address gets tokens of its own
 * (cuda/ipc.c; cuMemPoolDestroy's host_post). Returns CUDA_SUCCESS.
 */
int vc_cu_ipc_pool_gone(struct vc_cu_session *x, uint64_t pool);

/**
 * vc_cu_quota_covers() - is [@ptr, @ptr + @len) inside an allocation that
 * vc_cu_quota_note() recorded and that is still tracked? A cheap answer for
 * vc_cu_check_range(); false means "ask the driver".
 */
bool vc_cu_quota_covers(const struct vc_cu_session *x, uint64_t ptr, uint64_t len);

/**
 * vc_cu_quota_note() - the driver said [@start, @start + @size) is one
 * allocation of the session's: remember it for vc_cu_quota_covers() when
 * @start is a tracked allocation of a context (stream-ordered ones, whose
 * frees are ordered by their streams, are not). Until it is untracked or its
 * context goes.
 */
void vc_cu_quota_note(struct vc_cu_session *x, uint64_t start, uint64_t size);

/** vc_cu_quota_ranges_forget() - empty vc_cu_quota_covers()'s cache. */
void vc_cu_quota_ranges_forget(struct vc_cu_session *x);

/** vc_cu_quota_fini() - free the table (the process or context teardown freed the memory). */
void vc_cu_quota_fini(struct vc_cu_session *x);

/** vc_cu_sched_before() - before a kernel launch: wait while this server is ahead (gpushare.h). */
void vc_cu_sched_before(struct vc_cu_session *x);

/**
 * vc_cu_sched_after() - a kernel was launched on @stream of context @ctx
 * (real handles): track it while another server competes for the GPU.
 */
void vc_cu_sched_after(struct vc_cu_session *x, void *ctx, void *stream);

/** vc_cu_sched_ctx_gone() - context @ctx is about to be destroyed: forget its events. */
void vc_cu_sched_ctx_gone(struct vc_cu_session *x, void *ctx);

/** vc_cu_sched_stop() - end the tracker and free its events (session teardown). */
void vc_cu_sched_stop(struct vc_cu_session *x);

/**
 * vc_cu_streams_idle() - whether no stream of the session, nor the current
 * context's legacy stream, has work pending and none captures (true), as
 * their queries say; false too where the session has more than @max
 * streams. A capturing stream is not queried (that would end its capture).
 */
bool vc_cu_streams_idle(struct vc_cu_session *x, uint32_t max);

/**
 * vc_cu_quiesce() - at a session's close, in a context of the session made
 * current: wait a while (vc_exec_cuda_set_close_wait(), 2 s by default) for
 * the work of its streams (and the current context's legacy stream) to end. Returns false when some did not: a
 * stream may wait on a value that nothing will write now (a guest's
 * cuStreamWaitValue32 left behind), which a context synchronisation would
 * wait on for ever. The worker's exit frees the rest (quiesce.c).
 */
bool vc_cu_quiesce(struct vc_cu_session *x);

/**
 * vc_cu_managed_check() - is [@ptr, @ptr + @len) in one managed range of this
 * session (managed.c)? Returns 0 or CUDA_ERROR_INVALID_VALUE.
 */
int vc_cu_managed_check(struct vc_cu_session *x, uint64_t ptr, uint64_t len);

/** vc_cu_managed_ctx_gone() - context @ctx was destroyed with its managed memory: forget it. */
void vc_cu_managed_ctx_gone(struct vc_cu_session *x, uint64_t ctx);

/** vc_cu_managed_fini() - free the table of managed ranges (session teardown). */
void vc_cu_managed_fini(struct vc_cu_session *x);

/**
 * vc_cu_arrays_ctx_gone() - context @ctx was destroyed: forget its texture and
 * surface objects, and the planes and levels of its arrays (array.c).
 */
void vc_cu_arrays_ctx_gone(struct vc_cu_session *x, uint64_t ctx);

/** vc_cu_arrays_close() - session teardown: destroy texture and surface objects, then arrays (array.c). */
void vc_cu_arrays_close(struct vc_cu_session *x);

/**
 * vc_cu_texref_ctx_gone() - context @ctx is about to be destroyed: destroy the
 * texture references made in it with cuTexRefCreate, inside it (texref.c).
 */
void vc_cu_texref_ctx_gone(struct vc_cu_session *x, uint64_t ctx);

/** vc_cu_texref_close() - session teardown: destroy every texture reference it created (texref.c). */
void vc_cu_texref_close(struct vc_cu_session *x);

/** vc_cu_pinned_fini() - unmap the pool's second mapping. */
void vc_cu_pinned_fini(struct vc_cu_session *x);

/**
 * vc_cu_sync_ctx_gone() - context @ctx is about to be destroyed: wait until no
 * synchronisation queued for the helper thread, or running there, uses it.
 */
void vc_cu_sync_ctx_gone(struct vc_cu_session *x, void *ctx);

/** vc_cu_link_fini() - destroy the session's JIT links and their buffers (link.c). */
void vc_cu_link_fini(struct vc_cu_session *x);

/** vc_cu_sync_stop() - end the helper thread that waits for synchronisations. */
void vc_cu_sync_stop(struct vc_cu_session *x);

/**
 * vc_cu_green_close() - session teardown, before contexts are destroyed:
 * green contexts' streams, the green contexts (their contexts are not
 * cuCtxDestroy'd), the primary contexts retained for them (green.c).
 */
void vc_cu_green_close(struct vc_cu_session *x);

/** vc_cu_logs_close() - session teardown: the driver log callback unregistered, its queue freed (logs.c). */
void vc_cu_logs_close(struct vc_cu_session *x);

/* ---- shared by the hand-written files ------------------------------------- */

/** vc_cu_handles_init() - an empty handle table for a new session: 0 or -ENOMEM (handles.c). */
int vc_cu_handles_init(struct vc_cu_session *x);

/** vc_cu_handles_fini() - free the handle table and its reverse map (session teardown). */
void vc_cu_handles_fini(struct vc_cu_session *x);

/** vc_cu_not_capturing() - 0, or CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED while @stream captures (handles.c). */
int vc_cu_not_capturing(struct vc_cu_session *x, void *stream);

/** vc_cu_publish_owned() - vc_cu_publish() a handle owned by the current context (ctx.c). */
int vc_cu_publish_owned(struct vc_cu_session *x, int kind, void *real, uint64_t *id);

/** vc_cu_primary_get() - the id of device @dev's primary context, made if needed, no retain (ctx.c). */
int vc_cu_primary_get(struct vc_cu_session *x, int32_t dev, uint64_t *id);

/**
 * vc_cu_launch_attr() - launch attribute @id with the 64 value bytes @value
 * from the wire, as the driver takes it, in *@a: events inside looked up in
 * the session's tables, an access policy window checked as the session's
 * memory (attrs.c). Returns 0 or the CUresult that refuses it.
 */
int vc_cu_launch_attr(struct vc_cu_session *x, uint32_t id, const uint8_t *value, CUlaunchAttribute *a);

/**
 * vc_cu_launch_config() - the launch configuration of request @rq, its
 * attributes (at @attrs_p, checked with vc_cu_launch_attr()) into @attrs
 * (room for rq->nattrs + 1), on real stream @stream (attrs.c).
 */
int vc_cu_launch_config(struct vc_cu_session *x, const struct vc_cu_req_launch *rq, const uint8_t *attrs_p,
			CUlaunchAttribute *attrs, CUlaunchConfig *cfg, void *stream);

/**
 * vc_cu_check_memop_range() - vc_cu_check_range(), or a registered range of
 * the pinned pool where its device address is its host address (memops.c).
 */
int vc_cu_check_memop_range(struct vc_cu_session *x, uint64_t ptr, uint64_t len);

/** vc_cu_tmap_fini() - forget the tensor maps the session encoded (tensormap.c). */
void vc_cu_tmap_fini(struct vc_cu_session *x);

/* ---- helpers the generated decoders call ---------------------------------- */

/** vc_cu_enter() - make context @id current on the serving thread (0: none). */
int vc_cu_enter(struct vc_cu_session *x, uint64_t id);

/**
 * vc_cu_lookup() - the real handle behind id @id of kind @kind. Id 0 is NULL;
 * stream ids 1 and 2 are CU_STREAM_LEGACY and CU_STREAM_PER_THREAD. A stream
 * looked up is marked as maybe busy (every command that gives a stream work
 * names it through here), for the poll of a context synchronisation.
 * Returns 0 or CUDA_ERROR_INVALID_HANDLE.
 */
int vc_cu_lookup(struct vc_cu_session *x, int kind, uint64_t id, void **real);

/**
 * vc_cu_stream_slots() - the table slots of the session's live streams
 * (*@n of them, in no order), valid until the next handle is published or
 * forgotten.
 */
const uint32_t *vc_cu_stream_slots(const struct vc_cu_session *x, uint32_t *n);

/** vc_cu_handle_get() - the table entry of live id @id of kind @kind, or NULL. */
struct vc_cu_handle *vc_cu_handle_get(struct vc_cu_session *x, int kind, uint64_t id);

/**
 * vc_cu_stream_ctx() - the real context stream id @id belongs to (its owner's,
 * or a green context's converted context), or NULL when it is not known
 * (special streams: the current context's).
 */
void *vc_cu_stream_ctx(struct vc_cu_session *x, uint64_t id);

/**
 * vc_cu_rebind() - point id @id at another real object (NULL: dormant, its id
 * kept). Primary contexts keep their handle across a reset, as natively.
 */
int vc_cu_rebind(struct vc_cu_session *x, int kind, uint64_t id, void *real);

/**
 * vc_cu_lookup_func() - a CUfunction, or a CUkernel standing for one; which
 * of the two in *@is_kernel when not NULL.
 */
int vc_cu_lookup_func(struct vc_cu_session *x, uint64_t id, void **f, bool *is_kernel);

/**
 * vc_cu_publish() - the id of real handle @real (a new one, or the one it
 * already has). Returns 0 or CUDA_ERROR_OUT_OF_MEMORY (table full).
 */
int vc_cu_publish(struct vc_cu_session *x, int kind, void *real, uint64_t *id);

/**
 * vc_cu_capturing() - whether real stream @stream is capturing into a graph
 * (then nothing of vcuda's own may be enqueued on it: it would become a node).
 */
bool vc_cu_capturing(struct vc_cu_session *x, void *stream);

/**
 * vc_cu_find() - the id real handle @real already has, without publishing
 * it. Returns 0, or -ENOENT when the guest was never shown it.
 */
int vc_cu_find(struct vc_cu_session *x, int kind, void *real, uint64_t *id);

/**
 * vc_cu_func_layout() - the parameter layout of function (or, with
 * @is_kernel, kernel) @f, asked of the driver parameter by parameter.
 * Returns 0 or CUDA_ERROR_INVALID_VALUE (a layout beyond the launch limit).
 */
int vc_cu_func_layout(struct vc_cu_session *x, void *f, bool is_kernel, struct vc_cu_param_layout *pl);

/**
 * vc_cu_list_reply() - answer page @rq of the @total handles @items of kind
 * @kind: their ids in the reply data, the count in the reply (names.c).
 * With @owned, the items belong to the list's owner (their ids go with it).
 */
int vc_cu_list_reply(struct vc_cu_session *x, const struct vc_cu_req_list *rq, int kind, void *const *items,
		     uint64_t total, bool owned, struct vc_cu_out *out);

/** vc_cu_forget() - drop id @id after its object was destroyed. */
void vc_cu_forget(struct vc_cu_session *x, int kind, uint64_t id);

/** vc_cu_forget_slot() - drop the handle in table slot @idx, and every handle it owns. */
void vc_cu_forget_slot(struct vc_cu_session *x, uint32_t idx);

/**
 * vc_cu_forget_owned() - drop every handle that slot @idx owns, directly or
 * through others (a context's modules and their functions), keeping @idx.
 */
void vc_cu_forget_owned(struct vc_cu_session *x, uint32_t idx);

/**
 * vc_cu_owner_of() - the table index of the handle that owns @id, or
 * UINT32_MAX when it has none or @id is no live handle (0 included).
 */
uint32_t vc_cu_owner_of(struct vc_cu_session *x, uint64_t id);

/**
 * vc_cu_set_owner() - handle @id belongs to handle @owner (0 or a dead id:
 * to none): it is forgotten when @owner is, so that a function of an
 * unloaded module, a kernel of an unloaded library or a stream of a
 * destroyed context is an invalid handle, never a dangling pointer handed
 * to the driver.
 */
void vc_cu_set_owner(struct vc_cu_session *x, uint64_t id, uint64_t owner);

/**
 * vc_cu_publish_child() - vc_cu_publish() a handle that belongs to @owner
 * (vc_cu_set_owner(); an id the guest already held keeps its owner).
 */
int vc_cu_publish_child(struct vc_cu_session *x, int kind, void *real, uint64_t owner, uint64_t *id);

/**
 * vc_cu_string() - the NUL-terminated string of @n bytes at @p (within the @len
 * bytes available), or NULL when it is not exactly that.
 */
const char *vc_cu_string(const uint8_t *p, uint32_t len, uint32_t n);

/**
 * vc_cu_check_range() - is [@ptr, @ptr + @len) device memory of this session
 * (in one allocation of one of its contexts, or one of its stream-ordered
 * allocations)? Returns 0 or CUDA_ERROR_INVALID_VALUE.
 */
int vc_cu_check_range(struct vc_cu_session *x, uint64_t ptr, uint64_t len);

/**
 * vc_cu_image_check() - does the image in the @size bytes at @p keep within
 * them by its own headers (fatbin and its entries, ELF and its tables and
 * sections, PTX up to its NUL)? Returns 0 or CUDA_ERROR_INVALID_IMAGE
 * (image.c).
 */
int vc_cu_image_check(const uint8_t *p, uint64_t size);

/**
 * vc_cu_image_may_print() - could code in the image at @p (@size bytes,
 * vc_cu_image_check() passed), loaded on a device of architecture @arch
 * (major * 10 + minor; 0: unknown), write device printf or assert output?
 * Of a fatbin with a cubin for @arch only those cubins count (the driver
 * loads them), else every entry. True where code that counts names
 * vprintf or __assertfail, or cannot be read (compressed, an unknown
 * kind), or the image is malformed (image.c).
 */
bool vc_cu_image_may_print(const uint8_t *p, uint64_t size, uint32_t arch);

/**
 * vc_cu_image_loading() - image @p (@size bytes, checked) is about to be
 * loaded in the current context: sets the session's sync_flushes where its
 * code may print on that context's device (module.c).
 */
void vc_cu_image_loading(struct vc_cu_session *x, const uint8_t *p, uint64_t size);

/** vc_cu_dispatch() - decode and execute CUDA operation @op (generated). */
int vc_cu_dispatch(struct vc_cu_session *x, uint32_t op, const uint8_t *p, uint32_t len,
		   struct vc_cu_out *out);

#include "vc_cuda_manual_gen.h"

#endif /* VC_CU_EXEC_PRIV_H */
