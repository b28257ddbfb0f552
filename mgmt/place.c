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
					       .mem_total = gpus[i].mem_total};
		for (size_t k = 0; k < nvm; k++) {
			if (strcmp(vms[k].gpu, gpus[i].uuid) || (skip && !strcmp(vms[k].name, skip)))
				continue;
			/* Saturate: a sum past 2^64 is "more than any GPU". */
			out[i].promised = vms[k].mem_quota > UINT64_MAX - out[i].promised
						  ? UINT64_MAX : out[i].promised + vms[k].mem_quota;
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
	return g->eligible && mem_quota <= vc_place_unpromised(g);
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
