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
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin.h"
#include "vc_cuda_graph.h"
#include "vc_cuda_manual.h"
#include "vc_layout.h"
#include "vc_ring_guest.h"
#include "vc_shm.h"
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
	g_base = aligned_alloc(4096, g_l.region_size);
	ck_assert_ptr_nonnull(g_base);
	p.base = g_base;
	p.layout = &g_l;
	p.doorbell_fd = p.complete_fd = p.hangup_fd = p.mem_fd = -1;
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
	free(g_base);
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
				     VC_CU_cuDevicePrimaryCtxRetain, VC_CU_cuModuleGetFunction};

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

static Suite *decode_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *t = tcase_create("good");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, echo_roundtrip);
	tcase_add_test(t, memory_copies_memset);
	tcase_add_test(t, launch_recorded);
	tcase_add_test(t, cuda_errors_are_results);
	tcase_add_test(t, graph_node_errors_are_results);
	suite_add_tcase(s, t);

	t = tcase_create("hostile");
	tcase_add_checked_fixture(t, setup_hostile, teardown);
	tcase_add_test(t, unknown_opcode_is_fatal);
	tcase_add_loop_test(t, retired_opcodes_are_fatal, 0, sizeof(retired_ops) / sizeof(retired_ops[0]));
	tcase_add_loop_test(t, opcodes_outside_cuda_range_are_fatal, 0, 4);
	tcase_add_test(t, unknown_flags_are_fatal);
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
	tcase_add_test(t, unterminated_name_is_fatal);
	tcase_add_loop_test(t, short_graph_requests_are_fatal, 0, sizeof(short_graph_ops) / sizeof(short_graph_ops[0]));
	tcase_add_loop_test(t, graph_node_lies_are_fatal, 0, 6);
	tcase_add_loop_test(t, graph_list_lies_are_fatal, 0, 5);
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
