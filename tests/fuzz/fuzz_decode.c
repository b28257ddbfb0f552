/* SPDX-License-Identifier: MIT */
/*
 * fuzz_decode.c - libFuzzer target for the server's decoder, fed raw ring
 * bytes: whatever a hostile guest can write into its ring and control page.
 *
 * Input layout: byte 0 selects options (bit 0: the next 4 bytes are a raw
 * tail value instead of the data length; bit 1: split the data into two
 * publishes at the position in byte 1; bit 2: in the second publish, rebase
 * device-address placeholders onto the allocations the first one made, see
 * below). The rest is copied into the ring as the guest would have written
 * it, and the session processes it with the CUDA executor over the CI
 * stand-in for the driver. Crashes, leaks, sanitizer reports and hangs are
 * bugs.
 *
 * Context, module, function and image ids are the session's own, so a seed
 * can name them (the first context retained is always the same id). Device
 * addresses are the stand-in's, which serves the whole process: every run
 * gets new ones. So with bit 2, each 8-byte-aligned word of the second
 * publish of the form DPTR_MARK | k << 32 | off (k < 4) becomes the address
 * the k-th vcMemAlloc of the first publish was answered with, plus off; the
 * fuzzer can then reach the copy paths with addresses that are valid.
 *
 * A guest runs the host functions the host queues for it (cuLaunchHostFunc)
 * and acknowledges them; a thread here plays that part (it marks every
 * queued callback done), or a synchronisation behind a host function waits
 * for a guest that never comes (the long run's two timeouts). A guest that
 * truly never acknowledges holds only its own session's streams, until it
 * goes (bad_client covers that).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "standin/standin.h"
#include "vc_cuda_manual.h"
#include "vc_layout.h"
#include "vc_shm.h"
#include "vc_wire.h"
#include "vcuda/server.h"

#define DPTR_MARK 0x0dd0000000000000ull
#define DPTR_MARK_MASK (~0x3ffffffffull) /* k in bits 32-33, off in bits 0-31 */
#define DPTR_MAX 4

static void *g_base;
static int g_fd = -1; /* the region's memfd: the executor maps the arena again from it */
static struct vc_layout g_l;

/* The guest's callback runner: while g_ack_on, every callback the host
 * queued is done. Under g_ack_mu, so that no acknowledgement of one input's
 * session lands in the next one's fresh region. Between inputs it sleeps on
 * g_ack_cv; during one it looks every 20 us while callbacks come, backing
 * off to 500 us while none do (waking 50 000 times a second, it took a core's
 * worth of the run's time in context switches). */
static pthread_mutex_t g_ack_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_ack_cv = PTHREAD_COND_INITIALIZER;
static int g_ack_on;

static void *acker(void *arg)
{
	uint32_t seen = 0;
	unsigned us = 20;

	(void)arg;
	pthread_mutex_lock(&g_ack_mu);
	for (;;) {
		struct vc_ctrl *c = g_base;
		uint32_t t;

		while (!g_ack_on) {
			pthread_cond_wait(&g_ack_cv, &g_ack_mu);
			seen = 0;
			us = 20;
		}
		/* Pairs with the host's seq_cst store of cb_tail in
		 * vc_ring_host_cb_push(), as the guest's runner does. */
		t = vc_shm_load32(&c->cb_tail, VC_ACQUIRE);
		/* Pairs with the host's acquire load in vc_ring_host_cb_done(). */
		vc_shm_store32(&c->cb_done, t, VC_RELEASE);
		us = t != seen ? 20 : us < 500 ? us * 2 : 500;
		seen = t;
		pthread_mutex_unlock(&g_ack_mu);
		usleep(us);
		pthread_mutex_lock(&g_ack_mu);
	}
	return NULL;
}

static void acks(int on)
{
	pthread_mutex_lock(&g_ack_mu);
	g_ack_on = on;
	pthread_cond_signal(&g_ack_cv);
	pthread_mutex_unlock(&g_ack_mu);
}

static void put(uint32_t at, const uint8_t *p, size_t n)
{
	uint8_t *ring = (uint8_t *)g_base + g_l.ring_off;

	for (size_t i = 0; i < n; i++)
		ring[(at + i) & (g_l.ring_size - 1)] = p[i];
}

/*
 * The device addresses that the vcMemAlloc commands with a reply among the
 * first @len bytes of @cmds were answered with (the first DPTR_MAX, in
 * order): their replies are in the slots, stamped with their sequence
 * numbers (the n-th command of the fresh session has seq n).
 */
static unsigned first_allocs(const uint8_t *cmds, uint32_t len, uint64_t dptr[DPTR_MAX])
{
	const uint8_t *slots = (const uint8_t *)g_base + g_l.slots_off;
	unsigned n = 0;
	uint64_t seq = 0;

	for (uint32_t off = 0; off + sizeof(struct vc_cmd_hdr) <= len && n < DPTR_MAX;) {
		struct vc_cmd_hdr h;
		struct vc_reply_hdr r;

		memcpy(&h, cmds + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % VC_CMD_ALIGN || h.size > len - off)
			break;
		seq++;
		off += h.size;
		if (h.op != VC_CU_vcMemAlloc || h.flags != VC_CMD_F_REPLY || h.slot >= g_l.slot_count)
			continue;
		memcpy(&r, slots + (size_t)h.slot * g_l.slot_size, sizeof(r));
		if (r.seq == seq && r.status == 0 && r.len >= sizeof(uint64_t))
			memcpy(&dptr[n++], slots + (size_t)h.slot * g_l.slot_size + sizeof(r), sizeof(uint64_t));
	}
	return n;
}

/* Rebase the placeholders of @len bytes at @p, which go to ring offset @at. */
static void rebase(uint8_t *p, uint32_t at, size_t len, const uint64_t *dptr, unsigned n)
{
	for (size_t i = (8 - at % 8) % 8; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, sizeof(w));
		if ((w & DPTR_MARK_MASK) != DPTR_MARK || ((w >> 32) & 3) >= n)
			continue;
		w = dptr[(w >> 32) & 3] + (w & 0xffffffffu);
		memcpy(p + i, &w, sizeof(w));
	}
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
		/* With a pinned pool (2 MiB), so that page-locked copies,
		 * registrations and graph copies through it (bounces among
		 * them) are fuzzed once an input names the pool's base. */
		struct vc_layout_req r = {.ring_size = 64u << 10, .slot_count = 4, .slot_size = 1024,
					  .chunk_size = 4096, .arena_size = 4 * 4096, .pinned_size = 2u << 20};

		if (vc_layout_compute(&r, &g_l))
			abort();
		/* A memfd, as the server's regions are: the executor maps the
		 * arena a second time from it and registers that mapping
		 * (host-backend/cuda/arena.c), so that path is fuzzed too. */
		g_fd = memfd_create("fuzz-region", MFD_CLOEXEC);
		if (g_fd < 0 || ftruncate(g_fd, (off_t)g_l.region_size) < 0)
			abort();
		g_base = mmap(NULL, g_l.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, g_fd, 0);
		if (g_base == MAP_FAILED)
			abort();
		/* A stream an input leaves waiting for ever would hold each close
		 * for the server's 2 s: a short wait keeps the run's pace. */
		vc_exec_cuda_set_close_wait(20);
		{
			pthread_t t;

			if (pthread_create(&t, NULL, acker, NULL) || pthread_detach(t))
				abort();
		}
	}
	if (size < 1)
		return 0;
	opt = data[0];
	data++;
	size--;
	p.base = g_base;
	p.layout = &g_l;
	p.doorbell_fd = p.complete_fd = p.hangup_fd = -1;
	p.mem_fd = g_fd;
	p.mem_off = 0;
	p.exec = &vc_exec_cuda_ops;
	p.exec_factory = (void *)vc_cuda_driver_standin(16u << 20);
	/* Every run starts from the same region: no bytes of an earlier input
	 * in the ring (a raw tail may span all of it) or in the reply slots. */
	memset(g_base, 0, g_l.region_size);
	memset((uint8_t *)g_base + g_l.arena_off, 0x5a, g_l.arena_size);
	if (vc_session_create(&p, &s))
		abort();
	ctrl = g_base;
	acks(1);

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
	if (split && (opt & 4)) {
		uint64_t dptr[DPTR_MAX];
		unsigned n = first_allocs(data, split, dptr);
		uint8_t *rest = malloc(size - split);

		if (!rest)
			abort();
		memcpy(rest, data + split, size - split);
		rebase(rest, split, size - split, dptr, n);
		put(split, rest, size - split);
		free(rest);
	} else {
		put(split, data + split, size - split);
	}
	vc_shm_store32(&ctrl->tail, tail, VC_RELEASE);
	for (int i = 0; i < 4 && vc_session_process(s) > 0; i++)
		;
	vc_session_destroy(s);
	acks(0);
	return 0;
}
