/* SPDX-License-Identifier: MIT */
/*
 * vc_ring_guest.h - the guest (producer) side of a session's ring: writing
 * commands, the doorbell-only-when-idle protocol, waiting for completions,
 * reading replies and the sticky error, and the staging-arena chunks.
 *
 * The transport (host-local socket or the vcuda.ko device) supplies the two
 * things that leave the process: ringing the doorbell and sleeping until the
 * completion interrupt.
 *
 * Threading: vc_ring_guest_write() and _publish() must be called under one
 * lock held by the caller, and the chunk functions under another (or the
 * same); vc_ring_guest_wait(), _done(), _read_reply() and _error() may be
 * called from any thread.
 */
#ifndef VC_RING_GUEST_H
#define VC_RING_GUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "vc_wire.h"

struct vc_ring_wait_ops {
	/** kick() - ring the doorbell; 0 or -errno. */
	int (*kick)(void *ctx);
	/**
	 * sleep() - sleep until a completion interrupt or @timeout_ms passes;
	 * 0 on wake-up or timeout, -EPIPE when the server is known to be gone.
	 */
	int (*sleep)(void *ctx, int timeout_ms);
};

struct vc_ring_guest {
	struct vc_ctrl *ctrl;
	uint8_t *ring;
	uint8_t *slots;
	uint8_t *arena;
	struct vc_layout layout;
	uint32_t tail;       /* written, possibly unpublished */
	uint32_t head_cache; /* last head seen */
	uint64_t seq;        /* seq of the last command written */
	uint64_t pub_seq;    /* seq of the last command published */
	const struct vc_ring_wait_ops *ops;
	void *ops_ctx;
	uint32_t spin_us;         /* spin this long before sleeping */
	uint32_t alive_timeout_ms; /* no ALIVE for this long: server presumed dead */
	uint64_t kicks;           /* statistics */
	/* staging arena: chunks handed out in FIFO order */
	uint32_t nchunks;
	uint32_t window;     /* chunks in rotation (<= nchunks): bounds the bytes in flight */
	uint32_t next_chunk;
	uint64_t *chunk_release; /* seq after which each chunk is free again */
	uint32_t cb_head;        /* host callbacks taken by the callback thread */
};

/**
 * vc_ring_guest_init() - attach to a region mapped at @base whose layout the
 * host sent over the control channel. Checks the control page's magic,
 * protocol version and ABI hash against this build and the layout.
 *
 * Returns 0, -EPROTO (version or ABI mismatch), -EINVAL (bad layout), -ENOMEM.
 */
int vc_ring_guest_init(struct vc_ring_guest *g, void *base, const struct vc_layout *layout,
		       const struct vc_ring_wait_ops *ops, void *ops_ctx);

/** vc_ring_guest_fini() - free the guest's private state. */
void vc_ring_guest_fini(struct vc_ring_guest *g);

/**
 * vc_ring_guest_write() - write one command (header for @op with @flags and
 * @slot, then @l1 bytes at @p1 and @l2 bytes at @p2) into the ring, waiting
 * for space when the ring is full. The command is not visible to the host
 * until vc_ring_guest_publish().
 *
 * Returns its sequence number (> 0), or -E2BIG (larger than the ring),
 * -EPROTO (session FATAL), -EPIPE (server gone).
 */
int64_t vc_ring_guest_write(struct vc_ring_guest *g, uint32_t op, uint32_t flags, uint32_t slot,
			    const void *p1, size_t l1, const void *p2, size_t l2);

/**
 * vc_ring_guest_publish() - make the written commands visible to the host and
 * ring the doorbell if, and only if, the host's server thread is IDLE.
 *
 * Returns 0, or the transport's -errno from kick().
 */
int vc_ring_guest_publish(struct vc_ring_guest *g);

/** vc_ring_guest_done() - the host's done_seq (acquire). */
uint64_t vc_ring_guest_done(struct vc_ring_guest *g);

/**
 * vc_ring_guest_wait() - wait until command @seq has executed: spin for
 * spin_us, then sleep on the transport, checking FATAL and ALIVE.
 *
 * Returns 0, -EPROTO (session FATAL), -EPIPE (server gone or not ALIVE for
 * alive_timeout_ms).
 */
int vc_ring_guest_wait(struct vc_ring_guest *g, uint64_t seq);

/**
 * vc_ring_guest_wait_reply() - wait until the reply of command @seq is in
 * @slot (it may come after later commands executed: synchronisations wait for
 * the GPU off the serving thread). Returns as vc_ring_guest_wait().
 */
int vc_ring_guest_wait_reply(struct vc_ring_guest *g, uint32_t slot, uint64_t seq);

/**
 * vc_ring_guest_wait_reply_spin() - vc_ring_guest_wait_reply(), spinning for
 * @spin_us or spin_us, whichever is longer, before it sleeps: for a reply
 * whose wait can be told in advance (a copy of known size).
 */
int vc_ring_guest_wait_reply_spin(struct vc_ring_guest *g, uint32_t slot, uint64_t seq, uint32_t spin_us);

/**
 * vc_ring_guest_fence_arm() - before command @seq, written for @slot with
 * VC_CMD_F_FENCE (@slot below VC_FENCE_SLOTS), is published: set the slot's
 * fence word to a value its completion does not write.
 */
void vc_ring_guest_fence_arm(struct vc_ring_guest *g, uint32_t slot, uint64_t seq);

/**
 * vc_ring_guest_fence_wait() - after a successful reply of fenced command
 * @seq in @slot: spin up to @spin_us for its fence word, which says the
 * command's work is done. Returns 0, -ETIMEDOUT (not yet: the caller waits
 * another way, a synchronisation) or -EPROTO (session FATAL).
 */
int vc_ring_guest_fence_wait(struct vc_ring_guest *g, uint32_t slot, uint64_t seq, uint32_t spin_us);

/**
 * vc_ring_guest_read_reply() - copy the reply of command @seq out of @slot
 * (call after vc_ring_guest_wait(@seq) returned 0): its status into *@status,
 * up to @cap payload bytes into @buf; returns the payload length the host
 * wrote, or -EPROTO if the slot does not hold @seq's reply.
 */
int64_t vc_ring_guest_read_reply(struct vc_ring_guest *g, uint32_t slot, uint64_t seq,
				 int32_t *status, void *buf, size_t cap);

/**
 * vc_ring_guest_error() - the pending sticky error of an asynchronous command:
 * returns true and fills *@code and *@seq when one is pending.
 */
bool vc_ring_guest_error(struct vc_ring_guest *g, int32_t *code, uint64_t *seq);

/**
 * vc_ring_guest_console() - bytes of device printf output the host has
 * captured so far (free-running; acquire), to compare with what was fetched.
 */
uint64_t vc_ring_guest_console(struct vc_ring_guest *g);

/** vc_ring_guest_ack_error() - consume the sticky error of command @seq. */
void vc_ring_guest_ack_error(struct vc_ring_guest *g, uint64_t seq);

/** vc_ring_guest_status() - the status bits (VC_STATUS_*) and fatal reason. */
uint32_t vc_ring_guest_status(struct vc_ring_guest *g, uint32_t *fatal_reason);

/**
 * vc_ring_guest_chunk_get() - take the next staging-arena chunk, waiting for
 * the host to finish the command that used it last (which the caller must have
 * published). Chunks are handed out in FIFO order. *@off receives its arena
 * offset. Returns the chunk index, or a -errno of vc_ring_guest_wait(), or
 * -ENOSPC when the region has no arena.
 */
int vc_ring_guest_chunk_get(struct vc_ring_guest *g, uint64_t *off);

/**
 * vc_ring_guest_set_window() - rotate through only the first @n chunks (at
 * least 1, at most all), bounding the arena bytes in flight. Call before the
 * first vc_ring_guest_chunk_get().
 */
void vc_ring_guest_set_window(struct vc_ring_guest *g, uint32_t n);

/** vc_ring_guest_chunk_release() - chunk @idx is free again once @seq has executed. */
void vc_ring_guest_chunk_release(struct vc_ring_guest *g, int idx, uint64_t seq);

/**
 * vc_ring_guest_cb_next() - wait for the next host callback the host queued
 * (one thread only: the callback thread), yielding the CPU between looks for
 * the first @spin_us, then asleep. Returns 0 with its cookie, or the -errno
 * of a dead session.
 */
int vc_ring_guest_cb_next(struct vc_ring_guest *g, uint64_t *cookie, uint32_t spin_us);

/** vc_ring_guest_cb_finish() - the callback taken last has run; the host may go on. */
void vc_ring_guest_cb_finish(struct vc_ring_guest *g);

/**
 * vc_ring_guest_arena_write() - copy @len bytes from @src into the arena at @off;
 * with @stream, with non-temporal stores, leaving no line of it dirty in a CPU
 * cache (for a piece the host's device reads by DMA: snooping dirty lines out of
 * the writer's cache halved that DMA's speed, docs/PERFORMANCE.md).
 */
void vc_ring_guest_arena_write(struct vc_ring_guest *g, uint64_t off, const void *src, size_t len,
			       bool stream);

/**
 * vc_ring_guest_arena_read() - copy @len bytes from the arena at @off to @dst;
 * with @stream, without pulling @dst into the cache (part of a large transfer).
 */
void vc_ring_guest_arena_read(struct vc_ring_guest *g, uint64_t off, void *dst, size_t len,
			      bool stream);

#endif /* VC_RING_GUEST_H */
