/* SPDX-License-Identifier: MIT */
/*
 * managed.c - managed memory on the host: cuMemAllocManaged (charged to the
 * quota like cuMemAlloc), its free, whether a module global is managed
 * (__managed__ variables), range attributes and batched prefetches and
 * discards. The guest maps each managed range at the same address in its
 * own process and keeps its pages coherent itself (guest-lib/libcuda/
 * managed.c); here the range is the real driver's managed memory, so that
 * copies from and to it, prefetches, advice and range attributes are the
 * driver's own.
 *
 * The session keeps a table of its managed ranges (managed_table.c).
 */
#include <stdlib.h>

#include "cuda/exec_priv.h"
#include "cuda/managed_table.h"

int vc_cu_manual_vcManagedAlloc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				struct vc_cu_out *out)
{
	struct vc_cu_req_managed_alloc rq;
	struct vc_cu_rep_managed_alloc rp = {0};
	CUdeviceptr d = 0;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if ((rc = vc_cu_quota_charge(x, rq.size)))
		return rc;
	rc = x->drv->cuMemAllocManaged(&d, rq.size, rq.flags);
	if (rc)
		goto err_refund;
	if ((rc = vc_cu_quota_track(x, d, rq.size, x->cur_id)))
		goto err_free;
	if ((rc = vc_cu_managed_add(x, d, rq.size, false))) {
		vc_cu_quota_untrack(x, d); /* refunds */
		x->drv->cuMemFree_v2(d);
		return rc;
	}
	rp.dptr = d;
	REPLY(rp);
	return 0;

err_free:
	x->drv->cuMemFree_v2(d);
err_refund:
	vc_cu_quota_refund(x, rq.size);
	return rc;
}

int vc_cu_manual_vcManagedFree(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			       struct vc_cu_out *out)
{
	struct vc_cu_req_managed_ptr rq;
	struct vc_cu_mrange *r;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	r = vc_cu_managed_find(x, rq.dptr);
	if (!r || r->global)
		return CUDA_ERROR_INVALID_VALUE;
	rc = x->drv->cuMemFree_v2((CUdeviceptr)rq.dptr);
	if (rc == 0) {
		vc_cu_quota_untrack(x, rq.dptr);
		vc_cu_managed_drop(x, r);
	}
	return rc;
}

/* How far apart a module's managed variables may lie (the driver packs
 * them at 512-byte steps), and the step a search for the next one takes. */
#define SEG_GAP (64u << 10)
#define SEG_STEP 16u

/* The managed range holding @a that the session may name: 0 with
 * [*@b, *@b + *@n), or -1 (none, not managed, or a session allocation, which
 * is no module's variable). */
static int managed_var(struct vc_cu_session *x, uint64_t a, uint64_t *b, uint64_t *n)
{
	CUdeviceptr base = 0;
	size_t size = 0;
	int managed = 0;
	CUpointer_attribute attr = CU_POINTER_ATTRIBUTE_IS_MANAGED;
	void *data = &managed;
	struct vc_cu_mrange *r;

	if (x->drv->cuMemGetAddressRange_v2(&base, &size, (CUdeviceptr)a) != CUDA_SUCCESS || !size)
		return -1;
	if (x->drv->cuPointerGetAttributes(1, &attr, &data, base) != CUDA_SUCCESS || !managed)
		return -1;
	r = vc_cu_managed_find(x, base);
	if (r && !r->global)
		return -1;
	*b = base;
	*n = size;
	return 0;
}

/*
 * The module's managed variables around [@start, @start + @size): the
 * runtime asks for one of them only and reaches the others by their offsets
 * in the segment, so the guest must map, and copy, them all. Searched at
 * SEG_STEP steps up to SEG_GAP past each end; at most @cap pieces.
 */
static uint32_t segment(struct vc_cu_session *x, uint64_t start, uint64_t size, struct vc_cu_managed_piece *pc,
			uint32_t cap)
{
	uint64_t lo = start, b, n;
	uint32_t k = 0;

	/* back to the first variable */
	for (uint64_t a = lo; a > SEG_STEP && lo - a < SEG_GAP && k < cap / 2;) {
		a -= SEG_STEP;
		if (managed_var(x, a, &b, &n) == 0 && b < lo) {
			lo = b;
			a = b;
			k++;
		}
	}
	k = 0;
	for (uint64_t a = lo; k < cap;) {
		uint64_t end;

		if (managed_var(x, a, &b, &n)) {
			/* a gap: the next variable within SEG_GAP, or the end */
			end = a;
			for (a += SEG_STEP; a - end < SEG_GAP && managed_var(x, a, &b, &n); a += SEG_STEP)
				;
			if (a - end >= SEG_GAP)
				break;
		}
		pc[k].base = b;
		pc[k].size = n;
		k++;
		a = b + n;
	}
	/* the variable asked about is always among them */
	for (uint32_t i = 0; i < k; i++)
		if (pc[i].base == start)
			return k;
	pc[0].base = start;
	pc[0].size = size;
	return 1;
}

/*
 * Whether the global at @dptr is managed memory (a __managed__ variable):
 * the driver says so, and it belongs to one of our contexts or to none that
 * another session could own (a worker process serves one session). The
 * module's variables around it (segment()) join the table, so that copies
 * may name them, and go back to the guest, which maps them all.
 */
int vc_cu_manual_vcManagedQuery(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				struct vc_cu_out *out)
{
	CUpointer_attribute attrs[4] = {CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_CONTEXT,
					CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
	struct vc_cu_req_managed_ptr rq;
	struct vc_cu_rep_managed_query rp = {0};
	struct vc_cu_managed_piece *pc;
	CUcontext c = NULL;
	CUdeviceptr start = 0;
	size_t size = 0;
	int managed = 0;
	void *data[4] = {&managed, &c, &start, &size};
	uint64_t id;
	uint32_t cap;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	rc = x->drv->cuPointerGetAttributes(4, attrs, data, (CUdeviceptr)rq.dptr);
	/* Libraries need no context, so the runtime may ask before it has one:
	 * then ask in device 0's primary context. */
	if (rc && !rq.ctx && vc_cu_primary_get(x, 0, &id) == 0 && vc_cu_enter(x, id) == 0)
		rc = x->drv->cuPointerGetAttributes(4, attrs, data, (CUdeviceptr)rq.dptr);
	if (rc == CUDA_SUCCESS && managed && size && (!c || vc_cu_find(x, VC_H_CUCONTEXT, c, &id) == 0)) {
		struct vc_cu_mrange *own = vc_cu_managed_find(x, start);

		rp.base = start;
		rp.size = size;
		rp.managed = 1;
		cap = out->data ? (uint32_t)(out->data_cap / sizeof(*pc)) : 0;
		if (cap > VC_CU_MANAGED_PIECES_MAX)
			cap = VC_CU_MANAGED_PIECES_MAX;
		if (own && !own->global) {
			REPLY(rp); /* the session's own allocation */
			return 0;
		}
		if (cap) {
			CUcontext cur = NULL, prim = NULL, popped;
			bool pushed = false;

			/* Address ranges are asked in a context: with none current
			 * (a library's variables, looked up before the runtime made
			 * one), in device 0's primary context, put back after. */
			if (x->drv->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && !cur &&
			    vc_cu_primary_get(x, 0, &id) == 0 && vc_cu_lookup(x, VC_H_CUCONTEXT, id, (void **)&prim) == 0)
				pushed = x->drv->cuCtxPushCurrent_v2(prim) == CUDA_SUCCESS;
			pc = (struct vc_cu_managed_piece *)out->data;
			rp.npieces = segment(x, start, size, pc, cap);
			if (pushed)
				x->drv->cuCtxPopCurrent_v2(&popped);
			rp.base = pc[0].base;
			rp.size = pc[rp.npieces - 1].base + pc[rp.npieces - 1].size - pc[0].base;
			out->data_len = rp.npieces * (uint32_t)sizeof(*pc);
		} else {
			pc = &(struct vc_cu_managed_piece){.base = start, .size = size};
			rp.npieces = 0;
		}
		for (uint32_t i = 0; i < (rp.npieces ? rp.npieces : 1); i++)
			if (vc_cu_managed_check(x, pc[i].base, pc[i].size) &&
			    (rc = vc_cu_managed_add(x, pc[i].base, pc[i].size, true)))
				return rc;
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_vcMemRangeAttrs(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				 struct vc_cu_out *out)
{
	struct vc_cu_req_range_attrs rq;
	CUmem_range_attribute attrs[VC_CU_RANGE_ATTRS_MAX];
	size_t sizes[VC_CU_RANGE_ATTRS_MAX];
	void *data[VC_CU_RANGE_ATTRS_MAX];
	uint64_t total = 0;
	int rc;

	TAKE(rq);
	if (!rq.n || rq.n > VC_CU_RANGE_ATTRS_MAX)
		return -VC_FATAL_PAYLOAD; /* the guest library splits nothing: it never sends these */
	if (!out->data)
		return -VC_FATAL_PAYLOAD;
	for (uint32_t i = 0; i < rq.n; i++) {
		if (rq.size[i] > VC_CU_RANGE_DATA_MAX || total + rq.size[i] > VC_CU_RANGE_DATA_MAX)
			return -VC_FATAL_PAYLOAD;
		attrs[i] = (CUmem_range_attribute)rq.attr[i];
		sizes[i] = rq.size[i];
		total += rq.size[i];
	}
	if (total > out->data_cap)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	/* Only the session's own managed memory (the driver checks the rest). */
	if (vc_cu_managed_check(x, rq.dptr, rq.count ? rq.count : 1))
		return CUDA_ERROR_INVALID_VALUE;
	memset(out->data, 0, total);
	total = 0;
	for (uint32_t i = 0; i < rq.n; i++) {
		data[i] = out->data + total;
		total += rq.size[i];
	}
	rc = x->drv->cuMemRangeGetAttributes(data, sizes, attrs, rq.n, (CUdeviceptr)rq.dptr, rq.count);
	if (rc == 0)
		out->data_len = (uint32_t)total;
	return rc;
}

int vc_cu_manual_vcMemBatch(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_mem_batch rq;
	CUdeviceptr *dptrs = NULL;
	size_t *sizes = NULL, *idx = NULL;
	CUmemLocation *locs = NULL;
	const uint8_t *at;
	void *stream;
	int rc;

	(void)out;
	TAKE(rq);
	if (!rq.count || rq.count > VC_CU_BATCH_MAX || rq.nlocs > rq.count || rq.kind > VC_CU_BATCH_DISCARD_PREFETCH ||
	    (rq.kind == VC_CU_BATCH_DISCARD) != (rq.nlocs == 0) ||
	    len - sizeof(rq) < (uint64_t)rq.count * sizeof(struct vc_cu_batch_range) +
				   (uint64_t)rq.nlocs * sizeof(struct vc_cu_batch_loc))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
		return rc;
	dptrs = calloc(rq.count, sizeof(*dptrs));
	sizes = calloc(rq.count, sizeof(*sizes));
	idx = calloc(rq.nlocs + 1, sizeof(*idx));
	locs = calloc(rq.nlocs + 1, sizeof(*locs));
	rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (!dptrs || !sizes || !idx || !locs)
		goto out;
	at = p + sizeof(rq);
	rc = CUDA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < rq.count; i++, at += sizeof(struct vc_cu_batch_range)) {
		struct vc_cu_batch_range r;

		memcpy(&r, at, sizeof(r));
		if (vc_cu_managed_check(x, r.dptr, r.size ? r.size : 1))
			goto out; /* only the session's own managed memory */
		dptrs[i] = r.dptr;
		sizes[i] = r.size;
	}
	for (uint32_t i = 0; i < rq.nlocs; i++, at += sizeof(struct vc_cu_batch_loc)) {
		struct vc_cu_batch_loc l;

		memcpy(&l, at, sizeof(l));
		locs[i].type = (CUmemLocationType)l.type;
		locs[i].id = l.id;
		idx[i] = l.first;
	}
	if (rq.kind == VC_CU_BATCH_PREFETCH)
		rc = x->drv->cuMemPrefetchBatchAsync(dptrs, sizes, rq.count, locs, idx, rq.nlocs, rq.flags, stream);
	else if (rq.kind == VC_CU_BATCH_DISCARD)
		rc = x->drv->cuMemDiscardBatchAsync(dptrs, sizes, rq.count, rq.flags, stream);
	else
		rc = x->drv->cuMemDiscardAndPrefetchBatchAsync(dptrs, sizes, rq.count, locs, idx, rq.nlocs, rq.flags,
							       stream);
out:
	free(dptrs);
	free(sizes);
	free(idx);
	free(locs);
	return rc;
}
