/* SPDX-License-Identifier: MIT */
/*
 * mgmtd.h - vcuda-mgmtd's state, shared by its modules: the configuration,
 * the database (the truth: everything else is rebuilt from it at start), the
 * GPU source, the per-VM sockets and the vcuda-server processes. One thread,
 * one poll loop (mgmtd_main.c); nothing here blocks for long, except short
 * exchanges with a server's admin socket (bounded by VC_ADMIN_TIMEOUT_MS).
 */
#ifndef VC_MGMTD_H
#define VC_MGMTD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth.h"
#include "db.h"
#include "gpus.h"
#include "model.h"

#define VC_MGMTD_VERSION "1.0"
#define VC_ADMIN_TIMEOUT_MS 2000

struct vc_mgmtd_config {
	const char *socket_path;  /* the management socket */
	const char *run_dir;      /* vms/NAME.sock, servers/NAME.admin, sched/ */
	const char *db_path;
	const char *inventory;    /* NULL: NVML */
	const char *nvml_lib;     /* NULL: libnvidia-ml.so.1 */
	const char *admin_group;
	const char *socket_group; /* NULL: the daemon's group */
	unsigned socket_mode;     /* of the management socket */
	unsigned vm_socket_mode;  /* of the per-VM sockets */
	const char *vm_socket_group; /* their group (QEMU's), NULL: the daemon's */
	int vm_socket_gid;        /* resolved at start, -1: none */
	uint32_t rescan_interval; /* seconds between GPU rescans, 0: on request only */
	const char *server_bin;
	const char *executor;     /* passed as --executor, or NULL */
	const char **server_args; /* extra arguments for every vcuda-server */
	int nserver_args;
	uint64_t def_mem_quota, def_pinned_quota;
	uint32_t def_weight, def_idle_timeout;
	int64_t events_keep;
	bool stop_on_exit;        /* stop the servers when the daemon is stopped */
	const char *metrics_listen; /* serve /metrics here (metrics.h); NULL: off */
};

struct vc_server;
struct vc_vmsock;

struct vc_mgmtd {
	struct vc_mgmtd_config cfg;
	struct vc_db *db;
	struct vc_gpu_source *gpus;
	struct vc_auth auth;
	struct vc_server *servers;
	struct vc_vmsock *vmsocks;
	bool server_ok;           /* the server binary takes the flags mgmtd passes */
	bool server_sched;        /* ... and --sched */
	char server_problem[512]; /* why not, for errors */
	int64_t started_ms;
	unsigned events_added;
	bool stopping;            /* shutting down: no new servers */
};

/**
 * vc_mgmtd_event() - append an event to the log in a transaction of its own
 * (for what happens outside a request: servers starting and ending,
 * sessions reclaimed). A failure is logged, not returned.
 */
void vc_mgmtd_event(struct vc_mgmtd *d, const char *kind, const char *vm, const char *gpu, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif /* VC_MGMTD_H */
