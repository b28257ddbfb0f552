/* SPDX-License-Identifier: MIT */
/* region.h - a session's shared region (memfd) and its two eventfds. */
#ifndef VC_REGION_H
#define VC_REGION_H

#include <stddef.h>

#include "vc_wire.h"

struct vc_region {
	void *base;
	size_t size;
	int mem_fd;
	int doorbell_fd;
	int complete_fd;
};

/**
 * vc_region_create() - a sealed-size memfd of @layout->region_size bytes,
 * mapped shared and populated, plus the doorbell and completion eventfds.
 * Returns 0 or -errno; on failure nothing is left open.
 */
int vc_region_create(const struct vc_layout *layout, const char *name, struct vc_region *r);

/** vc_region_prefault() - fault in @len bytes at @base (writable shared memory). */
void vc_region_prefault(void *base, size_t len);

/** vc_region_destroy() - unmap and close everything; also after a failed create. */
void vc_region_destroy(struct vc_region *r);

#endif /* VC_REGION_H */
