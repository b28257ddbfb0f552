/* SPDX-License-Identifier: MIT */
/*
 * managed_table.h - a session's managed ranges: its managed allocations
 * (their charge is in the quota table) and the managed globals
 * (__managed__ variables) the guest asked about. Copies and memsets accept a
 * range of it (vc_cu_check_range() asks vc_cu_managed_check() when the
 * driver does not name one of our contexts as the owner). Calls nothing of
 * the other files, so that handles.c may use it.
 */
#ifndef VC_CU_MANAGED_TABLE_H
#define VC_CU_MANAGED_TABLE_H

#include <stdbool.h>
#include <stdint.h>

struct vc_cu_session;

struct vc_cu_mrange {
	uint64_t base, size;
	uint64_t ctx; /* the context id it was made in */
	bool global;  /* a module's __managed__ variables: not ours to free */
};

/** vc_cu_managed_find() - the range starting at @base, or NULL. */
struct vc_cu_mrange *vc_cu_managed_find(struct vc_cu_session *x, uint64_t base);

/**
 * vc_cu_managed_add() - remember range [@base, @base + @size) of the current
 * context; @global: a module's, not freed through us. 0 or CUDA_ERROR_OUT_OF_MEMORY.
 */
int vc_cu_managed_add(struct vc_cu_session *x, uint64_t base, uint64_t size, bool global);

/** vc_cu_managed_drop() - forget range @r (from vc_cu_managed_find()). */
void vc_cu_managed_drop(struct vc_cu_session *x, struct vc_cu_mrange *r);

#endif /* VC_CU_MANAGED_TABLE_H */
