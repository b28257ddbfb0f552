/* SPDX-License-Identifier: MIT */
/*
 * fdbox.c - descriptors a host-local client passes on its socket (fdbox.h).
 */
#include "core/fdbox.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vc_sock.h"
#include "vc_wire.h"

#define PUMP_MAX 64 /* messages read per call: a flooding client cannot hold the serving thread */

void vc_fdbox_init(struct vc_fdbox *b)
{
	b->n = 0;
}

static void keep(struct vc_fdbox *b, uint64_t token, int fd)
{
	for (uint32_t i = 0; i < b->n; i++)
		if (b->e[i].token == token) { /* a token again: the newer descriptor wins */
			close(b->e[i].fd);
			b->e[i].fd = fd;
			return;
		}
	if (b->n == VC_FDBOX_MAX) {
		close(fd); /* the command naming it will find nothing */
		return;
	}
	b->e[b->n].token = token;
	b->e[b->n].fd = fd;
	b->n++;
}

bool vc_fdbox_pump(struct vc_fdbox *b, int sock)
{
	for (int k = 0; k < PUMP_MAX; k++) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * VC_SOCK_MAX_FDS)];
			struct cmsghdr align;
		} u;
		struct vc_segfd_msg m;
		char extra[64]; /* a longer message is read whole, then dropped */
		struct iovec iov[2] = {{.iov_base = &m, .iov_len = sizeof(m)}, {.iov_base = extra, .iov_len = sizeof(extra)}};
		struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf)};
		int fds[VC_SOCK_MAX_FDS];
		size_t nfds;
		ssize_t r;

		r = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (r == 0)
			return true;
		if (r < 0)
			return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
		nfds = vc_sock_fds_collect(&msg, fds, VC_SOCK_MAX_FDS);
		if (nfds == 1 && r == (ssize_t)sizeof(m) && !(msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) &&
		    m.magic == VC_SEGFD_MAGIC && !m.pad && m.token) {
			keep(b, m.token, fds[0]);
			continue;
		}
		for (size_t i = 0; i < nfds && i < VC_SOCK_MAX_FDS; i++)
			close(fds[i]);
	}
	return false;
}

int vc_fdbox_take(struct vc_fdbox *b, int sock, uint64_t token)
{
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < b->n; i++)
			if (b->e[i].token == token) {
				int fd = b->e[i].fd;

				b->e[i] = b->e[--b->n];
				return fd;
			}
		if (pass == 0 && sock >= 0)
			vc_fdbox_pump(b, sock);
	}
	return -ENOENT;
}

void vc_fdbox_fini(struct vc_fdbox *b)
{
	for (uint32_t i = 0; i < b->n; i++)
		close(b->e[i].fd);
	b->n = 0;
}
