/* SPDX-License-Identifier: MIT */
/*
 * test_handles.c - a session's handle table (host-backend/cuda/handles.c) on
 * its own: ids are never issued twice (a slot whose generation would wrap is
 * retired), forged ids (tag, kind, generation, index) are refused, and a
 * handle goes with its owner, through any depth (context, module, function).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "cuda/exec_priv.h"

#define IDX(id) ((uint32_t)((id) & 0xffffffu))

static struct vc_cu_session g_x;

static void setup(void)
{
	memset(&g_x, 0, sizeof(g_x));
	ck_assert_int_eq(vc_cu_handles_init(&g_x), 0);
}

static void teardown(void)
{
	vc_cu_handles_fini(&g_x);
}

static void *fake(uintptr_t n)
{
	return (void *)(0x10000 + n * 64);
}

static bool alive(int kind, uint64_t id)
{
	void *real = NULL;

	return vc_cu_lookup(&g_x, kind, id, &real) == 0 && real;
}

START_TEST(generation_wrap_retires_the_slot)
{
	uint64_t a, b, c, d;

	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUEVENT, fake(1), &a), 0);
	/* Force the slot to the end of its generations. */
	g_x.h[IDX(a)].gen = UINT32_MAX - 1;
	ck_assert_int_eq(vc_cu_find(&g_x, VC_H_CUEVENT, fake(1), &a), 0);
	vc_cu_forget(&g_x, VC_H_CUEVENT, a);
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUEVENT, fake(2), &b), 0);
	ck_assert_uint_eq(IDX(b), IDX(a));    /* the slot is reused once more */
	ck_assert_uint_eq(g_x.h[IDX(b)].gen, UINT32_MAX);
	ck_assert_uint_ne(b, a);
	ck_assert(!alive(VC_H_CUEVENT, a));
	vc_cu_forget(&g_x, VC_H_CUEVENT, b);
	/* ... and then retired: the next handle takes another slot, and no id
	 * of that slot is ever valid again. */
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUEVENT, fake(3), &c), 0);
	ck_assert_uint_ne(IDX(c), IDX(b));
	for (uint64_t gen = 0; gen < 4; gen++) {
		uint64_t forged = (b & ~(0xffffffffull << 24)) | (gen << 24);

		ck_assert(!alive(VC_H_CUEVENT, forged));
	}
	ck_assert(!alive(VC_H_CUEVENT, b));
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUEVENT, fake(4), &d), 0);
	ck_assert_uint_ne(IDX(d), IDX(b));
	ck_assert(alive(VC_H_CUEVENT, c) && alive(VC_H_CUEVENT, d));
}
END_TEST

START_TEST(generations_are_wide)
{
	uint64_t a, b;

	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUSTREAM, fake(1), &a), 0);
	/* 2^24 reuses (the old width) later, the id differs from the first. */
	g_x.h[IDX(a)].gen += 1u << 24;
	vc_cu_forget_slot(&g_x, IDX(a));
	g_x.h[IDX(a)].gen -= 1;
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUSTREAM, fake(1), &b), 0);
	ck_assert_uint_eq(IDX(a), IDX(b));
	ck_assert_uint_ne(a, b);
	ck_assert(!alive(VC_H_CUSTREAM, a));
	ck_assert(alive(VC_H_CUSTREAM, b));
}
END_TEST

START_TEST(forged_ids_are_refused)
{
	uint64_t a;
	void *real;

	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUSTREAM, fake(1), &a), 0);
	ck_assert(alive(VC_H_CUSTREAM, a));
	ck_assert(!alive(VC_H_CUEVENT, a));                    /* another kind */
	ck_assert(!alive(VC_H_CUSTREAM, a ^ (1ull << 56)));    /* kind bits */
	ck_assert(!alive(VC_H_CUSTREAM, a ^ (1ull << 24)));    /* generation */
	ck_assert(!alive(VC_H_CUSTREAM, a ^ (1ull << 55)));    /* generation's top bit */
	ck_assert(!alive(VC_H_CUSTREAM, a ^ (3ull << 62)));    /* tag */
	ck_assert(!alive(VC_H_CUSTREAM, a + 1));               /* index past the table */
	ck_assert(!alive(VC_H_CUSTREAM, a | 0xffffffull));
	ck_assert_int_eq(vc_cu_lookup(&g_x, VC_H_CUCONTEXT, a, &real), CUDA_ERROR_INVALID_CONTEXT);
}
END_TEST

START_TEST(dependants_go_with_their_owner)
{
	uint64_t ctx, mod, fn, fn2, st, lib, kern, kfn, other;

	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUCONTEXT, fake(1), &ctx), 0);
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUMODULE, fake(2), ctx, &mod), 0);
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUFUNCTION, fake(3), mod, &fn), 0);
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUFUNCTION, fake(4), mod, &fn2), 0);
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUSTREAM, fake(5), ctx, &st), 0);
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CULIBRARY, fake(6), &lib), 0);
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUKERNEL, fake(7), lib, &kern), 0);
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUFUNCTION, fake(8), kern, &kfn), 0);
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUSTREAM, fake(9), &other), 0);
	/* a function reached again keeps its first owner */
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUFUNCTION, fake(3), kern, &fn), 0);
	ck_assert_uint_eq(g_x.h[IDX(fn)].owner, IDX(mod));
	ck_assert_uint_eq(g_x.h[IDX(mod)].nchild, 2);
	/* unloading a module takes its functions only */
	vc_cu_forget(&g_x, VC_H_CUMODULE, mod);
	ck_assert(!alive(VC_H_CUFUNCTION, fn) && !alive(VC_H_CUFUNCTION, fn2));
	ck_assert(alive(VC_H_CUSTREAM, st) && alive(VC_H_CUCONTEXT, ctx));
	ck_assert_uint_eq(g_x.h[IDX(ctx)].nchild, 1);
	/* a library takes its kernels and their functions */
	vc_cu_forget(&g_x, VC_H_CULIBRARY, lib);
	ck_assert(!alive(VC_H_CUKERNEL, kern) && !alive(VC_H_CUFUNCTION, kfn));
	/* a context's own go when it does, through every level */
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUMODULE, fake(10), ctx, &mod), 0);
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUFUNCTION, fake(11), mod, &fn), 0);
	vc_cu_forget_owned(&g_x, IDX(ctx));
	ck_assert(!alive(VC_H_CUSTREAM, st) && !alive(VC_H_CUMODULE, mod) && !alive(VC_H_CUFUNCTION, fn));
	ck_assert(alive(VC_H_CUCONTEXT, ctx) && alive(VC_H_CUSTREAM, other));
	/* the driver reusing an address gives a new id, not the dead one */
	ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUFUNCTION, fake(11), 0, &fn2), 0);
	ck_assert_uint_ne(fn2, fn);
}
END_TEST

/* An owner written directly (not counted) still takes its dependant down at
 * lookup, and a new object at the same address gets a new id. */
START_TEST(uncounted_owner_is_still_checked)
{
	uint64_t mod, fn, fn2;

	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUMODULE, fake(1), &mod), 0);
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUFUNCTION, fake(2), &fn), 0);
	g_x.h[IDX(fn)].owner = IDX(mod);
	vc_cu_forget(&g_x, VC_H_CUMODULE, mod);
	ck_assert(!alive(VC_H_CUFUNCTION, fn));
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUFUNCTION, fake(2), &fn2), 0);
	ck_assert_uint_ne(fn2, fn);
	ck_assert(alive(VC_H_CUFUNCTION, fn2));
}
END_TEST

/* Whether slot @idx is among the listed streams. */
static bool listed(uint32_t idx)
{
	uint32_t n;
	const uint32_t *v = vc_cu_stream_slots(&g_x, &n);

	for (uint32_t i = 0; i < n; i++)
		if (v[i] == idx)
			return true;
	return false;
}

/* The live streams are listed, each once, whichever way they end: a
 * destroy, their owner's end, a new object at the address of a dead one;
 * other kinds never are. */
START_TEST(live_streams_are_listed)
{
	uint64_t ctx, st[40], ev, again;
	uint32_t n;

	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUCONTEXT, fake(1), &ctx), 0);
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUEVENT, fake(2), &ev), 0);
	for (uintptr_t i = 0; i < 40; i++) /* past the list's first growth */
		ck_assert_int_eq(vc_cu_publish_child(&g_x, VC_H_CUSTREAM, fake(100 + i), i % 2 ? ctx : 0, &st[i]), 0);
	/* published again: the same id, listed once */
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUSTREAM, fake(100), &again), 0);
	ck_assert_uint_eq(again, st[0]);
	vc_cu_stream_slots(&g_x, &n);
	ck_assert_uint_eq(n, 40);
	for (int i = 0; i < 40; i++)
		ck_assert(listed(IDX(st[i])));
	ck_assert(!listed(IDX(ctx)) && !listed(IDX(ev)));
	vc_cu_forget(&g_x, VC_H_CUSTREAM, st[4]);
	ck_assert(!listed(IDX(st[4])));
	/* the context takes its twenty */
	vc_cu_forget(&g_x, VC_H_CUCONTEXT, ctx);
	vc_cu_stream_slots(&g_x, &n);
	ck_assert_uint_eq(n, 19);
	for (int i = 0; i < 40; i++)
		ck_assert(listed(IDX(st[i])) == (i % 2 == 0 && i != 4));
	/* a slot freed by a stream and taken by an event is not listed */
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUEVENT, fake(3), &ev), 0);
	ck_assert(!listed(IDX(ev)));
	vc_cu_stream_slots(&g_x, &n);
	ck_assert_uint_eq(n, 19);
}
END_TEST

/* Every lookup of a stream marks it as maybe busy (the poll of a context
 * synchronisation asks only those), a new one too; lookups of other kinds
 * mark nothing, and the per-thread stream's id marks the session. */
START_TEST(streams_looked_up_are_marked_busy)
{
	uint64_t st, ev;
	void *real;

	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUSTREAM, fake(1), &st), 0);
	ck_assert_int_eq(vc_cu_publish(&g_x, VC_H_CUEVENT, fake(2), &ev), 0);
	ck_assert_uint_eq(g_x.h[IDX(st)].busy, 1);
	g_x.h[IDX(st)].busy = 0;
	g_x.h[IDX(ev)].busy = 0;
	ck_assert_int_eq(vc_cu_lookup(&g_x, VC_H_CUEVENT, ev, &real), 0);
	ck_assert_uint_eq(g_x.h[IDX(ev)].busy, 0);
	ck_assert_uint_eq(g_x.h[IDX(st)].busy, 0);
	ck_assert_int_eq(vc_cu_lookup(&g_x, VC_H_CUSTREAM, st, &real), 0);
	ck_assert_uint_eq(g_x.h[IDX(st)].busy, 1);
	/* a forged id marks nothing */
	g_x.h[IDX(st)].busy = 0;
	ck_assert_int_ne(vc_cu_lookup(&g_x, VC_H_CUSTREAM, st + (1ull << 24), &real), 0);
	ck_assert_uint_eq(g_x.h[IDX(st)].busy, 0);
	ck_assert(!g_x.per_thread_used);
	ck_assert_int_eq(vc_cu_lookup(&g_x, VC_H_CUSTREAM, (uint64_t)(uintptr_t)CU_STREAM_LEGACY, &real), 0);
	ck_assert(!g_x.per_thread_used);
	ck_assert_int_eq(vc_cu_lookup(&g_x, VC_H_CUSTREAM, (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD, &real), 0);
	ck_assert(g_x.per_thread_used);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("handles");
	TCase *t = tcase_create("table");
	SRunner *r;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, generation_wrap_retires_the_slot);
	tcase_add_test(t, generations_are_wide);
	tcase_add_test(t, forged_ids_are_refused);
	tcase_add_test(t, dependants_go_with_their_owner);
	tcase_add_test(t, uncounted_owner_is_still_checked);
	tcase_add_test(t, live_streams_are_listed);
	tcase_add_test(t, streams_looked_up_are_marked_busy);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
