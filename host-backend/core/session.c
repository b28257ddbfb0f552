/* SPDX-License-Identifier: MIT */
/*
 * session.c - a session's life and its server loop: fetch, decode, complete;
 * when the ring is empty, spin a little, yield a little, then set IDLE and
 * sleep on the doorbell eventfd (Venus's backoff, io_uring's NEED_WAKEUP rule).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "resources/acct.h"
#include "core/decode.h"
#include "core/services.h"
#include "core/session_priv.h"
#include "vc_layout.h"
#include "vc_shm.h"
#include "vc_time.h"

#define DEFAULT_SPIN_US 100
#define YIELD_US 200
#define SLEEP_TICK_MS 100
#define BEAT_NS (50ull * 1000 * 1000)

/* Session-private counters and flags, shared between the serving thread and
 * threads asking for statistics or a stop; process memory, not guest-visible. */
static uint64_t ld64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void inc64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

int vc_session_create(const struct vc_session_params *p, struct vc_session **out)
{
	struct vc_session *s;
	int rc;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->layout = *p->layout;
	rc = vc_ring_host_init(&s->ring, p->base, &s->layout);
	if (rc)
		goto err_free;
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0) {
		rc = -errno;
		goto err_ring;
	}
	s->doorbell_fd = p->doorbell_fd;
	s->complete_fd = p->complete_fd;
	s->hangup_fd = p->hangup_fd;
	s->mem_fd = p->mem_fd;
	s->mem_off = p->mem_off;
	s->pass_fds = p->pass_fds && p->hangup_fd >= 0;
	s->pinned_max = p->pinned_max;
	vc_fdbox_init(&s->fdbox);
	if (p->gpin_area && p->guest_ram_n &&
	    (rc = vc_guestmem_create(p->guest_ram, p->guest_ram_n, p->gpin_area, &s->guestmem)))
		goto err_stopfd;
	s->id = p->id;
	s->spin_us = p->spin_us ? p->spin_us : DEFAULT_SPIN_US;
	s->verbose = p->verbose;
	if (p->op_times && !(s->optimes = vc_optimes_create())) {
		rc = -ENOMEM;
		goto err_guestmem;
	}
	vc_session_services_init(s, p->base);
	s->ops = p->exec;
	rc = s->ops->open(p->exec_factory, &s->svc, &s->exec);
	if (rc)
		goto err_guestmem;
	*out = s;
	return 0;

err_guestmem:
	vc_optimes_destroy(s->optimes);
	vc_guestmem_destroy(s->guestmem);
err_stopfd:
	close(s->stop_fd);
err_ring:
	vc_ring_host_fini(&s->ring);
err_free:
	free(s);
	return rc;
}

static void release_exec(struct vc_session *s)
{
	if (s->exec) {
		s->ops->close(s->exec);
		s->exec = NULL;
	}
}

int vc_session_process(struct vc_session *s)
{
	const uint8_t *span;
	uint32_t len;
	int rc, n;

	if (s->ring.fatal)
		return -EPROTO;
	rc = vc_ring_host_fetch(&s->ring, &span, &len);
	if (rc == 0)
		return 0;
	n = rc < 0 ? rc : vc_decode_span(s, span, len);
	if (n < 0) {
		/* FATAL: free what the session holds at once, then wake any guest
		 * thread asleep on a completion so that it sees FATAL. */
		release_exec(s);
		vc_session_signal(s);
		return -EPROTO;
	}
	inc64(&s->n_commands, (uint64_t)n);
	inc64(&s->n_batches, 1);
	vc_acct_activity((uint64_t)n);
	if (vc_ring_host_complete(&s->ring, s->seq))
		vc_session_signal(s);
	return n;
}

void vc_session_heartbeat(struct vc_session *s)
{
	vc_ring_host_heartbeat(&s->ring);
}

bool vc_session_busy(struct vc_session *s)
{
	/* Process-private: the worker's main thread asks while the serving
	 * thread runs (not shared memory; vc_shm.h's rule does not apply). */
	void *exec = __atomic_load_n(&s->exec, __ATOMIC_ACQUIRE);

	return exec && s->ops->busy && s->ops->busy(exec);
}

/* True when the client end of hangup_fd is gone. Data it sends after the
 * handshake has no meaning, but for the descriptors of pinned segments
 * (fdbox.h), which wait for the command naming them; the rest is read and
 * dropped, with a bound per call. */
static bool client_gone(struct vc_session *s, short revents)
{
	char buf[256];
	ssize_t r;

	if (revents & (POLLHUP | POLLERR | POLLNVAL))
		return true;
	if (!(revents & POLLIN))
		return false;
	if (s->pass_fds)
		return vc_fdbox_pump(&s->fdbox, s->hangup_fd);
	r = recv(s->hangup_fd, buf, sizeof(buf), MSG_DONTWAIT);
	return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static void drain(int fd)
{
	uint64_t v;

	if (fd >= 0 && read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		fprintf(stderr, "vcuda: doorbell read: %s\n", strerror(errno));
}

static bool stopping(struct vc_session *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

int vc_session_run(struct vc_session *s)
{
	uint64_t idle_since = 0, now;
	int rc = 0;

	__atomic_store_n(&s->running, 1, __ATOMIC_RELAXED);
	s->last_beat_ns = vc_now_ns();
	vc_session_heartbeat(s);
	while (!stopping(s)) {
		int n = vc_session_process(s);

		if (n < 0) {
			rc = n;
			break;
		}
		now = vc_now_ns();
		if (now - s->last_beat_ns > BEAT_NS) {
			struct pollfd h = {.fd = s->hangup_fd, .events = POLLIN | POLLRDHUP};

			s->last_beat_ns = now;
			vc_session_heartbeat(s);
			/* A ring that never runs dry must not keep a session whose
			 * client hung up (another process may hold the region and
			 * go on writing): look at the socket between spans too. */
			if (s->hangup_fd >= 0 && poll(&h, 1, 0) > 0 && client_gone(s, h.revents))
				break;
		}
		if (n > 0) {
			idle_since = 0;
			continue;
		}
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < (uint64_t)s->spin_us * 1000 || now < s->linger_until_ns) {
			for (int i = 0; i < 32 && !vc_ring_host_pending(&s->ring); i++)
				vc_cpu_relax();
			continue;
		}
		if (now - idle_since < ((uint64_t)s->spin_us + YIELD_US) * 1000) {
			sched_yield();
			continue;
		}
		if (vc_ring_host_idle_begin(&s->ring))
			continue;

		struct pollfd pfd[3] = {
			{.fd = s->doorbell_fd, .events = POLLIN},
			{.fd = s->stop_fd, .events = POLLIN},
			{.fd = s->hangup_fd, .events = POLLIN | POLLRDHUP},
		};
		inc64(&s->n_sleeps, 1);
		int pr = poll(pfd, 3, SLEEP_TICK_MS);

		vc_ring_host_idle_end(&s->ring);
		s->last_beat_ns = vc_now_ns();
		vc_session_heartbeat(s);
		if (pr < 0 && errno != EINTR) {
			fprintf(stderr, "vcuda: session %u: poll: %s\n", s->id, strerror(errno));
			break;
		}
		if (pr > 0 && (pfd[0].revents & POLLIN))
			drain(s->doorbell_fd);
		if (pr > 0 && s->hangup_fd >= 0 && client_gone(s, pfd[2].revents))
			break;
		/* After a wake-up, poll again before sleeping: more may follow. */
		idle_since = vc_now_ns();
	}
	__atomic_store_n(&s->running, 0, __ATOMIC_RELAXED);
	return rc;
}

static void *session_thread(void *arg)
{
	vc_session_run(arg);
	return NULL;
}

int vc_session_start(struct vc_session *s)
{
	int rc;

	if (s->started)
		return -EBUSY;
	__atomic_store_n(&s->stop, 0, __ATOMIC_RELEASE);
	rc = pthread_create(&s->thread, NULL, session_thread, s);
	if (rc)
		return -rc;
	s->started = true;
	return 0;
}

void vc_session_stop(struct vc_session *s)
{
	uint64_t one = 1;

	/* Release pairs with the acquire in stopping(). */
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	if (write(s->stop_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fprintf(stderr, "vcuda: session %u: stop: %s\n", s->id, strerror(errno));
	if (s->started) {
		pthread_join(s->thread, NULL);
		s->started = false;
	}
}

void vc_session_destroy(struct vc_session *s)
{
	if (!s)
		return;
	if (s->started)
		vc_session_stop(s);
	release_exec(s);
	vc_optimes_destroy(s->optimes);
	vc_guestmem_destroy(s->guestmem);
	vc_fdbox_fini(&s->fdbox);
	close(s->stop_fd);
	vc_ring_host_fini(&s->ring);
	free(s);
}

int vc_session_report_op_times(struct vc_session *s, unsigned max, void (*line)(void *arg, const char *text),
			       void *arg)
{
	/* Written by the serving thread only, which has stopped (or was never
	 * started, in step-driven use). */
	return vc_optimes_report(s->optimes, max, line, arg);
}

void vc_session_get_stats(struct vc_session *s, struct vc_session_stats *st)
{
	st->commands = ld64(&s->n_commands);
	st->batches = ld64(&s->n_batches);
	st->sleeps = ld64(&s->n_sleeps);
	st->async_failed = ld64(&s->n_async_failed);
	st->fatal = vc_ring_host_fatal_reason(&s->ring);
	st->running = __atomic_load_n(&s->running, __ATOMIC_RELAXED);
}

