/* SPDX-License-Identifier: MIT */
/*
 * vc_client.h - the guest library's transport client: one session with a
 * vcuda-server, its ring, reply slots and staging arena.
 *
 * Return values: a negative -errno is a transport failure (-EPIPE: the server
 * is gone; -EPROTO: the session is FATAL or the protocol is broken;
 * -EPROTONOSUPPORT: version mismatch). A value >= 0 is a CUDA driver result
 * code (0 = CUDA_SUCCESS). All functions are thread-safe.
 */
#ifndef VC_CLIENT_H
#define VC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vc_client;

/**
 * vc_client_env_size() - a tuning knob from the environment: @name's value
 * when it is a number in [@lo, @hi], with an optional K, M or G (binary
 * units: 4M is 4 MiB), else @def.
 */
uint64_t vc_client_env_size(const char *name, uint64_t def, uint64_t lo, uint64_t hi);

/**
 * vc_client_open() - connect to the server at @path (NULL: $VCUDA_SOCKET, then
 * /run/vcuda/vcuda.sock), exchange versions, and map the session's region.
 * On failure, a message a user can act on is left in @err.
 *
 * Returns 0 and *@out, or -errno.
 */
int vc_client_open(const char *path, struct vc_client **out, char *err, size_t errlen);

/** vc_client_close() - end the session; the server frees what it held. */
void vc_client_close(struct vc_client *c);

/**
 * vc_client_call() - a synchronous command: @req (@reqlen bytes) and @data
 * (@dlen bytes) as its payload; waits for the reply, copies up to @outcap
 * bytes of it to @out and its length to *@outlen (may be NULL).
 * Returns the command's CUDA result, or -errno.
 */
int vc_client_call(struct vc_client *c, uint32_t op, const void *req, size_t reqlen,
		   const void *data, size_t dlen, void *out, size_t outcap, size_t *outlen);

/**
 * vc_client_call_fenced() - vc_client_call() (no payload data) of a command
 * whose work the device may finish after the host's reply: sent with
 * VC_CMD_F_FENCE where its reply slot has a fence word (and VCUDA_FENCE is
 * not 0), a successful reply means the work is queued, and this spins up to
 * @spin_us for the fence word that says it is done. *@done says whether the
 * work is known done (always, after an error or without a fence); when it is
 * not, the caller waits for it another way (a synchronisation).
 */
int vc_client_call_fenced(struct vc_client *c, uint32_t op, const void *req, size_t reqlen, void *out,
			  size_t outcap, size_t *outlen, uint32_t spin_us, bool *done);

/**
 * vc_client_spin_next() - the calling thread's next vc_client_call() spins
 * for @us microseconds (or the client's VCUDA_SPIN_US, if longer) before it
 * sleeps: for a wait whose length is known, a blocking copy of a known size
 * (a page-locked copy of 4 MiB ran at 90 % of native when its wait slept
 * after 50 us, 98-99 % with 2 ms of spinning, on the H100 machine).
 */
void vc_client_spin_next(uint32_t us);

/**
 * vc_client_submit() - an asynchronous command: queued and, unless @more is
 * set, published at once. Its failure becomes the sticky error, reported by
 * the next synchronising call (vc_client_take_error()). *@seq (may be NULL) receives its sequence number.
 * Returns 0 or -errno.
 */
int vc_client_submit(struct vc_client *c, uint32_t op, const void *req, size_t reqlen,
		     const void *data, size_t dlen, int more, uint64_t *seq);

/** vc_client_flush() - publish commands queued with @more set. 0 or -errno. */
int vc_client_flush(struct vc_client *c);

/** vc_client_wait() - wait until command @seq has executed. 0 or -errno. */
int vc_client_wait(struct vc_client *c, uint64_t seq);

/**
 * vc_client_emit_fn - submits the command that moves one piece of a bulk
 * transfer: bytes [@off, @off + @n) of it, whose data is (HtoD) or is to be
 * put (DtoH) at staging-arena offset @arena_off. It publishes the command and
 * stores its sequence number in *@seq. Returns 0 or -errno.
 */
typedef int (*vc_client_emit_fn)(struct vc_client *c, void *arg, uint64_t off, uint64_t n,
				 uint64_t arena_off, uint64_t *seq);

/* vc_client_put() flags. */
#define VC_CLIENT_PUT_ASYNC 1u /* return once the source may be reused, without waiting */
#define VC_CLIENT_PUT_DMA 2u   /* the host's device reads the pieces by DMA (not the host's CPU) */

/**
 * vc_client_put() - move @len bytes at @src to the server through the staging
 * arena, pipelined: @emit sends the command for each piece. With
 * VC_CLIENT_PUT_ASYNC in @flags it returns once @src may be reused; otherwise
 * it waits for the last piece and returns the first error of the transfer (a
 * CUDA code) or -errno. With VC_CLIENT_PUT_DMA the pieces are written with
 * non-temporal stores, for a DMA that then finds no line dirty in a CPU cache;
 * without it, with plain stores, for a host CPU that reads them next.
 */
int vc_client_put(struct vc_client *c, const void *src, uint64_t len, vc_client_emit_fn emit, void *arg,
		  unsigned flags);

/**
 * vc_client_get() - move @len bytes from the server to @dst through the staging
 * arena, pipelined: @emit sends the command that fills each piece. Synchronous.
 * Returns 0, the first error of the transfer (a CUDA code) or -errno.
 */
int vc_client_get(struct vc_client *c, void *dst, uint64_t len, vc_client_emit_fn emit, void *arg);

/**
 * vc_client_set_queries() - name the operations that give the device no work
 * (@queries[op - @base] != 0 for op in [@base, @base + @n)); the array must
 * outlive the client. Every other command published counts in
 * vc_client_work().
 */
void vc_client_set_queries(struct vc_client *c, const uint8_t *queries, uint32_t base, uint32_t n);

/**
 * vc_client_work() - how many commands that may give the device work have been
 * published so far (free-running; one relaxed load). A command published
 * before this value was read is counted in it.
 */
uint64_t vc_client_work(struct vc_client *c);

/** vc_client_broken() - whether the session has ended (server gone, or FATAL). */
int vc_client_broken(struct vc_client *c);

/** vc_client_take_error() - the pending asynchronous error at or before @seq, consumed; 0 if none. */
int vc_client_take_error(struct vc_client *c, uint64_t seq);

/**
 * vc_client_console() - bytes of device printf output the server has captured
 * for this session so far (free-running; one load of a control word).
 */
uint64_t vc_client_console(struct vc_client *c);

/** vc_client_inline_max() - the largest reply payload (reply slot capacity). */
uint32_t vc_client_inline_max(struct vc_client *c);

/**
 * vc_client_pinned() - the session's pinned pool (the guest's page-locked
 * allocations), and its size in *@size; NULL when the server gave none.
 */
void *vc_client_pinned(struct vc_client *c, uint64_t *size);

/**
 * vc_client_pinned_map() - make sure pool bytes [@off, @off + @len) are
 * mapped at vc_client_pinned() + @off before they are handed out: through
 * the device the pool is mapped as it is used (vc_dev_pool_map()). Returns
 * 0 or -errno.
 */
int vc_client_pinned_map(struct vc_client *c, uint64_t off, uint64_t len);

/**
 * vc_client_pinned_alias() - map @len bytes of the pinned pool, from pool
 * offset @off, at @addr (page-aligned; MAP_FIXED: whatever was mapped there
 * is replaced), so that the same pages are seen at both addresses. Returns 0
 * or -errno.
 */
int vc_client_pinned_alias(struct vc_client *c, uint64_t off, void *addr, uint64_t len);

/**
 * vc_client_pass_fd() - hand the server descriptor @fd (the memfd of a pinned
 * segment) under @token (nonzero), for the command that names it next
 * (vcPinnedSegment). Returns 0, -EOPNOTSUPP where the transport cannot pass
 * descriptors (a VM), or -errno.
 */
int vc_client_pass_fd(struct vc_client *c, uint64_t token, int fd);

/**
 * vc_client_pin() - in a VM, have the guest's kernel pin this process's pages
 * [@addr, @addr + @len) in place (page aligned) and describe them to the host
 * (vcuda.ko's VCUDA_IOC_PIN; shared/vc_gpin.h): the pin's entry and
 * generation in *@entry and *@gen, for vcPinnedSegment MAP_GUEST. Returns 0,
 * -EOPNOTSUPP where pages cannot be pinned in place (host-locally, an older
 * guest module, a host that holds no RAM of this guest), or the driver's
 * -errno.
 */
int vc_client_pin(struct vc_client *c, uint64_t addr, uint64_t len, uint32_t *entry, uint64_t *gen);

/**
 * vc_client_unpin() - unpin pin (@entry, @gen), which the host has let go.
 * Returns 0, -EBUSY while the host still maps it, or -errno.
 */
int vc_client_unpin(struct vc_client *c, uint32_t entry, uint64_t gen);

/* How long the callback thread stays awake after a callback: the host's
 * thread holds a stream until the guest has run each, and a program that
 * queues one per call (JAX's executions) queues the next within that. */
#define VC_CLIENT_CB_SPIN_US 200u

/**
 * vc_client_cb_next() - wait for the next host callback queued for this
 * process (one thread only), awake for VC_CLIENT_CB_SPIN_US first. Returns
 * 0 with its cookie, or -errno when the session ended.
 */
int vc_client_cb_next(struct vc_client *c, uint64_t *cookie);

/** vc_client_cb_finish() - the callback taken last has run. */
void vc_client_cb_finish(struct vc_client *c);

struct vc_client_info {
	uint32_t session_id;
	uint64_t region_size;
	uint32_t ring_size;
	uint32_t slot_count, slot_size;
	uint32_t chunk_size;
	uint64_t arena_size;
	uint64_t kicks;    /* doorbells rung */
	uint64_t done_seq; /* commands the server has executed (at least up to the last reply read) */
};

/**
 * vc_client_bulk_shape() - how a bulk copy of @len bytes through the arena is
 * cut: its piece size and the most pieces staged at once (for benchmarks that
 * compare the transport with the same pipeline run in-process).
 */
void vc_client_bulk_shape(const struct vc_client *c, uint64_t len, uint64_t *piece, uint32_t *inflight);

/** vc_client_get_info() - the session's layout and counters. */
void vc_client_get_info(struct vc_client *c, struct vc_client_info *info);

/**
 * vc_client_raw_ring() - for protocol tests only: the ring state, so that a
 * test can publish deliberately malformed commands.
 */
struct vc_ring_guest *vc_client_raw_ring(struct vc_client *c);

#endif /* VC_CLIENT_H */
