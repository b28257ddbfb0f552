/* SPDX-License-Identifier: MIT */
/*
 * console.c - device printf output, written to this process's stdout.
 *
 * Natively the driver writes a kernel's printf output to the calling
 * process's stdout at synchronisation points. Here the driver runs in the
 * server's worker, which captures its stdout (host-backend/console.h) and,
 * before the reply of a call that synchronised, publishes in the control page
 * how many bytes it has captured. After every call the library compares that
 * count with what it has fetched, and before returning to the application
 * fetches the rest (vcConsole) and writes it through the C stdout stream, so
 * that it lands after the application's own buffered output, as natively.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vc_client.h"
#include "vc_cu_guest.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
/* Bytes fetched so far, by the host's count: stored under g_mu, read without
 * it as a hint (process memory; drain() asks the host again under g_mu). */
static uint64_t g_taken;

static void drain(struct vc_client *cl)
{
	size_t cap = vc_client_inline_max(cl), got;
	struct vc_cu_req_vcConsole rq = {0};
	struct vc_cu_rep_vcConsole rp;
	uint8_t *buf;

	if (cap <= VC_CU_REP_MAX || !(buf = malloc(cap)))
		return;
	rq.max = (uint32_t)(cap - VC_CU_REP_MAX);
	pthread_mutex_lock(&g_mu);
	/* Another thread may have fetched it all while we waited for the lock;
	 * then the first answer is empty and ends the loop. */
	for (;;) {
		/* Straight to the client, not vc_cu_call(): no check after it. */
		if (vc_client_call(cl, VC_CU_vcConsole, &rq, sizeof(rq), NULL, 0, buf, cap, &got) != 0 ||
		    got < sizeof(rp))
			break; /* the calling operation reports a lost server itself */
		memcpy(&rp, buf, sizeof(rp));
		__atomic_store_n(&g_taken, rp.end, __ATOMIC_RELAXED);
		if (got <= VC_CU_REP_MAX)
			break; /* nothing (more) waits */
		fwrite(buf + VC_CU_REP_MAX, 1, got - VC_CU_REP_MAX, stdout);
		if (!rp.left && vc_client_console(cl) <= rp.end)
			break;
	}
	fflush(stdout);
	pthread_mutex_unlock(&g_mu);
	free(buf);
}

void vc_cu_console_check(void)
{
	struct vc_cu_state *st = vc_cu_state();

	/* One load of a control word that changes only when a kernel printed:
	 * the common case costs nothing more. The host's count may trail what
	 * was fetched (a later marker or output taken early), never lead for
	 * long: fetch while it is ahead. */
	if (st && vc_client_console(st->client) > __atomic_load_n(&g_taken, __ATOMIC_RELAXED))
		drain(st->client);
}

/*
 * At exit, natively, the teardown of the process's contexts waits for their
 * kernels and prints what is left in their printf FIFOs. Ask the host to wait
 * for every context of the session, then fetch. Errors are not reported: the
 * program is ending, and a session already gone has nothing to give.
 */
__attribute__((destructor)) static void console_at_exit(void)
{
	struct vc_cu_state *st = vc_cu_state();
	struct vc_cu_req_sync rq = {.kind = VC_CU_SYNC_ALL};

	if (!st)
		return;
	/* exit() from inside a host function: the stream it holds would never
	 * finish, so only what was printed already is fetched. */
	if (vc_cu_in_callback() ||
	    vc_client_call(st->client, VC_CU_vcSync, &rq, sizeof(rq), NULL, 0, NULL, 0, NULL) >= 0)
		vc_cu_console_check();
}
