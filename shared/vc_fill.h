/* SPDX-License-Identifier: MIT */
/*
 * vc_fill.h - making the pages of a large shared mapping, and filling them,
 * on several threads.
 *
 * Page-locked memory beyond the pool is a memfd of its own (a segment). Its
 * pages are made (allocated and cleared by the kernel) when first touched,
 * and entered into each process's page tables on first touch there; the
 * driver's registration then walks every page. For a gigabyte, one thread
 * doing all of it was most of what cudaHostRegister and cudaMallocHost cost
 * through vcuda. Both sides split that work over a few threads of their own,
 * in the slices vc_fill_plan() gives: a segment made of one file per slice
 * has its pages made in parallel (on one file the threads queue on the
 * file's own locks: 213 ms for a gigabyte on 8 threads of the H100 machine,
 * 78 ms with 8 files).
 */
#ifndef VC_FILL_H
#define VC_FILL_H

#include <stddef.h>

/** Ranges smaller than this are done on the calling thread alone. */
#define VC_FILL_PARALLEL_MIN (64u << 20)

/** The most slices (and threads) a range is split into. */
#define VC_FILL_SLICES_MAX 16u

/**
 * vc_fill_plan() - how vc_fill_populate() and vc_fill_copy() split @len
 * bytes: slices of the returned size (whole pages) from the start, the last
 * holding the rest; their number in *@n (1 for ranges under
 * VC_FILL_PARALLEL_MIN or a single processor, at most VC_FILL_SLICES_MAX).
 */
size_t vc_fill_plan(size_t len, unsigned *n);

/**
 * vc_fill_populate() - make every page of [@addr, @addr + @len) present and
 * writable in this process (MADV_POPULATE_WRITE, split over threads for
 * large ranges). @addr and @len page-aligned. Returns 0 or -errno (the
 * caller may go on: the pages are then made on first touch).
 */
int vc_fill_populate(void *addr, size_t len);

/**
 * vc_fill_map() - enter the pages of [@addr, @addr + @len), a shared mapping
 * of a file whose pages exist already, into this process's page tables
 * (MADV_POPULATE_READ, split over threads for large ranges): a read fault
 * maps the file's pages around it too (the kernel's fault-around), where a
 * write fault, such as the driver's registration takes on a page not yet
 * mapped, maps one. A shmem mapping gets them writable. Page-aligned.
 * Returns 0 or -errno (the caller may go on).
 */
int vc_fill_map(void *addr, size_t len);

/**
 * vc_fill_copy() - copy @len bytes from @src into the shared mapping @dst,
 * populating it on the way, split over threads for large ranges. Page-
 * aligned, not overlapping. Returns 0 or -errno (nothing copied for sure).
 */
int vc_fill_copy(void *dst, const void *src, size_t len);

#endif /* VC_FILL_H */
