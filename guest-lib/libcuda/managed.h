/* SPDX-License-Identifier: MIT */
/*
 * managed.h - managed memory in the guest, between its two files: the
 * driver calls (managed.c) and the coherence of the guest's pages
 * (managed_fault.c). The hooks the rest of the library calls are in
 * vc_cu_guest.h.
 */
#ifndef VC_CU_MANAGED_H
#define VC_CU_MANAGED_H

#include <stdint.h>

#include "vc_cuda_manual.h"

/* What the guest knows of one managed range. */
struct vc_mgd_info {
	uint64_t base, size; /* size: the bytes asked for (an allocation) or the global's */
	uint64_t ctx;        /* the context it belongs to (fetches and write-backs run in it) */
	int owned;           /* from cuMemAllocManaged (cuMemFree frees it), not a module's */
};

/**
 * vc_mgd_map() - map the managed range [@base, @base + @size) at the same
 * address in this process, with no access yet (its pages come from the
 * device on the first touch). Returns 0, -EEXIST when the address range is
 * taken here, or -errno.
 */
int vc_mgd_map(uint64_t base, uint64_t size, uint64_t ctx, int owned);

/**
 * vc_mgd_map_pieces() - vc_mgd_map() of a module's __managed__ variables:
 * only the @npc pieces @pc (inside the range, by address) are device memory
 * that copies may name; the gaps between them stay zero.
 */
int vc_mgd_map_pieces(uint64_t base, uint64_t size, uint64_t ctx, int owned, const struct vc_cu_managed_piece *pc,
		      uint32_t npc);

/**
 * vc_mgd_unmap() - unmap the range starting at @base (freed on the host:
 * what the CPU held of it is dropped). Returns 0 or -ENOENT.
 */
int vc_mgd_unmap(uint64_t base);

/** vc_mgd_find() - the managed range holding [@p, @p + @n) into *@out: 0, or -ENOENT. */
int vc_mgd_find(uint64_t p, uint64_t n, struct vc_mgd_info *out);

/** vc_mgd_ctx_gone() - unmap every range of context @ctx (destroyed with its memory). */
void vc_mgd_ctx_gone(uint64_t ctx);

#endif /* VC_CU_MANAGED_H */
