/* SPDX-License-Identifier: MIT */
/*
 * acct.h - what a vcuda-server's sessions hold, and its quotas, shared by the
 * listener and every session's worker process: one anonymous shared mapping
 * made by the listener before it forks workers.
 *
 * Device memory and the guest's pinned host memory are counted for the whole
 * server (a VM: all of its sessions), against the quotas given on the
 * command line or through the admin socket. A worker charges before it
 * allocates (so two sessions cannot both slip under the quota) and uncharges
 * when it frees; the listener uncharges what a worker still held when it
 * ended, since process exit freed it. Only host processes touch this memory;
 * the guest never sees it.
 */
#ifndef VC_ACCT_H
#define VC_ACCT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define VC_ACCT_MAX 512u
#define VC_ACCT_DEVS 16u /* devices whose memory is counted apart (the guest NVML's views) */

/* A worker's exit status when its session broke the protocol (FATAL). */
#define VC_WORKER_EXIT_FATAL 3
/* ... when its client went and its session could not end (server/worker.c). */
#define VC_WORKER_EXIT_STUCK 4

enum vc_acct_kind { VC_ACCT_LOCAL = 1, VC_ACCT_VM = 2 };
enum vc_acct_res { VC_ACCT_MEM = 0, VC_ACCT_PINNED = 1 };

struct vc_acct_entry {
	uint32_t state;     /* 0 free, 1 reserved by the listener, 2 open (worker) */
	uint32_t id;        /* session id */
	uint32_t kind;      /* enum vc_acct_kind */
	uint32_t slot;      /* VM session slot */
	int32_t worker;     /* the worker's pid */
	uint32_t pid, uid;  /* the client process, as its kernel reported it */
	char comm[16];
	uint64_t used[2];   /* bytes held, by enum vc_acct_res */
	uint64_t dev_mem[VC_ACCT_DEVS]; /* device memory held, by device ordinal */
	uint64_t commands;  /* executed so far */
	uint64_t active_ns; /* vc_now_ns() of the last command or pending work */
	uint64_t opened_at; /* CLOCK_REALTIME seconds */
	/* the listener's own bookkeeping */
	uint32_t announced;  /* session-opened reported */
	uint32_t stop_why;   /* enum vc_acct_stop: why the listener stopped it */
	uint32_t monitor;    /* the worker: an NVML session (no CUDA work; not a process of the GPU) */
};

enum vc_acct_stop { VC_ACCT_STOP_NONE = 0, VC_ACCT_STOP_IDLE, VC_ACCT_STOP_SERVER };

/**
 * vc_acct_end_reason() - why the worker of @e ended, from its wait @status
 * and what the listener did: "client-exit", "fatal", "idle", "stopped",
 * "crashed" or "failed".
 */
const char *vc_acct_end_reason(const struct vc_acct_entry *e, int status);

struct vc_acct {
	uint64_t quota[2];  /* by enum vc_acct_res; 0 = no quota */
	uint64_t used[2];   /* the sum over sessions */
	uint64_t dev_used[VC_ACCT_DEVS]; /* device memory held, by device: the sum over sessions */
	uint32_t weight;    /* compute weight (1..10000) */
	uint32_t idle_timeout_s; /* 0 = never reclaim idle sessions */
	uint64_t refused[2]; /* charges refused past the quota, by enum vc_acct_res */
	uint64_t launches;  /* kernel launches the driver accepted, all sessions */
	struct vc_acct_entry e[VC_ACCT_MAX];
};

/** vc_acct_create() - a zeroed shared accounting page, or NULL. */
struct vc_acct *vc_acct_create(void);

/**
 * vc_acct_reserve() - in the listener, before forking a session's worker:
 * a free entry for session @id of @kind. Returns its index, or -ENOSPC.
 */
int vc_acct_reserve(struct vc_acct *a, uint32_t id, uint32_t kind, uint32_t slot);

/**
 * vc_acct_release() - in the listener, once the worker of entry @i was
 * reaped: uncharge what it still held and free the entry. Returns the device
 * memory bytes it held (freed by its exit).
 */
uint64_t vc_acct_release(struct vc_acct *a, int i);

/**
 * vc_acct_bind() - in a worker: this process serves entry @i of @a; the
 * charge functions below act on it. Until then (tests, fuzzers) they do
 * nothing and always succeed.
 */
void vc_acct_bind(struct vc_acct *a, int i);

/** vc_acct_client() - in a worker: record the client process's identity; marks the entry open. */
void vc_acct_client(uint32_t pid, uint32_t uid, const char *comm);

/**
 * vc_acct_charge() - count @bytes more of @res for this worker's session,
 * if that keeps the server within its quota. Returns 0, or -ENOMEM past it.
 */
int vc_acct_charge(enum vc_acct_res res, uint64_t bytes);

/** vc_acct_uncharge() - count @bytes of @res less. */
void vc_acct_uncharge(enum vc_acct_res res, uint64_t bytes);

/** vc_acct_launched() - in a worker: the driver accepted one more kernel launch. */
void vc_acct_launched(void);

/** vc_acct_activity() - @n commands executed, or pending work (n = 0): not idle now. */
void vc_acct_activity(uint64_t n);

/**
 * vc_acct_mem_view() - the server's device-memory quota (0: none) and what
 * all its sessions hold, for the memory a guest is shown (cuMemGetInfo,
 * NVML). Zeros when no page is bound (tests).
 */
void vc_acct_mem_view(uint64_t *quota, uint64_t *used);

/**
 * vc_acct_on_device() - in a worker: @bytes of device memory this session
 * holds on device @dev came (@add) or went, for the per-device views; the
 * quota is vc_acct_charge()'s, for all devices together. A device past
 * VC_ACCT_DEVS, or -1 (host memory), is not counted.
 */
void vc_acct_on_device(int dev, uint64_t bytes, bool add);

/** vc_acct_device_used() - what all the server's sessions hold on device @dev (0 for none). */
uint64_t vc_acct_device_used(int dev);

/** vc_acct_monitor() - in a worker: this session only monitors (the guest's NVML). */
void vc_acct_monitor(void);

struct vc_acct_proc {
	uint32_t pid;  /* the client process */
	uint64_t used; /* device memory its session holds */
};

/**
 * vc_acct_procs() - the server's open sessions that are not monitors, one
 * per client process (a process's sessions added up), at most @cap into
 * @out; with @dev >= 0, only those holding memory on device @dev, with what
 * they hold there. Returns how many there are (more than @cap when they did
 * not fit).
 */
uint32_t vc_acct_procs(struct vc_acct_proc *out, uint32_t cap, int dev);

#endif /* VC_ACCT_H */
