/* SPDX-License-Identifier: MIT */
/*
 * vc_place.c - where the session region and page-locked segments are mapped
 * in the guest process.
 *
 * The worker maps the guest's pinned pool a second time at the guest's own
 * address (host-backend/cuda/pinned.c), so that cudaHostAlloc's pointers are
 * device addresses, as programs that hand them to kernels expect under
 * unified addressing. Where the kernel places a mapping by itself, it is
 * among the libraries near the top of the address space, and there the
 * worker has its own: the NVIDIA driver's libraries and the address ranges
 * the driver reserves for device memory. A Python program with its
 * libraries loaded (cuda-python's tests) got a pool the worker could not
 * map at the same address, and its kernels faulted on host pointers. So the
 * region goes to a zone far below where either process's mappings grow
 * (ZONE, 32 TiB under the 128 TiB top of user space), with MAP_FIXED_NOREPLACE;
 * another process of the program (a fork that opens a session of its own)
 * finds the first place taken and takes the next.
 *
 * Page-locked segments beyond the pool (guest-lib/libcuda/pinseg.c) are
 * mapped by the worker at the guest's address too, and a gigabyte placed by
 * the kernel among the libraries meets the same ranges of the worker's (a
 * first cudaMallocHost of 1 GiB once failed so on the GPU machine, all of
 * its tries landing side by side there). They get a zone of their own,
 * SEG_ZONE to ZONE (32 TiB), taken in order from a cursor that wraps: a
 * freed segment's range is used again only after the rest of the zone.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "vc_place.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define ZONE (0x5fffull << 32) /* about 96 TiB */
#define STEP (1ull << 30)
#define TRIES 16
#define SEG_ZONE (0x3fffull << 32) /* about 64 TiB */
#define SEG_TRIES 64

/* The next place in the segment zone, as an offset from SEG_ZONE (taken
 * with an atomic add: threads of the program reserve at once; nothing but
 * this file reads it). */
static uint64_t g_seg_cursor;

/* @len bytes mapped at @want exactly (MAP_FIXED_NOREPLACE), or MAP_FAILED
 * with errno EEXIST where something lies there, EOPNOTSUPP where a kernel
 * before 4.17 took the flag as a hint (what it mapped elsewhere is undone),
 * or the kernel's error. */
static void *map_exactly(void *want, size_t len, int prot, int flags, int fd, off_t off)
{
	void *m = mmap(want, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);

	if (m == MAP_FAILED || m == want)
		return m;
	munmap(m, len);
	errno = EOPNOTSUPP;
	return MAP_FAILED;
}

void *vc_place_map(size_t len, int prot, int flags, int fd, off_t off)
{
	uint64_t stride = ((uint64_t)len + STEP - 1) & ~(STEP - 1);

	for (unsigned i = 0; i < TRIES && sizeof(void *) == 8; i++) {
		void *m = map_exactly((void *)(uintptr_t)(ZONE + i * stride), len, prot, flags, fd, off);

		if (m != MAP_FAILED)
			return m;
		if (errno != EEXIST)
			break;
	}
	return mmap(NULL, len, prot, flags, fd, off);
}

void *vc_place_reserve(size_t len, size_t align)
{
	const uint64_t span = ZONE - SEG_ZONE;
	uint64_t a = align, need;

	if (sizeof(void *) != 8 || !len || !a || (a & (a - 1)) || a % 4096 || len > span / 4)
		return NULL;
	/* Its length in whole alignments, and one more as a gap. */
	need = (((uint64_t)len + a - 1) & ~(a - 1)) + a;
	for (unsigned i = 0; i < SEG_TRIES; i++) {
		uint64_t at = __atomic_fetch_add(&g_seg_cursor, need, __ATOMIC_RELAXED) % span;
		uint64_t start = (SEG_ZONE + at + a - 1) & ~(a - 1);
		void *m;

		if (start + len > ZONE)
			continue; /* past the zone's end: the cursor wraps on */
		m = map_exactly((void *)(uintptr_t)start, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				-1, 0);
		if (m != MAP_FAILED)
			return m;
		if (errno != EEXIST)
			return NULL;
	}
	return NULL;
}
