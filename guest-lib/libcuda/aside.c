/* SPDX-License-Identifier: MIT */
/*
 * aside.c - a program's pages set aside while shared pages take their place
 * (cuMemHostRegister moving a range into pinned memory: memory.c).
 *
 * Mapping the shared pages over the range frees the program's old pages
 * inline: for a gigabyte of 4 KiB pages, 30 to 66 ms on the H100 machine,
 * most of what the move cost once the copy was parallel. Instead the old
 * pages move aside first (mremap with MREMAP_DONTUNMAP moves the page
 * tables, 0.2 ms, and leaves the range mapped and empty, so that no other
 * mapping can take it meanwhile), and a thread of ours frees them while the
 * program goes on. Where the kernel cannot (before Linux 5.7, or a range of
 * several mappings) nothing moves and the old way stands; ranges under
 * ASIDE_MIN are freed inline, where a thread would cost more than it saves.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "vc_cu_guest.h"
#include "vc_thread.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#define PMD (2ull << 20) /* page tables move whole where both ends agree mod 2 MiB */
#define ASIDE_MIN (4ull << 20)

void *vc_cu_aside_take(void *addr, uint64_t len)
{
	uint8_t *r, *to;

	if (len < ASIDE_MIN)
		return NULL;
	r = mmap(NULL, len + PMD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	to = r + (((uintptr_t)addr - (uintptr_t)r) & (PMD - 1));
	if (mremap(addr, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, to) == MAP_FAILED) {
		munmap(r, len + PMD);
		return NULL;
	}
	if (to > r)
		munmap(r, (size_t)(to - r));
	if (r + len + PMD > to + len)
		munmap(to + len, (size_t)(r + len + PMD - (to + len)));
	return to;
}

int vc_cu_aside_restore(void *aside, void *addr, uint64_t len)
{
	return mremap(aside, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, addr) == MAP_FAILED ? -errno : 0;
}

struct drop {
	void *p;
	uint64_t len;
};

static void *dropper(void *arg)
{
	struct drop d = *(struct drop *)arg;

	free(arg);
	munmap(d.p, d.len);
	return NULL;
}

void vc_cu_aside_drop(void *aside, uint64_t len)
{
	struct drop *d = len >= ASIDE_MIN ? malloc(sizeof(*d)) : NULL;
	int started = 0;

	if (d) {
		*d = (struct drop){aside, len};
		started = !vc_thread_start(NULL, true, dropper, d);
	}
	if (!started) {
		free(d);
		munmap(aside, len);
	}
}
