/* SPDX-License-Identifier: MIT */
/*
 * test_decode.c - the server's decoder and session with the CUDA executor
 * over the CI stand-in, driven step by step: the commands a guest library
 * sends (contexts, memory, copies inline and through the arena, memsets,
 * modules, launches, synchronisations), CUDA-level errors (reported, session
 * lives on), and protocol violations (session FATAL, its executor context and
 * its device memory released at once).
 */
#include <check.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "resources/ipc.h"
#include "standin/standin.h"
#include "vc_cuda_array.h"
#include "vc_cuda_graph.h"
#include "vc_cuda_green.h"
#include "vc_cuda_manual.h"
#include "vc_cuda_memmisc.h"
#include "vc_cuda_texref.h"
#include "vc_cuda_vmm.h"
#include "vc_gpin.h"
#include "vc_layout.h"
#include "vc_nvml_wire.h"
#include "vc_ring_guest.h"
#include "vc_shm.h"
#include "vc_sock.h"
#include "vcuda/server.h"
#include "vt_kernels.h"

#define SLOT_SIZE 8192u
#define REPLY_DATA_MAX (SLOT_SIZE - sizeof(struct vc_reply_hdr) - VC_CU_REP_MAX)

static void *g_base;
static struct vc_layout g_l;
static struct vc_session *g_s;
static struct vc_ring_guest g_g;
static uint64_t g_ctx;                       /* device 0's primary context, retained in setup */
static uint64_t g_launches0, g_bytes0, g_allocs0; /* the stand-in before the session did anything */
static int g_seg_host = -1, g_seg_guest = -1; /* the session socket's ends, for pinned segments */
static uint64_t g_seg_max = 4 << 20; /* the server's --pinned-max for them */
/* A VM session's guest RAM (a memfd, guest-physical [0, GRAM_SIZE)) and
 * guest-pin area, for pages pinned in place; -1 / NULL: none. */
#define GRAM_SIZE (4u << 20)
static int g_gram = -1;
static void *g_gpin;
/* The region in a memfd, as the server's sessions have it (the fence words'
 * page is mapped again from it); -1: private memory, as a test's region. */
static int g_region_fd = -1;
static bool g_region_in_memfd;

static int t_kick(void *ctx)
{
	(void)ctx;
	return 0;
}

static int t_sleep(void *ctx, int ms)
{
	(void)ctx;
	(void)ms;
	vc_session_process(g_s);
	vc_session_heartbeat(g_s);
	return 0;
}

static const struct vc_ring_wait_ops t_ops = {.kick = t_kick, .sleep = t_sleep};

/* A synchronous command in slot 1; returns the status, the reply payload
 * (up to @cap bytes) in @out and its length in *@outlen. It waits for the
 * reply itself: synchronisations are answered late, off the serving thread. */
static int call(uint32_t op, const void *req, size_t reqlen, const void *data, size_t dlen,
		void *out, size_t cap, int64_t *outlen)
{
	int32_t st;
	int64_t seq = vc_ring_guest_write(&g_g, op, VC_CMD_F_REPLY, 1, req, reqlen, data, dlen);
	int64_t n;

	ck_assert_int_gt(seq, 0);
	ck_assert_int_eq(vc_ring_guest_publish(&g_g), 0);
	int rc = vc_ring_guest_wait_reply(&g_g, 1, (uint64_t)seq);
	if (rc)
		return rc;
	n = vc_ring_guest_read_reply(&g_g, 1, (uint64_t)seq, &st, out, cap);
	ck_assert_int_ge(n, 0);
	if (outlen)
		*outlen = n;
	return st;
}

/* A CUDA operation with a reply: its reply struct (up to @replen bytes) in @rep. */
static int cu(uint32_t op, const void *req, size_t reqlen, const void *data, size_t dlen, void *rep,
	      size_t replen)
{
	uint8_t buf[VC_CU_REP_MAX];
	int rc = call(op, req, reqlen, data, dlen, buf, sizeof(buf), NULL);

	if (rc == 0 && rep)
		memcpy(rep, buf, replen);
	return rc;
}

static void async_cmd(uint32_t op, const void *req, size_t reqlen, const void *data, size_t dlen)
{
	ck_assert_int_gt(vc_ring_guest_write(&g_g, op, 0, 0, req, reqlen, data, dlen), 0);
	ck_assert_int_eq(vc_ring_guest_publish(&g_g), 0);
}

static uint64_t alloc(uint64_t size)
{
	struct vc_cu_req_alloc r = {.ctx = g_ctx, .kind = VC_CU_ALLOC_PLAIN, .size = size};
	struct vc_cu_rep_alloc rep = {0};

	ck_assert_int_eq(cu(VC_CU_vcMemAlloc, &r, sizeof(r), NULL, 0, &rep, sizeof(rep)), 0);
	ck_assert_uint_ne(rep.dptr, 0);
	return rep.dptr;
}

/* An inline device-to-host copy: the data follows the reply struct. */
static int dtoh(uint64_t src, uint64_t len, void *out)
{
	static uint8_t buf[VC_CU_REP_MAX + REPLY_DATA_MAX];
	struct vc_cu_req_memcpy r = {.ctx = g_ctx, .dir = VC_CU_COPY_DTOH, .src = src, .len = len,
				     .host = VC_CU_HOST_INLINE};
	int64_t n = -1;
	int rc = call(VC_CU_vcMemcpy, &r, sizeof(r), NULL, 0, buf, sizeof(buf), &n);

	if (rc == 0) {
		ck_assert_int_eq(n, (int64_t)(VC_CU_REP_MAX + len));
		memcpy(out, buf + VC_CU_REP_MAX, len);
	} else {
		ck_assert_int_eq(n, 0); /* an error carries no data */
	}
	return rc;
}

/* cuCtxSynchronize of the primary context. */
static int sync_ctx(void)
{
	struct vc_cu_req_sync r = {.ctx = g_ctx, .handle = g_ctx, .kind = VC_CU_SYNC_CTX};

	return call(VC_CU_vcSync, &r, sizeof(r), NULL, 0, NULL, 0, NULL);
}

/* Load tests/lib's store kernel as the guest library loads a module (staged
 * inline, then loaded) and return its function id. */
static uint64_t load_store_kernel(void)
{
	struct vc_cu_req_vcImageBegin b = {.ctx = g_ctx, .size = sizeof(vt_store_ptx)};
	struct vc_cu_rep_vcImageBegin bp = {0};
	struct vc_cu_rep_load lp = {0};
	struct vc_cu_rep_cuModuleGetFunction fp = {0};

	ck_assert_int_eq(cu(VC_CU_vcImageBegin, &b, sizeof(b), NULL, 0, &bp, sizeof(bp)), 0);
	struct vc_cu_req_vcImagePut p = {.ctx = g_ctx, .image = bp.image, .len = sizeof(vt_store_ptx),
					 .inline_data = 1};
	async_cmd(VC_CU_vcImagePut, &p, sizeof(p), vt_store_ptx, sizeof(vt_store_ptx));
	struct vc_cu_req_load l = {.ctx = g_ctx, .image = bp.image, .kind = VC_CU_LOAD_MODULE};
	ck_assert_int_eq(cu(VC_CU_vcLoad, &l, sizeof(l), NULL, 0, &lp, sizeof(lp)), 0);
	ck_assert_uint_ne(lp.handle, 0);
	struct vc_cu_req_cuModuleGetFunction f = {.cur_ctx = g_ctx, .hmod = lp.handle,
						  .name_len = sizeof(VT_STORE_KERNEL)};
	ck_assert_int_eq(cu(VC_CU_cuModuleGetFunction, &f, sizeof(f), VT_STORE_KERNEL, sizeof(VT_STORE_KERNEL), &fp,
			    sizeof(fp)),
			 0);
	ck_assert_uint_ne(fp.hfunc, 0);
	return fp.hfunc;
}

/* An asynchronous launch of the store kernel: @value to @dst, params packed
 * as the function's layout says (u64 at 0, u32 at 8). */
static void store(uint64_t fn, uint64_t dst, uint32_t value, uint32_t grid_x)
{
	struct vc_cu_req_launch l = {.ctx = g_ctx, .func = fn, .grid = {grid_x, 1, 1}, .block = {128, 1, 1},
				     .param_size = 12};
	uint8_t params[12];

	memcpy(params, &dst, 8);
	memcpy(params + 8, &value, 4);
	async_cmd(VC_CU_vcLaunch, &l, sizeof(l), params, sizeof(params));
}

static void setup(void)
{
	struct vc_layout_req r = {.ring_size = 32768, .slot_count = 4, .slot_size = SLOT_SIZE,
				  .chunk_size = 4096, .arena_size = 4 * 4096};
	struct vc_session_params p = {0};
	struct vc_cu_req_ctx c = {.dev = 0};
	struct vc_cu_rep_ctx cr = {0};

	ck_assert_int_eq(vc_layout_compute(&r, &g_l), 0);
	if (g_region_in_memfd) {
		g_region_fd = memfd_create("test-region", MFD_CLOEXEC);
		ck_assert_int_ge(g_region_fd, 0);
		ck_assert_int_eq(ftruncate(g_region_fd, (off_t)g_l.region_size), 0);
		g_base = mmap(NULL, g_l.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, g_region_fd, 0);
		ck_assert_ptr_ne(g_base, MAP_FAILED);
	} else {
		g_base = aligned_alloc(4096, g_l.region_size);
		ck_assert_ptr_nonnull(g_base);
	}
	p.base = g_base;
	p.layout = &g_l;
	p.doorbell_fd = p.complete_fd = p.hangup_fd = p.mem_fd = -1;
	p.mem_fd = g_region_fd;
	if (g_seg_host >= 0) { /* a host-local client's socket, which may pass segments */
		p.hangup_fd = g_seg_host;
		p.pass_fds = true;
		p.pinned_max = g_seg_max;
	}
	if (g_gram >= 0) { /* a VM session whose guest's RAM the host holds */
		static struct vc_guest_ram ram;

		ram = (struct vc_guest_ram){.gpa = 0, .size = GRAM_SIZE, .fd = g_gram, .fd_off = 0};
		p.gpin_area = g_gpin;
		p.guest_ram = &ram;
		p.guest_ram_n = 1;
		p.pinned_max = 4 << 20;
	}
	p.exec = &vc_exec_cuda_ops;
	/* 1 MiB of "device" memory (the first call in the process sets it;
	 * each test runs in a process of its own). */
	p.exec_factory = (void *)vc_cuda_driver_standin(1 << 20);
	vc_cuda_driver_standin_stats(&g_launches0, &g_bytes0, &g_allocs0);
	ck_assert_int_eq(vc_session_create(&p, &g_s), 0);
	ck_assert_int_eq(vc_ring_guest_init(&g_g, g_base, &g_l, &t_ops, NULL), 0);
	g_g.spin_us = 0;
	/* What every guest does first: retain device 0's primary context. */
	ck_assert_int_eq(cu(VC_CU_cuDevicePrimaryCtxRetain, &c, sizeof(c), NULL, 0, &cr, sizeof(cr)), 0);
	ck_assert_uint_ne(cr.pctx, 0);
	g_ctx = cr.pctx;
}

/* The hostile tests' sessions hold device memory, which FATAL must free. */
static void setup_hostile(void)
{
	uint64_t l, bytes, allocs;

	setup();
	alloc(4096);
	vc_cuda_driver_standin_stats(&l, &bytes, &allocs);
	ck_assert_uint_eq(allocs, g_allocs0 + 1);
	ck_assert_uint_eq(bytes, g_bytes0 + 4096);
}

static void teardown(void)
{
	vc_ring_guest_fini(&g_g);
	vc_session_destroy(g_s);
	if (g_region_fd >= 0) {
		munmap(g_base, g_l.region_size);
		close(g_region_fd);
		g_region_fd = -1;
	} else {
		free(g_base);
	}
}

/* Raw bytes into the ring at the guest's tail, then publish: a hostile guest. */
static void raw(const void *bytes, uint32_t len)
{
	uint8_t *ring = (uint8_t *)g_base + g_l.ring_off;
	uint32_t mask = g_l.ring_size - 1;

	for (uint32_t i = 0; i < len; i++)
		ring[(g_g.tail + i) & mask] = ((const uint8_t *)bytes)[i];
	g_g.tail += len;
	vc_shm_store32(&g_g.ctrl->tail, g_g.tail, VC_RELEASE);
}

/* A command built by hand: header, @len bytes of payload, padded to 8. */
static void raw_cmd(uint32_t op, uint32_t flags, uint32_t slot, const void *payload, uint32_t len)
{
	uint8_t b[512] = {0};
	struct vc_cmd_hdr h = {.op = op, .size = (uint32_t)(sizeof(h) + len + 7) & ~7u, .flags = flags,
			       .slot = slot};

	ck_assert_uint_le(h.size, sizeof(b));
	memcpy(b, &h, sizeof(h));
	memcpy(b + sizeof(h), payload, len);
	raw(b, h.size);
}

static void expect_fatal(uint32_t reason)
{
	struct vc_session_stats st;
	uint64_t launches, bytes, allocs;
	uint32_t r;

	ck_assert_int_eq(vc_session_process(g_s), -EPROTO);
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, reason);
	ck_assert_uint_ne(vc_ring_guest_status(&g_g, &r) & VC_STATUS_FATAL, 0);
	ck_assert_uint_eq(r, reason);
	/* Its executor context is closed at once: its contexts destroyed and
	 * the device memory they held freed, nothing left in flight. */
	vc_cuda_driver_standin_stats(&launches, &bytes, &allocs);
	ck_assert_uint_eq(allocs, g_allocs0);
	ck_assert_uint_eq(bytes, g_bytes0);
	ck_assert(!vc_session_busy(g_s));
	/* And it stays dead. */
	ck_assert_int_eq(vc_session_process(g_s), -EPROTO);
}

/* ---- well-formed traffic ---------------------------------------------------- */

START_TEST(echo_roundtrip)
{
	struct vc_echo_req r = {.len = 13};
	char out[64];
	int64_t n;

	ck_assert_int_eq(call(VC_OP_ECHO, &r, sizeof(r), "thirteen char", 13, out, sizeof(out), &n), 0);
	ck_assert_int_eq(n, 13);
	ck_assert_mem_eq(out, "thirteen char", 13);
	/* Larger than the reply slot: a clean error, no truncated data. */
	static char big[SLOT_SIZE + 2048];
	r.len = sizeof(big);
	ck_assert_int_eq(call(VC_OP_ECHO, &r, sizeof(r), big, sizeof(big), out, 0, &n),
			 VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(memory_copies_memset)
{
	uint64_t d = alloc(10000), e = alloc(64);
	uint8_t src[10000], back[10000];
	int64_t n;

	for (int i = 0; i < 10000; i++)
		src[i] = (uint8_t)(i * 31 + 1);
	/* inline HtoD (queued), inline DtoH */
	struct vc_cu_req_memcpy h = {.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d + 100, .len = 500,
				     .host = VC_CU_HOST_INLINE, .async = 1};
	async_cmd(VC_CU_vcMemcpy, &h, sizeof(h), src, 500);
	ck_assert_int_eq(dtoh(d + 100, 500, back), 0);
	ck_assert_mem_eq(back, src, 500);
	/* inline HtoD waited for (a blocking copy), read back */
	h = (struct vc_cu_req_memcpy){.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d + 9000, .len = 1000,
				      .host = VC_CU_HOST_INLINE};
	ck_assert_int_eq(call(VC_CU_vcMemcpy, &h, sizeof(h), src + 9000, 1000, NULL, 0, NULL), 0);
	ck_assert_int_eq(dtoh(d + 9000, 1000, back), 0);
	ck_assert_mem_eq(back, src + 9000, 1000);
	/* arena HtoD, arena DtoH */
	memcpy((uint8_t *)g_base + g_l.arena_off + 4096, src, 4096);
	h = (struct vc_cu_req_memcpy){.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d + 4096, .len = 4096,
				      .arena_off = 4096, .host = VC_CU_HOST_ARENA, .async = 1};
	async_cmd(VC_CU_vcMemcpy, &h, sizeof(h), NULL, 0);
	struct vc_cu_req_memcpy r = {.ctx = g_ctx, .dir = VC_CU_COPY_DTOH, .src = d + 4096, .len = 4096,
				     .arena_off = 8192, .host = VC_CU_HOST_ARENA};
	ck_assert_int_eq(call(VC_CU_vcMemcpy, &r, sizeof(r), NULL, 0, NULL, 0, &n), 0);
	ck_assert_mem_eq((uint8_t *)g_base + g_l.arena_off + 8192, src, 4096);
	/* More than a reply slot holds, inline: a clean error, no data. */
	ck_assert_int_eq(dtoh(d, REPLY_DATA_MAX + 1, back), VC_CUDA_ERROR_INVALID_VALUE);
	/* DtoD and memset 1/2/4 */
	struct vc_cu_req_memcpy dd = {.ctx = g_ctx, .dir = VC_CU_COPY_DTOD, .dst = e, .src = d + 4096, .len = 64,
				      .async = 1};
	async_cmd(VC_CU_vcMemcpy, &dd, sizeof(dd), NULL, 0);
	ck_assert_int_eq(dtoh(e, 64, back), 0);
	ck_assert_mem_eq(back, src, 64);
	struct vc_cu_req_memset m = {.ctx = g_ctx, .dst = e, .count = 64, .value = 0xab, .elem = 1, .async = 1};
	async_cmd(VC_CU_vcMemset, &m, sizeof(m), NULL, 0);
	m = (struct vc_cu_req_memset){.ctx = g_ctx, .dst = e + 2, .count = 3, .value = 0x1234, .elem = 2,
				      .async = 1};
	async_cmd(VC_CU_vcMemset, &m, sizeof(m), NULL, 0);
	m = (struct vc_cu_req_memset){.ctx = g_ctx, .dst = e + 16, .count = 2, .value = 0xdeadbeef, .elem = 4,
				      .async = 1};
	async_cmd(VC_CU_vcMemset, &m, sizeof(m), NULL, 0);
	ck_assert_int_eq(dtoh(e, 64, back), 0);
	ck_assert_uint_eq(back[0], 0xab);
	ck_assert_uint_eq(back[1], 0xab);
	ck_assert_uint_eq(back[2], 0x34);
	ck_assert_uint_eq(back[3], 0x12);
	ck_assert_uint_eq(back[7], 0x12);
	ck_assert_uint_eq(back[8], 0xab);
	ck_assert_mem_eq(back + 16, "\xef\xbe\xad\xde\xef\xbe\xad\xde", 8);
	ck_assert_uint_eq(back[24], 0xab);
	/* free: once, and only once */
	struct vc_cu_req_free f = {.ctx = g_ctx, .dptr = d};
	ck_assert_int_eq(call(VC_CU_vcMemFree, &f, sizeof(f), NULL, 0, NULL, 0, NULL), 0);
	ck_assert_int_eq(call(VC_CU_vcMemFree, &f, sizeof(f), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(sync_ctx(), 0);

	uint64_t launches, bytes, allocs;
	vc_cuda_driver_standin_stats(&launches, &bytes, &allocs);
	ck_assert_uint_eq(allocs, g_allocs0 + 1);
	ck_assert_uint_eq(bytes, g_bytes0 + 64);
}
END_TEST

START_TEST(launch_recorded)
{
	uint64_t fn = load_store_kernel(), d = alloc(64), launches, bytes, allocs;
	uint32_t words[2] = {0};

	/* The host tells the parameter layout the guest packs by. */
	static uint8_t buf[VC_CU_REP_MAX + REPLY_DATA_MAX];
	struct vc_cu_param_layout pl;
	struct vc_cu_req_vcFuncParams fp = {.ctx = g_ctx, .func = fn};
	int64_t n;

	ck_assert_int_eq(call(VC_CU_vcFuncParams, &fp, sizeof(fp), NULL, 0, buf, sizeof(buf), &n), 0);
	ck_assert_int_eq(n, (int64_t)(VC_CU_REP_MAX + sizeof(pl)));
	memcpy(&pl, buf + VC_CU_REP_MAX, sizeof(pl));
	ck_assert_uint_eq(pl.count, 2);
	ck_assert_uint_eq(pl.offset[0], 0);
	ck_assert_uint_eq(pl.size[0], 8);
	ck_assert_uint_eq(pl.offset[1], 8);
	ck_assert_uint_eq(pl.size[1], 4);
	ck_assert_uint_eq(pl.total, 12);

	/* Two launches, queued; each stores its word: the parameters arrived. */
	store(fn, d, 0x11111111u, 4);
	store(fn, d + 4, 0x22222222u, 4);
	ck_assert_int_eq(sync_ctx(), 0);
	vc_cuda_driver_standin_stats(&launches, &bytes, &allocs);
	ck_assert_uint_eq(launches - g_launches0, 2);
	ck_assert_int_eq(dtoh(d, sizeof(words), words), 0);
	ck_assert_uint_eq(words[0], 0x11111111u);
	ck_assert_uint_eq(words[1], 0x22222222u);
	/* In stream order: a store after a memset wins, a memset after a store too. */
	struct vc_cu_req_memset m = {.ctx = g_ctx, .dst = d, .count = 2, .value = 0x77777777u, .elem = 4,
				     .async = 1};
	async_cmd(VC_CU_vcMemset, &m, sizeof(m), NULL, 0);
	store(fn, d, 0x33333333u, 1);
	ck_assert_int_eq(dtoh(d, sizeof(words), words), 0);
	ck_assert_uint_eq(words[0], 0x33333333u);
	ck_assert_uint_eq(words[1], 0x77777777u);
	int32_t code;
	uint64_t seq;
	ck_assert(!vc_ring_guest_error(&g_g, &code, &seq));
}
END_TEST

/* ---- CUDA-level errors: reported, never fatal -------------------------------- */

START_TEST(cuda_errors_are_results)
{
	uint64_t fn = load_store_kernel();
	int32_t code;
	uint64_t seq, launches, bytes, allocs;

	/* Out of the stand-in's 1 MiB: the driver's out-of-memory code. */
	struct vc_cu_req_alloc a = {.ctx = g_ctx, .kind = VC_CU_ALLOC_PLAIN, .size = 2 << 20};
	ck_assert_int_eq(cu(VC_CU_vcMemAlloc, &a, sizeof(a), NULL, 0, NULL, 0), VC_CUDA_ERROR_OUT_OF_MEMORY);
	a.size = 0;
	ck_assert_int_eq(cu(VC_CU_vcMemAlloc, &a, sizeof(a), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	uint64_t d = alloc(256);
	uint8_t back[256];
	/* A read past the allocation's end. */
	ck_assert_int_eq(dtoh(d + 200, 100, back), VC_CUDA_ERROR_INVALID_VALUE);
	struct vc_session_stats st0;
	vc_session_get_stats(g_s, &st0);
	uint64_t async0 = st0.async_failed;
	/* An asynchronous write to nowhere becomes the sticky error... */
	struct vc_cu_req_memcpy h = {.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = 0x1000, .len = 8,
				     .host = VC_CU_HOST_INLINE, .async = 1};
	async_cmd(VC_CU_vcMemcpy, &h, sizeof(h), "12345678", 8);
	uint64_t bad_seq = g_g.seq;
	/* ...and a later one (a launch of no threads) does not replace it. */
	struct vc_cu_req_launch l = {.ctx = g_ctx, .func = fn, .grid = {0, 1, 1}, .block = {1, 1, 1},
				     .param_size = 12};
	async_cmd(VC_CU_vcLaunch, &l, sizeof(l), "\0\0\0\0\0\0\0\0\0\0\0", 12);
	ck_assert_int_eq(sync_ctx(), 0);
	ck_assert(vc_ring_guest_error(&g_g, &code, &seq));
	ck_assert_int_eq(code, VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(seq, bad_seq);
	/* ...and the session carries on, its memory and context intact. */
	struct vc_session_stats st;
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, 0);
	ck_assert_uint_eq(st.async_failed, async0 + 2); /* both counted, the first reported */
	vc_cuda_driver_standin_stats(&launches, &bytes, &allocs);
	ck_assert_uint_eq(allocs, g_allocs0 + 1);
	ck_assert_int_eq(dtoh(d, 16, back), 0);
	/* Huge memset counts cannot overflow into a small range. */
	struct vc_cu_req_memset m = {.ctx = g_ctx, .dst = d, .count = UINT64_MAX / 2, .value = 0, .elem = 4,
				     .async = 1};
	vc_ring_guest_ack_error(&g_g, seq);
	async_cmd(VC_CU_vcMemset, &m, sizeof(m), NULL, 0);
	ck_assert_int_eq(sync_ctx(), 0);
	ck_assert(vc_ring_guest_error(&g_g, &code, &seq));
	ck_assert_int_eq(code, VC_CUDA_ERROR_INVALID_VALUE);
	vc_ring_guest_ack_error(&g_g, seq);

	/* Ids the session never issued are the driver's handle errors. */
	a = (struct vc_cu_req_alloc){.ctx = 0x1234, .kind = VC_CU_ALLOC_PLAIN, .size = 64};
	ck_assert_int_eq(cu(VC_CU_vcMemAlloc, &a, sizeof(a), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_CONTEXT);
	l = (struct vc_cu_req_launch){.ctx = g_ctx, .func = 0x1234, .grid = {1, 1, 1}, .block = {1, 1, 1}};
	async_cmd(VC_CU_vcLaunch, &l, sizeof(l), NULL, 0);
	ck_assert_int_eq(sync_ctx(), 0);
	ck_assert(vc_ring_guest_error(&g_g, &code, &seq));
	ck_assert_int_eq(code, VC_CUDA_ERROR_INVALID_HANDLE);
	ck_assert_uint_eq(seq, g_g.seq - 1);
	vc_ring_guest_ack_error(&g_g, seq);
	/* A kernel storing outside every allocation faults, as on a GPU. */
	store(fn, 0x1000, 1, 1);
	ck_assert_int_eq(sync_ctx(), 0);
	ck_assert(vc_ring_guest_error(&g_g, &code, &seq));
	ck_assert_int_eq(code, VC_CUDA_ERROR_ILLEGAL_ADDRESS);
	vc_ring_guest_ack_error(&g_g, seq);
	/* A freed allocation is gone for copies too. */
	struct vc_cu_req_free f = {.ctx = g_ctx, .dptr = d};
	ck_assert_int_eq(call(VC_CU_vcMemFree, &f, sizeof(f), NULL, 0, NULL, 0, NULL), 0);
	ck_assert_int_eq(dtoh(d, 16, back), VC_CUDA_ERROR_INVALID_VALUE);
	/* Still alive after all that. */
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, 0);
	ck_assert_int_eq(sync_ctx(), 0);
	ck_assert(!vc_ring_guest_error(&g_g, &code, &seq));
}
END_TEST

/* A copy inside an allocation the driver confirmed once is checked without
 * asking it again (quota.c's ranges), until that allocation (or any other)
 * is freed or its context goes: a freed range is never taken for a live one. */
START_TEST(confirmed_ranges_skip_the_driver_until_freed)
{
	uint8_t back[64];
	uint64_t d = alloc(256), e = alloc(256), q;

	ck_assert_int_eq(dtoh(d, 16, back), 0);
	q = vc_cuda_driver_standin_pointer_queries();
	ck_assert_int_eq(dtoh(d + 64, 16, back), 0);
	ck_assert_int_eq(dtoh(d + 240, 16, back), 0);
	ck_assert_uint_eq(vc_cuda_driver_standin_pointer_queries(), q); /* answered from the cache */
	/* Past the end is still refused, by the driver's answer. */
	ck_assert_int_eq(dtoh(d + 250, 16, back), VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_gt(vc_cuda_driver_standin_pointer_queries(), q);
	/* Another allocation freed: every confirmed range is forgotten. */
	struct vc_cu_req_free f = {.ctx = g_ctx, .dptr = e};
	ck_assert_int_eq(call(VC_CU_vcMemFree, &f, sizeof(f), NULL, 0, NULL, 0, NULL), 0);
	q = vc_cuda_driver_standin_pointer_queries();
	ck_assert_int_eq(dtoh(d, 16, back), 0);
	ck_assert_uint_eq(vc_cuda_driver_standin_pointer_queries(), q + 1);
	/* The confirmed one freed: a copy from it is refused, as natively. */
	f.dptr = d;
	ck_assert_int_eq(call(VC_CU_vcMemFree, &f, sizeof(f), NULL, 0, NULL, 0, NULL), 0);
	ck_assert_int_eq(dtoh(d, 16, back), VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(dtoh(e, 16, back), VC_CUDA_ERROR_INVALID_VALUE);
	/* A new allocation, perhaps at the same address, is asked about afresh. */
	d = alloc(256);
	q = vc_cuda_driver_standin_pointer_queries();
	ck_assert_int_eq(dtoh(d, 16, back), 0);
	ck_assert_uint_eq(vc_cuda_driver_standin_pointer_queries(), q + 1);
	f.dptr = d;
	ck_assert_int_eq(call(VC_CU_vcMemFree, &f, sizeof(f), NULL, 0, NULL, 0, NULL), 0);
}
END_TEST

/* Managed memory: only the session's own managed ranges are named; the
 * driver's refusals are results. */
START_TEST(managed_ranges_are_checked)
{
	struct vc_cu_req_managed_alloc a = {.ctx = g_ctx, .size = 8192, .flags = CU_MEM_ATTACH_GLOBAL};
	struct vc_cu_rep_managed_alloc ap = {0};
	struct vc_cu_rep_managed_query q = {0};
	uint64_t plain = alloc(4096);
	uint8_t back[16];

	ck_assert_int_eq(cu(VC_CU_vcManagedAlloc, &a, sizeof(a), NULL, 0, &ap, sizeof(ap)), 0);
	ck_assert_uint_ne(ap.dptr, 0);
	ck_assert_int_eq(dtoh(ap.dptr + 4096, 16, back), 0);
	a.flags = 9;
	ck_assert_int_eq(cu(VC_CU_vcManagedAlloc, &a, sizeof(a), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	a.flags = CU_MEM_ATTACH_GLOBAL;
	a.size = 2 << 20; /* past the stand-in's 1 MiB */
	ck_assert_int_eq(cu(VC_CU_vcManagedAlloc, &a, sizeof(a), NULL, 0, NULL, 0), VC_CUDA_ERROR_OUT_OF_MEMORY);
	/* what the guest may ask about */
	struct vc_cu_req_managed_ptr mp = {.ctx = g_ctx, .dptr = plain};
	ck_assert_int_eq(cu(VC_CU_vcManagedQuery, &mp, sizeof(mp), NULL, 0, &q, sizeof(q)), 0);
	ck_assert_uint_eq(q.managed, 0);
	mp.dptr = ap.dptr + 100;
	ck_assert_int_eq(cu(VC_CU_vcManagedQuery, &mp, sizeof(mp), NULL, 0, &q, sizeof(q)), 0);
	ck_assert_uint_eq(q.managed, 1);
	ck_assert_uint_eq(q.base, ap.dptr);
	struct vc_cu_req_range_attrs ra = {.ctx = g_ctx, .dptr = plain, .count = 16, .n = 1,
					   .attr = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY}, .size = {4}};
	ck_assert_int_eq(cu(VC_CU_vcMemRangeAttrs, &ra, sizeof(ra), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	ra.dptr = ap.dptr;
	ra.count = 16384; /* past its end */
	ck_assert_int_eq(cu(VC_CU_vcMemRangeAttrs, &ra, sizeof(ra), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	ra.count = 8192;
	ck_assert_int_eq(cu(VC_CU_vcMemRangeAttrs, &ra, sizeof(ra), NULL, 0, NULL, 0), 0);
	struct {
		struct vc_cu_req_mem_batch b;
		struct vc_cu_batch_range r;
		struct vc_cu_batch_loc l;
	} b = {{.ctx = g_ctx, .kind = VC_CU_BATCH_PREFETCH, .count = 1, .nlocs = 1},
	       {.dptr = plain, .size = 16},
	       {.type = CU_MEM_LOCATION_TYPE_DEVICE}};
	ck_assert_int_eq(cu(VC_CU_vcMemBatch, &b, sizeof(b), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	/* frees: only a managed allocation's start, once */
	mp.dptr = plain;
	ck_assert_int_eq(cu(VC_CU_vcManagedFree, &mp, sizeof(mp), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	mp.dptr = ap.dptr + 4096;
	ck_assert_int_eq(cu(VC_CU_vcManagedFree, &mp, sizeof(mp), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	mp.dptr = ap.dptr;
	ck_assert_int_eq(cu(VC_CU_vcManagedFree, &mp, sizeof(mp), NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(cu(VC_CU_vcManagedFree, &mp, sizeof(mp), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(dtoh(ap.dptr, 16, back), VC_CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* ---- protocol violations: FATAL ----------------------------------------------- */

START_TEST(unknown_opcode_is_fatal)
{
	struct vc_cmd_hdr h = {.op = 0x7777, .size = 16};
	raw(&h, sizeof(h));
	expect_fatal(VC_FATAL_OP);
}
END_TEST

/* Protocol v1's transport test operations (SYNC, MEM_ALLOC ... LAUNCH) no
 * longer exist: each is an unknown opcode, whatever its old payload. */
static const uint32_t retired_ops[] = {3, 16, 17, 18, 19, 20, 21, 22};

START_TEST(retired_opcodes_are_fatal)
{
	uint64_t payload[6] = {4096, 0, 0, 0, 0, 0};

	raw_cmd(retired_ops[_i], VC_CMD_F_REPLY, 0, payload, sizeof(payload));
	expect_fatal(VC_FATAL_OP);
}
END_TEST

START_TEST(opcodes_outside_cuda_range_are_fatal)
{
	static const uint32_t ops[] = {VC_OP_MAX_, VC_CU_OP_BASE - 1, VC_CU_OP_END_, 0xffffffffu};
	struct vc_cu_prefix p = {.ctx = g_ctx};

	raw_cmd(ops[_i], 0, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_OP);
}
END_TEST

START_TEST(unknown_flags_are_fatal)
{
	struct vc_cmd_hdr h = {.op = VC_OP_NOP, .size = 16, .flags = 0x80};
	raw(&h, sizeof(h));
	expect_fatal(VC_FATAL_OP);
}
END_TEST

/* A fence needs a reply slot: VC_CMD_F_FENCE alone is no guest's. */
START_TEST(fence_without_reply_is_fatal)
{
	struct vc_cu_req_sync r = {.ctx = g_ctx, .handle = g_ctx, .kind = VC_CU_SYNC_CTX};

	raw_cmd(VC_CU_vcSync, VC_CMD_F_FENCE, 1, &r, sizeof(r));
	expect_fatal(VC_FATAL_SLOT);
}
END_TEST

START_TEST(bad_sizes_are_fatal)
{
	struct vc_cmd_hdr h = {.op = VC_OP_NOP, .size = 12};
	raw(&h, sizeof(h));
	expect_fatal(VC_FATAL_CMD_SIZE);
}
END_TEST

START_TEST(unaligned_size_is_fatal)
{
	struct vc_cmd_hdr h = {.op = VC_OP_NOP, .size = 20};
	uint8_t b[24] = {0};
	memcpy(b, &h, sizeof(h));
	raw(b, sizeof(b));
	expect_fatal(VC_FATAL_CMD_SIZE);
}
END_TEST

START_TEST(length_past_end_is_fatal)
{
	/* A command claiming 4 KiB in a 16-byte span. */
	struct vc_cmd_hdr h = {.op = VC_OP_NOP, .size = 4096};
	raw(&h, sizeof(h));
	expect_fatal(VC_FATAL_CMD_SIZE);
}
END_TEST

START_TEST(truncated_header_is_fatal)
{
	uint8_t b[8] = {VC_OP_NOP};
	raw(b, sizeof(b));
	expect_fatal(VC_FATAL_CMD_SIZE);
}
END_TEST

START_TEST(tail_beyond_ring_is_fatal)
{
	vc_shm_store32(&g_g.ctrl->tail, g_l.ring_size * 3, VC_RELEASE);
	expect_fatal(VC_FATAL_TAIL);
}
END_TEST

START_TEST(bad_slot_is_fatal)
{
	/* A well-formed synchronisation; only the slot is wrong. */
	struct vc_cu_req_sync r = {.ctx = g_ctx, .handle = g_ctx, .kind = VC_CU_SYNC_CTX};

	raw_cmd(VC_CU_vcSync, VC_CMD_F_REPLY, 4, &r, sizeof(r));
	expect_fatal(VC_FATAL_SLOT);
}
END_TEST

START_TEST(arena_offset_outside_is_fatal)
{
	uint64_t d = alloc(8192);
	struct vc_cu_req_memcpy r = {.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 4096,
				     .arena_off = 3 * 4096 + 1, .host = VC_CU_HOST_ARENA};

	raw_cmd(VC_CU_vcMemcpy, 0, 0, &r, sizeof(r));
	expect_fatal(VC_FATAL_ARENA);
}
END_TEST

START_TEST(arena_offset_overflow_is_fatal)
{
	uint64_t d = alloc(8192);
	struct vc_cu_req_memcpy r = {.ctx = g_ctx, .dir = VC_CU_COPY_DTOH, .src = d, .len = 16,
				     .arena_off = UINT64_MAX - 8, .host = VC_CU_HOST_ARENA};

	raw_cmd(VC_CU_vcMemcpy, 0, 0, &r, sizeof(r));
	expect_fatal(VC_FATAL_ARENA);
}
END_TEST

START_TEST(image_arena_outside_is_fatal)
{
	struct vc_cu_req_vcImageBegin b = {.ctx = g_ctx, .size = 8192};
	struct vc_cu_rep_vcImageBegin bp = {0};

	ck_assert_int_eq(cu(VC_CU_vcImageBegin, &b, sizeof(b), NULL, 0, &bp, sizeof(bp)), 0);
	struct vc_cu_req_vcImagePut p = {.ctx = g_ctx, .image = bp.image, .len = 8192, .arena_off = 3 * 4096};
	raw_cmd(VC_CU_vcImagePut, 0, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_ARENA);
}
END_TEST

START_TEST(short_payload_is_fatal)
{
	/* Half a copy's request. */
	struct {
		struct vc_cmd_hdr h;
		uint64_t half;
	} c = {{.op = VC_CU_vcMemcpy, .size = 24}, 0};
	raw(&c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* Every hand-written request shorter than its struct: only a context id. */
static const uint32_t short_ops[] = {VC_CU_vcMemAlloc, VC_CU_vcMemFree, VC_CU_vcMemset, VC_CU_vcLaunch,
				     VC_CU_vcSync, VC_CU_vcImageBegin, VC_CU_vcImagePut, VC_CU_vcLoad,
				     VC_CU_cuDevicePrimaryCtxRetain, VC_CU_cuModuleGetFunction,
				     VC_CU_vcManagedAlloc, VC_CU_vcManagedFree, VC_CU_vcManagedQuery,
				     VC_CU_vcMemRangeAttrs, VC_CU_vcMemBatch};

START_TEST(short_cuda_requests_are_fatal)
{
	struct vc_cu_prefix p = {.ctx = g_ctx};

	raw_cmd(short_ops[_i], VC_CMD_F_REPLY, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(inline_length_lie_is_fatal)
{
	uint64_t d = alloc(1 << 16);
	struct {
		struct vc_cu_req_memcpy r;
		uint8_t data[8];
	} c = {{.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 60000, .host = VC_CU_HOST_INLINE}, {0}};

	raw_cmd(VC_CU_vcMemcpy, 0, 0, &c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(image_inline_length_lie_is_fatal)
{
	struct vc_cu_req_vcImageBegin b = {.ctx = g_ctx, .size = 4096};
	struct vc_cu_rep_vcImageBegin bp = {0};

	ck_assert_int_eq(cu(VC_CU_vcImageBegin, &b, sizeof(b), NULL, 0, &bp, sizeof(bp)), 0);
	struct {
		struct vc_cu_req_vcImagePut r;
		uint8_t data[8];
	} c = {{.ctx = g_ctx, .image = bp.image, .len = 4096, .inline_data = 1}, {0}};
	raw_cmd(VC_CU_vcImagePut, 0, 0, &c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(launch_params_lie_is_fatal)
{
	/* More than CUDA allows, and than the command carries. */
	struct vc_cu_req_launch r = {.ctx = g_ctx, .func = 1, .grid = {1, 1, 1}, .block = {1, 1, 1},
				     .param_size = 40000};

	raw_cmd(VC_CU_vcLaunch, 0, 0, &r, sizeof(r));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(launch_params_past_payload_are_fatal)
{
	/* Within CUDA's limit, but past the command; then attributes likewise. */
	uint64_t fn = load_store_kernel();
	struct vc_cu_req_launch r = {.ctx = g_ctx, .func = fn, .grid = {1, 1, 1}, .block = {1, 1, 1},
				     .param_size = 12};

	if (_i == 1) {
		r.param_size = 0;
		r.nattrs = 2;
	} else if (_i == 2) {
		r.param_size = 0;
		r.nattrs = VC_CU_LAUNCH_ATTRS_MAX + 1;
	}
	raw_cmd(VC_CU_vcLaunch, 0, 0, &r, sizeof(r));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* Selectors a correct guest never sends: where the host side of a copy is,
 * which way it goes, a memset's element size, a synchronisation's kind, a
 * load's kind, an allocation's kind. */
START_TEST(bad_selectors_are_fatal)
{
	uint64_t d = alloc(4096);
	struct vc_cu_req_memcpy c = {.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 8, .host = 7};
	struct vc_cu_req_memset m = {.ctx = g_ctx, .dst = d, .count = 8, .value = 1, .elem = 3};
	struct vc_cu_req_sync s = {.ctx = g_ctx, .kind = VC_CU_SYNC_ALL + 1};
	struct vc_cu_req_alloc a = {.ctx = g_ctx, .kind = 7, .size = 64};

	switch (_i) {
	case 0:
		raw_cmd(VC_CU_vcMemcpy, VC_CMD_F_REPLY, 0, &c, sizeof(c));
		break;
	case 1:
		c.host = VC_CU_HOST_INLINE;
		c.dir = 7;
		raw_cmd(VC_CU_vcMemcpy, VC_CMD_F_REPLY, 0, &c, sizeof(c));
		break;
	case 2:
		raw_cmd(VC_CU_vcMemset, 0, 0, &m, sizeof(m));
		break;
	case 3:
		raw_cmd(VC_CU_vcSync, VC_CMD_F_REPLY, 0, &s, sizeof(s));
		break;
	case 4: {
		struct vc_cu_req_vcImageBegin b = {.ctx = g_ctx, .size = sizeof(vt_store_ptx)};
		struct vc_cu_rep_vcImageBegin bp = {0};

		ck_assert_int_eq(cu(VC_CU_vcImageBegin, &b, sizeof(b), NULL, 0, &bp, sizeof(bp)), 0);
		struct vc_cu_req_load l = {.ctx = g_ctx, .image = bp.image, .kind = 9};
		raw_cmd(VC_CU_vcLoad, VC_CMD_F_REPLY, 0, &l, sizeof(l));
		break;
	}
	default:
		raw_cmd(VC_CU_vcMemAlloc, VC_CMD_F_REPLY, 0, &a, sizeof(a));
		break;
	}
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* Range attributes and batches no correct guest sends: no attribute, too
 * many, answers larger than the cap, no reply slot; an empty or oversized
 * batch, more locations than ranges, locations for a discard, none for a
 * prefetch, arrays past the command. */
START_TEST(managed_requests_past_limits_are_fatal)
{
	struct vc_cu_req_range_attrs ra = {.ctx = g_ctx, .dptr = 0x1000, .count = 16, .n = 1,
					   .attr = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY}, .size = {4}};
	struct {
		struct vc_cu_req_mem_batch b;
		struct vc_cu_batch_range r[2];
		struct vc_cu_batch_loc l[2];
	} b = {{.ctx = g_ctx, .kind = VC_CU_BATCH_PREFETCH, .count = 2, .nlocs = 1},
	       {{.dptr = 0x1000, .size = 16}, {.dptr = 0x2000, .size = 16}},
	       {{.type = CU_MEM_LOCATION_TYPE_DEVICE}}};
	uint32_t blen = sizeof(b.b) + 2 * sizeof(b.r[0]) + sizeof(b.l[0]);

	switch (_i) {
	case 0:
		ra.n = 0;
		break;
	case 1:
		ra.n = VC_CU_RANGE_ATTRS_MAX + 1;
		break;
	case 2:
		ra.size[0] = VC_CU_RANGE_DATA_MAX + 4;
		break;
	case 3:
		raw_cmd(VC_CU_vcMemRangeAttrs, 0, 0, &ra, sizeof(ra)); /* no reply slot */
		expect_fatal(VC_FATAL_PAYLOAD);
		return;
	case 4:
		b.b.count = 0;
		break;
	case 5:
		b.b.count = VC_CU_BATCH_MAX + 1;
		break;
	case 6:
		b.b.nlocs = 3;
		break;
	case 7:
		b.b.kind = VC_CU_BATCH_DISCARD;
		break;
	case 8:
		b.b.nlocs = 0;
		break;
	case 9:
		blen -= 8; /* the last location cut short */
		break;
	default:
		b.b.kind = 9;
		break;
	}
	if (_i < 3)
		raw_cmd(VC_CU_vcMemRangeAttrs, VC_CMD_F_REPLY, 0, &ra, sizeof(ra));
	else
		raw_cmd(VC_CU_vcMemBatch, VC_CMD_F_REPLY, 0, &b, blen);
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(inline_dtoh_without_reply_is_fatal)
{
	uint64_t d = alloc(4096);
	struct vc_cu_req_memcpy r = {.ctx = g_ctx, .dir = VC_CU_COPY_DTOH, .src = d, .len = 64,
				     .host = VC_CU_HOST_INLINE};

	raw_cmd(VC_CU_vcMemcpy, 0, 0, &r, sizeof(r));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(unterminated_name_is_fatal)
{
	struct {
		struct vc_cu_req_cuModuleGetFunction r;
		char name[8];
	} c = {{.cur_ctx = g_ctx, .name_len = 8}, {'v', 'c', '_', 's', 't', 'o', 'r', 'e'}};

	raw_cmd(VC_CU_cuModuleGetFunction, VC_CMD_F_REPLY, 0, &c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- JIT linking (host-backend/cuda/link.c) ---------------------------------- */

/* Stage @n bytes at @img inline; the image id. */
static uint64_t stage(const void *img, uint64_t n)
{
	struct vc_cu_req_vcImageBegin b = {.ctx = g_ctx, .size = n};
	struct vc_cu_rep_vcImageBegin bp = {0};

	ck_assert_int_eq(cu(VC_CU_vcImageBegin, &b, sizeof(b), NULL, 0, &bp, sizeof(bp)), 0);
	struct vc_cu_req_vcImagePut put = {.ctx = g_ctx, .image = bp.image, .len = n, .inline_data = 1};
	async_cmd(VC_CU_vcImagePut, &put, sizeof(put), img, n);
	return bp.image;
}

/* Add input @img of @type to @link: the call's CUresult (from the reply). */
static int link_add(uint64_t link, int type, const void *img, uint64_t n)
{
	static struct vc_cu_req_link_add a;
	struct vc_cu_rep_jit rp = {0};
	int rc;

	memset(&a, 0, sizeof(a));
	a.ctx = g_ctx;
	a.link = link;
	a.type = type;
	a.image = stage(img, n);
	strcpy(a.name, "in");
	rc = cu(VC_CU_vcLinkAdd, &a, sizeof(a), NULL, 0, &rp, sizeof(rp));
	return rc ? rc : rp.result;
}

/* Options checked, logs capped, inputs checked against their own size
 * fields, reads of the linked image bounded: CUDA errors, never fatal. */
START_TEST(jit_link_checks)
{
	static struct vc_cu_req_link_create c;
	struct vc_cu_rep_jit rp = {0};
	static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
	Elf64_Ehdr e;
	uint8_t fat[32];
	uint64_t link, v;

	memset(&c, 0, sizeof(c));
	c.ctx = g_ctx;
	c.jit.n = 1;
	c.jit.o[0].opt = CU_JIT_NUM_OPTIONS; /* unknown */
	ck_assert_int_eq(cu(VC_CU_vcLinkCreate, &c, sizeof(c), NULL, 0, &rp, sizeof(rp)), 0);
	ck_assert_int_eq(rp.result, CUDA_ERROR_INVALID_VALUE);
	c.jit.o[0].opt = CU_JIT_GLOBAL_SYMBOL_ADDRESSES; /* an array of the guest's pointers */
	ck_assert_int_eq(cu(VC_CU_vcLinkCreate, &c, sizeof(c), NULL, 0, &rp, sizeof(rp)), 0);
	ck_assert_int_eq(rp.result, CUDA_ERROR_INVALID_VALUE);
	/* A 4 GiB log asked for: the host keeps VC_CU_JIT_LOG_MAX. */
	c.jit.n = 2;
	c.jit.o[0].opt = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES;
	c.jit.o[0].value = 0xffffffffull;
	c.jit.o[1].opt = CU_JIT_INFO_LOG_BUFFER;
	c.jit.o[1].value = 0xdeadbeef; /* a guest pointer: never used */
	ck_assert_int_eq(cu(VC_CU_vcLinkCreate, &c, sizeof(c), NULL, 0, &rp, sizeof(rp)), 0);
	ck_assert_int_eq(rp.result, 0);
	link = rp.handle;
	/* The log buffer option repeated (the fuzzer's find): one buffer for
	 * every copy, none left naming a freed one (ASan would see it). */
	c.jit.n = 4;
	c.jit.o[2] = c.jit.o[1];
	c.jit.o[3].opt = CU_JIT_ERROR_LOG_BUFFER;
	c.jit.o[3].value = 0xdeadbeef;
	c.jit.o[1].opt = CU_JIT_ERROR_LOG_BUFFER;
	ck_assert_int_eq(cu(VC_CU_vcLinkCreate, &c, sizeof(c), NULL, 0, &rp, sizeof(rp)), 0);
	ck_assert_int_eq(rp.result, 0);
	ck_assert_int_eq(cu(VC_CU_vcLinkDestroy, &(struct vc_cu_req_handle){.ctx = g_ctx, .handle = rp.handle},
			    sizeof(struct vc_cu_req_handle), NULL, 0, NULL, 0), 0);
	ck_assert_uint_ne(link, 0);
	ck_assert_int_eq(link_add(link, CU_JIT_INPUT_PTX, ptx, sizeof(ptx)), 0);
	/* An ELF whose section table lies past the bytes staged. */
	memset(&e, 0, sizeof(e));
	memcpy(e.e_ident, ELFMAG, SELFMAG);
	e.e_ident[EI_CLASS] = ELFCLASS64;
	e.e_shoff = 1u << 20;
	e.e_shnum = 4;
	e.e_shentsize = sizeof(Elf64_Shdr);
	ck_assert_int_eq(link_add(link, CU_JIT_INPUT_CUBIN, &e, sizeof(e)), CUDA_ERROR_INVALID_IMAGE);
	/* A fatbin whose size field claims more than was staged. */
	memset(fat, 0, sizeof(fat));
	v = 0xba55ed50u;
	memcpy(fat, &v, 4);
	fat[6] = 16;
	v = 1u << 30;
	memcpy(fat + 8, &v, 8);
	ck_assert_int_eq(link_add(link, CU_JIT_INPUT_FATBINARY, fat, sizeof(fat)), CUDA_ERROR_INVALID_IMAGE);
	ck_assert_int_eq(link_add(link, 99, ptx, sizeof(ptx)), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(link_add(link + 1, CU_JIT_INPUT_PTX, ptx, sizeof(ptx)), CUDA_ERROR_INVALID_HANDLE);
	/* Reads of an incomplete link, then past the image's end. */
	struct vc_cu_req_link_read r = {.ctx = g_ctx, .link = link, .offset = 0, .len = 8};
	ck_assert_int_eq(cu(VC_CU_vcLinkRead, &r, sizeof(r), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	struct vc_cu_req_link l = {.ctx = g_ctx, .link = link};
	ck_assert_int_eq(cu(VC_CU_vcLinkComplete, &l, sizeof(l), NULL, 0, &rp, sizeof(rp)), 0);
	ck_assert_int_eq(rp.result, 0);
	ck_assert_uint_gt(rp.size, 0);
	r.offset = rp.size;
	r.len = 1;
	ck_assert_int_eq(cu(VC_CU_vcLinkRead, &r, sizeof(r), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	r.offset = 1;
	r.len = UINT64_MAX;
	ck_assert_int_eq(cu(VC_CU_vcLinkRead, &r, sizeof(r), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cu(VC_CU_vcLinkDestroy, &l, sizeof(l), NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(cu(VC_CU_vcLinkDestroy, &l, sizeof(l), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

/* An option count beyond the array, and a link input's unterminated name. */
START_TEST(jit_count_lie_is_fatal)
{
	static struct vc_cu_req_load_jit j;

	memset(&j, 0, sizeof(j));
	j.ctx = g_ctx;
	j.image = stage("x", 2);
	j.jit.n = VC_CU_JIT_MAX + 1;
	ck_assert_int_gt(vc_ring_guest_write(&g_g, VC_CU_vcLoadJit, VC_CMD_F_REPLY, 1, &j, sizeof(j), NULL, 0), 0);
	ck_assert_int_eq(vc_ring_guest_publish(&g_g), 0);
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(link_name_unterminated_is_fatal)
{
	static struct vc_cu_req_link_add a;

	memset(&a, 'n', sizeof(a));
	a.ctx = g_ctx;
	a.jit.n = 0;
	ck_assert_int_gt(vc_ring_guest_write(&g_g, VC_CU_vcLinkAdd, VC_CMD_F_REPLY, 1, &a, sizeof(a), NULL, 0), 0);
	ck_assert_int_eq(vc_ring_guest_publish(&g_g), 0);
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

static const uint32_t short_link_ops[] = {VC_CU_vcLinkCreate, VC_CU_vcLinkAdd, VC_CU_vcLinkComplete,
					  VC_CU_vcLinkRead, VC_CU_vcLinkDestroy, VC_CU_vcLoadJit};

START_TEST(short_link_requests_are_fatal)
{
	struct vc_cu_prefix p = {.ctx = g_ctx};

	raw_cmd(short_link_ops[_i], VC_CMD_F_REPLY, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- virtual memory management and IPC (cuda/vmm.c, cuda/ipc.c) ------------------ */

/* Well-formed VMM and IPC traffic a hostile guest could send: errors, not FATAL. */
START_TEST(vmm_ipc_errors_are_results)
{
	struct vc_cu_req_vmm v = {.ctx = g_ctx, .size = 4ull << 20};
	struct vc_cu_rep_vmm vr = {0};
	struct vc_cu_req_vmm_create c = {.ctx = g_ctx, .size = 2ull << 20};
	struct vc_cu_req_ipc q = {.ctx = g_ctx};
	struct vc_cu_rep_ipc qr = {0};
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
				    .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
	struct vc_session_stats st;
	uint64_t va;

	ck_assert_int_eq(cu(VC_CU_cuMemAddressReserve, &v, sizeof(v), NULL, 0, &vr, sizeof(vr)), 0);
	va = vr.value;
	/* 2 MiB is past the stand-in's 1 MiB: the driver's answer, refunded */
	memcpy(c.prop, &prop, sizeof(prop));
	ck_assert_int_eq(cu(VC_CU_cuMemCreate, &c, sizeof(c), NULL, 0, &vr, sizeof(vr)),
			 VC_CUDA_ERROR_OUT_OF_MEMORY);
	/* a guest pointer in the properties */
	prop.win32HandleMetaData = (void *)0x1000;
	memcpy(c.prop, &prop, sizeof(prop));
	ck_assert_int_eq(cu(VC_CU_cuMemCreate, &c, sizeof(c), NULL, 0, &vr, sizeof(vr)),
			 VC_CUDA_ERROR_INVALID_VALUE);
	/* forged handles, ranges not reserved, partial frees */
	v = (struct vc_cu_req_vmm){.ctx = g_ctx, .ptr = va, .size = 2ull << 20, .handle = 0x7d00000001000000ull};
	ck_assert_int_eq(cu(VC_CU_cuMemMap, &v, sizeof(v), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cu(VC_CU_cuMemRelease, &v, sizeof(v), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	v.handle = 0;
	ck_assert_int_eq(cu(VC_CU_cuMemGetAllocationPropertiesFromHandle, &v, sizeof(v), NULL, 0, NULL, 0),
			 VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cu(VC_CU_cuMemUnmap, &v, sizeof(v), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	v.ptr = UINT64_MAX - 4096;
	v.size = 8192;
	ck_assert_int_eq(cu(VC_CU_cuMemUnmap, &v, sizeof(v), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cu(VC_CU_cuMemRetainAllocationHandle, &v, sizeof(v), NULL, 0, NULL, 0),
			 VC_CUDA_ERROR_INVALID_VALUE);
	v = (struct vc_cu_req_vmm){.ctx = g_ctx, .ptr = va, .size = 2ull << 20};
	ck_assert_int_eq(cu(VC_CU_cuMemAddressFree, &v, sizeof(v), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	/* IPC: a forged token, and a real one with one bit changed */
	memset(q.token, 0x5a, sizeof(q.token));
	ck_assert_int_eq(cu(VC_CU_cuIpcOpenMemHandle_v2, &q, sizeof(q), NULL, 0, &qr, sizeof(qr)),
			 VC_CUDA_ERROR_INVALID_VALUE);
	q.ptr = alloc(4096);
	ck_assert_int_eq(cu(VC_CU_cuIpcGetMemHandle, &q, sizeof(q), NULL, 0, &qr, sizeof(qr)), 0);
	memcpy(q.token, qr.token, sizeof(q.token));
	/* the event kind does not take a memory token */
	ck_assert_int_eq(cu(VC_CU_cuIpcOpenEventHandle, &q, sizeof(q), NULL, 0, &qr, sizeof(qr)),
			 VC_CUDA_ERROR_INVALID_VALUE);
	/* honoured: the stand-in itself refuses to open (its RAM is its worker's) */
	ck_assert_int_eq(cu(VC_CU_cuIpcOpenMemHandle_v2, &q, sizeof(q), NULL, 0, &qr, sizeof(qr)),
			 VC_CUDA_ERROR_NOT_SUPPORTED);
	for (unsigned i = 0; i < VC_CU_IPC_TOKEN; i += 7) {
		q.token[i] ^= 0x10;
		ck_assert_int_eq(cu(VC_CU_cuIpcOpenMemHandle_v2, &q, sizeof(q), NULL, 0, &qr, sizeof(qr)),
				 VC_CUDA_ERROR_INVALID_VALUE);
		q.token[i] ^= 0x10;
	}
	ck_assert_int_eq(cu(VC_CU_cuIpcCloseMemHandle, &v, sizeof(v), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	/* still alive; the reservation goes at close */
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, 0);
	ck_assert_int_eq(vc_ipc_mac_selftest(), 0);
}
END_TEST

static const uint32_t vmm_short_ops[] = {
	VC_CU_cuMemAddressReserve, VC_CU_cuMemAddressFree, VC_CU_cuMemCreate, VC_CU_cuMemRelease,
	VC_CU_cuMemMap, VC_CU_cuMemUnmap, VC_CU_cuMemSetAccess, VC_CU_cuMemGetAllocationGranularity,
	VC_CU_cuMemRetainAllocationHandle, VC_CU_cuMemGetAllocationPropertiesFromHandle,
	VC_CU_cuIpcGetMemHandle, VC_CU_cuIpcOpenMemHandle_v2, VC_CU_cuIpcCloseMemHandle,
	VC_CU_cuIpcGetEventHandle, VC_CU_cuIpcOpenEventHandle, VC_CU_cuMemExportToShareableHandle,
	VC_CU_cuMemImportFromShareableHandle, VC_CU_cuMemPoolExportPointer, VC_CU_cuMemPoolImportPointer,
	VC_CU_cuMemPoolSetAccess, VC_CU_cuMemPoolGetAccess, VC_CU_cuMemPoolExportToShareableHandle,
	VC_CU_cuMemPoolImportFromShareableHandle};

START_TEST(vmm_short_requests_are_fatal)
{
	struct vc_cu_prefix p = {.ctx = g_ctx};

	raw_cmd(vmm_short_ops[_i], VC_CMD_F_REPLY, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- graphs (shared/vc_cuda_graph.h) ------------------------------------------- */

/* A graph of the session's, by the generated cuGraphCreate. */
static uint64_t make_graph(void)
{
	struct vc_cu_req_cuGraphCreate r = {.cur_ctx = g_ctx};
	struct vc_cu_rep_cuGraphCreate rp = {0};

	ck_assert_int_eq(cu(VC_CU_cuGraphCreate, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), 0);
	return rp.phGraph;
}

/* CUDA-level mistakes in node descriptions are the driver's errors; the session lives on. */
START_TEST(graph_node_errors_are_results)
{
	uint64_t g = make_graph(), d = alloc(256);
	struct vc_cu_req_graph_node r = {.ctx = g_ctx, .action = VC_CU_GN_ADD, .graph = g};
	struct vc_cu_rep_graph_node_any rp = {0};
	struct vc_session_stats st;

	r.b.type = CU_GRAPH_NODE_TYPE_MEMSET;
	r.b.dst = 0x1000; /* not the session's */
	r.b.elem = 4;
	r.b.width = 4;
	r.b.height = 1;
	ck_assert_int_eq(cu(VC_CU_vcGraphNode, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), VC_CUDA_ERROR_INVALID_VALUE);
	r.b.dst = d + 250; /* past the allocation's end */
	ck_assert_int_eq(cu(VC_CU_vcGraphNode, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), VC_CUDA_ERROR_INVALID_VALUE);
	r.b.dst = d;
	r.b.height = 3;
	r.b.pitch = UINT64_MAX / 2; /* rows that overflow */
	ck_assert_int_eq(cu(VC_CU_vcGraphNode, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), VC_CUDA_ERROR_INVALID_VALUE);
	r.b.height = 1;
	ck_assert_int_eq(cu(VC_CU_vcGraphNode, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), 0);
	/* a graph id where a node goes, and an event id never issued */
	r.action = VC_CU_GN_SET;
	r.node = g;
	ck_assert_int_eq(cu(VC_CU_vcGraphNode, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_HANDLE);
	r.action = VC_CU_GN_ADD;
	memset(&r.b, 0, sizeof(r.b));
	r.b.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
	r.b.event = 0x7c02000000000999ull;
	ck_assert_int_eq(cu(VC_CU_vcGraphNode, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_HANDLE);
	/* kinds the description does not carry */
	r.b.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL;
	ck_assert_int_eq(cu(VC_CU_vcGraphNode, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), VC_CUDA_ERROR_INVALID_VALUE);
	r.b.type = 99;
	ck_assert_int_eq(cu(VC_CU_vcGraphNode, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), VC_CUDA_ERROR_INVALID_VALUE);
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, 0);
}
END_TEST

/* Every hand-written graph request shorter than its struct. */
static const uint32_t short_graph_ops[] = {VC_CU_vcGraphNode, VC_CU_vcGraphEdges, VC_CU_vcGraphDeps,
					   VC_CU_cuGraphInstantiateWithParams, VC_CU_cuGraphExecUpdate_v2,
					   VC_CU_cuStreamBeginCaptureToGraph, VC_CU_cuUserObjectCreate,
					   VC_CU_cuGraphDebugDotPrint};

START_TEST(short_graph_requests_are_fatal)
{
	struct vc_cu_prefix p = {.ctx = g_ctx};

	raw_cmd(short_graph_ops[_i], VC_CMD_F_REPLY, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* More access descriptors than the wire carries, or than the command holds. */
START_TEST(vmm_access_count_lie_is_fatal)
{
	struct {
		struct vc_cu_req_vmm r;
		CUmemAccessDesc d[1];
	} c = {{.ctx = g_ctx, .size = 2ull << 20, .count = _i ? 2 : VC_CU_ACCESS_MAX + 1}, {{{0}, 0}}};

	raw_cmd(_i < 2 ? VC_CU_cuMemSetAccess : VC_CU_cuMemPoolSetAccess, VC_CMD_F_REPLY, 0, &c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- streams, launches, tensor maps: hostile requests -------------------------------- */

/* Memory operation arrays: a count past the limit, a count past the payload,
 * a single form with more than one, an unknown form. */
START_TEST(memop_counts_are_fatal)
{
	struct {
		struct vc_cu_req_memop r;
		struct vc_cu_memop op[2];
	} c = {{.ctx = g_ctx, .form = VC_CU_MEMOP_BATCH, .count = VC_CU_MEMOP_MAX + 1}, {{0}}};

	if (_i == 1)
		c.r.count = 3;
	else if (_i == 2)
		c.r = (struct vc_cu_req_memop){.ctx = g_ctx, .form = VC_CU_MEMOP_SINGLE, .count = 2};
	else if (_i == 3)
		c.r = (struct vc_cu_req_memop){.ctx = g_ctx, .form = 9, .count = 1};
	raw_cmd(VC_CU_vcStreamMemOp, VC_CMD_F_REPLY, 0, &c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* Addresses that are not the session's, unknown operations: CUDA errors, and
 * the session lives on. */
START_TEST(memop_addresses_are_checked)
{
	uint64_t d = alloc(4096);
	struct {
		struct vc_cu_req_memop r;
		struct vc_cu_memop op;
	} c = {{.ctx = g_ctx, .form = VC_CU_MEMOP_SINGLE, .count = 1},
	       {.op = CU_STREAM_MEM_OP_WRITE_VALUE_64, .addr = d + 4092, .value = 1}};

	ck_assert_int_eq(cu(VC_CU_vcStreamMemOp, &c, sizeof(c), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	c.op.addr = 0x1000;
	ck_assert_int_eq(cu(VC_CU_vcStreamMemOp, &c, sizeof(c), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	c.op.addr = UINT64_MAX - 3;
	c.op.op = CU_STREAM_MEM_OP_WAIT_VALUE_32;
	ck_assert_int_eq(cu(VC_CU_vcStreamMemOp, &c, sizeof(c), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	c.op = (struct vc_cu_memop){.op = 77, .addr = d};
	ck_assert_int_eq(cu(VC_CU_vcStreamMemOp, &c, sizeof(c), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	c.op = (struct vc_cu_memop){.op = CU_STREAM_MEM_OP_WRITE_VALUE_32, .addr = d, .value = 9};
	ck_assert_int_eq(cu(VC_CU_vcStreamMemOp, &c, sizeof(c), NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(sync_ctx(), 0);
}
END_TEST

/* Launch attributes: forged events and unknown ids are refused (the error of
 * an asynchronous launch), a stream attribute holding an event is never
 * forwarded. */
START_TEST(launch_attributes_are_checked)
{
	uint64_t fn = load_store_kernel(), d = alloc(4096);
	struct {
		struct vc_cu_req_launch r;
		struct vc_cu_launch_attr a;
		uint8_t params[12];
	} c = {{.ctx = g_ctx, .func = fn, .grid = {1, 1, 1}, .block = {1, 1, 1}, .nattrs = 1, .param_size = 12},
	       {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT},
	       {0}};
	uint64_t forged = 0x7c02000000000005ull;
	struct vc_cu_req_stream_attr sa = {.ctx = g_ctx, .attr = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT};
	struct vc_cu_rep_vcExportSlot rp;

	memcpy(c.params, &d, 8);
	memcpy(c.a.value, &forged, 8);
	ck_assert_int_eq(cu(VC_CU_vcOccupancyClusters, &c, sizeof(c), NULL, 0, &rp, sizeof(rp)),
			 CUDA_ERROR_INVALID_HANDLE);
	c.a.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
	ck_assert_int_eq(cu(VC_CU_cuOccupancyMaxPotentialClusterSize, &c, sizeof(c), NULL, 0, &rp, sizeof(rp)),
			 CUDA_ERROR_INVALID_HANDLE);
	c.a.id = 0xffff;
	ck_assert_int_eq(cu(VC_CU_vcOccupancyClusters, &c, sizeof(c), NULL, 0, &rp, sizeof(rp)),
			 CUDA_ERROR_INVALID_VALUE);
	c.a.id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
	ck_assert_int_eq(cu(VC_CU_vcOccupancyClusters, &c, sizeof(c), NULL, 0, &rp, sizeof(rp)),
			 CUDA_ERROR_INVALID_VALUE);
	memcpy(sa.value, &forged, 8);
	ck_assert_int_eq(cu(VC_CU_cuStreamSetAttribute, &sa, sizeof(sa), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cu(VC_CU_cuStreamGetAttribute, &sa, sizeof(sa), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	/* too many attributes for the payload */
	c.r.nattrs = 3;
	raw_cmd(VC_CU_cuOccupancyMaxPotentialClusterSize, VC_CMD_F_REPLY, 0, &c, sizeof(c.r) + sizeof(c.a));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* Tensor maps: extents past the allocation or overflowing 64 bits, ranks the
 * driver refuses, forged maps: CUDA errors. An unknown kind is fatal. */
START_TEST(tensor_map_extents_are_checked)
{
	uint64_t d = alloc(1 << 16);
	struct vc_cu_req_tmap r = {.ctx = g_ctx, .kind = VC_CU_TMAP_TILED, .dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
				   .rank = 2, .addr = d, .dims = {64, 64}, .strides = {256}, .box = {16, 16},
				   .estrides = {1, 1}};
	struct vc_cu_rep_tmap rp;

	ck_assert_int_eq(cu(VC_CU_vcTensorMap, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), 0);
	r.dims[1] = 257; /* 256 rows of 256 bytes past the first: past 64 KiB */
	ck_assert_int_eq(cu(VC_CU_vcTensorMap, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_VALUE);
	r.dims[1] = UINT64_MAX;
	r.strides[0] = UINT64_MAX / 2;
	ck_assert_int_eq(cu(VC_CU_vcTensorMap, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_VALUE);
	r.dims[1] = 64;
	r.strides[0] = 256;
	r.dims[0] = UINT64_MAX / 2;
	ck_assert_int_eq(cu(VC_CU_vcTensorMap, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_VALUE);
	r.dims[0] = 64;
	r.rank = 6;
	ck_assert_int_eq(cu(VC_CU_vcTensorMap, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_VALUE);
	r.rank = 2;
	r.dtype = 99;
	ck_assert_int_eq(cu(VC_CU_vcTensorMap, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_VALUE);
	r.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
	r.dims[1] = 0;
	ck_assert_int_eq(cu(VC_CU_vcTensorMap, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_VALUE);
	r.kind = VC_CU_TMAP_REPLACE;
	memset(r.map, 0x5a, sizeof(r.map));
	ck_assert_int_eq(cu(VC_CU_vcTensorMap, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_VALUE);
	r.kind = VC_CU_TMAP_REPLACE + 1;
	raw_cmd(VC_CU_vcTensorMap, VC_CMD_F_REPLY, 0, &r, sizeof(r));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* Arrays of contexts' affinity and atomic operations past their limits. */
START_TEST(family_array_counts_are_fatal)
{
	struct vc_cu_req_ctx_affinity a = {.ctx = g_ctx, .nparams = VC_CU_AFFINITY_MAX + 1};
	struct vc_cu_req_atomic_caps c = {.ctx = g_ctx, .count = VC_CU_ATOMIC_OPS_MAX + 1};

	if (_i == 0)
		raw_cmd(VC_CU_cuCtxCreate_v3, VC_CMD_F_REPLY, 0, &a, sizeof(a));
	else
		raw_cmd(_i == 1 ? VC_CU_cuDeviceGetHostAtomicCapabilities : VC_CU_cuDeviceGetP2PAtomicCapabilities,
			VC_CMD_F_REPLY, 0, &c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- arrays, texture and surface objects, 3D copies (cuda/array.c, copy3d.c) ---- */

static uint64_t make_array(uint64_t w, uint64_t h, uint32_t flags)
{
	struct vc_cu_req_array_create r = {.ctx = g_ctx, .width = w, .height = h, .format = CU_AD_FORMAT_UNSIGNED_INT8,
					   .channels = 1, .flags = flags, .kind = VC_CU_ARR_3D};
	struct vc_cu_rep_array rep = {0};

	ck_assert_int_eq(cu(VC_CU_cuArray3DCreate_v2, &r, sizeof(r), NULL, 0, &rep, sizeof(rep)), 0);
	ck_assert_uint_ne(rep.handle, 0);
	return rep.handle;
}

/* A 3D copy request between two sides, w x h x d. */
static struct vc_cu_req_memcpy3d box3d(struct vc_cu_copy3d_side s, struct vc_cu_copy3d_side d, uint64_t w,
				       uint64_t h, uint64_t dp)
{
	return (struct vc_cu_req_memcpy3d){.ctx = g_ctx, .src = s, .dst = d, .width = w, .height = h, .depth = dp,
					   .dims = 3};
}

START_TEST(arrays_objects_and_boxes)
{
	uint64_t d = alloc(8192), a = make_array(100, 30, 0);
	uint8_t src[3000], back[3000];
	struct vc_cu_copy3d_side dev = {.kind = VC_CU_SIDE_DEVICE, .addr = d, .pitch = 100, .height = 30};
	struct vc_cu_copy3d_side arr = {.kind = VC_CU_SIDE_ARRAY, .addr = a};
	struct vc_cu_copy3d_side st = {.kind = VC_CU_SIDE_STAGED};
	struct vc_cu_req_memcpy3d c;

	for (int i = 0; i < 3000; i++)
		src[i] = (uint8_t)(i * 13 + 5);
	/* the dense box through the arena in two pieces, the cut mid-row */
	memcpy((uint8_t *)g_base + g_l.arena_off, src, 1234);
	memcpy((uint8_t *)g_base + g_l.arena_off + 4096, src + 1234, 3000 - 1234);
	c = box3d(st, arr, 100, 30, 1);
	c.piece_len = 1234;
	ck_assert_int_eq(call(VC_CU_vcMemcpy3D, &c, sizeof(c), NULL, 0, NULL, 0, NULL), 0);
	c.piece_off = 1234;
	c.piece_len = 3000 - 1234;
	c.arena_off = 4096;
	ck_assert_int_eq(call(VC_CU_vcMemcpy3D, &c, sizeof(c), NULL, 0, NULL, 0, NULL), 0);
	/* array -> device, read back */
	c = box3d(arr, dev, 100, 30, 1);
	ck_assert_int_eq(call(VC_CU_vcMemcpy3D, &c, sizeof(c), NULL, 0, NULL, 0, NULL), 0);
	ck_assert_int_eq(dtoh(d, 3000, back), 0);
	ck_assert_mem_eq(back, src, 3000);
	/* CUDA-level refusals, the session living on: a box past the device
	 * allocation, pitches whose products overflow, an array id never issued */
	c = box3d(arr, dev, 100, 30, 1);
	c.dst.addr = d + 8192 - 100;
	ck_assert_int_eq(call(VC_CU_vcMemcpy3D, &c, sizeof(c), NULL, 0, NULL, 0, NULL), VC_CUDA_ERROR_INVALID_VALUE);
	c = box3d(arr, dev, 100, 2, 2);
	c.dst.pitch = 1ull << 40;
	c.dst.height = 1ull << 40;
	ck_assert_int_eq(call(VC_CU_vcMemcpy3D, &c, sizeof(c), NULL, 0, NULL, 0, NULL), VC_CUDA_ERROR_INVALID_VALUE);
	c = box3d(arr, dev, 100, 30, 1);
	c.src.addr = a ^ 0x10000;
	ck_assert_int_eq(call(VC_CU_vcMemcpy3D, &c, sizeof(c), NULL, 0, NULL, 0, NULL), VC_CUDA_ERROR_INVALID_VALUE);
	/* objects: values the session never made, resources out of range */
	struct vc_cu_req_handle hd = {.ctx = g_ctx, .handle = 1};
	ck_assert_int_eq(call(VC_CU_cuTexObjectDestroy, &hd, sizeof(hd), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(call(VC_CU_cuSurfObjectGetResourceDesc, &hd, sizeof(hd), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	struct vc_cu_req_texobj_create t = {.ctx = g_ctx};
	CUDA_RESOURCE_DESC r = {.resType = CU_RESOURCE_TYPE_LINEAR};
	r.res.linear.devPtr = d;
	r.res.linear.format = CU_AD_FORMAT_FLOAT;
	r.res.linear.numChannels = 1;
	r.res.linear.sizeInBytes = 8193;
	memcpy(t.res, &r, sizeof(r));
	ck_assert_int_eq(call(VC_CU_cuTexObjectCreate, &t, sizeof(t), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	r = (CUDA_RESOURCE_DESC){.resType = CU_RESOURCE_TYPE_PITCH2D};
	r.res.pitch2D.devPtr = d;
	r.res.pitch2D.format = CU_AD_FORMAT_FLOAT;
	r.res.pitch2D.numChannels = 4;
	r.res.pitch2D.width = UINT64_MAX / 8;
	r.res.pitch2D.height = 2;
	r.res.pitch2D.pitchInBytes = 64;
	memcpy(t.res, &r, sizeof(r));
	ck_assert_int_eq(call(VC_CU_cuTexObjectCreate, &t, sizeof(t), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	r = (CUDA_RESOURCE_DESC){.resType = CU_RESOURCE_TYPE_ARRAY};
	r.res.array.hArray = (CUarray)(uintptr_t)0x4141414141414141ull; /* a pointer, not an id */
	memcpy(t.res, &r, sizeof(r));
	ck_assert_int_eq(call(VC_CU_cuSurfObjectCreate, &t, sizeof(t), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	r.resType = 77;
	memcpy(t.res, &r, sizeof(r));
	ck_assert_int_eq(call(VC_CU_cuTexObjectCreate, &t, sizeof(t), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	/* a real one, answered with the array's id */
	struct vc_cu_rep_texobj tv = {0};
	struct vc_cu_rep_texobj_desc rd;
	r = (CUDA_RESOURCE_DESC){.resType = CU_RESOURCE_TYPE_ARRAY};
	r.res.array.hArray = (CUarray)(uintptr_t)a;
	memcpy(t.res, &r, sizeof(r));
	ck_assert_int_eq(cu(VC_CU_cuTexObjectCreate, &t, sizeof(t), NULL, 0, &tv, sizeof(tv)), 0);
	hd.handle = tv.value;
	ck_assert_int_eq(cu(VC_CU_cuTexObjectGetResourceDesc, &hd, sizeof(hd), NULL, 0, &rd, sizeof(rd)), 0);
	memcpy(&r, rd.desc, sizeof(r));
	ck_assert_uint_eq((uint64_t)(uintptr_t)r.res.array.hArray, a);
	/* a destroyed array's id is no handle */
	struct vc_cu_req_handle ad = {.ctx = g_ctx, .handle = a};
	ck_assert_int_eq(call(VC_CU_cuArrayDestroy, &ad, sizeof(ad), NULL, 0, NULL, 0, NULL), 0);
	ck_assert_int_eq(call(VC_CU_cuArrayDestroy, &ad, sizeof(ad), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_HANDLE);
	c = box3d(arr, dev, 100, 30, 1);
	ck_assert_int_eq(call(VC_CU_vcMemcpy3D, &c, sizeof(c), NULL, 0, NULL, 0, NULL), VC_CUDA_ERROR_INVALID_VALUE);
	struct vc_session_stats ss;
	vc_session_get_stats(g_s, &ss);
	ck_assert_uint_eq(ss.fatal, 0);
	/* what is left (the object, an array) goes with the session */
	make_array(64, 64, 0);
}
END_TEST

/* Protocol violations of the hand-written array and 3D-copy requests; each
 * session also holds an array, which FATAL must free with its context. */
START_TEST(bad_boxes_and_arrays_are_fatal)
{
	uint64_t d = alloc(4096), a = make_array(64, 16, 0);
	struct vc_cu_copy3d_side dev = {.kind = VC_CU_SIDE_DEVICE, .addr = d, .pitch = 64, .height = 16};
	struct vc_cu_copy3d_side st = {.kind = VC_CU_SIDE_STAGED};
	struct vc_cu_req_memcpy3d c = box3d(st, dev, 64, 16, 1);
	struct vc_cu_req_array_create ac = {.ctx = g_ctx, .width = 8, .format = CU_AD_FORMAT_FLOAT, .channels = 1,
					    .kind = VC_CU_ARR_MIPMAP};
	uint32_t reason = VC_FATAL_PAYLOAD;

	(void)a;
	c.piece_len = 64;
	switch (_i) {
	case 0: /* no such dimensionality */
		c.dims = 4;
		break;
	case 1: /* a 2D copy of more than one slice */
		c.dims = 2;
		c.depth = 2;
		break;
	case 2: /* host to host never reaches the host */
		c.dst = st;
		break;
	case 3: /* a piece beyond the box */
		c.piece_off = 64 * 16 - 8;
		c.piece_len = 64;
		break;
	case 4: /* a piece length that overflows with its offset */
		c.piece_off = 8;
		c.piece_len = UINT64_MAX;
		break;
	case 5: /* an arena range outside the arena */
		c.arena_off = 4 * 4096 - 8;
		reason = VC_FATAL_ARENA;
		break;
	case 6: /* a side of no kind */
		c.src.kind = 9;
		c.src.addr = d;
		break;
	case 7: /* a 2D copy with a slice offset */
		c = box3d(dev, dev, 64, 1, 1);
		c.dims = 2;
		c.dst.z = 1;
		break;
	default: /* a create request of another kind than its opcode */
		raw_cmd(VC_CU_cuArray3DCreate_v2, VC_CMD_F_REPLY, 0, &ac, sizeof(ac));
		expect_fatal(reason);
		return;
	}
	raw_cmd(VC_CU_vcMemcpy3D, VC_CMD_F_REPLY, 0, &c, sizeof(c));
	expect_fatal(reason);
}
END_TEST

static const uint32_t short_array_ops[] = {
	VC_CU_vcMemcpy3D, VC_CU_cuArrayCreate_v2, VC_CU_cuArray3DCreate_v2, VC_CU_cuMipmappedArrayCreate,
	VC_CU_cuArrayDestroy, VC_CU_cuMipmappedArrayDestroy, VC_CU_cuArrayGetPlane, VC_CU_cuMipmappedArrayGetLevel,
	VC_CU_cuArrayGetSparseProperties, VC_CU_cuTexObjectCreate, VC_CU_cuSurfObjectCreate,
	VC_CU_cuTexObjectDestroy, VC_CU_cuTexObjectGetResourceDesc, VC_CU_cuTexObjectGetTextureDesc,
	VC_CU_cuTexObjectGetResourceViewDesc, VC_CU_cuSurfObjectDestroy, VC_CU_cuSurfObjectGetResourceDesc};

START_TEST(short_array_requests_are_fatal)
{
	struct vc_cu_prefix p = {.ctx = g_ctx};

	raw_cmd(short_array_ops[_i], VC_CMD_F_REPLY, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- sparse array mapping, decompression, pools of a location, pointer
 * attributes (shared/vc_cuda_memmisc.h) ------------------------------------------- */

static const uint32_t short_memmisc_ops[] = {VC_CU_cuMemMapArrayAsync, VC_CU_cuMemBatchDecompressAsync,
					     VC_CU_cuMemGetDefaultMemPool, VC_CU_cuMemGetMemPool,
					     VC_CU_cuMemSetMemPool, VC_CU_cuPointerSetAttribute};

START_TEST(short_memmisc_requests_are_fatal)
{
	struct vc_cu_prefix p = {.ctx = g_ctx};

	raw_cmd(short_memmisc_ops[_i], VC_CMD_F_REPLY, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* Counts no guest library sends (none, past the limit, past the payload) and
 * a pool selector that is not its opcode's. */
START_TEST(memmisc_counts_are_fatal)
{
	struct {
		struct vc_cu_req_maparr r;
		uint8_t e[sizeof(CUarrayMapInfo)];
	} m = {{.ctx = g_ctx, .count = 0}, {0}};
	struct {
		struct vc_cu_req_decomp r;
		uint8_t e[sizeof(CUmemDecompressParams)];
	} d = {{.ctx = g_ctx, .count = 0}, {0}};
	struct vc_cu_req_locpool l = {.ctx = g_ctx, .loc_type = CU_MEM_LOCATION_TYPE_DEVICE,
				      .type = CU_MEM_ALLOCATION_TYPE_PINNED, .what = VC_CU_LOCPOOL_SET};

	switch (_i) {
	case 0:
	case 1:
	case 2:
		m.r.count = _i == 0 ? 0 : _i == 1 ? VC_CU_MAPARR_MAX + 1 : 2;
		raw_cmd(VC_CU_cuMemMapArrayAsync, VC_CMD_F_REPLY, 0, &m, sizeof(m));
		break;
	case 3:
	case 4:
	case 5:
		d.r.count = _i == 3 ? 0 : _i == 4 ? VC_CU_DECOMP_MAX + 1 : 2;
		raw_cmd(VC_CU_cuMemBatchDecompressAsync, VC_CMD_F_REPLY, 0, &d, sizeof(d));
		break;
	default:
		raw_cmd(_i == 6 ? VC_CU_cuMemGetMemPool : VC_CU_cuMemGetDefaultMemPool, VC_CMD_F_REPLY, 0, &l,
			sizeof(l));
		break;
	}
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* CUDA-level mistakes: forged array and allocation ids, unknown enums,
 * mappings past their allocation, ranges that are not the session's,
 * locations CUDA does not name, attributes that cannot be set. Each is the
 * driver's kind of error before the driver sees it, and the session lives. */
START_TEST(memmisc_errors_are_results)
{
	uint64_t sparse = make_array(512, 512, CUDA_ARRAY3D_SPARSE), d = alloc(8192);
	struct {
		struct vc_cu_req_maparr r;
		CUarrayMapInfo e;
	} m = {{.ctx = g_ctx, .count = 1}, {0}};
	struct {
		struct vc_cu_req_decomp r;
		CUmemDecompressParams e;
	} z = {{.ctx = g_ctx, .count = 1}, {0}};
	struct vc_cu_rep_decomp zr = {0};
	struct vc_cu_req_locpool l = {.ctx = g_ctx, .loc_type = CU_MEM_LOCATION_TYPE_DEVICE,
				      .type = CU_MEM_ALLOCATION_TYPE_PINNED, .what = VC_CU_LOCPOOL_DEFAULT};
	struct vc_cu_rep_locpool lr = {0}, lr2 = {0};
	struct vc_cu_req_ptrset ps = {.ctx = g_ctx, .ptr = d, .attr = CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, .value = 1};
	struct vc_session_stats st;

	/* map entries */
	m.e.resourceType = CU_RESOURCE_TYPE_ARRAY;
	m.e.resource.array = (CUarray)(uintptr_t)0x7c00000000001234ull;
	m.e.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
	m.e.memHandle.memHandle = 0x7d00000001000000ull;
	m.e.subresource.sparseLevel.extentWidth = 64;
	m.e.subresource.sparseLevel.extentHeight = 64;
	m.e.subresource.sparseLevel.extentDepth = 1;
	m.e.deviceBitMask = 1;
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_HANDLE);
	m.e.resource.array = (CUarray)(uintptr_t)sparse;
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	m.e.resourceType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY; /* an array's id is no mipmapped array's */
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_HANDLE);
	m.e.resourceType = (CUresourcetype)9;
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	m.e.resourceType = CU_RESOURCE_TYPE_ARRAY;
	m.e.subresourceType = (CUarraySparseSubresourceType)5;
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	m.e.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
	m.e.memOperationType = (CUmemOperationType)0;
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	m.e.memOperationType = CU_MEM_OPERATION_TYPE_UNMAP; /* naming memory: ignored, never translated */
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), 0);
	m.e.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
	m.e.memHandleType = (CUmemHandleType)1;
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	m.e.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
	m.e.memHandle.memHandle = 0;
	m.e.offset = UINT64_MAX;
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	/* unmapping what was never mapped reaches the driver (the stand-in accepts it) */
	m.e.memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
	m.e.offset = 0;
	ck_assert_int_eq(cu(VC_CU_cuMemMapArrayAsync, &m, sizeof(m), NULL, 0, NULL, 0), 0);
	/* decompression: a device without the engine refuses a batch before
	 * its entries (the H100's answer, the error index untouched) */
	z.e.src = (const void *)(uintptr_t)d;
	z.e.srcNumBytes = 4096;
	z.e.dst = (void *)(uintptr_t)(d + 4096);
	z.e.dstNumBytes = 4097; /* one past the allocation */
	z.e.dstActBytes = (cuuint32_t *)(uintptr_t)(d + 8188);
	ck_assert_int_eq(cu(VC_CU_cuMemBatchDecompressAsync, &z, sizeof(z), NULL, 0, &zr, sizeof(zr)), 0);
	ck_assert_int_eq(zr.result, VC_CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_uint_eq(zr.error_index, UINT64_MAX);
	/* with one, source, destination and size word must be the session's */
	vc_cuda_driver_standin_decompress(1);
	ck_assert_int_eq(cu(VC_CU_cuMemBatchDecompressAsync, &z, sizeof(z), NULL, 0, &zr, sizeof(zr)), 0);
	ck_assert_int_eq(zr.result, VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(zr.error_index, 0);
	z.e.dstNumBytes = 4000;
	z.e.dstActBytes = (cuuint32_t *)(uintptr_t)(d + 8190);
	ck_assert_int_eq(cu(VC_CU_cuMemBatchDecompressAsync, &z, sizeof(z), NULL, 0, &zr, sizeof(zr)), 0);
	ck_assert_int_eq(zr.result, VC_CUDA_ERROR_INVALID_VALUE);
	z.e.dstActBytes = (cuuint32_t *)(uintptr_t)(d + 8188);
	z.e.src = (const void *)(uintptr_t)(UINT64_MAX - 100);
	ck_assert_int_eq(cu(VC_CU_cuMemBatchDecompressAsync, &z, sizeof(z), NULL, 0, &zr, sizeof(zr)), 0);
	ck_assert_int_eq(zr.result, VC_CUDA_ERROR_INVALID_VALUE);
	z.e.src = (const void *)(uintptr_t)d;
	ck_assert_int_eq(cu(VC_CU_cuMemBatchDecompressAsync, &z, sizeof(z), NULL, 0, &zr, sizeof(zr)), 0);
	ck_assert_int_eq(zr.result, VC_CUDA_ERROR_NOT_SUPPORTED); /* the stand-in driver's own answer */
	ck_assert_uint_eq(zr.error_index, UINT64_MAX);
	vc_cuda_driver_standin_decompress(-1);
	z.r.stream = 0x7c00000000000999ull;
	ck_assert_int_eq(cu(VC_CU_cuMemBatchDecompressAsync, &z, sizeof(z), NULL, 0, &zr, sizeof(zr)),
			 VC_CUDA_ERROR_INVALID_HANDLE);
	/* pools: the default pool twice is one id; a forged pool; unnamed locations */
	ck_assert_int_eq(cu(VC_CU_cuMemGetDefaultMemPool, &l, sizeof(l), NULL, 0, &lr, sizeof(lr)), 0);
	ck_assert_int_eq(cu(VC_CU_cuMemGetDefaultMemPool, &l, sizeof(l), NULL, 0, &lr2, sizeof(lr2)), 0);
	ck_assert_uint_ne(lr.pool, 0);
	ck_assert_uint_eq(lr.pool, lr2.pool);
	l.what = VC_CU_LOCPOOL_SET;
	l.pool = lr.pool ^ 0x100;
	ck_assert_int_eq(cu(VC_CU_cuMemSetMemPool, &l, sizeof(l), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_HANDLE);
	l.pool = lr.pool;
	ck_assert_int_eq(cu(VC_CU_cuMemSetMemPool, &l, sizeof(l), NULL, 0, NULL, 0), 0);
	l.loc_type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
	ck_assert_int_eq(cu(VC_CU_cuMemSetMemPool, &l, sizeof(l), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	l.loc_type = 42; /* no type CUDA names: the H100's NOT_SUPPORTED */
	ck_assert_int_eq(cu(VC_CU_cuMemSetMemPool, &l, sizeof(l), NULL, 0, NULL, 0), VC_CUDA_ERROR_NOT_SUPPORTED);
	l.loc_type = CU_MEM_LOCATION_TYPE_DEVICE;
	l.type = 0x7fffffff;
	ck_assert_int_eq(cu(VC_CU_cuMemSetMemPool, &l, sizeof(l), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	/* pointer attributes */
	ck_assert_int_eq(cu(VC_CU_cuPointerSetAttribute, &ps, sizeof(ps), NULL, 0, NULL, 0), 0);
	ps.attr = CU_POINTER_ATTRIBUTE_CONTEXT;
	ck_assert_int_eq(cu(VC_CU_cuPointerSetAttribute, &ps, sizeof(ps), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	ps.attr = CU_POINTER_ATTRIBUTE_SYNC_MEMOPS;
	ps.ptr = UINT64_MAX;
	ck_assert_int_eq(cu(VC_CU_cuPointerSetAttribute, &ps, sizeof(ps), NULL, 0, NULL, 0), VC_CUDA_ERROR_INVALID_VALUE);
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, 0);
}
END_TEST

/* Counts and selectors no guest library sends: dependencies past the payload,
 * extra entries for a kind that has none, an unknown action, a host node
 * cookie the library never makes. */
START_TEST(graph_node_lies_are_fatal)
{
	struct vc_cu_req_graph_node r = {.ctx = g_ctx, .action = VC_CU_GN_ADD, .graph = make_graph()};

	r.b.type = CU_GRAPH_NODE_TYPE_EMPTY;
	switch (_i) {
	case 0:
		r.ndeps = 4;
		break;
	case 1:
		r.b.nextra = 1;
		break;
	case 2:
		r.action = 7;
		break;
	case 3:
		r.b.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
		r.b.nextra = VC_CU_GN_EXTRA_MAX + 1;
		break;
	case 4:
		r.b.type = CU_GRAPH_NODE_TYPE_HOST;
		r.b.cookie = 5;
		break;
	default:
		r.b.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
		r.b.nextra = 2; /* 24 bytes of descriptors that are not there */
		break;
	}
	raw_cmd(VC_CU_vcGraphNode, VC_CMD_F_REPLY, 0, &r, sizeof(r));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(graph_list_lies_are_fatal)
{
	struct vc_cu_req_graph_edges e = {.ctx = g_ctx, .handle = make_graph(), .what = 9, .count = 1};
	struct vc_cu_req_graph_deps d = {.ctx = g_ctx, .graph = e.handle, .n = 2};
	struct vc_cu_req_graph_call c = {.ctx = g_ctx, .v1 = 3};

	switch (_i) {
	case 0:
		raw_cmd(VC_CU_vcGraphEdges, VC_CMD_F_REPLY, 0, &e, sizeof(e));
		break;
	case 1:
		e.what = VC_CU_GE_EDGES;
		e.count = VC_CU_GE_PAGE + 1;
		raw_cmd(VC_CU_vcGraphEdges, VC_CMD_F_REPLY, 0, &e, sizeof(e));
		break;
	case 2:
		raw_cmd(VC_CU_vcGraphDeps, VC_CMD_F_REPLY, 0, &d, sizeof(d)); /* 32 bytes of ids missing */
		break;
	case 3:
		raw_cmd(VC_CU_cuStreamBeginCaptureToGraph, VC_CMD_F_REPLY, 0, &c, sizeof(c)); /* 3 deps missing */
		break;
	default:
		c.a = 77; /* a destructor cookie the library never makes */
		c.v0 = 1;
		raw_cmd(VC_CU_cuUserObjectCreate, VC_CMD_F_REPLY, 0, &c, sizeof(c));
		break;
	}
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- texture and surface references (cuda/texref.c and the generated part) ---- */

static const char texref_ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				 ".global .texref tex_a;\n.global .surfref surf_a;\n";

/* A module loaded from @ptx as the guest library loads one: its id. */
static uint64_t load_ptx(const char *ptx, size_t n)
{
	struct vc_cu_req_vcImageBegin b = {.ctx = g_ctx, .size = n};
	struct vc_cu_rep_vcImageBegin bp = {0};
	struct vc_cu_rep_load lp = {0};

	ck_assert_int_eq(cu(VC_CU_vcImageBegin, &b, sizeof(b), NULL, 0, &bp, sizeof(bp)), 0);
	struct vc_cu_req_vcImagePut p = {.ctx = g_ctx, .image = bp.image, .len = n, .inline_data = 1};
	async_cmd(VC_CU_vcImagePut, &p, sizeof(p), ptx, n);
	struct vc_cu_req_load l = {.ctx = g_ctx, .image = bp.image, .kind = VC_CU_LOAD_MODULE};
	ck_assert_int_eq(cu(VC_CU_vcLoad, &l, sizeof(l), NULL, 0, &lp, sizeof(lp)), 0);
	return lp.handle;
}

static uint64_t module_texref(uint64_t mod, const char *name, int *rc)
{
	struct vc_cu_req_cuModuleGetTexRef r = {.cur_ctx = g_ctx, .hmod = mod, .name_len = (uint32_t)strlen(name) + 1};
	struct vc_cu_rep_cuModuleGetTexRef rp = {0};

	*rc = cu(VC_CU_cuModuleGetTexRef, &r, sizeof(r), name, strlen(name) + 1, &rp, sizeof(rp));
	return rp.pTexRef;
}

static int set_addr(uint64_t tr, uint64_t dptr, uint64_t bytes)
{
	struct vc_cu_req_texref_addr r = {.ctx = g_ctx, .texref = tr, .dptr = dptr, .bytes = bytes};
	struct vc_cu_rep_texref_addr rp;

	return cu(VC_CU_cuTexRefSetAddress_v2, &r, sizeof(r), NULL, 0, &rp, sizeof(rp));
}

/* Forged references, a reference of an unloaded module, addresses outside
 * the session, extents that wrap, arrays no longer the session's. */
START_TEST(texrefs_are_checked)
{
	uint64_t mod = load_ptx(texref_ptx, sizeof(texref_ptx)), d = alloc(1 << 16), tr, arr;
	struct vc_cu_req_texref_addr a2 = {.ctx = g_ctx, .dptr = d, .width = 64, .height = 64, .pitch = 1024,
					   .format = CU_AD_FORMAT_FLOAT, .channels = 1};
	struct vc_cu_req_handle h = {.ctx = g_ctx};
	struct vc_cu_rep_texref_array ra;
	struct vc_cu_rep_texref_addr rp;
	int rc;

	tr = module_texref(mod, "tex_a", &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_ne(tr, 0);
	module_texref(mod, "nope", &rc);
	ck_assert_int_eq(rc, CUDA_ERROR_NOT_FOUND);
	/* addresses: inside, past the end, outside the session, wrapping */
	ck_assert_int_eq(set_addr(tr, d, 1 << 16), 0);
	ck_assert_int_eq(set_addr(tr, d + 16, 1 << 16), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_addr(tr, 0x10000, 64), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_addr(tr, d, UINT64_MAX), CUDA_ERROR_INVALID_VALUE);
	a2.texref = tr;
	ck_assert_int_eq(cu(VC_CU_cuTexRefSetAddress2D_v3, &a2, sizeof(a2), NULL, 0, &rp, sizeof(rp)), 0);
	a2.height = 65; /* one row past 64 KiB */
	ck_assert_int_eq(cu(VC_CU_cuTexRefSetAddress2D_v3, &a2, sizeof(a2), NULL, 0, &rp, sizeof(rp)),
			 CUDA_ERROR_INVALID_VALUE);
	a2.height = UINT64_MAX;
	a2.pitch = UINT64_MAX / 2;
	ck_assert_int_eq(cu(VC_CU_cuTexRefSetAddress2D_v3, &a2, sizeof(a2), NULL, 0, &rp, sizeof(rp)),
			 CUDA_ERROR_INVALID_VALUE);
	a2.height = 64;
	a2.pitch = 1024;
	a2.channels = 0x40000001u; /* an element size that would wrap */
	ck_assert_int_eq(cu(VC_CU_cuTexRefSetAddress2D_v3, &a2, sizeof(a2), NULL, 0, &rp, sizeof(rp)),
			 CUDA_ERROR_INVALID_VALUE);
	a2.channels = 1;
	a2.format = 0x77;
	ck_assert_int_eq(cu(VC_CU_cuTexRefSetAddress2D_v3, &a2, sizeof(a2), NULL, 0, &rp, sizeof(rp)),
			 CUDA_ERROR_INVALID_VALUE);
	/* a forged reference, and a surface reference's id taken for a texture's */
	ck_assert_int_eq(set_addr(tr ^ (1ull << 30), d, 64), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(set_addr(0x1234, d, 64), CUDA_ERROR_INVALID_HANDLE);
	h.handle = tr;
	ck_assert_int_eq(cu(VC_CU_cuSurfRefGetArray, &h, sizeof(h), NULL, 0, &ra, sizeof(ra)), CUDA_ERROR_INVALID_HANDLE);
	/* an array bound, then destroyed: not answered back, not bindable */
	arr = make_array(16, 16, 0);
	struct vc_cu_req_cuTexRefSetArray sa = {.cur_ctx = g_ctx, .hTexRef = tr, .hArray = arr,
						.Flags = CU_TRSA_OVERRIDE_FORMAT};
	struct vc_cu_rep_cuTexRefSetArray sap;
	ck_assert_int_eq(cu(VC_CU_cuTexRefSetArray, &sa, sizeof(sa), NULL, 0, &sap, sizeof(sap)), 0);
	ck_assert_int_eq(cu(VC_CU_cuTexRefGetArray, &h, sizeof(h), NULL, 0, &ra, sizeof(ra)), 0);
	ck_assert_uint_eq(ra.handle, arr);
	struct vc_cu_req_handle ad = {.ctx = g_ctx, .handle = arr};
	ck_assert_int_eq(cu(VC_CU_cuArrayDestroy, &ad, sizeof(ad), NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(cu(VC_CU_cuTexRefGetArray, &h, sizeof(h), NULL, 0, &ra, sizeof(ra)), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cu(VC_CU_cuTexRefSetArray, &sa, sizeof(sa), NULL, 0, &sap, sizeof(sap)),
			 CUDA_ERROR_INVALID_HANDLE);
	/* a module's reference is never destroyed alone; it goes with the module */
	ck_assert_int_eq(cu(VC_CU_cuTexRefDestroy, &h, sizeof(h), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	struct vc_cu_req_cuModuleUnload u = {.cur_ctx = g_ctx, .hmod = mod};
	struct vc_cu_rep_cuModuleUnload up;
	ck_assert_int_eq(cu(VC_CU_cuModuleUnload, &u, sizeof(u), NULL, 0, &up, sizeof(up)), 0);
	ck_assert_int_eq(set_addr(tr, d, 64), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cu(VC_CU_cuTexRefGetBorderColor, &h, sizeof(h), NULL, 0, &ra, sizeof(ra)),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cu(VC_CU_cuTexRefDestroy, &h, sizeof(h), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_HANDLE);
	/* one the session made and left: its close destroys it */
	struct vc_cu_req_cuTexRefCreate c = {.cur_ctx = g_ctx};
	struct vc_cu_rep_cuTexRefCreate cp = {0};
	ck_assert_int_eq(cu(VC_CU_cuTexRefCreate, &c, sizeof(c), NULL, 0, &cp, sizeof(cp)), 0);
	ck_assert_uint_ne(cp.pTexRef, 0);
}
END_TEST

static const uint32_t short_texref_ops[] = {
	VC_CU_cuTexRefDestroy, VC_CU_cuTexRefSetAddress_v2, VC_CU_cuTexRefSetAddress2D_v3,
	VC_CU_cuTexRefSetBorderColor, VC_CU_cuTexRefGetBorderColor, VC_CU_cuTexRefGetArray,
	VC_CU_cuTexRefGetMipmappedArray, VC_CU_cuSurfRefGetArray, VC_CU_cuTexRefSetFormat, VC_CU_cuModuleGetTexRef};

START_TEST(short_texref_requests_are_fatal)
{
	struct vc_cu_prefix p = {.ctx = g_ctx};

	raw_cmd(short_texref_ops[_i], VC_CMD_F_REPLY, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- green contexts, device resources, logs (cuda/green.c, cuda/logs.c) ----------- */

/* A green context of the session's over the first group of an 8-SM split. */
static uint64_t make_green(void)
{
	struct vc_cu_req_res_get g = {.ctx = g_ctx, .type = CU_DEV_RESOURCE_TYPE_SM};
	struct vc_cu_rep_res_get dev = {0};
	struct vc_cu_req_res_split sp = {.ctx = g_ctx, .nb_groups = 1, .want_result = 1, .min_count = 8};
	uint8_t out[VC_CU_REP_MAX + 64];
	int64_t n = 0;
	struct {
		struct vc_cu_req_res_desc r;
		struct vc_cu_res res;
	} d = {{.ctx = g_ctx, .count = 1}, {0}};
	struct vc_cu_rep_res_desc dr = {0};
	struct vc_cu_req_green c = {.ctx = g_ctx, .flags = CU_GREEN_CTX_DEFAULT_STREAM};
	struct vc_cu_rep_green gr = {0};

	ck_assert_int_eq(cu(VC_CU_cuDeviceGetDevResource, &g, sizeof(g), NULL, 0, &dev, sizeof(dev)), 0);
	ck_assert_uint_ne(dev.res.id, 0);
	sp.input = dev.res;
	ck_assert_int_eq(call(VC_CU_cuDevSmResourceSplitByCount, &sp, sizeof(sp), NULL, 0, out, sizeof(out), &n), 0);
	ck_assert_int_eq(n, VC_CU_REP_MAX + 64);
	memcpy(&d.res, out + VC_CU_REP_MAX, sizeof(d.res));
	ck_assert_int_eq(cu(VC_CU_cuDevResourceGenerateDesc, &d, sizeof(d), NULL, 0, &dr, sizeof(dr)), 0);
	c.handle = dr.desc;
	ck_assert_int_eq(cu(VC_CU_cuGreenCtxCreate, &c, sizeof(c), NULL, 0, &gr, sizeof(gr)), 0);
	ck_assert_uint_ne(gr.context, 0);
	return gr.green;
}

/* Forged handles and resources, a stream of a destroyed green context:
 * CUDA errors, and the session lives on. */
START_TEST(green_errors_are_results)
{
	const uint64_t forged = 0x4000000012345678ull;
	struct vc_cu_req_res_get g = {.ctx = g_ctx, .handle = forged, .type = CU_DEV_RESOURCE_TYPE_SM};
	struct vc_cu_req_green c = {.ctx = g_ctx, .handle = forged, .flags = CU_GREEN_CTX_DEFAULT_STREAM};
	struct vc_cu_req_res_split sp = {.ctx = g_ctx, .min_count = 8};
	struct vc_cu_req_res_read rd = {.ctx = g_ctx, .first = 1000};
	struct vc_cu_req_logs lg = {.ctx = g_ctx, .op = VC_CU_LOGS_READ, .offset = 1ull << 40};
	struct vc_cu_req_cuGreenCtxStreamCreate sc = {.cur_ctx = g_ctx, .greenCtx = forged,
						     .flags = CU_STREAM_NON_BLOCKING};
	struct vc_cu_rep_cuGreenCtxStreamCreate scr = {0};
	struct vc_cu_req_cuStreamQuery q = {.cur_ctx = g_ctx};
	struct vc_cu_req_sync sy = {.ctx = g_ctx, .kind = VC_CU_SYNC_STREAM};
	struct vc_session_stats st;
	uint64_t green;

	ck_assert_int_eq(cu(VC_CU_cuGreenCtxGetDevResource, &g, sizeof(g), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(cu(VC_CU_cuGreenCtxCreate, &c, sizeof(c), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cu(VC_CU_cuGreenCtxDestroy, &c, sizeof(c), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(cu(VC_CU_cuGreenCtxStreamCreate, &sc, sizeof(sc), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_CONTEXT);
	/* a resource of no type, and one the host never handed out */
	sp.input.type = CU_DEV_RESOURCE_TYPE_INVALID;
	ck_assert_int_eq(cu(VC_CU_cuDevSmResourceSplitByCount, &sp, sizeof(sp), NULL, 0, NULL, 0),
			 CUDA_ERROR_INVALID_RESOURCE_TYPE);
	sp.input.type = 77;
	ck_assert_int_eq(cu(VC_CU_cuDevSmResourceSplitByCount, &sp, sizeof(sp), NULL, 0, NULL, 0),
			 CUDA_ERROR_INVALID_RESOURCE_TYPE);
	sp.input.type = CU_DEV_RESOURCE_TYPE_SM;
	sp.input.id = forged;
	sp.input.u[0] = 132;
	ck_assert_int_eq(cu(VC_CU_cuDevSmResourceSplitByCount, &sp, sizeof(sp), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	/* reads past what the host keeps */
	ck_assert_int_eq(cu(VC_CU_vcGreenSplitRead, &rd, sizeof(rd), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cu(VC_CU_vcLogs, &lg, sizeof(lg), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	/* a stream of a destroyed green context is no stream; nor is the green context */
	green = make_green();
	sc.greenCtx = green;
	ck_assert_int_eq(cu(VC_CU_cuGreenCtxStreamCreate, &sc, sizeof(sc), NULL, 0, &scr, sizeof(scr)), 0);
	q.hStream = scr.phStream;
	ck_assert_int_eq(cu(VC_CU_cuStreamQuery, &q, sizeof(q), NULL, 0, NULL, 0), 0);
	sy.handle = scr.phStream;
	ck_assert_int_eq(call(VC_CU_vcSync, &sy, sizeof(sy), NULL, 0, NULL, 0, NULL), 0);
	c.handle = green;
	ck_assert_int_eq(cu(VC_CU_cuGreenCtxDestroy, &c, sizeof(c), NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(cu(VC_CU_cuStreamQuery, &q, sizeof(q), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(call(VC_CU_vcSync, &sy, sizeof(sy), NULL, 0, NULL, 0, NULL), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cu(VC_CU_cuGreenCtxStreamCreate, &sc, sizeof(sc), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(cu(VC_CU_cuGreenCtxDestroy, &c, sizeof(c), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_CONTEXT);
	/* one left alive: the session's close destroys it */
	make_green();
	ck_assert_int_eq(sync_ctx(), 0);
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, 0);
}
END_TEST

static const uint32_t green_short_ops[] = {
	VC_CU_cuDeviceGetDevResource, VC_CU_cuCtxGetDevResource, VC_CU_cuGreenCtxGetDevResource,
	VC_CU_cuDevSmResourceSplitByCount, VC_CU_vcGreenSplitRead, VC_CU_cuDevResourceGenerateDesc,
	VC_CU_cuGreenCtxCreate, VC_CU_cuGreenCtxDestroy, VC_CU_vcLogs};

START_TEST(green_short_requests_are_fatal)
{
	struct vc_cu_prefix p = {.ctx = g_ctx};

	raw_cmd(green_short_ops[_i], VC_CMD_F_REPLY, 0, &p, sizeof(p));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* More resources than a descriptor carries, or than the command holds; an unknown log operation. */
START_TEST(green_count_lies_are_fatal)
{
	struct {
		struct vc_cu_req_res_desc r;
		struct vc_cu_res res[1];
	} c = {{.ctx = g_ctx, .count = _i ? 2 : VC_CU_RES_DESC_MAX + 1}, {{0}}};
	struct vc_cu_req_logs l = {.ctx = g_ctx, .op = 99};

	if (_i == 2)
		raw_cmd(VC_CU_vcLogs, VC_CMD_F_REPLY, 0, &l, sizeof(l));
	else
		raw_cmd(VC_CU_cuDevResourceGenerateDesc, VC_CMD_F_REPLY, 0, &c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- pinned segments (vcPinnedSegment): descriptors passed on the socket ---------- */

static void setup_segments(void)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	g_seg_host = sv[0];
	g_seg_guest = sv[1];
	setup();
}

/* Segments of up to 128 MiB in all, for the prefault's 64 MiB. */
static void setup_big_segments(void)
{
	g_seg_max = 128ull << 20;
	setup_segments();
}

static void teardown_segments(void)
{
	teardown();
	close(g_seg_host);
	close(g_seg_guest);
}

/* A sealable memfd of @size bytes. */
static int seg_memfd(uint64_t size)
{
	int fd = memfd_create("test-seg", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	return fd;
}

/* Pass @fd under @token as the guest library does (then closes its copy). */
static void seg_pass(int fd, uint64_t token)
{
	struct vc_segfd_msg m = {.magic = VC_SEGFD_MAGIC, .token = token};

	ck_assert_int_eq(vc_sock_send(g_seg_guest, &m, sizeof(m), &fd, 1), 0);
	close(fd);
}

/* An address range of @size bytes free in this process (the "guest's"). */
static uint64_t free_range(uint64_t size)
{
	void *r = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(r, MAP_FAILED);
	munmap(r, size);
	return (uint64_t)(uintptr_t)r;
}

static int seg_map(uint64_t token, uint64_t addr, uint64_t size, uint64_t *off)
{
	struct vc_cu_req_pinseg r = {.ctx = g_ctx, .op = VC_CU_PINSEG_MAP, .token = token, .guest_addr = addr,
				     .size = size};
	struct vc_cu_rep_pinseg rp = {0};
	int rc = cu(VC_CU_vcPinnedSegment, &r, sizeof(r), NULL, 0, &rp, sizeof(rp));

	if (off)
		*off = rp.off;
	return rc;
}

static int seg_unmap(uint64_t off)
{
	struct vc_cu_req_pinseg r = {.ctx = g_ctx, .op = VC_CU_PINSEG_UNMAP, .off = off};

	return cu(VC_CU_vcPinnedSegment, &r, sizeof(r), NULL, 0, NULL, 0);
}

/* A segment mapped at the guest's address, registered, copied through as
 * pinned memory (offset), unmapped; the file can no longer shrink. */
START_TEST(segment_map_register_copy_unmap)
{
	const uint64_t size = 1 << 20;
	uint64_t addr = free_range(size), off = 0, d = alloc(4096);
	uint8_t back[64];
	int fd = seg_memfd(size), keep = dup(fd);

	seg_pass(fd, 7);
	ck_assert_int_eq(seg_map(7, addr, size, &off), 0);
	ck_assert_uint_ge(off, VC_CU_PINSEG_OFF0);
	/* Mapped at the very address, the same pages as the guest's file. */
	memset((void *)(uintptr_t)(addr + 8192), 0x3c, 64);
	ck_assert_int_eq(pread(keep, back, 64, 8192), 64);
	ck_assert_uint_eq(back[63], 0x3c);
	ck_assert_int_ne(ftruncate(keep, 4096), 0); /* sealed against shrinking */
	struct vc_cu_req_host_register hr = {.ctx = g_ctx, .off = off, .size = size};
	struct vc_cu_rep_host_register hp = {0};
	ck_assert_int_eq(cu(VC_CU_vcHostRegister, &hr, sizeof(hr), NULL, 0, &hp, sizeof(hp)), 0);
	ck_assert_uint_eq(hp.devptr, addr);
	struct vc_cu_req_memcpy c = {.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 64,
				     .host = VC_CU_HOST_PINNED, .arena_off = off + 8192};
	ck_assert_int_eq(cu(VC_CU_vcMemcpy, &c, sizeof(c), NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(dtoh(d, 64, back), 0);
	ck_assert_uint_eq(back[0], 0x3c);
	/* A copy reaching past the segment's end is refused. */
	c.arena_off = off + size - 32;
	ck_assert_int_eq(cu(VC_CU_vcMemcpy, &c, sizeof(c), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	/* Unmapped with its registration; then it is no segment. */
	ck_assert_int_eq(seg_unmap(off), 0);
	ck_assert_int_eq(seg_unmap(off), CUDA_ERROR_INVALID_VALUE);
	c.arena_off = off;
	ck_assert_int_eq(cu(VC_CU_vcMemcpy, &c, sizeof(c), NULL, 0, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cu(VC_CU_vcHostRegister, &hr, sizeof(hr), NULL, 0, &hp, sizeof(hp)),
			 CUDA_ERROR_INVALID_VALUE);
	close(keep);
}
END_TEST

/* A synchronous command sent fenced in slot 1, its fence word armed as the
 * guest library arms it; returns the status and the command's seq. */
static int fenced_call(uint32_t op, const void *req, size_t reqlen, uint64_t *seq_out)
{
	int64_t seq = vc_ring_guest_write(&g_g, op, VC_CMD_F_REPLY | VC_CMD_F_FENCE, 1, req, reqlen, NULL, 0);
	int32_t st;

	ck_assert_int_gt(seq, 0);
	vc_ring_guest_fence_arm(&g_g, 1, (uint64_t)seq);
	ck_assert_int_eq(vc_ring_guest_publish(&g_g), 0);
	ck_assert_int_eq(vc_ring_guest_wait_reply(&g_g, 1, (uint64_t)seq), 0);
	ck_assert_int_ge(vc_ring_guest_read_reply(&g_g, 1, (uint64_t)seq, &st, NULL, 0), 0);
	*seq_out = (uint64_t)seq;
	return st;
}

/* Mappings of the region's memfd one page long: the executor's page-locked
 * mapping of the fence words (fence.c). */
static int fence_pages_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long long lo, hi;
	char line[512];
	int n = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "memfd:test-region") && sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    hi - lo == 4096)
			n++;
	fclose(f);
	return n;
}

/* Blocking copies between a registered segment and the device, sent fenced:
 * answered, the word the command's seq and the bytes where they belong. With
 * the region in a memfd ("fences"), the worker queued the device's write of
 * the word after the copy (the stand-in writes it as it runs the stream's
 * operations) through its page-locked mapping of the words' page, kept for
 * the next; without one ("segments"), it waited for the copy and the host
 * stored the word before the reply. A failed copy leaves the word as armed;
 * a command that is no fenced copy has its word stored by the host. */
START_TEST(fenced_copies_end_with_their_fence_word)
{
	const uint64_t size = 1 << 20;
	const int pages = g_region_in_memfd ? 1 : 0;
	uint64_t addr = free_range(size), off = 0, d = alloc(4096), seq = 0;
	uint8_t *host = (uint8_t *)(uintptr_t)addr, back[64];
	struct vc_cu_req_host_register hr = {.ctx = g_ctx, .size = size};
	struct vc_cu_rep_host_register hp = {0};
	struct vc_cu_req_sync sy = {.ctx = g_ctx, .handle = g_ctx, .kind = VC_CU_SYNC_CTX};

	seg_pass(seg_memfd(size), 3);
	ck_assert_int_eq(seg_map(3, addr, size, &off), 0);
	hr.off = off;
	ck_assert_int_eq(cu(VC_CU_vcHostRegister, &hr, sizeof(hr), NULL, 0, &hp, sizeof(hp)), 0);
	ck_assert_int_eq(fence_pages_mapped(), 0);

	memset(host + 4096, 0x5a, 64);
	struct vc_cu_req_memcpy c = {.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 64,
				     .host = VC_CU_HOST_PINNED, .arena_off = off + 4096};
	ck_assert_int_eq(fenced_call(VC_CU_vcMemcpy, &c, sizeof(c), &seq), 0);
	ck_assert_uint_eq(vc_shm_load32(&g_g.ctrl->fence[1], VC_ACQUIRE), (uint32_t)seq);
	ck_assert_int_eq(fence_pages_mapped(), pages);
	ck_assert_int_eq(dtoh(d, 64, back), 0);
	ck_assert_uint_eq(back[0], 0x5a);
	ck_assert_uint_eq(back[63], 0x5a);

	memset(host + 8192, 0, 64);
	c = (struct vc_cu_req_memcpy){.ctx = g_ctx, .dir = VC_CU_COPY_DTOH, .src = d, .len = 64,
				      .host = VC_CU_HOST_PINNED, .arena_off = off + 8192};
	ck_assert_int_eq(fenced_call(VC_CU_vcMemcpy, &c, sizeof(c), &seq), 0);
	ck_assert_uint_eq(vc_shm_load32(&g_g.ctrl->fence[1], VC_ACQUIRE), (uint32_t)seq);
	ck_assert_uint_eq(host[8192], 0x5a);
	ck_assert_uint_eq(host[8192 + 63], 0x5a);
	ck_assert_int_eq(fence_pages_mapped(), pages);

	/* Past the segment's end: refused, no fence. */
	c.arena_off = off + size - 32;
	ck_assert_int_eq(fenced_call(VC_CU_vcMemcpy, &c, sizeof(c), &seq), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(vc_shm_load32(&g_g.ctrl->fence[1], VC_ACQUIRE), ~(uint32_t)seq);

	/* Not a fenced copy: done at the reply, the word stored by the host. */
	ck_assert_int_eq(fenced_call(VC_CU_vcSync, &sy, sizeof(sy), &seq), 0);
	ck_assert_uint_eq(vc_shm_load32(&g_g.ctrl->fence[1], VC_ACQUIRE), (uint32_t)seq);
	ck_assert_int_eq(seg_unmap(off), 0);
}
END_TEST

static void setup_fences(void)
{
	g_region_in_memfd = true;
	setup_segments();
}

/* Kilobytes of [@addr, @addr + @size) present in this process's page
 * tables (the Rss of the mappings there). */
static uint64_t rss_kib(uint64_t addr, uint64_t size)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	unsigned long long lo = 0, hi = 0, kib;
	uint64_t total = 0;
	char line[512];
	int in = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = lo >= addr && hi <= addr + size;
		else if (in && sscanf(line, "Rss: %llu kB", &kib) == 1)
			total += kib;
	}
	fclose(f);
	return total;
}

/* A segment made ahead (VC_CU_PINSEG_PREFAULT): its pages enter our page
 * tables without a registration, off the serving thread (the MAP is
 * answered first); a registration and a copy then see the guest's bytes.
 * A second such MAP unmapped at once waits for its prefault. Unknown flags
 * are refused. */
START_TEST(segment_prefaulted_ahead)
{
	const uint64_t size = 64ull << 20;
	uint64_t addr = free_range(size), addr2, off = 0, off2 = 0, d = alloc(4096);
	int fd = seg_memfd(size), keep = dup(fd), fd2;
	uint8_t mark[64], back[64];

	memset(mark, 0x5a, sizeof(mark));
	ck_assert_int_eq(pwrite(keep, mark, sizeof(mark), size - 4096), (ssize_t)sizeof(mark));
	seg_pass(fd, 70);
	struct vc_cu_req_pinseg r = {.ctx = g_ctx, .op = VC_CU_PINSEG_MAP, .token = 70, .guest_addr = addr,
				     .size = size, .flags = VC_CU_PINSEG_PREFAULT};
	struct vc_cu_rep_pinseg rp = {0};
	ck_assert_int_eq(cu(VC_CU_vcPinnedSegment, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), 0);
	off = rp.off;
	for (int i = 0; i < 300 && rss_kib(addr, size) < size >> 10; i++)
		usleep(10000);
	ck_assert_uint_eq(rss_kib(addr, size), size >> 10);
	struct vc_cu_req_host_register hr = {.ctx = g_ctx, .off = off, .size = size};
	struct vc_cu_rep_host_register hp = {0};
	ck_assert_int_eq(cu(VC_CU_vcHostRegister, &hr, sizeof(hr), NULL, 0, &hp, sizeof(hp)), 0);
	struct vc_cu_req_memcpy c = {.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 64,
				     .host = VC_CU_HOST_PINNED, .arena_off = off + size - 4096};
	ck_assert_int_eq(cu(VC_CU_vcMemcpy, &c, sizeof(c), NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(dtoh(d, 64, back), 0);
	ck_assert_int_eq(memcmp(back, mark, 64), 0);
	ck_assert_int_eq(seg_unmap(off), 0);
	/* Unmapped while its prefault may still run. */
	addr2 = free_range(size);
	fd2 = seg_memfd(size);
	seg_pass(fd2, 71);
	r.token = 71;
	r.guest_addr = addr2;
	ck_assert_int_eq(cu(VC_CU_vcPinnedSegment, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), 0);
	off2 = rp.off;
	ck_assert_int_eq(seg_unmap(off2), 0);
	ck_assert_uint_eq(rss_kib(addr2, size), 0);
	/* A flag no server knows: nothing is mapped. */
	r.flags = 2;
	r.token = 72;
	ck_assert_int_eq(cu(VC_CU_vcPinnedSegment, &r, sizeof(r), NULL, 0, &rp, sizeof(rp)), CUDA_ERROR_INVALID_VALUE);
	close(keep);
}
END_TEST

static int seg_map_files(uint64_t token, uint64_t addr, uint64_t size, uint32_t files, uint64_t part, uint64_t *off)
{
	struct vc_cu_req_pinseg r = {.ctx = g_ctx, .op = VC_CU_PINSEG_MAP, .token = token, .guest_addr = addr,
				     .size = size, .files = files, .part = part};
	struct vc_cu_rep_pinseg rp = {0};
	int rc = cu(VC_CU_vcPinnedSegment, &r, sizeof(r), NULL, 0, &rp, sizeof(rp));

	if (off)
		*off = rp.off;
	return rc;
}

/* A segment of three memfds end to end (the last shorter): each file's
 * pages lie at its place, a registration and a copy span the files. */
START_TEST(segment_of_several_files)
{
	const uint64_t part = 256 << 10, size = 2 * part + (128 << 10);
	uint64_t addr = free_range(size), off = 0, d = alloc(8192);
	int keep[3];
	uint8_t back[8];

	for (int i = 0; i < 3; i++) {
		int fd = seg_memfd(i < 2 ? part : size - 2 * part);

		keep[i] = dup(fd);
		seg_pass(fd, 40 + (uint64_t)i);
	}
	ck_assert_int_eq(seg_map_files(40, addr, size, 3, part, &off), 0);
	for (int i = 0; i < 3; i++) {
		uint8_t b = 0;

		memset((void *)(uintptr_t)(addr + (uint64_t)i * part + 4096), 0x50 + i, 1);
		ck_assert_int_eq(pread(keep[i], &b, 1, 4096), 1);
		ck_assert_uint_eq(b, 0x50 + i);
		ck_assert_int_ne(ftruncate(keep[i], 0), 0); /* each sealed */
	}
	struct vc_cu_req_host_register hr = {.ctx = g_ctx, .off = off, .size = size};
	struct vc_cu_rep_host_register hp = {0};
	ck_assert_int_eq(cu(VC_CU_vcHostRegister, &hr, sizeof(hr), NULL, 0, &hp, sizeof(hp)), 0);
	/* 8 KiB across the first files' border. */
	memset((void *)(uintptr_t)(addr + part - 4096), 0x61, 4096);
	memset((void *)(uintptr_t)(addr + part), 0x62, 4096);
	struct vc_cu_req_memcpy c = {.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 8192,
				     .host = VC_CU_HOST_PINNED, .arena_off = off + part - 4096};
	ck_assert_int_eq(cu(VC_CU_vcMemcpy, &c, sizeof(c), NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(dtoh(d + 4092, 8, back), 0);
	ck_assert_uint_eq(back[3], 0x61);
	ck_assert_uint_eq(back[4], 0x62);
	ck_assert_int_eq(seg_unmap(off), 0);
	for (int i = 0; i < 3; i++)
		close(keep[i]);
}
END_TEST

/* Descriptors open in this process (guest and host both). */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Lies about a segment's files: each a CUDA error, no descriptor kept, the
 * session lives on. */
START_TEST(segment_file_lies_are_refused)
{
	const uint64_t part = 64 << 10, size = 2 * part;
	uint64_t addr = free_range(size), off = 0;
	struct vc_session_stats st;
	int fds = open_fds();

	switch (_i) {
	case 0: /* more files than a segment may have; a part of no pages; unaligned */
		ck_assert_int_eq(seg_map_files(1, addr, size, VC_CU_PINSEG_FILES_MAX + 1, 4096, NULL),
				 CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_map_files(1, addr, size, 2, 0, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_map_files(1, addr, size, 2, 100, NULL), CUDA_ERROR_INVALID_VALUE);
		break;
	case 1: /* parts that leave the last file nothing, or overflow */
		ck_assert_int_eq(seg_map_files(1, addr, size, 2, size, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_map_files(1, addr, size, 3, UINT64_MAX & ~4095ull, NULL),
				 CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_map_files(UINT64_MAX, addr, size, 2, part, NULL), CUDA_ERROR_INVALID_VALUE);
		break;
	case 2: /* the second file never passed: the first is closed, not kept */
		seg_pass(seg_memfd(part), 1);
		ck_assert_int_eq(seg_map_files(1, addr, size, 2, part, NULL), CUDA_ERROR_INVALID_VALUE);
		seg_pass(seg_memfd(part), 1);
		seg_pass(seg_memfd(part), 2);
		ck_assert_int_eq(seg_map_files(1, addr, size, 2, part, &off), 0);
		ck_assert_int_eq(seg_unmap(off), 0);
		break;
	default: /* the second file smaller than its share */
		seg_pass(seg_memfd(part), 1);
		seg_pass(seg_memfd(part / 2), 2);
		ck_assert_int_eq(seg_map_files(1, addr, size, 2, part, NULL), CUDA_ERROR_INVALID_VALUE);
		break;
	}
	ck_assert_int_eq(open_fds(), fds);
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, 0);
	ck_assert_int_eq(sync_ctx(), 0);
}
END_TEST

/* What a hostile guest can send: each a CUDA error, the session lives on. */
START_TEST(segment_lies_are_refused)
{
	const uint64_t size = 1 << 20;
	uint64_t addr = free_range(3 * size), off = 0, off2;
	struct vc_session_stats st;
	int fd, pp[2];

	switch (_i) {
	case 0: /* wrong size: the file is smaller than claimed */
		seg_pass(seg_memfd(size / 2), 1);
		ck_assert_int_eq(seg_map(1, addr, size, NULL), CUDA_ERROR_INVALID_VALUE);
		break;
	case 1: /* not a memfd: a pipe, then a plain file (no seals) */
		ck_assert_int_eq(pipe(pp), 0);
		close(pp[1]);
		seg_pass(pp[0], 1);
		ck_assert_int_eq(seg_map(1, addr, size, NULL), CUDA_ERROR_INVALID_VALUE);
		fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		seg_pass(fd, 2);
		ck_assert_int_eq(seg_map(2, addr, 4096, NULL), CUDA_ERROR_INVALID_VALUE);
		break;
	case 2: /* a memfd sealed so that it can still shrink */
		fd = seg_memfd(size);
		ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL), 0);
		seg_pass(fd, 1);
		ck_assert_int_eq(seg_map(1, addr, size, NULL), CUDA_ERROR_INVALID_VALUE);
		break;
	case 3: /* overlapping address: another segment's range */
		seg_pass(seg_memfd(size), 1);
		ck_assert_int_eq(seg_map(1, addr + size, size, &off), 0);
		seg_pass(seg_memfd(size), 2);
		ck_assert_int_eq(seg_map(2, addr + size / 2, size, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_unmap(off), 0);
		break;
	case 4: /* an address taken by something else of the host's */
		seg_pass(seg_memfd(size), 1);
		ck_assert_int_eq(seg_map(1, (uint64_t)(uintptr_t)g_base, size, NULL), CUDA_ERROR_ALREADY_MAPPED);
		break;
	case 5: /* forged ids: a token never passed, a segment offset never issued */
		ck_assert_int_eq(seg_map(99, addr, size, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_unmap(VC_CU_PINSEG_OFF0), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_unmap(12345), CUDA_ERROR_INVALID_VALUE);
		break;
	case 6: /* shapes no library sends: unaligned, empty, wrapping */
		seg_pass(seg_memfd(size), 1);
		ck_assert_int_eq(seg_map(1, addr + 1, size, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_map(1, addr, 100, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_map(1, addr, 0, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_map(1, UINT64_MAX - 4095, 8192, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(seg_map(1, addr, size, &off), 0); /* the descriptor still waits */
		ck_assert_int_eq(seg_unmap(off), 0);
		break;
	default: /* past the session's bound (4 MiB): as the driver out of memory */
		seg_pass(seg_memfd(3 * size), 1);
		ck_assert_int_eq(seg_map(1, addr, 3 * size, &off), 0);
		seg_pass(seg_memfd(2 * size), 2);
		ck_assert_int_eq(seg_map(2, free_range(2 * size), 2 * size, NULL), CUDA_ERROR_OUT_OF_MEMORY);
		seg_pass(seg_memfd(size), 3);
		ck_assert_int_eq(seg_map(3, free_range(size), size, &off2), 0);
		ck_assert_int_eq(seg_unmap(off), 0);
		ck_assert_int_eq(seg_unmap(off2), 0);
		break;
	}
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, 0);
	ck_assert_int_eq(sync_ctx(), 0);
}
END_TEST

/* MAP_GUEST of pin (@entry, @gen) at @addr, @size bytes; its offset in *@off. */
static int pin_map(uint32_t entry, uint64_t gen, uint64_t addr, uint64_t size, uint64_t *off)
{
	struct vc_cu_req_pinseg r = {.ctx = g_ctx, .op = VC_CU_PINSEG_MAP_GUEST, .guest_addr = addr, .size = size,
				     .entry = entry, .gen = gen};
	struct vc_cu_rep_pinseg rp = {0};
	int rc = cu(VC_CU_vcPinnedSegment, &r, sizeof(r), NULL, 0, &rp, sizeof(rp));

	if (off)
		*off = rp.off;
	return rc;
}

/* Without a socket that passes descriptors (a VM, here the plain fixture)
 * there are no segments, and without the guest's RAM no pins in place; a bad
 * selector or a short request is a violation. */
START_TEST(segments_without_a_socket)
{
	ck_assert_int_eq(seg_map(1, free_range(4096), 4096, NULL), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(pin_map(0, 1, free_range(4096), 4096, NULL), CUDA_ERROR_NOT_SUPPORTED);
}
END_TEST

START_TEST(segment_requests_that_are_fatal)
{
	struct vc_cu_req_pinseg r = {.ctx = g_ctx, .op = 3};

	raw_cmd(VC_CU_vcPinnedSegment, VC_CMD_F_REPLY, 0, &r, _i ? sizeof(r) : sizeof(r) - 8);
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

/* ---- pins in place: a VM session with its guest's RAM (shared/vc_gpin.h) -------- */

#define GPIN_LIST (1u << 20) /* where the guest's kernel wrote the run lists */

static void setup_gpins(void)
{
	g_gram = memfd_create("test-guest-ram", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_ge(g_gram, 0);
	ck_assert_int_eq(ftruncate(g_gram, GRAM_SIZE), 0);
	g_gpin = aligned_alloc(4096, VC_GPIN_AREA_SIZE);
	ck_assert_ptr_nonnull(g_gpin);
	memset(g_gpin, 0, VC_GPIN_AREA_SIZE);
	vc_gpin_host_init(g_gpin, VC_GPIN_F_RAM);
	setup();
}

static void teardown_gpins(void)
{
	teardown();
	close(g_gram);
	free(g_gpin);
	g_gram = -1;
	g_gpin = NULL;
}

/* What the guest's kernel does: the run list of one run [@gpa, @gpa + @len)
 * at GPIN_LIST + @entry pages, then entry @entry, its generation last. */
static void gpin_publish(uint32_t entry, uint64_t gen, uint64_t addr, uint64_t gpa, uint64_t len)
{
	struct vc_gpin_page pg = {.next = 0, .count = 1, .run = {{.gpa = gpa, .len = len}}};
	struct vc_gpin_entry *e = (struct vc_gpin_entry *)((uint8_t *)g_gpin + VC_GPIN_ENTRIES_OFF) + entry;
	uint64_t list = GPIN_LIST + (uint64_t)entry * 4096;

	ck_assert_int_eq(pwrite(g_gram, &pg, sizeof(pg), (off_t)list), (ssize_t)sizeof(pg));
	*e = (struct vc_gpin_entry){.addr = addr, .len = len, .list = list, .runs = 1, .flags = VC_GPIN_E_WRITE};
	__atomic_store_n(&e->gen, gen, __ATOMIC_RELEASE);
}

static uint64_t gpin_released(uint32_t entry)
{
	return __atomic_load_n((uint64_t *)((uint8_t *)g_gpin + VC_GPIN_RELEASED_OFF) + entry, __ATOMIC_ACQUIRE);
}

/* A pin mapped at the process's address from the guest's RAM: the same
 * pages, registered, copied through as pinned memory, unmapped, and only
 * then let go for the kernel to unpin. */
START_TEST(guest_pin_map_register_copy_unmap)
{
	const uint64_t size = 64 << 10, gpa = 2u << 20;
	uint64_t addr = free_range(size), off = 0, d = alloc(4096);
	uint8_t back[64];

	gpin_publish(5, 11, addr, gpa, size);
	ck_assert_int_eq(pin_map(5, 11, addr, size, &off), 0);
	ck_assert_uint_ge(off, VC_CU_PINSEG_OFF0);
	memset(back, 0x6d, sizeof(back));
	ck_assert_int_eq(pwrite(g_gram, back, 64, (off_t)(gpa + 4096)), 64);
	ck_assert_uint_eq(((uint8_t *)(uintptr_t)addr)[4096 + 63], 0x6d);
	ck_assert_uint_eq(gpin_released(5), 0);
	struct vc_cu_req_host_register hr = {.ctx = g_ctx, .off = off, .size = size};
	struct vc_cu_rep_host_register hp = {0};
	ck_assert_int_eq(cu(VC_CU_vcHostRegister, &hr, sizeof(hr), NULL, 0, &hp, sizeof(hp)), 0);
	ck_assert_uint_eq(hp.devptr, addr);
	struct vc_cu_req_memcpy c = {.ctx = g_ctx, .dir = VC_CU_COPY_HTOD, .dst = d, .len = 64,
				     .host = VC_CU_HOST_PINNED, .arena_off = off + 4096};
	ck_assert_int_eq(cu(VC_CU_vcMemcpy, &c, sizeof(c), NULL, 0, NULL, 0), 0);
	memset(back, 0, sizeof(back));
	ck_assert_int_eq(dtoh(d, 64, back), 0);
	ck_assert_uint_eq(back[0], 0x6d);
	/* Held: a second MAP of it is refused and lets nothing go. */
	ck_assert_int_eq(pin_map(5, 11, free_range(size), size, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(gpin_released(5), 0);
	ck_assert_int_eq(seg_unmap(off), 0);
	ck_assert_uint_eq(gpin_released(5), 11);
	/* Let go: never mapped again. */
	ck_assert_int_eq(pin_map(5, 11, addr, size, NULL), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* A MAP the pin does not describe is refused and lets the pin go, also one
 * that failed after the pin was taken (the address is taken in the host's
 * process); the session lives on. */
START_TEST(guest_pin_refusals_let_it_go)
{
	const uint64_t size = 16 << 10;
	uint64_t addr = free_range(size);
	void *taken;

	gpin_publish(1, 3, addr, 0, size);
	ck_assert_int_eq(pin_map(1, 2, addr, size, NULL), CUDA_ERROR_INVALID_VALUE); /* a stale generation */
	ck_assert_uint_eq(gpin_released(1), 2);
	ck_assert_int_eq(pin_map(1, 3, addr + 4096, size, NULL), CUDA_ERROR_INVALID_VALUE); /* another range */
	ck_assert_uint_eq(gpin_released(1), 3);
	gpin_publish(2, 4, addr, GRAM_SIZE - size, size);
	taken = mmap((void *)(uintptr_t)addr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ck_assert_ptr_eq(taken, (void *)(uintptr_t)addr);
	ck_assert_int_eq(pin_map(2, 4, addr, size, NULL), CUDA_ERROR_ALREADY_MAPPED);
	ck_assert_uint_eq(gpin_released(2), 4);
	munmap(taken, 4096);
	/* A run past the guest's RAM. */
	gpin_publish(3, 5, addr, GRAM_SIZE, size);
	ck_assert_int_eq(pin_map(3, 5, addr, size, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(gpin_released(3), 5);
	ck_assert_int_eq(sync_ctx(), 0);
}
END_TEST

/* ---- the guest NVML's operations (shared/vc_nvml_wire.h) ------------------------- */

/* Without a host NVML or an accounting page (this test's server): the
 * device's figures, no processes, values NOT_SUPPORTED; a wrong device is
 * the driver's error and the session lives on. */
START_TEST(nvml_queries_answer)
{
	struct vc_cu_prefix none = {0};
	struct vc_nv_rep_system sys;
	struct vc_nv_req_dev rq = {.dev = 0};
	struct vc_nv_rep_memory m;
	struct vc_nv_rep_procs pr;
	struct vc_nv_req_value vq = {.dev = 0, .query = VC_NV_UTILIZATION};
	struct vc_nv_rep_value v;

	ck_assert_int_eq(cu(VC_CU_vcNvmlSystem, &none, sizeof(none), NULL, 0, &sys, sizeof(sys)), 0);
	ck_assert_uint_eq(sys.host_nvml, 0);
	ck_assert_str_eq(sys.driver_version, "");
	ck_assert_int_gt(sys.cuda_version, 0);
	ck_assert_int_eq(cu(VC_CU_vcNvmlMemory, &rq, sizeof(rq), NULL, 0, &m, sizeof(m)), 0);
	ck_assert_uint_gt(m.total, 0);
	ck_assert_uint_eq(m.total, m.device_total);
	ck_assert_uint_eq(m.used, 0);
	ck_assert_uint_eq(m.free, m.total);
	ck_assert_uint_eq(m.quota, 0);
	ck_assert_int_eq(cu(VC_CU_vcNvmlProcs, &rq, sizeof(rq), NULL, 0, &pr, sizeof(pr)), 0);
	ck_assert_uint_eq(pr.count, 0);
	ck_assert_int_eq(cu(VC_CU_vcNvmlValue, &vq, sizeof(vq), NULL, 0, &v, sizeof(v)), 0);
	ck_assert_int_eq(v.status, 3); /* NVML_ERROR_NOT_SUPPORTED */
	rq.dev = 7;
	ck_assert_int_eq(cu(VC_CU_vcNvmlMemory, &rq, sizeof(rq), NULL, 0, &m, sizeof(m)), CUDA_ERROR_INVALID_DEVICE);
	rq.dev = -1;
	ck_assert_int_eq(cu(VC_CU_vcNvmlProcs, &rq, sizeof(rq), NULL, 0, &pr, sizeof(pr)), CUDA_ERROR_INVALID_DEVICE);
	vq.dev = 1;
	ck_assert_int_eq(cu(VC_CU_vcNvmlValue, &vq, sizeof(vq), NULL, 0, &v, sizeof(v)), CUDA_ERROR_INVALID_DEVICE);
	ck_assert_int_eq(cu(VC_CU_vcNvmlSystem, &none, sizeof(none), NULL, 0, &sys, sizeof(sys)), 0);
}
END_TEST

/* Requests no guest NVML sends: short, padding set, a query outside the table. */
START_TEST(nvml_lies_are_fatal)
{
	struct vc_cu_prefix p = {.ctx = 0};
	struct vc_nv_req_dev rq = {.dev = 0, .pad = 1};
	struct vc_nv_req_value vq = {.dev = 0};

	switch (_i) {
	case 0: raw_cmd(VC_CU_vcNvmlMemory, VC_CMD_F_REPLY, 0, &p, sizeof(p)); break;
	case 1: raw_cmd(VC_CU_vcNvmlProcs, VC_CMD_F_REPLY, 0, &p, sizeof(p)); break;
	case 2: raw_cmd(VC_CU_vcNvmlValue, VC_CMD_F_REPLY, 0, &rq, sizeof(rq)); break;
	case 3: raw_cmd(VC_CU_vcNvmlMemory, VC_CMD_F_REPLY, 0, &rq, sizeof(rq)); break;
	case 4: raw_cmd(VC_CU_vcNvmlProcs, VC_CMD_F_REPLY, 0, &rq, sizeof(rq)); break;
	case 5:
		vq.query = 0;
		raw_cmd(VC_CU_vcNvmlValue, VC_CMD_F_REPLY, 0, &vq, sizeof(vq));
		break;
	default:
		vq.query = VC_NV_QUERY_END_;
		raw_cmd(VC_CU_vcNvmlValue, VC_CMD_F_REPLY, 0, &vq, sizeof(vq));
		break;
	}
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

static Suite *decode_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *t = tcase_create("good");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, echo_roundtrip);
	tcase_add_test(t, memory_copies_memset);
	tcase_add_test(t, launch_recorded);
	tcase_add_test(t, cuda_errors_are_results);
	tcase_add_test(t, jit_link_checks);
	tcase_add_test(t, confirmed_ranges_skip_the_driver_until_freed);
	tcase_add_test(t, managed_ranges_are_checked);
	tcase_add_test(t, memop_addresses_are_checked);
	tcase_add_test(t, launch_attributes_are_checked);
	tcase_add_test(t, tensor_map_extents_are_checked);
	tcase_add_test(t, arrays_objects_and_boxes);
	tcase_add_test(t, graph_node_errors_are_results);
	tcase_add_test(t, texrefs_are_checked);
	suite_add_tcase(s, t);

	t = tcase_create("hostile");
	tcase_add_checked_fixture(t, setup_hostile, teardown);
	tcase_add_test(t, unknown_opcode_is_fatal);
	tcase_add_loop_test(t, retired_opcodes_are_fatal, 0, sizeof(retired_ops) / sizeof(retired_ops[0]));
	tcase_add_loop_test(t, opcodes_outside_cuda_range_are_fatal, 0, 4);
	tcase_add_test(t, unknown_flags_are_fatal);
	tcase_add_test(t, fence_without_reply_is_fatal);
	tcase_add_test(t, bad_sizes_are_fatal);
	tcase_add_test(t, unaligned_size_is_fatal);
	tcase_add_test(t, length_past_end_is_fatal);
	tcase_add_test(t, truncated_header_is_fatal);
	tcase_add_test(t, tail_beyond_ring_is_fatal);
	tcase_add_test(t, bad_slot_is_fatal);
	tcase_add_test(t, arena_offset_outside_is_fatal);
	tcase_add_test(t, arena_offset_overflow_is_fatal);
	tcase_add_test(t, image_arena_outside_is_fatal);
	tcase_add_test(t, short_payload_is_fatal);
	tcase_add_loop_test(t, short_cuda_requests_are_fatal, 0, sizeof(short_ops) / sizeof(short_ops[0]));
	tcase_add_test(t, inline_length_lie_is_fatal);
	tcase_add_test(t, image_inline_length_lie_is_fatal);
	tcase_add_test(t, launch_params_lie_is_fatal);
	tcase_add_loop_test(t, launch_params_past_payload_are_fatal, 0, 3);
	tcase_add_loop_test(t, bad_selectors_are_fatal, 0, 6);
	tcase_add_test(t, inline_dtoh_without_reply_is_fatal);
	tcase_add_loop_test(t, managed_requests_past_limits_are_fatal, 0, 11);
	tcase_add_test(t, unterminated_name_is_fatal);
	tcase_add_test(t, jit_count_lie_is_fatal);
	tcase_add_test(t, link_name_unterminated_is_fatal);
	tcase_add_loop_test(t, short_link_requests_are_fatal, 0, sizeof(short_link_ops) / sizeof(short_link_ops[0]));
	tcase_add_loop_test(t, nvml_lies_are_fatal, 0, 7);
	suite_add_tcase(s, t);

	t = tcase_create("vmm");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, vmm_ipc_errors_are_results);
	tcase_add_test(t, memmisc_errors_are_results);
	tcase_add_test(t, green_errors_are_results);
	tcase_add_test(t, nvml_queries_answer);
	suite_add_tcase(s, t);
	t = tcase_create("vmm_hostile");
	tcase_add_checked_fixture(t, setup_hostile, teardown);
	tcase_add_loop_test(t, vmm_short_requests_are_fatal, 0, sizeof(vmm_short_ops) / sizeof(vmm_short_ops[0]));
	tcase_add_loop_test(t, vmm_access_count_lie_is_fatal, 0, 3);
	tcase_add_loop_test(t, memop_counts_are_fatal, 0, 4);
	tcase_add_loop_test(t, family_array_counts_are_fatal, 0, 3);
	tcase_add_loop_test(t, bad_boxes_and_arrays_are_fatal, 0, 9);
	tcase_add_loop_test(t, short_array_requests_are_fatal, 0,
			    sizeof(short_array_ops) / sizeof(short_array_ops[0]));
	tcase_add_loop_test(t, short_graph_requests_are_fatal, 0, sizeof(short_graph_ops) / sizeof(short_graph_ops[0]));
	tcase_add_loop_test(t, graph_node_lies_are_fatal, 0, 6);
	tcase_add_loop_test(t, graph_list_lies_are_fatal, 0, 5);
	tcase_add_loop_test(t, short_memmisc_requests_are_fatal, 0,
			    sizeof(short_memmisc_ops) / sizeof(short_memmisc_ops[0]));
	tcase_add_loop_test(t, memmisc_counts_are_fatal, 0, 8);
	tcase_add_loop_test(t, short_texref_requests_are_fatal, 0,
			    sizeof(short_texref_ops) / sizeof(short_texref_ops[0]));
	tcase_add_loop_test(t, green_short_requests_are_fatal, 0, sizeof(green_short_ops) / sizeof(green_short_ops[0]));
	tcase_add_loop_test(t, green_count_lies_are_fatal, 0, 3);
	tcase_add_test(t, segments_without_a_socket);
	tcase_add_loop_test(t, segment_requests_that_are_fatal, 0, 2);
	suite_add_tcase(s, t);
	t = tcase_create("segments");
	tcase_add_checked_fixture(t, setup_segments, teardown_segments);
	tcase_add_test(t, segment_map_register_copy_unmap);
	tcase_add_loop_test(t, segment_lies_are_refused, 0, 8);
	tcase_add_test(t, segment_of_several_files);
	tcase_add_loop_test(t, segment_file_lies_are_refused, 0, 4);
	tcase_add_test(t, fenced_copies_end_with_their_fence_word);
	suite_add_tcase(s, t);
	t = tcase_create("fences");
	tcase_add_checked_fixture(t, setup_fences, teardown_segments);
	tcase_add_test(t, fenced_copies_end_with_their_fence_word);
	suite_add_tcase(s, t);
	t = tcase_create("segments made ahead");
	tcase_add_checked_fixture(t, setup_big_segments, teardown_segments);
	tcase_add_test(t, segment_prefaulted_ahead);
	suite_add_tcase(s, t);
	t = tcase_create("guest pins");
	tcase_add_checked_fixture(t, setup_gpins, teardown_gpins);
	tcase_add_test(t, guest_pin_map_register_copy_unmap);
	tcase_add_test(t, guest_pin_refusals_let_it_go);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(decode_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
