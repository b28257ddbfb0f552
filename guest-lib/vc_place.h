/* SPDX-License-Identifier: MIT */
/*
 * vc_place.h - where the session region and page-locked segments are mapped
 * in the guest process.
 */
#ifndef VC_PLACE_H
#define VC_PLACE_H

#include <stddef.h>
#include <sys/types.h>

/**
 * vc_place_map() - mmap(@len, @prot, @flags, @fd, @off) at an address the
 * host's worker is likely to have free too, so that it can map the pinned
 * pool at the same address (a pinned pointer is then its own device
 * address, as under unified addressing natively); anywhere the kernel
 * chooses when no such address is free. Returns the mapping or MAP_FAILED
 * with errno set.
 */
void *vc_place_map(size_t len, int prot, int flags, int fd, off_t off);

/**
 * vc_place_reserve() - an inaccessible reservation of @len bytes (PROT_NONE,
 * private, anonymous) at an address aligned to @align (a power of two, at
 * least a page) in a zone of its own, below the session region's, where
 * the host's worker is likely to have the range free too: each call takes
 * the zone's next place, past the last one given. For page-locked segments,
 * whose files the caller maps over it (MAP_FIXED). NULL when no place in
 * the zone is free (or on a 32-bit build): the caller maps where the kernel
 * chooses.
 */
void *vc_place_reserve(size_t len, size_t align);

#endif
