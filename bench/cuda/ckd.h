/* SPDX-License-Identifier: MIT */
/*
 * ckd.h - what the driver-API measuring tools (register_split.c, copy_split.c,
 * sync_split.c, launch_split.c) share: one check (a driver call that fails
 * ends the tool, naming the call), the clock, the median's sort, and the
 * device's primary context made current.
 */
#ifndef VC_BENCH_CKD_H
#define VC_BENCH_CKD_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Run driver call @x; on failure print it, its code and the line, and exit 1. */
#define CKD(x)                                                                   \
	do {                                                                     \
		CUresult r_ = (x);                                               \
		if (r_) {                                                        \
			fprintf(stderr, "%s: %d (line %d)\n", #x, r_, __LINE__); \
			exit(1);                                                 \
		}                                                                \
	} while (0)

/* The monotonic clock in microseconds. */
static inline double ckd_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* qsort's order of doubles, for medians. */
static inline int ckd_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The driver started and device 0's primary context current: returned. */
static inline CUcontext ckd_primary(void)
{
	CUcontext c;
	CUdevice d;

	CKD(cuInit(0));
	CKD(cuDeviceGet(&d, 0));
	CKD(cuDevicePrimaryCtxRetain(&c, d));
	CKD(cuCtxSetCurrent(c));
	return c;
}

#endif /* VC_BENCH_CKD_H */
