/* SPDX-License-Identifier: MIT */
/*
 * place.h - the placement policy (docs/MGMT.md): among GPUs that may take
 * new VMs (healthy, present, not drained) and have room for the VM's memory
 * quota, the one with the most memory not promised to other VMs' quotas,
 * then the least total compute weight, then the fewest VMs, then the lowest
 * index. A VM of several GPUs takes them whole: GPUs that may take new VMs
 * and have none, all of one NUMA node where one has enough (the node whose
 * free GPUs come first), the lowest indices first; a GPU taken whole takes
 * no other VM. Pure functions: no I/O, no state.
 */
#ifndef VC_MGMT_PLACE_H
#define VC_MGMT_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* One GPU as the policy sees it. */
struct vc_place_gpu {
	int index;
	bool eligible;
	uint64_t mem_total;
	uint64_t promised; /* sum of the memory quotas of the VMs assigned to it */
	uint64_t weight;   /* sum of their compute weights */
	unsigned nvms;
	const char *whole; /* the VM that has it whole (in the VMs given to vc_place_load()), or NULL */
	int node;          /* its NUMA node, -1 unknown */
};

/**
 * vc_place_load() - what each of @gpus (@n) carries: the VMs of @vms (@nvm)
 * assigned to it, leaving out the VM named @skip (the one being placed, so
 * that its own promise does not count against it; NULL: none). A VM of
 * several GPUs promises each of them whole. Fills @out[n].
 */
void vc_place_load(const struct vc_gpu *gpus, size_t n, const struct vc_vm *vms, size_t nvm, const char *skip,
		   struct vc_place_gpu *out);

/** vc_place_unpromised() - memory of @g not promised to any VM (0 when overcommitted). */
uint64_t vc_place_unpromised(const struct vc_place_gpu *g);

/** vc_place_fits() - @g may take a VM with @mem_quota: eligible and with room. */
bool vc_place_fits(const struct vc_place_gpu *g, uint64_t mem_quota);

/**
 * vc_place_pick() - choose among @g (@n) for a VM with @mem_quota. Returns
 * the chosen entry's position in @g, with the reason in @why; or -ENODEV
 * when no GPU may take new VMs, -ENOSPC when none has room, each with a
 * sentence in @why that says what to do.
 */
int vc_place_pick(const struct vc_place_gpu *g, size_t n, uint64_t mem_quota, char *why, size_t whylen);

/* The NUMA nodes vc_place_pick_whole() tries one by one before it spans them. */
#define VC_PLACE_NODES_TRIED 64

/** vc_place_free() - @g may be taken whole: eligible, with no VM and nothing promised. */
bool vc_place_free(const struct vc_place_gpu *g);

/**
 * vc_place_pick_whole() - choose @k GPUs among @g (@n) for a VM that takes
 * them whole: free ones (vc_place_free()), all on one NUMA node where a
 * node has @k of them (GPUs whose node is unknown count as one node), the
 * lowest indices first; else the lowest indices across nodes. Fills
 * @out[k] with positions in @g and returns 0 with the reason in @why; or
 * -ENODEV when fewer than @k GPUs may take new VMs, -ENOSPC when fewer than
 * @k of them are free, each with a sentence in @why that says what to do.
 */
int vc_place_pick_whole(const struct vc_place_gpu *g, size_t n, unsigned k, int *out, char *why, size_t whylen);

#endif /* VC_MGMT_PLACE_H */
