/* SPDX-License-Identifier: MIT */
/*
 * pinned.c - the guest's page-locked memory, carved from the pinned pool of
 * the shared region.
 *
 * The host maps the pool a second time at the very address where the guest
 * mapped it (MAP_FIXED_NOREPLACE: only where nothing of ours is), so that a
 * pinned pointer means the same on both sides and, once registered with the
 * driver (cuMemHostRegister with DEVICEMAP), is the device address too, as
 * with unified addressing natively. Where that address is taken, the pool's
 * ordinary mapping serves, and device pointers differ from host ones. Copies
 * from and to pinned memory are then DMA straight from the guest's pages.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "resources/acct.h"
#include "cuda/exec_priv.h"
#include "vc_fill.h"

void *vc_cu_pinned_ptr(struct vc_cu_session *x, uint64_t off, uint64_t len)
{
	if (off >= VC_CU_PINSEG_OFF0)
		return vc_cu_pinseg_ptr(x, off, len); /* a segment beyond the pool (pinseg.c) */
	if (!x->pinned || !(len <= x->pinned_size && off <= x->pinned_size - len))
		return NULL;
	return x->pinned + off;
}

int vc_cu_pinned_off(struct vc_cu_session *x, const void *host, uint64_t *off)
{
	const uint8_t *h = host;

	if (x->pinned && h >= x->pinned && (uint64_t)(h - x->pinned) < x->pinned_size) {
		*off = (uint64_t)(h - x->pinned);
		return 0;
	}
	return vc_cu_pinseg_find(x, (uint64_t)(uintptr_t)host, 1, off);
}

int vc_cu_pinned_at(struct vc_cu_session *x, uint64_t ptr, uint64_t len, uint64_t *off)
{
	uint64_t base = (uint64_t)(uintptr_t)x->pinned;

	/* The pool is a device address only where the worker mapped it at the
	 * guest's own address; segments always are. */
	if (x->pinned && x->pinned_identity && ptr >= base && len <= x->pinned_size &&
	    ptr - base <= x->pinned_size - len) {
		*off = ptr - base;
		return 0;
	}
	return vc_cu_pinseg_find(x, ptr, len, off);
}

void vc_cu_pinned_fini(struct vc_cu_session *x)
{
	if (x->pinned && x->pinned_identity)
		munmap(x->pinned, x->pinned_size);
	x->pinned = NULL;
	vc_cu_pinseg_fini(x);
}

int vc_cu_manual_vcPinnedBase(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_pinned_base rq;
	struct vc_cu_rep_pinned_base rp = {0};
	const uint64_t size = x->svc->pinned.size;
	void *m;

	TAKE(rq);
	if (x->pinned || !size)
		return CUDA_ERROR_INVALID_VALUE; /* once per session, when there is a pool */
	x->pinned_size = size;
	m = MAP_FAILED;
	if (x->svc->pinned.fd >= 0 && rq.guest_base && !(rq.guest_base % VC_PINNED_ALIGN))
		m = mmap((void *)(uintptr_t)rq.guest_base, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, x->svc->pinned.fd, (off_t)x->svc->pinned.fd_off);
	if (m != MAP_FAILED && (uintptr_t)m == rq.guest_base) {
		x->pinned = m;
		x->pinned_identity = true;
	} else {
		if (m != MAP_FAILED) /* an old kernel took the address as a hint */
			munmap(m, size);
		x->pinned = x->svc->pinned.base;
	}
	rp.host_base = (uint64_t)(uintptr_t)x->pinned;
	rp.identity = x->pinned_identity;
	memcpy(out->rep, &rp, sizeof(rp));
	out->rep_len = sizeof(rp);
	return 0;
}

/* Whether the first and last pages of [@h, @h + @size) exist in the shared
 * file already (mincore: residency in the page cache, mapped here or not). */
static bool pages_made(const uint8_t *h, uint64_t size)
{
	unsigned char a = 0, b = 0;

	return mincore((void *)h, 4096, &a) == 0 && mincore((void *)(h + size - 4096), 4096, &b) == 0 &&
	       (a & 1) && (b & 1);
}

int vc_cu_manual_vcHostRegister(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_host_register rq;
	struct vc_cu_rep_host_register rp = {0};
	CUdeviceptr d = 0;
	void *h;
	int rc;

	TAKE(rq);
	if (rq.off % 4096 || !rq.size || !(h = vc_cu_pinned_ptr(x, rq.off, rq.size)))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (x->npregs == x->cappregs) {
		uint32_t cap = x->cappregs ? x->cappregs * 2 : 32;
		struct vc_cu_preg *n = cap <= VC_CU_MAX_HANDLES ? realloc(x->pregs, cap * sizeof(*n)) : NULL;

		if (!n)
			return CUDA_ERROR_OUT_OF_MEMORY;
		x->pregs = n;
		x->cappregs = cap;
	}
	/* Page-locked host memory counts against the pinned quota. */
	if (vc_acct_charge(VC_ACCT_PINNED, rq.size))
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* A large range: its pages entered into this process's page tables
	 * first, on several threads, instead of one by one in the driver's
	 * walk, which takes a write fault for every page not mapped here yet
	 * (vc_fill.h). Pages still to be made (a new allocation, not a
	 * registration the guest filled) are made so; pages that exist (a
	 * segment the guest made and filled, a guest's pin in place) are
	 * mapped by read faults, sixteen a fault: a gigabyte in place in a VM
	 * registered in 43-57 ms after 21-33 ms of this, where the walk alone
	 * took 98-176 ms (docs/PERFORMANCE.md, 2026-11-27). A segment made
	 * ahead has them mapped already (pinseg.c's prefault). */
	if (rq.size >= VC_FILL_PARALLEL_MIN && !vc_cu_pinseg_mapped(x, rq.off, rq.size)) {
		if (pages_made(h, rq.size))
			vc_fill_map(h, rq.size);
		else
			vc_fill_populate(h, rq.size);
	}
	/* Portable (every context of the session) and mapped (a device address),
	 * whatever the guest asked: cheap, and what unified addressing gives. */
	rc = x->drv->cuMemHostRegister_v2(h, rq.size, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
	if (rc) {
		vc_acct_uncharge(VC_ACCT_PINNED, rq.size);
		return rc;
	}
	if ((rc = x->drv->cuMemHostGetDevicePointer_v2(&d, h, 0))) {
		x->drv->cuMemHostUnregister(h);
		vc_acct_uncharge(VC_ACCT_PINNED, rq.size);
		return rc;
	}
	x->pregs[x->npregs++] = (struct vc_cu_preg){.off = rq.off, .size = rq.size};
	rp.devptr = d;
	memcpy(out->rep, &rp, sizeof(rp));
	out->rep_len = sizeof(rp);
	return 0;
}

int vc_cu_manual_vcHostUnregister(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				  struct vc_cu_out *out)
{
	struct vc_cu_req_host_register rq;
	void *h;
	int rc;

	(void)out;
	uint32_t i;

	TAKE(rq);
	for (i = 0; i < x->npregs && x->pregs[i].off != rq.off; i++)
		;
	if (i == x->npregs || !(h = vc_cu_pinned_ptr(x, rq.off, 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	rc = x->drv->cuMemHostUnregister(h);
	if (rc == 0) {
		vc_acct_uncharge(VC_ACCT_PINNED, x->pregs[i].size);
		x->pregs[i] = x->pregs[--x->npregs];
	}
	return rc;
}
