/* SPDX-License-Identifier: MIT */
/*
 * copy3d.c - copies with a CUDA array on a side and 3D copies, in every
 * direction: cuMemcpy3D(Async), the 2D copies with arrays (memory.c hands
 * them over), cuMemcpyHtoA/AtoH/AtoD/DtoA/AtoA, the peer forms (one device
 * per VM: a peer copy is a copy), and the batches.
 *
 * Without a host side, a copy is one vcMemcpy3D. From or to the guest's
 * page-locked memory, it is one too (the host copies from the pinned pool,
 * DMA). From or to other host memory, the box's bytes travel through the
 * staging arena densely packed, pipelined like the 1D copies; rows are
 * packed or unpacked here when the host side is not dense already. A copy
 * from pageable memory returns once its bytes are staged, as natively an
 * asynchronous one returns once they are in the driver's staging buffer; a
 * copy to pageable memory returns when the data is there, asynchronous or
 * not, as natively.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vc_client.h"
#include "vc_cu_guest.h"
#include "vc_cuda_array.h"

#define GROUP_BYTES (8u << 20) /* host rows packed at a time when they are not dense */

enum { S_HOST, S_DEVICE, S_ARRAY };

struct gside {
	int kind;
	const uint8_t *host;
	uint64_t addr; /* device address or array id */
	uint64_t x, y, z, pitch, height;
};

static struct gside side(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr, size_t x, size_t y,
			 size_t z, size_t pitch, size_t height)
{
	struct gside s = {.x = x, .y = y, .z = z, .pitch = pitch, .height = height, .kind = -1};

	if (t == CU_MEMORYTYPE_UNIFIED) {
		t = vc_cu_mem_is_device(dev, 1) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
		host = (const void *)(uintptr_t)dev;
	}
	if (t == CU_MEMORYTYPE_HOST) {
		s.kind = S_HOST;
		s.host = host;
	} else if (t == CU_MEMORYTYPE_DEVICE) {
		s.kind = S_DEVICE;
		s.addr = dev;
	} else if (t == CU_MEMORYTYPE_ARRAY) {
		s.kind = S_ARRAY;
		s.addr = (uint64_t)(uintptr_t)arr;
	}
	return s;
}

/* Bytes a box spans from its origin with rows @pitch apart and slices
 * @height rows apart; -1 when the pitches do not hold it (a pitch below the
 * width is refused even for one row, as the driver refuses it). */
static int extent(uint64_t w, uint64_t h, uint64_t d, uint64_t pitch, uint64_t height, uint64_t *out)
{
	uint64_t e, r;

	if (pitch < w || (d > 1 && height < h))
		return -1;
	if (__builtin_mul_overflow(pitch, height, &e) || __builtin_mul_overflow(e, d - 1, &e) ||
	    __builtin_mul_overflow(pitch, h - 1, &r) || __builtin_add_overflow(e, r, &e) ||
	    __builtin_add_overflow(e, w, &e))
		return -1;
	*out = e;
	return 0;
}

/* Host address of row @r (counted over slices) of a host side's box. */
static const uint8_t *row_at(const struct gside *s, uint64_t r, uint64_t h)
{
	return s->host + ((s->z + r / h) * s->height + s->y + r % h) * s->pitch + s->x;
}

struct job {
	struct vc_cu_req_memcpy3d rq;
	uint64_t base; /* dense offset of the transfer's first byte */
};

static int emit(struct vc_client *cl, void *arg, uint64_t off, uint64_t n, uint64_t aoff, uint64_t *seq)
{
	struct job *j = arg;
	struct vc_cu_req_memcpy3d rq = j->rq;

	rq.ctx = vc_cu_current();
	rq.piece_off = j->base + off;
	rq.piece_len = n;
	rq.arena_off = aoff;
	return vc_client_submit(cl, VC_CU_vcMemcpy3D, &rq, sizeof(rq), NULL, 0, 0, seq);
}

static void wire_side(struct vc_cu_copy3d_side *w, const struct gside *s)
{
	memset(w, 0, sizeof(*w));
	w->kind = s->kind == S_ARRAY ? VC_CU_SIDE_ARRAY : VC_CU_SIDE_DEVICE;
	w->addr = s->addr;
	w->x = s->x;
	w->y = s->y;
	w->z = s->z;
	w->pitch = s->pitch;
	w->height = s->height;
}

static CUresult send(struct vc_cu_req_memcpy3d *rq)
{
	struct vc_cu_prefix none;

	if (rq->async)
		return vc_cu_submit(VC_CU_vcMemcpy3D, rq, sizeof(*rq), NULL, 0);
	return vc_cu_call(VC_CU_vcMemcpy3D, rq, sizeof(*rq), NULL, 0, &none, 0, NULL, 0, 1);
}

/* The host side @h's box through the arena, to (@up) or from the other side. */
static CUresult staged(struct vc_cu_state *st, struct job *j, const struct gside *h, int up)
{
	uint64_t w = j->rq.width, hh = j->rq.height, rows = hh * j->rq.depth;
	int dense = h->pitch == w && (j->rq.depth == 1 || h->height == hh);
	uint64_t per = dense ? rows : (GROUP_BYTES / w ? GROUP_BYTES / w : 1);
	uint8_t *tmp = NULL;
	int rc = 0;

	if (!dense && !(tmp = malloc(per * w)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (uint64_t r0 = 0; !rc && r0 < rows; r0 += per) {
		uint64_t n = rows - r0 < per ? rows - r0 : per;
		uint8_t *buf = dense ? (uint8_t *)row_at(h, r0, hh) : tmp;
		int last = r0 + n == rows;

		j->base = r0 * w;
		if (up) {
			for (uint64_t r = 0; !dense && r < n; r++)
				memcpy(tmp + r * w, row_at(h, r0 + r, hh), w);
			/* The host's CPU reads these pieces (its driver stages them). */
			rc = vc_client_put(st->client, buf, n * w, emit, j,
					   j->rq.async || !last ? VC_CLIENT_PUT_ASYNC : 0);
		} else {
			rc = vc_client_get(st->client, buf, n * w, emit, j);
			for (uint64_t r = 0; !rc && !dense && r < n; r++)
				memcpy((uint8_t *)row_at(h, r0 + r, hh), tmp + r * w, w);
		}
	}
	free(tmp);
	if (!up || !j->rq.async)
		vc_cu_console_check(); /* a blocking copy synchronises */
	return rc < 0 ? vc_cu_error(rc) : (CUresult)rc;
}

/* A box of @w bytes x @h rows x @d slices from @s to @ds. */
static CUresult copy(const struct gside *s, const struct gside *ds, uint64_t w, uint64_t h, uint64_t d,
		     uint32_t dims, CUstream stream, int async)
{
	struct vc_cu_state *st = vc_cu_state();
	const struct gside *hs = s->kind == S_HOST ? s : ds->kind == S_HOST ? ds : NULL;
	struct job j;
	uint64_t ext = 0, off;

	if (!st)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (s->kind < 0 || ds->kind < 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!w || !h || !d)
		return CUDA_SUCCESS;
	if (dims == 2 && (s->z || ds->z))
		return CUDA_ERROR_INVALID_VALUE;
	if ((s->kind == S_HOST && (!s->host || extent(w, h, d, s->pitch, s->height, &ext))) ||
	    (ds->kind == S_HOST && (!ds->host || extent(w, h, d, ds->pitch, ds->height, &ext))))
		return CUDA_ERROR_INVALID_VALUE;
	if (s->kind == S_HOST && ds->kind == S_HOST) {
		for (uint64_t r = 0; r < h * d; r++)
			memmove((uint8_t *)row_at(ds, r, h), row_at(s, r, h), w);
		return CUDA_SUCCESS;
	}
	memset(&j, 0, sizeof(j));
	j.rq.ctx = vc_cu_current();
	j.rq.stream = vc_cu_stream_id(stream);
	j.rq.width = w;
	j.rq.height = h;
	j.rq.depth = d;
	j.rq.dims = dims;
	j.rq.async = (uint32_t)async;
	wire_side(&j.rq.src, s);
	wire_side(&j.rq.dst, ds);
	if (!hs)
		return send(&j.rq);
	struct vc_cu_copy3d_side *wh = hs == s ? &j.rq.src : &j.rq.dst;
	const uint8_t *org = row_at(hs, 0, h);

	extent(w, h, d, hs->pitch, hs->height, &ext);
	if (vc_cu_mem_pinned(org, ext, &off)) {
		/* Page-locked memory of ours: the host's DMA, no staging. */
		wh->kind = VC_CU_SIDE_PINNED;
		wh->addr = off;
		wh->x = wh->y = wh->z = 0;
		return send(&j.rq);
	}
	memset(wh, 0, sizeof(*wh));
	wh->kind = VC_CU_SIDE_STAGED;
	return staged(st, &j, hs, hs == s);
}

/* ---- the 2D and 3D forms ---------------------------------------------------------------- */

CUresult vc_cu_copy2d_array(const CUDA_MEMCPY2D *p, CUstream s, int async)
{
	struct gside a = side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, 0,
			      p->srcPitch, p->Height);
	struct gside b = side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, 0,
			      p->dstPitch, p->Height);

	return copy(&a, &b, p->WidthInBytes, p->Height, 1, 2, s, async);
}

static CUresult copy3d(const CUDA_MEMCPY3D *p, CUstream s, int async)
{
	struct gside a, b;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	a = side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, p->srcZ,
		 p->srcPitch, p->srcHeight);
	b = side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, p->dstZ,
		 p->dstPitch, p->dstHeight);
	return copy(&a, &b, p->WidthInBytes, p->Height, p->Depth, 3, s, async);
}

CUresult CUDAAPI cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
	return copy3d(pCopy, NULL, 0);
}

CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
	return copy3d(pCopy, hStream, 1);
}

/* One device per VM: a peer copy is between contexts of that device. */
static CUresult copy3d_peer(const CUDA_MEMCPY3D_PEER *p, CUstream s, int async)
{
	struct gside a, b;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	a = side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, p->srcZ,
		 p->srcPitch, p->srcHeight);
	b = side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, p->dstZ,
		 p->dstPitch, p->dstHeight);
	return copy(&a, &b, p->WidthInBytes, p->Height, p->Depth, 3, s, async);
}

CUresult CUDAAPI cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy)
{
	return copy3d_peer(pCopy, NULL, 0);
}

CUresult CUDAAPI cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream)
{
	return copy3d_peer(pCopy, hStream, 1);
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
			      CUcontext srcContext, size_t ByteCount)
{
	(void)dstContext;
	(void)srcContext;
	return cuMemcpyDtoD_v2(dstDevice, srcDevice, ByteCount);
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
				   CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
	(void)dstContext;
	(void)srcContext;
	return cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, hStream);
}

/* ---- the 1D array forms: a row of bytes at a byte offset ------------------------------------ */

static CUresult row(struct gside a, struct gside b, size_t n, CUstream s, int async)
{
	/* One row: a host side's pitch is the row itself. */
	a.pitch = a.kind == S_HOST ? n : a.pitch;
	b.pitch = b.kind == S_HOST ? n : b.pitch;
	return copy(&a, &b, n, 1, 1, 2, s, async);
}

static struct gside arr(CUarray h, size_t off)
{
	return (struct gside){.kind = S_ARRAY, .addr = (uint64_t)(uintptr_t)h, .x = off};
}

static struct gside host(const void *p)
{
	return (struct gside){.kind = S_HOST, .host = p};
}

static struct gside dev(CUdeviceptr d)
{
	return (struct gside){.kind = S_DEVICE, .addr = d};
}

CUresult CUDAAPI cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount)
{
	return row(host(srcHost), arr(dstArray, dstOffset), ByteCount, NULL, 0);
}

CUresult CUDAAPI cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount,
				      CUstream hStream)
{
	return row(host(srcHost), arr(dstArray, dstOffset), ByteCount, hStream, 1);
}

CUresult CUDAAPI cuMemcpyAtoH_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
	return row(arr(srcArray, srcOffset), host(dstHost), ByteCount, NULL, 0);
}

CUresult CUDAAPI cuMemcpyAtoHAsync_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
				      CUstream hStream)
{
	return row(arr(srcArray, srcOffset), host(dstHost), ByteCount, hStream, 1);
}

CUresult CUDAAPI cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
	return row(arr(srcArray, srcOffset), dev(dstDevice), ByteCount, NULL, 0);
}

CUresult CUDAAPI cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount)
{
	return row(dev(srcDevice), arr(dstArray, dstOffset), ByteCount, NULL, 0);
}

CUresult CUDAAPI cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
				 size_t ByteCount)
{
	return row(arr(srcArray, srcOffset), arr(dstArray, dstOffset), ByteCount, NULL, 0);
}

/* ---- batches ----------------------------------------------------------------------------------- */

static int order_ok(CUmemcpySrcAccessOrder o)
{
	return o == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || o == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ||
	       o == CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
}

/* Whether the legacy default stream: batches refuse it. */
static int legacy(CUstream s)
{
	return !s || s == CU_STREAM_LEGACY;
}

/*
 * Each copy of a batch is an asynchronous copy in the stream, in order (a
 * valid order: the batch promises no order among them). A source to be read
 * during the call that is not staged at once (device or page-locked memory)
 * makes the call wait for the stream.
 */
static CUresult batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs,
		      size_t *idxs, size_t nattrs, size_t *fail, CUstream s)
{
	int wait = 0;
	CUresult rc;
	uint64_t off;

	if (fail)
		*fail = SIZE_MAX;
	if (!dsts || !srcs || !sizes || !count || !attrs || !idxs || !nattrs || nattrs > count || idxs[0] || legacy(s))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t k = 0; k < nattrs; k++)
		if (!order_ok(attrs[k].srcAccessOrder) || (k && idxs[k] <= idxs[k - 1]) || idxs[k] >= count)
			return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0, k = 0; i < count; i++) {
		while (k + 1 < nattrs && idxs[k + 1] <= i)
			k++;
		if (attrs[k].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL &&
		    (vc_cu_mem_is_device(srcs[i], sizes[i]) ||
		     vc_cu_mem_pinned((const void *)(uintptr_t)srcs[i], sizes[i], &off)))
			wait = 1;
		if ((rc = cuMemcpyAsync(dsts[i], srcs[i], sizes[i], s))) {
			if (fail)
				*fail = i;
			return rc;
		}
	}
	return wait ? cuStreamSynchronize(s) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
				       CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream)
{
	return batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, hStream);
}

CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
				    CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
				    CUstream hStream)
{
	return batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream);
}

/* Bytes of an element of array @a (0 when it cannot be told). */
static uint64_t elem_of(CUarray a)
{
	CUDA_ARRAY3D_DESCRIPTOR d;

	if (cuArray3DGetDescriptor_v2(&d, a))
		return 0;
	return vc_cu_array_elem_bytes((uint32_t)d.Format, d.NumChannels);
}

/* One operand of a 3D batch copy, with elements of @e bytes. */
static int operand(const CUmemcpy3DOperand *o, const CUextent3D *x, uint64_t e, struct gside *out)
{
	if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
		*out = arr(o->op.array.array, o->op.array.offset.x * e);
		out->y = o->op.array.offset.y;
		out->z = o->op.array.offset.z;
		return 0;
	}
	if (o->type != CU_MEMCPY_OPERAND_TYPE_POINTER || (o->op.ptr.rowLength && o->op.ptr.rowLength < x->width) ||
	    (o->op.ptr.layerHeight && o->op.ptr.layerHeight < x->height))
		return -1;
	*out = side(CU_MEMORYTYPE_UNIFIED, NULL, o->op.ptr.ptr, NULL, 0, 0, 0,
		    (o->op.ptr.rowLength ? o->op.ptr.rowLength : x->width) * e,
		    o->op.ptr.layerHeight ? o->op.ptr.layerHeight : x->height);
	return 0;
}

static CUresult batch3d(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail, unsigned long long flags, CUstream s)
{
	int wait = 0;
	CUresult rc;
	size_t i;

	if (fail)
		*fail = SIZE_MAX;
	if (!n || !ops || flags || legacy(s))
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < n; i++) {
		const CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
		int sa = op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY, da = op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
		uint64_t e = 1, es = sa ? elem_of(op->src.op.array.array) : 0, ed = da ? elem_of(op->dst.op.array.array) : 0;
		struct gside a, b;

		if (sa || da)
			e = sa ? es : ed;
		rc = CUDA_ERROR_INVALID_VALUE;
		if (!op->extent.width || !op->extent.height || !op->extent.depth || !order_ok(op->srcAccessOrder) ||
		    !e || (sa && da && es != ed) || operand(&op->src, &op->extent, e, &a) ||
		    operand(&op->dst, &op->extent, e, &b))
			goto fail;
		if (op->srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL && a.kind != S_HOST)
			wait = 1;
		if ((rc = copy(&a, &b, op->extent.width * e, op->extent.height, op->extent.depth, 3, s, 1)))
			goto fail;
	}
	return wait ? cuStreamSynchronize(s) : CUDA_SUCCESS;
fail:
	if (fail)
		*fail = i;
	return rc;
}

CUresult CUDAAPI cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags,
					 CUstream hStream)
{
	return batch3d(numOps, opList, NULL, flags, hStream);
}

CUresult CUDAAPI cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
				      unsigned long long flags, CUstream hStream)
{
	return batch3d(numOps, opList, failIdx, flags, hStream);
}
