/* SPDX-License-Identifier: MIT */
#include "vc_sock.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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
	if (nfds) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
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
	struct cmsghdr *cm;
	ssize_t r;
	int n = 0, pr;

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
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		int got[VC_SOCK_MAX_FDS];
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (k > VC_SOCK_MAX_FDS)
			k = VC_SOCK_MAX_FDS;
		memcpy(got, CMSG_DATA(cm), k * sizeof(int));
		for (size_t i = 0; i < k; i++) {
			if (n < max_fds && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
				fds[n++] = got[i];
			else
				close(got[i]);
		}
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (int i = 0; i < n; i++)
			close(fds[i]);
		return -EMSGSIZE;
	}
	*nfds = n;
	return r;
}
