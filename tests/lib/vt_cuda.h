/* SPDX-License-Identifier: MIT */
/*
 * vt_cuda.h - CUDA operations encoded by hand on a transport client, for the
 * test programs that talk to vcuda-server below the guest library
 * (tests/integration/bad_client.c, tests/vm/vm_guest_test.c): they need the
 * ring itself (vc_client_raw_ring) to be hostile with, and a few CUDA
 * operations to keep a session busy and to check that it still works.
 *
 * Each request is encoded as guest-lib/libcuda encodes it (ctx.c, memory.c,
 * module.c, launch.c, stream.c), so that these tests run over the CI
 * stand-in and the real GPU executor alike.
 *
 * Return values, as vc_client.h's: a negative -errno is a transport failure
 * (-EPROTO: the session is FATAL), a value >= 0 a CUDA result (0 success).
 * Every function takes the context id that vt_ctx_open() returned; none is
 * thread-safe for one context beyond what vc_client itself guarantees.
 */
#ifndef VT_CUDA_H
#define VT_CUDA_H

#include <stdint.h>

#include "vc_client.h"
#include "vc_cuda_manual.h"

/* Host-to-device copies up to this size travel inline in the ring, as the
 * guest library sends them; larger ones go through the staging arena. */
#define VT_INLINE_HTOD_MAX 4096u

/** vt_ctx_open() - retain device 0's primary context; its id in *@ctx. */
int vt_ctx_open(struct vc_client *c, uint64_t *ctx);

/** vt_ctx_close() - release device 0's primary context (the last release destroys it). */
int vt_ctx_close(struct vc_client *c, uint64_t ctx);

/** vt_mem_alloc() - cuMemAlloc of @size bytes in @ctx; the address in *@dptr. */
int vt_mem_alloc(struct vc_client *c, uint64_t ctx, uint64_t size, uint64_t *dptr);

/** vt_mem_free() - cuMemFree of @dptr (synchronous). */
int vt_mem_free(struct vc_client *c, uint64_t ctx, uint64_t dptr);

/**
 * vt_htod() - copy @len bytes at @src to device address @dst: inline in the
 * ring up to VT_INLINE_HTOD_MAX, else pipelined through the staging arena
 * (vc_client_put). With @async it returns once @src may be reused and errors
 * become sticky; otherwise it waits and returns the copy's result or a
 * pending asynchronous error.
 */
int vt_htod(struct vc_client *c, uint64_t ctx, uint64_t dst, const void *src, uint64_t len, int async);

/**
 * vt_dtoh() - copy @len bytes from device address @src to @dst: in the reply
 * slot when they fit, else pipelined through the staging arena
 * (vc_client_get). Synchronous; returns the copy's result or a pending
 * asynchronous error.
 */
int vt_dtoh(struct vc_client *c, uint64_t ctx, void *dst, uint64_t src, uint64_t len);

/** vt_dtod() - copy @len bytes between device addresses; as vt_htod() for @async. */
int vt_dtod(struct vc_client *c, uint64_t ctx, uint64_t dst, uint64_t src, uint64_t len, int async);

/**
 * vt_memset() - set @count elements of @elem bytes (1, 2 or 4; others are a
 * protocol violation) at @dst to @value; as vt_htod() for @async.
 */
int vt_memset(struct vc_client *c, uint64_t ctx, uint64_t dst, uint32_t value, uint32_t elem, uint64_t count,
	      int async);

/** vt_take_error() - the pending asynchronous error of any command executed so far, consumed (0: none). */
int vt_take_error(struct vc_client *c);

/**
 * vt_sync() - cuCtxSynchronize of @ctx (vcSync, answered when the device is
 * done), then the pending asynchronous error, consumed: returns that error if
 * there is one, else the synchronisation's result, or -errno.
 */
int vt_sync(struct vc_client *c, uint64_t ctx);

/**
 * vt_module_load() - stage the @size bytes of @image on the host (vcImageBegin,
 * then vcImagePut inline, or pieces through the arena when large) and load it
 * as a module (vcLoad); the module id in *@mod. PTX is passed with its NUL.
 */
int vt_module_load(struct vc_client *c, uint64_t ctx, const void *image, uint64_t size, uint64_t *mod);

/** vt_module_function() - cuModuleGetFunction of @name in module @mod; its id in *@func. */
int vt_module_function(struct vc_client *c, uint64_t ctx, uint64_t mod, const char *name, uint64_t *func);

/** vt_func_params() - the parameter layout of function @func, as the host's driver tells it. */
int vt_func_params(struct vc_client *c, uint64_t ctx, uint64_t func, struct vc_cu_param_layout *pl);

/**
 * vt_launch() - an asynchronous launch of @func on the default stream with
 * @param_size bytes of packed parameters at @params (laid out as
 * vt_func_params() says). Its failure becomes the sticky error.
 */
int vt_launch(struct vc_client *c, uint64_t ctx, uint64_t func, const uint32_t grid[3], const uint32_t block[3],
	      uint32_t shared_mem, const void *params, uint32_t param_size);

/**
 * vt_store_kernel() - load tests/lib/vt_kernels.h's store kernel in @ctx (PTX
 * on a GPU, the stand-in's double of the same name otherwise); the function
 * id in *@func.
 */
int vt_store_kernel(struct vc_client *c, uint64_t ctx, uint64_t *func);

/**
 * vt_store() - launch the store kernel @func once (one thread): it stores
 * @value at device address @dst (4-byte aligned) in stream order.
 * Asynchronous, as vt_launch().
 */
int vt_store(struct vc_client *c, uint64_t ctx, uint64_t func, uint64_t dst, uint32_t value);

/**
 * vt_pin_map() - vcPinnedSegment MAP_GUEST: the host maps pin (@entry, @gen)
 * of the guest's kernel at @addr (@len bytes) as a segment; its pinned
 * offset in *@off. Whatever the answer, the host lets the pin go on failure.
 */
int vt_pin_map(struct vc_client *c, uint64_t ctx, uint64_t addr, uint64_t len, uint32_t entry, uint64_t gen,
	       uint64_t *off);

/** vt_pin_unmap() - vcPinnedSegment UNMAP of the segment at pinned offset @off. */
int vt_pin_unmap(struct vc_client *c, uint64_t ctx, uint64_t off);

/** vt_host_register() - vcHostRegister of @len bytes at pinned offset @off; the device address in *@devptr. */
int vt_host_register(struct vc_client *c, uint64_t ctx, uint64_t off, uint64_t len, uint64_t *devptr);

/**
 * vt_copy_pinned() - a blocking copy of @len bytes between device address
 * @dev and page-locked memory at pinned offset @off (@dir VC_CU_COPY_HTOD or
 * VC_CU_COPY_DTOH): the host's DMA, no staging.
 */
int vt_copy_pinned(struct vc_client *c, uint64_t ctx, uint32_t dir, uint64_t dev, uint64_t off, uint64_t len);

#endif /* VT_CUDA_H */
