/* SPDX-License-Identifier: MIT */
/*
 * quota.c - a session's device allocations, charged against the server's
 * quotas (acct.h): every allocation path charges before (or, for pitched
 * allocations, right after) it allocates, and its free gives back exactly
 * what was charged, looked up in a table of the session's allocations (the
 * guest cannot make us uncharge more than it was charged). Destroying a
 * context frees its allocations natively: their charges go with it.
 *
 * The same table lets vc_cu_check_range() skip the driver's pointer query
 * (0.2-0.3 us on the GPU machine, bench/cuda/copy_split.c) for a copy inside
 * an allocation it confirmed before: a few whole ranges the driver named are
 * kept while their allocation is tracked, and all of them are forgotten
 * whenever any tracked allocation goes (a free, a context's destruction, an
 * address the driver handed out again), so that none can outlive its memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "resources/acct.h"
#include "cuda/exec_priv.h"

#define EMPTY 0ull

static uint64_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static int grow(struct vc_cu_session *x)
{
	uint32_t cap = x->acap ? x->acap * 2 : 256;
	struct vc_cu_alloc *n, *old = x->allocs;

	if (cap > (1u << 26))
		return -ENOMEM;
	n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < x->acap; i++) {
		if (old[i].dptr == EMPTY)
			continue;
		uint32_t k = (uint32_t)hash(old[i].dptr) & (cap - 1);

		while (n[k].dptr != EMPTY)
			k = (k + 1) & (cap - 1);
		n[k] = old[i];
	}
	free(old);
	x->allocs = n;
	x->acap = cap;
	return 0;
}

static uint32_t find(const struct vc_cu_session *x, uint64_t dptr)
{
	uint32_t k = (uint32_t)hash(dptr) & (x->acap - 1);

	while (x->allocs[k].dptr != EMPTY && x->allocs[k].dptr != dptr)
		k = (k + 1) & (x->acap - 1);
	return k;
}

/* Remove slot @k, shifting later members of its probe run back. */
static void remove_at(struct vc_cu_session *x, uint32_t k)
{
	uint32_t mask = x->acap - 1, j = k;

	x->allocs[k].dptr = EMPTY;
	for (;;) {
		j = (j + 1) & mask;
		if (x->allocs[j].dptr == EMPTY)
			return;
		uint32_t home = (uint32_t)hash(x->allocs[j].dptr) & mask;

		/* Move j into the hole at k unless its home lies cyclically in (k, j]. */
		if ((j > k && (home <= k || home > j)) || (j < k && home <= k && home > j)) {
			x->allocs[k] = x->allocs[j];
			x->allocs[j].dptr = EMPTY;
			k = j;
		}
	}
}

int vc_cu_quota_charge(struct vc_cu_session *x, uint64_t bytes)
{
	(void)x;
	return vc_acct_charge(VC_ACCT_MEM, bytes) ? CUDA_ERROR_OUT_OF_MEMORY : 0;
}

void vc_cu_quota_refund(struct vc_cu_session *x, uint64_t bytes)
{
	(void)x;
	vc_acct_uncharge(VC_ACCT_MEM, bytes);
}

int vc_cu_quota_device(struct vc_cu_session *x)
{
	CUdevice d = -1;

	return x->drv->cuCtxGetDevice(&d) == CUDA_SUCCESS ? (int)d : -1;
}

void vc_cu_quota_gone(struct vc_cu_session *x, int dev, uint64_t bytes)
{
	vc_cu_quota_refund(x, bytes);
	vc_acct_on_device(dev, bytes, false);
}

int vc_cu_quota_track(struct vc_cu_session *x, uint64_t dptr, uint64_t bytes, uint64_t ctx)
{
	int dev;
	uint32_t k;

	if (dptr == EMPTY)
		return 0;
	if ((x->nalloc + 1) * 4 > x->acap * 3 && grow(x))
		return CUDA_ERROR_OUT_OF_MEMORY;
	k = find(x, dptr);
	if (x->allocs[k].dptr == EMPTY) {
		x->nalloc++;
	} else {
		/* A reused address: the old one is gone, without our seeing it. */
		vc_cu_quota_gone(x, x->allocs[k].dev, x->allocs[k].bytes);
		vc_cu_quota_ranges_forget(x);
	}
	dev = vc_cu_quota_device(x);
	x->allocs[k] = (struct vc_cu_alloc){.dptr = dptr, .bytes = bytes, .ctx = ctx, .dev = dev};
	vc_acct_on_device(dev, bytes, true);
	return 0;
}

void vc_cu_quota_untrack(struct vc_cu_session *x, uint64_t dptr)
{
	uint32_t k;

	if (!x->acap || dptr == EMPTY)
		return;
	k = find(x, dptr);
	if (x->allocs[k].dptr == EMPTY)
		return;
	vc_cu_quota_gone(x, x->allocs[k].dev, x->allocs[k].bytes);
	remove_at(x, k);
	x->nalloc--;
	vc_cu_quota_ranges_forget(x);
}

void vc_cu_quota_ctx_gone(struct vc_cu_session *x, uint64_t ctx)
{
	vc_cu_quota_ranges_forget(x);
	for (uint32_t k = 0; k < x->acap;) {
		if (x->allocs[k].dptr != EMPTY && x->allocs[k].ctx == ctx) {
			vc_cu_quota_gone(x, x->allocs[k].dev, x->allocs[k].bytes);
			remove_at(x, k); /* may move a later entry into k: look at k again */
			x->nalloc--;
			continue;
		}
		k++;
	}
}

bool vc_cu_quota_covers(const struct vc_cu_session *x, uint64_t ptr, uint64_t len)
{
	for (uint32_t i = 0; i < VC_CU_RANGES; i++) {
		const struct vc_cu_range *r = &x->ranges[i];

		if (r->size && ptr >= r->start && len <= r->size && ptr - r->start <= r->size - len)
			return true;
	}
	return false;
}

void vc_cu_quota_note(struct vc_cu_session *x, uint64_t start, uint64_t size)
{
	uint32_t k;

	if (!x->acap || start == EMPTY || !size)
		return;
	k = find(x, start);
	if (x->allocs[k].dptr != start || !x->allocs[k].ctx)
		return;
	x->ranges[x->range_next] = (struct vc_cu_range){.start = start, .size = size};
	x->range_next = (x->range_next + 1) % VC_CU_RANGES;
}

void vc_cu_quota_ranges_forget(struct vc_cu_session *x)
{
	memset(x->ranges, 0, sizeof(x->ranges));
	x->range_next = 0;
}

void vc_cu_quota_fini(struct vc_cu_session *x)
{
	vc_cu_quota_ranges_forget(x);
	free(x->allocs);
	x->allocs = NULL;
	x->acap = x->nalloc = 0;
}

int vc_cu_quota_meminfo(struct vc_cu_session *x, size_t *free, size_t *total)
{
	uint64_t quota, used;

	(void)x;
	vc_acct_mem_view(&quota, &used);
	if (!quota)
		return CUDA_SUCCESS;
	if (quota < *total)
		*total = (size_t)quota;
	used = used < *total ? used : *total;
	if (*free > *total - used)
		*free = *total - (size_t)used;
	return CUDA_SUCCESS;
}
