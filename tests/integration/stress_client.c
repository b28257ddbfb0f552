/* SPDX-License-Identifier: MIT */
/*
 * stress_client.c - the two-process exchange test: a client process sends
 * random requests of random sizes to a running vcuda-server (CI stand-in
 * executor) and verifies every byte, and the order: each thread keeps a local
 * shadow of its device buffer; writes (inline and arena copies, memsets,
 * device-to-device copies) land on overlapping ranges, so any reordering or
 * corruption shows when the buffer is read back and compared; echoes are
 * compared byte for byte on every reply.
 *
 *   stress_client --socket PATH [--requests N] [--threads T] [--seed S]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vc_client.h"
#include "vc_wire.h"

#define BUF (1u << 20)

static struct vc_client *g_c;
static uint64_t g_per_thread;
static uint64_t g_seed = 1;

struct stats {
	uint64_t echo, htod_inline, htod_arena, memset, dtod, verify, bytes;
	int failed;
	int rc; /* the failing call's result */
	char why[256];
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fill(uint8_t *p, size_t n, uint64_t *s)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v = rnd(s);
		memcpy(p + i, &v, 8);
	}
	for (; i < n; i++)
		p[i] = (uint8_t)rnd(s);
}

#define FAIL(st, ...)                                                      \
	do {                                                               \
		snprintf((st)->why, sizeof((st)->why), __VA_ARGS__);       \
		(st)->failed = 1;                                          \
		(st)->rc = rc;                                             \
		return NULL;                                               \
	} while (0)

static void *worker(void *arg)
{
	struct stats *st = arg;
	uint64_t s = g_seed * 0x9e3779b97f4a7c15ull + (uintptr_t)arg, dptr;
	uint8_t *shadow = malloc(BUF), *back = malloc(BUF), *tmp = malloc(BUF), out[8192];
	int rc = 0;

	if (!shadow || !back || !tmp)
		FAIL(st, "out of memory");
	rc = vc_client_mem_alloc(g_c, BUF, &dptr);
	if (rc)
		FAIL(st, "mem_alloc: %d", rc);
	fill(shadow, BUF, &s);
	rc = vc_client_htod(g_c, dptr, shadow, BUF, 0);
	if (rc)
		FAIL(st, "initial htod: %d", rc);

	for (uint64_t i = 0; i < g_per_thread; i++) {
		uint64_t r = rnd(&s), kind = r % 1000;
		uint32_t off = (uint32_t)(rnd(&s) % BUF);

		if (kind < 80) { /* synchronous echo, verified on return */
			uint32_t len = (uint32_t)(rnd(&s) % 4000);
			struct vc_echo_req er = {.len = len};
			size_t got = 0;

			fill(tmp, len, &s);
			rc = vc_client_call(g_c, VC_OP_ECHO, &er, sizeof(er), tmp, len, out, sizeof(out), &got);
			if (rc || got != len || memcmp(out, tmp, len))
				FAIL(st, "echo %" PRIu64 ": rc %d, %zu of %u bytes, or content differs", i, rc,
				     got, len);
			st->echo++;
			st->bytes += 2ull * len;
		} else if (kind < 900) { /* inline copy, asynchronous */
			uint32_t len = 1 + (uint32_t)(rnd(&s) % 4096);

			if (len > BUF - off)
				len = BUF - off;
			fill(shadow + off, len, &s);
			rc = vc_client_htod(g_c, dptr + off, shadow + off, len, 1);
			if (rc)
				FAIL(st, "htod inline: %d", rc);
			st->htod_inline++;
			st->bytes += len;
		} else if (kind < 905) { /* bulk copy through the arena */
			uint32_t len = 4097 + (uint32_t)(rnd(&s) % (BUF - 4097));

			if (len > BUF - off)
				off = BUF - len;
			fill(shadow + off, len, &s);
			rc = vc_client_htod(g_c, dptr + off, shadow + off, len, (int)(r & 1));
			if (rc)
				FAIL(st, "htod arena: %d", rc);
			st->htod_arena++;
			st->bytes += len;
		} else if (kind < 955) { /* memset 1/2/4 */
			uint32_t es = 1u << (rnd(&s) % 3), v = (uint32_t)rnd(&s);
			uint32_t cnt = 1 + (uint32_t)(rnd(&s) % 2048);

			off &= ~(es - 1);
			if ((uint64_t)cnt * es > BUF - off)
				cnt = (BUF - off) / es; /* >= 1: off is aligned and below BUF */
			for (uint32_t k = 0; k < cnt; k++)
				memcpy(shadow + off + k * es, &v, es);
			rc = vc_client_memset(g_c, dptr + off, v, es, cnt);
			if (rc)
				FAIL(st, "memset: %d", rc);
			st->memset++;
		} else { /* device-to-device, non-overlapping as CUDA requires */
			uint32_t len = 1 + (uint32_t)(rnd(&s) % 8192);
			uint32_t src = (uint32_t)(rnd(&s) % (BUF - len));

			if (len > BUF - off)
				off = BUF - len;
			if (!(src + len <= off || off + len <= src))
				src = off >= len ? off - len : off + len;
			memmove(shadow + off, shadow + src, len);
			struct vc_memcpy_dtod_req d = {.dst = dptr + off, .src = dptr + src, .len = len};
			rc = vc_client_submit(g_c, VC_OP_MEMCPY_DTOD, &d, sizeof(d), NULL, 0, 0, NULL);
			if (rc)
				FAIL(st, "dtod: %d", rc);
			st->dtod++;
		}
		if (i % 4096 == 4095 || i + 1 == g_per_thread) {
			rc = vc_client_dtoh(g_c, back, dptr, BUF);
			if (rc)
				FAIL(st, "dtoh after request %" PRIu64 ": %d", i, rc);
			if (memcmp(back, shadow, BUF)) {
				size_t k = 0;
				while (back[k] == shadow[k])
					k++;
				FAIL(st, "device buffer differs from shadow at byte %zu after request %" PRIu64, k, i);
			}
			st->verify++;
			st->bytes += BUF;
		}
	}
	rc = vc_client_sync(g_c);
	if (rc)
		FAIL(st, "final sync: %d", rc);
	rc = vc_client_mem_free(g_c, dptr);
	if (rc)
		FAIL(st, "mem_free: %d", rc);
	free(shadow);
	free(back);
	free(tmp);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},   {"requests", required_argument, NULL, 'n'},
		{"threads", required_argument, NULL, 't'},  {"seed", required_argument, NULL, 'S'},
		{0},
	};
	const char *path = NULL;
	uint64_t total = 1000000;
	int nthreads = 2, o, failed = 0;
	char err[256];
	struct timespec t0, t1;

	while ((o = getopt_long(argc, argv, "s:n:t:S:", opts, NULL)) != -1) {
		switch (o) {
		case 's': path = optarg; break;
		case 'n': total = strtoull(optarg, NULL, 0); break;
		case 't': nthreads = atoi(optarg); break;
		case 'S': g_seed = strtoull(optarg, NULL, 0); break;
		default: fprintf(stderr, "usage: stress_client --socket PATH [--requests N] [--threads T] [--seed S]\n"); return 2;
		}
	}
	if (nthreads < 1 || nthreads > 16 || !total)
		return 2;
	if (vc_client_open(path, &g_c, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	g_per_thread = (total + (uint64_t)nthreads - 1) / (uint64_t)nthreads;
	pthread_t th[16];
	struct stats st[16];

	memset(st, 0, sizeof(st));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, &st[i]);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	struct stats sum = {0};
	for (int i = 0; i < nthreads; i++) {
		if (st[i].failed) {
			fprintf(stderr, "stress: thread %d FAILED: %s%s\n", i, st[i].why,
				st[i].rc == -EPIPE ? " (the server is gone)" :
				st[i].rc == -EPROTO ? " (the session is FATAL)" : "");
			failed = 1;
		}
		sum.echo += st[i].echo;
		sum.htod_inline += st[i].htod_inline;
		sum.htod_arena += st[i].htod_arena;
		sum.memset += st[i].memset;
		sum.dtod += st[i].dtod;
		sum.verify += st[i].verify;
		sum.bytes += st[i].bytes;
	}
	uint64_t n = sum.echo + sum.htod_inline + sum.htod_arena + sum.memset + sum.dtod;
	double sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	printf("stress: %d threads, %" PRIu64 " requests (%" PRIu64 " echo, %" PRIu64
	       " inline copies, %" PRIu64 " arena copies, %" PRIu64 " memsets, %" PRIu64
	       " dtod), %" PRIu64 " full read-back verifications, %.1f MiB moved, %.2f s, %s\n",
	       nthreads, n, sum.echo, sum.htod_inline, sum.htod_arena, sum.memset, sum.dtod, sum.verify,
	       (double)sum.bytes / (1 << 20), sec, failed ? "FAILED" : "all verified");
	vc_client_close(g_c);
	if (!failed && n < total) {
		fprintf(stderr, "stress: only %" PRIu64 " of %" PRIu64 " requests were made\n", n, total);
		failed = 1;
	}
	return failed;
}
