/* SPDX-License-Identifier: MIT */
/*
 * vt_hostile.h - hostile ring contents, shared by the host-local and the
 * in-VM hostile tests: the cases that end the session FATAL (vt_hostile.c)
 * and the cases it must survive with the driver's own answers
 * (vt_hostile_live.c).
 */
#ifndef VT_HOSTILE_H
#define VT_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

struct vc_client;
struct vc_ring_guest;

struct vt_hostile_case {
	const char *name;
	/** inject() - write the bad command into @g's ring and publish it; the
	 * session has context @ctx and a device allocation @d of 8 MiB. */
	void (*inject)(struct vc_ring_guest *g, uint64_t ctx, uint64_t d);
	uint32_t want; /* the enum vc_fatal the session must end with */
};

/* Every FATAL case, in the order the tests run them. */
extern const struct vt_hostile_case vt_hostile_cases[];
extern const unsigned vt_hostile_ncases;

/* How a surviving case's session is to be ended by the runner. */
enum vt_live_end {
	VT_END_CLOSE,     /* still serving: a round trip must work, then close */
	VT_END_HELD,      /* its streams are held for ever (by the case): close only */
	VT_END_FATAL,     /* the case ended it FATAL itself (its check says how) */
};

struct vt_live_case {
	const char *name;
	/**
	 * run() - misbehave on session @c (context @ctx, an 8 MiB device
	 * allocation @d) and check that every answer is the exact one.
	 * Returns 0, or -1 with what differed in @why.
	 */
	int (*run)(struct vc_client *c, uint64_t ctx, uint64_t d, char *why, size_t n);
	enum vt_live_end end;
};

/* Every case the session survives (or that ends it through a cap), in order. */
extern const struct vt_live_case vt_live_cases[];
extern const unsigned vt_live_ncases;

#endif /* VT_HOSTILE_H */
