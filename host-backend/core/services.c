/* SPDX-License-Identifier: MIT */
/*
 * services.c - what a session offers its executor (vcuda/executor.h) and its
 * own decoder: completions published and sleeping guest threads woken, late
 * replies, the host-callback queue, the device-printf total, the staging
 * arena and the pinned pool. The ring stays the session's: the executor
 * reaches it only through these functions.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/services.h"

void vc_session_signal(struct vc_session *s)
{
	uint64_t one = 1;

	if (s->complete_fd >= 0 && write(s->complete_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fprintf(stderr, "vcuda: session %u: completion signal: %s\n", s->id, strerror(errno));
}

void vc_session_progress(struct vc_session *s, uint64_t seq)
{
	if (vc_ring_host_complete(&s->ring, seq))
		vc_session_signal(s);
}

static void *svc_arena(void *arg, uint64_t off, uint64_t len)
{
	struct vc_session *s = arg;

	return vc_ring_host_arena(&s->ring, off, len);
}

static void svc_reply(void *arg, uint32_t slot, uint64_t seq, int32_t status)
{
	struct vc_session *s = arg;

	if (vc_ring_host_reply(&s->ring, slot, seq, status, NULL, 0))
		vc_session_signal(s);
}

static int svc_cb_push(void *arg, uint64_t cookie, uint32_t *index)
{
	struct vc_session *s = arg;
	int rc = vc_ring_host_cb_push(&s->ring, cookie, index);

	if (rc > 0)
		vc_session_signal(s);
	return rc < 0 ? rc : 0;
}

static uint32_t svc_cb_done(void *arg)
{
	struct vc_session *s = arg;

	return vc_ring_host_cb_done(&s->ring);
}

static int svc_take_fd(void *arg, uint64_t token)
{
	struct vc_session *s = arg;

	if (!s->pass_fds)
		return -EOPNOTSUPP;
	return vc_fdbox_take(&s->fdbox, s->hangup_fd, token);
}

static int svc_guest_pin(void *arg, uint32_t entry, uint64_t gen, uint64_t addr, uint64_t len,
			 struct vc_guest_piece **pieces, uint32_t *n)
{
	struct vc_session *s = arg;

	if (!s->guestmem)
		return -EOPNOTSUPP;
	return vc_guestmem_take(s->guestmem, entry, gen, addr, len, pieces, n);
}

static int svc_guest_unpin(void *arg, uint32_t entry, uint64_t gen, bool held)
{
	struct vc_session *s = arg;

	if (!s->guestmem)
		return -EOPNOTSUPP;
	return vc_guestmem_release(s->guestmem, entry, gen, held);
}

static void svc_console(void *arg, uint64_t total)
{
	struct vc_session *s = arg;

	vc_ring_host_console(&s->ring, total);
}

void vc_session_services_init(struct vc_session *s, uint8_t *base)
{
	struct vc_session_services *v = &s->svc;

	v->arg = s;
	v->arena = svc_arena;
	v->reply = svc_reply;
	v->cb_push = svc_cb_push;
	v->cb_done = svc_cb_done;
	v->console = svc_console;
	v->take_fd = svc_take_fd;
	v->guest_pin = svc_guest_pin;
	v->guest_unpin = svc_guest_unpin;
	v->pinned.size = s->layout.pinned_size;
	v->pinned.base = s->layout.pinned_size ? base + s->layout.pinned_off : NULL;
	v->pinned.fd = s->mem_fd;
	v->pinned.fd_off = s->mem_off + s->layout.pinned_off;
	v->pinned.seg_max = s->pass_fds || s->guestmem ? s->pinned_max : 0;
	v->arena_file.fd = s->mem_fd;
	v->arena_file.fd_off = s->mem_off + s->layout.arena_off;
	v->arena_file.size = s->layout.arena_size;
	v->fence_file.fd = s->mem_fd;
	v->fence_file.fd_off = s->mem_off + s->layout.ctrl_off;
	v->fence_file.word_off = (uint32_t)offsetof(struct vc_ctrl, fence);
}
