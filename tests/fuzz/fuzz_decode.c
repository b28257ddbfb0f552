/* SPDX-License-Identifier: MIT */
/*
 * fuzz_decode.c - libFuzzer target for the server's decoder, fed raw ring
 * bytes: whatever a hostile guest can write into its ring and control page.
 *
 * Input layout: byte 0 selects options (bit 0: the next 4 bytes are a raw
 * tail value instead of the data length; bit 1: split the data into two
 * publishes at the position in byte 1). The rest is copied into the ring as
 * the guest would have written it, and the session processes it with the CI
 * stand-in executor. Crashes, leaks, sanitizer reports and hangs are bugs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vc_layout.h"
#include "vc_shm.h"
#include "vc_wire.h"
#include "vcuda/server.h"

static void *g_base;
static struct vc_layout g_l;
static struct vc_standin_config g_cfg = {.mem_limit = 16u << 20};

static void put(uint32_t at, const uint8_t *p, size_t n)
{
	uint8_t *ring = (uint8_t *)g_base + g_l.ring_off;

	for (size_t i = 0; i < n; i++)
		ring[(at + i) & (g_l.ring_size - 1)] = p[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vc_session_params p = {0};
	struct vc_session *s;
	struct vc_ctrl *ctrl;
	uint32_t tail, split = 0;
	uint8_t opt;

	if (!g_base) {
		struct vc_layout_req r = {.ring_size = 64u << 10, .slot_count = 4, .slot_size = 1024,
					  .chunk_size = 4096, .arena_size = 4 * 4096};

		if (vc_layout_compute(&r, &g_l))
			abort();
		g_base = aligned_alloc(4096, g_l.region_size);
		if (!g_base)
			abort();
	}
	if (size < 1)
		return 0;
	opt = data[0];
	data++;
	size--;
	p.base = g_base;
	p.layout = &g_l;
	p.doorbell_fd = p.complete_fd = p.hangup_fd = p.mem_fd = -1;
	p.exec = &vc_exec_ci_standin_ops;
	p.exec_factory = &g_cfg;
	if (vc_session_create(&p, &s))
		abort();
	ctrl = g_base;
	memset((uint8_t *)g_base + g_l.arena_off, 0x5a, g_l.arena_size);

	if ((opt & 1) && size >= 4) {
		memcpy(&tail, data, 4);
		data += 4;
		size -= 4;
	} else {
		tail = (uint32_t)(size < g_l.ring_size ? size : g_l.ring_size);
	}
	if (size > g_l.ring_size)
		size = g_l.ring_size;
	if ((opt & 2) && size >= 2)
		split = (uint32_t)(data[0] % size);
	if (split) {
		/* Two publishes: state carried across spans (host-counted seq). */
		put(0, data, split);
		vc_shm_store32(&ctrl->tail, split, VC_RELEASE);
		for (int i = 0; i < 4 && vc_session_process(s) > 0; i++)
			;
	}
	put(split, data + split, size - split);
	vc_shm_store32(&ctrl->tail, tail, VC_RELEASE);
	for (int i = 0; i < 4 && vc_session_process(s) > 0; i++)
		;
	vc_session_destroy(s);
	return 0;
}
