/* SPDX-License-Identifier: MIT */
/*
 * vc_sock.h - messages with file descriptors over a SOCK_SEQPACKET unix
 * socket: the control channel that hands a session's region and eventfds to
 * its peer (vcuda-server to a host-local client today, QEMU's device and
 * vcuda-server tomorrow).
 */
#ifndef VC_SOCK_H
#define VC_SOCK_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#define VC_SOCK_MAX_FDS 4

/**
 * vc_sock_fds_attach() - make @msg carry @nfds descriptors @fds (SCM_RIGHTS),
 * in control buffer @ctl of @ctl_size bytes (aligned for struct cmsghdr, with
 * room for CMSG_SPACE of them). Nothing is attached when @nfds is 0.
 */
void vc_sock_fds_attach(struct msghdr *msg, void *ctl, size_t ctl_size, const int *fds, int nfds);

/**
 * vc_sock_fds_collect() - the descriptors a received @msg carried: the first
 * @room into @fds, the rest closed. Returns how many it carried (more than
 * @room when some were closed).
 */
size_t vc_sock_fds_collect(struct msghdr *msg, int *fds, size_t room);

/**
 * vc_sock_send() - send one message of @len bytes with @nfds descriptors.
 * Returns 0 or -errno.
 */
int vc_sock_send(int sock, const void *buf, size_t len, const int *fds, int nfds);

/**
 * vc_sock_recv() - receive one message, waiting at most @timeout_ms (-1:
 * forever). Descriptors that arrive are stored in @fds (up to @max_fds, the
 * rest closed) and counted in *@nfds; they are close-on-exec.
 *
 * Returns the message length (0 when the peer closed), -ETIMEDOUT, -EMSGSIZE
 * when the message was longer than @len (its descriptors are closed), or
 * another -errno.
 */
ssize_t vc_sock_recv(int sock, void *buf, size_t len, int *fds, int max_fds, int *nfds,
		     int timeout_ms);

#endif /* VC_SOCK_H */
