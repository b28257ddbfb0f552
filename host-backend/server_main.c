/* SPDX-License-Identifier: MIT */
/*
 * server_main.c - vcuda-server: one process per VM (or per group of host-local
 * clients). Listens on a unix socket; each client gets its own shared region,
 * doorbell and completion eventfds, and a thread that serves its ring. When a
 * client disconnects, dies, or breaks the protocol, everything it held is
 * freed and the other clients carry on.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "handshake.h"
#include "region.h"
#include "vc_abi_hash.h"
#include "vc_layout.h"
#include "vc_sock.h"
#include "vcuda/server.h"

#define HANDSHAKE_TIMEOUT_MS 5000
#define BEAT_MS 100

struct config {
	const char *socket_path;
	const char *executor;
	const char *driver;
	struct vc_layout_req lreq;
	unsigned max_sessions;
	uint32_t spin_us;
	struct vc_standin_config standin;
	int verbose;
};

struct client {
	struct client *next;
	int sock;
	uint32_t id;
	pthread_t thread;
	struct vc_session *session; /* under g_lock; NULL when not serving */
	bool done;                  /* under g_lock: thread finished, join me */
};

static struct config g_cfg;
static const struct vc_executor_ops *g_exec;
static void *g_exec_factory;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct client *g_clients;
static unsigned g_nclients;
static volatile sig_atomic_t g_quit;
static int g_wake[2] = {-1, -1};

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	char buf[512];
	struct timespec ts;
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "vcuda-server[%d] %lld.%03ld %s\n", (int)getpid(), (long long)ts.tv_sec,
		ts.tv_nsec / 1000000, buf);
}

static void refuse(int sock, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(int sock, int status, const char *fmt, ...)
{
	struct vc_welcome w = {.magic = VC_WELCOME_MAGIC, .version = VC_PROTO_VERSION,
			       .abi_hash = VC_ABI_HASH, .status = status};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w.message, sizeof(w.message), fmt, ap);
	va_end(ap);
	vc_sock_send(sock, &w, sizeof(w), NULL, 0);
}

/* Serve one client from handshake to teardown, on its own thread. */
static void serve(struct client *c)
{
	struct vc_hello hello;
	struct vc_welcome w = {0};
	struct vc_layout layout;
	struct vc_region region = {.mem_fd = -1, .doorbell_fd = -1, .complete_fd = -1};
	struct vc_session *s = NULL;
	struct vc_session_stats st;
	char name[32], why[sizeof(w.message)];
	uint8_t msg[sizeof(struct vc_hello)];
	int fds[3], nfds, rc;
	ssize_t n;

	n = vc_sock_recv(c->sock, msg, sizeof(msg), NULL, 0, &nfds, HANDSHAKE_TIMEOUT_MS);
	if (n == -EMSGSIZE)
		n = (ssize_t)sizeof(msg) + 1; /* oversized: refused below */
	else if (n < 0) {
		logmsg("client %u: no hello (%s), closing", c->id, strerror((int)-n));
		return;
	}
	rc = vc_hello_decode(msg, n, &hello, why, sizeof(why));
	if (rc) {
		logmsg("client %u: %s; refused", c->id, why);
		refuse(c->sock, rc, "%s", why);
		return;
	}
	rc = vc_layout_compute(&g_cfg.lreq, &layout);
	if (rc)
		goto err_refuse;
	snprintf(name, sizeof(name), "vcuda-session-%u", c->id);
	rc = vc_region_create(&layout, name, &region);
	if (rc)
		goto err_refuse;
	struct vc_session_params p = {
		.base = region.base,
		.layout = &layout,
		.doorbell_fd = region.doorbell_fd,
		.complete_fd = region.complete_fd,
		.hangup_fd = c->sock,
		.exec = g_exec,
		.exec_factory = g_exec_factory,
		.id = c->id,
		.spin_us = g_cfg.spin_us,
	};
	rc = vc_session_create(&p, &s);
	if (rc)
		goto err_region;

	w.magic = VC_WELCOME_MAGIC;
	w.version = VC_PROTO_VERSION;
	w.abi_hash = VC_ABI_HASH;
	w.session_id = c->id;
	w.layout = layout;
	fds[0] = region.mem_fd;
	fds[1] = region.doorbell_fd;
	fds[2] = region.complete_fd;
	rc = vc_sock_send(c->sock, &w, sizeof(w), fds, 3);
	if (rc)
		goto err_session;
	logmsg("session %u: opened for pid %u (%s): region %" PRIu64 " B, ring %u B, arena %" PRIu64
	       " B in %u B chunks, executor %s",
	       c->id, hello.pid, hello.comm, layout.region_size, layout.ring_size, layout.arena_size,
	       layout.chunk_size, g_exec->name);

	pthread_mutex_lock(&g_lock);
	c->session = s;
	pthread_mutex_unlock(&g_lock);
	rc = vc_session_run(s);
	pthread_mutex_lock(&g_lock);
	c->session = NULL;
	pthread_mutex_unlock(&g_lock);

	vc_session_get_stats(s, &st);
	if (rc)
		logmsg("session %u: FATAL: %s, after %" PRIu64 " commands; resources freed", c->id,
		       vc_fatal_name(st.fatal), st.commands);
	else
		logmsg("session %u: closed after %" PRIu64 " commands in %" PRIu64 " batches", c->id,
		       st.commands, st.batches);
	vc_session_destroy(s);
	vc_region_destroy(&region);
	return;

err_session:
	vc_session_destroy(s);
err_region:
	vc_region_destroy(&region);
err_refuse:
	logmsg("client %u: cannot open a session: %s", c->id, strerror(-rc));
	refuse(c->sock, rc, "vcuda-server cannot open a session: %s", strerror(-rc));
}

static void *client_thread(void *arg)
{
	struct client *c = arg;
	char b = 0;

	serve(c);
	close(c->sock);
	pthread_mutex_lock(&g_lock);
	c->done = true;
	pthread_mutex_unlock(&g_lock);
	if (write(g_wake[1], &b, 1) < 0 && errno != EAGAIN)
		logmsg("wake pipe: %s", strerror(errno));
	return NULL;
}

/* Join finished client threads; with @all, stop every session and join all. */
static void reap(bool all)
{
	for (;;) {
		struct client *c, **pp;
		bool left;

		pthread_mutex_lock(&g_lock);
		if (all)
			for (c = g_clients; c; c = c->next)
				if (c->session)
					vc_session_stop(c->session); /* not started: only signals */
		for (pp = &g_clients; *pp && !(*pp)->done; pp = &(*pp)->next)
			;
		c = *pp;
		if (c) {
			*pp = c->next;
			g_nclients--;
		}
		left = g_clients != NULL;
		pthread_mutex_unlock(&g_lock);
		if (c) {
			pthread_join(c->thread, NULL);
			free(c);
			continue;
		}
		if (!all || !left)
			return;
		usleep(10000); /* threads still in a handshake or finishing a stop */
	}
}

static void heartbeat(void)
{
	pthread_mutex_lock(&g_lock);
	for (struct client *c = g_clients; c; c = c->next)
		if (c->session)
			vc_session_heartbeat(c->session);
	pthread_mutex_unlock(&g_lock);
}

static void on_signal(int sig)
{
	char b = 0;

	(void)sig;
	g_quit = 1;
	if (write(g_wake[1], &b, 1) < 0) {
		/* nothing to do in a signal handler */
	}
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "vcuda-server: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A stale socket from a dead server is replaced; a live one is not. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		fprintf(stderr, "vcuda-server: another server is listening on %s\n", path);
		close(fd);
		return -1;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "vcuda-server: cannot listen on %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	chmod(path, 0660);
	return fd;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vcuda-server --socket PATH [options]\n"
		"  -s, --socket PATH        unix socket to listen on (default $VCUDA_SOCKET)\n"
		"  -e, --executor NAME      cuda (default) or ci-standin (tests without a GPU only)\n"
		"      --driver PATH        the NVIDIA libcuda.so.1 to load (default: the usual places)\n"
		"      --ring-size BYTES    command ring per session (power of two; default 1M)\n"
		"      --arena-size BYTES   staging arena per session (default 64M)\n"
		"      --chunk-size BYTES   arena chunk (default 512K)\n"
		"      --slots N            reply slots per session (default 64)\n"
		"      --slot-size BYTES    reply slot size (default 8K)\n"
		"      --max-sessions N     refuse clients beyond N (default 64)\n"
		"      --spin-us US         busy-poll before sleeping (default 100)\n"
		"      --standin-mem BYTES  ci-standin device memory per session (default 1G)\n"
		"  -v, --verbose\n"
		"Sizes accept K, M and G suffixes.\n");
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_u32(const char *opt, const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_size(s, &v) || v > UINT32_MAX) {
		fprintf(stderr, "vcuda-server: %s: bad value '%s'\n", opt, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	enum { O_RING = 256, O_ARENA, O_CHUNK, O_SLOTS, O_SLOTSZ, O_MAX, O_SPIN, O_SMEM, O_DRIVER };
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"executor", required_argument, NULL, 'e'},
		{"ring-size", required_argument, NULL, O_RING},
		{"arena-size", required_argument, NULL, O_ARENA},
		{"chunk-size", required_argument, NULL, O_CHUNK},
		{"slots", required_argument, NULL, O_SLOTS},
		{"slot-size", required_argument, NULL, O_SLOTSZ},
		{"max-sessions", required_argument, NULL, O_MAX},
		{"spin-us", required_argument, NULL, O_SPIN},
		{"standin-mem", required_argument, NULL, O_SMEM},
		{"driver", required_argument, NULL, O_DRIVER},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	uint32_t u;
	int o;

	g_cfg.socket_path = getenv("VCUDA_SOCKET");
	g_cfg.executor = "cuda";
	g_cfg.max_sessions = 64;
	while ((o = getopt_long(argc, argv, "s:e:vh", opts, NULL)) != -1) {
		switch (o) {
		case 's': g_cfg.socket_path = optarg; break;
		case 'e': g_cfg.executor = optarg; break;
		case 'v': g_cfg.verbose++; break;
		case O_DRIVER: g_cfg.driver = optarg; break;
		case 'h': usage(stdout); exit(0);
		case O_RING: if (parse_u32("--ring-size", optarg, &g_cfg.lreq.ring_size)) return -1; break;
		case O_CHUNK: if (parse_u32("--chunk-size", optarg, &g_cfg.lreq.chunk_size)) return -1; break;
		case O_SLOTS: if (parse_u32("--slots", optarg, &g_cfg.lreq.slot_count)) return -1; break;
		case O_SLOTSZ: if (parse_u32("--slot-size", optarg, &g_cfg.lreq.slot_size)) return -1; break;
		case O_SPIN: if (parse_u32("--spin-us", optarg, &g_cfg.spin_us)) return -1; break;
		case O_MAX:
			if (parse_u32("--max-sessions", optarg, &u) || !u)
				return -1;
			g_cfg.max_sessions = u;
			break;
		case O_ARENA:
			if (parse_size(optarg, &g_cfg.lreq.arena_size)) {
				fprintf(stderr, "vcuda-server: --arena-size: bad value '%s'\n", optarg);
				return -1;
			}
			break;
		case O_SMEM:
			if (parse_size(optarg, &g_cfg.standin.mem_limit)) {
				fprintf(stderr, "vcuda-server: --standin-mem: bad value '%s'\n", optarg);
				return -1;
			}
			break;
		default: usage(stderr); return -1;
		}
	}
	if (optind != argc || !g_cfg.socket_path) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct vc_layout probe;
	struct sigaction sa = {.sa_handler = on_signal};
	uint32_t next_id = 1;
	int lfd;

	if (parse_args(argc, argv))
		return 2;
	if (!strcmp(g_cfg.executor, "ci-standin")) {
		g_exec = &vc_exec_ci_standin_ops;
		g_exec_factory = &g_cfg.standin;
	} else if (!strcmp(g_cfg.executor, "cuda")) {
		char err[256];

		g_exec = &vc_exec_cuda_ops;
		g_exec_factory = vc_cuda_driver_open(g_cfg.driver, err, sizeof(err));
		if (!g_exec_factory) {
			fprintf(stderr, "vcuda-server: %s\n", err);
			return 1;
		}
	} else {
		fprintf(stderr, "vcuda-server: unknown executor '%s' (cuda, ci-standin)\n",
			g_cfg.executor);
		return 2;
	}
	if (vc_layout_compute(&g_cfg.lreq, &probe)) {
		fprintf(stderr, "vcuda-server: invalid region sizes (ring a power of two in 4K..16M, "
				"chunk a multiple of 4K in 4K..64M, arena a multiple of the chunk up to 4G)\n");
		return 2;
	}
	if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(g_cfg.socket_path);
	if (lfd < 0)
		return 1;
	if (!strcmp(g_cfg.executor, "ci-standin"))
		logmsg("WARNING: executor is the CI stand-in for a GPU (host RAM, kernels not run)");
	logmsg("listening on %s (protocol v%u, abi %016" PRIx64 ")", g_cfg.socket_path,
	       VC_PROTO_VERSION, (uint64_t)VC_ABI_HASH);

	while (!g_quit) {
		struct pollfd pfd[2] = {{.fd = lfd, .events = POLLIN}, {.fd = g_wake[0], .events = POLLIN}};
		int pr = poll(pfd, 2, BEAT_MS);
		char drainbuf[64];

		heartbeat();
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0 && (pfd[1].revents & POLLIN))
			while (read(g_wake[0], drainbuf, sizeof(drainbuf)) > 0)
				;
		reap(false);
		if (pr <= 0 || !(pfd[0].revents & POLLIN))
			continue;

		int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (cfd < 0)
			continue;
		if (g_nclients >= g_cfg.max_sessions) {
			logmsg("refusing a client: %u sessions open (--max-sessions)", g_nclients);
			refuse(cfd, -EBUSY, "vcuda-server: too many sessions (%u); try again later",
			       g_nclients);
			close(cfd);
			continue;
		}
		struct client *c = calloc(1, sizeof(*c));

		if (!c) {
			close(cfd);
			continue;
		}
		c->sock = cfd;
		c->id = next_id++;
		pthread_mutex_lock(&g_lock);
		if (pthread_create(&c->thread, NULL, client_thread, c)) {
			pthread_mutex_unlock(&g_lock);
			logmsg("cannot start a thread for client %u", c->id);
			close(cfd);
			free(c);
			continue;
		}
		c->next = g_clients;
		g_clients = c;
		g_nclients++;
		pthread_mutex_unlock(&g_lock);
	}
	reap(false);
	logmsg("shutting down: stopping %u sessions", g_nclients);
	reap(true);
	close(lfd);
	unlink(g_cfg.socket_path);
	return 0;
}
