/* SPDX-License-Identifier: MIT */
/*
 * vmm_range.c - which device ranges a session's VMM mappings and opened IPC
 * memory cover (vmm.h): read by the device-range checks of handles.c and by
 * vmm.c. Calls nothing of the executor's.
 */
#include "cuda/vmm.h"

/* Index of the first mapping with va > @p. */
uint32_t vc_cu_vmm_map_after(const struct vc_cu_vmm *v, uint64_t p)
{
	uint32_t lo = 0, hi = v->nmap;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v->map[mid].va <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The mappings [*@first, *@end) that tile [@p, @p + @len) exactly (each
 * starting where the last ended); with @exact the first must start at @p and
 * the last end at @p + @len. Returns true when they cover it.
 */
bool vc_cu_vmm_covered(const struct vc_cu_vmm *v, uint64_t p, uint64_t len, bool exact, uint32_t *first,
		       uint32_t *end)
{
	uint32_t i = vc_cu_vmm_map_after(v, p);
	uint64_t at;

	if (!len || p + len < p || i == 0)
		return false;
	i--;
	if (p - v->map[i].va >= v->map[i].size || (exact && v->map[i].va != p))
		return false;
	*first = i;
	at = v->map[i].va + v->map[i].size;
	while (at < p + len) {
		if (++i == v->nmap || v->map[i].va != at)
			return false;
		at += v->map[i].size;
	}
	if (exact && at != p + len)
		return false;
	*end = i + 1;
	return true;
}

int vc_cu_vmm_check_range(struct vc_cu_session *x, uint64_t ptr, uint64_t len)
{
	struct vc_cu_vmm *v = x->vmm;
	uint32_t a, b;

	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	if (vc_cu_vmm_covered(v, ptr, len ? len : 1, false, &a, &b))
		return 0;
	for (uint32_t i = 0; i < v->nopened; i++) {
		const struct vc_cu_vrange *r = &v->opened[i];

		if (ptr >= r->va && len <= r->size && ptr - r->va <= r->size - len)
			return 0;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

