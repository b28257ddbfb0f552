/* SPDX-License-Identifier: MIT */
/*
 * console.c - the worker's stdout, captured for the guest (see console.h),
 * and the vcConsole handler that hands it over.
 *
 * fd 1 is the write end of a pipe; a thread of ours reads it into a ring
 * buffer as soon as anything arrives, so that the driver never blocks on a
 * full pipe for long and never waits for the guest: what does not fit in
 * VC_CONSOLE_MAX is counted and dropped, and one marker line saying how many
 * bytes were dropped takes their place. Everything runs under one mutex, which
 * is never held while waiting for anything else (not for stdout's lock: a
 * thread blocked in a write to the pipe may hold it).
 */
#include "cuda/console.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cuda/exec_priv.h"
#include "vcuda/executor.h"

#define MARKER_MAX 160u
#define PIPE_WANT (1u << 20)   /* pipe capacity asked for; the kernel may give less */
#define PULL_MAX (1u << 20)    /* bytes the thread reads per hold of the lock */
#define CHUNK 16384u

static struct {
	pthread_mutex_t mu;
	bool active;        /* captured; written under mu, read first without it */
	int rd;             /* the pipe's read end, non-blocking */
	int stop_fd;        /* eventfd: the thread returns */
	uint32_t pipe_size; /* what the pipe holds at most */
	pthread_t thread;
	uint8_t *buf;       /* ring of size bytes: VC_CONSOLE_MAX of output and room for a marker */
	uint64_t size;
	uint64_t in, out;   /* bytes appended and handed out (free-running) */
	uint64_t dropped;   /* bytes dropped since the last marker: a gap is open while non-zero */
	const struct vc_session_services *svc; /* the session's, from its first publish until stop */
	uint64_t published; /* the last total stored in the control page */
	uint8_t last;       /* the last byte kept, to start a marker on a line of its own */
} g = {.mu = PTHREAD_MUTEX_INITIALIZER, .rd = -1, .stop_fd = -1, .last = '\n'};

static bool active(void)
{
	/* A hint only (process memory): callers look again under g.mu. */
	return __atomic_load_n(&g.active, __ATOMIC_ACQUIRE);
}

static void ring_put(const void *p, uint64_t n)
{
	uint64_t pos = g.in % g.size, first = g.size - pos < n ? g.size - pos : n;

	if (!n)
		return;
	memcpy(g.buf + pos, p, first);
	memcpy(g.buf, (const uint8_t *)p + first, n - first);
	g.in += n;
	g.last = ((const uint8_t *)p)[n - 1];
}

static void ring_get(void *p, uint64_t n)
{
	uint64_t pos = g.out % g.size, first = g.size - pos < n ? g.size - pos : n;

	memcpy(p, g.buf + pos, first);
	memcpy((uint8_t *)p + first, g.buf, n - first);
	g.out += n;
}

/* Keep what fits under VC_CONSOLE_MAX; count the rest. Once a gap is open,
 * everything is dropped until its marker is placed, so that the marker
 * stands exactly where the bytes are missing. */
static void append(const uint8_t *p, uint64_t n)
{
	uint64_t used = g.in - g.out, room = used < VC_CONSOLE_MAX ? VC_CONSOLE_MAX - used : 0, k;

	if (g.dropped)
		room = 0;
	k = n < room ? n : room;
	ring_put(p, k);
	g.dropped += n - k;
}

/* Close an open gap with its marker line, when the slack holds it. */
static void place_marker(void)
{
	char m[MARKER_MAX];
	int n;

	if (!g.dropped)
		return;
	n = snprintf(m, sizeof(m), "%svcuda: %" PRIu64 " bytes of device printf output dropped (%u MiB were waiting)\n",
		     g.last == '\n' ? "" : "\n", g.dropped, VC_CONSOLE_MAX >> 20);
	if (n <= 0 || (unsigned)n >= sizeof(m) || g.size - (g.in - g.out) < (uint64_t)n)
		return; /* the guest has not taken enough yet: the gap stays open */
	ring_put(m, (uint64_t)n);
	g.dropped = 0;
}

/* Store the total captured in the control page when it changed, under g.mu
 * (so that it never goes back). */
static void store_total(void)
{
	if (g.svc && g.in != g.published) {
		g.published = g.in;
		g.svc->console(g.svc->arg, g.in);
	}
}

/* Read at most @limit bytes of what the pipe holds, under g.mu. */
static void pull(uint64_t limit)
{
	uint8_t chunk[CHUNK];
	uint64_t got = 0;

	while (got < limit) {
		ssize_t n = read(g.rd, chunk, sizeof(chunk));

		if (n > 0) {
			append(chunk, (uint64_t)n);
			got += (uint64_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else {
			break; /* empty (EAGAIN), or no writer left */
		}
	}
}

static void *drain_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[2] = {{.fd = g.rd, .events = POLLIN}, {.fd = g.stop_fd, .events = POLLIN}};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		pthread_mutex_lock(&g.mu);
		pull(PULL_MAX);
		/* Output the driver printed outside a synchronisation (at a
		 * launch, before a stream callback) reaches the guest at its next
		 * call; at synchronisations, vc_console_publish() makes sure. */
		store_total();
		pthread_mutex_unlock(&g.mu);
		if (p[1].revents)
			break;
		if ((p[0].revents & (POLLHUP | POLLERR)) && !(p[0].revents & POLLIN))
			break; /* no writer left */
	}
	return NULL;
}

int vc_console_capture(void)
{
	int p[2], rc, saved_out;

	if (g.active)
		return -EBUSY;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	g.rd = p[0];
	/* A larger pipe means fewer wake-ups of the thread; not required. */
	if (fcntl(g.rd, F_SETPIPE_SZ, PIPE_WANT) < 0) {
		/* keep the default */
	}
	rc = fcntl(g.rd, F_GETPIPE_SZ);
	g.pipe_size = rc > 0 ? (uint32_t)rc : 65536u;
	if (fcntl(g.rd, F_SETFL, O_NONBLOCK) < 0) {
		rc = -errno;
		goto err_pipe;
	}
	g.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (g.stop_fd < 0) {
		rc = -errno;
		goto err_pipe;
	}
	g.size = (uint64_t)VC_CONSOLE_MAX + MARKER_MAX;
	g.buf = malloc(g.size); /* pages are touched only as output arrives */
	if (!g.buf) {
		rc = -ENOMEM;
		goto err_stop;
	}
	fflush(stdout);
	saved_out = dup(1);
	if (saved_out < 0 || dup2(p[1], 1) < 0) {
		rc = -errno;
		if (saved_out >= 0)
			close(saved_out);
		goto err_buf;
	}
	/* The driver writes device printf through stdout: no buffering, so
	 * that every byte is in the pipe when the synchronising call returns. */
	setvbuf(stdout, NULL, _IONBF, 0);
	rc = pthread_create(&g.thread, NULL, drain_thread, NULL);
	if (rc) {
		rc = -rc;
		dup2(saved_out, 1);
		close(saved_out);
		goto err_buf;
	}
	close(saved_out);
	close(p[1]); /* fd 1 is the only write end now */
	pthread_mutex_lock(&g.mu);
	__atomic_store_n(&g.active, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g.mu);
	return 0;

err_buf:
	free(g.buf);
	g.buf = NULL;
err_stop:
	close(g.stop_fd);
	g.stop_fd = -1;
err_pipe:
	close(p[0]);
	close(p[1]);
	g.rd = -1;
	return rc;
}

void vc_console_publish(const struct vc_session_services *svc)
{
	if (!active())
		return;
	/* Outside g.mu: stdout's lock may be held by a thread blocked writing
	 * to the pipe, which waits for our thread, which waits for g.mu. */
	fflush(stdout);
	pthread_mutex_lock(&g.mu);
	if (g.active) {
		/* The pipe holds at most pipe_size bytes: reading that much takes
		 * everything written before this call, even while more arrives. */
		pull((uint64_t)g.pipe_size + CHUNK);
		place_marker();
		g.svc = svc;
		store_total();
	}
	pthread_mutex_unlock(&g.mu);
}

uint32_t vc_console_take(void *buf, uint32_t cap, uint64_t *end, uint64_t *left)
{
	uint64_t n = 0;

	*end = *left = 0;
	if (!active())
		return 0;
	pthread_mutex_lock(&g.mu);
	if (g.active) {
		n = g.in - g.out < cap ? g.in - g.out : cap;
		ring_get(buf, n);
		place_marker(); /* room again for a marker that waited */
		*end = g.out;
		*left = g.in - g.out;
	}
	pthread_mutex_unlock(&g.mu);
	return (uint32_t)n;
}

uint64_t vc_console_stop(void)
{
	uint64_t one = 1, lost;
	int null;

	if (!active())
		return 0;
	pthread_mutex_lock(&g.mu);
	g.svc = NULL; /* the region may go away after this call */
	pthread_mutex_unlock(&g.mu);
	fflush(stdout);
	/* Later writes (a driver thread still winding down) go nowhere instead
	 * of filling a pipe nobody reads; the pipe sees its last writer go. */
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 1);
		close(null);
	}
	if (write(g.stop_fd, &one, sizeof(one)) < 0) {
		/* an eventfd write does not fail here; the join below would wait */
	}
	pthread_join(g.thread, NULL);
	pthread_mutex_lock(&g.mu);
	pull((uint64_t)g.pipe_size + CHUNK);
	lost = g.in - g.out + g.dropped;
	__atomic_store_n(&g.active, false, __ATOMIC_RELEASE);
	free(g.buf);
	g.buf = NULL;
	close(g.rd);
	close(g.stop_fd);
	g.rd = g.stop_fd = -1;
	pthread_mutex_unlock(&g.mu);
	return lost;
}

/* ---- device printf output ------------------------------------------------------------------ */

int vc_cu_manual_vcConsole(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_vcConsole rq;
	struct vc_cu_rep_vcConsole rp = {0};
	uint32_t cap;

	(void)x;
	TAKE(rq);
	if (!out->data)
		return CUDA_ERROR_INVALID_VALUE;
	cap = rq.max < out->data_cap ? rq.max : out->data_cap;
	out->data_len = vc_console_take(out->data, cap, &rp.end, &rp.left);
	REPLY(rp);
	return 0;
}
