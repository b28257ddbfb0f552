/* SPDX-License-Identifier: MIT */
/*
 * vt_admin.h - what the hostile tests ask a vcuda-server about itself: its
 * admin socket's status (sessions open, memory charged) and its process's
 * descriptors and resident memory, to check that everything a session held
 * came back.
 */
#ifndef VT_ADMIN_H
#define VT_ADMIN_H

#include <stdint.h>

struct vt_server_state {
	int sessions;         /* sessions the admin socket lists (-1: no admin socket) */
	int64_t mem_used;     /* device bytes charged, over all sessions */
	int64_t pinned_used;  /* pinned bytes charged */
	int fds;              /* the listener's open descriptors */
	int64_t rss_kib;      /* the listener's VmRSS */
};

/**
 * vt_server_state() - read the state of the server with process @pid and,
 * when @admin is not NULL, admin socket @admin. Returns 0 or -errno.
 */
int vt_server_state(int pid, const char *admin, struct vt_server_state *st);

/**
 * vt_server_settle() - read the state until the session count is at most
 * @sessions and the memory charged at most @mem, or @ms pass; returns 0 when
 * it got there, -ETIMEDOUT otherwise (*@st holds the last state read).
 */
int vt_server_settle(int pid, const char *admin, int sessions, int64_t mem, int ms, struct vt_server_state *st);

#endif /* VT_ADMIN_H */
