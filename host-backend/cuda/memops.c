/* SPDX-License-Identifier: MIT */
/*
 * memops.c - stream memory operations: cuStreamWriteValue32/64,
 * cuStreamWaitValue32/64 and cuStreamBatchMemOp with every operation kind.
 * Each address is checked as device memory of the session (or a registered
 * range of its pinned pool, whose device address is its host address) before
 * the driver sees it, so a guest cannot make the GPU write or poll memory of
 * another session.
 *
 * A wait may never end (nobody writes the value). Once the session has asked
 * for one, synchronisations are polled instead of blocked in the driver, and
 * a context destroy no longer waits for them (sync.c): the waits still
 * pending on that context are answered with an error, as they would fail
 * natively once their context is gone.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"

int vc_cu_check_memop_range(struct vc_cu_session *x, uint64_t ptr, uint64_t len)
{
	uint64_t off;

	if (vc_cu_check_range(x, ptr, len) == 0)
		return 0;
	/* Mapped host memory of the pool or a segment (pinned.c). */
	if (vc_cu_pinned_at(x, ptr, len, &off))
		return CUDA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < x->npregs; i++)
		if (off >= x->pregs[i].off && len <= x->pregs[i].size && off - x->pregs[i].off <= x->pregs[i].size - len)
			return 0;
	return CUDA_ERROR_INVALID_VALUE;
}

/* One operation from the wire as the driver's parameters; 0 or the CUresult. */
static int memop_in(struct vc_cu_session *x, const struct vc_cu_memop *w, CUstreamBatchMemOpParams *o, bool *waits)
{
	uint64_t size = 4;
	int rc;

	memset(o, 0, sizeof(*o));
	o->operation = (CUstreamBatchMemOpType)w->op;
	switch (w->op) {
	case CU_STREAM_MEM_OP_WAIT_VALUE_64:
		size = 8;
		/* fall through */
	case CU_STREAM_MEM_OP_WAIT_VALUE_32:
		if ((rc = vc_cu_check_memop_range(x, w->addr, size)))
			return rc;
		o->waitValue.address = (CUdeviceptr)w->addr;
		o->waitValue.value64 = size == 8 ? w->value : (uint32_t)w->value;
		o->waitValue.flags = w->flags;
		*waits = true;
		return 0;
	case CU_STREAM_MEM_OP_WRITE_VALUE_64:
		size = 8;
		/* fall through */
	case CU_STREAM_MEM_OP_WRITE_VALUE_32:
		if ((rc = vc_cu_check_memop_range(x, w->addr, size)))
			return rc;
		o->writeValue.address = (CUdeviceptr)w->addr;
		o->writeValue.value64 = size == 8 ? w->value : (uint32_t)w->value;
		o->writeValue.flags = w->flags;
		return 0;
	case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
		o->flushRemoteWrites.flags = w->flags;
		return 0;
	case CU_STREAM_MEM_OP_BARRIER:
		o->memoryBarrier.flags = w->flags;
		return 0;
	default:
		return CUDA_ERROR_INVALID_VALUE; /* no such operation */
	}
}

/* A single write or wait: the driver's own entry point for it. */
static CUresult single(struct vc_cu_session *x, void *s, const CUstreamBatchMemOpParams *o)
{
	switch (o->operation) {
	case CU_STREAM_MEM_OP_WAIT_VALUE_32:
		return x->drv->cuStreamWaitValue32_v2(s, o->waitValue.address, o->waitValue.value, o->waitValue.flags);
	case CU_STREAM_MEM_OP_WAIT_VALUE_64:
		return x->drv->cuStreamWaitValue64_v2(s, o->waitValue.address, o->waitValue.value64,
						      o->waitValue.flags);
	case CU_STREAM_MEM_OP_WRITE_VALUE_32:
		return x->drv->cuStreamWriteValue32_v2(s, o->writeValue.address, o->writeValue.value,
						       o->writeValue.flags);
	case CU_STREAM_MEM_OP_WRITE_VALUE_64:
		return x->drv->cuStreamWriteValue64_v2(s, o->writeValue.address, o->writeValue.value64,
						       o->writeValue.flags);
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

int vc_cu_manual_vcStreamMemOp(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_memop rq;
	CUstreamBatchMemOpParams *ops = NULL;
	bool waits = false;
	void *s;
	int rc;

	(void)out;
	TAKE(rq);
	if (rq.form > VC_CU_MEMOP_BATCH || rq.count > VC_CU_MEMOP_MAX ||
	    (rq.form == VC_CU_MEMOP_SINGLE && rq.count != 1) ||
	    (uint64_t)rq.count * sizeof(struct vc_cu_memop) > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &s)))
		return rc;
	if (rq.count && !(ops = calloc(rq.count, sizeof(*ops))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < rq.count; i++) {
		struct vc_cu_memop w;

		memcpy(&w, p + sizeof(rq) + (size_t)i * sizeof(w), sizeof(w));
		if ((rc = memop_in(x, &w, &ops[i], &waits)))
			goto out;
	}
	/* Before the driver queues it: from now on a synchronisation or a
	 * context destroy must not wait in the driver for ever (sync.c). */
	if (waits)
		__atomic_store_n(&x->memop_waits, true, __ATOMIC_RELAXED); /* read by the sync thread */
	if (rq.form == VC_CU_MEMOP_SINGLE)
		rc = single(x, s, &ops[0]);
	else
		rc = x->drv->cuStreamBatchMemOp_v2(s, rq.count, ops, rq.flags);
out:
	free(ops);
	return rc;
}
