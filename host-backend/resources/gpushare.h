/* SPDX-License-Identifier: MIT */
/*
 * gpushare.h - compute weights: sharing a GPU between the VMs whose servers use
 * it, in proportion to their weights, when they compete (docs/MGMT.md).
 *
 * The servers of one GPU share a small file (vcuda-server --sched FILE; the
 * host manager makes one per GPU). Each server has an entry: its weight, the
 * number of its sessions with GPU work in flight, and its virtual time: the
 * wall time its sessions had work in flight, scaled by 100 / weight. Before a
 * session submits a kernel, it compares its server's virtual time with that
 * of the other servers that have work in flight; when it is ahead by more
 * than a quantum it waits for them to catch up (at most a bounded time, so a
 * stuck peer cannot stall it). A server that comes back after a pause (over
 * 100 ms) starts one quantum behind the others: idleness earns no credit.
 * Servers take turns: one submits only to a GPU free of the others' work
 * (or one it holds already), and a server whose work just ended keeps its
 * turn a moment longer (its next submission may be on its way) unless it
 * is a quantum ahead: two servers' work in flight together time-slices the
 * GPU, and then neither's time in flight would be its GPU time.
 * With no competitor,
 * nothing waits and no event is recorded: a server only notes the time of
 * its last submission, which is how the others see that it competes.
 *
 * The listener attaches (and owns the entry); its workers inherit the
 * mapping. Without --sched everything here is a no-op.
 */
#ifndef VC_GPUSHARE_H
#define VC_GPUSHARE_H

#include <stdbool.h>
#include <stdint.h>

#define VC_SCHED_MAX 64u

struct vc_sched_vm {
	int32_t owner;      /* the server (listener) pid; 0: free */
	uint32_t weight;    /* 1..10000; 100 is the default */
	uint32_t active;    /* sessions with GPU work in flight */
	uint32_t drained_us; /* CLOCK_MONOTONIC us (mod 2^32) its work last ended; 0: never */
	uint64_t vtime;     /* ns of work-in-flight time x 100 / weight */
	uint64_t beat;      /* CLOCK_MONOTONIC ns of the owner's last sign of life */
	uint64_t busy_ns;   /* unscaled, for status */
	uint64_t recent;    /* CLOCK_MONOTONIC ns of its last kernel submission */
};

struct vc_sched_file {
	uint32_t magic, version;
	uint32_t pad[14];
	struct vc_sched_vm vm[VC_SCHED_MAX];
};

/**
 * vc_sched_attach() - in the listener: map @path (created if missing) and
 * take an entry with @weight. Returns 0, or -errno (-ENOSPC: no free entry).
 */
int vc_sched_attach(const char *path, uint32_t weight);

/** vc_sched_detach() - in the listener, at exit: give the entry back. */
void vc_sched_detach(void);

/** vc_sched_set_weight() - a new weight for this server. */
void vc_sched_set_weight(uint32_t weight);

/** vc_sched_beat() - in the listener, every second: still alive. */
void vc_sched_beat(void);

/**
 * vc_sched_busy_ns() - in the listener: how long this server's sessions had
 * work in flight while another server of the GPU competed (the time weights
 * are charged for; time alone on the GPU is not measured). 0 without --sched.
 */
uint64_t vc_sched_busy_ns(void);

/** vc_sched_enabled() - a scheduling file is attached. */
bool vc_sched_enabled(void);

/**
 * vc_sched_competing() - another server of this GPU has work in flight:
 * this session should account its own (and may have to wait).
 */
bool vc_sched_competing(void);

/**
 * vc_sched_gate() - before a session submits GPU work: wait while this
 * server is ahead of the competitors by more than the quantum (bounded).
 * Returns the ns waited.
 */
uint64_t vc_sched_gate(void);

/** vc_sched_busy() - this session now has GPU work in flight (@on) or none. */
void vc_sched_busy(bool on);

/** vc_sched_charge() - this session's work was in flight for @ns more. */
void vc_sched_charge(uint64_t ns);

#endif /* VC_GPUSHARE_H */
