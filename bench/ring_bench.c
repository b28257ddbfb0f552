/* SPDX-License-Identifier: MIT */
/*
 * ring_bench.c - transport benchmarks, client process against a running
 * vcuda-server in another process:
 *   - synchronous round trip of a 64-byte request (median, p99);
 *   - asynchronous 64-byte requests per second (each one published as the
 *     guest library publishes an asynchronous CUDA call);
 *   - bulk host->device and device->host through the staging arena, 1 MiB to
 *     256 MiB, as a ratio to a plain memcpy of the same size measured in the
 *     same run, and to the ceiling of any two-copy transport on this
 *     machine: the same pipeline (piece size, pieces in flight) between two
 *     threads of this process, with no protocol at all (pipe_ceiling.c).
 *
 *   ring_bench --socket PATH [--quick]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pipe_ceiling.h"
#include "vc_client.h"
#include "vc_wire.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_ns(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)v[n / 2];
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "ring_bench: %s failed: %d (%s)\n", what, rc, rc < 0 ? strerror(-rc) : "CUDA error");
	return 1;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int quick = 0;
	struct vc_client *c;
	char err[256];
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			path = argv[++i];
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else {
			fprintf(stderr, "usage: ring_bench --socket PATH [--quick]\n");
			return 2;
		}
	}
	if ((rc = vc_client_open(path, &c, err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}

	/* ---- synchronous round trip ---------------------------------------- */
	size_t nsync = quick ? 20000 : 200000;
	uint64_t *lat = malloc(nsync * sizeof(*lat));
	uint8_t data[40] = {1}, out[64];
	struct vc_echo_req er = {.len = sizeof(data)}; /* 16 + 8 + 40 = 64-byte command */

	for (size_t i = 0; i < nsync / 10; i++) /* warm-up */
		if ((rc = vc_client_call(c, VC_OP_ECHO, &er, sizeof(er), data, sizeof(data), out, sizeof(out), NULL)))
			return fail("echo", rc);
	for (size_t i = 0; i < nsync; i++) {
		uint64_t t0 = now_ns();

		rc = vc_client_call(c, VC_OP_ECHO, &er, sizeof(er), data, sizeof(data), out, sizeof(out), NULL);
		lat[i] = now_ns() - t0;
		if (rc)
			return fail("echo", rc);
	}
	qsort(lat, nsync, sizeof(*lat), cmp_u64);
	double med = (double)lat[nsync / 2] / 1000, p99 = (double)lat[nsync * 99 / 100] / 1000;
	printf("sync round trip, 64-byte request: median %.2f us, p99 %.2f us (%zu calls)\n", med, p99, nsync);
	free(lat);

	/* ---- asynchronous requests ------------------------------------------ */
	uint64_t nasync = quick ? 2000000 : 20000000, seq = 0;
	uint8_t nop[48] = {2}; /* 16 + 48 = 64-byte command */
	double best = 0;

	for (int rep = 0; rep < 3; rep++) {
		uint64_t t0 = now_ns();

		for (uint64_t i = 0; i < nasync; i++)
			if ((rc = vc_client_submit(c, VC_OP_NOP, nop, sizeof(nop), NULL, 0, 0, &seq)))
				return fail("submit", rc);
		if ((rc = vc_client_wait(c, seq)))
			return fail("wait", rc);
		double rate = (double)nasync / ((double)(now_ns() - t0) / 1e9);
		if (rate > best)
			best = rate;
	}
	printf("async 64-byte requests: %.2f M requests/s (each published, best of 3 x %" PRIu64 ", until executed)\n",
	       best / 1e6, nasync);

	/* ---- bulk through the arena vs memcpy and vs the pipeline ceiling ---- */
	static const uint32_t mib[] = {1, 4, 16, 64, 256};
	size_t maxn = (size_t)256 << 20;
	uint8_t *src = malloc(maxn), *dst = malloc(maxn), *dev = malloc(maxn);
	struct vc_client_info info;
	struct vc_pipe *pipe;
	uint64_t dptr;

	if (!src || !dst || !dev)
		return fail("malloc", -ENOMEM);
	memset(src, 0x3c, maxn); /* fault everything in before timing */
	memset(dst, 0xc3, maxn);
	memset(dev, 0x5a, maxn);
	vc_client_get_info(c, &info);
	if ((rc = vc_pipe_open(&pipe, info.arena_size)))
		return fail("pipeline thread", rc);
	if ((rc = vc_client_mem_alloc(c, maxn, &dptr)))
		return fail("mem_alloc 256 MiB", rc);
	if ((rc = vc_client_htod(c, dptr, src, maxn, 0)))
		return fail("htod warm-up", rc);
	printf("%-8s %7s %7s %7s %7s %7s  %-19s %-19s %-19s\n", "", "memcpy", "HtoD", "DtoH", "pipe H", "pipe D",
	       "vcuda / memcpy", "pipe / memcpy", "vcuda / pipe");
	printf("%-8s %7s %7s %7s %7s %7s  %-19s %-19s %-19s\n", "size", "GB/s", "GB/s", "GB/s", "GB/s", "GB/s",
	       "HtoD   DtoH", "HtoD   DtoH", "HtoD   DtoH");
	for (size_t k = 0; k < sizeof(mib) / sizeof(mib[0]); k++) {
		size_t n = (size_t)mib[k] << 20;
		int reps = quick ? 3 : (mib[k] >= 64 ? 5 : mib[k] >= 16 ? 15 : 50);
		uint64_t tm[50], th[50], td[50], tph[50], tpd[50], piece;
		uint32_t inflight;

		vc_client_bulk_shape(c, n, &piece, &inflight);
		/* Each operation in a loop of its own, as a program doing only that
		 * would run it: no operation inherits another's cache state. */
		for (int r = 0; r < reps; r++) {
			uint64_t t0 = now_ns();

			memcpy(dst, src, n);
			__asm__ __volatile__("" ::"r"(dst) : "memory");
			tm[r] = now_ns() - t0;
		}
		for (int r = 0; r < reps; r++) {
			uint64_t t0 = now_ns();

			if ((rc = vc_client_htod(c, dptr, src, n, 0)))
				return fail("htod", rc);
			th[r] = now_ns() - t0;
		}
		for (int r = 0; r < reps; r++) {
			uint64_t t0 = now_ns();

			if ((rc = vc_client_dtoh(c, dst, dptr, n)))
				return fail("dtoh", rc);
			td[r] = now_ns() - t0;
		}
		if (memcmp(dst, src, n))
			return fail("bulk data verification", VC_CUDA_ERROR_UNKNOWN);
		/* The server's worker spins 100 us and yields 200 us after its last
		 * command before it sleeps: let it, so that the pipeline's two
		 * threads have both cores, then one untimed round to wake them. */
		usleep(2000);
		if (!vc_pipe_copy(pipe, dev, src, n, piece, inflight, 1))
			return fail("pipeline shape", -EINVAL);
		for (int r = 0; r < reps; r++)
			if (!(tph[r] = vc_pipe_copy(pipe, dev, src, n, piece, inflight, 1)))
				return fail("pipeline shape", -EINVAL);
		for (int r = 0; r < reps; r++)
			tpd[r] = vc_pipe_copy(pipe, dst, dev, n, piece, inflight, 0);
		if (memcmp(dst, src, n))
			return fail("pipeline data verification", VC_CUDA_ERROR_UNKNOWN);
		double gm = (double)n / median_ns(tm, (size_t)reps), gh = (double)n / median_ns(th, (size_t)reps);
		double gd = (double)n / median_ns(td, (size_t)reps), gph = (double)n / median_ns(tph, (size_t)reps);
		double gpd = (double)n / median_ns(tpd, (size_t)reps);
		printf("%4u MiB %7.2f %7.2f %7.2f %7.2f %7.2f  %4.0f%% %5.0f%%        %4.0f%% %5.0f%%        %4.0f%% %5.0f%%\n",
		       mib[k], gm, gh, gd, gph, gpd, 100 * gh / gm, 100 * gd / gm, 100 * gph / gm, 100 * gpd / gm,
		       100 * gh / gph, 100 * gd / gpd);
	}
	vc_pipe_close(pipe);
	free(dev);
	vc_client_mem_free(c, dptr);
	free(src);
	free(dst);
	vc_client_close(c);
	return 0;
}
