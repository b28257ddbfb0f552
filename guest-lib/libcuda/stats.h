/* SPDX-License-Identifier: MIT */
/*
 * stats.h - VCUDA_STATS=1: per-operation counters of the guest library
 * (how often each CUDA operation went to the host, how many of those waited
 * for a reply, and how long; how often a call was answered in the guest),
 * printed to stderr at exit, sorted by the time spent waiting.
 *
 * Off (the default), each hook costs one predictable branch on a flag read
 * once at load time.
 */
#ifndef VC_CU_STATS_H
#define VC_CU_STATS_H

#include <stdint.h>

/* Calls answered in the guest, counted under their driver names. */
enum vc_cu_stat_local {
	VC_STAT_STREAM_IS_CAPTURING,
	VC_STAT_STREAM_CAPTURE_INFO,
	VC_STAT_PRIMARY_CTX_STATE,
	VC_STAT_FUNC_ATTRIBUTE,
	VC_STAT_STREAM_QUERY,
	VC_STAT_EVENT_QUERY,
	VC_STAT_STREAM_SYNC,
	VC_STAT_EVENT_SYNC,
	VC_STAT_CTX_SYNC,
	VC_STAT_CTX_DEVICE,
	VC_STAT_KERNEL_SET_ATTRIBUTE,
	VC_STAT_FUNC_SET_ATTRIBUTE,
	VC_STAT_LOCAL_MAX
};

/* Set once, before main, from $VCUDA_STATS (stats.c). */
extern int vc_cu_stats_on;

/** vc_cu_stats_now() - a monotonic time in ns, for the wait measured around a reply. */
uint64_t vc_cu_stats_now(void);

/**
 * vc_cu_stats_op() - operation @op went to the host; @waited: its caller
 * waited @ns for the reply (0: fire and forget).
 */
void vc_cu_stats_op(uint32_t op, int waited, uint64_t ns);

/**
 * vc_cu_stats_slot() - an export-table slot went to the host (vcExportSlot):
 * table @table (VC_CU_EXPTAB_*), slot @slot, its caller waited @ns. Printed
 * apart, since one operation carries every remoted slot.
 */
void vc_cu_stats_slot(uint32_t table, uint32_t slot, uint64_t ns);

/** vc_cu_stats_local() - a call of kind @which was answered in the guest. */
void vc_cu_stats_local(enum vc_cu_stat_local which);

/* The hooks: one branch when off. */
#define VC_STATS_T0() (__builtin_expect(vc_cu_stats_on, 0) ? vc_cu_stats_now() : 0)
#define VC_STATS_OP(op, waited, t0)                                                                      \
	do {                                                                                             \
		if (__builtin_expect(vc_cu_stats_on, 0))                                                 \
			vc_cu_stats_op((op), (waited), (waited) ? vc_cu_stats_now() - (t0) : 0);          \
	} while (0)
#define VC_STATS_LOCAL(which)                                                                            \
	do {                                                                                             \
		if (__builtin_expect(vc_cu_stats_on, 0))                                                 \
			vc_cu_stats_local(which);                                                        \
	} while (0)

#endif /* VC_CU_STATS_H */
