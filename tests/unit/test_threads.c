/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c - the ring with a real guest thread and a real server thread
 * (vc_session_start), real doorbell and completion eventfds. Built under
 * ThreadSanitizer in CI: every shared access must be ordered by the atomics
 * the protocol documents. Also checks that the doorbell/IDLE protocol loses no
 * wake-up: a lost one shows as a stall the test times out on. The executor is
 * the CUDA executor over the CI stand-in, whose synchronisations are answered
 * from a thread of its own while the serving thread goes on.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "standin/standin.h"
#include "vc_cuda_manual.h"
#include "vc_layout.h"
#include "vc_ring_guest.h"
#include "vc_shm.h"
#include "vcuda/server.h"
#include "vt_kernels.h"

struct env {
	void *base;
	struct vc_layout l;
	struct vc_session *s;
	struct vc_ring_guest g;
	int doorbell, complete;
	uint64_t kicks;
};

static int e_kick(void *ctx)
{
	struct env *e = ctx;
	uint64_t one = 1;

	e->kicks++;
	return write(e->doorbell, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

static int e_sleep(void *ctx, int ms)
{
	struct env *e = ctx;
	struct pollfd p = {.fd = e->complete, .events = POLLIN};
	uint64_t v;

	if (poll(&p, 1, ms) > 0 && read(e->complete, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

static const struct vc_ring_wait_ops e_ops = {.kick = e_kick, .sleep = e_sleep};

static void env_init(struct env *e, uint32_t ring, uint32_t spin_us)
{
	struct vc_layout_req r = {.ring_size = ring, .slot_count = 8, .slot_size = 4096,
				  .chunk_size = 4096, .arena_size = 8 * 4096};
	struct vc_session_params p = {0};

	memset(e, 0, sizeof(*e));
	ck_assert_int_eq(vc_layout_compute(&r, &e->l), 0);
	e->base = aligned_alloc(4096, e->l.region_size);
	ck_assert_ptr_nonnull(e->base);
	e->doorbell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->complete = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	p.base = e->base;
	p.layout = &e->l;
	p.doorbell_fd = e->doorbell;
	p.complete_fd = e->complete;
	p.hangup_fd = -1;
	p.mem_fd = -1;
	p.exec = &vc_exec_cuda_ops;
	p.exec_factory = (void *)vc_cuda_driver_standin(0);
	p.spin_us = spin_us;
	ck_assert_int_eq(vc_session_create(&p, &e->s), 0);
	ck_assert_int_eq(vc_ring_guest_init(&e->g, e->base, &e->l, &e_ops, e), 0);
	e->g.spin_us = 20;
	ck_assert_int_eq(vc_session_start(e->s), 0);
}

static void env_fini(struct env *e)
{
	vc_session_stop(e->s);
	vc_session_destroy(e->s);
	vc_ring_guest_fini(&e->g);
	close(e->doorbell);
	close(e->complete);
	free(e->base);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

START_TEST(producer_consumer_threads)
{
	struct env e;
	uint64_t rs = 0x9e3779b97f4a7c15ull, asyncs = 0, syncs = 0;
	uint8_t buf[3000], out[4096];
	const int n = 60000;

	/* A tiny ring so that it fills and wraps constantly; a short server
	 * spin so that it goes IDLE and sleeps often. */
	env_init(&e, 4096, 5);
	for (int i = 0; i < n; i++) {
		uint64_t r = rnd(&rs);
		size_t len = r % 1500;

		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)(i + k);
		if (r % 5 == 0) {
			struct vc_echo_req er = {.len = (uint32_t)len};
			int64_t seq = vc_ring_guest_write(&e.g, VC_OP_ECHO, VC_CMD_F_REPLY, (uint32_t)(i % 8),
							  &er, sizeof(er), buf, len);
			int32_t st;

			ck_assert_int_gt(seq, 0);
			ck_assert_int_eq(vc_ring_guest_publish(&e.g), 0);
			ck_assert_int_eq(vc_ring_guest_wait(&e.g, (uint64_t)seq), 0);
			ck_assert_int_eq(vc_ring_guest_read_reply(&e.g, (uint32_t)(i % 8), (uint64_t)seq, &st,
								  out, sizeof(out)),
					 (int64_t)len);
			ck_assert_int_eq(st, 0);
			ck_assert_mem_eq(out, buf, len);
			syncs++;
		} else {
			ck_assert_int_gt(vc_ring_guest_write(&e.g, VC_OP_NOP, 0, 0, buf, len, NULL, 0), 0);
			if (r % 3 == 0)
				ck_assert_int_eq(vc_ring_guest_publish(&e.g), 0);
			asyncs++;
		}
		if (r % 997 == 0)
			usleep(200); /* let the server fall asleep: the doorbell path */
	}
	ck_assert_int_eq(vc_ring_guest_publish(&e.g), 0);
	ck_assert_int_eq(vc_ring_guest_wait(&e.g, e.g.seq), 0);
	ck_assert_uint_eq(vc_ring_guest_done(&e.g), (uint64_t)n);

	struct vc_session_stats st;
	vc_session_get_stats(e.s, &st);
	ck_assert_uint_eq(st.commands, (uint64_t)n);
	ck_assert_uint_eq(st.fatal, 0);
	ck_assert_uint_gt(st.sleeps, 0); /* the server did sleep ... */
	ck_assert_uint_gt(e.kicks, 0);   /* ... and was woken by the doorbell */
	ck_assert_uint_eq(asyncs + syncs, (uint64_t)n);
	env_fini(&e);
}
END_TEST

START_TEST(stop_wakes_a_sleeping_server)
{
	struct env e;

	env_init(&e, 4096, 1);
	usleep(20000); /* the server is asleep on its doorbell by now */
	env_fini(&e);  /* must return promptly, not after a poll timeout chain */
}
END_TEST

START_TEST(fatal_wakes_a_sleeping_guest)
{
	struct env e;

	env_init(&e, 4096, 1);
	/* An unknown opcode, then a correct sync command the guest waits for. */
	struct vc_cu_req_sync sy = {.kind = VC_CU_SYNC_CTX};

	ck_assert_int_gt(vc_ring_guest_write(&e.g, 0x7777, 0, 0, NULL, 0, NULL, 0), 0);
	int64_t seq = vc_ring_guest_write(&e.g, VC_CU_vcSync, VC_CMD_F_REPLY, 0, &sy, sizeof(sy), NULL, 0);
	ck_assert_int_eq(vc_ring_guest_publish(&e.g), 0);
	ck_assert_int_eq(vc_ring_guest_wait(&e.g, (uint64_t)seq), -EPROTO);
	env_fini(&e);
}
END_TEST

/* A synchronous CUDA operation in @slot: its reply struct (and data) into
 * @out, up to @cap bytes; returns the status. Waits for the reply itself, not
 * for done_seq: synchronisations are answered late, off the serving thread. */
static int32_t cu_call(struct env *e, uint32_t slot, uint32_t op, const void *req, size_t len, const void *data,
		       size_t dlen, void *out, size_t cap)
{
	int64_t seq = vc_ring_guest_write(&e->g, op, VC_CMD_F_REPLY, slot, req, len, data, dlen);
	int32_t st = -1;

	ck_assert_int_gt(seq, 0);
	ck_assert_int_eq(vc_ring_guest_publish(&e->g), 0);
	ck_assert_int_eq(vc_ring_guest_wait_reply(&e->g, slot, (uint64_t)seq), 0);
	ck_assert_int_ge(vc_ring_guest_read_reply(&e->g, slot, (uint64_t)seq, &st, out, cap), 0);
	return st;
}

START_TEST(cuda_ops_with_late_replies)
{
	struct env e;
	uint8_t rep[VC_CU_REP_MAX + 256];
	uint64_t ctx, d, mod, fn, image, launches0, launches, bytes, allocs;
	const int n = 3000;

	env_init(&e, 16384, 5);
	vc_cuda_driver_standin_stats(&launches0, &bytes, &allocs);
	struct vc_cu_req_ctx rt = {.dev = 0};
	ck_assert_int_eq(cu_call(&e, 0, VC_CU_cuDevicePrimaryCtxRetain, &rt, sizeof(rt), NULL, 0, rep, sizeof(rep)), 0);
	memcpy(&ctx, rep, sizeof(ctx));
	struct vc_cu_req_alloc ra = {.ctx = ctx, .size = 4096};
	ck_assert_int_eq(cu_call(&e, 1, VC_CU_vcMemAlloc, &ra, sizeof(ra), NULL, 0, rep, sizeof(rep)), 0);
	memcpy(&d, rep, sizeof(d));
	struct vc_cu_req_vcImageBegin ib = {.ctx = ctx, .size = sizeof(vt_store_ptx)};
	ck_assert_int_eq(cu_call(&e, 2, VC_CU_vcImageBegin, &ib, sizeof(ib), NULL, 0, rep, sizeof(rep)), 0);
	memcpy(&image, rep, sizeof(image));
	struct vc_cu_req_vcImagePut ip = {.ctx = ctx, .image = image, .len = sizeof(vt_store_ptx), .inline_data = 1};
	ck_assert_int_gt(vc_ring_guest_write(&e.g, VC_CU_vcImagePut, 0, 0, &ip, sizeof(ip), vt_store_ptx,
					     sizeof(vt_store_ptx)), 0);
	struct vc_cu_req_load ld = {.ctx = ctx, .image = image, .kind = VC_CU_LOAD_MODULE};
	ck_assert_int_eq(cu_call(&e, 3, VC_CU_vcLoad, &ld, sizeof(ld), NULL, 0, rep, sizeof(rep)), 0);
	memcpy(&mod, rep, sizeof(mod));
	struct vc_cu_req_cuModuleGetFunction gf = {.cur_ctx = ctx, .hmod = mod, .name_len = sizeof(VT_STORE_KERNEL)};
	ck_assert_int_eq(cu_call(&e, 4, VC_CU_cuModuleGetFunction, &gf, sizeof(gf), VT_STORE_KERNEL,
				 sizeof(VT_STORE_KERNEL), rep, sizeof(rep)), 0);
	memcpy(&fn, rep, sizeof(fn));

	/* Per round: a copy, a memset and a launch queued without replies, a
	 * synchronisation answered by the executor's own thread while the
	 * serving thread takes the next command (an echo in another slot),
	 * then the bytes read back through a reply slot. */
	for (int i = 0; i < n; i++) {
		uint32_t slot = (uint32_t)i % 8, v = 0x5eed0000u + (uint32_t)i, off = (uint32_t)(i % 32) * 64;
		uint8_t src[64], want[64];
		struct vc_cu_req_memcpy h = {.ctx = ctx, .dir = VC_CU_COPY_HTOD, .dst = d + off, .len = sizeof(src),
					     .host = VC_CU_HOST_INLINE, .async = 1};
		struct vc_cu_req_memset m = {.ctx = ctx, .dst = d + off + 8, .count = 4, .value = (uint32_t)i & 0xff,
					     .elem = 1, .async = 1};
		struct vc_cu_req_launch l = {.ctx = ctx, .func = fn, .grid = {1, 1, 1}, .block = {1, 1, 1},
					     .param_size = 12};
		uint8_t params[12];
		uint64_t at = d + off + 16;
		struct vc_cu_req_sync sy = {.ctx = ctx, .handle = ctx, .kind = VC_CU_SYNC_CTX};
		struct vc_echo_req er = {.len = 8};
		uint64_t token = 0xec40000000000000ull + (uint64_t)i, echo = 0;
		int64_t sseq, eseq;
		int32_t st;

		for (int k = 0; k < 64; k++)
			src[k] = (uint8_t)(i * 7 + k);
		memcpy(want, src, sizeof(want));
		memset(want + 8, i & 0xff, 4);
		memcpy(want + 16, &v, 4);
		memcpy(params, &at, 8);
		memcpy(params + 8, &v, 4);
		ck_assert_int_gt(vc_ring_guest_write(&e.g, VC_CU_vcMemcpy, 0, 0, &h, sizeof(h), src, sizeof(src)), 0);
		ck_assert_int_gt(vc_ring_guest_write(&e.g, VC_CU_vcMemset, 0, 0, &m, sizeof(m), NULL, 0), 0);
		ck_assert_int_gt(vc_ring_guest_write(&e.g, VC_CU_vcLaunch, 0, 0, &l, sizeof(l), params, sizeof(params)),
				 0);
		sseq = vc_ring_guest_write(&e.g, VC_CU_vcSync, VC_CMD_F_REPLY, slot, &sy, sizeof(sy), NULL, 0);
		eseq = vc_ring_guest_write(&e.g, VC_OP_ECHO, VC_CMD_F_REPLY, (slot + 1) % 8, &er, sizeof(er), &token,
					   sizeof(token));
		ck_assert_int_gt(sseq, 0);
		ck_assert_int_gt(eseq, 0);
		ck_assert_int_eq(vc_ring_guest_publish(&e.g), 0);
		ck_assert_int_eq(vc_ring_guest_wait_reply(&e.g, (slot + 1) % 8, (uint64_t)eseq), 0);
		ck_assert_int_eq(vc_ring_guest_read_reply(&e.g, (slot + 1) % 8, (uint64_t)eseq, &st, &echo,
							  sizeof(echo)), 8);
		ck_assert_int_eq(st, 0);
		ck_assert_uint_eq(echo, token);
		ck_assert_int_eq(vc_ring_guest_wait_reply(&e.g, slot, (uint64_t)sseq), 0);
		ck_assert_int_eq(vc_ring_guest_read_reply(&e.g, slot, (uint64_t)sseq, &st, NULL, 0), 0);
		ck_assert_int_eq(st, 0);
		struct vc_cu_req_memcpy r = {.ctx = ctx, .dir = VC_CU_COPY_DTOH, .src = d + off, .len = sizeof(src),
					     .host = VC_CU_HOST_INLINE};
		ck_assert_int_eq(cu_call(&e, slot, VC_CU_vcMemcpy, &r, sizeof(r), NULL, 0, rep, sizeof(rep)), 0);
		ck_assert_mem_eq(rep + VC_CU_REP_MAX, want, sizeof(want));
	}
	int32_t code;
	uint64_t eseq;

	ck_assert(!vc_ring_guest_error(&e.g, &code, &eseq));
	vc_cuda_driver_standin_stats(&launches, &bytes, &allocs);
	ck_assert_uint_eq(launches - launches0, (uint64_t)n);

	struct vc_session_stats st;
	vc_session_get_stats(e.s, &st);
	ck_assert_uint_eq(st.fatal, 0);
	env_fini(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("threads");
	TCase *t = tcase_create("ring");
	SRunner *sr;
	int failed;

	tcase_set_timeout(t, 120);
	tcase_add_test(t, producer_consumer_threads);
	tcase_add_test(t, stop_wakes_a_sleeping_server);
	tcase_add_test(t, fatal_wakes_a_sleeping_guest);
	tcase_add_test(t, cuda_ops_with_late_replies);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
