/* SPDX-License-Identifier: MIT */
/*
 * pending.h - host-local connections that have not said hello yet, held by
 * the listener itself (no process, no session counted) until their hello
 * arrives or their short deadline passes. Bounded in all and per peer (the
 * connecting uid, from SO_PEERCRED): past a bound, the oldest silent
 * connection (of that peer, or of all) is dropped for the new one, so that
 * connections that never speak cannot lock real clients out.
 */
#ifndef VC_SERVER_PENDING_H
#define VC_SERVER_PENDING_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a connection may stay silent before its hello. */
#define VC_PENDING_HELLO_MS 2000

struct vc_pending_conn {
	int fd;
	uid_t uid;
	int64_t since; /* accepted, ms */
};

struct vc_pending {
	struct vc_pending_conn *c;
	unsigned n, max, per_peer;
	uint64_t evicted, expired; /* counts, for the log and tests */
};

/**
 * vc_pending_hello_fn - a pending connection @fd sent @n bytes @msg (its
 * hello, or what stands for one: @n 0 when it closed, larger than the hello
 * when oversized). The callee owns @fd from now on.
 */
typedef void (*vc_pending_hello_fn)(void *arg, int fd, const void *msg, ssize_t n);

/** vc_pending_init() - room for @max pending connections, @per_peer of one uid. 0 or -ENOMEM. */
int vc_pending_init(struct vc_pending *p, unsigned max, unsigned per_peer);

/** vc_pending_fini() - close every pending connection and free the set. */
void vc_pending_fini(struct vc_pending *p);

/**
 * vc_pending_add() - hold freshly accepted connection @fd (non-blocking)
 * until its hello. At a bound, the oldest connection of the same uid (or of
 * all) is closed first, with a refusal saying why.
 */
void vc_pending_add(struct vc_pending *p, int fd);

/** vc_pending_pollfds() - fill up to @room entries of @pfd; returns how many. */
int vc_pending_pollfds(const struct vc_pending *p, struct pollfd *pfd, int room);

/**
 * vc_pending_handle() - after poll: hand every connection whose hello (or
 * hang-up) arrived, per the @n entries @pfd filled by vc_pending_pollfds(),
 * to @fn; close those past their deadline.
 */
void vc_pending_handle(struct vc_pending *p, const struct pollfd *pfd, int n, vc_pending_hello_fn fn, void *arg);

/** vc_pending_timeout_ms() - ms until the next deadline (-1: none). */
int vc_pending_timeout_ms(const struct vc_pending *p);

#endif /* VC_SERVER_PENDING_H */
