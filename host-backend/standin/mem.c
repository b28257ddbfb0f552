/* SPDX-License-Identifier: MIT */
#include "standin/mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define VA_ALIGN (2ull << 20)
#define MAX_ALLOCS 65536u

void vc_smem_init(struct vc_smem *m, uint64_t va_base, uint64_t limit)
{
	memset(m, 0, sizeof(*m));
	m->next_va = va_base;
	m->limit = limit;
}

void vc_smem_fini(struct vc_smem *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (!m->a[i].borrowed)
			free(m->a[i].mem);
	free(m->a);
	memset(m, 0, sizeof(*m));
}

/* Index of the last allocation with base <= va, or -1. */
static long below(const struct vc_smem *m, uint64_t va)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->a[mid].base <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

struct vc_smem_alloc *vc_smem_find(struct vc_smem *m, uint64_t va, uint64_t len)
{
	long i = below(m, va);
	struct vc_smem_alloc *a;
	uint64_t off;

	if (i < 0)
		return NULL;
	a = &m->a[i];
	off = va - a->base;
	if (off >= a->size)
		return NULL;
	if (len <= a->size && off <= a->size - len)
		return a;
	/* Mappings that continue each other, in addresses and host memory. */
	for (size_t k = (size_t)i + 1, end = a->size; k < m->n; k++) {
		const struct vc_smem_alloc *b = &m->a[k];

		if (!a->borrowed || !b->borrowed || b->base != a->base + end || b->mem != a->mem + end)
			return NULL;
		end += b->size;
		if (len <= end && off <= end - len)
			return a;
	}
	return NULL;
}

uint8_t *vc_smem_ptr(struct vc_smem *m, uint64_t va, uint64_t len)
{
	struct vc_smem_alloc *a = vc_smem_find(m, va, len);

	return a ? a->mem + (va - a->base) : NULL;
}

int vc_smem_alloc(struct vc_smem *m, uint64_t size, void *owner, uint64_t *va)
{
	struct vc_smem_alloc *na;
	uint64_t span;

	if (!size)
		return -EINVAL;
	if (size > m->limit - m->in_use || m->n >= MAX_ALLOCS)
		return -ENOMEM;
	span = (size + VA_ALIGN - 1) & ~(VA_ALIGN - 1);
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;

		na = realloc(m->a, cap * sizeof(*na));
		if (!na)
			return -ENOMEM;
		m->a = na;
		m->cap = cap;
	}
	na = &m->a[m->n];
	na->mem = malloc(size);
	if (!na->mem)
		return -ENOMEM;
	na->base = m->next_va;
	na->size = size;
	na->owner = owner;
	na->managed = 0;
	na->borrowed = 0;
	m->next_va += span + VA_ALIGN; /* the guard gap */
	m->n++;
	m->in_use += size;
	*va = na->base;
	return 0;
}

static void drop(struct vc_smem *m, size_t i)
{
	if (!m->a[i].borrowed) {
		free(m->a[i].mem);
		m->in_use -= m->a[i].size;
	}
	memmove(&m->a[i], &m->a[i + 1], (m->n - i - 1) * sizeof(m->a[0]));
	m->n--;
}

int vc_smem_free(struct vc_smem *m, uint64_t va)
{
	long i = below(m, va);

	if (i < 0 || m->a[i].base != va || m->a[i].borrowed)
		return -EINVAL;
	drop(m, (size_t)i);
	return 0;
}

void vc_smem_reserve_va(struct vc_smem *m, uint64_t size, uint64_t align, uint64_t *va)
{
	uint64_t a = align > VA_ALIGN ? align : VA_ALIGN;

	m->next_va = (m->next_va + a - 1) & ~(a - 1);
	*va = m->next_va;
	m->next_va += ((size + VA_ALIGN - 1) & ~(VA_ALIGN - 1)) + VA_ALIGN; /* and a guard gap */
}

int vc_smem_map(struct vc_smem *m, uint64_t va, uint64_t size, uint8_t *mem, void *owner)
{
	long i = below(m, va);
	size_t k = (size_t)(i + 1);

	if ((i >= 0 && va - m->a[i].base < m->a[i].size) || (k < m->n && m->a[k].base - va < size))
		return -EEXIST;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct vc_smem_alloc *na = realloc(m->a, cap * sizeof(*na));

		if (!na)
			return -ENOMEM;
		m->a = na;
		m->cap = cap;
	}
	memmove(&m->a[k + 1], &m->a[k], (m->n - k) * sizeof(m->a[0]));
	m->a[k] = (struct vc_smem_alloc){.base = va, .size = size, .mem = mem, .owner = owner, .borrowed = 1};
	m->n++;
	return 0;
}

int vc_smem_unmap(struct vc_smem *m, uint64_t va)
{
	long i = below(m, va);

	if (i < 0 || m->a[i].base != va || !m->a[i].borrowed)
		return -EINVAL;
	drop(m, (size_t)i);
	return 0;
}

void vc_smem_free_owner(struct vc_smem *m, void *owner)
{
	for (size_t i = m->n; i-- > 0;)
		if (m->a[i].owner == owner && !m->a[i].borrowed)
			drop(m, i);
}
