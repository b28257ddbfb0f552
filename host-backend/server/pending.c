/* SPDX-License-Identifier: MIT */
/*
 * pending.c - the listener's set of connections waiting for their hello
 * (pending.h). No worker is forked for a connection before its hello, so a
 * silent connection costs one descriptor and one entry here, never a
 * session.
 */
#include "server/pending.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/server_config.h"
#include "vc_abi_hash.h"
#include "vc_sock.h"
#include "vc_time.h"
#include "vc_wire.h"

int vc_pending_init(struct vc_pending *p, unsigned max, unsigned per_peer)
{
	memset(p, 0, sizeof(*p));
	p->c = calloc(max ? max : 1, sizeof(*p->c));
	if (!p->c)
		return -ENOMEM;
	p->max = max ? max : 1;
	p->per_peer = per_peer ? per_peer : 1;
	return 0;
}

void vc_pending_fini(struct vc_pending *p)
{
	for (unsigned i = 0; i < p->n; i++)
		close(p->c[i].fd);
	free(p->c);
	memset(p, 0, sizeof(*p));
}

/* Refuse connection @i with @status and @why, close it, take it out. */
static void drop(struct vc_pending *p, unsigned i, int status, const char *why)
{
	struct vc_welcome w = {.magic = VC_WELCOME_MAGIC, .version = VC_PROTO_VERSION,
			       .abi_hash = VC_ABI_HASH, .status = status};

	snprintf(w.message, sizeof(w.message), "%s", why);
	/* Non-blocking: a peer that never reads costs no wait. */
	send(p->c[i].fd, &w, sizeof(w), MSG_DONTWAIT | MSG_NOSIGNAL);
	close(p->c[i].fd);
	p->c[i] = p->c[--p->n];
}

/* The oldest connection of uid @uid (any uid when @all), or p->n. */
static unsigned oldest(const struct vc_pending *p, uid_t uid, int all)
{
	unsigned best = p->n;

	for (unsigned i = 0; i < p->n; i++)
		if ((all || p->c[i].uid == uid) && (best == p->n || p->c[i].since < p->c[best].since))
			best = i;
	return best;
}

void vc_pending_add(struct vc_pending *p, int fd)
{
	struct ucred cr = {.uid = (uid_t)-1};
	socklen_t crl = sizeof(cr);
	unsigned mine = 0, v;

	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl);
	for (unsigned i = 0; i < p->n; i++)
		mine += p->c[i].uid == cr.uid;
	v = mine >= p->per_peer ? oldest(p, cr.uid, 0) : p->n >= p->max ? oldest(p, 0, 1) : p->n;
	if (v < p->n) {
		vc_log("dropping a client that sent no hello: %u connections wait for theirs (uid %u has %u)",
		       p->n, (unsigned)p->c[v].uid, mine);
		drop(p, v, -ETIMEDOUT, "vcuda-server: no hello, and newer clients were waiting");
		p->evicted++;
	}
	p->c[p->n++] = (struct vc_pending_conn){.fd = fd, .uid = cr.uid, .since = vc_now_ms()};
}

int vc_pending_pollfds(const struct vc_pending *p, struct pollfd *pfd, int room)
{
	int k = 0;

	for (unsigned i = 0; i < p->n && k < room; i++)
		pfd[k++] = (struct pollfd){.fd = p->c[i].fd, .events = POLLIN};
	return k;
}

void vc_pending_handle(struct vc_pending *p, const struct pollfd *pfd, int n, vc_pending_hello_fn fn, void *arg)
{
	int64_t now = vc_now_ms();

	/* Entries move as others leave: match each polled fd again. */
	for (int k = 0; k < n; k++) {
		uint8_t msg[sizeof(struct vc_hello)];
		int nfds = 0;
		unsigned i;
		ssize_t got;

		if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		for (i = 0; i < p->n && p->c[i].fd != pfd[k].fd; i++)
			;
		if (i == p->n)
			continue;
		/* Descriptors sent with a hello are closed, never kept. */
		got = vc_sock_recv(p->c[i].fd, msg, sizeof(msg), NULL, 0, &nfds, 0);
		if (got == -ETIMEDOUT || got == -EAGAIN)
			continue;
		if (got == -EMSGSIZE)
			got = (ssize_t)sizeof(msg) + 1; /* oversized: refused by the decoder */
		else if (got < 0)
			got = 0;
		int fd = p->c[i].fd;

		p->c[i] = p->c[--p->n];
		fn(arg, fd, msg, got);
	}
	for (unsigned i = 0; i < p->n;) {
		if (now - p->c[i].since >= VC_PENDING_HELLO_MS) {
			vc_log("closing a client that sent no hello in %d ms", VC_PENDING_HELLO_MS);
			drop(p, i, -ETIMEDOUT, "vcuda-server: no hello in time");
			p->expired++;
		} else {
			i++;
		}
	}
}

int vc_pending_timeout_ms(const struct vc_pending *p)
{
	int64_t now = vc_now_ms(), next = -1;

	for (unsigned i = 0; i < p->n; i++) {
		int64_t left = p->c[i].since + VC_PENDING_HELLO_MS - now;

		if (next < 0 || left < next)
			next = left < 0 ? 0 : left;
	}
	return (int)next;
}
