/* SPDX-License-Identifier: MIT */
/*
 * ckd.h - the driver-API measuring tools' (register_split.c, sync_split.c,
 * launch_split.c) one check: a driver call that fails ends the tool, naming
 * the call.
 */
#ifndef VC_BENCH_CKD_H
#define VC_BENCH_CKD_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

/* Run driver call @x; on failure print it, its code and the line, and exit 1. */
#define CKD(x)                                                                   \
	do {                                                                     \
		CUresult r_ = (x);                                               \
		if (r_) {                                                        \
			fprintf(stderr, "%s: %d (line %d)\n", #x, r_, __LINE__); \
			exit(1);                                                 \
		}                                                                \
	} while (0)

#endif /* VC_BENCH_CKD_H */
