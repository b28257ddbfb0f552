/* SPDX-License-Identifier: MIT */
/*
 * optimes.h - where a session's serving thread spends its time, by CUDA
 * operation: how many of each it executed and how long each took on that
 * thread, from the decoded command to its reply (the driver's call and the
 * server's own work around it). Off by default; vcuda-server --op-times
 * turns it on and logs a session's table when it closes.
 *
 * The guest's VCUDA_STATS gives the other side: how long the program waited
 * for each reply. The difference is the transport and the time a command
 * queued behind others.
 */
#ifndef VC_OPTIMES_H
#define VC_OPTIMES_H

#include <stdint.h>

struct vc_optimes;

/** vc_optimes_create() - an empty table; NULL when out of memory. */
struct vc_optimes *vc_optimes_create(void);

/**
 * vc_optimes_add() - CUDA operation @op took @ns on the serving thread.
 * Operations outside the CUDA range are not counted. Serving thread only.
 */
void vc_optimes_add(struct vc_optimes *t, uint32_t op, uint64_t ns);

/**
 * vc_optimes_report() - at most @max lines, the operations that took the most
 * time first, each handed to @line ("name calls total_us mean_us max_us");
 * a first line says how many operations of how many kinds there were.
 * Returns the number of lines handed over.
 */
int vc_optimes_report(const struct vc_optimes *t, unsigned max, void (*line)(void *arg, const char *text),
		      void *arg);

/** vc_optimes_destroy() - free @t (NULL is fine). */
void vc_optimes_destroy(struct vc_optimes *t);

#endif /* VC_OPTIMES_H */
