/* SPDX-License-Identifier: MIT */
/*
 * guestmem.h - a VM session's view of its guest's RAM and of its slot's
 * guest-pin area (shared/vc_gpin.h): a pin that the guest's kernel
 * published, turned into the pieces of the RAM files that hold its pages, for
 * the executor to map at the guest process's address.
 *
 * Nothing of the guest's is trusted. An entry is copied out of the area once
 * and checked against what the process asked for; its run list is read out
 * of guest RAM a page at a time through the RAM files (pread: a private
 * copy), bounded in pages and runs, and each run must lie in the guest's
 * RAM. A pin is handed out at most once, and never again once let go; the
 * kernel unpins only after this side let go of it. Serving thread only.
 */
#ifndef VC_CORE_GUESTMEM_H
#define VC_CORE_GUESTMEM_H

#include <stdbool.h>
#include <stdint.h>

#include "vcuda/server.h"

struct vc_guestmem;

/**
 * vc_guest_ram_check() - whether @n RAM ranges @ram can describe a guest's
 * RAM: at most VC_VM_MEM_MAX, each with a descriptor, page aligned, not
 * empty, not wrapping (address or file offset), none overlapping another.
 * Returns 0 or -EINVAL.
 */
int vc_guest_ram_check(const struct vc_guest_ram *ram, uint32_t n);

/**
 * vc_guestmem_create() - the view of @n RAM ranges @ram (their descriptors
 * stay the caller's and must outlive the view) and the guest-pin area at
 * @area (VC_GPIN_AREA_SIZE bytes). The ranges are checked
 * (vc_guest_ram_check()).
 * Returns 0, -EINVAL or -ENOMEM.
 */
int vc_guestmem_create(const struct vc_guest_ram *ram, uint32_t n, void *area, struct vc_guestmem **out);

/** vc_guestmem_destroy() - free the view (@g may be NULL). */
void vc_guestmem_destroy(struct vc_guestmem *g);

/**
 * vc_guestmem_take() - pin (@entry, @gen) of the guest's kernel, which must
 * describe [@addr, @addr + @len) pinned for writing: the pieces of RAM files
 * holding it, in order, merged where they continue each other, in *@pieces
 * (malloc'd; the caller frees it) and *@n. The pin is held from then on.
 * Returns 0; -EBUSY (held already), -EINVAL (not such a pin, let go, a list
 * that is not the guest's RAM), -E2BIG (more than VC_GPIN_RUNS_MAX runs),
 * -ENOMEM.
 */
int vc_guestmem_take(struct vc_guestmem *g, uint32_t entry, uint64_t gen, uint64_t addr, uint64_t len,
		     struct vc_guest_piece **pieces, uint32_t *n);

/**
 * vc_guestmem_release() - let pin (@entry, @gen) go, so that the guest's
 * kernel may unpin it: with @held, a pin taken, whose mapping is gone; else
 * a pin that a failed request named, which is let go (and can never be taken
 * after) unless it is held, for then a mapping of it still lives. Returns 0,
 * or -EINVAL (with @held: not held; else: held, or an earlier pin than one
 * already let go).
 */
int vc_guestmem_release(struct vc_guestmem *g, uint32_t entry, uint64_t gen, bool held);

#endif /* VC_CORE_GUESTMEM_H */
