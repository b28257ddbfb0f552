/* SPDX-License-Identifier: MIT */
/*
 * managed.c - the CI stand-in's managed memory: "device" memory (host RAM at
 * synthetic addresses, mem.h) marked managed, with the advice and prefetches
 * the program gave it stored per allocation, so that range attributes answer
 * what was set. Nothing migrates: the stand-in has one memory. A global a
 * library is asked for as managed (cuLibraryGetManaged) is marked managed
 * too, since the stand-in does not parse images.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"

#define MANAGED_MAX 65536u

struct smanaged {
	uint64_t base, size;
	int read_mostly;
	CUmemLocation pref;     /* CU_MEM_LOCATION_TYPE_INVALID: none */
	unsigned accessed_by;   /* bit 0: device 0, bit 1: the CPU */
	CUmemLocation prefetch; /* the last prefetch's target; INVALID: none */
};

static struct smanaged *g_m; /* under g_mu */
static size_t g_n, g_cap;

/* With g_mu held: the record of the live managed allocation holding
 * [@p, @p + @n), or NULL. A record whose memory was freed is dropped. */
static struct smanaged *lookup(uint64_t p, uint64_t n)
{
	for (size_t i = 0; i < g_n; i++) {
		struct smanaged *m = &g_m[i];
		struct vc_smem_alloc *a = vc_smem_find(&g_mem, m->base, 1);

		if (!a || a->base != m->base) { /* freed (addresses are never reused) */
			*m = g_m[--g_n];
			i--;
			continue;
		}
		if (p >= m->base && n <= m->size && p - m->base <= m->size - n)
			return m;
	}
	return NULL;
}

/* With g_mu held: mark [@base, @base + @size) managed. */
static CUresult mark(uint64_t base, uint64_t size)
{
	struct vc_smem_alloc *a = vc_smem_find(&g_mem, base, 1);

	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (lookup(base, 1))
		return CUDA_SUCCESS;
	if (g_n == g_cap) {
		size_t cap = g_cap ? g_cap * 2 : 16;
		struct smanaged *n = cap <= MANAGED_MAX ? realloc(g_m, cap * sizeof(*n)) : NULL;

		if (!n)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g_m = n;
		g_cap = cap;
	}
	g_m[g_n++] = (struct smanaged){.base = base, .size = size,
				       .pref = {.type = CU_MEM_LOCATION_TYPE_INVALID},
				       .prefetch = {.type = CU_MEM_LOCATION_TYPE_INVALID}};
	a->managed = 1; /* for pointer attributes (memory.c) */
	return CUDA_SUCCESS;
}

static CUresult s_alloc_managed(CUdeviceptr *d, size_t n, unsigned flags)
{
	CUresult rc;

	if (!d || !n || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_si_alloc(d, n)))
		return rc;
	pthread_mutex_lock(&g_mu);
	rc = mark(*d, n);
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* Managed variables of libraries: they belong to no context (as a library's
 * do natively), so they live in no context's memory; at most LIB_MANAGED_MAX
 * of them in a process. Each is its own allocation of MVAR_BYTES: the driver
 * makes a range of the variable's own size (4 bytes for a .u32), which need
 * not be whole pages or granules, and a client must not copy past it; the
 * stand-in, which does not know the declared size, makes it 4 bytes short
 * of a 64 KiB granule (room for any variable the tests declare). */
#define LIB_MANAGED_MAX 1024u
#define MVAR_BYTES ((64u << 10) - 4u)
static struct {
	const void *lib;
	char name[128];
	CUdeviceptr d;
} g_lib[LIB_MANAGED_MAX]; /* under g_mu */
static unsigned g_nlib;

static CUresult lib_managed(CUdeviceptr *d, CUlibrary l, const char *name)
{
	CUresult rc = CUDA_SUCCESS;
	uint64_t va;
	unsigned i;

	if (!vc_si_is(l, T_LIB))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!name || strlen(name) >= sizeof(g_lib[0].name))
		return CUDA_ERROR_NOT_FOUND;
	pthread_mutex_lock(&g_mu);
	for (i = 0; i < g_nlib && !(g_lib[i].lib == l && !strcmp(g_lib[i].name, name) &&
				     vc_smem_find(&g_mem, g_lib[i].d, 1)); i++)
		;
	if (i == g_nlib) {
		if (g_nlib == LIB_MANAGED_MAX || vc_smem_alloc(&g_mem, MVAR_BYTES, NULL, &va))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		else {
			g_lib[i].lib = l;
			snprintf(g_lib[i].name, sizeof(g_lib[i].name), "%s", name);
			g_lib[i].d = va;
			memset(vc_smem_ptr(&g_mem, va, MVAR_BYTES), 0, MVAR_BYTES);
			g_nlib++;
		}
	}
	if (rc == CUDA_SUCCESS)
		*d = g_lib[i].d;
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult s_lib_managed(CUdeviceptr *d, size_t *n, CUlibrary l, const char *name)
{
	CUdeviceptr g = 0;
	size_t size = MVAR_BYTES;
	CUresult rc = lib_managed(&g, l, name);

	if (rc)
		return rc;
	pthread_mutex_lock(&g_mu);
	rc = mark(g, size);
	pthread_mutex_unlock(&g_mu);
	if (d)
		*d = g;
	if (n)
		*n = size;
	return rc;
}

/* A location the stand-in has: its one device, or the host. */
static int loc_ok(CUmemLocation l)
{
	return (l.type == CU_MEM_LOCATION_TYPE_DEVICE && l.id == 0) || l.type == CU_MEM_LOCATION_TYPE_HOST ||
	       l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT || (l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA && l.id == 0);
}

static CUmemLocation from_device(CUdevice dev)
{
	return dev == CU_DEVICE_CPU ? (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_HOST}
				    : (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev};
}

static CUresult prefetch(CUdeviceptr p, size_t n, CUmemLocation l, unsigned flags, CUstream s)
{
	struct smanaged *m;

	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (flags || !n)
		return CUDA_ERROR_INVALID_VALUE;
	if (!loc_ok(l))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&g_mu);
	m = lookup(p, n);
	if (m)
		m->prefetch = l.type == CU_MEM_LOCATION_TYPE_DEVICE ? l : (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_HOST};
	pthread_mutex_unlock(&g_mu);
	return m ? vc_si_need_ctx() : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_prefetch_v2(CUdeviceptr p, size_t n, CUmemLocation l, unsigned flags, CUstream s)
{
	return prefetch(p, n, l, flags, s);
}

static CUresult s_prefetch(CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
	return prefetch(p, n, from_device(dev), 0, s);
}

static CUresult advise(CUdeviceptr p, size_t n, CUmem_advise a, CUmemLocation l)
{
	struct smanaged *m;
	unsigned bit = l.type == CU_MEM_LOCATION_TYPE_DEVICE ? 1u : 2u;

	if (a < CU_MEM_ADVISE_SET_READ_MOSTLY || a > CU_MEM_ADVISE_UNSET_ACCESSED_BY || !n)
		return CUDA_ERROR_INVALID_VALUE;
	if (a != CU_MEM_ADVISE_SET_READ_MOSTLY && a != CU_MEM_ADVISE_UNSET_READ_MOSTLY && !loc_ok(l))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&g_mu);
	m = lookup(p, n);
	if (m) {
		switch (a) {
		case CU_MEM_ADVISE_SET_READ_MOSTLY:
		case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
			m->read_mostly = a == CU_MEM_ADVISE_SET_READ_MOSTLY;
			break;
		case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
			m->pref = l.type == CU_MEM_LOCATION_TYPE_DEVICE ? l : (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_HOST};
			break;
		case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
			m->pref.type = CU_MEM_LOCATION_TYPE_INVALID;
			break;
		case CU_MEM_ADVISE_SET_ACCESSED_BY:
			m->accessed_by |= bit;
			break;
		default:
			m->accessed_by &= ~bit;
		}
	}
	pthread_mutex_unlock(&g_mu);
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_advise_v2(CUdeviceptr p, size_t n, CUmem_advise a, CUmemLocation l)
{
	return advise(p, n, a, l);
}

static CUresult s_advise(CUdeviceptr p, size_t n, CUmem_advise a, CUdevice dev)
{
	return advise(p, n, a, from_device(dev));
}

/* A location as the legacy attributes give it: a device, CU_DEVICE_CPU or CU_DEVICE_INVALID. */
static int legacy(CUmemLocation l)
{
	return l.type == CU_MEM_LOCATION_TYPE_DEVICE ? l.id
	       : l.type == CU_MEM_LOCATION_TYPE_INVALID ? CU_DEVICE_INVALID : CU_DEVICE_CPU;
}

/* With g_mu held: one attribute of @m into @data (@size bytes). */
static CUresult answer(const struct smanaged *m, CUmem_range_attribute a, void *data, size_t size)
{
	int v;

	if (a == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
		int *out = data;
		size_t k = 0;

		if (!size || size % 4)
			return CUDA_ERROR_INVALID_VALUE;
		for (size_t i = 0; i < size / 4; i++)
			out[i] = CU_DEVICE_INVALID;
		if ((m->accessed_by & 1) && k < size / 4)
			out[k++] = 0;
		if ((m->accessed_by & 2) && k < size / 4)
			out[k++] = CU_DEVICE_CPU;
		return CUDA_SUCCESS;
	}
	if (size != 4)
		return CUDA_ERROR_INVALID_VALUE;
	switch (a) {
	case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
		v = m->read_mostly;
		break;
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
		v = legacy(m->pref);
		break;
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
		v = legacy(m->prefetch);
		break;
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
		v = (int)m->pref.type;
		break;
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
		v = m->pref.id;
		break;
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
		v = (int)m->prefetch.type;
		break;
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
		v = m->prefetch.id;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	memcpy(data, &v, sizeof(v));
	return CUDA_SUCCESS;
}

static CUresult s_range_attrs(void **data, size_t *sizes, CUmem_range_attribute *a, size_t n, CUdeviceptr p,
			      size_t count)
{
	const struct smanaged *m;
	CUresult rc = CUDA_SUCCESS;

	if (!data || !sizes || !a || !n || !count)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	m = lookup(p, count);
	for (size_t i = 0; m && i < n && rc == CUDA_SUCCESS; i++)
		rc = data[i] ? answer(m, a[i], data[i], sizes[i]) : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&g_mu);
	return m ? rc : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_attach(CUstream s, CUdeviceptr p, size_t n, unsigned flags)
{
	int ok;

	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST && flags != CU_MEM_ATTACH_SINGLE)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	ok = lookup(p, n ? n : 1) != NULL;
	pthread_mutex_unlock(&g_mu);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Batches: each range managed; the stream not the legacy NULL stream. */
static CUresult batch(CUdeviceptr *p, size_t *sizes, size_t count, CUmemLocation *locs, size_t *idx, size_t nlocs,
		      unsigned long long flags, CUstream s, int discard_only)
{
	CUresult rc = CUDA_SUCCESS;

	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!s || s == CU_STREAM_LEGACY || flags || !p || !sizes || !count ||
	    (!discard_only && (!locs || !idx || !nlocs || nlocs > count || idx[0] != 0)))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t k = 1; !discard_only && k < nlocs; k++)
		if (idx[k] <= idx[k - 1] || idx[k] >= count)
			return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	for (size_t i = 0, k = 0; i < count && rc == CUDA_SUCCESS; i++) {
		struct smanaged *m = lookup(p[i], sizes[i] ? sizes[i] : 1);

		while (!discard_only && k + 1 < nlocs && idx[k + 1] <= i)
			k++;
		if (!m)
			rc = CUDA_ERROR_INVALID_VALUE;
		else if (!discard_only && !loc_ok(locs[k]))
			rc = CUDA_ERROR_INVALID_DEVICE;
		else if (!discard_only)
			m->prefetch = locs[k].type == CU_MEM_LOCATION_TYPE_DEVICE ? locs[k]
				    : (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_HOST};
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult s_prefetch_batch(CUdeviceptr *p, size_t *sizes, size_t count, CUmemLocation *locs, size_t *idx,
				 size_t nlocs, unsigned long long flags, CUstream s)
{
	return batch(p, sizes, count, locs, idx, nlocs, flags, s, 0);
}

static CUresult s_discard_batch(CUdeviceptr *p, size_t *sizes, size_t count, unsigned long long flags, CUstream s)
{
	return batch(p, sizes, count, NULL, NULL, 0, flags, s, 1);
}

static CUresult s_discard_prefetch_batch(CUdeviceptr *p, size_t *sizes, size_t count, CUmemLocation *locs,
					 size_t *idx, size_t nlocs, unsigned long long flags, CUstream s)
{
	return batch(p, sizes, count, locs, idx, nlocs, flags, s, 0);
}

void vc_si_fill_managed(struct vc_cuda_driver *d)
{
	d->cuMemAllocManaged = s_alloc_managed;
	d->cuLibraryGetManaged = s_lib_managed;
	d->cuMemPrefetchAsync = s_prefetch;
	d->cuMemPrefetchAsync_v2 = s_prefetch_v2;
	d->cuMemAdvise = s_advise;
	d->cuMemAdvise_v2 = s_advise_v2;
	d->cuMemRangeGetAttributes = s_range_attrs;
	d->cuStreamAttachMemAsync = s_attach;
	d->cuMemPrefetchBatchAsync = s_prefetch_batch;
	d->cuMemDiscardBatchAsync = s_discard_batch;
	d->cuMemDiscardAndPrefetchBatchAsync = s_discard_prefetch_batch;
}
