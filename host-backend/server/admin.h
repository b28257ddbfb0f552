/* SPDX-License-Identifier: MIT */
/*
 * admin.h - vcuda-server's admin socket (docs/MGMT.md): what the host manager
 * (vcuda-mgmtd) asks a server: its sessions and their usage, new quotas and
 * weight, a QEMU connection to adopt, and a stream of session events. One
 * JSON object per line each way. Runs in the listener's poll loop.
 */
#ifndef VC_ADMIN_H
#define VC_ADMIN_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "resources/acct.h"

struct vc_admin;

struct vc_admin_params {
	const char *path;     /* unix stream socket to create (mode 0600) */
	struct vc_acct *acct; /* the server's sessions and quotas */
	const char *vm_name;  /* for status; may be NULL */
	const char *gpu;      /* the GPU it was given; may be NULL */
	/* hand a QEMU connection to the VM link; 0 or -errno with a reason */
	int (*adopt)(void *arg, int fd, char *err, size_t errlen);
	void *adopt_arg;
};

/** vc_admin_create() - listen on @p->path. Returns 0 or -errno. */
int vc_admin_create(const struct vc_admin_params *p, struct vc_admin **out);

/** vc_admin_destroy() - close every connection and remove the socket; NULL is fine. */
void vc_admin_destroy(struct vc_admin *a);

/** vc_admin_pollfds() - descriptors to watch (at most @max); returns how many. */
int vc_admin_pollfds(struct vc_admin *a, struct pollfd *p, int max);

/** vc_admin_handle() - act on the poll results of the last vc_admin_pollfds(). */
void vc_admin_handle(struct vc_admin *a, const struct pollfd *p, int n);

/**
 * vc_admin_session_opened() - entry @e of the accounting page is a new
 * session: tell the subscribers. @a may be NULL.
 */
void vc_admin_session_opened(struct vc_admin *a, const struct vc_acct_entry *e);

/**
 * vc_admin_session_closed() - session @e ended for @reason ("client-exit",
 * "idle", "fatal", "crashed", "stopped"), its process's exit having freed
 * @freed bytes of device memory: log it and tell the subscribers. @a may be
 * NULL (the log line is still written).
 */
void vc_admin_session_closed(struct vc_admin *a, const struct vc_acct_entry *e, const char *reason,
			     uint64_t freed);

#endif /* VC_ADMIN_H */
