/* SPDX-License-Identifier: MIT */
/*
 * printf.c - the CI stand-in's device printf, a TEST DOUBLE (standin.h):
 * launches of the printf function queue their lines here, and every
 * synchronisation point writes them to stdout, in launch order, as the real
 * driver writes a kernel's printf output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"

#define PRINTF_FIFO 4096 /* launches waiting for a synchronisation; more are lost */

static int g_pf[PRINTF_FIFO];   /* each waiting launch's n, under g_mu */
static unsigned g_pf_n;
static int g_pf_budget = VC_STANDIN_PRINTF_LINES; /* lines this process may still print */
static pthread_mutex_t g_pf_mu = PTHREAD_MUTEX_INITIALIZER; /* one writer at a time, in order */

/* A synchronisation point: write what the launches so far printed. */
void vc_si_printf_flush(void)
{
	char buf[16384];
	size_t used = 0;
	unsigned n;
	int *q;

	pthread_mutex_lock(&g_pf_mu);
	pthread_mutex_lock(&g_mu);
	n = g_pf_n;
	q = n ? malloc(n * sizeof(*q)) : NULL;
	if (q)
		memcpy(q, g_pf, n * sizeof(*q));
	g_pf_n = 0;
	pthread_mutex_unlock(&g_mu);
	for (unsigned k = 0; q && k < n; k++) {
		for (int i = 0; i < q[k]; i++) {
			if (sizeof(buf) - used < 64) {
				fwrite(buf, 1, used, stdout);
				used = 0;
			}
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, VC_STANDIN_PRINTF_LINE, i, q[k]);
		}
	}
	if (used)
		fwrite(buf, 1, used, stdout);
	if (n)
		fflush(stdout);
	pthread_mutex_unlock(&g_pf_mu);
	free(q);
}

void vc_si_printf_queue(int n)
{
	if (g_pf_n >= PRINTF_FIFO)
		return;
	n = n < g_pf_budget ? n : g_pf_budget;
	g_pf_budget -= n;
	g_pf[g_pf_n++] = n;
}

CUresult vc_si_synced(CUresult rc)
{
	vc_si_printf_flush();
	return rc;
}
