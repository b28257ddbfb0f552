/* SPDX-License-Identifier: MIT */
/*
 * managed.c - managed memory's driver calls in the guest: cuMemAllocManaged
 * (the host driver's managed memory, mapped at the same address here:
 * managed_fault.c keeps the pages coherent), its free, __managed__
 * variables (a module global the host says is managed is mapped the same
 * way), range attributes, batched prefetches and discards, and the device
 * attributes that say what the CPU may do with managed memory here.
 * Prefetches, advice and stream attachment are generated calls: the host
 * driver's own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "managed.h"
#include "vc_cu_guest.h"

#define PAGE 4096ull
#define TRIES 8 /* allocations the host makes at most until one can be mapped here */

/* ---- device attributes ------------------------------------------------------ */

void vc_cu_managed_attrs(int32_t *attrs, int count)
{
	/* The CPU may touch managed memory only while the device is idle (its
	 * pages are the guest's copies, written back before work is
	 * submitted), and the device cannot reach the guest's pageable memory. */
	static const CUdevice_attribute off[] = {
		CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
		CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
		CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
		CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST,
		CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED,
	};

	for (unsigned i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		if ((int)off[i] < count)
			attrs[off[i]] = 0;
}

/* ---- allocation -------------------------------------------------------------- */

static void host_free(uint64_t d)
{
	struct vc_cu_req_managed_ptr rq = {.dptr = d};
	struct vc_cu_prefix none;

	vc_cu_call(VC_CU_vcManagedFree, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

/*
 * The host allocates; if the guest cannot map the same address range (taken
 * here by something else), the host allocates again, holding the misses so
 * that it cannot hand them back, and frees them once one range fits.
 */
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	struct vc_cu_req_managed_alloc rq = {.flags = flags};
	struct vc_cu_rep_managed_alloc rp;
	uint64_t miss[TRIES];
	int nmiss = 0, m;
	CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;

	if (!dptr || !bytesize || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (bytesize > UINT64_MAX - PAGE)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* Whole pages, so that no other allocation shares a page of it. */
	rq.size = (bytesize + PAGE - 1) & ~(PAGE - 1);
	for (int t = 0; t < TRIES; t++) {
		rc = vc_cu_call(VC_CU_vcManagedAlloc, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
		if (rc != CUDA_SUCCESS)
			break;
		m = vc_mgd_map(rp.dptr, bytesize, vc_cu_current(), 1);
		if (m == 0) {
			if (vc_cu_mem_track_managed(rp.dptr, bytesize)) {
				vc_mgd_unmap(rp.dptr);
				miss[nmiss++] = rp.dptr;
				rc = CUDA_ERROR_OUT_OF_MEMORY;
				break;
			}
			*dptr = rp.dptr;
			break;
		}
		miss[nmiss++] = rp.dptr;
		rc = CUDA_ERROR_OUT_OF_MEMORY;
		if (m != -EEXIST && m != -EINVAL)
			break; /* out of memory here: another try would not fit either */
	}
	for (int i = 0; i < nmiss; i++)
		host_free(miss[i]);
	return rc;
}

int vc_cu_managed_free(uint64_t dptr, CUresult *rc)
{
	struct vc_cu_req_managed_ptr rq = {.dptr = dptr};
	struct vc_cu_prefix none;
	struct vc_mgd_info i;

	if (vc_mgd_find(dptr, 1, &i) || i.base != dptr || !i.owned)
		return 0;
	/* What the CPU held of it is dropped, not written back. */
	*rc = vc_cu_call(VC_CU_vcManagedFree, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
	if (*rc == CUDA_SUCCESS)
		vc_mgd_unmap(dptr);
	return 1;
}

void vc_cu_managed_ctx_gone(uint64_t ctx)
{
	if (vc_cu_managed_any())
		vc_mgd_ctx_gone(ctx);
}

/* ---- __managed__ variables ------------------------------------------------------ */

/* Module globals known not to be managed, so that a global is asked about
 * once (direct-mapped; a collision only costs a question). */
#define KNOWN 256u
static uint64_t g_plain[KNOWN];

static unsigned slot_of(uint64_t p)
{
	return (unsigned)((p * 0x9e3779b97f4a7c15ull) >> 56) & (KNOWN - 1);
}

/*
 * After a module global was looked up (cuModuleGetGlobal, cuLibraryGetGlobal,
 * cuLibraryGetManaged): a __managed__ variable lives in managed memory that
 * the host driver made when it loaded the module; map it here like an
 * allocation, so that the runtime's pointer to it is usable on the CPU.
 */
CUresult vc_cu_managed_global(CUdeviceptr *dptr, size_t *bytes)
{
	struct vc_cu_req_managed_ptr rq;
	struct vc_cu_rep_managed_query rp = {0};
	struct vc_cu_managed_piece *pc;
	uint64_t base, size;
	size_t got = 0;
	CUresult rc;
	unsigned k;
	int m;

	(void)bytes;
	if (!dptr || !*dptr || vc_cu_managed_has(*dptr, 1))
		return CUDA_SUCCESS;
	k = slot_of(*dptr);
	if (__atomic_load_n(&g_plain[k], __ATOMIC_RELAXED) == *dptr)
		return CUDA_SUCCESS;
	pc = calloc(VC_CU_MANAGED_PIECES_MAX, sizeof(*pc));
	if (!pc)
		return CUDA_SUCCESS; /* the lookup itself succeeded; the CPU view is a bonus */
	rq.dptr = *dptr;
	rc = vc_cu_call_sized(VC_CU_vcManagedQuery, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), pc,
			      VC_CU_MANAGED_PIECES_MAX * sizeof(*pc), &got, 0);
	if (vc_cu_debug())
		fprintf(stderr, "vcuda: global %#llx: managed query %d: managed %u, %#llx + %llu in %u pieces\n",
			(unsigned long long)*dptr, (int)rc, (unsigned)rp.managed, (unsigned long long)rp.base,
			(unsigned long long)rp.size, (unsigned)rp.npieces);
	if (rc != CUDA_SUCCESS || rp.npieces > VC_CU_MANAGED_PIECES_MAX || got < rp.npieces * sizeof(*pc))
		goto out;
	if (!rp.managed) {
		__atomic_store_n(&g_plain[k], *dptr, __ATOMIC_RELAXED);
		goto out;
	}
	/* whole pages from the one before the first variable */
	base = rp.base & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
	size = rp.size + (rp.base - base);
	m = rp.npieces ? vc_mgd_map_pieces(base, size, vc_cu_current(), 0, pc, rp.npieces)
		       : vc_mgd_map(base, size, vc_cu_current(), 0);
	if (m == 0) {
		/* each variable its own range, as the driver's pointer attributes say */
		for (uint32_t i = 0; i < rp.npieces; i++)
			vc_cu_mem_track_managed(pc[i].base, pc[i].size);
		if (!rp.npieces)
			vc_cu_mem_track_managed(rp.base, rp.size);
	} else if (m != -EEXIST || !vc_cu_managed_has(rp.base, rp.size))
		/* Taken here: the device can use it, the CPU cannot (it would fault). */
		fprintf(stderr, "vcuda: managed variables at %#llx cannot be mapped in this process (%s)\n",
			(unsigned long long)rp.base, strerror(-m));
out:
	free(pc);
	return CUDA_SUCCESS;
}

/* ---- range attributes ------------------------------------------------------------- */

CUresult CUDAAPI cuMemRangeGetAttributes(void **data, size_t *dataSizes, CUmem_range_attribute *attributes,
					  size_t numAttributes, CUdeviceptr devPtr, size_t count)
{
	struct vc_cu_prefix none;
	uint8_t *buf;
	CUresult rc = CUDA_SUCCESS;

	if (!data || !dataSizes || !attributes || !numAttributes || !count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	buf = malloc(VC_CU_RANGE_DATA_MAX);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* One attribute per question: these are rare, and an answer as large as
	 * an ACCESSED_BY list the caller may size as it likes is capped. */
	for (size_t i = 0; i < numAttributes && rc == CUDA_SUCCESS; i++) {
		struct vc_cu_req_range_attrs rq = {.dptr = devPtr, .count = count, .n = 1};
		size_t ask = dataSizes[i], got = 0;

		if (!data[i] || !ask) {
			rc = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		if (ask > VC_CU_RANGE_DATA_MAX)
			ask = attributes[i] == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY ? VC_CU_RANGE_DATA_MAX : 0;
		if (!ask) {
			rc = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		rq.attr[0] = (int32_t)attributes[i];
		rq.size[0] = ask;
		rc = vc_cu_call_sized(VC_CU_vcMemRangeAttrs, &rq, sizeof(rq), NULL, 0, &none, 0, buf, ask, &got, 0);
		if (rc == CUDA_SUCCESS && got != ask)
			rc = CUDA_ERROR_UNKNOWN;
		if (rc == CUDA_SUCCESS) {
			memcpy(data[i], buf, ask);
			/* Devices past what fits: none (CU_DEVICE_INVALID), as natively. */
			for (size_t k = ask / 4; k < dataSizes[i] / 4; k++)
				((int *)data[i])[k] = CU_DEVICE_INVALID;
		}
	}
	free(buf);
	return rc;
}

CUresult CUDAAPI cuMemRangeGetAttribute(void *data, size_t dataSize, CUmem_range_attribute attribute,
					 CUdeviceptr devPtr, size_t count)
{
	return cuMemRangeGetAttributes(&data, &dataSize, &attribute, 1, devPtr, count);
}

/* ---- batched prefetches and discards ---------------------------------------------- */

/*
 * The batch in pieces of at most VC_CU_BATCH_MAX ranges, each with the
 * locations that apply to its ranges (their first index made relative to
 * the piece). The batch runs in stream order as a whole, as the pieces do.
 */
static CUresult batch(uint32_t kind, CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *locs,
		      size_t *idx, size_t nlocs, unsigned long long flags, CUstream s)
{
	struct vc_cu_req_mem_batch *rq;
	size_t cap = sizeof(*rq) + VC_CU_BATCH_MAX * (sizeof(struct vc_cu_batch_range) + sizeof(struct vc_cu_batch_loc));
	CUresult rc = CUDA_SUCCESS;

	if (!dptrs || !sizes || !count)
		return CUDA_ERROR_INVALID_VALUE;
	if (kind != VC_CU_BATCH_DISCARD) {
		if (!locs || !idx || !nlocs || nlocs > count || idx[0] != 0)
			return CUDA_ERROR_INVALID_VALUE;
		for (size_t k = 1; k < nlocs; k++)
			if (idx[k] <= idx[k - 1] || idx[k] >= count)
				return CUDA_ERROR_INVALID_VALUE;
	}
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	rq = malloc(cap);
	if (!rq)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t s0 = 0; s0 < count && rc == CUDA_SUCCESS; s0 += VC_CU_BATCH_MAX) {
		size_t n = count - s0 < VC_CU_BATCH_MAX ? count - s0 : VC_CU_BATCH_MAX;
		struct vc_cu_batch_range *r = (struct vc_cu_batch_range *)(rq + 1);
		struct vc_cu_batch_loc *l = (struct vc_cu_batch_loc *)(r + n);
		struct vc_cu_prefix none;
		uint32_t nl = 0;

		memset(rq, 0, sizeof(*rq));
		rq->stream = vc_cu_stream_id(s);
		rq->flags = flags;
		rq->kind = kind;
		rq->count = (uint32_t)n;
		for (size_t i = 0; i < n; i++)
			r[i] = (struct vc_cu_batch_range){.dptr = dptrs[s0 + i], .size = sizes[s0 + i]};
		for (size_t k = 0; kind != VC_CU_BATCH_DISCARD && k < nlocs; k++) {
			size_t from = idx[k], to = k + 1 < nlocs ? idx[k + 1] : count;

			if (to <= s0 || from >= s0 + n)
				continue;
			l[nl++] = (struct vc_cu_batch_loc){.type = (int32_t)locs[k].type, .id = locs[k].id,
							   .first = from > s0 ? from - s0 : 0};
		}
		rq->nlocs = nl;
		rc = vc_cu_call(VC_CU_vcMemBatch, rq, sizeof(*rq), r,
				n * sizeof(*r) + nl * sizeof(*l), &none, 0, NULL, 0, 0);
	}
	free(rq);
	return rc;
}

CUresult CUDAAPI cuMemPrefetchBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *prefetchLocs,
					 size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
					 CUstream hStream)
{
	return batch(VC_CU_BATCH_PREFETCH, dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags,
		     hStream);
}

CUresult CUDAAPI cuMemDiscardBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count, unsigned long long flags,
					CUstream hStream)
{
	return batch(VC_CU_BATCH_DISCARD, dptrs, sizes, count, NULL, NULL, 0, flags, hStream);
}

CUresult CUDAAPI cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count,
						   CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
						   size_t numPrefetchLocs, unsigned long long flags, CUstream hStream)
{
	return batch(VC_CU_BATCH_DISCARD_PREFETCH, dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,
		     numPrefetchLocs, flags, hStream);
}
