/* SPDX-License-Identifier: MIT */
/* vc_vm.c - frames between QEMU's virtio-vcuda-pci and vcuda-server. */
#include "vc_vm.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vc_sock.h"

static void terminate(char *s, size_t n)
{
	s[n - 1] = 0;
}

int vc_vm_msg_decode(const void *raw, struct vc_vm_msg *out, uint32_t allowed, char *why, size_t whylen)
{
	struct vc_vm_msg m;

	memcpy(&m, raw, sizeof(m)); /* copy, then validate, then use */
	if (m.magic != VC_VM_MAGIC) {
		snprintf(why, whylen, "bad magic %08x", m.magic);
		return -EPROTO;
	}
	if (m.version != VC_VM_VERSION) {
		snprintf(why, whylen, "protocol version %u, expected %u", m.version, VC_VM_VERSION);
		return -EPROTO;
	}
	if (m.type < VC_VM_HELLO || m.type > VC_VM_MEM || !(allowed & (1u << m.type))) {
		snprintf(why, whylen, "unexpected frame type %u", m.type);
		return -EPROTO;
	}
	if (m.slot >= VC_VM_MAX_SESSIONS) {
		snprintf(why, whylen, "slot %u out of range", m.slot);
		return -EPROTO;
	}
	terminate(m.comm, sizeof(m.comm));
	terminate(m.name, sizeof(m.name));
	terminate(m.message, sizeof(m.message));
	*out = m;
	return 0;
}

void vc_vm_msg_init(struct vc_vm_msg *m, uint32_t type, uint32_t slot)
{
	memset(m, 0, sizeof(*m));
	m->magic = VC_VM_MAGIC;
	m->version = VC_VM_VERSION;
	m->type = type;
	m->slot = slot;
}

int vc_vm_send(int sock, const struct vc_vm_msg *m, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	const uint8_t *p = (const uint8_t *)m;
	size_t done = 0;

	if (nfds < 0 || nfds > 4)
		return -EINVAL;
	while (done < sizeof(*m)) {
		struct iovec iov = {.iov_base = (void *)(p + done), .iov_len = sizeof(*m) - done};
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t r;

		if (!done) /* descriptors ride on the first byte */
			vc_sock_fds_attach(&msg, u.buf, sizeof(u.buf), fds, nfds);
		r = sendmsg(sock, &msg, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return 0;
}

void vc_vm_rx_init(struct vc_vm_rx *rx)
{
	rx->have = 0;
	rx->nfds = 0;
}

void vc_vm_rx_drop(struct vc_vm_rx *rx)
{
	for (int i = 0; i < rx->nfds; i++)
		close(rx->fds[i]);
	vc_vm_rx_init(rx);
}

int vc_vm_rx_read(int sock, struct vc_vm_rx *rx)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} u;
	size_t room, got;
	int bad = 0;

	while (rx->have < sizeof(rx->buf)) {
		struct iovec iov = {.iov_base = rx->buf + rx->have, .iov_len = sizeof(rx->buf) - rx->have};
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf)};
		ssize_t r = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		/* Descriptors belong to a frame's first byte, at most 4. */
		room = rx->have == 0 ? 4 - (size_t)rx->nfds : 0;
		got = vc_sock_fds_collect(&msg, rx->fds + rx->nfds, room);
		rx->nfds += (int)(got < room ? got : room);
		if (got > room)
			bad = 1;
		if (msg.msg_flags & MSG_CTRUNC)
			bad = 1;
		if (r == 0)
			return bad ? -EPROTO : -ECONNRESET;
		rx->have += (size_t)r;
		if (bad)
			return -EPROTO;
	}
	return 1;
}
