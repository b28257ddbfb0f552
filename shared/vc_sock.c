/* SPDX-License-Identifier: MIT */
#include "vc_sock.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void vc_sock_fds_attach(struct msghdr *msg, void *ctl, size_t ctl_size, const int *fds, int nfds)
{
	size_t n = sizeof(int) * (size_t)nfds;
	struct cmsghdr *cm;

	if (nfds <= 0 || CMSG_SPACE(n) > ctl_size)
		return;
	memset(ctl, 0, CMSG_SPACE(n));
	msg->msg_control = ctl;
	msg->msg_controllen = CMSG_SPACE(n);
	cm = CMSG_FIRSTHDR(msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n);
	memcpy(CMSG_DATA(cm), fds, n);
}

size_t vc_sock_fds_collect(struct msghdr *msg, int *fds, size_t room)
{
	size_t total = 0;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++, total++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (total < room)
				fds[total] = fd;
			else
				close(fd);
		}
	}
	return total;
}

int vc_sock_send(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VC_SOCK_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t r;

	if (nfds < 0 || nfds > VC_SOCK_MAX_FDS)
		return -EINVAL;
	vc_sock_fds_attach(&msg, u.buf, sizeof(u.buf), fds, nfds);
	do {
		r = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}

ssize_t vc_sock_recv(int sock, void *buf, size_t len, int *fds, int max_fds, int *nfds,
		     int timeout_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VC_SOCK_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	bool trunc;
	ssize_t r;
	size_t n, room;
	int pr;

	*nfds = 0;
	do {
		pr = poll(&pfd, 1, timeout_ms);
	} while (pr < 0 && errno == EINTR);
	if (pr < 0)
		return -errno;
	if (pr == 0)
		return -ETIMEDOUT;
	do {
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	/* A truncated message keeps none of its descriptors. */
	trunc = msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC);
	room = trunc || max_fds < 0 ? 0 : (size_t)max_fds;
	n = vc_sock_fds_collect(&msg, fds, room);
	if (trunc)
		return -EMSGSIZE;
	*nfds = (int)(n < room ? n : room);
	return r;
}
