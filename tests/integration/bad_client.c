/* SPDX-License-Identifier: MIT */
/*
 * bad_client.c - hostile clients against a running vcuda-server, while a
 * well-behaved client keeps working beside them. Each bad client must end in
 * a FATAL session (and a clear error on its side), the server must free the
 * session's resources (its memfd mapping disappears from the server's and
 * its session workers' /proc/PID/maps, the listener's fd count returns to the
 * baseline), and the good client must notice nothing. The clients speak the
 * CUDA operations the guest library sends (tests/lib/vt_cuda.h), so the good
 * one verifies copies and a kernel's stores, and the bad ones hold a context
 * and device memory for the server to free.
 *
 *   bad_client --socket PATH --server-pid PID [--full]
 *
 * With --full, against a server started with --max-sessions 1: only the
 * "server full" case (the second client is told why).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vc_client.h"
#include "vc_ring_guest.h"
#include "vc_shm.h"
#include "vc_sock.h"
#include "vc_time.h"
#include "vc_abi_hash.h"
#include "vc_wire.h"
#include "vt_admin.h"
#include "vt_cuda.h"
#include "vt_hostile.h"

static const char *g_path, *g_admin;
static int g_pid;
static struct vt_server_state g_base; /* the neighbour's session alone */
static long g_rss_slack = 4096;       /* KiB the listener's RSS may grow (--rss-slack) */
static int g_pass, g_fail;
static volatile int g_stop;
static uint64_t g_good_ops;
static char g_good_err[256];

/* How long a session may take to be freed once its client is gone: the
 * server drains what was queued first (4000 commands under ASan on a busy
 * machine took over 2 s); a hang still shows. */
#define FREED_MS 10000
#define GOOD_WAIT_MS 2000 /* how long the good client may take to show a round trip */
#define STR_(x) #x
#define STR(x) STR_(x)

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			printf("not ok - " __VA_ARGS__);                  \
			printf("\n");                                     \
			g_fail++;                                         \
			return;                                           \
		}                                                         \
	} while (0)

static uint64_t now_ms(void)
{
	return vc_now_ns() / 1000000u;
}

static int count_fds(void)
{
	char p[64];
	DIR *d;
	int n = 0;

	snprintf(p, sizeof(p), "/proc/%d/fd", g_pid);
	d = opendir(p);
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;
}

static int maps_of(int pid, const char *needle)
{
	char p[64], line[512];
	FILE *f;
	int found = 0;

	snprintf(p, sizeof(p), "/proc/%d/maps", pid);
	f = fopen(p, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = ' ';
		if (strstr(line, needle))
			found = 1;
	}
	fclose(f);
	return found;
}

/* The parent of process @pid, or -1. */
static int parent_of(int pid)
{
	char p[64], buf[512], *q;
	FILE *f;
	int ppid = -1;

	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (q = strrchr(buf, ')')))
		sscanf(q + 2, "%*c %d", &ppid);
	fclose(f);
	return ppid;
}

/* Whether the server or one of its session workers maps session @id's region
 * (any session's when @id is 0). */
static int has_session_mapping(uint32_t id)
{
	char needle[64];
	struct dirent *e;
	DIR *d;
	int found;

	if (id)
		snprintf(needle, sizeof(needle), "vcuda-session-%u ", id);
	else
		snprintf(needle, sizeof(needle), "vcuda-session-");
	found = maps_of(g_pid, needle);
	d = opendir("/proc");
	while (!found && d && (e = readdir(d))) {
		int pid = atoi(e->d_name);

		if (pid > 0 && parent_of(pid) == g_pid)
			found = maps_of(pid, needle);
	}
	if (d)
		closedir(d);
	return found;
}

/* Wait up to @ms for the server to drop session @id's region; -1 if it did not. */
static long wait_freed(uint32_t id, uint64_t ms)
{
	uint64_t t0 = now_ms();

	while (now_ms() - t0 < ms) {
		if (has_session_mapping(id) == 0)
			return (long)(now_ms() - t0);
		usleep(5000);
	}
	return -1;
}

/* ---- the well-behaved neighbour ------------------------------------------ */

/* Each round trip: 64 KiB through the arena, one word of it overwritten by
 * the store kernel in stream order, all of it read back and compared. */
static void *good_client(void *arg)
{
	struct vc_client *c;
	uint8_t a[65536], b[65536];
	uint64_t ctx = 0, d = 0, store = 0;
	char err[256];
	int rc;

	(void)arg;
	if (vc_client_open(g_path, &c, err, sizeof(err))) {
		snprintf(g_good_err, sizeof(g_good_err), "open: %.200s", err);
		return NULL;
	}
	if ((rc = vt_ctx_open(c, &ctx)) || (rc = vt_mem_alloc(c, ctx, sizeof(a), &d)) ||
	    (rc = vt_store_kernel(c, ctx, &store))) {
		snprintf(g_good_err, sizeof(g_good_err), "context, alloc or module load failed (%d)", rc);
		goto out;
	}
	for (uint64_t i = 0; !g_stop; i++) {
		uint32_t word = (uint32_t)(i * 4 % sizeof(a)), v = (uint32_t)i ^ 0xa5a5a5a5u;

		memset(a, (int)(i & 0xff), sizeof(a));
		a[i % sizeof(a)] ^= 0x5a;
		rc = vt_htod(c, ctx, d, a, sizeof(a), 0);
		if (!rc)
			rc = vt_store(c, ctx, store, d + word, v);
		memcpy(a + word, &v, sizeof(v));
		if (!rc)
			rc = vt_dtoh(c, ctx, b, d, sizeof(b));
		if (rc || memcmp(a, b, sizeof(a))) {
			snprintf(g_good_err, sizeof(g_good_err), "round trip %" PRIu64 " failed (rc %d)", i, rc);
			break;
		}
		__atomic_store_n(&g_good_ops, i + 1, __ATOMIC_RELAXED);
	}
out:
	vc_client_close(c);
	return NULL;
}

/* ---- hostile ring contents ------------------------------------------------ */

/* After a case: the neighbour's session alone is open and charged (with an
 * admin socket). Returns 0, or -1 with a "not ok" line printed. */
static int back_to_base(const char *name)
{
	struct vt_server_state st;

	if (!g_admin)
		return 0;
	if (vt_server_settle(g_pid, g_admin, g_base.sessions, g_base.mem_used, 2000, &st) ||
	    st.pinned_used != g_base.pinned_used) {
		printf("not ok - %s: the server holds %d sessions, %lld device and %lld pinned bytes "
		       "(the neighbour alone: %d, %lld, %lld)\n", name, st.sessions, (long long)st.mem_used,
		       (long long)st.pinned_used, g_base.sessions, (long long)g_base.mem_used,
		       (long long)g_base.pinned_used);
		g_fail++;
		return -1;
	}
	return 0;
}

/* The good client made a round trip since it had made @ops0: given up to
 * GOOD_WAIT_MS (a loaded machine may not schedule it within a few ms). */
static bool good_moved(uint64_t ops0)
{
	for (int i = 0; i < GOOD_WAIT_MS / 10; i++) {
		if (__atomic_load_n(&g_good_ops, __ATOMIC_RELAXED) > ops0 || g_good_err[0])
			break;
		usleep(10000);
	}
	return __atomic_load_n(&g_good_ops, __ATOMIC_RELAXED) > ops0;
}

static void run_bad(const char *name, void (*inject)(struct vc_ring_guest *, uint64_t, uint64_t), uint32_t want)
{
	struct vc_client *c;
	struct vc_client_info info;
	uint64_t ctx = 0, d = 0, ops0 = __atomic_load_n(&g_good_ops, __ATOMIC_RELAXED);
	uint32_t reason = 0;
	char err[256];
	int rc;
	long ms;

	CHECK(!vc_client_open(g_path, &c, err, sizeof(err)), "%s: open: %s", name, err);
	vc_client_get_info(c, &info);
	/* Something for the server to free: a context and device memory. */
	rc = vt_ctx_open(c, &ctx);
	if (!rc)
		rc = vt_mem_alloc(c, ctx, 8 << 20, &d);
	if (rc) {
		vc_client_close(c);
		CHECK(0, "%s: context or alloc: %d", name, rc);
	}
	inject(vc_client_raw_ring(c), ctx, d);
	rc = vt_sync(c, ctx); /* publishes and kicks: the server meets the bad bytes first */
	vc_ring_guest_status(vc_client_raw_ring(c), &reason);
	vc_client_close(c);
	CHECK(rc == -EPROTO, "%s: the client got %d, not -EPROTO (session FATAL)", name, rc);
	CHECK(reason == want, "%s: fatal reason %u, expected %u", name, reason, want);
	ms = wait_freed(info.session_id, FREED_MS);
	CHECK(ms >= 0, "%s: server still maps session %u after %d ms", name, info.session_id, FREED_MS);
	CHECK(good_moved(ops0) && !g_good_err[0], "%s: the good client stalled or failed: %s", name,
	      g_good_err[0] ? g_good_err : "no round trip in " STR(GOOD_WAIT_MS) " ms");
	if (back_to_base(name))
		return;
	printf("ok - %s: client saw FATAL (reason %u), server freed session %u in %ld ms, "
	       "neighbour kept working\n", name, reason, info.session_id, ms);
	g_pass++;
}

/* A case the session survives with exact answers (or ends through a cap). */
static void run_live(const struct vt_live_case *k)
{
	struct vc_client *c;
	struct vc_client_info info;
	uint64_t ctx = 0, d = 0, ops0 = __atomic_load_n(&g_good_ops, __ATOMIC_RELAXED);
	uint8_t a[4096], b[4096];
	char err[256], why[256] = "";
	int rc;
	long ms;

	CHECK(!vc_client_open(g_path, &c, err, sizeof(err)), "%s: open: %s", k->name, err);
	vc_client_get_info(c, &info);
	rc = vt_ctx_open(c, &ctx);
	if (!rc)
		rc = vt_mem_alloc(c, ctx, 8 << 20, &d);
	if (rc) {
		vc_client_close(c);
		CHECK(0, "%s: context or alloc: %d", k->name, rc);
	}
	rc = k->run(c, ctx, d, why, sizeof(why));
	if (!rc && k->end == VT_END_CLOSE) { /* still serving: 4 KiB there and back */
		for (unsigned i = 0; i < sizeof(a); i++)
			a[i] = (uint8_t)(i * 13 + 1);
		memset(b, 0, sizeof(b));
		if (vt_htod(c, ctx, d, a, sizeof(a), 0) || vt_dtoh(c, ctx, b, d, sizeof(b)) || memcmp(a, b, sizeof(a)))
			snprintf(why, sizeof(why), "the session did not serve a round trip after it"), rc = -1;
	}
	vc_client_close(c);
	CHECK(rc == 0, "%s: %s", k->name, why);
	ms = wait_freed(info.session_id, FREED_MS);
	CHECK(ms >= 0, "%s: server still maps session %u after %d ms", k->name, info.session_id, FREED_MS);
	CHECK(good_moved(ops0) && !g_good_err[0], "%s: the good client stalled or failed: %s", k->name,
	      g_good_err[0] ? g_good_err : "no round trip in " STR(GOOD_WAIT_MS) " ms");
	if (back_to_base(k->name))
		return;
	printf("ok - %s: exact answers, %s, session %u freed in %ld ms, neighbour kept working\n", k->name,
	       k->end == VT_END_CLOSE ? "then served a round trip" :
	       k->end == VT_END_HELD ? "closed while held" : "FATAL for it alone", info.session_id, ms);
	g_pass++;
}

/* ---- hostile handshakes ----------------------------------------------------- */

static int raw_connect(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", g_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void version_mismatch(void)
{
	struct vc_hello h = {.magic = VC_HELLO_MAGIC, .version = VC_PROTO_VERSION + 41,
			     .abi_hash = 0x1234};
	struct vc_welcome w;
	int fds[4], nfds, fd = raw_connect();
	ssize_t n;

	CHECK(fd >= 0, "version mismatch: connect");
	vc_sock_send(fd, &h, sizeof(h), NULL, 0);
	n = vc_sock_recv(fd, &w, sizeof(w), fds, 4, &nfds, 3000);
	close(fd);
	CHECK(n == (ssize_t)sizeof(w) && w.status == -EPROTONOSUPPORT && nfds == 0,
	      "version mismatch: expected a refusal, got %zd bytes status %d", n, n > 0 ? w.status : 0);
	w.message[sizeof(w.message) - 1] = 0;
	CHECK(strstr(w.message, "mismatch") != NULL, "version mismatch: unclear message '%s'", w.message);
	printf("ok - version mismatch refused: \"%s\"\n", w.message);
	g_pass++;
}

static void garbage_hello(void)
{
	char junk[7] = "garbage";
	struct vc_welcome w;
	int fds[4], nfds, fd = raw_connect();
	ssize_t n;

	CHECK(fd >= 0, "garbage hello: connect");
	vc_sock_send(fd, junk, sizeof(junk), NULL, 0);
	n = vc_sock_recv(fd, &w, sizeof(w), fds, 4, &nfds, 3000);
	close(fd);
	CHECK(n == (ssize_t)sizeof(w) && w.status == -EPROTO && nfds == 0,
	      "garbage hello: expected a refusal, got %zd", n);
	printf("ok - malformed hello refused: \"%s\"\n", w.message);
	g_pass++;
}

/* A real client's session: open, a context, a synchronisation, close. */
static int real_client(char *err, size_t errlen)
{
	struct vc_client *c;
	uint64_t ctx = 0;
	int rc;

	if ((rc = vc_client_open(g_path, &c, err, errlen)))
		return rc;
	rc = vt_ctx_open(c, &ctx);
	if (!rc)
		rc = vt_sync(c, ctx);
	vc_client_close(c);
	if (rc)
		snprintf(err, errlen, "context or sync failed (%d)", rc);
	return rc;
}

/* 300 connections that never speak: no worker each, no session counted, so
 * a real client still gets in at once; the server drops them all. */
static void silent_flood(void)
{
	enum { N = 300 };
	static int fds[N];
	char err[256];
	uint64_t t0;
	int closed = 0, rc;

	for (int i = 0; i < N; i++)
		CHECK((fds[i] = raw_connect()) >= 0, "silent flood: connect %d", i);
	t0 = now_ms();
	rc = real_client(err, sizeof(err));
	t0 = now_ms() - t0;
	CHECK(rc == 0, "silent flood: a real client was locked out: %s", err);
	CHECK(t0 < 1500, "silent flood: the real client waited %" PRIu64 " ms", t0);
	/* Every silent one is refused or closed within the hello deadline. */
	for (int i = 0; i < N; i++) {
		struct vc_welcome w;
		int nfds;
		ssize_t n = vc_sock_recv(fds[i], &w, sizeof(w), NULL, 0, &nfds, 4000);

		closed += n == 0 || (n == (ssize_t)sizeof(w) && w.status == -ETIMEDOUT);
		close(fds[i]);
	}
	CHECK(closed == N, "silent flood: %d of %d silent connections were dropped", closed, N);
	printf("ok - 300 silent connections: a real client got in in %" PRIu64 " ms, all 300 dropped\n", t0);
	g_pass++;
}

/* A hello too late, one with descriptors attached, one too long, and a
 * connection closed right after its hello: each refused or ignored, nothing
 * kept by the server (the fd count check at the end). */
static void hostile_hellos(void)
{
	struct vc_hello h = {.magic = VC_HELLO_MAGIC, .version = VC_PROTO_VERSION, .abi_hash = 0};
	uint8_t big[sizeof(h) + 64] = {0};
	struct vc_welcome w;
	int fds[4], nfds, fd, extra[3];
	ssize_t n;
	char err[256];

	/* too late: dropped after the deadline, with a reason */
	CHECK((fd = raw_connect()) >= 0, "late hello: connect");
	usleep(2600 * 1000);
	vc_sock_send(fd, &h, sizeof(h), NULL, 0);
	n = vc_sock_recv(fd, &w, sizeof(w), fds, 4, &nfds, 3000);
	close(fd);
	CHECK(n == (ssize_t)sizeof(w) && w.status == -ETIMEDOUT && nfds == 0,
	      "late hello: expected a timeout refusal, got %zd bytes status %d", n, n > 0 ? w.status : 0);
	/* descriptors riding on a (mismatched) hello: closed, refused */
	CHECK((fd = raw_connect()) >= 0, "hello with fds: connect");
	for (int i = 0; i < 3; i++)
		extra[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	vc_sock_send(fd, &h, sizeof(h), extra, 3);
	for (int i = 0; i < 3; i++)
		close(extra[i]);
	n = vc_sock_recv(fd, &w, sizeof(w), fds, 4, &nfds, 3000);
	close(fd);
	CHECK(n == (ssize_t)sizeof(w) && w.status == -EPROTONOSUPPORT && nfds == 0,
	      "hello with fds: expected a refusal, got %zd", n);
	/* too long */
	CHECK((fd = raw_connect()) >= 0, "long hello: connect");
	memcpy(big, &h, sizeof(h));
	vc_sock_send(fd, big, sizeof(big), NULL, 0);
	n = vc_sock_recv(fd, &w, sizeof(w), fds, 4, &nfds, 3000);
	close(fd);
	CHECK(n == (ssize_t)sizeof(w) && w.status == -EPROTO, "long hello: expected a refusal, got %zd", n);
	/* closed mid-handshake: the hello sent, the answer never read */
	h.abi_hash = 0;
	CHECK((fd = raw_connect()) >= 0, "closed mid-handshake: connect");
	vc_sock_send(fd, &h, sizeof(h), NULL, 0);
	close(fd);
	CHECK(real_client(err, sizeof(err)) == 0, "hostile hellos: a real client failed after them: %s", err);
	printf("ok - a late hello, a hello with descriptors, an oversized one and a hang-up: refused, "
	       "the server carries on\n");
	g_pass++;
}

/* A hello accepted, its region and eventfds received, and the connection
 * closed before the client maps anything: the session is freed. */
static void closed_after_welcome(void)
{
	struct vc_hello h = {.magic = VC_HELLO_MAGIC, .version = VC_PROTO_VERSION, .abi_hash = VC_ABI_HASH,
			     .pid = (uint32_t)getpid(), .comm = "bad_client"};
	struct vc_welcome w;
	int fds[4], nfds = 0, fd = raw_connect();
	ssize_t n;
	long ms;

	CHECK(fd >= 0, "closed after the welcome: connect");
	vc_sock_send(fd, &h, sizeof(h), NULL, 0);
	n = vc_sock_recv(fd, &w, sizeof(w), fds, 4, &nfds, 3000);
	close(fd);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	CHECK(n == (ssize_t)sizeof(w) && w.status == 0 && nfds > 0, "closed after the welcome: got %zd bytes, "
	      "status %d, %d fds", n, n > 0 ? w.status : 0, nfds);
	ms = wait_freed(w.session_id, FREED_MS);
	CHECK(ms >= 0, "closed after the welcome: server still maps session %u after %d ms", w.session_id, FREED_MS);
	if (back_to_base("closed after the welcome"))
		return;
	printf("ok - connection closed right after the welcome (%d fds received, nothing mapped): "
	       "session %u freed in %ld ms\n", nfds, w.session_id, ms);
	g_pass++;
}

/* Against a server started with --max-sessions 1: the second client is told
 * why, and gets in once the first has gone. */
static void server_full(void)
{
	struct vc_client *c;
	char err[256], err2[256];
	int rc;

	CHECK(vc_client_open(g_path, &c, err, sizeof(err)) == 0, "server full: first client: %s", err);
	rc = real_client(err2, sizeof(err2));
	vc_client_close(c);
	CHECK(rc == -EBUSY && strstr(err2, "server full") && strstr(err2, "--max-sessions"),
	      "server full: second client got %d '%s'", rc, err2);
	for (int i = 0; i < 100 && (rc = real_client(err, sizeof(err))) == -EBUSY; i++)
		usleep(20000); /* the first worker is being reaped */
	CHECK(rc == 0, "server full: no session after the first closed: %s", err);
	printf("ok - a full server says so: \"%s\"\n", err2);
	g_pass++;
}

/* ---- a client killed in the middle of a bulk copy --------------------------- */

static void killed_mid_copy(void)
{
	int p[2];
	pid_t pid;
	uint32_t id = 0;
	long ms;
	int st;

	CHECK(pipe(p) == 0, "kill mid-copy: pipe");
	pid = fork();
	if (pid == 0) {
		struct vc_client *c;
		struct vc_client_info info;
		char err[256];
		uint64_t ctx, d;
		size_t len = 64 << 20;
		uint8_t *buf = malloc(len);

		close(p[0]);
		if (!buf || vc_client_open(g_path, &c, err, sizeof(err)) || vt_ctx_open(c, &ctx) ||
		    vt_mem_alloc(c, ctx, len, &d))
			_exit(1);
		memset(buf, 0x42, len);
		vc_client_get_info(c, &info);
		if (write(p[1], &info.session_id, sizeof(info.session_id)) < 0)
			_exit(1);
		for (;;)
			vt_htod(c, ctx, d, buf, len, 0);
	}
	close(p[1]);
	CHECK(read(p[0], &id, sizeof(id)) == sizeof(id), "kill mid-copy: child did not start");
	close(p[0]);
	usleep(300000); /* well inside a stream of 64 MiB copies */
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	ms = wait_freed(id, FREED_MS);
	CHECK(ms >= 0, "kill mid-copy: server still maps session %u %d ms after the kill", id, FREED_MS);
	printf("ok - client killed mid-copy: server freed session %u in %ld ms\n", id, ms);
	g_pass++;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"server-pid", required_argument, NULL, 'p'},
		{"full", no_argument, NULL, 'f'},
		{"admin", required_argument, NULL, 'a'},
		{"rss-slack", required_argument, NULL, 'r'},
		{0},
	};
	int full = 0;
	pthread_t good;
	int o, fds0, fds1 = -1;
	struct vt_server_state st0, st1;

	while ((o = getopt_long(argc, argv, "s:p:fa:r:", opts, NULL)) != -1) {
		if (o == 'f')
			full = 1;
		else if (o == 'a')
			g_admin = optarg;
		else if (o == 'r')
			g_rss_slack = atol(optarg);
		else if (o == 's')
			g_path = optarg;
		else if (o == 'p')
			g_pid = atoi(optarg);
		else
			return 2;
	}
	if (!g_path || g_pid <= 0) {
		fprintf(stderr, "usage: bad_client --socket PATH --server-pid PID [--admin PATH] [--rss-slack KIB] [--full]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (full) { /* a server started with --max-sessions 1 */
		server_full();
		printf("%d passed, %d failed\n", g_pass, g_fail);
		return g_fail ? 1 : 0;
	}
	/* Baseline: the server with no session open (an earlier client's may
	 * still be closing: on a GPU, a context's teardown and the close's
	 * bounded wait for streams take seconds). */
	if (wait_freed(0, 15000) < 0) {
		printf("not ok - the server still holds sessions before the test starts\n");
		return 1;
	}
	/* ... and its teardown, which unmaps before it closes fds, finished. */
	for (int i = 0, prev = -2; i < 100 && (fds0 = count_fds()) != prev; i++) {
		prev = fds0;
		usleep(20000);
	}
	if (vt_server_state(g_pid, g_admin, &st0) || (g_admin && (st0.sessions || st0.mem_used || st0.pinned_used))) {
		printf("not ok - the server's state before the test: %d sessions, %lld bytes charged\n", st0.sessions,
		       (long long)st0.mem_used);
		return 1;
	}
	pthread_create(&good, NULL, good_client, NULL);
	while (!__atomic_load_n(&g_good_ops, __ATOMIC_RELAXED) && !g_good_err[0])
		usleep(1000);
	vt_server_state(g_pid, g_admin, &g_base);

	for (unsigned i = 0; i < vt_hostile_ncases; i++)
		run_bad(vt_hostile_cases[i].name, vt_hostile_cases[i].inject, vt_hostile_cases[i].want);
	for (unsigned i = 0; i < vt_live_ncases; i++)
		run_live(&vt_live_cases[i]);
	closed_after_welcome();
	version_mismatch();
	garbage_hello();
	silent_flood();
	hostile_hellos();
	killed_mid_copy();

	g_stop = 1;
	pthread_join(good, NULL);
	if (g_good_err[0]) {
		printf("not ok - the good client failed: %s\n", g_good_err);
		g_fail++;
	} else {
		printf("ok - the good client made %" PRIu64 " verified round trips throughout\n", g_good_ops);
		g_pass++;
	}
	/* Every session closed: the server holds what it held before we came. */
	for (int i = 0; i < 200 && (fds1 = count_fds()) != fds0; i++)
		usleep(10000);
	if (fds1 == fds0) {
		printf("ok - server fd count back to %d\n", fds0);
		g_pass++;
	} else {
		printf("not ok - server fd count %d, was %d before the tests\n", fds1, fds0);
		g_fail++;
	}
	/* Nothing charged, no session, and the listener's memory where it was. */
	if (vt_server_settle(g_pid, g_admin, 0, 0, 3000, &st1) == 0 && st1.pinned_used == 0 &&
	    st1.rss_kib <= st0.rss_kib + g_rss_slack) {
		printf("ok - server back to its baseline: %s, listener RSS %lld KiB (was %lld)\n",
		       g_admin ? "0 sessions, 0 bytes charged" : "no admin socket to ask", (long long)st1.rss_kib,
		       (long long)st0.rss_kib);
		g_pass++;
	} else {
		printf("not ok - server after the tests: %d sessions, %lld device and %lld pinned bytes charged, "
		       "listener RSS %lld KiB (was %lld)\n", st1.sessions, (long long)st1.mem_used,
		       (long long)st1.pinned_used, (long long)st1.rss_kib, (long long)st0.rss_kib);
		g_fail++;
	}
	printf("%d passed, %d failed\n", g_pass, g_fail);
	return g_fail ? 1 : 0;
}
