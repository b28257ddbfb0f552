/* SPDX-License-Identifier: MIT */
/*
 * vc_place.c - where the session region is mapped in the guest process.
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

void *vc_place_map(size_t len, int prot, int flags, int fd, off_t off)
{
	uint64_t stride = ((uint64_t)len + STEP - 1) & ~(STEP - 1);

	for (unsigned i = 0; i < TRIES && sizeof(void *) == 8; i++) {
		void *want = (void *)(uintptr_t)(ZONE + i * stride);
		void *m = mmap(want, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);

		if (m == want)
			return m;
		if (m != MAP_FAILED)
			munmap(m, len); /* a kernel before 4.17 took the flag as a hint */
		else if (errno != EEXIST)
			break;
	}
	return mmap(NULL, len, prot, flags, fd, off);
}
