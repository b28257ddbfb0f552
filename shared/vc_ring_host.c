/* SPDX-License-Identifier: MIT */
#include "vc_ring_host.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vc_abi_hash.h"
#include "vc_layout.h"
#include "vc_shm.h"

int vc_ring_host_init(struct vc_ring_host *h, void *base, const struct vc_layout *layout)
{
	uint8_t *b = base;

	memset(h, 0, sizeof(*h));
	if (vc_layout_check(layout))
		return -EINVAL;
	h->layout = *layout;
	h->span = malloc(layout->ring_size);
	if (!h->span)
		return -ENOMEM;
	h->ctrl = (struct vc_ctrl *)(b + layout->ctrl_off);
	h->ring = b + layout->ring_off;
	h->slots = b + layout->slots_off;
	h->arena = b + layout->arena_off;

	/* The region is new and no guest has it yet: plain stores suffice. The
	 * guest learns of the region through the control channel (socket message
	 * or virtqueue), which orders these stores before its first read. */
	memset(h->ctrl, 0, VC_CTRL_SIZE);
	h->ctrl->magic = VC_CTRL_MAGIC;
	h->ctrl->version = VC_PROTO_VERSION;
	h->ctrl->abi_hash = VC_ABI_HASH;
	h->ctrl->layout = *layout;
	h->ctrl->status = VC_STATUS_ALIVE;
	return 0;
}

void vc_ring_host_fini(struct vc_ring_host *h)
{
	free(h->span);
	h->span = NULL;
}

int vc_ring_host_fetch(struct vc_ring_host *h, const uint8_t **span, uint32_t *len)
{
	uint32_t size = h->layout.ring_size, mask = size - 1;
	uint32_t tail, n, pos, first;

	if (h->fatal)
		return -EPROTO;
	/* Pairs with the guest's release store of tail in vc_ring_guest_publish():
	 * everything the guest wrote into the ring before it is visible now. Read
	 * once; every check below uses this private copy. */
	tail = vc_shm_load32(&h->ctrl->tail, VC_ACQUIRE);
	n = tail - h->head;
	if (n == 0)
		return 0;
	if (n > size) {
		vc_ring_host_set_fatal(h, VC_FATAL_TAIL);
		return -EPROTO;
	}
	pos = h->head & mask;
	first = size - pos < n ? size - pos : n;
	memcpy(h->span, h->ring + pos, first);
	memcpy(h->span + first, h->ring, n - first);
	h->head = tail;
	/* The span is private now: give the space back at once. Release pairs with
	 * the guest's acquire load of head in vc_ring_guest_write(), so our reads
	 * of the ring happen before the guest overwrites it. */
	vc_shm_store32(&h->ctrl->head, h->head, VC_RELEASE);
	*span = h->span;
	*len = n;
	return 1;
}

bool vc_ring_host_complete(struct vc_ring_host *h, uint64_t seq)
{
	h->done = seq;
	/* Pairs with the guest's acquire load of done_seq in vc_ring_guest_done()
	 * (seq_cst implies release): replies and err_code written before are
	 * visible to a guest that sees this seq. Dekker with the guest's sleep
	 * path in vc_ring_guest_wait(): it increments waiters then re-reads
	 * done_seq, we store done_seq then read waiters, all four seq_cst:
	 * either it sees our done_seq or we see it waiting. */
	vc_shm_store64(&h->ctrl->done_seq, seq, VC_SEQ_CST);
	return vc_shm_load32(&h->ctrl->waiters, VC_SEQ_CST) != 0;
}

bool vc_ring_host_reply(struct vc_ring_host *h, uint32_t slot, uint64_t seq, int32_t status,
			const void *data, uint32_t len)
{
	uint8_t *s = h->slots + (size_t)slot * h->layout.slot_size;
	uint32_t cap = h->layout.slot_size - (uint32_t)sizeof(struct vc_reply_hdr);
	struct vc_reply_hdr *rh = (struct vc_reply_hdr *)s;

	if (data && len && data != s + sizeof(*rh))
		memcpy(s + sizeof(*rh), data, len < cap ? len : cap);
	rh->status = status;
	rh->len = len < cap ? len : cap;
	/* The slot's seq is its ready flag, stored last. Pairs with the guest's
	 * acquire load in vc_ring_guest_wait_reply(): status, length and data are
	 * visible once it sees its seq. Dekker with that wait's sleep path: it
	 * increments waiters then re-reads the seq, we store the seq then read
	 * waiters, all seq_cst: a reply written late, off the serving thread,
	 * still wakes its waiter. */
	vc_shm_store64(&rh->seq, seq, VC_SEQ_CST);
	return vc_shm_load32(&h->ctrl->waiters, VC_SEQ_CST) != 0;
}

void vc_ring_host_fence(struct vc_ring_host *h, uint32_t slot, uint64_t seq)
{
	/* Pairs with the guest's acquire load in vc_ring_guest_fence_wait(),
	 * which it makes only after it saw this command's reply, stored after
	 * this. */
	vc_shm_store32(&h->ctrl->fence[slot], (uint32_t)seq, VC_RELEASE);
}

void *vc_ring_host_reply_data(struct vc_ring_host *h, uint32_t slot, uint32_t *cap)
{
	*cap = h->layout.slot_size - (uint32_t)sizeof(struct vc_reply_hdr);
	return h->slots + (size_t)slot * h->layout.slot_size + sizeof(struct vc_reply_hdr);
}

void *vc_ring_host_arena(struct vc_ring_host *h, uint64_t off, uint64_t len)
{
	uint64_t size = h->layout.arena_size;

	if (!(len <= size && off <= size - len))
		return NULL;
	return h->arena + off;
}

void vc_ring_host_error(struct vc_ring_host *h, int32_t code, uint64_t seq)
{
	if (h->err_seq) {
		/* Pairs with the guest's release store of err_ack in
		 * vc_ring_guest_ack_error(). Read once: only a number compared with
		 * our private err_seq, so a lying guest only loses its own errors. */
		uint64_t ack = vc_shm_load64(&h->ctrl->err_ack, VC_ACQUIRE);

		if (ack < h->err_seq)
			return; /* first error still pending: it stays sticky */
	}
	h->err_seq = seq;
	vc_shm_store32((uint32_t *)&h->ctrl->err_code, (uint32_t)code, VC_RELAXED);
	/* Release pairs with the guest's acquire load of err_seq in
	 * vc_ring_guest_error(): a guest that sees this seq sees the code. */
	vc_shm_store64(&h->ctrl->err_seq, seq, VC_RELEASE);
}

void vc_ring_host_set_fatal(struct vc_ring_host *h, uint32_t reason)
{
	if (h->fatal)
		return;
	/* Private word; other threads read it for statistics only. */
	__atomic_store_n(&h->fatal, reason ? reason : VC_FATAL_EXECUTOR, __ATOMIC_RELAXED);
	vc_shm_store32(&h->ctrl->fatal_reason, reason, VC_RELAXED);
	/* Release pairs with the guest's acquire load of status: a guest that
	 * sees FATAL also sees fatal_reason. */
	vc_shm_or32(&h->ctrl->status, VC_STATUS_FATAL, VC_RELEASE);
}

bool vc_ring_host_idle_begin(struct vc_ring_host *h)
{
	/* Dekker with vc_ring_guest_publish(): it stores tail then loads status;
	 * we set IDLE then load tail; all four seq_cst. At least one of us sees
	 * the other's store, so a publish is never left without a doorbell. */
	vc_shm_or32(&h->ctrl->status, VC_STATUS_IDLE, VC_SEQ_CST);
	if (vc_shm_load32(&h->ctrl->tail, VC_SEQ_CST) != h->head) {
		vc_ring_host_idle_end(h);
		return true;
	}
	return false;
}

void vc_ring_host_idle_end(struct vc_ring_host *h)
{
	/* Pairs with the guest's seq_cst load of status in its publish; a stale
	 * IDLE costs the guest one spare doorbell, never a lost one. */
	vc_shm_and32(&h->ctrl->status, ~VC_STATUS_IDLE, VC_RELAXED);
}

bool vc_ring_host_pending(struct vc_ring_host *h)
{
	/* Pairs with the guest's release store of tail; a hint only, the real
	 * read happens in vc_ring_host_fetch(). */
	return vc_shm_load32(&h->ctrl->tail, VC_RELAXED) != h->head;
}

void vc_ring_host_console(struct vc_ring_host *h, uint64_t total)
{
	/* Pairs with the guest's acquire load in vc_ring_guest_console(). The
	 * reply or done_seq store that follows (seq_cst) orders it before the
	 * guest's return from the call that synchronised; the bytes themselves
	 * travel in vcConsole replies, never in shared memory before this. */
	vc_shm_store64(&h->ctrl->con_total, total, VC_RELEASE);
}

void vc_ring_host_heartbeat(struct vc_ring_host *h)
{
	/* Pairs with the guest's clear of ALIVE (fetch_and) in its wait loop:
	 * the guest clears, we set again; a bit left clear means no server. */
	vc_shm_or32(&h->ctrl->status, VC_STATUS_ALIVE, VC_RELAXED);
}

uint32_t vc_ring_host_fatal_reason(const struct vc_ring_host *h)
{
	/* Process-private word (vc_ring_host_set_fatal()), read for statistics. */
	return __atomic_load_n(&h->fatal, __ATOMIC_RELAXED);
}

uint32_t vc_ring_host_cb_done(struct vc_ring_host *h)
{
	/* Pairs with the guest's release store of cb_done in
	 * vc_ring_guest_cb_finish(). Untrusted: a guest that lies only
	 * releases its own callbacks' streams early. */
	return vc_shm_load32(&h->ctrl->cb_done, VC_ACQUIRE);
}

int vc_ring_host_cb_push(struct vc_ring_host *h, uint64_t cookie, uint32_t *index)
{
	uint32_t done = vc_ring_host_cb_done(h);

	if (h->cb_tail - done >= VC_CB_RING)
		return -EAGAIN;
	/* Data for the slot, published by the cb_tail store below. */
	h->ctrl->cb_ring[h->cb_tail % VC_CB_RING] = cookie;
	*index = h->cb_tail++;
	/* Pairs with the guest's acquire load of cb_tail in vc_ring_guest_cb_next()
	 * (seq_cst implies release). Dekker with its sleep path there: it
	 * increments waiters then re-reads cb_tail; we store cb_tail then read
	 * waiters, all seq_cst. */
	vc_shm_store32(&h->ctrl->cb_tail, h->cb_tail, VC_SEQ_CST);
	return vc_shm_load32(&h->ctrl->waiters, VC_SEQ_CST) != 0;
}
