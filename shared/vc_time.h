/* SPDX-License-Identifier: MIT */
/*
 * vc_time.h - the monotonic clock: the one reading of CLOCK_MONOTONIC for
 * timeouts, deadlines, idle times and durations. Wall-clock time
 * (CLOCK_REALTIME) is read where it is meant: log timestamps, times shown to
 * people or stored, and pthread_cond_timedwait() deadlines on condition
 * variables left on their default clock.
 */
#ifndef VC_TIME_H
#define VC_TIME_H

#include <stdint.h>
#include <time.h>

/** vc_now_ns() - CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t vc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** vc_now_ms() - CLOCK_MONOTONIC in milliseconds, signed for deadline arithmetic. */
static inline int64_t vc_now_ms(void)
{
	return (int64_t)(vc_now_ns() / 1000000u);
}

#endif /* VC_TIME_H */
