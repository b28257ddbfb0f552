/* SPDX-License-Identifier: MIT */
/*
 * fdbroker.h - file descriptors passed among the workers of one vcuda-server
 * (one VM), through their listener: what a POSIX file-descriptor shareable
 * handle of the CUDA driver needs, since the descriptor one worker's driver
 * exports must reach the worker of another guest process to be imported.
 *
 * The listener makes a SOCK_SEQPACKET socket in the abstract namespace under
 * a random name before it forks workers (they inherit the name, never the
 * socket) and keeps the descriptors workers give it, each under a 128-bit key
 * the giver drew, until the giver takes it back or its worker ends. A request is one connection:
 * the listener accepts only a process it forked (the peer's credentials: its
 * parent is the listener, same user) and answers it at once. Keys are not
 * secrets shown to guests: guests hold tokens of resources/ipc.h, whose MAC
 * the importing worker checks before it asks for the key behind one.
 */
#ifndef VC_FDBROKER_H
#define VC_FDBROKER_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#define VC_FDBROKER_KEY 16u   /* bytes of a key */
#define VC_FDBROKER_MAX 4096u /* descriptors a listener keeps */

/**
 * vc_fdbroker_create() - in the listener, before forking workers: the
 * broker's socket, polled by the listener (vc_fdbroker_pollfd()). Raises the
 * soft limit on open descriptors to the hard one, since the listener keeps
 * what it is given. Returns 0 or -errno.
 */
int vc_fdbroker_create(void);

/**
 * vc_fdbroker_pollfd() - in the listener: fill @p with the broker's socket
 * to poll for input. Returns 1, or 0 when there is no broker.
 */
int vc_fdbroker_pollfd(struct pollfd *p);

/**
 * vc_fdbroker_handle() - in the listener, when its socket polled readable:
 * serve the requests waiting, each from one of the listener's workers
 * (anyone else's connection is closed unanswered).
 */
void vc_fdbroker_handle(void);

/** vc_fdbroker_reap() - in the listener: close what worker @pid gave, which ended. */
void vc_fdbroker_reap(pid_t pid);

/** vc_fdbroker_destroy() - in the listener: close the socket and every descriptor kept. */
void vc_fdbroker_destroy(void);

/**
 * vc_fdbroker_available() - in a worker: whether a broker exists (a worker
 * of a vcuda-server listener; not an embedder of the session library).
 */
int vc_fdbroker_available(void);

/**
 * vc_fdbroker_put() - in a worker: give the listener a duplicate of @fd
 * under a new random key, written to @key (the caller keeps @fd). Returns 0,
 * -ENOTCONN (no broker), -ENOSPC (the listener keeps too many) or -errno.
 */
int vc_fdbroker_put(int fd, uint8_t key[VC_FDBROKER_KEY]);

/**
 * vc_fdbroker_get() - in a worker: a new descriptor, into *@fd, for what was
 * given under @key by any worker of this listener that still lives. The
 * caller closes it. Returns 0, -ENOENT (no such key), -ENOTCONN or -errno.
 */
int vc_fdbroker_get(const uint8_t key[VC_FDBROKER_KEY], int *fd);

/**
 * vc_fdbroker_drop() - in a worker: have the listener close what this
 * worker gave under @key (another worker's is left alone). Returns 0,
 * -ENOENT, -ENOTCONN or -errno.
 */
int vc_fdbroker_drop(const uint8_t key[VC_FDBROKER_KEY]);

#endif /* VC_FDBROKER_H */
