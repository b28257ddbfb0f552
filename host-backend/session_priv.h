/* SPDX-License-Identifier: MIT */
/* session_priv.h - a session's private state, shared by session.c and decode.c. */
#ifndef VC_SESSION_PRIV_H
#define VC_SESSION_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include "vc_ring_host.h"
#include "vcuda/server.h"

struct vc_session {
	struct vc_ring_host ring;
	struct vc_layout layout;
	const struct vc_executor_ops *ops;
	void *exec; /* executor context; NULL once released */
	uint64_t seq; /* host-counted sequence number of the last command decoded */
	int doorbell_fd, complete_fd, hangup_fd, stop_fd, mem_fd;
	uint64_t mem_off;
	uint32_t id, spin_us;
	int verbose;
	uint64_t last_beat_ns;
	/* counters, read by other threads with relaxed loads */
	uint64_t n_commands, n_batches, n_sleeps;
	uint32_t stop; /* set by vc_session_stop(), read by the serving thread */
	uint32_t running;
	pthread_t thread;
	bool started;
};

/**
 * vc_session_progress() - publish done_seq up to @seq in the middle of a span,
 * after a command that moved bulk data, so that a guest pipelining through
 * the arena can reuse or read that chunk while later commands still run.
 */
void vc_session_progress(struct vc_session *s, uint64_t seq);

/** vc_session_wake() - signal the guest threads sleeping for a completion. */
void vc_session_wake(void *session);

/**
 * vc_decode_span() - decode and execute the commands of one private span.
 * Returns the number executed, or -EPROTO after marking the session FATAL.
 */
int vc_decode_span(struct vc_session *s, const uint8_t *span, uint32_t len);

#endif /* VC_SESSION_PRIV_H */
