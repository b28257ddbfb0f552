/* SPDX-License-Identifier: MIT */
/*
 * vt_hostile.c - what a broken or malicious guest writes into its ring: the
 * hostile cases that bad_client (host-locally) and the VM guest test (inside
 * the VM) both run, each expecting the session FATAL for its reason and
 * nothing else harmed.
 */
#include <stdint.h>
#include <string.h>

#include "vc_cuda_manual.h"
#include "vc_ring_guest.h"
#include "vc_shm.h"
#include "vc_wire.h"
#include "vt_hostile.h"

/* Raw bytes at the guest's tail, then publish: what a broken guest does. */
static void raw(struct vc_ring_guest *g, const void *bytes, uint32_t len)
{
	uint32_t mask = g->layout.ring_size - 1;

	for (uint32_t i = 0; i < len; i++)
		g->ring[(g->tail + i) & mask] = ((const uint8_t *)bytes)[i];
	g->tail += len;
	vc_shm_store32(&g->ctrl->tail, g->tail, VC_SEQ_CST);
}

/* A command: header, then @len bytes of payload, padded to 8 bytes. */
static void raw_cmd(struct vc_ring_guest *g, uint32_t op, uint32_t flags, uint32_t slot, const void *payload,
		    uint32_t len)
{
	uint8_t b[256] = {0};
	struct vc_cmd_hdr h = {.op = op, .size = (uint32_t)(sizeof(h) + len + 7) & ~7u, .flags = flags,
			       .slot = slot};

	memcpy(b, &h, sizeof(h));
	memcpy(b + sizeof(h), payload, len);
	raw(g, b, h.size);
}

/* Each injection gets the session's context and a device allocation of 8 MiB. */
static void inject_tail_beyond(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	(void)ctx, (void)d;
	vc_shm_store32(&g->ctrl->tail, g->tail + g->layout.ring_size + 64, VC_SEQ_CST);
	g->tail += g->layout.ring_size + 64;
}

static void inject_length_past_end(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cmd_hdr h = {.op = VC_OP_NOP, .size = 1u << 19};

	(void)ctx, (void)d;
	raw(g, &h, sizeof(h));
}

/* A copy from the staging arena that starts at its end: a valid context and
 * destination, so that only the arena range is wrong. */
static void inject_arena_outside(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_memcpy r = {.ctx = ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 4096,
				     .arena_off = g->layout.arena_size, .host = VC_CU_HOST_ARENA};

	raw_cmd(g, VC_CU_vcMemcpy, 0, 0, &r, sizeof(r));
}

static void inject_unknown_opcode(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cmd_hdr h = {.op = 0xdead, .size = 16};

	(void)ctx, (void)d;
	raw(g, &h, sizeof(h));
}

/* Just past the last CUDA operation. */
static void inject_opcode_past_cuda(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_prefix r = {.ctx = ctx};

	(void)d;
	raw_cmd(g, VC_CU_OP_END_, 0, 0, &r, sizeof(r));
}

/* Protocol v1's MEM_ALLOC (16) with its {size}: a transport test operation
 * that no longer exists. */
static void inject_retired_opcode(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	uint64_t size = 4096;

	(void)ctx, (void)d;
	raw_cmd(g, 16, VC_CMD_F_REPLY, 0, &size, sizeof(size));
}

/* A well-formed synchronisation of the session's context, but a reply slot
 * past the last one. */
static void inject_bad_slot(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_sync r = {.ctx = ctx, .handle = ctx, .kind = VC_CU_SYNC_CTX};

	(void)d;
	raw_cmd(g, VC_CU_vcSync, VC_CMD_F_REPLY, g->layout.slot_count + 5, &r, sizeof(r));
}

/* Half of a copy's request. */
static void inject_short_payload(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_memcpy r = {.ctx = ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 8};

	raw_cmd(g, VC_CU_vcMemcpy, 0, 0, &r, sizeof(r) / 2);
}

/* An inline copy of 60000 bytes that carries 8. */
static void inject_inline_length_lie(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct {
		struct vc_cu_req_memcpy r;
		uint8_t data[8];
	} p = {{.ctx = ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 60000, .host = VC_CU_HOST_INLINE}, {0}};

	raw_cmd(g, VC_CU_vcMemcpy, 0, 0, &p, sizeof(p));
}

/* A launch whose parameters are said to be larger than CUDA allows and than
 * its command. */
static void inject_launch_params_lie(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_launch r = {.ctx = ctx, .func = 1, .grid = {1, 1, 1}, .block = {1, 1, 1},
				     .param_size = VC_LAUNCH_PARAMS_MAX + 1};

	(void)d;
	raw_cmd(g, VC_CU_vcLaunch, 0, 0, &r, sizeof(r));
}

/* A header with size @size and nothing else checked first. */
static void raw_size(struct vc_ring_guest *g, uint32_t size)
{
	struct vc_cmd_hdr h = {.op = VC_OP_NOP, .size = size};
	uint8_t b[64] = {0};

	memcpy(b, &h, sizeof(h));
	raw(g, b, size >= sizeof(h) && size <= sizeof(b) ? size : sizeof(h));
}

static void inject_size_below_header(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	(void)ctx, (void)d;
	raw_size(g, 8);
}

static void inject_size_zero(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	(void)ctx, (void)d;
	raw_size(g, 0);
}

static void inject_size_unaligned(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	(void)ctx, (void)d;
	raw_size(g, 20);
}

static void inject_size_huge(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	(void)ctx, (void)d;
	raw_size(g, 0xfffffff8u);
}

/* Only half a header published. */
static void inject_truncated_header(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	uint8_t half[8] = {0};

	(void)ctx, (void)d;
	raw(g, half, sizeof(half));
}

static void inject_unknown_flags(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_sync r = {.ctx = ctx, .handle = ctx, .kind = VC_CU_SYNC_CTX};

	(void)d;
	raw_cmd(g, VC_CU_vcSync, VC_CMD_F_REPLY | 0x80u, 0, &r, sizeof(r));
}

/* The tail moved backwards past what the host consumed: tail - head wraps. */
static void inject_tail_backwards(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	(void)ctx, (void)d;
	g->tail -= 64;
	vc_shm_store32(&g->ctrl->tail, g->tail, VC_SEQ_CST);
}

static void inject_slot_max(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_sync r = {.ctx = ctx, .handle = ctx, .kind = VC_CU_SYNC_CTX};

	(void)d;
	raw_cmd(g, VC_CU_vcSync, VC_CMD_F_REPLY, UINT32_MAX, &r, sizeof(r));
}

/* Requests shorter than their structs: a synchronisation, a launch, a
 * generated decoder's (cuStreamCreate), a list page. */
static void inject_short_sync(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	(void)d;
	raw_cmd(g, VC_CU_vcSync, VC_CMD_F_REPLY, 0, &ctx, sizeof(ctx));
}

static void inject_short_launch(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_launch r = {.ctx = ctx};

	(void)d;
	raw_cmd(g, VC_CU_vcLaunch, 0, 0, &r, 16);
}

static void inject_short_generated(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	(void)d;
	raw_cmd(g, VC_CU_cuStreamCreate, VC_CMD_F_REPLY, 0, &ctx, 4);
}

static void inject_short_list(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_list r = {.ctx = ctx};

	(void)d;
	raw_cmd(g, VC_CU_cuLibraryEnumerateKernels, VC_CMD_F_REPLY, 0, &r, 8);
}

/* A function name whose length says 200 bytes, with 8 in the command. */
static void inject_name_length_lie(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct {
		struct vc_cu_req_cuModuleGetFunction r;
		char name[8];
	} p = {{.cur_ctx = ctx, .name_len = 200}, "kernel"};

	(void)d;
	raw_cmd(g, VC_CU_cuModuleGetFunction, VC_CMD_F_REPLY, 0, &p, sizeof(p));
}

/* A name without its NUL. */
static void inject_name_unterminated(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct {
		struct vc_cu_req_cuModuleGetFunction r;
		char name[8];
	} p = {{.cur_ctx = ctx, .name_len = 8}, {'k', 'k', 'k', 'k', 'k', 'k', 'k', 'k'}};

	(void)d;
	raw_cmd(g, VC_CU_cuModuleGetFunction, VC_CMD_F_REPLY, 0, &p, sizeof(p));
}

/* An arena offset whose end wraps around. */
static void inject_arena_wrap(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_memcpy r = {.ctx = ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 4096,
				     .arena_off = UINT64_MAX - 100, .host = VC_CU_HOST_ARENA};

	raw_cmd(g, VC_CU_vcMemcpy, 0, 0, &r, sizeof(r));
}

/* The layout in the control page enlarged (more slots, a larger ring and
 * arena) and its magic cleared: the host keeps its own copy, so a slot past
 * its own count is still out of range. */
static void inject_layout_overwritten(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_sync r = {.ctx = ctx, .handle = ctx, .kind = VC_CU_SYNC_CTX};
	uint32_t real = g->layout.slot_count;

	(void)d;
	g->ctrl->layout.slot_count = VC_SLOTS_MAX;
	g->ctrl->layout.ring_size = VC_RING_MAX;
	g->ctrl->layout.arena_size = VC_ARENA_MAX;
	g->ctrl->magic = 0;
	raw_cmd(g, VC_CU_vcSync, VC_CMD_F_REPLY, real, &r, sizeof(r));
}

/* A copy of the arena's last chunk plus one byte, after the control page
 * claimed a larger arena. */
static void inject_arena_after_layout_lie(struct vc_ring_guest *g, uint64_t ctx, uint64_t d)
{
	struct vc_cu_req_memcpy r = {.ctx = ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 4097,
				     .arena_off = g->layout.arena_size - 4096, .host = VC_CU_HOST_ARENA};

	g->ctrl->layout.arena_size = VC_ARENA_MAX;
	raw_cmd(g, VC_CU_vcMemcpy, 0, 0, &r, sizeof(r));
}

const struct vt_hostile_case vt_hostile_cases[] = {
	{"tail beyond the ring", inject_tail_beyond, VC_FATAL_TAIL},
	{"command length past the end", inject_length_past_end, VC_FATAL_CMD_SIZE},
	{"arena offset outside the arena", inject_arena_outside, VC_FATAL_ARENA},
	{"unknown opcode", inject_unknown_opcode, VC_FATAL_OP},
	{"reply slot out of range", inject_bad_slot, VC_FATAL_SLOT},
	{"opcode past the CUDA operations", inject_opcode_past_cuda, VC_FATAL_OP},
	{"retired transport opcode (v1 MEM_ALLOC)", inject_retired_opcode, VC_FATAL_OP},
	{"request shorter than its struct", inject_short_payload, VC_FATAL_PAYLOAD},
	{"inline copy longer than its command", inject_inline_length_lie, VC_FATAL_PAYLOAD},
	{"launch parameters past the command", inject_launch_params_lie, VC_FATAL_PAYLOAD},
	{"command size smaller than its header", inject_size_below_header, VC_FATAL_CMD_SIZE},
	{"command size zero", inject_size_zero, VC_FATAL_CMD_SIZE},
	{"command size not a multiple of 8", inject_size_unaligned, VC_FATAL_CMD_SIZE},
	{"command size near 4 GiB", inject_size_huge, VC_FATAL_CMD_SIZE},
	{"half a header published", inject_truncated_header, VC_FATAL_CMD_SIZE},
	{"unknown flag bits", inject_unknown_flags, VC_FATAL_OP},
	{"tail moved backwards", inject_tail_backwards, VC_FATAL_TAIL},
	{"reply slot UINT32_MAX", inject_slot_max, VC_FATAL_SLOT},
	{"synchronisation shorter than its struct", inject_short_sync, VC_FATAL_PAYLOAD},
	{"launch shorter than its struct", inject_short_launch, VC_FATAL_PAYLOAD},
	{"generated request shorter than its struct", inject_short_generated, VC_FATAL_PAYLOAD},
	{"list request shorter than its struct", inject_short_list, VC_FATAL_PAYLOAD},
	{"name length past the command", inject_name_length_lie, VC_FATAL_PAYLOAD},
	{"name without its NUL", inject_name_unterminated, VC_FATAL_PAYLOAD},
	{"arena offset that wraps", inject_arena_wrap, VC_FATAL_ARENA},
	{"control page layout overwritten, slot past the host's count", inject_layout_overwritten, VC_FATAL_SLOT},
	{"control page arena size enlarged, copy past the real arena", inject_arena_after_layout_lie, VC_FATAL_ARENA},
};
const unsigned vt_hostile_ncases = sizeof(vt_hostile_cases) / sizeof(vt_hostile_cases[0]);
