/* SPDX-License-Identifier: MIT */
/* server_config.h - vcuda-server's configuration and log line, shared by the
 * listener (server_main.c) and the per-session worker (worker.c). */
#ifndef VC_SERVER_CONFIG_H
#define VC_SERVER_CONFIG_H

#include <stdint.h>

#include "vc_layout.h"
#include "vc_wire.h"
#include "standin/standin.h"
#include "vcuda/server.h"

struct vc_server_config {
	const char *socket_path;    /* host-local clients, or NULL */
	const char *vm_socket_path; /* the VM's QEMU, or NULL */
	int vm_conn_fd;             /* a QEMU connection handed over at start, or -1 */
	const char *vm_name;        /* for logs and the admin socket, or NULL */
	const char *admin_path;     /* the admin socket (docs/MGMT.md), or NULL */
	const char *gpu;            /* CUDA_VISIBLE_DEVICES for the workers, or NULL */
	uint64_t mem_quota, pinned_quota; /* 0: none */
	uint64_t pinned_max; /* page-locked segments beyond the pool, per host-local session */
	uint32_t weight, idle_timeout_s;
	const char *sched_path;     /* compute weights: the GPU's scheduling file, or NULL */
	const char *executor; /* "cuda" or "ci-standin" */
	const char *driver;   /* NVIDIA libcuda.so.1 to load, or NULL */
	const char *nvml_lib; /* the host's libnvidia-ml.so.1 for the guest's NVML, "none", or NULL: the default */
	struct vc_layout_req lreq;
	unsigned max_sessions;
	unsigned max_pending, max_pending_per_peer; /* connections before their hello */
	uint32_t spin_us;
	struct vc_standin_config standin;
	int verbose;
	bool op_times; /* --op-times: each session's time per operation, logged at its close */
};

/** vc_log_op_times() - with --op-times, session @id's table (optimes.h) in the log. */
void vc_log_op_times(struct vc_session *s, uint32_t id);

/** vc_log() - one timestamped line on stderr, with the process id. */
void vc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * vc_close_all_but() - in a new worker process: close every descriptor but
 * stdin, stdout, stderr and the @n in @keep (sorted in place), so that a
 * worker holds nothing of the listener's or of another session's.
 */
void vc_close_all_but(int *keep, int n);

/**
 * vc_worker_main() - serve the client on socket @sock, whose @hello the
 * listener read and accepted, as session @id, in a process of its own (forked
 * by the listener, which never touches CUDA): open the executor, answer the
 * hello, serve the ring until the client goes away, the session goes FATAL or
 * SIGTERM arrives. Returns the exit code.
 */
int vc_worker_main(const struct vc_server_config *cfg, int sock, uint32_t id, const struct vc_hello *hello);

/**
 * vc_worker_probe() - open the executor once in a child process, so that a
 * server without a usable driver says so at start-up. Returns 0 or 1.
 */
int vc_worker_probe(const struct vc_server_config *cfg);

#endif /* VC_SERVER_CONFIG_H */
