/* SPDX-License-Identifier: MIT */
/*
 * vc_ring_host.h - the host (consumer) side of a session's ring.
 *
 * The guest is untrusted. The host keeps its own copy of the layout and of
 * `head`, reads the guest's `tail` once per fetch, rejects a tail more than a
 * ring size ahead, copies the published span into private memory and only then
 * lets the decoder look at it. Nothing the host wrote is read back from shared
 * memory, and no guest-written word is read twice for one decision.
 */
#ifndef VC_RING_HOST_H
#define VC_RING_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "vc_wire.h"

struct vc_ring_host {
	struct vc_ctrl *ctrl;
	uint8_t *ring;
	uint8_t *slots;
	uint8_t *arena;
	struct vc_layout layout; /* private copy; never re-read from shared memory */
	uint32_t head;           /* private copy of what has been consumed */
	uint64_t done;           /* last done_seq published */
	uint64_t err_seq;        /* seq of the sticky error published, 0 = none */
	uint32_t cb_tail;        /* host callbacks queued (private copy) */
	uint32_t fatal;          /* enum vc_fatal; 0 while healthy */
	uint8_t *span;           /* private copy of the published span, ring_size bytes */
};

/**
 * vc_ring_host_init() - take over a freshly created shared region at @base:
 * write the control page header (magic, version, ABI hash, layout), zero the
 * control words, and allocate the private span buffer.
 *
 * Returns 0, -EINVAL for a bad layout, -ENOMEM.
 */
int vc_ring_host_init(struct vc_ring_host *h, void *base, const struct vc_layout *layout);

/** vc_ring_host_fini() - free the private span buffer. */
void vc_ring_host_fini(struct vc_ring_host *h);

/**
 * vc_ring_host_fetch() - read the guest's tail once, copy the published span
 * into private memory and give the ring space back (publish head).
 *
 * On return *@span points at the private copy and *@len is its length.
 * Returns 1 when there is a span, 0 when the ring is empty, -EPROTO when tail
 * is more than a ring size ahead of head (the session is then FATAL).
 */
int vc_ring_host_fetch(struct vc_ring_host *h, const uint8_t **span, uint32_t *len);

/**
 * vc_ring_host_complete() - publish done_seq = @seq (all commands up to @seq
 * have executed, their replies and errors are written).
 *
 * Returns true when a guest thread sleeps for a completion and the caller must
 * signal the completion eventfd.
 */
bool vc_ring_host_complete(struct vc_ring_host *h, uint64_t seq);

/**
 * vc_ring_host_reply() - write the reply of command @seq into @slot: @status
 * and the @len bytes at @data (truncated to the slot's capacity; the decoder
 * checks capacity first), then the slot's seq, which marks it ready. @slot
 * must have been range-checked. A reply may be written late, from another
 * thread (a synchronisation that waited for the GPU): the return value then
 * says whether a guest thread sleeps and must be signalled.
 */
bool vc_ring_host_reply(struct vc_ring_host *h, uint32_t slot, uint64_t seq, int32_t status,
			const void *data, uint32_t len);

/**
 * vc_ring_host_fence() - the work of command @seq, sent with VC_CMD_F_FENCE
 * in @slot (range-checked, below VC_FENCE_SLOTS), is done: store its fence
 * word, before the reply that tells the guest to look at it.
 */
void vc_ring_host_fence(struct vc_ring_host *h, uint32_t slot, uint64_t seq);

/**
 * vc_ring_host_reply_data() - the payload area of reply slot @slot, for
 * executors that produce output in place; *@cap receives its capacity.
 */
void *vc_ring_host_reply_data(struct vc_ring_host *h, uint32_t slot, uint32_t *cap);

/**
 * vc_ring_host_arena() - the staging-arena range [@off, @off + @len), or NULL
 * when any of it lies outside the arena.
 */
void *vc_ring_host_arena(struct vc_ring_host *h, uint64_t off, uint64_t len);

/**
 * vc_ring_host_error() - record @code as the session's sticky error for
 * command @seq, unless an error the guest has not yet acknowledged is pending.
 */
void vc_ring_host_error(struct vc_ring_host *h, int32_t code, uint64_t seq);

/** vc_ring_host_set_fatal() - mark the session FATAL for @reason (enum vc_fatal). */
void vc_ring_host_set_fatal(struct vc_ring_host *h, uint32_t reason);

/** vc_ring_host_fatal_reason() - enum vc_fatal, 0 while healthy; any thread. */
uint32_t vc_ring_host_fatal_reason(const struct vc_ring_host *h);

/**
 * vc_ring_host_idle_begin() - announce that the server thread is about to
 * sleep: set IDLE, then re-read tail.
 *
 * Returns true when work arrived meanwhile (IDLE is cleared again and the
 * caller must not sleep), false when the caller may sleep on the doorbell.
 */
bool vc_ring_host_idle_begin(struct vc_ring_host *h);

/** vc_ring_host_idle_end() - clear IDLE after waking. */
void vc_ring_host_idle_end(struct vc_ring_host *h);

/** vc_ring_host_pending() - whether the guest has published commands not yet fetched. */
bool vc_ring_host_pending(struct vc_ring_host *h);

/**
 * vc_ring_host_cb_push() - queue host callback @cookie for the guest's
 * callback thread. Callers serialise pushes. On success *@index is its
 * position (the guest has run it once vc_ring_host_cb_done() > *@index) and
 * the return value says whether a guest thread sleeps and must be signalled.
 * Returns -EAGAIN while the queue is full.
 */
int vc_ring_host_cb_push(struct vc_ring_host *h, uint64_t cookie, uint32_t *index);

/** vc_ring_host_cb_done() - how many queued callbacks the guest reports run. */
uint32_t vc_ring_host_cb_done(struct vc_ring_host *h);

/**
 * vc_ring_host_console() - publish @total, the bytes of device printf output
 * captured so far (free-running), before the reply or done_seq that lets the
 * guest go on. Callers serialise calls and never let @total go back.
 */
void vc_ring_host_console(struct vc_ring_host *h, uint64_t total);

/** vc_ring_host_heartbeat() - set ALIVE, telling waiting guests the server lives. */
void vc_ring_host_heartbeat(struct vc_ring_host *h);

#endif /* VC_RING_HOST_H */
