/* SPDX-License-Identifier: MIT */
/*
 * vt_hostile.h - hostile ring contents, shared by the host-local and the
 * in-VM hostile tests (vt_hostile.c).
 */
#ifndef VT_HOSTILE_H
#define VT_HOSTILE_H

#include <stdint.h>

struct vc_ring_guest;

struct vt_hostile_case {
	const char *name;
	/** inject() - write the bad command into @g's ring and publish it; the
	 * session has context @ctx and a device allocation @d of 8 MiB. */
	void (*inject)(struct vc_ring_guest *g, uint64_t ctx, uint64_t d);
	uint32_t want; /* the enum vc_fatal the session must end with */
};

/* Every case, in the order the tests run them. */
extern const struct vt_hostile_case vt_hostile_cases[];
extern const unsigned vt_hostile_ncases;

#endif /* VT_HOSTILE_H */
