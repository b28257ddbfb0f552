/* SPDX-License-Identifier: MIT */
/*
 * vc_place.h - where the session region is mapped in the guest process.
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

#endif
