/* SPDX-License-Identifier: MIT */
/*
 * mgmtd_main.c - vcuda-mgmtd: the host manager (docs/MGMT.md). Its options,
 * start-up, the management socket's clients, and the one poll loop that
 * drives everything (clients, VM sockets, servers, signals, timers).
 *
 * Clients are untrusted: a request line is capped (VC_MGMT_LINE_MAX), a
 * client that sends a longer one gets an error and is dropped, one that
 * sends nothing for CLIENT_IDLE_MS is dropped, one that does not read its
 * replies is not read from (and dropped past OUT_MAX), and at most
 * MAX_CLIENTS are served at once. Nothing a client sends can block the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lines.h"
#include "metrics.h"
#include "mgmtd.h"
#include "ops.h"
#include "proto.h"
#include "servers.h"
#include "util.h"
#include "vmsock.h"

#define MAX_CLIENTS 128
#define CLIENT_IDLE_MS 30000
#define OUT_MAX (8u << 20)
#define MAX_POLL (3 + MAX_CLIENTS + 2048)

struct client {
	struct client *next;
	int fd;
	struct vc_peer peer;
	struct vc_lines io;
	int64_t deadline_ms;
	bool closing; /* flush what is queued, then close */
};

static struct vc_mgmtd g_d;
static struct client *g_clients;
static unsigned g_nclients;

/* ---- options --------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vcuda-mgmtd [options]\n"
		"  --socket PATH           management socket (default $VCUDA_MGMT_SOCKET or /run/vcuda/mgmt.sock)\n"
		"  --run-dir DIR           VM sockets (DIR/vms/NAME.sock), servers' admin sockets (default /run/vcuda)\n"
		"  --db PATH               the state (SQLite; default /var/lib/vcuda/mgmt.db)\n"
		"  --inventory FILE        GPUs from this file instead of NVML (tests, dry runs; see docs/MGMT.md)\n"
		"  --nvml-lib PATH         the NVML library (default libnvidia-ml.so.1)\n"
		"  --admin-group NAME      who may change state besides root (default vcuda-admin)\n"
		"  --socket-group NAME     group of the management socket (default: the daemon's)\n"
		"  --socket-mode OCTAL     mode of the management socket (default 0660: the group may read)\n"
		"  --vm-socket-mode OCTAL  mode of the VM sockets (default 0660)\n"
		"  --vm-socket-group NAME  group of the VM sockets: QEMU's (default: the daemon's)\n"
		"  --server PATH           vcuda-server (default: next to vcuda-mgmtd, else $PATH)\n"
		"  --executor NAME         passed to vcuda-server (ci-standin: tests without a GPU)\n"
		"  --server-arg ARG        one more argument for every vcuda-server (repeatable)\n"
		"  --default-mem-quota SIZE     device memory quota of a VM added without one (default 4G)\n"
		"  --default-pinned-quota SIZE  pinned host memory quota (default 256M)\n"
		"  --default-weight N      compute weight, 1..10000 (default 100)\n"
		"  --idle-timeout SECONDS  reclaim sessions idle this long, for VMs added without one (default 0: never)\n"
		"  --events-keep N         event log entries kept (default 100000)\n"
		"  --rescan-interval S     read the GPUs and their health again every S seconds (default 60, 0: only\n"
		"                          on 'vcudactl gpu rescan' or SIGHUP)\n"
		"  --stop-servers-on-exit  stop the VMs' servers when the daemon is stopped (default: they keep\n"
		"                          running and a restarted daemon re-attaches them)\n"
		"  --metrics-listen ADDR   serve Prometheus metrics on http://ADDR/metrics: PORT (127.0.0.1:PORT),\n"
		"                          HOST:PORT or [IPV6]:PORT (default: off; docs/METRICS.md)\n"
		"Sizes take K, M, G, T suffixes.\n");
}

static int opt_size(const char *opt, const char *s, uint64_t *out)
{
	if (vc_size_parse(s, out)) {
		fprintf(stderr, "vcuda-mgmtd: %s: bad size '%s' (like 4096, 512M, 8G)\n", opt, s);
		return -1;
	}
	return 0;
}

static int opt_uint(const char *opt, const char *s, uint64_t max, int base, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || end == s || *end || *s == '-' || v > max) {
		fprintf(stderr, "vcuda-mgmtd: %s: bad value '%s'\n", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

static char g_server_default[PATH_MAX];

static const char *default_server(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = 0;
		snprintf(g_server_default, sizeof(g_server_default), "%s/vcuda-server", dirname(self));
		if (access(g_server_default, X_OK) == 0)
			return g_server_default;
	}
	return "vcuda-server";
}

static int parse_args(int argc, char **argv, struct vc_mgmtd_config *c)
{
	enum { O_SOCKET = 256, O_RUN, O_DB, O_INV, O_NVML, O_AGROUP, O_SGROUP, O_SMODE, O_VMODE, O_SERVER,
	       O_EXEC, O_SARG, O_DMEM, O_DPIN, O_DWEIGHT, O_IDLE, O_KEEP, O_STOP, O_VGROUP, O_RESCAN, O_METRICS };
	static const struct option opts[] = {
		{"socket", required_argument, NULL, O_SOCKET},
		{"run-dir", required_argument, NULL, O_RUN},
		{"db", required_argument, NULL, O_DB},
		{"inventory", required_argument, NULL, O_INV},
		{"nvml-lib", required_argument, NULL, O_NVML},
		{"admin-group", required_argument, NULL, O_AGROUP},
		{"socket-group", required_argument, NULL, O_SGROUP},
		{"socket-mode", required_argument, NULL, O_SMODE},
		{"vm-socket-mode", required_argument, NULL, O_VMODE},
		{"server", required_argument, NULL, O_SERVER},
		{"executor", required_argument, NULL, O_EXEC},
		{"server-arg", required_argument, NULL, O_SARG},
		{"default-mem-quota", required_argument, NULL, O_DMEM},
		{"default-pinned-quota", required_argument, NULL, O_DPIN},
		{"default-weight", required_argument, NULL, O_DWEIGHT},
		{"idle-timeout", required_argument, NULL, O_IDLE},
		{"events-keep", required_argument, NULL, O_KEEP},
		{"stop-servers-on-exit", no_argument, NULL, O_STOP},
		{"vm-socket-group", required_argument, NULL, O_VGROUP},
		{"rescan-interval", required_argument, NULL, O_RESCAN},
		{"metrics-listen", required_argument, NULL, O_METRICS},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	static const char *sargs[32];
	uint64_t v;
	int o;

	c->socket_path = getenv("VCUDA_MGMT_SOCKET");
	if (!c->socket_path || !*c->socket_path)
		c->socket_path = "/run/vcuda/mgmt.sock";
	c->run_dir = "/run/vcuda";
	c->db_path = "/var/lib/vcuda/mgmt.db";
	c->admin_group = "vcuda-admin";
	c->socket_mode = 0660;
	c->vm_socket_mode = 0660;
	c->server_bin = NULL;
	c->server_args = sargs;
	c->def_mem_quota = VC_DEF_MEM_QUOTA;
	c->def_pinned_quota = VC_DEF_PINNED_QUOTA;
	c->def_weight = VC_DEF_WEIGHT;
	c->events_keep = 100000;
	c->vm_socket_gid = -1;
	c->rescan_interval = 60;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case O_SOCKET: c->socket_path = optarg; break;
		case O_RUN: c->run_dir = optarg; break;
		case O_DB: c->db_path = optarg; break;
		case O_INV: c->inventory = optarg; break;
		case O_NVML: c->nvml_lib = optarg; break;
		case O_AGROUP: c->admin_group = optarg; break;
		case O_SGROUP: c->socket_group = optarg; break;
		case O_SERVER: c->server_bin = optarg; break;
		case O_EXEC: c->executor = optarg; break;
		case O_STOP: c->stop_on_exit = true; break;
		case O_VGROUP: c->vm_socket_group = optarg; break;
		case O_METRICS: c->metrics_listen = optarg; break;
		case O_RESCAN:
			if (opt_uint("--rescan-interval", optarg, 86400, 10, &v))
				return -1;
			c->rescan_interval = (uint32_t)v;
			break;
		case O_SARG:
			if (c->nserver_args == 32) {
				fprintf(stderr, "vcuda-mgmtd: at most 32 --server-arg\n");
				return -1;
			}
			sargs[c->nserver_args++] = optarg;
			break;
		case O_SMODE:
		case O_VMODE:
			if (opt_uint(o == O_SMODE ? "--socket-mode" : "--vm-socket-mode", optarg, 0777, 8, &v))
				return -1;
			*(o == O_SMODE ? &c->socket_mode : &c->vm_socket_mode) = (unsigned)v;
			break;
		case O_DMEM:
			if (opt_size("--default-mem-quota", optarg, &c->def_mem_quota))
				return -1;
			break;
		case O_DPIN:
			if (opt_size("--default-pinned-quota", optarg, &c->def_pinned_quota))
				return -1;
			break;
		case O_DWEIGHT:
			if (opt_uint("--default-weight", optarg, VC_WEIGHT_MAX, 10, &v) || !v)
				return -1;
			c->def_weight = (uint32_t)v;
			break;
		case O_IDLE:
			if (opt_uint("--idle-timeout", optarg, VC_IDLE_MAX, 10, &v))
				return -1;
			c->def_idle_timeout = (uint32_t)v;
			break;
		case O_KEEP:
			if (opt_uint("--events-keep", optarg, INT64_MAX, 10, &v) || v < 100) {
				fprintf(stderr, "vcuda-mgmtd: --events-keep: at least 100\n");
				return -1;
			}
			c->events_keep = (int64_t)v;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -1;
	}
	if (!c->server_bin)
		c->server_bin = default_server();
	if (c->vm_socket_group) {
		struct group *g = getgrnam(c->vm_socket_group);

		if (!g) {
			fprintf(stderr, "vcuda-mgmtd: --vm-socket-group: no group %s\n", c->vm_socket_group);
			return -1;
		}
		c->vm_socket_gid = (int)g->gr_gid;
	}
	return 0;
}

/* ---- start-up ------------------------------------------------------------------------------ */

static int mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int parent_dir(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	return mkdirs(dirname(buf), mode);
}

/* One daemon per database: a lock next to it, held while we run. */
static int take_lock(const char *db)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s.lock", db);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "vcuda-mgmtd: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "vcuda-mgmtd: another vcuda-mgmtd uses %s (its lock %s is held)\n", db, path);
		close(fd);
		return -1;
	}
	return fd;
}

static int listen_mgmt(const struct vc_mgmtd_config *c)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd, probe;

	if (strlen(c->socket_path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "vcuda-mgmtd: socket path too long: %s\n", c->socket_path);
		return -1;
	}
	strcpy(a.sun_path, c->socket_path);
	/* A live daemon's socket is not taken over; a dead one's is replaced. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0) {
		fprintf(stderr, "vcuda-mgmtd: another vcuda-mgmtd listens on %s\n", c->socket_path);
		close(probe);
		return -1;
	}
	if (probe >= 0)
		close(probe);
	unlink(c->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "vcuda-mgmtd: cannot listen on %s: %s\n", c->socket_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (c->socket_group) {
		struct group *g = getgrnam(c->socket_group);

		if (!g || chown(c->socket_path, (uid_t)-1, g->gr_gid) < 0) {
			fprintf(stderr, "vcuda-mgmtd: cannot give %s to group %s: %s\n", c->socket_path, c->socket_group,
				g ? strerror(errno) : "no such group");
			close(fd);
			unlink(c->socket_path);
			return -1;
		}
	}
	chmod(c->socket_path, c->socket_mode);
	return fd;
}

/* ---- clients ------------------------------------------------------------------------------- */

static void client_close(struct client *c)
{
	for (struct client **pp = &g_clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	close(c->fd);
	vc_lines_fini(&c->io);
	free(c);
	g_nclients--;
}

static void client_reply(struct client *c, json_t *rep)
{
	size_t len;
	char *text = rep ? vc_json_line(rep, &len) : NULL;

	json_decref(rep);
	if (!text) {
		c->closing = true;
		return;
	}
	if (vc_lines_queue(&c->io, text, len)) {
		vc_mlog("client uid %u pid %d does not read its replies; dropped", (unsigned)c->peer.uid,
			(int)c->peer.pid);
		c->closing = true;
		c->io.out_start = c->io.out_len = 0;
	}
	free(text);
}

static void accept_one(int fd)
{
	static const char busy[] = "{\"v\":1,\"ok\":false,\"code\":\"unavailable\",\"error\":"
				   "\"vcuda-mgmtd is serving too many clients; retry\"}\n";
	struct client *c;

	if (g_nclients >= MAX_CLIENTS) {
		(void)!send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || vc_lines_init(&c->io, VC_MGMT_LINE_MAX, OUT_MAX) || vc_auth_peer(&g_d.auth, fd, &c->peer)) {
		if (c)
			vc_lines_fini(&c->io);
		free(c);
		close(fd);
		return;
	}
	c->fd = fd;
	c->deadline_ms = vc_now_ms() + CLIENT_IDLE_MS;
	c->next = g_clients;
	g_clients = c;
	g_nclients++;
}

/* Empty the backlog (boundedly: the rest of the loop must get its turn). */
static void on_accept(int lfd)
{
	for (int i = 0; i < 64; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		accept_one(fd);
	}
}

static void on_request(struct client *c, const char *line, size_t len)
{
	struct vc_mreq r;
	const char *code;
	char err[512];
	json_t *rep;

	if (vc_mreq_parse(line, len, &r, &code, err, sizeof(err))) {
		vc_mlog("refused a request from uid %u pid %d: %s", (unsigned)c->peer.uid, (int)c->peer.pid, err);
		rep = vc_mrep_err(r.id, code, "%s", err);
	} else {
		rep = vc_ops_handle(&g_d, &r, &c->peer);
	}
	vc_metrics_request(rep);
	client_reply(c, rep);
	vc_mreq_fini(&r);
}

static void on_client(struct client *c, short revents)
{
	char *line;
	size_t len;
	int rc;

	if (revents & POLLIN) {
		rc = vc_lines_fill(&c->io, c->fd);
		if (rc < 0 && rc != -EAGAIN && rc != -ENOBUFS) {
			client_close(c);
			return;
		}
		while (!c->closing && (rc = vc_lines_next(&c->io, &line, &len)) == 1) {
			c->deadline_ms = vc_now_ms() + CLIENT_IDLE_MS;
			on_request(c, line, len);
		}
		if (rc == -EMSGSIZE) {
			client_reply(c, vc_mrep_err(NULL, VC_MERR_BAD_REQUEST,
						    "request too long (the limit is %d bytes a line); closing", VC_MGMT_LINE_MAX - 1));
			c->closing = true;
		}
		if (c->io.eof)
			c->closing = true; /* answer what came, then close */
	} else if (revents & (POLLHUP | POLLERR)) {
		client_close(c);
		return;
	}
	rc = vc_lines_flush(&c->io, c->fd);
	if (rc < 0 || (rc == 0 && c->closing))
		client_close(c);
}

static int clients_timeout(void)
{
	int64_t now = vc_now_ms(), next = INT64_MAX;

	for (struct client *c = g_clients, *n; c; c = n) {
		n = c->next;
		if (now >= c->deadline_ms) {
			client_close(c); /* silent for too long: a slow or stuck client */
			continue;
		}
		if (c->deadline_ms < next)
			next = c->deadline_ms;
	}
	return next == INT64_MAX ? -1 : (int)(next - now);
}

/* ---- the loop ------------------------------------------------------------------------------ */

static int min_timeout(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

static void loop(int lfd, int sfd)
{
	static struct pollfd p[MAX_POLL];
	static struct client *ctag[MAX_CLIENTS];
	static struct vc_vmsock *vtag[1024];
	static struct vc_server *stag[MAX_POLL];

	int64_t next_rescan = g_d.cfg.rescan_interval ? vc_now_ms() + g_d.cfg.rescan_interval * 1000ll : INT64_MAX;

	for (;;) {
		int n = 0, nc = 0, nv, ns, timeout, c0, v0, s0, pr;

		if (vc_now_ms() >= next_rescan) {
			char err[512];
			int changes;

			/* Health as NVML (or the inventory) says now; only changes are logged. */
			if (vc_ops_rescan(&g_d, "periodic rescan", &changes, err, sizeof(err)))
				vc_mlog("periodic rescan failed: %s", err);
			next_rescan = vc_now_ms() + g_d.cfg.rescan_interval * 1000ll;
		}
		timeout = min_timeout(clients_timeout(), vc_servers_timers(&g_d));
		if (next_rescan != INT64_MAX)
			timeout = min_timeout(timeout, (int)(next_rescan - vc_now_ms() > 0 ? next_rescan - vc_now_ms() : 0));
		p[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
		p[n++] = (struct pollfd){.fd = lfd, .events = POLLIN};
		c0 = n;
		for (struct client *c = g_clients; c && nc < MAX_CLIENTS; c = c->next) {
			/* A client with replies queued is not read from until it takes them. */
			short ev = vc_lines_pending(&c->io) ? POLLOUT : POLLIN;

			p[n++] = (struct pollfd){.fd = c->fd, .events = ev};
			ctag[nc++] = c;
		}
		v0 = n;
		nv = vc_vmsock_pollfds(&g_d, p + n, vtag, 1024);
		n += nv;
		s0 = n;
		ns = vc_servers_pollfds(&g_d, p + n, stag, MAX_POLL - 1 - n);
		n += ns;
		n += vc_metrics_http_pollfd(p + n);
		timeout = min_timeout(timeout, vc_metrics_http_timeout());
		pr = poll(p, (nfds_t)n, timeout);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			vc_mlog("poll: %s", strerror(errno));
			return;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					char err[512];
					int changes;

					if (vc_ops_rescan(&g_d, "SIGHUP", &changes, err, sizeof(err)))
						vc_mlog("rescan on SIGHUP failed: %s", err);
					continue;
				}
				vc_mlog("signal %u: stopping", si.ssi_signo);
				return;
			}
		}
		vc_metrics_http_run(); /* what is ready, and its idle clients' timeouts */
		if (pr == 0)
			continue;
		/* Servers first (their descriptors may be gone after the rest). */
		vc_servers_handle(&g_d, p + s0, stag, ns);
		vc_vmsock_handle(&g_d, p + v0, vtag, nv);
		for (int i = 0; i < nc; i++) {
			if (!p[c0 + i].revents)
				continue;
			/* on_client may close only this client */
			on_client(ctag[i], p[c0 + i].revents);
		}
		if (p[1].revents & POLLIN)
			on_accept(lfd);
	}
}

int main(int argc, char **argv)
{
	struct vc_mgmtd *d = &g_d;
	char err[1024], path[PATH_MAX];
	int lock_fd, lfd, sfd, changes = 0, rc = 1;
	sigset_t sigs;

	if (parse_args(argc, argv, &d->cfg))
		return 2;
	d->started_ms = vc_now_ms();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		perror("vcuda-mgmtd: signalfd");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/vms", d->cfg.run_dir);
	if (mkdirs(d->cfg.run_dir, 0755) || mkdirs(path, 0755)) {
		fprintf(stderr, "vcuda-mgmtd: cannot make %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/servers", d->cfg.run_dir);
	if (mkdirs(path, 0700)) {
		fprintf(stderr, "vcuda-mgmtd: cannot make %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/sched", d->cfg.run_dir);
	if (mkdirs(path, 0700) || parent_dir(d->cfg.db_path, 0700) || parent_dir(d->cfg.socket_path, 0755)) {
		fprintf(stderr, "vcuda-mgmtd: cannot make the directories of %s, %s: %s\n", d->cfg.db_path,
			d->cfg.socket_path, strerror(errno));
		return 1;
	}
	lock_fd = take_lock(d->cfg.db_path);
	if (lock_fd < 0)
		return 1;
	if (vc_db_open(d->cfg.db_path, &d->db, err, sizeof(err))) {
		fprintf(stderr, "vcuda-mgmtd: %s\n", err);
		goto err_lock;
	}
	if (vc_gpus_open(d->cfg.inventory, d->cfg.nvml_lib, &d->gpus, err, sizeof(err))) {
		fprintf(stderr, "vcuda-mgmtd: %s\n", err);
		goto err_db;
	}
	vc_auth_init(&d->auth, d->cfg.admin_group);
	vc_mlog("vcuda-mgmtd %s: database %s (schema %d), run dir %s", VC_MGMTD_VERSION, d->cfg.db_path,
		vc_db_schema_version(d->db), d->cfg.run_dir);
	if (d->cfg.inventory)
		vc_mlog("GPUs from the inventory file %s, NOT from NVML: for tests and dry runs only",
			d->cfg.inventory);
	else
		vc_mlog("GPUs from %s", vc_gpus_describe(d->gpus));
	vc_mlog("changing state needs %s", vc_auth_describe(&d->auth, err, sizeof(err)));
	if (vc_ops_rescan(d, "at start", &changes, err, sizeof(err))) {
		fprintf(stderr, "vcuda-mgmtd: %s\n", err);
		goto err_gpus;
	}
	if (vc_server_probe(d) || !d->server_ok)
		vc_mlog("WARNING: VMs cannot start: %s", d->server_problem);
	else
		vc_mlog("vcuda-server: %s%s%s%s", d->cfg.server_bin, d->cfg.executor ? " --executor " : "",
			d->cfg.executor ? d->cfg.executor : "", d->server_sched ? " (with --sched)" : "");
	vc_mgmtd_event(d, "daemon.started", NULL, NULL, "vcuda-mgmtd %s started (pid %d); GPUs from %s",
		       VC_MGMTD_VERSION, (int)getpid(), vc_gpus_describe(d->gpus));
	if (vc_ops_restore(d, err, sizeof(err))) {
		fprintf(stderr, "vcuda-mgmtd: %s\n", err);
		goto err_gpus;
	}
	lfd = listen_mgmt(&d->cfg);
	if (lfd < 0)
		goto err_socks;
	vc_mlog("listening on %s (protocol v%d)", d->cfg.socket_path, VC_MGMT_PROTO_VERSION);
	if (d->cfg.metrics_listen) {
		if (vc_metrics_http_start(d, d->cfg.metrics_listen, err, sizeof(err))) {
			fprintf(stderr, "vcuda-mgmtd: %s\n", err);
			close(lfd);
			unlink(d->cfg.socket_path);
			goto err_socks;
		}
	}
	loop(lfd, sfd);
	vc_metrics_http_stop();
	d->stopping = true;
	close(lfd);
	unlink(d->cfg.socket_path);
	while (g_clients)
		client_close(g_clients);
	rc = 0;
err_socks:
	vc_servers_shutdown(d, d->cfg.stop_on_exit);
	vc_vmsock_closeall(d);
	vc_mgmtd_event(d, "daemon.stopped", NULL, NULL, "vcuda-mgmtd stopped%s",
		       d->cfg.stop_on_exit ? " and stopped the VMs' servers" : "; the VMs' servers keep running");
err_gpus:
	vc_gpus_close(d->gpus);
err_db:
	vc_db_close(d->db);
err_lock:
	close(lock_fd);
	close(sfd);
	return rc;
}
