/* SPDX-License-Identifier: MIT */
/*
 * vmsock.h - the socket of each VM, RUN_DIR/vms/NAME.sock, where its QEMU
 * (virtio-vcuda-pci's chardev) connects. It exists from "vm add" to
 * "vm remove" (and is made again when the daemon starts). vcuda-mgmtd never
 * reads from a QEMU connection: it hands it, HELLO unread, to the VM's
 * vcuda-server, or refuses it with a WELCOME frame that says why
 * (shared/vc_vm.h), which QEMU logs.
 */
#ifndef VC_MGMT_VMSOCK_H
#define VC_MGMT_VMSOCK_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "mgmtd.h"

struct vc_vmsock {
	struct vc_vmsock *next;
	char name[VC_VM_NAME_MAX + 1];
	char path[108];
	int lfd;
	/* A server that keeps dying at start is not restarted on every
	 * reconnection of QEMU: it waits, doubling up to a minute. */
	unsigned quick_exits;
	int64_t retry_after_ms;
	char last_exit[96];
};

/** vc_vmsock_path() - RUN_DIR/vms/NAME.sock into @out. 0 or -ENAMETOOLONG. */
int vc_vmsock_path(const char *run_dir, const char *name, char *out, size_t len);

/** vc_vmsock_create() - listen on the socket of VM @name. 0, or -errno with a sentence in @err. */
int vc_vmsock_create(struct vc_mgmtd *d, const char *name, char *err, size_t errlen);

/** vc_vmsock_destroy() - stop listening for VM @name and remove its socket. */
void vc_vmsock_destroy(struct vc_mgmtd *d, const char *name);

/** vc_vmsock_find() - the socket record of VM @name, or NULL. */
struct vc_vmsock *vc_vmsock_find(struct vc_mgmtd *d, const char *name);

/** vc_vmsock_closeall() - at exit: close and remove every VM socket. */
void vc_vmsock_closeall(struct vc_mgmtd *d);

/**
 * vc_vmsock_server_ended() - VM @name's server ended after running @ran_ms
 * (@how: "exited with status 2"); @asked: we stopped it. Updates the
 * restart back-off.
 */
void vc_vmsock_server_ended(struct vc_mgmtd *d, const char *name, int64_t ran_ms, bool asked, const char *how);

/** vc_vmsock_pollfds() - as vc_servers_pollfds(). */
int vc_vmsock_pollfds(struct vc_mgmtd *d, struct pollfd *p, struct vc_vmsock **tag, int max);

/** vc_vmsock_handle() - accept connections; each goes to vc_ops_vm_connected(). */
void vc_vmsock_handle(struct vc_mgmtd *d, const struct pollfd *p, struct vc_vmsock **tag, int n);

/**
 * vc_vmsock_refuse() - answer QEMU's connection @conn with a WELCOME frame
 * carrying @status (-errno) and a message, then close it.
 */
void vc_vmsock_refuse(int conn, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* VC_MGMT_VMSOCK_H */
