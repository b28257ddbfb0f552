/* SPDX-License-Identifier: MIT */
#include "vc_ring_guest.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "vc_abi_hash.h"
#include "vc_copy.h"
#include "vc_layout.h"
#include "vc_shm.h"
#include "vc_time.h"

#define SLEEP_TICK_MS 100
#define DEFAULT_SPIN_US 50
#define DEFAULT_ALIVE_TIMEOUT_MS 5000

int vc_ring_guest_init(struct vc_ring_guest *g, void *base, const struct vc_layout *layout,
		       const struct vc_ring_wait_ops *ops, void *ops_ctx)
{
	uint8_t *b = base;
	const struct vc_ctrl *c;

	memset(g, 0, sizeof(*g));
	if (vc_layout_check(layout))
		return -EINVAL;
	c = (const struct vc_ctrl *)(b + layout->ctrl_off);
	/* The header line is written once before the region is handed over;
	 * the control channel that handed it over orders it before this read. */
	if (c->magic != VC_CTRL_MAGIC || c->version != VC_PROTO_VERSION ||
	    c->abi_hash != VC_ABI_HASH)
		return -EPROTO;
	if (memcmp(&c->layout, layout, sizeof(*layout)))
		return -EINVAL;
	g->layout = *layout;
	g->ctrl = (struct vc_ctrl *)(b + layout->ctrl_off);
	g->ring = b + layout->ring_off;
	g->slots = b + layout->slots_off;
	g->arena = b + layout->arena_off;
	g->ops = ops;
	g->ops_ctx = ops_ctx;
	g->spin_us = DEFAULT_SPIN_US;
	g->alive_timeout_ms = DEFAULT_ALIVE_TIMEOUT_MS;
	/* Resume where the ring stands (a fresh session has all zeros). Pairs
	 * with the host's release stores of head and done_seq. */
	g->tail = vc_shm_load32(&g->ctrl->tail, VC_RELAXED);
	g->head_cache = vc_shm_load32(&g->ctrl->head, VC_ACQUIRE);
	g->seq = g->pub_seq = vc_shm_load64(&g->ctrl->done_seq, VC_ACQUIRE);
	g->cb_head = vc_shm_load32(&g->ctrl->cb_done, VC_ACQUIRE);
	g->nchunks = (uint32_t)(layout->arena_size / layout->chunk_size);
	g->window = g->nchunks;
	if (g->nchunks) {
		g->chunk_release = calloc(g->nchunks, sizeof(*g->chunk_release));
		if (!g->chunk_release)
			return -ENOMEM;
	}
	return 0;
}

void vc_ring_guest_fini(struct vc_ring_guest *g)
{
	free(g->chunk_release);
	g->chunk_release = NULL;
}

uint32_t vc_ring_guest_status(struct vc_ring_guest *g, uint32_t *fatal_reason)
{
	/* Acquire pairs with the host's release RMW that sets FATAL after it
	 * stored fatal_reason. */
	uint32_t st = vc_shm_load32(&g->ctrl->status, VC_ACQUIRE);

	if (fatal_reason)
		*fatal_reason = vc_shm_load32(&g->ctrl->fatal_reason, VC_RELAXED);
	return st;
}

uint64_t vc_ring_guest_done(struct vc_ring_guest *g)
{
	/* Pairs with the host's release store in vc_ring_host_complete(). */
	return vc_shm_load64(&g->ctrl->done_seq, VC_ACQUIRE);
}

static void ring_copy_in(struct vc_ring_guest *g, uint32_t pos, const void *src, size_t len)
{
	uint32_t size = g->layout.ring_size, mask = size - 1;
	uint32_t p = pos & mask;
	size_t first = size - p < len ? size - p : len;

	if (!len)
		return;
	memcpy(g->ring + p, src, first);
	memcpy(g->ring, (const uint8_t *)src + first, len - first);
}

int vc_ring_guest_publish(struct vc_ring_guest *g)
{
	if (g->pub_seq == g->seq)
		return 0;
	/* Pairs with the host's acquire load of tail in vc_ring_host_fetch():
	 * the commands are written before tail moves (seq_cst implies release).
	 * Dekker with vc_ring_host_idle_begin(): we store tail then load status,
	 * it sets IDLE then loads tail, all four seq_cst: if it missed our tail,
	 * we see its IDLE and kick. */
	vc_shm_store32(&g->ctrl->tail, g->tail, VC_SEQ_CST);
	g->pub_seq = g->seq;
	if (vc_shm_load32(&g->ctrl->status, VC_SEQ_CST) & VC_STATUS_IDLE) {
		g->kicks++;
		return g->ops->kick(g->ops_ctx);
	}
	return 0;
}

static int check_status(struct vc_ring_guest *g)
{
	return (vc_ring_guest_status(g, NULL) & VC_STATUS_FATAL) ? -EPROTO : 0;
}

/* What a waiter waits for: command @seq executed, or the reply in @slot. */
struct until {
	uint64_t seq;
	const uint64_t *reply_seq; /* NULL: done_seq >= seq */
};

static bool reached(struct vc_ring_guest *g, const struct until *u, int mo)
{
	/* done_seq: pairs with the host's store in vc_ring_host_complete();
	 * a slot's seq: pairs with its store in vc_ring_host_reply(). */
	if (u->reply_seq)
		return vc_shm_load64(u->reply_seq, mo) == u->seq;
	return vc_shm_load64(&g->ctrl->done_seq, mo) >= u->seq;
}

static int wait_until(struct vc_ring_guest *g, const struct until *u, uint32_t spin_us)
{
	uint64_t t0, alive_t, now;
	int rc;

	if (reached(g, u, VC_ACQUIRE))
		return 0;
	t0 = vc_now_ns();
	do {
		for (int i = 0; i < 64; i++) {
			if (reached(g, u, VC_ACQUIRE))
				return 0;
			vc_cpu_relax();
		}
		if ((rc = check_status(g)))
			return rc;
	} while (vc_now_ns() - t0 < (uint64_t)spin_us * 1000);

	alive_t = vc_now_ns();
	for (;;) {
		if ((rc = check_status(g)))
			return rc;
		/* Dekker with vc_ring_host_complete(): count ourselves as a waiter,
		 * then re-read done_seq; the host stores done_seq, then reads
		 * waiters; all four seq_cst. Either we see the completion or the
		 * host sees us and signals. */
		vc_shm_add32(&g->ctrl->waiters, 1, VC_SEQ_CST);
		if (reached(g, u, VC_SEQ_CST)) {
			vc_shm_sub32(&g->ctrl->waiters, 1, VC_RELAXED);
			return 0;
		}
		rc = g->ops->sleep(g->ops_ctx, SLEEP_TICK_MS);
		vc_shm_sub32(&g->ctrl->waiters, 1, VC_RELAXED);
		if (rc < 0)
			return check_status(g) ? -EPROTO : rc;
		if (reached(g, u, VC_ACQUIRE))
			return 0;
		/* ALIVE probe: the host sets ALIVE at least every SLEEP_TICK_MS;
		 * we clear it (RMW pairs with the host's set in
		 * vc_ring_host_heartbeat) and expect to find it set again. */
		now = vc_now_ns();
		if (vc_shm_and32(&g->ctrl->status, ~VC_STATUS_ALIVE, VC_RELAXED) & VC_STATUS_ALIVE)
			alive_t = now;
		else if (now - alive_t > (uint64_t)g->alive_timeout_ms * 1000000ull)
			return -EPIPE;
	}
}

int vc_ring_guest_wait(struct vc_ring_guest *g, uint64_t seq)
{
	struct until u = {.seq = seq};

	return wait_until(g, &u, g->spin_us);
}

int vc_ring_guest_wait_reply(struct vc_ring_guest *g, uint32_t slot, uint64_t seq)
{
	return vc_ring_guest_wait_reply_spin(g, slot, seq, 0);
}

int vc_ring_guest_wait_reply_spin(struct vc_ring_guest *g, uint32_t slot, uint64_t seq, uint32_t spin_us)
{
	struct until u = {.seq = seq};

	if (slot >= g->layout.slot_count)
		return -EINVAL;
	u.reply_seq = &((const struct vc_reply_hdr *)(g->slots + (size_t)slot * g->layout.slot_size))->seq;
	return wait_until(g, &u, spin_us > g->spin_us ? spin_us : g->spin_us);
}

void vc_ring_guest_fence_arm(struct vc_ring_guest *g, uint32_t slot, uint64_t seq)
{
	/* Ordered before the device's or the host's store of @seq by the
	 * publish that follows (the seq_cst store of tail): neither can act on
	 * the command before it sees it. */
	if (slot < VC_FENCE_SLOTS)
		vc_shm_store32(&g->ctrl->fence[slot], ~(uint32_t)seq, VC_RELAXED);
}

int vc_ring_guest_fence_wait(struct vc_ring_guest *g, uint32_t slot, uint64_t seq, uint32_t spin_us)
{
	const uint32_t *w = &g->ctrl->fence[slot];
	uint64_t t0;

	if (slot >= VC_FENCE_SLOTS)
		return -EINVAL;
	t0 = vc_now_ns();
	do {
		for (int i = 0; i < 64; i++) {
			/* Pairs with the host's release store in
			 * vc_ring_host_fence(), or with the device's write,
			 * which its driver orders after the work's own (a
			 * copy's data lands before it). */
			if (vc_shm_load32(w, VC_ACQUIRE) == (uint32_t)seq)
				return 0;
			vc_cpu_relax();
		}
		if (check_status(g))
			return -EPROTO;
	} while (vc_now_ns() - t0 < (uint64_t)spin_us * 1000);
	return -ETIMEDOUT;
}

int64_t vc_ring_guest_write(struct vc_ring_guest *g, uint32_t op, uint32_t flags, uint32_t slot,
			    const void *p1, size_t l1, const void *p2, size_t l2)
{
	static const uint8_t zeros[VC_CMD_ALIGN];
	uint32_t size = g->layout.ring_size;
	struct vc_cmd_hdr h;
	size_t total, padded;
	uint32_t pos;
	int rc;

	total = sizeof(h) + l1 + l2;
	if (l1 > size || l2 > size || total > size)
		return -E2BIG;
	padded = (total + VC_CMD_ALIGN - 1) & ~(size_t)(VC_CMD_ALIGN - 1);
	if (padded > size)
		return -E2BIG;

	while (size - (g->tail - g->head_cache) < padded) {
		/* Pairs with the host's release store of head in
		 * vc_ring_host_fetch(): it has finished reading that space. */
		g->head_cache = vc_shm_load32(&g->ctrl->head, VC_ACQUIRE);
		if (size - (g->tail - g->head_cache) >= padded)
			break;
		/* Full: let the host see everything, then wait for it to drain. */
		if ((rc = vc_ring_guest_publish(g)))
			return rc;
		if ((rc = vc_ring_guest_wait(g, g->pub_seq)))
			return rc;
	}

	h.op = op;
	h.size = (uint32_t)padded;
	h.flags = flags;
	h.slot = slot;
	pos = g->tail;
	ring_copy_in(g, pos, &h, sizeof(h));
	ring_copy_in(g, pos + (uint32_t)sizeof(h), p1, l1);
	ring_copy_in(g, pos + (uint32_t)(sizeof(h) + l1), p2, l2);
	ring_copy_in(g, pos + (uint32_t)total, zeros, padded - total);
	g->tail += (uint32_t)padded;
	return (int64_t)++g->seq;
}

int64_t vc_ring_guest_read_reply(struct vc_ring_guest *g, uint32_t slot, uint64_t seq,
				 int32_t *status, void *buf, size_t cap)
{
	const uint8_t *s;
	struct vc_reply_hdr rh;
	uint32_t slot_cap = g->layout.slot_size - (uint32_t)sizeof(rh);

	if (slot >= g->layout.slot_count)
		return -EINVAL;
	s = g->slots + (size_t)slot * g->layout.slot_size;
	/* Ordered by the acquire of the slot's seq in vc_ring_guest_wait_reply()
	 * (or of done_seq, which the host publishes after the reply). */
	memcpy(&rh, s, sizeof(rh));
	if (rh.seq != seq || rh.len > slot_cap)
		return -EPROTO;
	*status = rh.status;
	if (buf)
		memcpy(buf, s + sizeof(rh), rh.len < cap ? rh.len : cap);
	return rh.len;
}

bool vc_ring_guest_error(struct vc_ring_guest *g, int32_t *code, uint64_t *seq)
{
	uint64_t s;

	/* Acquire pairs with the host's release store of err_seq, which follows
	 * its store of err_code. */
	s = vc_shm_load64(&g->ctrl->err_seq, VC_ACQUIRE);
	if (!s || s <= vc_shm_load64(&g->ctrl->err_ack, VC_RELAXED))
		return false;
	*code = (int32_t)vc_shm_load32((const uint32_t *)&g->ctrl->err_code, VC_RELAXED);
	*seq = s;
	return true;
}

uint64_t vc_ring_guest_console(struct vc_ring_guest *g)
{
	/* Pairs with the host's release store in vc_ring_host_console(). */
	return vc_shm_load64(&g->ctrl->con_total, VC_ACQUIRE);
}

void vc_ring_guest_ack_error(struct vc_ring_guest *g, uint64_t seq)
{
	/* Release pairs with the host's acquire load of err_ack in
	 * vc_ring_host_error(): it may record the next error. */
	vc_shm_store64(&g->ctrl->err_ack, seq, VC_RELEASE);
}

int vc_ring_guest_cb_next(struct vc_ring_guest *g, uint64_t *cookie, uint32_t spin_us)
{
	uint64_t t0 = vc_now_ns();
	int rc, first = 1;

	for (;;) {
		/* Pairs with the host's seq_cst store of cb_tail in
		 * vc_ring_host_cb_push(): the slot's cookie is visible. */
		uint32_t tail = vc_shm_load32(&g->ctrl->cb_tail, VC_ACQUIRE);

		if (tail != g->cb_head) {
			*cookie = g->ctrl->cb_ring[g->cb_head % VC_CB_RING];
			g->cb_head++;
			return 0;
		}
		if ((rc = check_status(g)))
			return rc;
		/* Awake for @spin_us from the call's start (the callback
		 * before it just ran: a stream waits for each, and programs
		 * queue them one per call), then asleep. */
		if (first && vc_now_ns() - t0 < (uint64_t)spin_us * 1000) {
			sched_yield();
			continue;
		}
		first = 0;
		/* Dekker with vc_ring_host_cb_push(): count ourselves as a waiter,
		 * re-read cb_tail; it stores cb_tail, then reads waiters. */
		vc_shm_add32(&g->ctrl->waiters, 1, VC_SEQ_CST);
		if (vc_shm_load32(&g->ctrl->cb_tail, VC_SEQ_CST) == g->cb_head)
			rc = g->ops->sleep(g->ops_ctx, SLEEP_TICK_MS);
		vc_shm_sub32(&g->ctrl->waiters, 1, VC_RELAXED);
		if (rc < 0)
			return rc;
	}
}

void vc_ring_guest_cb_finish(struct vc_ring_guest *g)
{
	/* Pairs with the host's acquire load of cb_done in
	 * vc_ring_host_cb_done(): the callback's effects come first. */
	vc_shm_store32(&g->ctrl->cb_done, g->cb_head, VC_RELEASE);
}

int vc_ring_guest_chunk_get(struct vc_ring_guest *g, uint64_t *off)
{
	uint32_t idx;
	int rc;

	if (!g->nchunks)
		return -ENOSPC;
	idx = g->next_chunk;
	if (g->chunk_release[idx] && vc_ring_guest_done(g) < g->chunk_release[idx]) {
		if ((rc = vc_ring_guest_wait(g, g->chunk_release[idx])))
			return rc;
	}
	g->next_chunk = (idx + 1) % g->window;
	*off = (uint64_t)idx * g->layout.chunk_size;
	return (int)idx;
}

void vc_ring_guest_set_window(struct vc_ring_guest *g, uint32_t n)
{
	if (!g->nchunks)
		return;
	g->window = n < 1 ? 1 : n > g->nchunks ? g->nchunks : n;
	g->next_chunk %= g->window;
}

void vc_ring_guest_chunk_release(struct vc_ring_guest *g, int idx, uint64_t seq)
{
	g->chunk_release[idx] = seq;
}

void vc_ring_guest_arena_write(struct vc_ring_guest *g, uint64_t off, const void *src, size_t len,
			       bool stream)
{
	/* Published by the tail release of the command that names this range
	 * (vc_copy_stream() fences its non-temporal stores before it). */
	if (stream)
		vc_copy_stream(g->arena + off, src, len);
	else
		memcpy(g->arena + off, src, len);
}

void vc_ring_guest_arena_read(struct vc_ring_guest *g, uint64_t off, void *dst, size_t len,
			      bool stream)
{
	/* Ordered by the done_seq acquire of the command that filled it. */
	if (stream)
		vc_copy_stream(dst, g->arena + off, len);
	else
		memcpy(dst, g->arena + off, len);
}
