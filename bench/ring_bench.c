/* SPDX-License-Identifier: MIT */
/*
 * ring_bench.c - transport benchmarks over the path users take: the guest
 * libcuda.so.1 in this process, a vcuda-server in another (the CI stand-in
 * in CI, the real driver on a GPU machine):
 *   - synchronous round trip of cuStreamQuery (median, p99): one command
 *     and one reply, the driver's own work negligible;
 *   - asynchronous kernel launches per second (cuLaunchKernel with 12 bytes
 *     of parameters, each published as the library publishes it; the last
 *     launch's store read back);
 *   - cuMemcpyHtoD and cuMemcpyDtoH from pageable memory, 1 MiB to 256 MiB,
 *     through the staging arena, as a ratio to a plain memcpy of the same
 *     size measured in the same run, and to the ceiling of any two-copy
 *     transport on this machine: the same pipeline (piece size, pieces in
 *     flight, as the transport cuts this server's arena) between two
 *     threads of this process, with no protocol at all (pipe_ceiling.c).
 *
 *   VCUDA_SOCKET=PATH ring_bench [--quick]
 */
#include <cuda.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe_ceiling.h"
#include "vc_client.h"
#include "vc_time.h"
#include "vt_kernels.h"

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
	const char *name = NULL;

	if (rc > 0)
		cuGetErrorName((CUresult)rc, &name);
	fprintf(stderr, "ring_bench: %s failed: %d (%s)\n", what, rc, rc < 0 ? strerror(-rc) : name ? name : "?");
	return 1;
}

#define CK(what, call)                          \
	do {                                    \
		int rc_ = (int)(call);          \
		if (rc_)                        \
			return fail(what, rc_); \
	} while (0)

int main(int argc, char **argv)
{
	int quick = 0;
	struct vc_client *shape;
	char err[256];
	CUdevice dev;
	CUcontext ctx;
	CUstream st;
	CUmodule mod;
	CUfunction fn;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else {
			fprintf(stderr, "usage: VCUDA_SOCKET=PATH ring_bench [--quick]\n");
			return 2;
		}
	}
	CK("cuInit", cuInit(0));
	CK("cuDeviceGet", cuDeviceGet(&dev, 0));
	CK("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
	CK("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
	CK("cuStreamCreate", cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	CK("cuModuleLoadData", cuModuleLoadData(&mod, vt_store_ptx));
	CK("cuModuleGetFunction", cuModuleGetFunction(&fn, mod, VT_STORE_KERNEL));

	/* ---- synchronous round trip ---------------------------------------- */
	size_t nsync = quick ? 20000 : 200000;
	uint64_t *lat = malloc(nsync * sizeof(*lat));

	if (!lat)
		return fail("malloc", -ENOMEM);
	for (size_t i = 0; i < nsync / 10; i++) /* warm-up */
		CK("cuStreamQuery", cuStreamQuery(st));
	for (size_t i = 0; i < nsync; i++) {
		uint64_t t0 = vc_now_ns();

		rc = cuStreamQuery(st);
		lat[i] = vc_now_ns() - t0;
		if (rc)
			return fail("cuStreamQuery", rc);
	}
	qsort(lat, nsync, sizeof(*lat), cmp_u64);
	double med = (double)lat[nsync / 2] / 1000, p99 = (double)lat[nsync * 99 / 100] / 1000;
	printf("sync round trip, cuStreamQuery: median %.2f us, p99 %.2f us (%zu calls)\n", med, p99, nsync);
	free(lat);

	/* ---- asynchronous launches ------------------------------------------ */
	uint64_t nasync = quick ? 200000 : 2000000;
	CUdeviceptr word;
	unsigned int v = 0, back = 0;
	void *params[2] = {&word, &v};
	double best = 0;

	CK("cuMemAlloc", cuMemAlloc(&word, 4));
	for (int rep = 0; rep < 3; rep++) {
		uint64_t t0 = vc_now_ns();

		for (uint64_t i = 0; i < nasync; i++) {
			v = (unsigned int)(rep * nasync + i + 1);
			CK("cuLaunchKernel", cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, params, NULL));
		}
		CK("cuStreamSynchronize", cuStreamSynchronize(st));
		double rate = (double)nasync / ((double)(vc_now_ns() - t0) / 1e9);
		if (rate > best)
			best = rate;
	}
	CK("cuMemcpyDtoH of the stored word", cuMemcpyDtoH(&back, word, sizeof(back)));
	if (back != v) {
		fprintf(stderr, "ring_bench: the last launch stored %u, expected %u\n", back, v);
		return 1;
	}
	printf("async launches (cuLaunchKernel, 12 bytes of parameters): %.2f M launches/s "
	       "(each published, best of 3 x %" PRIu64 ", until synchronised; last store verified)\n",
	       best / 1e6, nasync);

	/* ---- bulk through the arena vs memcpy and vs the pipeline ceiling ---- */
	static const uint32_t mib[] = {1, 4, 16, 64, 256};
	size_t maxn = (size_t)256 << 20;
	uint8_t *src = malloc(maxn), *dst = malloc(maxn), *devbuf = malloc(maxn);
	struct vc_client_info info;
	struct vc_pipe *pipe;
	CUdeviceptr dptr;

	if (!src || !dst || !devbuf)
		return fail("malloc", -ENOMEM);
	memset(src, 0x3c, maxn); /* fault everything in before timing */
	memset(dst, 0xc3, maxn);
	memset(devbuf, 0x5a, maxn);
	/* The shape the transport gives this server's arena, from a session of
	 * our own (the library's own client is internal to it). */
	if ((rc = vc_client_open(NULL, &shape, err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	vc_client_get_info(shape, &info);
	if ((rc = vc_pipe_open(&pipe, info.arena_size)))
		return fail("pipeline thread", rc);
	CK("cuMemAlloc 256 MiB", cuMemAlloc(&dptr, maxn));
	CK("cuMemcpyHtoD warm-up", cuMemcpyHtoD(dptr, src, maxn));
	printf("%-8s %7s %7s %7s %7s %7s  %-19s %-19s %-19s\n", "", "memcpy", "HtoD", "DtoH", "pipe H", "pipe D",
	       "vcuda / memcpy", "pipe / memcpy", "vcuda / pipe");
	printf("%-8s %7s %7s %7s %7s %7s  %-19s %-19s %-19s\n", "size", "GB/s", "GB/s", "GB/s", "GB/s", "GB/s",
	       "HtoD   DtoH", "HtoD   DtoH", "HtoD   DtoH");
	for (size_t k = 0; k < sizeof(mib) / sizeof(mib[0]); k++) {
		size_t n = (size_t)mib[k] << 20;
		int reps = quick ? 3 : (mib[k] >= 64 ? 5 : mib[k] >= 16 ? 15 : 50);
		uint64_t tm[50], th[50], td[50], tph[50], tpd[50], piece;
		uint32_t inflight;

		vc_client_bulk_shape(shape, n, &piece, &inflight);
		/* Each operation in a loop of its own, as a program doing only that
		 * would run it: no operation inherits another's cache state. */
		for (int r = 0; r < reps; r++) {
			uint64_t t0 = vc_now_ns();

			memcpy(dst, src, n);
			__asm__ __volatile__("" ::"r"(dst) : "memory");
			tm[r] = vc_now_ns() - t0;
		}
		for (int r = 0; r < reps; r++) {
			uint64_t t0 = vc_now_ns();

			CK("cuMemcpyHtoD", cuMemcpyHtoD(dptr, src, n));
			th[r] = vc_now_ns() - t0;
		}
		for (int r = 0; r < reps; r++) {
			uint64_t t0 = vc_now_ns();

			CK("cuMemcpyDtoH", cuMemcpyDtoH(dst, dptr, n));
			td[r] = vc_now_ns() - t0;
		}
		if (memcmp(dst, src, n))
			return fail("bulk data verification", CUDA_ERROR_UNKNOWN);
		/* The server's worker spins 100 us and yields 200 us after its last
		 * command before it sleeps: let it, so that the pipeline's two
		 * threads have both cores, then one untimed round to wake them. */
		usleep(2000);
		if (!vc_pipe_copy(pipe, devbuf, src, n, piece, inflight, 1))
			return fail("pipeline shape", -EINVAL);
		for (int r = 0; r < reps; r++)
			if (!(tph[r] = vc_pipe_copy(pipe, devbuf, src, n, piece, inflight, 1)))
				return fail("pipeline shape", -EINVAL);
		for (int r = 0; r < reps; r++)
			tpd[r] = vc_pipe_copy(pipe, dst, devbuf, n, piece, inflight, 0);
		if (memcmp(dst, src, n))
			return fail("pipeline data verification", CUDA_ERROR_UNKNOWN);
		double gm = (double)n / median_ns(tm, (size_t)reps), gh = (double)n / median_ns(th, (size_t)reps);
		double gd = (double)n / median_ns(td, (size_t)reps), gph = (double)n / median_ns(tph, (size_t)reps);
		double gpd = (double)n / median_ns(tpd, (size_t)reps);
		printf("%4u MiB %7.2f %7.2f %7.2f %7.2f %7.2f  %4.0f%% %5.0f%%        %4.0f%% %5.0f%%        %4.0f%% %5.0f%%\n",
		       mib[k], gm, gh, gd, gph, gpd, 100 * gh / gm, 100 * gd / gm, 100 * gph / gm, 100 * gpd / gm,
		       100 * gh / gph, 100 * gd / gpd);
	}
	vc_pipe_close(pipe);
	vc_client_close(shape);
	CK("cuMemFree", cuMemFree(dptr));
	CK("cuMemFree", cuMemFree(word));
	CK("cuModuleUnload", cuModuleUnload(mod));
	CK("cuStreamDestroy", cuStreamDestroy(st));
	CK("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease(dev));
	free(devbuf);
	free(src);
	free(dst);
	return 0;
}
