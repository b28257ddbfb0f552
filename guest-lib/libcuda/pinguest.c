/* SPDX-License-Identifier: MIT */
/*
 * pinguest.c - page-locked memory in place, in a VM.
 *
 * cuMemHostRegister, and page-locked allocations that the session's pool
 * cannot hold, keep this process's own pages: the guest's kernel pins them
 * (vcuda.ko, VCUDA_IOC_PIN) and describes them to the host where this
 * process cannot write (shared/vc_gpin.h); the server maps the same pages of
 * the guest's RAM at the same address (vcPinnedSegment MAP_GUEST) and
 * registers them with its driver like a segment (pinseg.c), so that copies
 * from and to them are DMA and the pointer is its own device address, as
 * natively. Nothing is copied and nothing moves: a registration is the
 * native one's cost, the kernel's pinning and the driver's, and not a copy
 * of the program's bytes.
 *
 * It needs the VM's RAM to be a memfd that QEMU shares with the server
 * (-object memory-backend-memfd; docs/VM.md); without it the first attempt
 * answers CUDA_ERROR_NOT_SUPPORTED, which is remembered, and page-locked
 * memory goes through the pool as before. A pin the server could not map is
 * unpinned at once (the server lets a failed one go); one still held
 * when the process ends is unpinned by the guest's kernel once the host has
 * ended the session.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "vc_client.h"
#include "vc_cu_guest.h"

#define ALIGN (2ull << 20) /* allocations: the guest's huge pages make few runs */
#define MAP_TRIES 4

struct gpin {
	uint64_t off, size, gen;
	uint32_t entry;
	uint8_t *addr;
	int owned; /* vc_cu_pinguest_alloc()'s: unmapped as it goes */
};

static struct {
	struct gpin *v;
	size_t n, cap;
	int unsupported; /* no pins in place here: never asked again */
	pthread_mutex_t mu;
} g_gp = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int remember(const struct gpin *g)
{
	int rc = 0;

	pthread_mutex_lock(&g_gp.mu);
	if (g_gp.n == g_gp.cap) {
		size_t cap = g_gp.cap ? g_gp.cap * 2 : 16;
		struct gpin *v = realloc(g_gp.v, cap * sizeof(*v));

		if (v) {
			g_gp.v = v;
			g_gp.cap = cap;
		}
	}
	if (g_gp.n < g_gp.cap)
		g_gp.v[g_gp.n++] = *g;
	else
		rc = -ENOMEM;
	pthread_mutex_unlock(&g_gp.mu);
	return rc;
}

/* The pin at offset @off out of the list, into *@g. 0 or -ENOENT. */
static int forget(uint64_t off, struct gpin *g)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&g_gp.mu);
	for (size_t i = 0; i < g_gp.n; i++) {
		if (g_gp.v[i].off == off) {
			*g = g_gp.v[i];
			g_gp.v[i] = g_gp.v[--g_gp.n];
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&g_gp.mu);
	return rc;
}

static void unsupported(void)
{
	__atomic_store_n(&g_gp.unsupported, 1, __ATOMIC_RELAXED);
}

/* The kernel's unpin once the server let the pin go; one the server still
 * holds (it could not unmap it) stays pinned until the session ends. */
static void unpin(const struct gpin *g)
{
	struct vc_cu_state *st = vc_cu_state();

	if (st)
		vc_client_unpin(st->client, g->entry, g->gen);
}

/* With VCUDA_DEBUG set: why @len bytes were not pinned in place, so that
 * what follows is explained (a registration moved into the pool, an
 * allocation refused past the kernel's bound). */
static void say_refused(uint64_t len, const char *who, int code)
{
	if (vc_cu_debug())
		fprintf(stderr, "vcuda: %llu MiB not pinned in place (%s %d)\n",
			(unsigned long long)(len >> 20), who, code);
}

static CUresult pin(uint8_t *addr, uint64_t len, int owned, uint64_t *off, uint64_t *devptr)
{
	struct vc_cu_state *st = vc_cu_state();
	struct vc_cu_req_pinseg rq = {.op = VC_CU_PINSEG_MAP_GUEST, .guest_addr = (uint64_t)(uintptr_t)addr,
				      .size = len};
	struct vc_cu_rep_pinseg rp;
	struct gpin g = {.size = len, .addr = addr, .owned = owned};
	CUresult rc;
	int e;

	if (!st || __atomic_load_n(&g_gp.unsupported, __ATOMIC_RELAXED))
		return CUDA_ERROR_NOT_SUPPORTED;
	e = vc_client_pin(st->client, rq.guest_addr, len, &g.entry, &g.gen);
	if (e == -EOPNOTSUPP) {
		unsupported();
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (e) {
		/* -E2BIG: more physically contiguous runs than a pin may have;
		 * -ENOMEM: past pin_max_percent; -ENOSPC: no free entry. */
		say_refused(len, "vcuda.ko: errno", -e);
		return e == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	}
	rq.entry = g.entry;
	rq.gen = g.gen;
	rc = vc_cu_call(VC_CU_vcPinnedSegment, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc != CUDA_SUCCESS) {
		if (rc != CUDA_ERROR_ALREADY_MAPPED) /* offered again elsewhere */
			say_refused(len, "the host: CUresult", (int)rc);
		unpin(&g); /* the server let it go, whatever failed */
		if (rc == CUDA_ERROR_NOT_SUPPORTED)
			unsupported();
		return rc;
	}
	g.off = rp.off;
	rc = vc_cu_pinseg_host_register(g.off, len, devptr);
	if (rc == CUDA_SUCCESS && remember(&g))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc != CUDA_SUCCESS) {
		vc_cu_pinseg_host_unmap(g.off); /* with the registration, were there one */
		unpin(&g);
		return rc;
	}
	*off = g.off;
	return CUDA_SUCCESS;
}

CUresult vc_cu_pinguest_get(void *addr, uint64_t len, uint64_t *off, uint64_t *devptr)
{
	return pin(addr, len, 0, off, devptr);
}

/* @len bytes of new anonymous memory at a 2 MiB boundary (huge pages where
 * the guest's kernel allows), or NULL. Its pages are made by the kernel's
 * pinning, which checks its bound first: a request past it touches nothing. */
static uint8_t *map_new(uint64_t len)
{
	uint8_t *r = mmap(NULL, len + ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0);
	uint8_t *a;

	if (r == MAP_FAILED)
		return NULL;
	a = (uint8_t *)(((uintptr_t)r + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
	if (a > r)
		munmap(r, (size_t)(a - r));
	if (r + len + ALIGN > a + len)
		munmap(a + len, (size_t)(r + len + ALIGN - (a + len)));
	madvise(a, len, MADV_HUGEPAGE);
	return a;
}

CUresult vc_cu_pinguest_alloc(uint64_t len, void **p, uint64_t *off, uint64_t *devptr)
{
	uint8_t *taken[MAP_TRIES], *a = NULL;
	CUresult rc = CUDA_ERROR_NOT_SUPPORTED;
	int n = 0;

	len = (len + 4095) & ~4095ull;
	if (!vc_cu_state() || __atomic_load_n(&g_gp.unsupported, __ATOMIC_RELAXED))
		return CUDA_ERROR_NOT_SUPPORTED;
	/* Where the address is taken in the server's process, another one,
	 * the taken one held meanwhile so that the next lands elsewhere. */
	while (n < MAP_TRIES) {
		a = map_new(len);
		if (!a) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
		rc = pin(a, len, 1, off, devptr);
		if (rc != CUDA_ERROR_ALREADY_MAPPED)
			break;
		taken[n++] = a;
		a = NULL;
	}
	while (n)
		munmap(taken[--n], len);
	if (rc == CUDA_ERROR_ALREADY_MAPPED)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc != CUDA_SUCCESS) {
		if (a)
			munmap(a, len);
		return rc;
	}
	*p = a;
	return CUDA_SUCCESS;
}

int vc_cu_pinguest_put(uint64_t off)
{
	struct gpin g;

	if (forget(off, &g))
		return 0;
	vc_cu_pinseg_host_unmap(g.off); /* the registration with it; the pin is let go */
	unpin(&g);
	if (g.owned)
		munmap(g.addr, g.size);
	return 1;
}

void *vc_cu_pinguest_addr(uint64_t off, uint64_t n)
{
	void *a = NULL;

	n = n ? n : 1;
	pthread_mutex_lock(&g_gp.mu);
	for (size_t i = 0; i < g_gp.n; i++) {
		const struct gpin *g = &g_gp.v[i];

		if (off >= g->off && off - g->off < g->size && n <= g->size - (off - g->off)) {
			a = g->addr + (off - g->off);
			break;
		}
	}
	pthread_mutex_unlock(&g_gp.mu);
	return a;
}
