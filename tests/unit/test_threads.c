/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c - the ring with a real guest thread and a real server thread
 * (vc_session_start), real doorbell and completion eventfds. Built under
 * ThreadSanitizer in CI: every shared access must be ordered by the atomics
 * the protocol documents. Also checks that the doorbell/IDLE protocol loses no
 * wake-up: a lost one shows as a stall the test times out on.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vc_layout.h"
#include "vc_ring_guest.h"
#include "vc_shm.h"
#include "vcuda/server.h"

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
	p.exec = &vc_exec_ci_standin_ops;
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
	ck_assert_int_gt(vc_ring_guest_write(&e.g, 0x7777, 0, 0, NULL, 0, NULL, 0), 0);
	int64_t seq = vc_ring_guest_write(&e.g, VC_OP_SYNC, VC_CMD_F_REPLY, 0, NULL, 0, NULL, 0);
	ck_assert_int_eq(vc_ring_guest_publish(&e.g), 0);
	ck_assert_int_eq(vc_ring_guest_wait(&e.g, (uint64_t)seq), -EPROTO);
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
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
