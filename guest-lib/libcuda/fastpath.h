/* SPDX-License-Identifier: MIT */
/*
 * fastpath.h - calls the guest answers without a round trip, where it knows
 * the answer exactly (fastpath.c):
 *
 *  - synchronisations and queries with nothing submitted since the last
 *    completed one of the same target (or of its context);
 *  - a stream's capture status while no capture is active in the process;
 *  - a primary context's state while nothing that changes it was called.
 *
 * What it knows comes from the operations on their way (vc_cu_fast_after(),
 * called by core.c for every synchronous operation) and from the transport's
 * count of commands that may give the device work (vc_client_work()).
 */
#ifndef VC_CU_FASTPATH_H
#define VC_CU_FASTPATH_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

struct vc_client;

/* What a synchronisation or query waits for (the vcSync kinds). */
enum vc_cu_fast_kind {
	VC_FAST_STREAM = 1,
	VC_FAST_EVENT,
	VC_FAST_CTX,
};

/** vc_cu_fast_init() - tell the transport which operations give the device no work (core.c, once). */
void vc_cu_fast_init(struct vc_client *c);

/**
 * vc_cu_fast_after() - synchronous operation @op (request @req of @reqlen
 * bytes) was answered @rc: keep what the fast paths know up to date.
 */
void vc_cu_fast_after(uint32_t op, const void *req, size_t reqlen, int rc);

/** vc_cu_fast_work() - the work count to pass to vc_cu_fast_done(), read before the call. */
uint64_t vc_cu_fast_work(void);

/**
 * vc_cu_fast_idle() - whether target (@kind, @handle: a stream's wire id, an
 * event, a context) is known to have finished all its work, with nothing
 * submitted since; @raw is the handle the caller passed (for streams: the
 * default streams belong to the current context). @synced: the answer is
 * for a synchronisation (device printf was flushed), not only a query.
 */
int vc_cu_fast_idle(enum vc_cu_fast_kind kind, uint64_t handle, uint64_t raw, int synced);

/**
 * vc_cu_fast_done() - a synchronisation (@synced) or query of (@kind,
 * @handle, @raw) answered CUDA_SUCCESS, asked when the work count was @work.
 */
void vc_cu_fast_done(enum vc_cu_fast_kind kind, uint64_t handle, uint64_t raw, int synced, uint64_t work);

/**
 * vc_cu_fast_not_capturing() - whether stream @raw (as the caller passed it)
 * is known not to be capturing: a default stream of a live current context
 * while no capture is active in the process.
 */
int vc_cu_fast_not_capturing(CUstream raw);

/**
 * vc_cu_fast_captures_maybe() - whether some stream of the process may be
 * capturing: a capture was begun (to a new graph or an existing one) and not
 * ended, or the fast path is off (nothing is known then).
 */
int vc_cu_fast_captures_maybe(void);

/** vc_cu_fast_primary() - the cached state of @dev's primary context: 1 and *@flags, *@active, or 0. */
int vc_cu_fast_primary(CUdevice dev, unsigned int *flags, int *active);

/** vc_cu_fast_primary_epoch() - read before asking the host for a primary context's state. */
uint64_t vc_cu_fast_primary_epoch(void);

/** vc_cu_fast_primary_put() - the host answered @flags, @active for @dev, asked at @epoch. */
void vc_cu_fast_primary_put(CUdevice dev, uint64_t epoch, unsigned int flags, int active);

#endif /* VC_CU_FASTPATH_H */
