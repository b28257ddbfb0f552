/* SPDX-License-Identifier: MIT */
/*
 * arena.c - the staging arena registered with the driver: pageable copies
 * at DMA speed on the host's side; and the region's pages mapped a second
 * time and page-locked, which the fence words' page is too (fence.c).
 *
 * A pageable copy reaches the server as pieces in the staging arena. Handed
 * to the driver as they are, the pieces are pageable memory to it, and the
 * driver stages each through a buffer of its own: a third CPU copy, which
 * halved pageable bandwidth against native (the guest's copy into the arena
 * is the only one a native program pays for). The executor therefore maps
 * the arena a second time, from the region's memfd, and page-locks that
 * mapping (cuMemHostRegister, portable: every context of the session), the
 * first time a context is current for an arena copy. Copies through it are
 * the copy engine's DMA straight from the guest's pieces.
 *
 * The session's own mapping stays unregistered, for the one copy whose
 * native semantics a page-locked source would change: an asynchronous copy
 * from pageable memory is staged before the call returns and does not wait
 * for the stream's earlier work, so it goes to the driver from that mapping
 * (memory.c). Where no memfd can be mapped again (a test's region), or the
 * driver refuses, every copy takes the session's mapping, as before.
 *
 * The registration belongs to the context that was current when it was made;
 * if the guest destroys that context, the mapping becomes pageable memory to
 * the driver again: copies stay correct, staged by the driver.
 */
#include <sys/mman.h>

#include "cuda/exec_priv.h"

void *vc_cu_map_locked(struct vc_cu_session *x, int fd, uint64_t fd_off, uint64_t size, unsigned flags)
{
	void *m;

	if (fd < 0 || !size)
		return NULL;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)fd_off);
	if (m == MAP_FAILED)
		return NULL;
	if (x->drv->cuMemHostRegister_v2(m, size, flags)) {
		munmap(m, size);
		return NULL;
	}
	return m;
}

void vc_cu_unmap_locked(struct vc_cu_session *x, void *m, uint64_t size)
{
	/* Harmless where the registering context is gone: the registration
	 * went with it. */
	x->drv->cuMemHostUnregister(m);
	munmap(m, size);
}

void *vc_cu_arena_dma(struct vc_cu_session *x, uint64_t off, uint64_t len)
{
	const uint64_t size = x->svc->arena_file.size;

	if (!x->arena_dma && !x->arena_tried) {
		x->arena_tried = true;
		x->arena_dma = vc_cu_map_locked(x, x->svc->arena_file.fd, x->svc->arena_file.fd_off, size,
						CU_MEMHOSTREGISTER_PORTABLE);
	}
	if (!x->arena_dma || !(len <= size && off <= size - len))
		return NULL;
	return x->arena_dma + off;
}

void vc_cu_arena_fini(struct vc_cu_session *x)
{
	if (!x->arena_dma)
		return;
	vc_cu_unmap_locked(x, x->arena_dma, x->svc->arena_file.size);
	x->arena_dma = NULL;
}
