/* SPDX-License-Identifier: MIT */
/*
 * stress_client.c - the two-process exchange test, over the path users take:
 * this process calls the CUDA driver API of the guest libcuda.so.1, which
 * talks to a running vcuda-server (the CI stand-in in CI, a GPU elsewhere).
 * Each thread sends random requests of random sizes on a stream of its own
 * and verifies every byte, and the order: it keeps a local shadow of its
 * device buffer; writes (inline and arena copies, sync and async, memsets of
 * 1, 2 and 4 bytes, device-to-device copies, kernel launches that store a
 * word) land on overlapping ranges, so any reordering or corruption shows
 * when the buffer is read back and compared; small reads (through the reply
 * slot) are compared with the shadow on every reply.
 *
 *   VCUDA_SOCKET=PATH stress_client [--requests N] [--threads T] [--seed S]
 */
#include <cuda.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vc_time.h"
#include "vt_kernels.h"

#define BUF (1u << 20)

static CUcontext g_ctx;
static CUfunction g_store;
static uint64_t g_per_thread;
static uint64_t g_seed = 1;

struct stats {
	uint64_t read, htod_inline, htod_arena, memset, dtod, launch, verify, bytes;
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
		(st)->rc = (int)rc;                                        \
		return NULL;                                               \
	} while (0)

static CUresult memset_async(CUdeviceptr d, uint32_t v, uint32_t es, size_t n, CUstream st)
{
	if (es == 1)
		return cuMemsetD8Async(d, (unsigned char)v, n, st);
	if (es == 2)
		return cuMemsetD16Async(d, (unsigned short)v, n, st);
	return cuMemsetD32Async(d, v, n, st);
}

static void *worker(void *arg)
{
	struct stats *st = arg;
	uint64_t s = g_seed * 0x9e3779b97f4a7c15ull + (uintptr_t)arg;
	uint8_t *shadow = malloc(BUF), *back = malloc(BUF), out[4096];
	CUdeviceptr dptr = 0;
	CUstream stream = NULL;
	CUresult rc = CUDA_SUCCESS;

	if (!shadow || !back)
		FAIL(st, "out of memory");
	if ((rc = cuCtxSetCurrent(g_ctx)))
		FAIL(st, "cuCtxSetCurrent: %d", rc);
	if ((rc = cuStreamCreate(&stream, CU_STREAM_DEFAULT)))
		FAIL(st, "cuStreamCreate: %d", rc);
	if ((rc = cuMemAlloc(&dptr, BUF)))
		FAIL(st, "cuMemAlloc: %d", rc);
	fill(shadow, BUF, &s);
	if ((rc = cuMemcpyHtoD(dptr, shadow, BUF)))
		FAIL(st, "initial cuMemcpyHtoD: %d", rc);

	for (uint64_t i = 0; i < g_per_thread; i++) {
		uint64_t r = rnd(&s), kind = r % 1000;
		uint32_t off = (uint32_t)(rnd(&s) % BUF);

		if (kind < 80) { /* a small read through the reply slot, checked on return */
			uint32_t len = 1 + (uint32_t)(rnd(&s) % sizeof(out));

			if (len > BUF - off)
				len = BUF - off;
			if ((rc = cuMemcpyDtoHAsync(out, dptr + off, len, stream)) ||
			    (rc = cuStreamSynchronize(stream)))
				FAIL(st, "read %" PRIu64 ": %d", i, rc);
			if (memcmp(out, shadow + off, len))
				FAIL(st, "read %" PRIu64 ": %u bytes at %u differ from the shadow", i, len, off);
			st->read++;
			st->bytes += len;
		} else if (kind < 880) { /* inline copy, asynchronous */
			uint32_t len = 1 + (uint32_t)(rnd(&s) % 4096);

			if (len > BUF - off)
				len = BUF - off;
			fill(shadow + off, len, &s);
			if ((rc = cuMemcpyHtoDAsync(dptr + off, shadow + off, len, stream)))
				FAIL(st, "htod inline: %d", rc);
			st->htod_inline++;
			st->bytes += len;
		} else if (kind < 885) { /* bulk copy through the arena, sync or async */
			uint32_t len = 4097 + (uint32_t)(rnd(&s) % (BUF - 4097));

			if (len > BUF - off)
				off = BUF - len;
			fill(shadow + off, len, &s);
			/* The synchronous copy runs on the legacy default stream, which
			 * waits for this thread's (blocking) stream: order holds. */
			rc = (r >> 32) & 1 ? cuMemcpyHtoDAsync(dptr + off, shadow + off, len, stream)
					   : cuMemcpyHtoD(dptr + off, shadow + off, len);
			if (rc)
				FAIL(st, "htod arena: %d", rc);
			st->htod_arena++;
			st->bytes += len;
		} else if (kind < 935) { /* memset 1/2/4 */
			uint32_t es = 1u << (rnd(&s) % 3), v = (uint32_t)rnd(&s);
			uint32_t cnt = 1 + (uint32_t)(rnd(&s) % 2048);

			off &= ~(es - 1);
			if ((uint64_t)cnt * es > BUF - off)
				cnt = (BUF - off) / es; /* >= 1: off is aligned and below BUF */
			for (uint32_t k = 0; k < cnt; k++)
				memcpy(shadow + off + k * es, &v, es);
			if ((rc = memset_async(dptr + off, v, es, cnt, stream)))
				FAIL(st, "memset: %d", rc);
			st->memset++;
		} else if (kind < 985) { /* device-to-device, non-overlapping as CUDA requires */
			uint32_t len = 1 + (uint32_t)(rnd(&s) % 8192);
			uint32_t src = (uint32_t)(rnd(&s) % (BUF - len));

			if (len > BUF - off)
				off = BUF - len;
			if (!(src + len <= off || off + len <= src))
				src = off >= len ? off - len : off + len;
			memmove(shadow + off, shadow + src, len);
			if ((rc = cuMemcpyDtoDAsync(dptr + off, dptr + src, len, stream)))
				FAIL(st, "dtod: %d", rc);
			st->dtod++;
		} else { /* a kernel that stores a word: its parameters, end to end */
			CUdeviceptr at = dptr + (off & ~3u);
			unsigned int v = (unsigned int)rnd(&s);
			void *params[2] = {&at, &v};

			memcpy(shadow + (off & ~3u), &v, sizeof(v));
			if ((rc = cuLaunchKernel(g_store, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL)))
				FAIL(st, "launch: %d", rc);
			st->launch++;
		}
		if (i % 4096 == 4095 || i + 1 == g_per_thread) {
			if ((rc = cuStreamSynchronize(stream)) || (rc = cuMemcpyDtoH(back, dptr, BUF)))
				FAIL(st, "read-back after request %" PRIu64 ": %d", i, rc);
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
	if ((rc = cuStreamSynchronize(stream)))
		FAIL(st, "final synchronize: %d", rc);
	if ((rc = cuMemFree(dptr)))
		FAIL(st, "cuMemFree: %d", rc);
	if ((rc = cuStreamDestroy(stream)))
		FAIL(st, "cuStreamDestroy: %d", rc);
	free(shadow);
	free(back);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"requests", required_argument, NULL, 'n'},
		{"threads", required_argument, NULL, 't'},
		{"seed", required_argument, NULL, 'S'},
		{0},
	};
	uint64_t total = 1000000, t0, t1;
	int nthreads = 2, o, failed = 0;
	CUdevice dev;
	CUmodule mod;
	CUresult rc;

	while ((o = getopt_long(argc, argv, "n:t:S:", opts, NULL)) != -1) {
		switch (o) {
		case 'n': total = strtoull(optarg, NULL, 0); break;
		case 't': nthreads = atoi(optarg); break;
		case 'S': g_seed = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: VCUDA_SOCKET=PATH stress_client [--requests N] [--threads T] [--seed S]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 16 || !total)
		return 2;
	if ((rc = cuInit(0)) || (rc = cuDeviceGet(&dev, 0)) || (rc = cuDevicePrimaryCtxRetain(&g_ctx, dev)) ||
	    (rc = cuCtxSetCurrent(g_ctx)) || (rc = cuModuleLoadData(&mod, vt_store_ptx)) ||
	    (rc = cuModuleGetFunction(&g_store, mod, VT_STORE_KERNEL))) {
		fprintf(stderr, "stress: setup failed: CUDA error %d\n", rc);
		return 1;
	}
	g_per_thread = (total + (uint64_t)nthreads - 1) / (uint64_t)nthreads;
	pthread_t th[16];
	struct stats st[16];

	memset(st, 0, sizeof(st));
	t0 = vc_now_ns();
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, &st[i]);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	t1 = vc_now_ns();

	struct stats sum = {0};
	for (int i = 0; i < nthreads; i++) {
		if (st[i].failed) {
			fprintf(stderr, "stress: thread %d FAILED: %s\n", i, st[i].why);
			failed = 1;
		}
		sum.read += st[i].read;
		sum.htod_inline += st[i].htod_inline;
		sum.htod_arena += st[i].htod_arena;
		sum.memset += st[i].memset;
		sum.dtod += st[i].dtod;
		sum.launch += st[i].launch;
		sum.verify += st[i].verify;
		sum.bytes += st[i].bytes;
	}
	uint64_t n = sum.read + sum.htod_inline + sum.htod_arena + sum.memset + sum.dtod + sum.launch;
	double sec = (double)(t1 - t0) / 1e9;

	printf("stress: %d threads, %" PRIu64 " requests (%" PRIu64 " checked reads, %" PRIu64
	       " inline copies, %" PRIu64 " arena copies, %" PRIu64 " memsets, %" PRIu64 " dtod, %" PRIu64
	       " launches), %" PRIu64 " full read-back verifications, %.1f MiB moved, %.2f s, %s\n",
	       nthreads, n, sum.read, sum.htod_inline, sum.htod_arena, sum.memset, sum.dtod, sum.launch, sum.verify,
	       (double)sum.bytes / (1 << 20), sec, failed ? "FAILED" : "all verified");
	if (!failed) {
		if ((rc = cuModuleUnload(mod)) || (rc = cuDevicePrimaryCtxRelease(dev))) {
			fprintf(stderr, "stress: teardown: CUDA error %d\n", rc);
			failed = 1;
		}
	}
	if (!failed && n < total) {
		fprintf(stderr, "stress: only %" PRIu64 " of %" PRIu64 " requests were made\n", n, total);
		failed = 1;
	}
	return failed;
}
