/* SPDX-License-Identifier: MIT */
/*
 * fdbroker.c - descriptors among a listener's workers (fdbroker.h).
 *
 * A request is one SOCK_SEQPACKET connection to the listener's abstract
 * socket: one message (struct msg) carrying a descriptor for PUT, answered
 * by one message carrying a descriptor for a GET that found its key. The
 * listener checks the peer before it reads anything (SO_PEERCRED: the
 * listener's own child, same user) and waits at most a second for its
 * request, so it is never held by a process it did not fork.
 */
#include "resources/fdbroker.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vc_sock.h"

#define MAGIC 0x42466376u /* "vcFB" */
#define REQ_WAIT_MS 1000   /* the listener, for a child's request */
#define REP_WAIT_MS 5000   /* a worker, for the listener's answer */

enum { OP_PUT = 1, OP_GET = 2, OP_DROP = 3 };

struct msg {
	uint32_t magic;
	uint32_t op;
	uint8_t key[VC_FDBROKER_KEY];
	int32_t status; /* answers: 0 or -errno */
	uint32_t pad;
};

struct kept {
	uint8_t key[VC_FDBROKER_KEY];
	int fd;
	pid_t owner;
};

/* The name is inherited by workers; the rest is the listener's alone. */
static struct sockaddr_un g_addr;
static socklen_t g_addrlen;
static pid_t g_listener;
static int g_lfd = -1;
static struct kept *g_kept;
static uint32_t g_nkept;

int vc_fdbroker_create(void)
{
	uint8_t r[8];
	struct rlimit rl;
	int fd, n, rc;

	if (g_lfd >= 0)
		return 0;
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	g_kept = calloc(VC_FDBROKER_MAX, sizeof(*g_kept));
	if (!g_kept)
		return -ENOMEM;
	memset(&g_addr, 0, sizeof(g_addr));
	g_addr.sun_family = AF_UNIX;
	/* Abstract: sun_path[0] is NUL; the name is the rest, not terminated. */
	n = snprintf(g_addr.sun_path + 1, sizeof(g_addr.sun_path) - 1,
		     "vcuda-fdbroker-%d-%02x%02x%02x%02x%02x%02x%02x%02x", (int)getpid(), r[0], r[1], r[2], r[3],
		     r[4], r[5], r[6], r[7]);
	g_addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rc = -errno;
		goto err_kept;
	}
	if (bind(fd, (struct sockaddr *)&g_addr, g_addrlen) < 0 || listen(fd, 64) < 0) {
		rc = -errno;
		goto err_fd;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl); /* best effort: the table's bound still holds */
	}
	g_listener = getpid();
	g_lfd = fd;
	return 0;

err_fd:
	close(fd);
err_kept:
	free(g_kept);
	g_kept = NULL;
	g_addrlen = 0;
	return rc;
}

int vc_fdbroker_pollfd(struct pollfd *p)
{
	if (g_lfd < 0 || getpid() != g_listener)
		return 0;
	*p = (struct pollfd){.fd = g_lfd, .events = POLLIN};
	return 1;
}

/* Whether @pid is a child of this process, per /proc (its PPid line). */
static int my_child(pid_t pid)
{
	char path[64], line[128];
	long ppid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %ld", &ppid) == 1)
			break;
	fclose(f);
	return ppid == (long)getpid();
}

static long find(const uint8_t key[VC_FDBROKER_KEY])
{
	for (uint32_t i = 0; i < g_nkept; i++)
		if (!memcmp(g_kept[i].key, key, VC_FDBROKER_KEY))
			return i;
	return -1;
}

/* One connection: check the peer, read its request, answer it. */
static void serve(int cfd)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	struct msg m, a = {.magic = MAGIC};
	int fd = -1, nfds = 0, give = -1;
	ssize_t n;
	long i;

	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.uid != geteuid() || !my_child(cr.pid))
		return;
	n = vc_sock_recv(cfd, &m, sizeof(m), &fd, 1, &nfds, REQ_WAIT_MS);
	if (n != (ssize_t)sizeof(m) || m.magic != MAGIC)
		goto out;
	a.op = m.op;
	memcpy(a.key, m.key, sizeof(a.key));
	if (m.op == OP_PUT && nfds == 1) {
		if (find(m.key) >= 0) {
			a.status = -EEXIST;
		} else if (g_nkept >= VC_FDBROKER_MAX) {
			a.status = -ENOSPC;
		} else {
			memcpy(g_kept[g_nkept].key, m.key, VC_FDBROKER_KEY);
			g_kept[g_nkept].fd = fd;
			g_kept[g_nkept].owner = cr.pid;
			g_nkept++;
			fd = -1; /* kept */
		}
	} else if (m.op == OP_GET && nfds == 0) {
		if ((i = find(m.key)) >= 0)
			give = g_kept[i].fd;
		else
			a.status = -ENOENT;
	} else if (m.op == OP_DROP && nfds == 0) {
		/* Only its giver takes a descriptor back. */
		if ((i = find(m.key)) >= 0 && g_kept[i].owner == cr.pid) {
			close(g_kept[i].fd);
			g_kept[i] = g_kept[--g_nkept];
		} else {
			a.status = -ENOENT;
		}
	} else {
		a.status = -EINVAL;
	}
	vc_sock_send(cfd, &a, sizeof(a), give >= 0 ? &give : NULL, give >= 0 ? 1 : 0);
out:
	if (fd >= 0)
		close(fd);
}

void vc_fdbroker_handle(void)
{
	if (g_lfd < 0 || getpid() != g_listener)
		return;
	for (int k = 0; k < 64; k++) {
		int cfd = accept4(g_lfd, NULL, NULL, SOCK_CLOEXEC);

		if (cfd < 0)
			break;
		serve(cfd);
		close(cfd);
	}
}

void vc_fdbroker_reap(pid_t pid)
{
	uint32_t i = 0;

	if (getpid() != g_listener)
		return;
	while (i < g_nkept) {
		if (g_kept[i].owner != pid) {
			i++;
			continue;
		}
		close(g_kept[i].fd);
		g_kept[i] = g_kept[--g_nkept];
	}
}

void vc_fdbroker_destroy(void)
{
	if (g_lfd < 0 || getpid() != g_listener)
		return;
	for (uint32_t i = 0; i < g_nkept; i++)
		close(g_kept[i].fd);
	free(g_kept);
	g_kept = NULL;
	g_nkept = 0;
	close(g_lfd);
	g_lfd = -1;
	g_addrlen = 0;
}

/* ---- a worker's side ---------------------------------------------------------------- */

int vc_fdbroker_available(void)
{
	return g_addrlen && getpid() != g_listener;
}

/* One request: @q (with @fd when >= 0) out, the answer into @a with its
 * descriptor into *@got (-1 when none; NULL: none is wanted, any closed). */
static int request(const struct msg *q, int fd, struct msg *a, int *got)
{
	struct timeval tv = {.tv_sec = REP_WAIT_MS / 1000};
	int s, nfds = 0, unwanted = -1, rc;
	ssize_t n;

	if (!vc_fdbroker_available())
		return -ENOTCONN;
	if (!got)
		got = &unwanted;
	*got = -1;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* connect() waits on a full backlog for as long as a send may. */
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&g_addr, g_addrlen) < 0) {
		rc = -errno;
		goto out;
	}
	if ((rc = vc_sock_send(s, q, sizeof(*q), fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0)))
		goto out;
	n = vc_sock_recv(s, a, sizeof(*a), got, 1, &nfds, REP_WAIT_MS);
	if (n < 0) {
		rc = (int)n;
		goto out;
	}
	rc = n == (ssize_t)sizeof(*a) && a->magic == MAGIC && a->op == q->op &&
			     !memcmp(a->key, q->key, VC_FDBROKER_KEY) && a->status <= 0
		     ? a->status
		     : -EPROTO;
	if ((rc || got == &unwanted) && *got >= 0) {
		close(*got);
		*got = -1;
	}
out:
	close(s);
	return rc;
}

int vc_fdbroker_put(int fd, uint8_t key[VC_FDBROKER_KEY])
{
	struct msg q = {.magic = MAGIC, .op = OP_PUT}, a;
	int rc;

	if (fd < 0)
		return -EBADF;
	if (getrandom(q.key, sizeof(q.key), 0) != (ssize_t)sizeof(q.key))
		return -EIO;
	rc = request(&q, fd, &a, NULL);
	if (rc == 0)
		memcpy(key, q.key, VC_FDBROKER_KEY);
	return rc;
}

int vc_fdbroker_get(const uint8_t key[VC_FDBROKER_KEY], int *fd)
{
	struct msg q = {.magic = MAGIC, .op = OP_GET}, a;
	int got, rc;

	memcpy(q.key, key, VC_FDBROKER_KEY);
	rc = request(&q, -1, &a, &got);
	if (rc == 0 && got < 0)
		rc = -EPROTO;
	if (rc == 0)
		*fd = got;
	return rc;
}

int vc_fdbroker_drop(const uint8_t key[VC_FDBROKER_KEY])
{
	struct msg q = {.magic = MAGIC, .op = OP_DROP}, a;

	memcpy(q.key, key, VC_FDBROKER_KEY);
	return request(&q, -1, &a, NULL);
}
