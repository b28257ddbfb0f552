/* SPDX-License-Identifier: MIT */
/* worker_priv.h - what the two kinds of session worker (a host-local client,
 * worker.c; a VM's session slot, worker_vm.c) share. */
#ifndef VC_WORKER_PRIV_H
#define VC_WORKER_PRIV_H

#include <stddef.h>

#include "server/server_config.h"

/**
 * vc_worker_open_executor() - the executor named in @cfg and its factory,
 * opened in this process. Returns 0, or -ENODEV with a reason in @err.
 */
int vc_worker_open_executor(const struct vc_server_config *cfg, const struct vc_executor_ops **ops,
			    void **factory, char *err, size_t errlen);

/**
 * vc_worker_capture_stdout() - make this worker's stdout the channel of the
 * guest's device printf output (console.h); a failure is logged and leaves
 * the output in the server's log, as without vcuda's capture.
 */
void vc_worker_capture_stdout(uint32_t id);

/** vc_worker_release_stdout() - end the capture; log output the guest never fetched. */
void vc_worker_release_stdout(uint32_t id);

/** vc_worker_catch_term() - SIGTERM and SIGINT end the session being served. */
void vc_worker_catch_term(void);

/**
 * vc_worker_serve() - serve @s on a thread until it ends (hang-up, FATAL,
 * SIGTERM), keeping ALIVE set while the serving thread is busy in a long
 * driver call. When the client's end @hangup_fd goes and the session has
 * not ended 10 s later (its serving thread stuck in the driver), the worker
 * exits with VC_WORKER_EXIT_STUCK. Returns vc_session_run()'s result.
 */
int vc_worker_serve(struct vc_session *s, uint32_t id, int hangup_fd);

/**
 * vc_worker_close() - destroy session @s after it was served, bounded: a
 * teardown still inside the driver 10 s later (destroying a context whose
 * stream waits for a value nothing writes never returns on a real GPU) ends
 * the worker with VC_WORKER_EXIT_STUCK; the process's exit frees what the
 * session held.
 */
void vc_worker_close(struct vc_session *s);

#endif /* VC_WORKER_PRIV_H */
