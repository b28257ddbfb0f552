/* SPDX-License-Identifier: MIT */
#include "resources/acct.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "vc_shm.h"
#include "vc_time.h"

/*
 * The page is shared by the listener and its workers (never a guest); its
 * words go through vc_shm.h:
 *  - state publishes an entry's client: the worker writes pid, uid and comm,
 *    then stores 2 with release (vc_acct_client()); the listener loads state
 *    with acquire before it reads them (server_main.c, admin.c).
 *  - used[], commands and active_ns are counts and figures: every change is
 *    one atomic read-modify-write or store, so that no update is lost, and
 *    they publish nothing, so every access is relaxed. used[] against
 *    quota[] is decided by charge() alone, with a compare-and-swap.
 *  - refused[] and launches are counts the workers add to (charge(),
 *    vc_acct_launched()) and the listener's status reads: relaxed.
 *  - quota[], weight and idle_timeout_s are set by the listener (main()
 *    before any fork, then admin.c) and read relaxed: quota[] by the workers
 *    (a new quota applies from their next charge), the others by the
 *    listener alone.
 * The other fields of an entry (id, kind, slot, worker, opened_at, announced,
 * stop_why) are the listener's own: no worker reads or writes them, so the
 * listener uses plain accesses. It writes an entry's fields before forking
 * its worker (fork orders them for the child) and frees the entry only after
 * reaping it.
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
	if (WEXITSTATUS(status) == VC_WORKER_EXIT_STUCK)
		return "stuck";
	return "failed";
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

		/* Only the listener (this process) stores 0, in vc_acct_release(),
		 * after reaping the entry's worker: no other process touches an
		 * entry read as 0, so relaxed. */
		if (vc_shm_load32(&e->state, VC_RELAXED))
			continue;
		memset(e, 0, sizeof(*e));
		e->id = id;
		e->kind = kind;
		e->slot = slot;
		e->active_ns = vc_now_ns();
		e->opened_at = (uint64_t)time(NULL); /* wall clock: shown to people */
		/* Relaxed: the entry's worker is forked after this (fork orders the
		 * stores above for it), and the listener's readers of state look
		 * for 2 only. */
		vc_shm_store32(&e->state, 1, VC_RELAXED);
		return (int)i;
	}
	return -ENOSPC;
}

uint64_t vc_acct_release(struct vc_acct *a, int i)
{
	struct vc_acct_entry *e = &a->e[i];
	uint64_t held[2];

	/* The worker was reaped: its last changes of e->used[] came before its
	 * exit. The totals are counts that other workers change concurrently
	 * (relaxed RMWs in charge() and uncharge()): an atomic exchange and
	 * subtraction lose none of them, and order nothing, so relaxed. */
	for (int r = 0; r < 2; r++) {
		held[r] = vc_shm_xchg64(&e->used[r], 0, VC_RELAXED);
		vc_shm_sub64(&a->used[r], held[r], VC_RELAXED);
	}
	/* The same for its memory by device (vc_acct_on_device()). */
	for (unsigned d = 0; d < VC_ACCT_DEVS; d++)
		vc_shm_sub64(&a->dev_used[d], vc_shm_xchg64(&e->dev_mem[d], 0, VC_RELAXED), VC_RELAXED);
	/* Read only by this process (vc_acct_reserve(), the readers of state
	 * 2): relaxed. */
	vc_shm_store32(&e->state, 0, VC_RELAXED);
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
	/* Release pairs with the listener's acquire loads of state (reap() and
	 * watch_sessions() in server_main.c, status() in admin.c): a listener
	 * that sees 2 sees pid, uid and comm above. */
	vc_shm_store32(&g_self->state, 2, VC_RELEASE);
}

int vc_acct_charge(enum vc_acct_res res, uint64_t bytes)
{
	uint64_t used, quota;

	if (!g_self)
		return 0;
	/* The listener's relaxed store in admin.c set(), or its value at start:
	 * a new quota applies from the next charge; it publishes nothing. */
	quota = vc_shm_load64(&g_acct->quota[res], VC_RELAXED);
	/* The total is a count that every worker changes with relaxed RMWs
	 * (this compare-and-swap, uncharge(), vc_acct_release()): the CAS alone
	 * decides against the quota, so no two charges both slip under it; a
	 * count publishes nothing: relaxed. */
	used = vc_shm_load64(&g_acct->used[res], VC_RELAXED);
	do {
		if (quota && (bytes > quota || used > quota - bytes)) {
			/* A count for the listener's status (relaxed load in
			 * admin.c): publishes nothing, so relaxed. */
			vc_shm_add64(&g_acct->refused[res], 1, VC_RELAXED);
			return -ENOMEM;
		}
	} while (!vc_shm_cas64(&g_acct->used[res], &used, used + bytes, VC_RELAXED, VC_RELAXED));
	/* This session's count: read relaxed by the listener's status, and by
	 * vc_acct_release() after this worker was reaped. */
	vc_shm_add64(&g_self->used[res], bytes, VC_RELAXED);
	return 0;
}

/* Take @bytes off this worker's count @mine and the server's @total, never
 * below zero for @mine, whatever a caller miscounted. Counts, as in
 * charge(): relaxed RMWs; only this worker changes its own (until the
 * listener's vc_acct_release() after it was reaped). */
static void count_down(uint64_t *mine, uint64_t *total, uint64_t bytes)
{
	uint64_t have = vc_shm_load64(mine, VC_RELAXED);

	if (bytes > have)
		bytes = have;
	vc_shm_sub64(mine, bytes, VC_RELAXED);
	vc_shm_sub64(total, bytes, VC_RELAXED);
}

void vc_acct_uncharge(enum vc_acct_res res, uint64_t bytes)
{
	if (g_self)
		count_down(&g_self->used[res], &g_acct->used[res], bytes);
}

void vc_acct_launched(void)
{
	if (!g_self)
		return;
	/* A count that every worker adds to (atomic, so that none is lost) and
	 * the listener's status reads: it publishes nothing, so relaxed. */
	vc_shm_add64(&g_acct->launches, 1, VC_RELAXED);
}

void vc_acct_activity(uint64_t n)
{
	if (!g_self)
		return;
	/* Figures for the listener's relaxed loads (status, and the idle check
	 * in watch_sessions(): a late view only delays a reclaim by one look).
	 * The serving thread and the worker's main thread both come here. */
	if (n)
		vc_shm_add64(&g_self->commands, n, VC_RELAXED);
	vc_shm_store64(&g_self->active_ns, vc_now_ns(), VC_RELAXED);
}

void vc_acct_mem_view(uint64_t *quota, uint64_t *used)
{
	*quota = *used = 0;
	if (!g_acct)
		return;
	/* Figures, as in charge(): the quota the listener stored, the total
	 * every worker counts with relaxed RMWs; they publish nothing. */
	*quota = vc_shm_load64(&g_acct->quota[VC_ACCT_MEM], VC_RELAXED);
	*used = vc_shm_load64(&g_acct->used[VC_ACCT_MEM], VC_RELAXED);
}

void vc_acct_on_device(int dev, uint64_t bytes, bool add)
{
	if (!g_self || dev < 0 || (unsigned)dev >= VC_ACCT_DEVS)
		return;
	if (!add) {
		count_down(&g_self->dev_mem[dev], &g_acct->dev_used[dev], bytes);
		return;
	}
	/* Counts, as in charge(): relaxed RMWs; they publish nothing. */
	vc_shm_add64(&g_self->dev_mem[dev], bytes, VC_RELAXED);
	vc_shm_add64(&g_acct->dev_used[dev], bytes, VC_RELAXED);
}

uint64_t vc_acct_device_used(int dev)
{
	if (!g_acct || dev < 0 || (unsigned)dev >= VC_ACCT_DEVS)
		return 0;
	/* A figure every worker counts with relaxed RMWs: publishes nothing. */
	return vc_shm_load64(&g_acct->dev_used[dev], VC_RELAXED);
}

void vc_acct_monitor(void)
{
	if (!g_self)
		return;
	/* A flag other workers read relaxed in vc_acct_procs(): a late view
	 * lists a monitor once, nothing more. */
	vc_shm_store32(&g_self->monitor, 1, VC_RELAXED);
}

uint32_t vc_acct_procs(struct vc_acct_proc *out, uint32_t cap, int dev)
{
	uint32_t n = 0;

	if (!g_acct)
		return 0;
	for (uint32_t i = 0; i < VC_ACCT_MAX; i++) {
		struct vc_acct_entry *e = &g_acct->e[i];
		uint32_t pid, k;
		uint64_t used;

		/* Acquire pairs with the release store of state in
		 * vc_acct_client(): an entry read as open has its pid. */
		if (vc_shm_load32(&e->state, VC_ACQUIRE) != 2 || vc_shm_load32(&e->monitor, VC_RELAXED))
			continue;
		pid = e->pid;
		/* counts, as in charge() and vc_acct_on_device() */
		if (dev < 0)
			used = vc_shm_load64(&e->used[VC_ACCT_MEM], VC_RELAXED);
		else if ((unsigned)dev >= VC_ACCT_DEVS || !(used = vc_shm_load64(&e->dev_mem[dev], VC_RELAXED)))
			continue; /* nothing on that device */
		for (k = 0; k < n && k < cap; k++)
			if (out[k].pid == pid)
				break;
		if (k < n && k < cap) {
			out[k].used += used;
			continue;
		}
		if (n < cap)
			out[n] = (struct vc_acct_proc){.pid = pid, .used = used};
		n++;
	}
	return n;
}
