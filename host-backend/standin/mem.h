/* SPDX-License-Identifier: MIT */
/*
 * mem.h - "device memory" for the CI stand-ins: host RAM behind
 * synthetic device addresses, with a guard gap after every allocation so that
 * an overrun never lands in a neighbour. Not thread-safe: each user holds its
 * own lock or is single-threaded.
 */
#ifndef VC_STANDIN_MEM_H
#define VC_STANDIN_MEM_H

#include <stddef.h>
#include <stdint.h>

struct vc_smem_alloc {
	uint64_t base;
	uint64_t size;
	uint8_t *mem;
	void *owner; /* e.g. the stand-in context it belongs to */
	int managed; /* managed memory (the driver stand-in's managed.c) */
	int borrowed; /* a mapping of memory owned elsewhere (vc_smem_map): not freed here */
};

struct vc_smem {
	struct vc_smem_alloc *a; /* sorted by base */
	size_t n, cap;
	uint64_t next_va;
	uint64_t in_use, limit;
};

/** vc_smem_init() - an empty set with @limit bytes, addresses from @va_base. */
void vc_smem_init(struct vc_smem *m, uint64_t va_base, uint64_t limit);

/** vc_smem_fini() - free every allocation. */
void vc_smem_fini(struct vc_smem *m);

/**
 * vc_smem_alloc() - @size bytes owned by @owner; its address in *@va.
 * Returns 0, -EINVAL (size 0), -ENOMEM (over the limit or out of memory).
 */
int vc_smem_alloc(struct vc_smem *m, uint64_t size, void *owner, uint64_t *va);

/** vc_smem_free() - free the allocation starting at @va; 0 or -EINVAL. */
int vc_smem_free(struct vc_smem *m, uint64_t va);

/** vc_smem_free_owner() - free every allocation of @owner. */
void vc_smem_free_owner(struct vc_smem *m, void *owner);

/**
 * vc_smem_find() - the allocation holding [@va, @va + @len), or NULL (also for
 * a range that crosses its end).
 */
struct vc_smem_alloc *vc_smem_find(struct vc_smem *m, uint64_t va, uint64_t len);

/**
 * vc_smem_reserve_va() - @size bytes of addresses that no allocation will
 * take, aligned to @align (a power of two, 0: the default); in *@va.
 */
void vc_smem_reserve_va(struct vc_smem *m, uint64_t size, uint64_t align, uint64_t *va);

/**
 * vc_smem_map() - make [@va, @va + @size) an entry whose bytes are at @mem,
 * owned elsewhere (a VMM mapping). Returns 0, -EEXIST (overlap) or -ENOMEM.
 */
int vc_smem_map(struct vc_smem *m, uint64_t va, uint64_t size, uint8_t *mem, void *owner);

/** vc_smem_unmap() - remove the entry vc_smem_map() made at @va; 0 or -EINVAL. */
int vc_smem_unmap(struct vc_smem *m, uint64_t va);

/**
 * vc_smem_ptr() - host address of [@va, @va + @len), or NULL. Entries that
 * follow each other at addresses and in host memory (mappings of one
 * physical run) count as one range.
 */
uint8_t *vc_smem_ptr(struct vc_smem *m, uint64_t va, uint64_t len);

#endif /* VC_STANDIN_MEM_H */
