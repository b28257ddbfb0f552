/* SPDX-License-Identifier: MIT */
/* vc_time.h - monotonic clock helpers. */
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

#endif /* VC_TIME_H */
