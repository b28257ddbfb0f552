/* SPDX-License-Identifier: MIT */
/* session_priv.h - a session's private state, shared by session.c, services.c and decode.c. */
#ifndef VC_SESSION_PRIV_H
#define VC_SESSION_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include "core/fdbox.h"
#include "core/guestmem.h"
#include "core/optimes.h"
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
	bool pass_fds;            /* hangup_fd is the client's socket, which may carry segments */
	struct vc_fdbox fdbox;    /* descriptors it passed, not taken yet */
	uint64_t pinned_max;      /* bytes of segments mapped at once */
	struct vc_guestmem *guestmem; /* a VM session's pins in place; NULL none */
	struct vc_session_services svc; /* handed to the executor at open */
	uint32_t id, spin_us;
	/* The serving thread spins, rather than sleeps, until then: work the
	 * guest waits for without a reply from us ends about then (a fenced
	 * copy, vc_cu_out.linger_us). Serving thread only. */
	uint64_t linger_until_ns;
	int verbose;
	struct vc_optimes *optimes; /* the serving thread's time per operation, or NULL (off) */
	uint64_t last_beat_ns;
	/* counters, read by other threads with relaxed loads */
	uint64_t n_commands, n_batches, n_sleeps;
	uint64_t n_async_failed; /* commands without a reply that failed (decode.c) */
	uint32_t stop; /* set by vc_session_stop(), read by the serving thread */
	uint32_t running;
	pthread_t thread;
	bool started;
};

#endif /* VC_SESSION_PRIV_H */
