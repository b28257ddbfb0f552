/* SPDX-License-Identifier: MIT */
/*
 * vc_layout.h - carving the shared region into control page, ring, reply slots
 * and staging arena, and checking a layout received from the other side.
 */
#ifndef VC_LAYOUT_H
#define VC_LAYOUT_H

#include "vc_wire.h"

/* What a server asks for; zero fields take the defaults below. */
struct vc_layout_req {
	uint32_t ring_size;
	uint32_t slot_count;
	uint32_t slot_size;
	uint32_t chunk_size;
	uint64_t arena_size;
	uint64_t pinned_size; /* 0: no pinned pool (a default is not implied) */
};

#define VC_DEFAULT_RING_SIZE (1u << 20)
#define VC_DEFAULT_SLOT_COUNT 64u
#define VC_DEFAULT_SLOT_SIZE (8u << 10)
#define VC_DEFAULT_CHUNK_SIZE (512u << 10)
#define VC_DEFAULT_ARENA_SIZE (64ull << 20)

/**
 * vc_layout_compute() - fill @out from @req (defaults for zero fields).
 *
 * Returns 0, or -EINVAL when a size is out of range (ring not a power of two,
 * arena not a multiple of the chunk, ...).
 */
int vc_layout_compute(const struct vc_layout_req *req, struct vc_layout *out);

/**
 * vc_layout_fit() - a layout for a region of at most @max_size bytes (a VM's
 * session slot): @req's ring and reply slots, its arena (when that does not
 * fit, half of the room left, in whole chunks, no fewer than
 * VC_LAYOUT_MIN_CHUNKS), and a pinned pool filling what is left (whole 2 MiB
 * units). @max_size must be a multiple of 4 KiB.
 *
 * Returns 0, -EINVAL for a bad @req, or -ENOSPC when @max_size is too small.
 */
int vc_layout_fit(const struct vc_layout_req *req, uint64_t max_size, struct vc_layout *out);

#define VC_LAYOUT_MIN_CHUNKS 4u

/**
 * vc_layout_check() - validate a layout received from the other side: every
 * part inside region_size, no overlaps, sizes within the ABI's limits.
 *
 * Returns 0 or -EINVAL.
 */
int vc_layout_check(const struct vc_layout *l);

#endif /* VC_LAYOUT_H */
