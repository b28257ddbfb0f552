/* SPDX-License-Identifier: MIT */
/*
 * vt_hostile_live.c - what a malicious guest does that its session must
 * survive with the driver's own answers (or end through a cap): forged
 * handle tags, kinds, indexes and generations; foreign device pointers;
 * reply slots shared or named without a reply; host-owned control-page
 * words overwritten; floods of asynchronous commands and replies nobody
 * reads; the host's caps on staged images and pending synchronisations.
 * bad_client runs them host-locally and the VM guest test inside the VM;
 * each runner then checks the neighbour, and that the server freed what the
 * session held.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vc_client.h"
#include "vc_cuda_wire.h"
#include "vc_ring_guest.h"
#include "vc_shm.h"
#include "vt_cuda.h"
#include "vt_hostile.h"
#include "vt_kernels.h"

/* The id layout of host-backend/cuda/handles.c: tag 2 bits, kind 6, generation 32, index 24. */
#define ID_TAG_MASK (3ull << 62)
#define ID_KIND_MASK (0x3full << 56)
#define ID_GEN_ONE (1ull << 24)
#define ID_INDEX_MASK 0xffffffull

/* The driver's codes that shared/vc_wire.h does not name (cuda.h's values). */
#define VC_CUDA_ERROR_INVALID_IMAGE 200
#define VC_CUDA_ERROR_INVALID_CONTEXT 201

#define EXPECT(got, want, ...)                                                               \
	do {                                                                                 \
		long long g_ = (long long)(got), w_ = (long long)(want);                     \
		if (g_ != w_) {                                                              \
			int k_ = snprintf(why, n, __VA_ARGS__);                             \
			if (k_ >= 0 && (size_t)k_ < n)                                       \
				snprintf(why + k_, n - (size_t)k_, ": got %lld, expected %lld", g_, w_); \
			return -1;                                                           \
		}                                                                            \
	} while (0)

/* ---- helpers: requests as guest-lib/libcuda encodes them ------------------------ */

static int call(struct vc_client *c, uint32_t op, const void *req, size_t len, void *rep, size_t replen)
{
	uint8_t buf[VC_CU_REP_MAX];
	size_t got = 0;
	int rc = vc_client_call(c, op, req, len, NULL, 0, buf, sizeof(buf), &got);

	if (rc == 0 && rep)
		memcpy(rep, buf, replen < got ? replen : got);
	return rc;
}

static int stream_create(struct vc_client *c, uint64_t ctx, uint64_t *s)
{
	struct vc_cu_req_cuStreamCreate rq = {.cur_ctx = ctx, .Flags = 1 /* non-blocking */};
	struct vc_cu_rep_cuStreamCreate rp = {0};
	int rc = call(c, VC_CU_cuStreamCreate, &rq, sizeof(rq), &rp, sizeof(rp));

	*s = rp.phStream;
	return rc;
}

static int stream_op(struct vc_client *c, uint32_t op, uint64_t ctx, uint64_t s)
{
	struct vc_cu_req_cuStreamQuery rq = {.cur_ctx = ctx, .hStream = s};

	static_assert(sizeof(struct vc_cu_req_cuStreamQuery) == sizeof(struct vc_cu_req_cuStreamDestroy_v2),
		      "query and destroy share a shape");
	return call(c, op, &rq, sizeof(rq), NULL, 0);
}

static int event_create(struct vc_client *c, uint64_t ctx, uint64_t *e)
{
	struct vc_cu_req_cuEventCreate rq = {.cur_ctx = ctx, .Flags = 2 /* disable timing */};
	struct vc_cu_rep_cuEventCreate rp = {0};
	int rc = call(c, VC_CU_cuEventCreate, &rq, sizeof(rq), &rp, sizeof(rp));

	*e = rp.phEvent;
	return rc;
}

static int event_query(struct vc_client *c, uint64_t ctx, uint64_t e)
{
	struct vc_cu_req_cuEventQuery rq = {.cur_ctx = ctx, .hEvent = e};

	return call(c, VC_CU_cuEventQuery, &rq, sizeof(rq), NULL, 0);
}

/* cuLaunchHostFunc's command: asynchronous. */
static int host_func(struct vc_client *c, uint64_t ctx, uint64_t stream, uint64_t cookie, int more)
{
	struct vc_cu_req_hostfunc rq = {.ctx = ctx, .stream = stream, .cookie = cookie};

	return vc_client_submit(c, VC_CU_vcHostFunc, &rq, sizeof(rq), NULL, 0, more, NULL);
}

/* A command straight into the ring (the client's lock and slot bitmap
 * bypassed: these tests run one thread per session), published. */
static int64_t raw_put(struct vc_ring_guest *g, uint32_t op, uint32_t flags, uint32_t slot, const void *req,
		       size_t len)
{
	int64_t seq = vc_ring_guest_write(g, op, flags, slot, req, len, NULL, 0);

	if (seq > 0 && vc_ring_guest_publish(g))
		return -EPIPE;
	return seq;
}

/* The status of command @seq's reply in @slot, or -errno. */
static int raw_reply(struct vc_ring_guest *g, uint32_t slot, int64_t seq)
{
	int32_t status = 0;
	int rc;

	if (seq < 0)
		return (int)seq;
	if ((rc = vc_ring_guest_wait_reply(g, slot, (uint64_t)seq)))
		return rc;
	if (vc_ring_guest_read_reply(g, slot, (uint64_t)seq, &status, NULL, 0) < 0)
		return -EPROTO;
	return status;
}

/* ---- forged handles ------------------------------------------------------------ */

static int forged_tags(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	uint64_t s = 0;

	(void)d;
	EXPECT(stream_create(c, ctx, &s), 0, "cuStreamCreate");
	for (uint64_t t = 0; t < 4; t++) {
		uint64_t f = (s & ~ID_TAG_MASK) | t << 62;

		if (f != s)
			EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, f), VC_CUDA_ERROR_INVALID_HANDLE,
			       "a stream id with tag %llu", (unsigned long long)t);
	}
	EXPECT(stream_op(c, VC_CU_cuStreamDestroy_v2, ctx, s ^ (1ull << 63)), VC_CUDA_ERROR_INVALID_HANDLE,
	       "destroy with a forged tag");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, s), 0, "the real stream, after the forgeries");
	EXPECT(stream_op(c, VC_CU_cuStreamDestroy_v2, ctx, s), 0, "cuStreamDestroy");
	return 0;
}

static int stale_generations(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	uint64_t s = 0, s2 = 0;

	(void)d;
	EXPECT(stream_create(c, ctx, &s), 0, "cuStreamCreate");
	EXPECT(stream_op(c, VC_CU_cuStreamDestroy_v2, ctx, s), 0, "cuStreamDestroy");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, s), VC_CUDA_ERROR_INVALID_HANDLE, "the destroyed stream");
	EXPECT(stream_op(c, VC_CU_cuStreamDestroy_v2, ctx, s), VC_CUDA_ERROR_INVALID_HANDLE, "destroyed twice");
	EXPECT(stream_create(c, ctx, &s2), 0, "a second cuStreamCreate");
	EXPECT(s2 != s, 1, "an id issued twice");
	if ((s2 & ID_INDEX_MASK) == (s & ID_INDEX_MASK)) /* the slot was reused: the old generation is dead */
		EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, s), VC_CUDA_ERROR_INVALID_HANDLE,
		       "the old generation of a reused slot");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, s2 + ID_GEN_ONE), VC_CUDA_ERROR_INVALID_HANDLE,
	       "the next generation, not issued yet");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, s2 - ID_GEN_ONE), VC_CUDA_ERROR_INVALID_HANDLE,
	       "the previous generation");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, s2), 0, "the live stream");
	EXPECT(stream_op(c, VC_CU_cuStreamDestroy_v2, ctx, s2), 0, "cuStreamDestroy");
	return 0;
}

static int wrong_kinds_and_indexes(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	uint64_t s = 0, e = 0;

	(void)d;
	EXPECT(stream_create(c, ctx, &s), 0, "cuStreamCreate");
	EXPECT(event_create(c, ctx, &e), 0, "cuEventCreate");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, e), VC_CUDA_ERROR_INVALID_HANDLE, "an event as a stream");
	EXPECT(event_query(c, ctx, s), VC_CUDA_ERROR_INVALID_HANDLE, "a stream as an event");
	EXPECT(event_query(c, ctx, ctx), VC_CUDA_ERROR_INVALID_HANDLE, "a context as an event");
	/* the event's index with the stream's kind bits, and the other way round */
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, (e & ~ID_KIND_MASK) | (s & ID_KIND_MASK)),
	       VC_CUDA_ERROR_INVALID_HANDLE, "an event's slot dressed as a stream");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, (s & ~ID_INDEX_MASK) | ID_INDEX_MASK),
	       VC_CUDA_ERROR_INVALID_HANDLE, "the last index of the id space");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, (s & ~ID_INDEX_MASK) | ((s + 1000) & ID_INDEX_MASK)),
	       VC_CUDA_ERROR_INVALID_HANDLE, "an index past the table");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, (s & ~ID_KIND_MASK) | ID_KIND_MASK),
	       VC_CUDA_ERROR_INVALID_HANDLE, "kind 63");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, s), 0, "the real stream");
	EXPECT(event_query(c, ctx, e), 0, "the real event");
	return 0;
}

/* A context id that is not one, in the request's prefix and as a handle. */
static int forged_contexts(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_cu_req_sync sy = {.ctx = ctx, .kind = VC_CU_SYNC_CTX};
	uint64_t s = 0;

	(void)d;
	EXPECT(stream_create(c, ctx ^ ID_GEN_ONE, &s), VC_CUDA_ERROR_INVALID_CONTEXT, "another generation's context");
	EXPECT(stream_create(c, ctx | ID_INDEX_MASK, &s), VC_CUDA_ERROR_INVALID_CONTEXT, "a context index past the table");
	EXPECT(stream_create(c, ctx, &s), 0, "cuStreamCreate");
	EXPECT(stream_create(c, s, &s), VC_CUDA_ERROR_INVALID_CONTEXT, "a stream as the current context");
	sy.handle = ctx ^ ID_GEN_ONE;
	EXPECT(call(c, VC_CU_vcSync, &sy, sizeof(sy), NULL, 0), VC_CUDA_ERROR_INVALID_CONTEXT,
	       "cuCtxSynchronize of a forged context");
	sy.handle = ctx;
	EXPECT(call(c, VC_CU_vcSync, &sy, sizeof(sy), NULL, 0), 0, "cuCtxSynchronize");
	return 0;
}

/* Device addresses the session does not own, or past its allocation. */
static int foreign_pointers(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	uint8_t b[64] = {0};

	EXPECT(vt_memset(c, ctx, 0x1000, 0, 1, 64, 1), 0, "an asynchronous memset is queued");
	EXPECT(vt_sync(c, ctx), VC_CUDA_ERROR_INVALID_VALUE, "then reported at the synchronisation");
	EXPECT(vt_htod(c, ctx, d + (8 << 20) - 32, b, sizeof(b), 0), VC_CUDA_ERROR_INVALID_VALUE,
	       "a copy across the allocation's end");
	EXPECT(vt_dtoh(c, ctx, b, d + (8 << 20), 8), VC_CUDA_ERROR_INVALID_VALUE, "a copy just past the end");
	EXPECT(vt_dtoh(c, ctx, b, UINT64_MAX - 7, 8), VC_CUDA_ERROR_INVALID_VALUE, "the last 8 bytes of the address space");
	EXPECT(vt_dtod(c, ctx, d, d + 16, UINT64_MAX - 8, 0), VC_CUDA_ERROR_INVALID_VALUE, "a length that wraps");
	EXPECT(vt_mem_free(c, ctx, d + 4096), VC_CUDA_ERROR_INVALID_VALUE, "cuMemFree inside an allocation");
	EXPECT(vt_sync(c, ctx), 0, "nothing left pending");
	return 0;
}

/* ---- reply slots ----------------------------------------------------------------- */

/* Two synchronous commands naming the same slot: each is answered there in
 * turn, so the slot holds the later one's reply; the earlier one's is gone. */
static int shared_reply_slot(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);
	struct vc_cu_req_cuStreamQuery rq = {.cur_ctx = ctx, .hStream = 0};
	uint32_t slot = g->layout.slot_count - 1;
	int32_t st = 0;
	int64_t s1, s2;

	(void)d;
	rq.hStream = 0x7c0a000000000000ull; /* forged: the first one fails */
	s1 = vc_ring_guest_write(g, VC_CU_cuStreamQuery, VC_CMD_F_REPLY, slot, &rq, sizeof(rq), NULL, 0);
	rq.hStream = 0;
	s2 = raw_put(g, VC_CU_cuStreamQuery, VC_CMD_F_REPLY, slot, &rq, sizeof(rq));
	EXPECT(raw_reply(g, slot, s2), 0, "the later command's reply");
	EXPECT(vc_ring_guest_read_reply(g, slot, (uint64_t)s1, &st, NULL, 0), -EPROTO,
	       "the earlier command's reply, overwritten");
	return 0;
}

/* A slot number on a command without the reply flag: ignored, the command
 * runs asynchronously and its failure is the sticky error. */
static int slot_without_reply(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_cu_req_cuStreamQuery rq = {.cur_ctx = ctx, .hStream = 0x7c0a000000000000ull};

	(void)d;
	EXPECT(raw_put(vc_client_raw_ring(c), VC_CU_cuStreamQuery, 0, UINT32_MAX, &rq, sizeof(rq)) > 0, 1,
	       "published");
	EXPECT(vt_sync(c, ctx), VC_CUDA_ERROR_INVALID_HANDLE, "its error, sticky");
	return 0;
}

/* 4000 synchronous queries whose replies nobody reads. */
static int unread_replies(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);
	struct vc_cu_req_cuStreamQuery rq = {.cur_ctx = ctx, .hStream = 0};
	int64_t seq = 0;

	(void)d;
	for (uint32_t i = 0; i < 4000; i++) {
		seq = vc_ring_guest_write(g, VC_CU_cuStreamQuery, VC_CMD_F_REPLY, i % g->layout.slot_count, &rq,
					  sizeof(rq), NULL, 0);
		if (seq < 0 || (i % 64 == 63 && vc_ring_guest_publish(g)))
			break;
	}
	EXPECT(seq > 0 && vc_ring_guest_publish(g) == 0, 1, "4000 queries written");
	EXPECT(raw_reply(g, 3999 % g->layout.slot_count, seq), 0, "the last one's reply");
	EXPECT(vt_sync(c, ctx), 0, "cuCtxSynchronize after them");
	return 0;
}

/* Synchronisations that the host answers late, all naming one slot: a
 * correct library never has two replies pending in one slot, so the second
 * is a protocol violation (and the host's pending waits stay bounded by the
 * slot count). The first is held by a host function the guest never runs. */
static int pending_sync_slot_reused(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);
	struct vc_cu_req_sync rq = {.ctx = ctx, .handle = ctx, .kind = VC_CU_SYNC_CTX};
	uint32_t reason = 0;
	int rc = 0;

	(void)d;
	EXPECT(host_func(c, ctx, 0, 0x51, 0), 0, "a host function nobody runs");
	for (int i = 0; i < 1000 && rc >= 0; i++) {
		rc = (int)raw_put(g, VC_CU_vcSync, VC_CMD_F_REPLY, 0, &rq, sizeof(rq));
		vc_ring_guest_status(g, &reason);
		if (reason)
			break;
	}
	rc = vc_ring_guest_wait(g, g->seq);
	vc_ring_guest_status(g, &reason);
	EXPECT(rc, -EPROTO, "the session after a second wait in slot 0");
	EXPECT(reason, VC_FATAL_SLOT, "its fatal reason");
	return 0;
}

/* A synchronisation sent without a reply slot (never by guest-lib): its
 * late answer has nowhere to go, so it is refused as an asynchronous error,
 * at once. It names a stream that a host function nobody runs holds for
 * ever: waiting for it on the serving thread would have stopped the
 * session. Later calls are answered. */
static int sync_without_slot(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);
	struct vc_cu_req_sync rq = {.ctx = ctx, .kind = VC_CU_SYNC_STREAM};
	uint64_t s = 0;

	(void)d;
	EXPECT(stream_create(c, ctx, &s), 0, "cuStreamCreate");
	EXPECT(host_func(c, ctx, s, 0x52, 0), 0, "a host function nobody runs, on it");
	rq.handle = s;
	EXPECT(raw_put(g, VC_CU_vcSync, 0, 0, &rq, sizeof(rq)) > 0, 1, "published");
	rq.kind = VC_CU_SYNC_CTX;
	rq.handle = ctx;
	EXPECT(raw_put(g, VC_CU_vcSync, 0, 0, &rq, sizeof(rq)) > 0, 1, "a context's, published");
	EXPECT(stream_op(c, VC_CU_cuStreamQuery, ctx, s), VC_CUDA_ERROR_NOT_READY, "cuStreamQuery after them");
	EXPECT(vt_take_error(c), VC_CUDA_ERROR_INVALID_VALUE, "their error");
	return 0;
}

/* ---- host-owned control-page words ------------------------------------------------------ */

/* head, done_seq and the sticky error overwritten: the host keeps its own
 * and writes them again; the guest only misleads itself. */
static int host_words_overwritten(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);
	struct vc_cu_req_cuStreamQuery rq = {.cur_ctx = ctx, .hStream = 0};
	uint32_t slot = g->layout.slot_count - 1;
	int64_t seq;

	(void)d;
	vc_shm_store32(&g->ctrl->head, g->tail + 0x12345, VC_SEQ_CST);
	vc_shm_store64(&g->ctrl->done_seq, 0, VC_SEQ_CST);
	vc_shm_store32((uint32_t *)&g->ctrl->err_code, 999, VC_SEQ_CST);
	vc_shm_store64(&g->ctrl->err_seq, 1, VC_SEQ_CST);
	seq = raw_put(g, VC_CU_cuStreamQuery, VC_CMD_F_REPLY, slot, &rq, sizeof(rq));
	EXPECT(raw_reply(g, slot, seq), 0, "a query after the overwrites");
	EXPECT(vc_shm_load32(&g->ctrl->head, VC_ACQUIRE), g->tail, "head, written again by the host");
	EXPECT(vc_ring_guest_wait(g, (uint64_t)seq), 0, "done_seq, written again by the host (waited for)");
	/* the forged sticky error fools only its author; the host's own still comes */
	EXPECT(vc_client_take_error(c, (uint64_t)seq), 999, "the forged error, read back by the guest");
	EXPECT(vt_memset(c, ctx, 0x1000, 0, 1, 8, 1), 0, "a failing asynchronous memset");
	EXPECT(vt_sync(c, ctx), VC_CUDA_ERROR_INVALID_VALUE, "the host's real error");
	return 0;
}

/* err_ack claims every error consumed: the host re-arms the sticky error
 * for each new one, so it holds the last instead of the first, and the
 * guest, which believes its own claim, reads none. */
static int err_ack_forged(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);
	uint64_t seq = 0;

	(void)d;
	vc_shm_store64(&g->ctrl->err_ack, UINT64_MAX, VC_SEQ_CST);
	EXPECT(vt_memset(c, ctx, 0x1000, 0, 1, 8, 1), 0, "a failing memset");
	EXPECT(vc_client_submit(c, VC_CU_vcHostFunc,
				&(struct vc_cu_req_hostfunc){.ctx = ctx, .stream = 0x7c0a000000000000ull, .cookie = 1},
				sizeof(struct vc_cu_req_hostfunc), NULL, 0, 0, &seq), 0, "a host function on a forged stream");
	EXPECT(vt_sync(c, ctx), 0, "the synchronisation, for a guest that claimed every error");
	EXPECT(vc_shm_load32((uint32_t *)&g->ctrl->err_code, VC_ACQUIRE), VC_CUDA_ERROR_INVALID_HANDLE,
	       "the host's sticky error: the later one");
	EXPECT(vc_shm_load64(&g->ctrl->err_seq, VC_ACQUIRE), seq, "its sequence number");
	vc_ring_guest_ack_error(g, seq); /* honest again */
	EXPECT(vt_memset(c, ctx, 0x1000, 0, 1, 8, 1), 0, "another failing memset");
	EXPECT(vt_sync(c, ctx), VC_CUDA_ERROR_INVALID_VALUE, "reported again once acknowledged honestly");
	return 0;
}

/* The status word: ALIVE cleared and IDLE set by the guest. The guest rings
 * more doorbells than it needs; the host's heartbeat sets ALIVE again. */
static int status_bits_forged(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);
	uint32_t st = 0;

	(void)d;
	__atomic_fetch_and(&g->ctrl->status, ~VC_STATUS_ALIVE, __ATOMIC_SEQ_CST);
	__atomic_fetch_or(&g->ctrl->status, VC_STATUS_IDLE, __ATOMIC_SEQ_CST);
	EXPECT(vt_sync(c, ctx), 0, "cuCtxSynchronize");
	for (int i = 0; i < 100 && !((st = vc_ring_guest_status(g, NULL)) & VC_STATUS_ALIVE); i++)
		usleep(10000);
	EXPECT(st & (VC_STATUS_ALIVE | VC_STATUS_FATAL), VC_STATUS_ALIVE, "ALIVE again within 1 s, not FATAL");
	return 0;
}

/* The host-callback words: cb_tail and the queue's cookies forged; the
 * host queues its next callback at its own count. */
static int callback_words_forged(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);
	uint32_t tail = 0;

	(void)d;
	vc_shm_store32(&g->ctrl->cb_tail, 77, VC_SEQ_CST);
	for (unsigned i = 0; i < VC_CB_RING; i++)
		vc_shm_store64(&g->ctrl->cb_ring[i], 0xbad0000 + i, VC_RELAXED);
	vc_shm_store64(&g->ctrl->con_total, 1ull << 40, VC_SEQ_CST);
	EXPECT(host_func(c, ctx, 0, 0xc0ffee, 0), 0, "a host function");
	for (int i = 0; i < 200 && (tail = vc_shm_load32(&g->ctrl->cb_tail, VC_ACQUIRE)) != 1; i++)
		usleep(5000);
	EXPECT(tail, 1, "cb_tail, the host's own count");
	EXPECT(vc_shm_load64(&g->ctrl->cb_ring[0], VC_ACQUIRE), 0xc0ffee, "the cookie queued");
	vc_shm_store32(&g->ctrl->cb_done, 1, VC_SEQ_CST); /* ran it */
	EXPECT(vt_sync(c, ctx), 0, "cuCtxSynchronize after the callback");
	return 0;
}

/* cb_done ahead of every callback queued: the host sees a full queue and
 * holds the stream, as if the guest never ran its callbacks. */
static int cb_done_ahead(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);

	(void)d;
	vc_shm_store32(&g->ctrl->cb_done, 100000, VC_SEQ_CST);
	EXPECT(host_func(c, ctx, 0, 1, 0), 0, "a host function");
	EXPECT(vt_memset(c, ctx, d, 0, 1, 8, 1), 0, "work behind it");
	usleep(50000);
	EXPECT(vc_shm_load32(&g->ctrl->cb_tail, VC_ACQUIRE), 0, "nothing queued for the guest");
	return 0;
}

/* ---- floods ------------------------------------------------------------------------------- */

/* 20000 failing asynchronous memsets, no error read in between: the first
 * stays sticky, later ones cost nothing. */
static int async_error_flood(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_cu_req_memset rq = {.ctx = ctx, .dst = 0x1000, .count = 8, .elem = 1, .async = 1};
	int rc = 0;

	(void)d;
	for (int i = 0; i < 20000 && !rc; i++)
		rc = vc_client_submit(c, VC_CU_vcMemset, &rq, sizeof(rq), NULL, 0, i % 256 != 255, NULL);
	EXPECT(rc == 0 && vc_client_flush(c) == 0, 1, "20000 memsets queued");
	EXPECT(vt_sync(c, ctx), VC_CUDA_ERROR_INVALID_VALUE, "the first error");
	EXPECT(vt_sync(c, ctx), 0, "none after it");
	return 0;
}

/* 1000 host functions (four queues' worth) that the guest never runs, on
 * one stream: the first is queued for the guest, and holds the stream (and
 * the rest behind it) until the session ends. */
static int host_func_flood(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_ring_guest *g = vc_client_raw_ring(c);
	int rc = 0;

	(void)d;
	for (int i = 0; i < 1000 && !rc; i++)
		rc = host_func(c, ctx, 0, (uint64_t)i + 1, i % 64 != 63);
	EXPECT(rc == 0 && vc_client_flush(c) == 0, 1, "1000 host functions queued");
	EXPECT(vt_memset(c, ctx, d, 0, 1, 8, 1), 0, "work behind them");
	for (int i = 0; i < 200 && vc_shm_load32(&g->ctrl->cb_tail, VC_ACQUIRE) == 0; i++)
		usleep(5000);
	usleep(50000);
	EXPECT(vc_shm_load32(&g->ctrl->cb_tail, VC_ACQUIRE), 1, "callbacks queued for the guest");
	EXPECT(vc_shm_load64(&g->ctrl->cb_ring[0], VC_ACQUIRE), 1, "the first one's cookie");
	return 0;
}

/* Commands still in the ring when the guest goes: 4000 memsets published,
 * then the runner closes at once (the host finishes the span it took). */
static int closed_with_commands_queued(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_cu_req_memset rq = {.ctx = ctx, .dst = d, .count = 64 << 10, .elem = 1, .async = 1};
	int rc = 0;

	for (int i = 0; i < 4000 && !rc; i++)
		rc = vc_client_submit(c, VC_CU_vcMemset, &rq, sizeof(rq), NULL, 0, i % 128 != 127, NULL);
	EXPECT(rc, 0, "4000 memsets of 64 KiB published");
	return 0;
}

/* ---- caps -------------------------------------------------------------------------------- */

static int image_begin(struct vc_client *c, uint64_t ctx, uint64_t size, uint64_t *id)
{
	struct vc_cu_req_vcImageBegin rq = {.ctx = ctx, .size = size};
	struct vc_cu_rep_vcImageBegin rp = {0};
	int rc = call(c, VC_CU_vcImageBegin, &rq, sizeof(rq), &rp, sizeof(rp));

	*id = rp.image;
	return rc;
}

/* Images staged and never loaded: at most 8 at once and 1 GiB in all. */
static int image_staging_caps(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n)
{
	struct vc_cu_req_vcImagePut put = {.ctx = ctx, .len = 8, .inline_data = 1};
	struct vc_cu_req_load ld = {.ctx = ctx, .kind = VC_CU_LOAD_MODULE};
	uint64_t id[8], other, mod = 0;
	uint8_t data[8] = {0};
	int rc;

	(void)d;
	EXPECT(image_begin(c, ctx, 0, &other), VC_CUDA_ERROR_INVALID_VALUE, "an empty image");
	EXPECT(image_begin(c, ctx, VC_CU_IMAGE_MAX + 1, &other), VC_CUDA_ERROR_INVALID_VALUE, "an image over 1 GiB");
	for (int i = 0; i < 8; i++)
		EXPECT(image_begin(c, ctx, 4096, &id[i]), 0, "image %d of 8", i + 1);
	EXPECT(image_begin(c, ctx, 4096, &other), VC_CUDA_ERROR_OUT_OF_MEMORY, "a ninth image");
	put.image = id[0] + 1000;
	rc = vc_client_call(c, VC_CU_vcImagePut, &put, sizeof(put), data, sizeof(data), NULL, 0, NULL);
	EXPECT(rc, VC_CUDA_ERROR_INVALID_HANDLE, "a piece for an image never begun");
	put.image = id[0];
	put.offset = 4090;
	rc = vc_client_call(c, VC_CU_vcImagePut, &put, sizeof(put), data, sizeof(data), NULL, 0, NULL);
	EXPECT(rc, VC_CUDA_ERROR_INVALID_VALUE, "a piece past the image's end");
	/* the store kernel's PTX, then zeros: a module; the load consumes the image */
	put.offset = 0;
	put.len = sizeof(vt_store_ptx);
	rc = vc_client_call(c, VC_CU_vcImagePut, &put, sizeof(put), vt_store_ptx, sizeof(vt_store_ptx), NULL, 0, NULL);
	EXPECT(rc, 0, "the store kernel's PTX into the first image");
	ld.image = id[0];
	EXPECT(call(c, VC_CU_vcLoad, &ld, sizeof(ld), &mod, sizeof(mod)), 0, "loading it");
	EXPECT(call(c, VC_CU_vcLoad, &ld, sizeof(ld), NULL, 0), VC_CUDA_ERROR_INVALID_HANDLE, "loading it again");
	EXPECT(image_begin(c, ctx, VC_CU_IMAGE_MAX - 7 * 4096 + 1, &other), VC_CUDA_ERROR_OUT_OF_MEMORY,
	       "an image past 1 GiB staged in all");
	EXPECT(image_begin(c, ctx, 4096, &other), 0, "an image in the freed place");
	return 0;
}

const struct vt_live_case vt_live_cases[] = {
	{"forged handle tags", forged_tags, VT_END_CLOSE},
	{"stale and future handle generations", stale_generations, VT_END_CLOSE},
	{"handles of the wrong kind, indexes past the table", wrong_kinds_and_indexes, VT_END_CLOSE},
	{"forged context ids", forged_contexts, VT_END_CLOSE},
	{"device pointers not the session's", foreign_pointers, VT_END_CLOSE},
	{"two commands sharing a reply slot", shared_reply_slot, VT_END_CLOSE},
	{"a slot number without the reply flag", slot_without_reply, VT_END_CLOSE},
	{"4000 replies nobody reads", unread_replies, VT_END_CLOSE},
	{"head, done_seq and the sticky error overwritten", host_words_overwritten, VT_END_CLOSE},
	{"err_ack claiming every error consumed", err_ack_forged, VT_END_CLOSE},
	{"status bits forged (ALIVE cleared, IDLE set)", status_bits_forged, VT_END_CLOSE},
	{"callback queue words forged", callback_words_forged, VT_END_CLOSE},
	{"cb_done ahead of the host's callbacks", cb_done_ahead, VT_END_HELD},
	{"20000 asynchronous errors never read", async_error_flood, VT_END_CLOSE},
	{"1000 host functions never run", host_func_flood, VT_END_HELD},
	{"closed with 4000 commands queued", closed_with_commands_queued, VT_END_HELD},
	{"image staging caps (8 images, 1 GiB)", image_staging_caps, VT_END_CLOSE},
	{"a second pending synchronisation in one reply slot", pending_sync_slot_reused, VT_END_FATAL},
	{"synchronisations without a reply slot", sync_without_slot, VT_END_HELD},
};
const unsigned vt_live_ncases = sizeof(vt_live_cases) / sizeof(vt_live_cases[0]);
