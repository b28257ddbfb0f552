/* SPDX-License-Identifier: MIT */
/*
 * vm_link.h - vcuda-server's side of a VM's virtio-vcuda device: the
 * connection from QEMU (docs/VM.md, shared/vc_vm.h), its session slots and
 * the worker process that serves each open slot. Runs in the listener, which
 * never touches CUDA; all of it is driven from the listener's poll loop.
 */
#ifndef VC_VM_LINK_H
#define VC_VM_LINK_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "server/server_config.h"
#include "vcuda/server.h"
#include "vc_vm.h"

struct vc_vm_link;

/* What a slot's worker is given (worker_vm.c). */
struct vc_vm_worker_args {
	int mem_fd, doorbell_fd, complete_fd, ctl_fd;
	int acct_index;     /* its entry in the accounting page */
	uint64_t region_off, slot_size;
	uint32_t slot, id, pid, uid;
	char comm[16];
	const char *vm_name;
	/* The VM's RAM as QEMU shared it (VC_VM_MEM), for pages pinned in
	 * place (shared/vc_gpin.h); none when QEMU shared none. */
	const struct vc_guest_ram *ram;
	uint32_t nram;
};

/**
 * vc_worker_vm_main() - serve the session of one slot in this process (a
 * child of the listener). Reports OPENED on @a->ctl_fd, then serves until the
 * listener closes it, SIGTERM arrives or the session goes FATAL. Returns the
 * exit code.
 */
int vc_worker_vm_main(const struct vc_server_config *cfg, const struct vc_vm_worker_args *a);

struct vc_admin;
struct vc_acct;

struct vc_vm_link_params {
	const struct vc_server_config *cfg;
	const char *path;       /* listen here for QEMU; NULL: only adopted connections */
	uint32_t *next_id;      /* the listener's session counter (ids unique in logs) */
	struct vc_acct *acct;   /* sessions and quotas, shared with the workers */
	struct vc_admin *admin; /* session events go there; may be NULL */
};

/** vc_vm_link_create() - the VM link, listening on @p->path if given. Returns 0 or -errno. */
int vc_vm_link_create(const struct vc_vm_link_params *p, struct vc_vm_link **out);

/**
 * vc_vm_link_adopt() - serve the QEMU connection @fd (accepted by someone
 * else: vcuda-mgmtd). Takes @fd in every case. Returns 0, or -EBUSY with a
 * reason in @err when a VM is already connected.
 */
int vc_vm_link_adopt(struct vc_vm_link *l, int fd, char *err, size_t errlen);

/**
 * vc_vm_link_set_admin() - where session events go from now on (the admin
 * socket may be created after the link). @a may be NULL.
 */
void vc_vm_link_set_admin(struct vc_vm_link *l, struct vc_admin *a);

/** vc_vm_link_destroy() - stop every session (waiting for the workers) and close. */
void vc_vm_link_destroy(struct vc_vm_link *l);

/**
 * vc_vm_link_pollfds() - the descriptors to watch: fills at most @max entries
 * of @p and returns how many.
 */
int vc_vm_link_pollfds(struct vc_vm_link *l, struct pollfd *p, int max);

/** vc_vm_link_timeout_ms() - how long the poll may sleep (-1: no timer pending). */
int vc_vm_link_timeout_ms(struct vc_vm_link *l);

/**
 * vc_vm_link_handle() - act on the poll results for the entries filled by
 * the last vc_vm_link_pollfds() (@p, @n), and on timers.
 */
void vc_vm_link_handle(struct vc_vm_link *l, const struct pollfd *p, int n);

/**
 * vc_vm_link_reaped() - the listener collected child @pid with wait status
 * @status. Returns true when it was one of this link's workers.
 */
bool vc_vm_link_reaped(struct vc_vm_link *l, pid_t pid, int status);

/** vc_vm_link_workers() - worker processes alive (all connections). */
unsigned vc_vm_link_workers(struct vc_vm_link *l);

#endif /* VC_VM_LINK_H */
