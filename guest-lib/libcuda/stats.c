/* SPDX-License-Identifier: MIT */
/*
 * stats.c - VCUDA_STATS=1: counters per CUDA operation (stats.h). Relaxed
 * atomic adds on process memory (no shared memory is involved): the
 * counters are only summed at exit, so no access pairs with another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"
#include "vc_cuda_wire.h"
#include "vc_time.h"

#define NOPS (VC_CU_OP_END_ - VC_CU_OP_BASE)

struct counter {
	uint64_t calls, waited, wait_ns;
};

int vc_cu_stats_on;
static struct counter g_ops[NOPS];
static uint64_t g_local[VC_STAT_LOCAL_MAX];

/* vcExportSlot by table (VC_CU_EXPTAB_*) and slot. */
#define SLOT_TABLES 3u
#define SLOTS 64u /* 21318c60 slots 39 and 51 among them */
static struct counter g_slots[SLOT_TABLES][SLOTS];
static const char *const table_names[SLOT_TABLES] = {"6bd5fb6c", "21318c60", "1734dc26"};

static const char *const local_names[VC_STAT_LOCAL_MAX] = {
	[VC_STAT_STREAM_IS_CAPTURING] = "cuStreamIsCapturing",
	[VC_STAT_STREAM_CAPTURE_INFO] = "cuStreamGetCaptureInfo",
	[VC_STAT_PRIMARY_CTX_STATE] = "cuDevicePrimaryCtxGetState",
	[VC_STAT_FUNC_ATTRIBUTE] = "cuFuncGetAttribute",
	[VC_STAT_STREAM_QUERY] = "cuStreamQuery",
	[VC_STAT_EVENT_QUERY] = "cuEventQuery",
	[VC_STAT_STREAM_SYNC] = "cuStreamSynchronize",
	[VC_STAT_EVENT_SYNC] = "cuEventSynchronize",
	[VC_STAT_CTX_SYNC] = "cuCtxSynchronize",
	[VC_STAT_CTX_DEVICE] = "cuCtxGetDevice",
	[VC_STAT_KERNEL_SET_ATTRIBUTE] = "cuKernelSetAttribute",
	[VC_STAT_FUNC_SET_ATTRIBUTE] = "cuFuncSetAttribute",
};

uint64_t vc_cu_stats_now(void)
{
	return vc_now_ns();
}

void vc_cu_stats_op(uint32_t op, int waited, uint64_t ns)
{
	struct counter *c;

	if (op < VC_CU_OP_BASE || op >= VC_CU_OP_END_)
		return;
	c = &g_ops[op - VC_CU_OP_BASE];
	__atomic_add_fetch(&c->calls, 1, __ATOMIC_RELAXED);
	if (waited) {
		__atomic_add_fetch(&c->waited, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->wait_ns, ns, __ATOMIC_RELAXED);
	}
}

void vc_cu_stats_slot(uint32_t table, uint32_t slot, uint64_t ns)
{
	struct counter *c;

	if (table >= SLOT_TABLES || slot >= SLOTS)
		return;
	c = &g_slots[table][slot];
	__atomic_add_fetch(&c->calls, 1, __ATOMIC_RELAXED); /* every one waits for its reply */
	__atomic_add_fetch(&c->wait_ns, ns, __ATOMIC_RELAXED);
}

void vc_cu_stats_local(enum vc_cu_stat_local which)
{
	if ((unsigned)which < VC_STAT_LOCAL_MAX)
		__atomic_add_fetch(&g_local[which], 1, __ATOMIC_RELAXED);
}

static int by_wait(const void *a, const void *b)
{
	const struct counter *x = &g_ops[*(const uint32_t *)a], *y = &g_ops[*(const uint32_t *)b];

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return x->calls < y->calls ? 1 : x->calls > y->calls ? -1 : 0;
}

__attribute__((constructor)) static void stats_init(void)
{
	const char *v = getenv("VCUDA_STATS");

	vc_cu_stats_on = v && *v && strcmp(v, "0") != 0;
}

__attribute__((destructor)) static void stats_print(void)
{
	uint32_t idx[NOPS], n = 0;
	uint64_t calls = 0, waited = 0, ns = 0, local = 0;

	if (!vc_cu_stats_on)
		return;
	for (uint32_t i = 0; i < NOPS; i++)
		if (__atomic_load_n(&g_ops[i].calls, __ATOMIC_RELAXED))
			idx[n++] = i;
	qsort(idx, n, sizeof(idx[0]), by_wait);
	fprintf(stderr, "vcuda stats (pid %d): operations sent to the host, by time waited\n", (int)getpid());
	fprintf(stderr, "  %-40s %10s %10s %12s %9s\n", "operation", "calls", "waited", "wait_us", "us/wait");
	for (uint32_t k = 0; k < n; k++) {
		const struct counter *c = &g_ops[idx[k]];

		fprintf(stderr, "  %-40s %10llu %10llu %12.1f %9.2f\n", vc_cu_op_name(idx[k] + VC_CU_OP_BASE),
			(unsigned long long)c->calls, (unsigned long long)c->waited, c->wait_ns / 1e3,
			c->waited ? c->wait_ns / 1e3 / (double)c->waited : 0.0);
		calls += c->calls;
		waited += c->waited;
		ns += c->wait_ns;
	}
	fprintf(stderr, "  %-40s %10llu %10llu %12.1f\n", "total", (unsigned long long)calls,
		(unsigned long long)waited, ns / 1e3);
	for (uint32_t t = 0; t < SLOT_TABLES; t++)
		for (uint32_t sl = 0; sl < SLOTS; sl++) {
			const struct counter *c = &g_slots[t][sl];
			char name[48];

			if (!c->calls)
				continue;
			snprintf(name, sizeof(name), "  vcExportSlot %s slot %u", table_names[t], sl);
			fprintf(stderr, "  %-40s %10llu %10llu %12.1f %9.2f\n", name, (unsigned long long)c->calls,
				(unsigned long long)c->calls, c->wait_ns / 1e3, c->wait_ns / 1e3 / (double)c->calls);
		}
	for (int i = 0; i < VC_STAT_LOCAL_MAX; i++)
		local += g_local[i];
	if (!local)
		return;
	fprintf(stderr, "  answered in the guest (no round trip):\n");
	for (int i = 0; i < VC_STAT_LOCAL_MAX; i++)
		if (g_local[i])
			fprintf(stderr, "  %-40s %10llu\n", local_names[i], (unsigned long long)g_local[i]);
}
