/* SPDX-License-Identifier: MIT */
/*
 * fdbox.h - descriptors a host-local client passes its session on its socket
 * after the handshake: the memfds of page-locked segments (struct
 * vc_segfd_msg, vc_wire.h), each named by a token that the ring command using
 * it repeats. The socket is read as messages arrive (the serving loop wakes on
 * it) and when a command asks for a token; descriptors wait here, a bounded
 * number of them, until a command takes them or the session ends. Anything
 * else on the socket is read and dropped, as before. Serving thread only.
 */
#ifndef VC_CORE_FDBOX_H
#define VC_CORE_FDBOX_H

#include <stdbool.h>
#include <stdint.h>

#define VC_FDBOX_MAX 64 /* descriptors waiting at most (4 segments of 16 files); more are closed */

struct vc_fdbox {
	uint32_t n;
	struct {
		uint64_t token;
		int fd;
	} e[VC_FDBOX_MAX];
};

/** vc_fdbox_init() - an empty box. */
void vc_fdbox_init(struct vc_fdbox *b);

/**
 * vc_fdbox_pump() - read what waits on @sock without blocking (a bounded
 * number of messages): well-formed descriptor messages are kept (while there
 * is room), everything else dropped. Returns true when the peer is gone.
 */
bool vc_fdbox_pump(struct vc_fdbox *b, int sock);

/**
 * vc_fdbox_take() - the descriptor passed under @token, read from @sock first
 * if it is not here yet (the client sends it before the command that names
 * it, so it is there by then); the caller owns it. Returns it, or -ENOENT.
 */
int vc_fdbox_take(struct vc_fdbox *b, int sock, uint64_t token);

/** vc_fdbox_fini() - close every descriptor still waiting. */
void vc_fdbox_fini(struct vc_fdbox *b);

#endif /* VC_CORE_FDBOX_H */
