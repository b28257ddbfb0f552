/* SPDX-License-Identifier: MIT */
/*
 * demo.c - vcuda-demo: a client process doing GPU-style work through a running
 * vcuda-server and saying what happened at each step.
 *
 *   vcuda-demo [--socket PATH]
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vc_client.h"
#include "vc_wire.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *res(int rc)
{
	static char buf[64];

	if (rc == 0)
		return "CUDA_SUCCESS";
	if (rc < 0)
		snprintf(buf, sizeof(buf), "transport error: %s", strerror(-rc));
	else
		snprintf(buf, sizeof(buf), "CUDA error %d", rc);
	return buf;
}

#define STEP(rc, ...)                                                        \
	do {                                                                 \
		int rc_ = (rc);                                              \
		printf("  %-58s %s\n", buf_printf(__VA_ARGS__), res(rc_));   \
		if (rc_ < 0)                                                 \
			return 1;                                            \
	} while (0)

static char *buf_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *buf_printf(const char *fmt, ...)
{
	static char b[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	return b;
}

int main(int argc, char **argv)
{
	const char *path = argc > 2 && !strcmp(argv[1], "--socket") ? argv[2] : NULL;
	struct vc_client *c;
	struct vc_client_info info;
	char err[256];
	uint64_t d, e;
	size_t n = 64u << 20;
	uint8_t *a, *b;
	double t;
	int rc;

	if ((rc = vc_client_open(path, &c, err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	vc_client_get_info(c, &info);
	printf("vcuda-demo: session %u: %" PRIu64 " KiB shared region, %u KiB ring, %u reply slots, "
	       "%" PRIu64 " MiB staging arena in %u KiB chunks\n",
	       info.session_id, info.region_size >> 10, info.ring_size >> 10, info.slot_count,
	       info.arena_size >> 20, info.chunk_size >> 10);

	struct vc_echo_req er = {.len = 12};
	char out[16] = {0};
	size_t got = 0;
	t = now_s();
	rc = vc_client_call(c, VC_OP_ECHO, &er, sizeof(er), "hello vcuda!", 12, out, sizeof(out), &got);
	STEP(rc, "echo \"hello vcuda!\" -> \"%.*s\" (%.1f us)", (int)got, out, (now_s() - t) * 1e6);

	a = malloc(n);
	b = malloc(n);
	if (!a || !b)
		return 1;
	for (size_t i = 0; i < n; i++)
		a[i] = (uint8_t)(i * 2654435761u >> 24);
	STEP(vc_client_mem_alloc(c, n, &d), "allocate 64 MiB of device memory");
	printf("  %-58s 0x%" PRIx64 "\n", "  device address", d);
	STEP(vc_client_mem_alloc(c, 4096, &e), "allocate 4 KiB");

	t = now_s();
	rc = vc_client_htod(c, d, a, n, 0);
	STEP(rc, "copy 64 MiB host->device through the arena (%.2f GB/s)", (double)n / (now_s() - t) / 1e9);
	t = now_s();
	rc = vc_client_dtoh(c, b, d, n);
	STEP(rc, "copy 64 MiB device->host (%.2f GB/s)", (double)n / (now_s() - t) / 1e9);
	STEP(memcmp(a, b, n) ? VC_CUDA_ERROR_UNKNOWN : 0, "compare all 64 MiB byte for byte");

	STEP(vc_client_memset(c, e, 0xC0FFEE11, 4, 1024), "memset32 4 KiB to 0xC0FFEE11 (async)");
	uint32_t grid[3] = {256, 1, 1}, block[3] = {256, 1, 1};
	uint64_t params[2] = {d, n};
	STEP(vc_client_launch(c, 0x1, grid, block, 0, 0, params, sizeof(params)),
	     "launch kernel 0x1 <<<256, 256>>> (recorded by the stand-in)");
	STEP(vc_client_sync(c), "synchronize");
	uint32_t word = 0;
	STEP(vc_client_dtoh(c, &word, e + 4092, 4), "read back the last word of the memset");
	printf("  %-58s 0x%08x\n", "  value", word);

	/* A CUDA error is a result, not a crash: read from a freed allocation. */
	STEP(vc_client_mem_free(c, e), "free the 4 KiB allocation");
	rc = vc_client_dtoh(c, &word, e, 4);
	STEP(rc, "read from the freed allocation (expected: an error)");

	t = now_s();
	for (int i = 0; i < 10000; i++)
		if ((rc = vc_client_call(c, VC_OP_ECHO, &er, sizeof(er), "hello vcuda!", 12, out, 16, NULL)))
			break;
	STEP(rc, "10000 synchronous round trips: %.2f us each", (now_s() - t) * 1e6 / 10000);
	STEP(vc_client_mem_free(c, d), "free 64 MiB");
	vc_client_get_info(c, &info);
	printf("vcuda-demo: %" PRIu64 " commands executed by the server, %" PRIu64
	       " doorbells rung; done\n", info.done_seq, info.kicks);
	free(a);
	free(b);
	vc_client_close(c);
	return 0;
}
