/* SPDX-License-Identifier: MIT */
/*
 * vmm.h - the guest's record of device ranges that are not allocations:
 * VMM mappings (vmm.c) and memory opened through IPC or imported from a
 * pool (ipc.c). memory.c asks it where its own map of allocations has no
 * answer, so that copies and pointer attributes treat them as device memory.
 */
#ifndef VC_CU_VMM_GUEST_H
#define VC_CU_VMM_GUEST_H

#include <stdint.h>

/**
 * vc_cu_vmm_find() - whether [@p, @p + @n) lies in contiguous device ranges
 * of this record; the range holding @p in *@base and *@size, and the
 * ordinal of the device whose memory it is in *@dev (-1: not known).
 */
int vc_cu_vmm_find(uint64_t p, uint64_t n, uint64_t *base, uint64_t *size, int *dev);

/**
 * vc_cu_vmm_track() - record device range [@va, @va + @size), memory of
 * device @dev (-1: not known). 0 or -1 (no memory).
 */
int vc_cu_vmm_track(uint64_t va, uint64_t size, int dev);

/** vc_cu_vmm_untrack() - forget the ranges that start in [@va, @va + @size). */
void vc_cu_vmm_untrack(uint64_t va, uint64_t size);

#endif /* VC_CU_VMM_GUEST_H */
