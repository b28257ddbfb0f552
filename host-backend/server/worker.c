/* SPDX-License-Identifier: MIT */
/*
 * worker.c - one session, served in a process of its own.
 *
 * Why a process per session: on the NVIDIA driver a kernel fault (illegal
 * address) leaves the whole process unable to create contexts, not only the
 * faulting context (measured on driver 580: every later session of a shared
 * server process failed with an initialisation error). A process per guest
 * context keeps one client's fault, or a driver crash it provokes, away from
 * every other client, and process exit frees everything the session held.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "resources/acct.h"
#include "cuda/console.h"
#include "core/crash.h"
#include "core/region.h"
#include "nvml/host_nvml.h"
#include "server/server_config.h"
#include "standin/standin.h"
#include "server/worker_priv.h"
#include "vc_abi_hash.h"
#include "vc_log.h"
#include "vc_sock.h"
#include "vc_time.h"

#define BEAT_MS 100
/* After the client went, how long the session's own close may take (its
 * bounded waits: the streams' quiesce, the helper threads) before the
 * worker is ended instead: a serving thread stuck in a driver call that
 * never returns (a copy behind a stream that waits for a value nothing
 * writes) would otherwise hold the session, its GPU memory and a session
 * slot for as long as the server runs. */
#define STUCK_MS 10000

/* How long a served session's teardown may take (vc_worker_close()). */
#define CLOSE_STUCK_S 10

static void close_stuck(int sig)
{
	static const char m[] = "vcuda-server: a session's teardown waited 10 s in the driver for GPU work "
				"that may never finish (a stream waiting for a value); ending the worker\n";

	(void)sig;
	if (write(STDERR_FILENO, m, sizeof(m) - 1) < 0) {
		/* nothing more to say */
	}
	_exit(VC_WORKER_EXIT_STUCK);
}

void vc_worker_close(struct vc_session *s)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = close_stuck;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	alarm(CLOSE_STUCK_S);
	vc_session_destroy(s);
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
}

void vc_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vc_log_line("vcuda-server", fmt, ap);
	va_end(ap);
}

/* One line of a session's --op-times table; @arg is the session's id. */
static void op_line(void *arg, const char *text)
{
	vc_log("session %u: %s", *(const uint32_t *)arg, text);
}

void vc_log_op_times(struct vc_session *s, uint32_t id)
{
	vc_session_report_op_times(s, 20, op_line, &id);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

void vc_close_all_but(int *keep, int n)
{
	unsigned lo = 3;

	qsort(keep, (size_t)n, sizeof(int), cmp_int);
	for (int i = 0; i < n; i++) {
		if ((unsigned)keep[i] > lo)
			close_range(lo, (unsigned)keep[i] - 1, 0);
		if ((unsigned)keep[i] + 1 > lo)
			lo = (unsigned)keep[i] + 1;
	}
	close_range(lo, ~0u, 0);
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

int vc_worker_open_executor(const struct vc_server_config *cfg, const struct vc_executor_ops **ops,
			 void **factory, char *err, size_t errlen)
{
	/* One executor; the CI stand-in is only a driver table under it. The
	 * guest's NVML asks the host's (loaded at first use), never beside the
	 * stand-in unless named: its GPU would not be the stand-in's. */
	*ops = &vc_exec_cuda_ops;
	if (cfg->nvml_lib && strcmp(cfg->nvml_lib, "none"))
		vc_host_nvml_configure(cfg->nvml_lib);
	else if (!cfg->nvml_lib && strcmp(cfg->executor, "ci-standin"))
		vc_host_nvml_configure("libnvidia-ml.so.1");
	if (!strcmp(cfg->executor, "ci-standin")) {
		*factory = (void *)vc_cuda_driver_standin(cfg->standin.mem_limit);
		return 0;
	}
	*factory = vc_cuda_driver_open(cfg->driver, err, errlen);
	return *factory ? 0 : -ENODEV;
}

int vc_worker_probe(const struct vc_server_config *cfg)
{
	const struct vc_executor_ops *ops;
	void *factory;
	char err[256];

	if (vc_worker_open_executor(cfg, &ops, &factory, err, sizeof(err))) {
		fprintf(stderr, "vcuda-server: %s\n", err);
		return 1;
	}
	return 0;
}

void vc_worker_capture_stdout(uint32_t id)
{
	int rc = vc_console_capture();

	if (rc)
		vc_log("session %u: cannot capture device printf output for the guest (%s); it goes to this log",
		       id, strerror(-rc));
}

void vc_worker_release_stdout(uint32_t id)
{
	uint64_t lost = vc_console_stop();

	if (lost)
		vc_log("session %u: %" PRIu64 " bytes of device printf output were never fetched by the guest", id,
		       lost);
}

static volatile sig_atomic_t g_stop;
static int g_wake = -1;

static void on_term(int sig)
{
	uint64_t one = 1;

	(void)sig;
	g_stop = 1;
	if (write(g_wake, &one, sizeof(one)) < 0) {
		/* nothing to do in a handler */
	}
}

void vc_worker_catch_term(void)
{
	struct sigaction sa = {.sa_handler = on_term};

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

struct runner {
	struct vc_session *s;
	int rc;
	int done_fd;
};

static void *run_thread(void *arg)
{
	struct runner *r = arg;
	uint64_t one = 1;

	r->rc = vc_session_run(r->s);
	if (write(r->done_fd, &one, sizeof(one)) < 0)
		vc_log("cannot signal the end of the session: %s", strerror(errno));
	return NULL;
}

int vc_worker_serve(struct vc_session *s, uint32_t id, int hangup_fd)
{
	struct runner r = {.s = s};
	int64_t gone_at = 0;
	pthread_t th;
	int rc;

	r.done_fd = eventfd(0, EFD_CLOEXEC);
	g_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r.done_fd < 0 || g_wake < 0 || pthread_create(&th, NULL, run_thread, &r)) {
		vc_log("session %u: cannot start its thread", id);
		return -ENOMEM;
	}
	for (;;) {
		/* The client's end, watched for its going only (the serving
		 * thread reads it); once gone, no longer watched. */
		struct pollfd p[3] = {{.fd = r.done_fd, .events = POLLIN},
				      {.fd = g_wake, .events = POLLIN},
				      {.fd = gone_at ? -1 : hangup_fd, .events = POLLRDHUP}};

		if (poll(p, 3, BEAT_MS) > 0 && (p[0].revents & POLLIN))
			break;
		if (p[2].revents & (POLLRDHUP | POLLHUP | POLLERR))
			gone_at = vc_now_ms();
		if (gone_at && vc_now_ms() - gone_at > STUCK_MS) {
			vc_log("session %u: the client went %d s ago and the session has not ended: its serving "
			       "thread waits in the driver for GPU work that may never finish; ending the worker "
			       "(the driver frees what it held)",
			       id, STUCK_MS / 1000);
			_exit(VC_WORKER_EXIT_STUCK);
		}
		vc_session_heartbeat(s);
		if (vc_session_busy(s))
			vc_acct_activity(0); /* waiting on the GPU for the guest is not idle */
		if (g_stop)
			vc_session_stop(s); /* not started: signals the serving thread */
	}
	pthread_join(th, NULL);
	rc = r.rc;
	close(r.done_fd);
	close(g_wake);
	return rc;
}

int vc_worker_main(const struct vc_server_config *cfg, int sock, uint32_t id, const struct vc_hello *hp)
{
	const struct vc_executor_ops *ops;
	void *factory;
	struct vc_hello hello = *hp;
	struct vc_welcome w = {0};
	struct vc_layout layout;
	struct vc_region region = {.mem_fd = -1, .doorbell_fd = -1, .complete_fd = -1};
	struct vc_session *s = NULL;
	struct vc_session_stats st;
	char name[32], why[sizeof(w.message)];
	int fds[3], rc;

	vc_worker_catch_term();
	vc_crash_install(id);
	vc_worker_capture_stdout(id);
	{
		struct ucred cr = {0};
		socklen_t crl = sizeof(cr);

		/* The client's uid as the kernel reports it; pid and name as it said. */
		getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &crl);
		vc_acct_client(hello.pid, cr.uid, hello.comm);
	}
	if (vc_worker_open_executor(cfg, &ops, &factory, why, sizeof(why))) {
		vc_log("client %u: %s", id, why);
		refuse(sock, -ENODEV, "vcuda-server: %s", why);
		return 1;
	}
	rc = vc_layout_compute(&cfg->lreq, &layout);
	if (rc)
		goto err_refuse;
	snprintf(name, sizeof(name), "vcuda-session-%u", id);
	rc = vc_region_create(&layout, name, &region);
	if (rc)
		goto err_refuse;
	struct vc_session_params p = {
		.base = region.base,
		.layout = &layout,
		.doorbell_fd = region.doorbell_fd,
		.complete_fd = region.complete_fd,
		.hangup_fd = sock,
		.mem_fd = region.mem_fd,
		.pass_fds = true,
		.pinned_max = cfg->pinned_max,
		.exec = ops,
		.exec_factory = factory,
		.id = id,
		.spin_us = cfg->spin_us,
		.verbose = cfg->verbose,
		.op_times = cfg->op_times,
	};
	rc = vc_session_create(&p, &s);
	if (rc)
		goto err_region;
	w.magic = VC_WELCOME_MAGIC;
	w.version = VC_PROTO_VERSION;
	w.abi_hash = VC_ABI_HASH;
	w.session_id = id;
	w.layout = layout;
	fds[0] = region.mem_fd;
	fds[1] = region.doorbell_fd;
	fds[2] = region.complete_fd;
	rc = vc_sock_send(sock, &w, sizeof(w), fds, 3);
	if (rc)
		goto err_session;
	vc_log("session %u: opened for pid %u (%s): region %" PRIu64 " B, ring %u B, arena %" PRIu64
	       " B in %u B chunks, executor %s",
	       id, hello.pid, hello.comm, layout.region_size, layout.ring_size, layout.arena_size,
	       layout.chunk_size, cfg->executor);

	rc = vc_worker_serve(s, id, sock);
	vc_session_get_stats(s, &st);
	if (rc == -EPROTO)
		vc_log("session %u: FATAL: %s, after %" PRIu64 " commands; resources freed", id,
		       vc_fatal_name(st.fatal), st.commands);
	else
		vc_log("session %u: closed after %" PRIu64 " commands in %" PRIu64 " batches, %" PRIu64
		       " of them failed asynchronously",
		       id, st.commands, st.batches, st.async_failed);
	vc_log_op_times(s, id);
	vc_worker_close(s);
	vc_worker_release_stdout(id);
	vc_region_destroy(&region);
	return rc == -EPROTO ? VC_WORKER_EXIT_FATAL : rc ? 1 : 0;

err_session:
	vc_session_destroy(s);
err_region:
	vc_region_destroy(&region);
err_refuse:
	vc_log("client %u: cannot open a session: %s", id, strerror(-rc));
	refuse(sock, rc, "vcuda-server cannot open a session: %s", strerror(-rc));
	return 1;
}
