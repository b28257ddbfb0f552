/* SPDX-License-Identifier: MIT */
/*
 * syncpoll.h - the short waits that keep a synchronisation off the helper
 * thread's hand-off when the GPU is (nearly) done already.
 */
#ifndef VC_CUDA_SYNCPOLL_H
#define VC_CUDA_SYNCPOLL_H

#include <stdint.h>

#include <cuda.h>

struct vc_cu_session;

/* How long the serving thread polls, and the helper thread waits for its next job. */
#define VC_SYNC_POLL_NS 30000u
#define VC_SYNC_SPIN_NS 50000u

/**
 * vc_cu_sync_poll() - on the serving thread: poll stream or event @h
 * (@kind VC_CU_SYNC_STREAM or VC_CU_SYNC_EVENT) for at most VC_SYNC_POLL_NS.
 * When it completed, synchronise it where that has work of its own (at
 * once: the device printf output is flushed as by the wait it replaces;
 * vc_cu_session's sync_flushes) and return 1 with the result in *@rc; else
 * 0, and the wait goes to the helper thread.
 */
int vc_cu_sync_poll(struct vc_cu_session *x, uint32_t kind, void *h, int *rc);

/* A context synchronisation is polled where the session has at most this
 * many streams (the list of those to ask is kept on the stack). */
#define VC_SYNC_POLL_STREAMS 64u

/**
 * vc_cu_sync_poll_ctx() - on the serving thread, with @ctx current: poll
 * every stream of context @ctx that may have work (the legacy stream, the
 * per-thread one where a command named it, and the session's streams of
 * @ctx named since a poll last found them done: vc_cu_handle's busy) for at
 * most VC_SYNC_POLL_NS, as vc_cu_sync_poll() does a stream. Only the
 * serving thread submits work, so streams that are all done mean a done
 * context. Returns 1 with the result in *@rc when they completed; 0 (the
 * wait goes to the helper thread) when one is still busy, one answered an
 * error (the driver's synchronisation gives it) or is capturing, the session
 * has green contexts (whose streams it cannot tell apart cheaply) or more
 * than VC_SYNC_POLL_STREAMS streams.
 */
int vc_cu_sync_poll_ctx(struct vc_cu_session *x, CUcontext ctx, int *rc);

/**
 * vc_cu_syncer_spin() - on the helper thread, with cb_mu held and no job
 * queued: wait up to VC_SYNC_SPIN_NS for the next one before sleeping, so
 * that a synchronisation right after the last does not pay a thread wake-up.
 * Returns with cb_mu held.
 */
void vc_cu_syncer_spin(struct vc_cu_session *x);

#endif /* VC_CUDA_SYNCPOLL_H */
