/* SPDX-License-Identifier: MIT */
/*
 * sync_split.c - what one launch and one synchronisation are made of, at the
 * driver API: each way a server could wait for a short kernel (its own
 * cuStreamSynchronize, a loop of queries, an event, a helper thread's wait),
 * timed on the real driver. vcuda's serving thread makes these calls for the
 * guest (host-backend/cuda/sync.c, syncpoll.c), so their costs bound what a
 * synchronisation through it can cost. Linked against libcuda.so.1: run it
 * natively, or through vcuda with the guest library's path first. Not a test:
 * a measuring tool whose figures docs/PERFORMANCE.md quotes; prints one
 * "name<TAB>us" line per figure, each the median of 2000.
 *
 *   sync_split
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckd.h"

#define N 2000

static const char ptx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
			  ".visible .entry empty()\n{\nret;\n}\n";

static CUfunction fn;
static CUevent ev;
static CUstream st; /* a stream of our own, non-blocking */
static double samples[N];

static void launch_on(CUstream s)
{
	CKD(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
}

static void launch(void)
{
	launch_on(NULL);
}

static void query_loop(CUstream s)
{
	while (cuStreamQuery(s) == CUDA_ERROR_NOT_READY)
		;
}

/* The helper thread of the hand-off figures: spins for a job, waits as
 * told, then raises done. */
static _Atomic int job, done;

static void *helper(void *arg)
{
	CUcontext c = arg;

	CKD(cuCtxSetCurrent(c));
	for (;;) {
		int j;

		while (!(j = atomic_load_explicit(&job, memory_order_acquire)))
			;
		if (j < 0)
			break;
		atomic_store_explicit(&job, 0, memory_order_relaxed);
		if (j == 1)
			CKD(cuEventSynchronize(ev));
		else
			CKD(cuStreamSynchronize(NULL));
		atomic_store_explicit(&done, 1, memory_order_release);
	}
	return NULL;
}

static void handoff(int j)
{
	atomic_store_explicit(&done, 0, memory_order_relaxed);
	atomic_store_explicit(&job, j, memory_order_release);
	while (!atomic_load_explicit(&done, memory_order_acquire))
		;
}

/* What vcuda's poll of a context synchronisation asks beyond the legacy
 * stream's queries, with no stream of the program's own (syncpoll.c): the
 * per-thread stream's capture status and completion. */
static void ctx_poll_rest(void)
{
	CUstreamCaptureStatus cs;

	CKD(cuStreamIsCapturing(CU_STREAM_PER_THREAD, &cs));
	CKD(cuStreamQuery(CU_STREAM_PER_THREAD));
}

/* One figure: @what run N times after 100 untimed, median printed. */
static void figure(const char *name, int what)
{
	for (int i = -100; i < N; i++) {
		double a = ckd_now_us();

		switch (what) {
		case 0: CKD(cuStreamQuery(NULL)); break;
		case 1: CKD(cuStreamSynchronize(NULL)); break;
		case 2: CKD(cuCtxSynchronize()); break;
		case 3: {
			CUevent e;

			CKD(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
			CKD(cuEventRecord(e, NULL));
			CKD(cuEventDestroy(e));
			break;
		}
		case 4: launch(); CKD(cuStreamSynchronize(NULL)); break;
		case 5: launch(); CKD(cuCtxSynchronize()); break;
		case 6:
			launch();
			while (cuStreamQuery(NULL) == CUDA_ERROR_NOT_READY)
				;
			break;
		case 7:
			launch();
			while (cuStreamQuery(NULL) == CUDA_ERROR_NOT_READY)
				;
			CKD(cuStreamSynchronize(NULL));
			break;
		case 8: launch(); CKD(cuEventRecord(ev, NULL)); CKD(cuEventSynchronize(ev)); break;
		case 9:
			launch();
			CKD(cuEventRecord(ev, NULL));
			while (cuEventQuery(ev) == CUDA_ERROR_NOT_READY)
				;
			break;
		case 10: launch(); CKD(cuEventRecord(ev, NULL)); handoff(1); break;
		case 11: launch(); handoff(2); break;
		case 12: CKD(cuEventRecord(ev, NULL)); break;
		case 13: launch(); break;
		case 14: CKD(cuEventRecord(ev, NULL)); CKD(cuEventSynchronize(ev)); break;
		case 15: CKD(cuEventSynchronize(ev)); break;
		case 16:
			launch();
			query_loop(NULL);
			CKD(cuEventRecord(ev, NULL));
			CKD(cuEventSynchronize(ev));
			break;
		case 17:
			launch();
			CKD(cuEventRecord(ev, NULL));
			while (cuEventQuery(ev) == CUDA_ERROR_NOT_READY)
				;
			CKD(cuEventSynchronize(ev));
			break;
		case 18: CKD(cuStreamQuery(st)); break;
		case 19: CKD(cuStreamSynchronize(st)); break;
		case 20: launch_on(st); CKD(cuStreamSynchronize(st)); break;
		case 21: launch_on(st); query_loop(st); CKD(cuStreamSynchronize(st)); break;
		case 22: launch_on(st); query_loop(st); break;
		case 23: ctx_poll_rest(); break;
		case 24: launch(); query_loop(NULL); ctx_poll_rest(); break;
		}
		if (i >= 0)
			samples[i] = ckd_now_us() - a;
		if (what == 13 && i % 64 == 63)
			CKD(cuCtxSynchronize()); /* keep the queue short */
	}
	qsort(samples, N, sizeof(samples[0]), ckd_cmp_double);
	printf("%s\t%.3f\tus\n", name, samples[N / 2]);
	fflush(stdout);
}

int main(void)
{
	CUcontext c = ckd_primary();
	CUdevice d;
	CUmodule m;
	pthread_t t;

	CKD(cuModuleLoadData(&m, ptx));
	CKD(cuModuleGetFunction(&fn, m, "empty"));
	CKD(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	if (pthread_create(&t, NULL, helper, c))
		return 1;
	figure("query_idle", 0);
	figure("stream_sync_idle", 1);
	figure("ctx_sync_idle", 2);
	figure("event_create_record_destroy", 3);
	figure("event_record", 12);
	figure("launch_enqueue", 13);
	figure("launch_stream_sync", 4);
	figure("launch_ctx_sync", 5);
	figure("launch_query_loop", 6);
	figure("launch_query_loop_then_sync", 7);
	figure("launch_event_sync", 8);
	figure("launch_event_query_loop", 9);
	figure("launch_handoff_event_sync", 10);
	figure("launch_handoff_stream_sync", 11);
	figure("event_record_sync_idle", 14);
	figure("event_sync_done", 15);
	figure("ctx_poll_rest_idle", 23);
	figure("launch_ctx_poll", 24);
	figure("launch_query_loop_then_event", 16);
	figure("launch_event_query_loop_then_sync", 17);
	CKD(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	figure("own_query_idle", 18);
	figure("own_stream_sync_idle", 19);
	figure("own_launch_stream_sync", 20);
	figure("own_launch_query_loop_then_sync", 21);
	figure("own_launch_query_loop", 22);
	CKD(cuStreamDestroy(st));
	atomic_store_explicit(&job, -1, memory_order_release);
	pthread_join(t, NULL);
	CKD(cuEventDestroy(ev));
	CKD(cuModuleUnload(m));
	CKD(cuCtxGetDevice(&d));
	CKD(cuDevicePrimaryCtxRelease(d));
	return 0;
}
