/* SPDX-License-Identifier: MIT */
/*
 * trace.c - nvml-trace's loading of the traced NVML, its log, and the two
 * entry points it wraps by hand: nvmlErrorString (answers a string) and
 * nvmlInternalGetExportTable (answers a table, handed out wrapped: one
 * trampoline per slot, each logging its slot number).
 *
 * Environment: NVML_TRACE_TARGET (required: the path of the NVML to
 * forward to), NVML_TRACE_LOG (log file, appended; default stderr).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "trace.h"

#define SLOTS 512

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static void *g_lib;
static FILE *g_log;
static vc_trace_fn g_fn[1024];

static void load(void)
{
	const char *t = getenv("NVML_TRACE_TARGET"), *l = getenv("NVML_TRACE_LOG");

	g_log = l ? fopen(l, "a") : NULL;
	if (!g_log)
		g_log = stderr;
	setvbuf(g_log, NULL, _IOLBF, 0);
	if (!t || !(g_lib = dlopen(t, RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "nvml-trace: cannot load NVML_TRACE_TARGET=%s: %s\n", t ? t : "(unset)",
			t ? dlerror() : "set it to the NVML to trace");
		_exit(127);
	}
	for (unsigned i = 0; i < vc_trace_count && i < 1024; i++)
		g_fn[i] = (vc_trace_fn)dlsym(g_lib, vc_trace_names[i]);
}

/* Stands in for an entry point the traced library lacks. */
static vc_word missing(vc_word a0, vc_word a1, vc_word a2, vc_word a3, vc_word a4, vc_word a5, vc_word a6,
		       vc_word a7)
{
	(void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6, (void)a7;
	return 13; /* NVML_ERROR_FUNCTION_NOT_FOUND */
}

vc_trace_fn vc_trace_target(unsigned idx)
{
	pthread_once(&g_once, load);
	if (idx >= vc_trace_count || !g_fn[idx]) {
		fprintf(g_log, "nvml-trace: %s is not in the traced library\n",
			idx < vc_trace_count ? vc_trace_names[idx] : "?");
		return missing;
	}
	return g_fn[idx];
}

/* The 8 bytes at @addr into *@out when they are readable (0 when not). */
static int peek(vc_word addr, unsigned long long *out)
{
	struct iovec local = {out, sizeof(*out)}, remote = {(void *)addr, sizeof(*out)};

	if (addr < 4096)
		return -1;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof(*out) ? 0 : -1;
}

void vc_trace_log(const char *name, const vc_word *a, vc_word rc)
{
	pthread_mutex_lock(&g_mu);
	fprintf(g_log, "%s(%#lx, %#lx, %#lx, %#lx) = %u\n", name, a[0], a[1], a[2], a[3], (unsigned)rc);
	pthread_mutex_unlock(&g_mu);
}

__attribute__((visibility("default"))) const char *nvmlErrorString(unsigned rc)
{
	typedef const char *(*fn_t)(unsigned);
	fn_t f = (fn_t)(void *)vc_trace_target(vc_trace_idx_nvmlErrorString);
	const char *s = f == (fn_t)(void *)missing ? "?" : f(rc);

	pthread_mutex_lock(&g_mu);
	fprintf(g_log, "nvmlErrorString(%u) = \"%s\"\n", rc, s ? s : "(null)");
	pthread_mutex_unlock(&g_mu);
	return s;
}

/* The wrapped table: its size word, then our trampolines. */
static struct {
	unsigned long long size;
	vc_trace_fn fn[SLOTS - 1];
} g_table;
static const vc_trace_fn *g_real; /* the traced table's slots (word 1 on) */
static unsigned g_real_slots;

static vc_word slot_call(unsigned slot, vc_word a0, vc_word a1, vc_word a2, vc_word a3, vc_word a4, vc_word a5,
			 vc_word a6, vc_word a7)
{
	unsigned long long v1 = 0, v2 = 0;
	vc_word rc = slot < g_real_slots && g_real[slot - 1] ? g_real[slot - 1](a0, a1, a2, a3, a4, a5, a6, a7)
							       : missing(a0, a1, a2, a3, a4, a5, a6, a7);
	int r1 = peek(a1, &v1), r2 = peek(a2, &v2);

	pthread_mutex_lock(&g_mu);
	fprintf(g_log, "  slot %u(%#lx, %#lx, %#lx, %#lx) = %u", slot, a0, a1, a2, a3, (unsigned)rc);
	if (!r1)
		fprintf(g_log, "  *a1=%#llx", v1);
	if (!r2)
		fprintf(g_log, "  *a2=%#llx", v2);
	fputc('\n', g_log);
	pthread_mutex_unlock(&g_mu);
	return rc;
}

#define SLOT_FN(n)                                                                                          \
	static vc_word slot_##n(vc_word a0, vc_word a1, vc_word a2, vc_word a3, vc_word a4, vc_word a5,     \
				vc_word a6, vc_word a7)                                                     \
	{                                                                                                   \
		return slot_call(n, a0, a1, a2, a3, a4, a5, a6, a7);                                        \
	}
#define SLOT_REF(n) slot_##n,
#define X8(M, b) M(b##0) M(b##1) M(b##2) M(b##3) M(b##4) M(b##5) M(b##6) M(b##7)
#define X64(M, b) X8(M, b##0) X8(M, b##1) X8(M, b##2) X8(M, b##3) X8(M, b##4) X8(M, b##5) X8(M, b##6) X8(M, b##7)
#define X512(M) X64(M, 00) X64(M, 01) X64(M, 02) X64(M, 03) X64(M, 04) X64(M, 05) X64(M, 06) X64(M, 07)

/* Octal slot numbers: the same token names the function and is its index. */
X512(SLOT_FN)
static const vc_trace_fn g_slot_fns[SLOTS] = {X512(SLOT_REF)};

__attribute__((visibility("default"))) unsigned nvmlInternalGetExportTable(const void **out, const unsigned char *id)
{
	typedef unsigned (*fn_t)(const void **, const unsigned char *);
	fn_t f = (fn_t)(void *)vc_trace_target(vc_trace_idx_nvmlInternalGetExportTable);
	const unsigned long long *real = NULL;
	unsigned rc = f((const void **)&real, id);

	pthread_mutex_lock(&g_mu);
	fprintf(g_log, "nvmlInternalGetExportTable(%p, ", (void *)out);
	for (int i = 0; id && i < 16; i++)
		fprintf(g_log, "%02x", id[i]);
	fprintf(g_log, ") = %u, table of %llu bytes\n", rc, rc == 0 && real ? real[0] : 0ULL);
	if (rc == 0 && real && out) {
		/* one wrapped table: nvidia-smi asks for one id (later ids pass through) */
		if (!g_real) {
			g_real = (const vc_trace_fn *)(real + 1);
			g_real_slots = real[0] / 8 < SLOTS ? (unsigned)(real[0] / 8) : SLOTS;
			g_table.size = (unsigned long long)g_real_slots * 8;
			for (unsigned i = 1; i < SLOTS; i++)
				g_table.fn[i - 1] = g_slot_fns[i];
		}
		*out = (const vc_trace_fn *)(real + 1) == g_real ? (const void *)&g_table : (const void *)real;
	} else if (out && rc == 0) {
		*out = real;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}
