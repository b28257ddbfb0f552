/* SPDX-License-Identifier: MIT */
/* place.c - the placement policy (place.h). */
#include "place.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void vc_place_load(const struct vc_gpu *gpus, size_t n, const struct vc_vm *vms, size_t nvm, const char *skip,
		   struct vc_place_gpu *out)
{
	for (size_t i = 0; i < n; i++) {
		out[i] = (struct vc_place_gpu){.index = gpus[i].index, .eligible = vc_gpu_eligible(&gpus[i]),
					       .mem_total = gpus[i].mem_total, .node = gpus[i].numa_node};
		for (size_t k = 0; k < nvm; k++) {
			uint64_t promise = vc_vm_promise(&vms[k], &gpus[i]);

			if (vc_vm_gpu_pos(&vms[k], gpus[i].uuid) < 0 || (skip && !strcmp(vms[k].name, skip)))
				continue;
			if (vc_vm_whole(&vms[k]))
				out[i].whole = vms[k].name;
			/* Saturate: a sum past 2^64 is "more than any GPU". */
			out[i].promised = promise > UINT64_MAX - out[i].promised ? UINT64_MAX : out[i].promised + promise;
			out[i].weight += vms[k].weight;
			out[i].nvms++;
		}
	}
}

uint64_t vc_place_unpromised(const struct vc_place_gpu *g)
{
	return g->mem_total > g->promised ? g->mem_total - g->promised : 0;
}

bool vc_place_fits(const struct vc_place_gpu *g, uint64_t mem_quota)
{
	return g->eligible && !g->whole && mem_quota <= vc_place_unpromised(g);
}

bool vc_place_free(const struct vc_place_gpu *g)
{
	return g->eligible && !g->whole && !g->nvms && !g->promised;
}

/* Is @a a better home than @b?  Returns how it won: 1 memory, 2 weight,
 * 3 number of VMs, 4 index; 0 when it is not better. */
static int better(const struct vc_place_gpu *a, const struct vc_place_gpu *b)
{
	uint64_t fa = vc_place_unpromised(a), fb = vc_place_unpromised(b);

	if (fa != fb)
		return fa > fb ? 1 : 0;
	if (a->weight != b->weight)
		return a->weight < b->weight ? 2 : 0;
	if (a->nvms != b->nvms)
		return a->nvms < b->nvms ? 3 : 0;
	return a->index < b->index ? 4 : 0;
}

int vc_place_pick(const struct vc_place_gpu *g, size_t n, uint64_t mem_quota, char *why, size_t whylen)
{
	char a[32], b[32];
	int best = -1, how = 0, eligible = 0;
	uint64_t most = 0;

	for (size_t i = 0; i < n; i++) {
		if (!g[i].eligible)
			continue;
		eligible++;
		if (vc_place_unpromised(&g[i]) > most)
			most = vc_place_unpromised(&g[i]);
		if (!vc_place_fits(&g[i], mem_quota))
			continue;
		if (best < 0 || better(&g[i], &g[best]))
			best = (int)i;
	}
	/* The reason is the criterion that separated it from its closest rival. */
	for (size_t i = 0; best >= 0 && i < n; i++) {
		int h;

		if ((int)i == best || !vc_place_fits(&g[i], mem_quota))
			continue;
		h = better(&g[best], &g[i]);
		if (h > how)
			how = h;
	}
	if (eligible == 0) {
		snprintf(why, whylen, "no GPU can take a VM: every GPU is drained or unhealthy "
				      "(undrain one with 'vcudactl gpu undrain ID', or check 'vcudactl gpu list')");
		return -ENODEV;
	}
	if (best < 0) {
		snprintf(why, whylen, "no GPU has %s of memory not promised to other VMs (the most is %s); "
				      "lower the VM's --mem-quota, or remove or shrink other VMs",
			 vc_size_format(mem_quota, a, sizeof(a)), vc_size_format(most, b, sizeof(b)));
		return -ENOSPC;
	}
	switch (how) {
	case 0:
	case 1:
		snprintf(why, whylen, "most memory not promised to other VMs (%s of %s)",
			 vc_size_format(vc_place_unpromised(&g[best]), a, sizeof(a)),
			 vc_size_format(g[best].mem_total, b, sizeof(b)));
		break;
	case 2:
		snprintf(why, whylen, "as much unpromised memory as another GPU (%s), and the least total weight (%" PRIu64 ")",
			 vc_size_format(vc_place_unpromised(&g[best]), a, sizeof(a)), g[best].weight);
		break;
	case 3:
		snprintf(why, whylen, "equal memory and weight, and the fewest VMs (%u)", g[best].nvms);
		break;
	default:
		snprintf(why, whylen, "equal to another GPU in memory, weight and VMs: the lower index");
		break;
	}
	return best;
}

/* Take the @k free GPUs of @g (@n) with the lowest indices into @out, only
 * of NUMA node @node unless @any. Returns how many it found. */
static unsigned take_lowest(const struct vc_place_gpu *g, size_t n, unsigned k, bool any, int node, int *out)
{
	unsigned got = 0;

	/* @g is not necessarily in index order */
	while (got < k) {
		int best = -1;

		for (size_t i = 0; i < n; i++) {
			bool taken = false;

			for (unsigned j = 0; j < got; j++)
				taken |= out[j] == (int)i;
			if (taken || !vc_place_free(&g[i]) || (!any && g[i].node != node))
				continue;
			if (best < 0 || g[i].index < g[best].index)
				best = (int)i;
		}
		if (best < 0)
			break;
		out[got++] = best;
	}
	return got;
}

int vc_place_pick_whole(const struct vc_place_gpu *g, size_t n, unsigned k, int *out, char *why, size_t whylen)
{
	unsigned eligible = 0, got;
	int tried[VC_PLACE_NODES_TRIED];
	unsigned ntried = 0;

	for (size_t i = 0; i < n; i++)
		eligible += g[i].eligible;
	if (eligible < k) {
		snprintf(why, whylen, "a VM of %u GPUs needs %u GPUs that take new VMs, and %u do (undrain one with "
				      "'vcudactl gpu undrain ID', or check 'vcudactl gpu list')", k, k, eligible);
		return -ENODEV;
	}
	/* One NUMA node's GPUs, when a node has enough free ones: the node of
	 * the lowest-indexed free GPU first, then the next node, and so on. */
	for (;;) {
		int node = 0, first = -1;

		for (size_t i = 0; i < n; i++) {
			bool seen = false;

			for (unsigned t = 0; t < ntried; t++)
				seen |= tried[t] == g[i].node;
			if (!seen && vc_place_free(&g[i]) && (first < 0 || g[i].index < g[first].index))
				first = (int)i;
		}
		if (first < 0 || ntried == VC_PLACE_NODES_TRIED)
			break;
		node = g[first].node;
		tried[ntried++] = node;
		if (take_lowest(g, n, k, false, node, out) == k) {
			if (node >= 0)
				snprintf(why, whylen, "%u whole GPUs with no VM, all on NUMA node %d, the lowest indices", k,
					 node);
			else
				snprintf(why, whylen, "%u whole GPUs with no VM, the lowest indices", k);
			return 0;
		}
	}
	got = take_lowest(g, n, k, true, 0, out);
	if (got < k) {
		snprintf(why, whylen, "a VM of %u GPUs takes them whole, and %u of the GPUs that take new VMs have no "
				      "VM; remove or move VMs, or ask for fewer GPUs", k, got);
		return -ENOSPC;
	}
	snprintf(why, whylen, "%u whole GPUs with no VM, the lowest indices (no NUMA node has %u free)", k, k);
	return 0;
}
