/* SPDX-License-Identifier: MIT */
/*
 * managed_table.c - a session's managed ranges (managed_table.h), a small
 * unordered array: a process has few managed allocations.
 */
#include <stdlib.h>

#include "cuda/exec_priv.h"
#include "cuda/managed_table.h"

#define MANAGED_MAX (1u << 20)

struct vc_cu_managed {
	struct vc_cu_mrange *r;
	uint32_t n, cap;
};

struct vc_cu_mrange *vc_cu_managed_find(struct vc_cu_session *x, uint64_t base)
{
	for (uint32_t i = 0; x->managed && i < x->managed->n; i++)
		if (x->managed->r[i].base == base)
			return &x->managed->r[i];
	return NULL;
}

int vc_cu_managed_add(struct vc_cu_session *x, uint64_t base, uint64_t size, bool global)
{
	struct vc_cu_managed *m = x->managed;

	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return CUDA_ERROR_OUT_OF_MEMORY;
		x->managed = m;
	}
	if (m->n == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 16;
		struct vc_cu_mrange *r = cap <= MANAGED_MAX ? realloc(m->r, cap * sizeof(*r)) : NULL;

		if (!r)
			return CUDA_ERROR_OUT_OF_MEMORY;
		m->r = r;
		m->cap = cap;
	}
	m->r[m->n++] = (struct vc_cu_mrange){.base = base, .size = size, .ctx = x->cur_id, .global = global};
	return 0;
}

void vc_cu_managed_drop(struct vc_cu_session *x, struct vc_cu_mrange *r)
{
	*r = x->managed->r[--x->managed->n];
}

int vc_cu_managed_check(struct vc_cu_session *x, uint64_t ptr, uint64_t len)
{
	for (uint32_t i = 0; x->managed && i < x->managed->n; i++) {
		const struct vc_cu_mrange *r = &x->managed->r[i];

		if (ptr >= r->base && len <= r->size && ptr - r->base <= r->size - len)
			return 0;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

void vc_cu_managed_ctx_gone(struct vc_cu_session *x, uint64_t ctx)
{
	for (uint32_t i = 0; x->managed && i < x->managed->n;) {
		if (x->managed->r[i].ctx == ctx)
			vc_cu_managed_drop(x, &x->managed->r[i]); /* the last one moved into i: look again */
		else
			i++;
	}
}

void vc_cu_managed_fini(struct vc_cu_session *x)
{
	if (x->managed)
		free(x->managed->r);
	free(x->managed);
	x->managed = NULL;
}

