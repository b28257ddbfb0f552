/* SPDX-License-Identifier: MIT */
/*
 * test_mgmt_place.c - the placement policy (mgmt/place.c): most memory not
 * promised to other VMs, then least total weight, then fewest VMs, then the
 * lowest index; drained, unhealthy and vanished GPUs take no new VMs; a VM
 * being placed does not count against itself; refusals say why; a VM of
 * several GPUs takes free ones whole.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "place.h"

#define GiB (UINT64_C(1) << 30)

static struct vc_gpu G[4];
static struct vc_vm V[8];
static size_t NG, NV;

static void gpu(const char *uuid, uint64_t mem)
{
	struct vc_gpu *g = &G[NG];

	memset(g, 0, sizeof(*g));
	snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
	g->index = (int)NG++;
	g->mem_total = mem;
	g->present = true;
}

static void vm(const char *name, const char *gpu_uuid, uint64_t quota, uint32_t weight)
{
	struct vc_vm *v = &V[NV++];

	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(v->gpu, sizeof(v->gpu), "%s", gpu_uuid);
	v->mem_quota = quota;
	v->weight = weight;
}

/* Place a VM of @quota named @name (left out of the load), return the index. */
static int pick(const char *name, uint64_t quota, char *why, size_t len)
{
	struct vc_place_gpu load[4];

	vc_place_load(G, NG, V, NV, name, load);
	return vc_place_pick(load, NG, quota, why, len);
}

static void setup(void)
{
	NG = NV = 0;
	gpu("GPU-a", 80 * GiB);
	gpu("GPU-b", 40 * GiB);
}

START_TEST(most_unpromised_memory_wins)
{
	char why[256];

	ck_assert_int_eq(pick("x", 10 * GiB, why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "most memory not promised"));
	vm("vm1", "GPU-a", 30 * GiB, 100);
	/* 50 GiB left on a against 40 on b: still a, shared */
	ck_assert_int_eq(pick("x", 10 * GiB, why, sizeof(why)), 0);
	vm("vm2", "GPU-a", 20 * GiB, 100);
	/* 30 against 40: b */
	ck_assert_int_eq(pick("x", 10 * GiB, why, sizeof(why)), 1);
}
END_TEST

START_TEST(ties_go_to_least_weight_then_fewest_vms_then_index)
{
	char why[256];

	vm("vm1", "GPU-a", 40 * GiB, 300);   /* a: 40 GiB free, weight 300 */
	vm("vm2", "GPU-b", 0, 100);          /* b: 40 GiB free, weight 100 */
	ck_assert_int_eq(pick("x", 1 * GiB, why, sizeof(why)), 1);
	ck_assert_ptr_nonnull(strstr(why, "least total weight"));
	vm("vm3", "GPU-b", 0, 200);          /* b: weight 300 too, 2 VMs */
	ck_assert_int_eq(pick("x", 1 * GiB, why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "fewest VMs"));
	NV = 0;
	G[1].mem_total = 80 * GiB;           /* identical GPUs: the lower index */
	ck_assert_int_eq(pick("x", 1 * GiB, why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "lower index"));
}
END_TEST

START_TEST(drained_unhealthy_and_vanished_take_nothing)
{
	char why[256];

	G[0].drained = true;
	ck_assert_int_eq(pick("x", 1 * GiB, why, sizeof(why)), 1);
	G[1].health = VC_GPU_UNHEALTHY;
	ck_assert_int_eq(pick("x", 1 * GiB, why, sizeof(why)), -ENODEV);
	ck_assert_ptr_nonnull(strstr(why, "undrain"));
	G[0].drained = false;
	G[0].present = false;
	ck_assert_int_eq(pick("x", 1 * GiB, why, sizeof(why)), -ENODEV);
	G[0].present = true;
	ck_assert_int_eq(pick("x", 1 * GiB, why, sizeof(why)), 0);
}
END_TEST

START_TEST(no_room_is_refused_with_the_largest_gap)
{
	char why[256];

	vm("vm1", "GPU-a", 70 * GiB, 100);
	ck_assert_int_eq(pick("x", 50 * GiB, why, sizeof(why)), -ENOSPC);
	ck_assert_ptr_nonnull(strstr(why, "50 GiB"));
	ck_assert_ptr_nonnull(strstr(why, "the most is 40 GiB"));
	ck_assert_ptr_nonnull(strstr(why, "--mem-quota"));
	/* exactly what is left fits */
	ck_assert_int_eq(pick("x", 40 * GiB, why, sizeof(why)), 1);
}
END_TEST

START_TEST(a_vm_does_not_count_against_itself)
{
	char why[256];

	vm("vm1", "GPU-b", 40 * GiB, 100);
	vm("vm2", "GPU-a", 80 * GiB, 100);
	/* vm1 moving or resizing: its own 40 GiB on b are free to it */
	ck_assert_int_eq(pick("vm1", 40 * GiB, why, sizeof(why)), 1);
	ck_assert_int_eq(pick("other", 1 * GiB, why, sizeof(why)), -ENOSPC);
}
END_TEST

START_TEST(load_sums_and_saturates)
{
	struct vc_place_gpu load[4];

	vm("vm1", "GPU-a", UINT64_MAX - 5, 7);
	vm("vm2", "GPU-a", 100, 3);
	vm("vm3", "", 100, 3); /* unplaced: counts nowhere */
	vc_place_load(G, NG, V, NV, NULL, load);
	ck_assert_uint_eq(load[0].promised, UINT64_MAX);
	ck_assert_uint_eq(load[0].weight, 10);
	ck_assert_uint_eq(load[0].nvms, 2);
	ck_assert_uint_eq(vc_place_unpromised(&load[0]), 0);
	ck_assert_uint_eq(load[1].nvms, 0);
	ck_assert(!vc_place_fits(&load[0], 1));
	ck_assert(vc_place_fits(&load[1], 40 * GiB));
	ck_assert(!vc_place_fits(&load[1], 40 * GiB + 1));
}
END_TEST

/* A VM of several GPUs: free GPUs, lowest indices first; each promised whole. */
START_TEST(whole_gpus_take_free_ones_and_promise_all)
{
	struct vc_place_gpu load[4];
	int pos[4];
	char why[256];

	gpu("GPU-c", 80 * GiB);
	gpu("GPU-d", 80 * GiB);
	vm("s", "GPU-b", 8 * GiB, 100);
	vc_place_load(G, NG, V, NV, NULL, load);
	ck_assert_int_eq(vc_place_pick_whole(load, NG, 2, pos, why, sizeof(why)), 0);
	ck_assert_int_eq(pos[0], 0); /* GPU-a: free, the lowest index */
	ck_assert_int_eq(pos[1], 2); /* GPU-c: GPU-b has a VM */
	/* three free GPUs there are not */
	ck_assert_int_eq(vc_place_pick_whole(load, NG, 4, pos, why, sizeof(why)), -ENOSPC);
	ck_assert_ptr_nonnull(strstr(why, "3 of the GPUs"));
	/* placed: each of its GPUs is promised whole and takes no other VM */
	vm("w", "GPU-a", 1 * GiB, 100);
	V[NV - 1].ngpus = 2;
	snprintf(V[NV - 1].more[0], sizeof(V[NV - 1].more[0]), "GPU-c");
	vc_place_load(G, NG, V, NV, NULL, load);
	ck_assert_uint_eq(load[0].promised, 80 * GiB);
	ck_assert_uint_eq(load[2].promised, 80 * GiB);
	ck_assert_str_eq(load[2].whole, "w");
	ck_assert(!vc_place_fits(&load[0], 1));
	ck_assert(!vc_place_free(&load[2]));
	ck_assert_int_eq(vc_place_pick(load, NG, 8 * GiB, why, sizeof(why)), 3); /* GPU-d, not GPU-a or -c */
	ck_assert_int_eq(vc_place_pick_whole(load, NG, 2, pos, why, sizeof(why)), -ENOSPC);
	/* placing it again: its own GPUs are free for it */
	vc_place_load(G, NG, V, NV, "w", load);
	ck_assert_int_eq(vc_place_pick_whole(load, NG, 2, pos, why, sizeof(why)), 0);
	ck_assert_int_eq(pos[0], 0);
	ck_assert_int_eq(pos[1], 2);
	/* drained GPUs are not counted as able to take it */
	G[0].drained = G[2].drained = G[3].drained = true;
	vc_place_load(G, NG, V, NV, "w", load);
	ck_assert_int_eq(vc_place_pick_whole(load, NG, 2, pos, why, sizeof(why)), -ENODEV);
	ck_assert_ptr_nonnull(strstr(why, "undrain"));
}
END_TEST

/* A VM of several GPUs on one NUMA node where one has enough free GPUs. */
START_TEST(whole_gpus_stay_on_one_numa_node)
{
	struct vc_place_gpu load[4];
	int pos[4];
	char why[256];

	gpu("GPU-c", 80 * GiB);
	gpu("GPU-d", 80 * GiB);
	G[0].numa_node = G[1].numa_node = 0;
	G[2].numa_node = G[3].numa_node = 1;
	vm("s", "GPU-a", 8 * GiB, 100);
	vc_place_load(G, NG, V, NV, NULL, load);
	ck_assert_int_eq(vc_place_pick_whole(load, NG, 2, pos, why, sizeof(why)), 0);
	ck_assert_int_eq(pos[0], 2); /* not GPU-b and GPU-c across the nodes */
	ck_assert_int_eq(pos[1], 3);
	ck_assert_ptr_nonnull(strstr(why, "NUMA node 1"));
	/* no node has two free: across them, the lowest indices */
	vm("t", "GPU-c", 8 * GiB, 100);
	vc_place_load(G, NG, V, NV, NULL, load);
	ck_assert_int_eq(vc_place_pick_whole(load, NG, 2, pos, why, sizeof(why)), 0);
	ck_assert_int_eq(pos[0], 1);
	ck_assert_int_eq(pos[1], 3);
	ck_assert_ptr_nonnull(strstr(why, "no NUMA node has 2 free"));
	/* nodes unknown: one group, the lowest indices */
	NV = 0;
	for (size_t i = 0; i < NG; i++)
		G[i].numa_node = -1;
	vc_place_load(G, NG, V, NV, NULL, load);
	ck_assert_int_eq(vc_place_pick_whole(load, NG, 3, pos, why, sizeof(why)), 0);
	ck_assert_int_eq(pos[0] + pos[1] + pos[2], 0 + 1 + 2);
}
END_TEST

START_TEST(no_gpus_at_all)
{
	char why[256];

	NG = 0;
	ck_assert_int_eq(pick("x", 1, why, sizeof(why)), -ENODEV);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mgmt_place");
	TCase *t = tcase_create("policy");
	SRunner *r;
	int failed;

	tcase_add_checked_fixture(t, setup, NULL);
	tcase_add_test(t, most_unpromised_memory_wins);
	tcase_add_test(t, ties_go_to_least_weight_then_fewest_vms_then_index);
	tcase_add_test(t, drained_unhealthy_and_vanished_take_nothing);
	tcase_add_test(t, no_room_is_refused_with_the_largest_gap);
	tcase_add_test(t, a_vm_does_not_count_against_itself);
	tcase_add_test(t, load_sums_and_saturates);
	tcase_add_test(t, no_gpus_at_all);
	tcase_add_test(t, whole_gpus_take_free_ones_and_promise_all);
	tcase_add_test(t, whole_gpus_stay_on_one_numa_node);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
