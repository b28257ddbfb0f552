/* SPDX-License-Identifier: MIT */
#include "resources/acct.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

/*
 * Every field that more than one process changes is changed with atomic
 * read-modify-write operations on this shared mapping; readers (the listener
 * answering a status request) use relaxed loads: the figures are reports,
 * not synchronisation, except used[] against quota[], which only charge()
 * decides on, with a compare-and-swap.
 */
static struct vc_acct *g_acct;
static struct vc_acct_entry *g_self;

const char *vc_acct_end_reason(const struct vc_acct_entry *e, int status)
{
	if (e->stop_why == VC_ACCT_STOP_IDLE)
		return "idle";
	if (e->stop_why == VC_ACCT_STOP_SERVER)
		return "stopped";
	if (WIFSIGNALED(status))
		return "crashed";
	if (WEXITSTATUS(status) == 0)
		return "client-exit";
	if (WEXITSTATUS(status) == VC_WORKER_EXIT_FATAL)
		return "fatal";
	return "failed";
}

uint64_t vc_acct_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct vc_acct *vc_acct_create(void)
{
	void *p = mmap(NULL, sizeof(struct vc_acct), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	((struct vc_acct *)p)->weight = 100;
	return p;
}

int vc_acct_reserve(struct vc_acct *a, uint32_t id, uint32_t kind, uint32_t slot)
{
	for (uint32_t i = 0; i < VC_ACCT_MAX; i++) {
		struct vc_acct_entry *e = &a->e[i];

		/* Only the listener reserves and releases: no race on state 0. */
		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE))
			continue;
		memset(e, 0, sizeof(*e));
		e->id = id;
		e->kind = kind;
		e->slot = slot;
		e->active_ns = vc_acct_now_ns();
		e->opened_at = (uint64_t)time(NULL);
		__atomic_store_n(&e->state, 1, __ATOMIC_RELEASE);
		return (int)i;
	}
	return -ENOSPC;
}

uint64_t vc_acct_release(struct vc_acct *a, int i)
{
	struct vc_acct_entry *e = &a->e[i];
	uint64_t held[2];

	for (int r = 0; r < 2; r++) {
		held[r] = __atomic_exchange_n(&e->used[r], 0, __ATOMIC_ACQ_REL);
		__atomic_fetch_sub(&a->used[r], held[r], __ATOMIC_ACQ_REL);
	}
	__atomic_store_n(&e->state, 0, __ATOMIC_RELEASE);
	return held[VC_ACCT_MEM];
}

void vc_acct_bind(struct vc_acct *a, int i)
{
	g_acct = a;
	g_self = a && i >= 0 ? &a->e[i] : NULL;
}

void vc_acct_client(uint32_t pid, uint32_t uid, const char *comm)
{
	if (!g_self)
		return;
	g_self->pid = pid;
	g_self->uid = uid;
	strncpy(g_self->comm, comm, sizeof(g_self->comm) - 1);
	__atomic_store_n(&g_self->state, 2, __ATOMIC_RELEASE); /* pairs with the listener's acquire */
}

int vc_acct_charge(enum vc_acct_res res, uint64_t bytes)
{
	uint64_t used, quota;

	if (!g_self)
		return 0;
	quota = __atomic_load_n(&g_acct->quota[res], __ATOMIC_RELAXED);
	used = __atomic_load_n(&g_acct->used[res], __ATOMIC_RELAXED);
	do {
		if (quota && (bytes > quota || used > quota - bytes))
			return -ENOMEM;
	} while (!__atomic_compare_exchange_n(&g_acct->used[res], &used, used + bytes, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	__atomic_fetch_add(&g_self->used[res], bytes, __ATOMIC_RELAXED);
	return 0;
}

void vc_acct_uncharge(enum vc_acct_res res, uint64_t bytes)
{
	uint64_t mine;

	if (!g_self)
		return;
	/* Never below zero, whatever a caller miscounted. */
	mine = __atomic_load_n(&g_self->used[res], __ATOMIC_RELAXED);
	if (bytes > mine)
		bytes = mine;
	__atomic_fetch_sub(&g_self->used[res], bytes, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&g_acct->used[res], bytes, __ATOMIC_ACQ_REL);
}

void vc_acct_activity(uint64_t n)
{
	if (!g_self)
		return;
	if (n)
		__atomic_fetch_add(&g_self->commands, n, __ATOMIC_RELAXED);
	__atomic_store_n(&g_self->active_ns, vc_acct_now_ns(), __ATOMIC_RELAXED);
}
