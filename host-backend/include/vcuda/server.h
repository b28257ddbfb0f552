/* SPDX-License-Identifier: MIT */
/*
 * vcuda/server.h - the vcuda server core: sessions on shared regions and the
 * executor interface.
 *
 * A session serves one guest context's ring in a shared region. The embedder
 * (vcuda-server, a test, a fuzzer) maps the region, creates the session with
 * the executor that carries out the work, and either runs it on a thread of
 * its own (vc_session_start/stop), runs it on the calling thread
 * (vc_session_run), or drives it step by step (vc_session_process).
 *
 * Every command from the guest is copied out of shared memory, validated and
 * only then handed to the executor (vcuda/executor.h), which never sees the
 * ring: what it needs of the session later it reaches through the session
 * services the session gives it. A protocol violation marks that session FATAL, releases
 * its executor context and stops it; it never exits, aborts or blocks the
 * process.
 */
#ifndef VCUDA_SERVER_H
#define VCUDA_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vcuda/executor.h"

struct vc_layout;

/* ---------------------------------------------------------------------------
 * The executor: the CUDA executor over a driver table, the real NVIDIA driver
 * (vc_cuda_driver_open()) or the CI stand-in for one (host-backend/standin).
 */

/**
 * vc_exec_cuda_ops - the CUDA executor. Its factory is a struct
 * vc_cuda_driver: the real driver, or the CI stand-in's table.
 */
extern const struct vc_executor_ops vc_exec_cuda_ops;

struct vc_cuda_driver;

/**
 * vc_cuda_driver_open() - load the host's real CUDA driver (@path, or the
 * usual locations when NULL), resolve every entry point vcuda uses and call
 * cuInit. Returns a driver table, or NULL with a reason in @err.
 */
struct vc_cuda_driver *vc_cuda_driver_open(const char *path, char *err, size_t errlen);

/**
 * vc_exec_cuda_set_close_wait() - how long (@ms) a closing session waits for
 * its streams' work before its close goes on without it (default 2000; a
 * stream may wait for ever on a value nothing writes). For embedders that
 * close many such sessions, the fuzzers.
 */
void vc_exec_cuda_set_close_wait(unsigned ms);

/* ---------------------------------------------------------------------------
 * Sessions.
 */
struct vc_session;

/* A range of a VM's RAM: a memory backend's file, as QEMU passed it (VC_VM_MEM). */
struct vc_guest_ram {
	uint64_t gpa;    /* guest-physical start, page aligned */
	uint64_t size;   /* bytes, a page multiple */
	int fd;          /* the backend's memfd; the caller's, for the session's life */
	uint64_t fd_off; /* where gpa lies in it */
};

struct vc_session_params {
	void *base;                      /* mapped shared region */
	const struct vc_layout *layout;  /* the host's own copy; never read back */
	int doorbell_fd;  /* eventfd the guest kicks; -1 for step-driven use */
	int complete_fd;  /* eventfd signalled for sleeping guest threads; -1 none */
	int hangup_fd;    /* readable/HUP when the client goes away (its socket); -1 none */
	int mem_fd;       /* the region's memfd (to map the pinned pool again); -1 none */
	uint64_t mem_off; /* where the region starts in mem_fd (a VM's session slot) */
	bool pass_fds;    /* hangup_fd is the client's socket, on which it may pass the
			   * memfds of pinned segments (host-local sessions) */
	uint64_t pinned_max; /* with pass_fds or gpin_area: bytes of segments mapped at once */
	void *gpin_area;     /* a VM session: its slot's guest-pin area (shared/vc_gpin.h); NULL none */
	const struct vc_guest_ram *guest_ram; /* with gpin_area: the VM's RAM, for pins in place */
	uint32_t guest_ram_n;
	const struct vc_executor_ops *exec;
	void *exec_factory;
	uint32_t id;      /* for logs */
	uint32_t spin_us; /* busy-poll this long before backing off; 0 = default */
	int verbose;      /* log every CUDA operation that fails */
	bool op_times;    /* time each CUDA operation on the serving thread (vc_session_report_op_times) */
};

/**
 * vc_session_create() - initialise the shared region's control page, open an
 * executor context and make a session ready to serve.
 *
 * Returns 0 and *@out, or -EINVAL (bad layout), -ENOMEM, or the executor's
 * -errno.
 */
int vc_session_create(const struct vc_session_params *p, struct vc_session **out);

/**
 * vc_session_process() - fetch whatever the guest has published, decode and
 * execute it, publish completions. Never sleeps.
 *
 * Returns the number of commands executed (0 when the ring was empty), or
 * -EPROTO once the session is FATAL.
 */
int vc_session_process(struct vc_session *s);

/**
 * vc_session_run() - serve on the calling thread until the client hangs up,
 * the session goes FATAL or vc_session_stop() is called: poll, back off, set
 * IDLE and sleep on the doorbell. Returns 0 on hang-up or stop, -EPROTO when
 * FATAL.
 */
int vc_session_run(struct vc_session *s);

/** vc_session_start() - run vc_session_run() on a new thread; 0 or -errno. */
int vc_session_start(struct vc_session *s);

/**
 * vc_session_stop() - ask the serving thread to return and, if it was started
 * with vc_session_start(), join it. Safe to call from any thread.
 */
void vc_session_stop(struct vc_session *s);

/**
 * vc_session_destroy() - stop the session if it runs, release its executor
 * context (freeing everything it held on the device) and free it. The region
 * and the fds stay the caller's.
 */
void vc_session_destroy(struct vc_session *s);

/** vc_session_heartbeat() - mark the server ALIVE for waiting guests. */
void vc_session_heartbeat(struct vc_session *s);

/**
 * vc_session_busy() - the executor still has work of the guest's in flight
 * (a synchronisation it waits for, a host callback): the session is not idle
 * even when no command arrives. Safe from any thread.
 */
bool vc_session_busy(struct vc_session *s);

struct vc_session_stats {
	uint64_t commands;    /* commands executed */
	uint64_t batches;     /* spans fetched */
	uint64_t sleeps;      /* times the thread slept on the doorbell */
	uint64_t async_failed; /* commands without a reply that failed: the guest's
				* next synchronising call reported the first */
	uint32_t fatal;       /* enum vc_fatal, 0 when healthy */
	bool running;
};

/** vc_session_get_stats() - counters and state, for logs and tests. */
void vc_session_get_stats(struct vc_session *s, struct vc_session_stats *st);

/**
 * vc_session_report_op_times() - with vc_session_params.op_times, once the
 * session has stopped serving: a summary line, then the @max CUDA operations
 * that took the serving thread the most time (calls, total, mean, max), each
 * handed to @line. Returns the lines handed over, 0 when timing is off.
 */
int vc_session_report_op_times(struct vc_session *s, unsigned max, void (*line)(void *arg, const char *text),
			       void *arg);

#endif /* VCUDA_SERVER_H */
