/* SPDX-License-Identifier: MIT */
/*
 * test_decode.c - the server's decoder and session with the CI stand-in
 * executor, driven step by step: every command kind, CUDA-level errors
 * (reported, session lives on), and protocol violations (session FATAL, its
 * executor context released).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vc_layout.h"
#include "vc_ring_guest.h"
#include "vc_shm.h"
#include "vcuda/server.h"

static void *g_base;
static struct vc_layout g_l;
static struct vc_session *g_s;
static struct vc_ring_guest g_g;
static struct vc_standin_config g_cfg = {.mem_limit = 1 << 20};

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
	return 0;
}

static const struct vc_ring_wait_ops t_ops = {.kick = t_kick, .sleep = t_sleep};

static void setup(void)
{
	struct vc_layout_req r = {.ring_size = 8192, .slot_count = 4, .slot_size = 1024,
				  .chunk_size = 4096, .arena_size = 4 * 4096};
	struct vc_session_params p = {0};

	ck_assert_int_eq(vc_layout_compute(&r, &g_l), 0);
	g_base = aligned_alloc(4096, g_l.region_size);
	ck_assert_ptr_nonnull(g_base);
	p.base = g_base;
	p.layout = &g_l;
	p.doorbell_fd = p.complete_fd = p.hangup_fd = p.mem_fd = -1;
	p.exec = &vc_exec_ci_standin_ops;
	p.exec_factory = &g_cfg;
	ck_assert_int_eq(vc_session_create(&p, &g_s), 0);
	ck_assert_int_eq(vc_ring_guest_init(&g_g, g_base, &g_l, &t_ops, NULL), 0);
	g_g.spin_us = 0;
}

static void teardown(void)
{
	vc_ring_guest_fini(&g_g);
	vc_session_destroy(g_s);
	free(g_base);
}

/* A synchronous command; returns the status, reply payload in @out. */
static int call(uint32_t op, const void *req, size_t reqlen, const void *data, size_t dlen,
		void *out, size_t cap, int64_t *outlen)
{
	int32_t st;
	int64_t seq = vc_ring_guest_write(&g_g, op, VC_CMD_F_REPLY, 1, req, reqlen, data, dlen);
	int64_t n;

	ck_assert_int_gt(seq, 0);
	ck_assert_int_eq(vc_ring_guest_publish(&g_g), 0);
	int rc = vc_ring_guest_wait(&g_g, (uint64_t)seq);
	if (rc)
		return rc;
	n = vc_ring_guest_read_reply(&g_g, 1, (uint64_t)seq, &st, out, cap);
	ck_assert_int_ge(n, 0);
	if (outlen)
		*outlen = n;
	return st;
}

static uint64_t alloc(uint64_t size)
{
	struct vc_mem_alloc_req r = {.size = size};
	struct vc_mem_alloc_rep rep;

	ck_assert_int_eq(call(VC_OP_MEM_ALLOC, &r, sizeof(r), NULL, 0, &rep, sizeof(rep), NULL), 0);
	return rep.dptr;
}

static void async_cmd(uint32_t op, const void *req, size_t reqlen, const void *data, size_t dlen)
{
	ck_assert_int_gt(vc_ring_guest_write(&g_g, op, 0, 0, req, reqlen, data, dlen), 0);
	ck_assert_int_eq(vc_ring_guest_publish(&g_g), 0);
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

static void expect_fatal(uint32_t reason)
{
	struct vc_session_stats st;
	uint32_t r;

	ck_assert_int_eq(vc_session_process(g_s), -EPROTO);
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, reason);
	ck_assert_uint_ne(vc_ring_guest_status(&g_g, &r) & VC_STATUS_FATAL, 0);
	ck_assert_uint_eq(r, reason);
	/* Its device memory is released at once. */
	ck_assert_ptr_null(vc_session_exec_ctx(g_s));
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
	static char big[2048];
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
	/* inline HtoD, inline DtoH */
	struct vc_memcpy_htod_req h = {.dst = d + 100, .len = 500, .src = VC_DATA_INLINE};
	async_cmd(VC_OP_MEMCPY_HTOD, &h, sizeof(h), src, 500);
	struct vc_memcpy_dtoh_req r = {.src = d + 100, .len = 500, .dst = VC_DATA_INLINE};
	ck_assert_int_eq(call(VC_OP_MEMCPY_DTOH, &r, sizeof(r), NULL, 0, back, sizeof(back), &n), 0);
	ck_assert_int_eq(n, 500);
	ck_assert_mem_eq(back, src, 500);
	/* arena HtoD, arena DtoH */
	memcpy((uint8_t *)g_base + g_l.arena_off + 4096, src, 4096);
	h = (struct vc_memcpy_htod_req){.dst = d + 4096, .len = 4096, .arena_off = 4096,
					.src = VC_DATA_ARENA};
	async_cmd(VC_OP_MEMCPY_HTOD, &h, sizeof(h), NULL, 0);
	r = (struct vc_memcpy_dtoh_req){.src = d + 4096, .len = 4096, .arena_off = 8192,
					.dst = VC_DATA_ARENA};
	ck_assert_int_eq(call(VC_OP_MEMCPY_DTOH, &r, sizeof(r), NULL, 0, NULL, 0, &n), 0);
	ck_assert_mem_eq((uint8_t *)g_base + g_l.arena_off + 8192, src, 4096);
	/* DtoD and memset 1/2/4 */
	struct vc_memcpy_dtod_req dd = {.dst = e, .src = d + 4096, .len = 64};
	async_cmd(VC_OP_MEMCPY_DTOD, &dd, sizeof(dd), NULL, 0);
	r = (struct vc_memcpy_dtoh_req){.src = e, .len = 64, .dst = VC_DATA_INLINE};
	ck_assert_int_eq(call(VC_OP_MEMCPY_DTOH, &r, sizeof(r), NULL, 0, back, 64, &n), 0);
	ck_assert_mem_eq(back, src, 64);
	struct vc_memset_req m = {.dst = e, .count = 64, .value = 0xab, .elem_size = 1};
	async_cmd(VC_OP_MEMSET, &m, sizeof(m), NULL, 0);
	m = (struct vc_memset_req){.dst = e + 2, .count = 3, .value = 0x1234, .elem_size = 2};
	async_cmd(VC_OP_MEMSET, &m, sizeof(m), NULL, 0);
	m = (struct vc_memset_req){.dst = e + 16, .count = 2, .value = 0xdeadbeef, .elem_size = 4};
	async_cmd(VC_OP_MEMSET, &m, sizeof(m), NULL, 0);
	ck_assert_int_eq(call(VC_OP_MEMCPY_DTOH, &r, sizeof(r), NULL, 0, back, 64, &n), 0);
	ck_assert_uint_eq(back[0], 0xab);
	ck_assert_uint_eq(back[1], 0xab);
	ck_assert_uint_eq(back[2], 0x34);
	ck_assert_uint_eq(back[3], 0x12);
	ck_assert_uint_eq(back[7], 0x12);
	ck_assert_uint_eq(back[8], 0xab);
	ck_assert_mem_eq(back + 16, "\xef\xbe\xad\xde\xef\xbe\xad\xde", 8);
	ck_assert_uint_eq(back[24], 0xab);
	/* free */
	struct vc_mem_free_req f = {.dptr = d};
	ck_assert_int_eq(call(VC_OP_MEM_FREE, &f, sizeof(f), NULL, 0, NULL, 0, NULL), 0);
	ck_assert_int_eq(call(VC_OP_MEM_FREE, &f, sizeof(f), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(call(VC_OP_SYNC, NULL, 0, NULL, 0, NULL, 0, NULL), 0);
}
END_TEST

START_TEST(launch_recorded)
{
	struct vc_launch_req l = {.func = 0x1234, .grid = {4, 1, 1}, .block = {128, 1, 1},
				  .param_size = 24};
	uint64_t params[3] = {1, 2, 3}, launches, bytes, allocs;

	async_cmd(VC_OP_LAUNCH, &l, sizeof(l), params, sizeof(params));
	async_cmd(VC_OP_LAUNCH, &l, sizeof(l), params, sizeof(params));
	ck_assert_int_eq(call(VC_OP_SYNC, NULL, 0, NULL, 0, NULL, 0, NULL), 0);
	vc_standin_stats(vc_session_exec_ctx(g_s), &launches, &bytes, &allocs);
	ck_assert_uint_eq(launches, 2);
}
END_TEST

/* ---- CUDA-level errors: reported, never fatal -------------------------------- */

START_TEST(cuda_errors_are_results)
{
	int32_t code;
	uint64_t seq;

	/* Out of the stand-in's 1 MiB: the driver's out-of-memory code. */
	struct vc_mem_alloc_req a = {.size = 2 << 20};
	ck_assert_int_eq(call(VC_OP_MEM_ALLOC, &a, sizeof(a), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_OUT_OF_MEMORY);
	a.size = 0;
	ck_assert_int_eq(call(VC_OP_MEM_ALLOC, &a, sizeof(a), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	uint64_t d = alloc(256);
	/* A read past the allocation's end. */
	struct vc_memcpy_dtoh_req r = {.src = d + 200, .len = 100, .dst = VC_DATA_INLINE};
	ck_assert_int_eq(call(VC_OP_MEMCPY_DTOH, &r, sizeof(r), NULL, 0, NULL, 0, NULL),
			 VC_CUDA_ERROR_INVALID_VALUE);
	/* An asynchronous write to nowhere becomes the sticky error... */
	struct vc_memcpy_htod_req h = {.dst = 0x1000, .len = 8, .src = VC_DATA_INLINE};
	async_cmd(VC_OP_MEMCPY_HTOD, &h, sizeof(h), "12345678", 8);
	uint64_t bad_seq = g_g.seq;
	struct vc_launch_req l = {.func = 1, .grid = {0, 1, 1}, .block = {1, 1, 1}};
	async_cmd(VC_OP_LAUNCH, &l, sizeof(l), NULL, 0);
	ck_assert_int_eq(call(VC_OP_SYNC, NULL, 0, NULL, 0, NULL, 0, NULL), 0);
	ck_assert(vc_ring_guest_error(&g_g, &code, &seq));
	ck_assert_int_eq(code, VC_CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(seq, bad_seq);
	/* ...and the session carries on. */
	struct vc_session_stats st;
	vc_session_get_stats(g_s, &st);
	ck_assert_uint_eq(st.fatal, 0);
	ck_assert_ptr_nonnull(vc_session_exec_ctx(g_s));
	/* Huge memset counts cannot overflow into a small range. */
	struct vc_memset_req m = {.dst = d, .count = UINT64_MAX / 2, .value = 0, .elem_size = 4};
	vc_ring_guest_ack_error(&g_g, seq);
	async_cmd(VC_OP_MEMSET, &m, sizeof(m), NULL, 0);
	ck_assert_int_eq(call(VC_OP_SYNC, NULL, 0, NULL, 0, NULL, 0, NULL), 0);
	ck_assert(vc_ring_guest_error(&g_g, &code, &seq));
	ck_assert_int_eq(code, VC_CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* ---- protocol violations: FATAL ----------------------------------------------- */

START_TEST(unknown_opcode_is_fatal)
{
	uint64_t d = alloc(4096);
	(void)d;
	struct vc_cmd_hdr h = {.op = 0x7777, .size = 16};
	raw(&h, sizeof(h));
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
	struct vc_cmd_hdr h = {.op = VC_OP_SYNC, .size = 16, .flags = VC_CMD_F_REPLY, .slot = 4};
	raw(&h, sizeof(h));
	expect_fatal(VC_FATAL_SLOT);
}
END_TEST

START_TEST(arena_offset_outside_is_fatal)
{
	uint64_t d = alloc(8192);
	struct {
		struct vc_cmd_hdr h;
		struct vc_memcpy_htod_req r;
	} c = {{.op = VC_OP_MEMCPY_HTOD, .size = 48},
	       {.dst = d, .len = 4096, .arena_off = 3 * 4096 + 1, .src = VC_DATA_ARENA}};
	raw(&c, sizeof(c));
	expect_fatal(VC_FATAL_ARENA);
}
END_TEST

START_TEST(arena_offset_overflow_is_fatal)
{
	uint64_t d = alloc(8192);
	struct {
		struct vc_cmd_hdr h;
		struct vc_memcpy_dtoh_req r;
	} c = {{.op = VC_OP_MEMCPY_DTOH, .size = 48},
	       {.src = d, .len = 16, .arena_off = UINT64_MAX - 8, .dst = VC_DATA_ARENA}};
	raw(&c, sizeof(c));
	expect_fatal(VC_FATAL_ARENA);
}
END_TEST

START_TEST(short_payload_is_fatal)
{
	struct {
		struct vc_cmd_hdr h;
		uint64_t half;
	} c = {{.op = VC_OP_MEMCPY_HTOD, .size = 24}, 0};
	raw(&c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(inline_length_lie_is_fatal)
{
	uint64_t d = alloc(1 << 16);
	struct {
		struct vc_cmd_hdr h;
		struct vc_memcpy_htod_req r;
		uint8_t data[8];
	} c = {{.op = VC_OP_MEMCPY_HTOD, .size = 56},
	       {.dst = d, .len = 60000, .src = VC_DATA_INLINE}, {0}};
	raw(&c, sizeof(c));
	expect_fatal(VC_FATAL_PAYLOAD);
}
END_TEST

START_TEST(launch_params_lie_is_fatal)
{
	struct {
		struct vc_cmd_hdr h;
		struct vc_launch_req r;
	} c = {{.op = VC_OP_LAUNCH, .size = 64},
	       {.func = 1, .grid = {1, 1, 1}, .block = {1, 1, 1}, .param_size = 40000}};
	raw(&c, sizeof(c));
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
	suite_add_tcase(s, t);

	t = tcase_create("hostile");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, unknown_opcode_is_fatal);
	tcase_add_test(t, unknown_flags_are_fatal);
	tcase_add_test(t, bad_sizes_are_fatal);
	tcase_add_test(t, unaligned_size_is_fatal);
	tcase_add_test(t, length_past_end_is_fatal);
	tcase_add_test(t, truncated_header_is_fatal);
	tcase_add_test(t, tail_beyond_ring_is_fatal);
	tcase_add_test(t, bad_slot_is_fatal);
	tcase_add_test(t, arena_offset_outside_is_fatal);
	tcase_add_test(t, arena_offset_overflow_is_fatal);
	tcase_add_test(t, short_payload_is_fatal);
	tcase_add_test(t, inline_length_lie_is_fatal);
	tcase_add_test(t, launch_params_lie_is_fatal);
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
