/* SPDX-License-Identifier: MIT */
/*
 * decode.c - the server's decoder: turns a private copy of the ring's span
 * into validated executor calls. Two transport operations are its own (NOP,
 * and ECHO, which the ring's tests use to check reply slots); every other
 * opcode is a CUDA operation, handed to the executor with its request bytes.
 *
 * Two kinds of bad input, two answers:
 *  - a protocol violation (a size, offset, slot or opcode no correct guest
 *    library produces) marks the session FATAL: the guest is broken or hostile;
 *  - a CUDA-level error (an unknown device pointer, too much memory) is the
 *    driver's error code in the reply, or the sticky error when asynchronous,
 *    exactly as CUDA would report it.
 * The span is private memory: a field is read into a local struct once, then
 * checked, then used.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/crash.h"
#include "core/decode.h"
#include "core/services.h"
#include "vc_cuda_wire.h"
#include "vc_time.h"

/* Result of one command handler: >= 0 a CUDA code; < 0 a fatal reason. */
#define FATAL(reason) (-(int)(reason))

struct cmd {
	struct vc_cmd_hdr h;
	const uint8_t *p; /* payload */
	uint32_t plen;    /* payload bytes (padding included) */
	uint64_t seq;
	bool reply;   /* the guest waits for a reply in slot h.slot */
	bool fence;   /* and for that slot's fence word after a successful one */
	bool replied; /* a handler wrote its reply with output */
	bool bulk;    /* it moved arena data: publish progress right after it */
};

/* Copy a fixed-size request out of the payload; false if it is too short. */
static bool take(const struct cmd *c, void *req, size_t size)
{
	if (c->plen < size)
		return false;
	memcpy(req, c->p, size);
	return true;
}

static void reply(struct vc_session *s, struct cmd *c, int32_t status, const void *data,
		  uint32_t len)
{
	if (c->reply)
		vc_ring_host_reply(&s->ring, c->h.slot, c->seq, status, data, len);
	c->replied = true;
}

static int do_echo(struct vc_session *s, struct cmd *c)
{
	struct vc_echo_req r;
	uint32_t cap;

	if (!take(c, &r, sizeof(r)) || r.len > c->plen - sizeof(r))
		return FATAL(VC_FATAL_PAYLOAD);
	if (!c->reply)
		return VC_CUDA_SUCCESS;
	vc_ring_host_reply_data(&s->ring, c->h.slot, &cap);
	if (r.len > cap)
		return VC_CUDA_ERROR_INVALID_VALUE;
	reply(s, c, VC_CUDA_SUCCESS, c->p + sizeof(r), r.len);
	return VC_CUDA_SUCCESS;
}

/* A CUDA driver operation: the executor decodes its own request struct. Its
 * reply struct and data are written straight into the reply slot. */
static int do_cuda(struct vc_session *s, struct cmd *c)
{
	uint8_t scratch[VC_CU_REP_MAX];
	struct vc_cu_out out = {.rep = scratch};
	uint8_t *slot = NULL;
	uint32_t cap = 0;
	uint64_t t0;
	int rc;

	if (c->reply) {
		slot = vc_ring_host_reply_data(&s->ring, c->h.slot, &cap);
		if (cap < VC_CU_REP_MAX)
			return VC_CUDA_ERROR_INVALID_VALUE;
		out.rep = slot;
		out.data = slot + VC_CU_REP_MAX;
		out.data_cap = cap - VC_CU_REP_MAX;
		out.has_slot = true;
		out.fence = c->fence;
		out.slot = c->h.slot;
		out.seq = c->seq;
	}
	vc_crash_note_op(c->h.op);
	t0 = s->optimes ? vc_now_ns() : 0; /* --op-times only: no clock read otherwise */
	rc = s->ops->call(s->exec, c->h.op, c->p, c->plen, &out);
	if (s->optimes)
		vc_optimes_add(s->optimes, c->h.op, vc_now_ns() - t0);
	vc_crash_note_op(0);
	c->bulk = out.bulk;
	if (out.linger_us) {
		uint64_t until = vc_now_ns() + (uint64_t)out.linger_us * 1000;

		if (until > s->linger_until_ns)
			s->linger_until_ns = until;
	}
	if (rc == VC_CU_DEFERRED) {
		c->replied = true; /* the executor replies when the GPU is done */
		return VC_CUDA_SUCCESS;
	}
	if (rc && s->verbose)
		fprintf(stderr, "vcuda-server: session %u: %s (seq %llu) -> %d\n", s->id, vc_cu_op_name(c->h.op),
			(unsigned long long)c->seq, rc);
	/* Done already, unless the device was left to say so. */
	if (rc == VC_CUDA_SUCCESS && c->fence && !out.fence_queued)
		vc_ring_host_fence(&s->ring, c->h.slot, c->seq);
	if (rc == VC_CUDA_SUCCESS && c->reply)
		reply(s, c, rc, slot, out.data_len ? VC_CU_REP_MAX + out.data_len : out.rep_len);
	return rc;
}

/* The first asynchronous failures of a session are logged (with -v every
 * failure is, by do_cuda()); the rest are counted. */
#define ASYNC_LOGGED 8

/*
 * Command @c, sent without a reply, failed with CUDA error @rc: the guest's
 * next synchronising call reports it (the first one not yet taken). Where
 * the guest sees only that later call fail, the log names the command that
 * did; a guest cannot flood it.
 */
static void async_failed(struct vc_session *s, const struct cmd *c, int rc)
{
	/* written by this (serving) thread only; read by vc_session_get_stats() */
	uint64_t n = __atomic_load_n(&s->n_async_failed, __ATOMIC_RELAXED) + 1;

	__atomic_store_n(&s->n_async_failed, n, __ATOMIC_RELAXED);
	vc_ring_host_error(&s->ring, rc, c->seq);
	if (s->verbose || n > ASYNC_LOGGED)
		return;
	fprintf(stderr,
		"vcuda-server: session %u: %s (seq %llu) failed asynchronously with %d, reported to the guest's "
		"next synchronising call%s\n",
		s->id, vc_cu_op_name(c->h.op), (unsigned long long)c->seq, rc,
		n == ASYNC_LOGGED ? "; later asynchronous failures are counted, not logged" : "");
}

static int execute(struct vc_session *s, struct cmd *c)
{
	switch (c->h.op) {
	case VC_OP_NOP:
		return VC_CUDA_SUCCESS;
	case VC_OP_ECHO:
		return do_echo(s, c);
	default:
		if (c->h.op >= VC_CU_OP_BASE && c->h.op < VC_CU_OP_END_)
			return do_cuda(s, c);
		return FATAL(VC_FATAL_OP);
	}
}

int vc_decode_span(struct vc_session *s, const uint8_t *span, uint32_t len)
{
	uint32_t off = 0;
	int n = 0, rc;

	while (off < len) {
		struct cmd c;

		if (len - off < sizeof(c.h)) {
			rc = FATAL(VC_FATAL_CMD_SIZE);
			goto fatal;
		}
		memcpy(&c.h, span + off, sizeof(c.h));
		if (c.h.size < sizeof(c.h) || c.h.size % VC_CMD_ALIGN || c.h.size > len - off) {
			rc = FATAL(VC_FATAL_CMD_SIZE);
			goto fatal;
		}
		if (c.h.flags & ~VC_CMD_F_MASK) {
			rc = FATAL(VC_FATAL_OP);
			goto fatal;
		}
		c.reply = c.h.flags & VC_CMD_F_REPLY;
		c.fence = c.h.flags & VC_CMD_F_FENCE;
		if ((c.reply && c.h.slot >= s->layout.slot_count) ||
		    (c.fence && (!c.reply || c.h.slot >= VC_FENCE_SLOTS))) {
			rc = FATAL(VC_FATAL_SLOT);
			goto fatal;
		}
		c.p = span + off + sizeof(c.h);
		c.plen = c.h.size - (uint32_t)sizeof(c.h);
		c.seq = ++s->seq;

		c.replied = false;
		c.bulk = false;
		rc = execute(s, &c);
		if (rc < 0)
			goto fatal;
		if (c.reply && (rc != VC_CUDA_SUCCESS || !c.replied))
			vc_ring_host_reply(&s->ring, c.h.slot, c.seq, rc, NULL, 0);
		else if (!c.reply && rc != VC_CUDA_SUCCESS)
			async_failed(s, &c, rc);
		if (c.bulk)
			vc_session_progress(s, c.seq);
		off += c.h.size;
		n++;
	}
	return n;

fatal:
	vc_ring_host_set_fatal(&s->ring, (uint32_t)-rc);
	return -EPROTO;
}
