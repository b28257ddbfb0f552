/* SPDX-License-Identifier: MIT */
/*
 * hostreg.c - what cuMemHostRegister may do with the program's pages, decided
 * before a byte of them is touched. The range is checked for wrap-around and
 * read against /proc/self/maps: every page must be mapped and readable (the
 * driver pins the pages; an unmapped page, a guard page or a kernel-special
 * mapping fails natively with CUDA_ERROR_INVALID_VALUE), and writable unless
 * CU_MEMHOSTREGISTER_READ_ONLY says the device only reads it (the driver
 * pins for writing otherwise, which read-only memory refuses). Only private
 * anonymous read-write memory (the heap, mmap'd anonymous memory) may move
 * into the pinned pool: the pool's pages replace it at the same address,
 * which for shared, file-backed, read-only or special memory would change
 * what the mapping is (writes no longer reaching a file, a read-only page
 * becoming writable). Those stay where they are, tracked, their copies
 * staged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "vc_cu_guest.h"

#define PAGE 4096ull

/* One line of /proc/self/maps: range, permissions, inode and name. */
struct vma {
	uint64_t start, end;
	char perms[5];
	uint64_t inode;
	char name[64];
};

static int parse(const char *line, struct vma *v)
{
	unsigned long long s, e, ino;
	int pos = 0;

	v->name[0] = 0;
	if (sscanf(line, "%llx-%llx %4s %*s %*s %llu %n", &s, &e, v->perms, &ino, &pos) < 4)
		return -1;
	v->start = s;
	v->end = e;
	v->inode = ino;
	if (pos > 0)
		sscanf(line + pos, "%63s", v->name);
	return 0;
}

static int special(const struct vma *v)
{
	return !strncmp(v->name, "[vvar", 5) || !strcmp(v->name, "[vsyscall]");
}

/* Without /proc: the pages must be mapped (mincore fails on a hole); what
 * they are is unknown, so they stay where they are. */
static CUresult probe(uint64_t lo, uint64_t len, int *movable)
{
	unsigned char vec[64];

	*movable = 0;
	for (uint64_t off = 0; off < len; off += sizeof(vec) * PAGE) {
		uint64_t n = len - off < sizeof(vec) * PAGE ? len - off : sizeof(vec) * PAGE;

		if (mincore((void *)(uintptr_t)(lo + off), n, vec) < 0)
			return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

CUresult vc_cu_host_classify(const void *p, size_t n, unsigned int flags, int *movable)
{
	uint64_t a = (uint64_t)(uintptr_t)p, lo, hi, cur;
	char line[512];
	struct vma v;
	FILE *f;

	*movable = 0;
	if (!p || !n || n > UINT64_MAX - a || a + n > UINT64_MAX - PAGE)
		return CUDA_ERROR_INVALID_VALUE;
	lo = a & ~(PAGE - 1);
	hi = (a + n + PAGE - 1) & ~(PAGE - 1);
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return probe(lo, hi - lo, movable);
	*movable = 1;
	cur = lo;
	while (cur < hi && fgets(line, sizeof(line), f)) {
		if (!strchr(line, '\n')) { /* a longer line: skip its rest */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (parse(line, &v) || v.end <= cur)
			continue;
		if (v.start > cur)
			break; /* a hole */
		if (v.perms[0] != 'r' || special(&v) ||
		    (v.perms[1] != 'w' && !(flags & CU_MEMHOSTREGISTER_READ_ONLY))) {
			fclose(f);
			*movable = 0;
			return CUDA_ERROR_INVALID_VALUE;
		}
		if (v.perms[1] != 'w' || v.perms[3] != 'p' || v.inode || (v.name[0] && strcmp(v.name, "[heap]")))
			*movable = 0;
		cur = v.end;
	}
	fclose(f);
	if (cur < hi) {
		*movable = 0;
		return CUDA_ERROR_INVALID_VALUE; /* unmapped pages */
	}
	return CUDA_SUCCESS;
}
