/* SPDX-License-Identifier: MIT */
/*
 * vt_admin.c - a vcuda-server's state for the hostile tests (vt_admin.h):
 * one "status" request on its admin socket (docs/MGMT.md; the reply is one
 * compact JSON line, read here by key without a JSON library), and
 * /proc/PID of its listener.
 */
#include "vt_admin.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vc_time.h"

static int64_t field(const char *json, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(json, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

static int admin_status(const char *path, struct vt_server_state *st)
{
	static const char req[] = "{\"op\":\"status\"}\n";
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char buf[1 << 16];
	size_t len = 0;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc = -EIO;
	const char *p;

	if (fd < 0)
		return -errno;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) || write(fd, req, sizeof(req) - 1) != sizeof(req) - 1)
		goto out;
	while (len < sizeof(buf) - 1 && !memchr(buf, '\n', len)) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pf, 1, 3000) <= 0 || (n = read(fd, buf + len, sizeof(buf) - 1 - len)) <= 0)
			goto out;
		len += (size_t)n;
	}
	buf[len] = 0;
	st->mem_used = field(buf, "mem_used");
	st->pinned_used = field(buf, "pinned_used");
	st->sessions = 0;
	p = strstr(buf, "\"sessions\":[");
	if (!p || st->mem_used < 0)
		goto out;
	while ((p = strstr(p + 1, "{\"id\":")))
		st->sessions++;
	rc = 0;
out:
	close(fd);
	return rc;
}

int vt_server_state(int pid, const char *admin, struct vt_server_state *st)
{
	char p[64], line[256];
	struct dirent *e;
	FILE *f;
	DIR *d;

	memset(st, 0, sizeof(*st));
	st->sessions = -1;
	st->rss_kib = -1;
	st->fds = -1;
	snprintf(p, sizeof(p), "/proc/%d/fd", pid);
	if ((d = opendir(p))) {
		st->fds = 0;
		while ((e = readdir(d)))
			st->fds += e->d_name[0] != '.';
		closedir(d);
	}
	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	if ((f = fopen(p, "r"))) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "VmRSS:", 6))
				st->rss_kib = strtoll(line + 6, NULL, 10);
		fclose(f);
	}
	if (st->fds < 0 || st->rss_kib < 0)
		return -ESRCH;
	return admin ? admin_status(admin, st) : 0;
}

int vt_server_settle(int pid, const char *admin, int sessions, int64_t mem, int ms, struct vt_server_state *st)
{
	uint64_t t0 = vc_now_ns();

	for (;;) {
		int rc = vt_server_state(pid, admin, st);

		if (rc == 0 && (!admin || (st->sessions <= sessions && st->mem_used <= mem)))
			return 0;
		if (vc_now_ns() - t0 > (uint64_t)ms * 1000000u)
			return rc ? rc : -ETIMEDOUT;
		usleep(10000);
	}
}
