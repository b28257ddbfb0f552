/* SPDX-License-Identifier: MIT */
/*
 * pinned.c - the guest's page-locked memory: allocations carved from the
 * pinned pool of the shared region (first fit over page-granular extents,
 * neighbours merged on free). The host maps the same pages, at the same
 * address where it can, and registers each allocation with the driver, so
 * that copies from and to it are DMA and kernels may use it (mapped memory).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vc_client.h"
#include "vc_cu_guest.h"

#define PAGE 4096u

struct extent {
	uint64_t off, len;
};

static struct {
	uint8_t *base;
	uint64_t size;
	uint64_t host_base;
	int identity;
	struct vc_client *client; /* maps the pool as it is used */
	struct extent *free; /* sorted by offset, never adjacent */
	size_t n, cap;
	pthread_mutex_t mu;
} g_pool = {.mu = PTHREAD_MUTEX_INITIALIZER};

int vc_cu_pinned_init(void)
{
	struct vc_cu_state *st = vc_cu_state();
	struct vc_cu_req_pinned_base rq = {0};
	struct vc_cu_rep_pinned_base rp;
	uint64_t size;
	void *base = st ? vc_client_pinned(st->client, &size) : NULL;

	if (!base)
		return 0; /* no pool: page-locked memory is ordinary memory */
	/* VCUDA_PINNED_POOL: how much of it this process takes (0: none);
	 * what it leaves is page-locked beyond the pool (pinguest.c, pinseg.c). */
	size = vc_client_env_size("VCUDA_PINNED_POOL", size, 0, size) & ~(uint64_t)(PAGE - 1);
	if (!size)
		return 0;
	rq.guest_base = (uint64_t)(uintptr_t)base;
	if (vc_cu_call(VC_CU_vcPinnedBase, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0))
		return 0;
	g_pool.free = malloc(sizeof(*g_pool.free) * 16);
	if (!g_pool.free)
		return 0;
	g_pool.cap = 16;
	g_pool.free[0] = (struct extent){0, size};
	g_pool.n = 1;
	g_pool.host_base = rp.host_base;
	g_pool.identity = (int)rp.identity;
	g_pool.client = st->client;
	g_pool.size = size;
	g_pool.base = base; /* last: vc_cu_pinned_alloc() checks it */
	return 1;
}

void *vc_cu_pinned_alloc(uint64_t size, uint64_t *off)
{
	void *p = NULL;

	size = (size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	pthread_mutex_lock(&g_pool.mu);
	for (size_t i = 0; g_pool.base && i < g_pool.n; i++) {
		struct extent *e = &g_pool.free[i];

		if (e->len < size)
			continue;
		/* Mapped here before it is ours (in a VM the pool is mapped
		 * as it is used); where it cannot be, there is no pool. */
		if (vc_client_pinned_map(g_pool.client, e->off, size))
			break;
		*off = e->off;
		p = g_pool.base + e->off;
		e->off += size;
		e->len -= size;
		if (!e->len) {
			memmove(e, e + 1, (g_pool.n - i - 1) * sizeof(*e));
			g_pool.n--;
		}
		break;
	}
	pthread_mutex_unlock(&g_pool.mu);
	return p;
}

void vc_cu_pinned_free(uint64_t off, uint64_t size)
{
	size_t i;

	if (off >= VC_CU_PINSEG_OFF0) {
		/* Pinned in place (pinguest.c), or a segment (pinseg.c). */
		if (!vc_cu_pinguest_put(off))
			vc_cu_pinseg_put(off);
		return;
	}
	size = (size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	pthread_mutex_lock(&g_pool.mu);
	for (i = 0; i < g_pool.n && g_pool.free[i].off < off; i++)
		;
	/* Merge with the extents on either side, or insert. */
	if (i > 0 && g_pool.free[i - 1].off + g_pool.free[i - 1].len == off) {
		g_pool.free[i - 1].len += size;
		if (i < g_pool.n && off + size == g_pool.free[i].off) {
			g_pool.free[i - 1].len += g_pool.free[i].len;
			memmove(&g_pool.free[i], &g_pool.free[i + 1], (g_pool.n - i - 1) * sizeof(g_pool.free[0]));
			g_pool.n--;
		}
	} else if (i < g_pool.n && off + size == g_pool.free[i].off) {
		g_pool.free[i].off = off;
		g_pool.free[i].len += size;
	} else {
		if (g_pool.n == g_pool.cap) {
			struct extent *e = realloc(g_pool.free, g_pool.cap * 2 * sizeof(*e));

			if (!e) { /* the space is lost, not the pool */
				pthread_mutex_unlock(&g_pool.mu);
				return;
			}
			g_pool.free = e;
			g_pool.cap *= 2;
		}
		memmove(&g_pool.free[i + 1], &g_pool.free[i], (g_pool.n - i) * sizeof(g_pool.free[0]));
		g_pool.free[i] = (struct extent){off, size};
		g_pool.n++;
	}
	pthread_mutex_unlock(&g_pool.mu);
}

int vc_cu_pinned_alias(uint64_t off, void *addr, uint64_t len)
{
	struct vc_cu_state *st = vc_cu_state();

	if (off >= VC_CU_PINSEG_OFF0)
		return vc_cu_pinseg_alias(off, addr, len);
	return st && g_pool.base ? vc_client_pinned_alias(st->client, off, addr, len) : -ENODEV;
}

void *vc_cu_pinned_addr(uint64_t off, uint64_t n)
{
	uint8_t *base = g_pool.base;

	if (off >= VC_CU_PINSEG_OFF0) {
		void *a = vc_cu_pinguest_addr(off, n);

		return a ? a : vc_cu_pinseg_addr(off, n);
	}
	if (!base || n > g_pool.size || off > g_pool.size - n)
		return NULL;
	return base + off;
}
