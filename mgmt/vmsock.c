/* SPDX-License-Identifier: MIT */
/* vmsock.c - the per-VM sockets where QEMU connects (vmsock.h). */
#include "vmsock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "metrics.h"
#include "ops.h"
#include "util.h"
#include "vc_vm.h"

#define QUICK_EXIT_MS 3000
#define BACKOFF_MAX_MS 60000

int vc_vmsock_path(const char *run_dir, const char *name, char *out, size_t len)
{
	size_t max = sizeof(((struct sockaddr_un *)0)->sun_path);

	if (len < max)
		max = len;
	if ((size_t)snprintf(out, max, "%s/vms/%s.sock", run_dir, name) >= max)
		return -ENAMETOOLONG;
	return 0;
}

struct vc_vmsock *vc_vmsock_find(struct vc_mgmtd *d, const char *name)
{
	for (struct vc_vmsock *v = d->vmsocks; v; v = v->next)
		if (!strcmp(v->name, name))
			return v;
	return NULL;
}

int vc_vmsock_create(struct vc_mgmtd *d, const char *name, char *err, size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct vc_vmsock *v;
	int rc;

	if (vc_vmsock_find(d, name))
		return 0;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	snprintf(v->name, sizeof(v->name), "%s", name);
	rc = vc_vmsock_path(d->cfg.run_dir, name, v->path, sizeof(v->path));
	if (rc) {
		snprintf(err, errlen, "the socket path %s/vms/%s.sock is too long for a unix socket; "
				      "use a shorter VM name or --run-dir", d->cfg.run_dir, name);
		goto err_free;
	}
	strcpy(a.sun_path, v->path);
	v->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (v->lfd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot make a socket: %s", strerror(-rc));
		goto err_free;
	}
	/* What is left of a previous daemon's socket is replaced. */
	unlink(v->path);
	if (bind(v->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(v->lfd, 8) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", v->path, strerror(-rc));
		goto err_close;
	}
	if (d->cfg.vm_socket_gid >= 0 && chown(v->path, (uid_t)-1, (gid_t)d->cfg.vm_socket_gid) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot give %s to group %s: %s", v->path, d->cfg.vm_socket_group, strerror(-rc));
		unlink(v->path);
		goto err_close;
	}
	chmod(v->path, d->cfg.vm_socket_mode);
	v->next = d->vmsocks;
	d->vmsocks = v;
	return 0;

err_close:
	close(v->lfd);
err_free:
	free(v);
	return rc;
}

static void vmsock_free(struct vc_vmsock *v, bool remove)
{
	close(v->lfd);
	if (remove)
		unlink(v->path);
	free(v);
}

void vc_vmsock_destroy(struct vc_mgmtd *d, const char *name)
{
	for (struct vc_vmsock **pp = &d->vmsocks; *pp; pp = &(*pp)->next) {
		struct vc_vmsock *v = *pp;

		if (!strcmp(v->name, name)) {
			*pp = v->next;
			vmsock_free(v, true);
			return;
		}
	}
}

void vc_vmsock_closeall(struct vc_mgmtd *d)
{
	while (d->vmsocks) {
		struct vc_vmsock *v = d->vmsocks;

		d->vmsocks = v->next;
		vmsock_free(v, true);
	}
}

void vc_vmsock_server_ended(struct vc_mgmtd *d, const char *name, int64_t ran_ms, bool asked, const char *how)
{
	struct vc_vmsock *v = vc_vmsock_find(d, name);
	int64_t wait;

	if (!v)
		return;
	snprintf(v->last_exit, sizeof(v->last_exit), "%s", how);
	if (asked || ran_ms >= QUICK_EXIT_MS) {
		v->quick_exits = 0;
		v->retry_after_ms = 0;
		return;
	}
	v->quick_exits++;
	wait = 1000ll << (v->quick_exits - 1 < 6 ? v->quick_exits - 1 : 6);
	if (wait > BACKOFF_MAX_MS)
		wait = BACKOFF_MAX_MS;
	v->retry_after_ms = vc_now_ms() + wait;
}

void vc_vmsock_refuse(int conn, int status, const char *fmt, ...)
{
	struct vc_vm_msg w;
	va_list ap;

	vc_metrics_qemu_refused(status);
	vc_vm_msg_init(&w, VC_VM_WELCOME, 0);
	w.status = status;
	va_start(ap, fmt);
	vsnprintf(w.message, sizeof(w.message), fmt, ap);
	va_end(ap);
	/* A fresh connection's buffer takes one frame: this does not block. */
	vc_vm_send(conn, &w, NULL, 0);
	close(conn);
}

int vc_vmsock_pollfds(struct vc_mgmtd *d, struct pollfd *p, struct vc_vmsock **tag, int max)
{
	int n = 0;

	for (struct vc_vmsock *v = d->vmsocks; v && n < max; v = v->next) {
		p[n] = (struct pollfd){.fd = v->lfd, .events = POLLIN};
		tag[n++] = v;
	}
	return n;
}

void vc_vmsock_handle(struct vc_mgmtd *d, const struct pollfd *p, struct vc_vmsock **tag, int n)
{
	for (int i = 0; i < n; i++) {
		char name[VC_VM_NAME_MAX + 1];
		struct vc_vmsock *v;
		int conn;

		if (!(p[i].revents & POLLIN))
			continue;
		/* Handling one connection may remove sockets (never in practice,
		 * but the record is looked up again rather than trusted). */
		for (v = d->vmsocks; v && v != tag[i]; v = v->next)
			;
		if (!v || v->lfd != p[i].fd)
			continue;
		conn = accept4(v->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue;
		if (v->retry_after_ms && vc_now_ms() < v->retry_after_ms) {
			vc_vmsock_refuse(conn, -EAGAIN,
					 "vcuda-mgmtd: vcuda-server for this VM %s right after starting; retry in %" PRId64 " s",
					 v->last_exit, (v->retry_after_ms - vc_now_ms() + 999) / 1000);
			continue;
		}
		snprintf(name, sizeof(name), "%s", v->name);
		vc_ops_vm_connected(d, name, conn);
	}
}
