/* SPDX-License-Identifier: MIT */
/*
 * memops.c - stream memory operations (write and wait values, batches) and
 * stream attributes. Memory operations travel as one vcStreamMemOp each and
 * wait for the host's verdict, since the driver refuses a bad address or
 * operation at once. Attribute values travel as their 64 bytes: no stream
 * attribute holds a handle.
 */
#include <string.h>

#include "vc_cu_guest.h"

static CUresult memops(CUstream stream, uint32_t form, const struct vc_cu_memop *ops, unsigned count,
		       unsigned flags)
{
	struct vc_cu_req_memop rq;
	struct vc_cu_prefix none;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	memset(&rq, 0, sizeof(rq));
	rq.stream = vc_cu_stream_id(stream);
	rq.form = form;
	rq.count = count;
	rq.flags = flags;
	return vc_cu_call(VC_CU_vcStreamMemOp, &rq, sizeof(rq), ops, count * sizeof(ops[0]), &none, 0, NULL, 0, 0);
}

static CUresult one(CUstream stream, uint32_t op, CUdeviceptr addr, uint64_t value, unsigned flags)
{
	struct vc_cu_memop m = {.op = op, .flags = flags, .addr = addr, .value = value};

	return memops(stream, VC_CU_MEMOP_SINGLE, &m, 1, 0);
}

CUresult CUDAAPI cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
	return one(stream, CU_STREAM_MEM_OP_WRITE_VALUE_32, addr, value, flags);
}

CUresult CUDAAPI cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags)
{
	return one(stream, CU_STREAM_MEM_OP_WRITE_VALUE_64, addr, value, flags);
}

CUresult CUDAAPI cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
	return one(stream, CU_STREAM_MEM_OP_WAIT_VALUE_32, addr, value, flags);
}

CUresult CUDAAPI cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags)
{
	return one(stream, CU_STREAM_MEM_OP_WAIT_VALUE_64, addr, value, flags);
}

CUresult CUDAAPI cuStreamBatchMemOp_v2(CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray,
				       unsigned int flags)
{
	struct vc_cu_memop ops[VC_CU_MEMOP_MAX];

	if (count && !paramArray)
		return CUDA_ERROR_INVALID_VALUE;
	/* The driver's own limit on a batch is 256 operations. */
	if (count > VC_CU_MEMOP_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < count; i++) {
		const CUstreamBatchMemOpParams *p = &paramArray[i];
		struct vc_cu_memop *o = &ops[i];

		memset(o, 0, sizeof(*o));
		o->op = (uint32_t)p->operation;
		switch (p->operation) {
		case CU_STREAM_MEM_OP_WAIT_VALUE_32:
		case CU_STREAM_MEM_OP_WAIT_VALUE_64:
			o->addr = p->waitValue.address;
			o->value = p->operation == CU_STREAM_MEM_OP_WAIT_VALUE_64 ? p->waitValue.value64
										   : p->waitValue.value;
			o->flags = p->waitValue.flags;
			break;
		case CU_STREAM_MEM_OP_WRITE_VALUE_32:
		case CU_STREAM_MEM_OP_WRITE_VALUE_64:
			o->addr = p->writeValue.address;
			o->value = p->operation == CU_STREAM_MEM_OP_WRITE_VALUE_64 ? p->writeValue.value64
										    : p->writeValue.value;
			o->flags = p->writeValue.flags;
			break;
		case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
			o->flags = p->flushRemoteWrites.flags;
			break;
		case CU_STREAM_MEM_OP_BARRIER:
			o->flags = p->memoryBarrier.flags;
			break;
		default:
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return memops(stream, VC_CU_MEMOP_BATCH, ops, count, flags);
}

/* ---- stream attributes ---------------------------------------------------------- */

CUresult CUDAAPI cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *value)
{
	struct vc_cu_req_stream_attr rq;
	struct vc_cu_prefix none;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	rq.stream = vc_cu_stream_id(hStream);
	rq.attr = (uint32_t)attr;
	memcpy(rq.value, value, sizeof(rq.value));
	return vc_cu_call(VC_CU_cuStreamSetAttribute, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

CUresult CUDAAPI cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue *value)
{
	struct vc_cu_req_stream_attr rq;
	struct vc_cu_rep_stream_attr rp;
	CUresult rc;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	rq.stream = vc_cu_stream_id(hStream);
	rq.attr = (uint32_t)attr;
	rc = vc_cu_call(VC_CU_cuStreamGetAttribute, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		memcpy(value, rp.value, sizeof(rp.value));
	return rc;
}
