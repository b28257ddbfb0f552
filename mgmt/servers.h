/* SPDX-License-Identifier: MIT */
/*
 * servers.h - the vcuda-server of each running VM: starting it with QEMU's
 * connection as fd 3, handing it later connections (admin "adopt" with
 * SCM_RIGHTS), asking it for status and changing its quotas (admin "status",
 * "set"), writing the events it reports (admin "subscribe") to the event
 * log, noticing its end (a pidfd) and stopping it.
 *
 * Servers are started in a session of their own and outlive vcuda-mgmtd:
 * killing the daemon (even with SIGKILL) does not end any VM's sessions. A
 * restarted daemon re-attaches to them through their admin sockets, whose
 * paths follow from the VM names (RUN_DIR/servers/NAME.admin), and watches
 * them with a pidfd, which works for processes that are not its children.
 */
#ifndef VC_MGMT_SERVERS_H
#define VC_MGMT_SERVERS_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lines.h"
#include "mgmtd.h"

enum vc_srv_state {
	VC_SRV_STARTING, /* started, its admin socket not answering yet */
	VC_SRV_RUNNING,  /* answering on its admin socket */
	VC_SRV_STOPPING, /* SIGTERM sent; SIGKILL at kill_at_ms */
};

struct vc_srv_session {
	uint32_t id, pid;
	char kind[8];
	char comm[17];
};

struct vc_server {
	struct vc_server *next;
	char vm[VC_VM_NAME_MAX + 1];
	char gpu[VC_GPULIST_MAX]; /* its --gpu: the VM's GPUs (vc_vm_gpu_join()) */
	char admin_path[108];
	enum vc_srv_state state;
	pid_t pid;
	int pidfd;
	bool child;              /* ours to reap (not re-attached) */
	int sub_fd;              /* the subscription, -1 when not connected */
	bool sub_acked;          /* its {"ok":true} came */
	uint64_t last_seq;       /* the last event of process seq_pid handled */
	pid_t seq_pid;           /* 0: no event of this process seen yet */
	struct vc_lines sub;
	int64_t started_ms, next_try_ms, ready_deadline_ms, kill_at_ms;
	int pending_conn;        /* a QEMU connection waiting for this server, -1 */
	int64_t adopt_at_ms;
	bool removed;            /* its VM is gone: no restart */
	char stop_reason[128];
	struct vc_srv_session *sess;
	size_t nsess, capsess;
};

/**
 * vc_server_probe() - run "@bin --help" and check that it takes the flags
 * vcuda-mgmtd passes; fills d->server_ok, d->server_sched and
 * d->server_problem. Returns 0 (even when flags are missing), or -errno when
 * the binary cannot be run at all.
 */
int vc_server_probe(struct vc_mgmtd *d);

/**
 * vc_server_start() - start the server of @vm on GPU @vm->gpu with @conn
 * (QEMU's connection; taken, closed here in any case) as its fd 3. Returns
 * 0 with the new server listed in d->servers, or -errno with a sentence in
 * @err.
 */
int vc_server_start(struct vc_mgmtd *d, const struct vc_vm *vm, int conn, char *err, size_t errlen);

/** vc_server_find() - the server of VM @vm, or NULL. */
struct vc_server *vc_server_find(struct vc_mgmtd *d, const char *vm);

/**
 * vc_server_stop() - ask @s to stop (SIGTERM, then SIGKILL after a grace
 * period); @why goes into the event log when it has ended.
 */
void vc_server_stop(struct vc_mgmtd *d, struct vc_server *s, const char *why);

/**
 * vc_server_reattach() - at start: find the server of @vm still running
 * from a previous daemon (its admin socket answers "status" for @vm) and
 * watch it again. Returns 0 (re-attached), -ENOENT (none answers) or -errno.
 */
int vc_server_reattach(struct vc_mgmtd *d, const struct vc_vm *vm);

/**
 * vc_server_stop_orphans() - at start: stop servers still running for VMs
 * the database no longer has (found by their admin sockets).
 */
void vc_server_stop_orphans(struct vc_mgmtd *d);

/**
 * vc_server_adopt() - hand QEMU's connection @conn to the running server
 * @s. Returns 0 (it took it; @conn is closed here), or -errno with the
 * server's reason in @err (@conn is still the caller's).
 */
int vc_server_adopt(struct vc_server *s, int conn, char *err, size_t errlen);

/**
 * vc_server_call() - one request on @s's admin socket, @req an object
 * ({"op":"status"}); its reply in *@rep (a new reference, "ok" true).
 * Returns 0, or -errno with a sentence in @err (the server said no,
 * did not answer within VC_ADMIN_TIMEOUT_MS, or is not running).
 */
int vc_server_call(struct vc_server *s, json_t *req, json_t **rep, char *err, size_t errlen);

/** vc_servers_pollfds() - descriptors to watch: fills @p and @tag (a server each); returns how many. */
int vc_servers_pollfds(struct vc_mgmtd *d, struct pollfd *p, struct vc_server **tag, int max);

/** vc_servers_handle() - act on @n poll results filled by vc_servers_pollfds(). */
void vc_servers_handle(struct vc_mgmtd *d, const struct pollfd *p, struct vc_server **tag, int n);

/** vc_servers_timers() - what is due (retries, grace periods); returns the ms until the next, or -1. */
int vc_servers_timers(struct vc_mgmtd *d);

/**
 * vc_servers_shutdown() - the daemon is stopping: with @stop, stop every
 * server and wait for them (bounded); else leave them running for the next
 * daemon. Frees every record.
 */
void vc_servers_shutdown(struct vc_mgmtd *d, bool stop);

#endif /* VC_MGMT_SERVERS_H */
