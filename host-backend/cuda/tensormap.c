/* SPDX-License-Identifier: MIT */
/*
 * tensormap.c - tensor maps (Hopper's TMA): the host driver encodes the
 * 128-byte CUtensorMap, which the guest passes to kernels by value. The map
 * gives the GPU's copy engine a global address and the extent it may reach;
 * that range is checked as device memory of the session first, computed from
 * the dimensions and strides with overflow checks (a map reaching beyond the
 * session's memory gets CUDA_ERROR_INVALID_VALUE, as an address the driver
 * does not know would).
 *
 * cuTensorMapReplaceAddress takes a map the guest holds, whose bytes are
 * opaque: the session remembers the extent of each map it encoded (the last
 * VC_CU_TMAPS_KEPT), and replaces addresses only in those, with the new
 * range checked against the same extent.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"

#define VC_CU_TMAPS_KEPT 1024u

struct vc_cu_tmap_rec {
	uint8_t map[128];
	uint64_t extent; /* bytes from the map's global address that it may reach */
	bool used;
};

struct vc_cu_tmaps {
	struct vc_cu_tmap_rec rec[VC_CU_TMAPS_KEPT];
	uint32_t next; /* the oldest record, replaced next */
};

void vc_cu_tmap_fini(struct vc_cu_session *x)
{
	free(x->tmaps);
	x->tmaps = NULL;
}

/* Bytes of the innermost dimension's @n elements of type @dtype; 0 for a type
 * this version does not know or an overflow. Packed types hold 16 values per
 * 8 (U4, 8-byte aligned) or 16 (U4 and U6, 16-byte aligned) bytes. */
static uint64_t row_bytes(int32_t dtype, uint64_t n)
{
	uint64_t esz;

	switch (dtype) {
	case CU_TENSOR_MAP_DATA_TYPE_UINT8:
		esz = 1;
		break;
	case CU_TENSOR_MAP_DATA_TYPE_UINT16:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
	case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
		esz = 2;
		break;
	case CU_TENSOR_MAP_DATA_TYPE_UINT32:
	case CU_TENSOR_MAP_DATA_TYPE_INT32:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
		esz = 4;
		break;
	case CU_TENSOR_MAP_DATA_TYPE_UINT64:
	case CU_TENSOR_MAP_DATA_TYPE_INT64:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
		esz = 8;
		break;
	case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B:
		return n / 16 + (n % 16 != 0) > UINT64_MAX / 8 ? 0 : (n / 16 + (n % 16 != 0)) * 8;
	case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B:
	case CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B:
		return n / 16 + (n % 16 != 0) > UINT64_MAX / 16 ? 0 : (n / 16 + (n % 16 != 0)) * 16;
	default:
		return 0;
	}
	return n > UINT64_MAX / esz ? 0 : n * esz;
}

/*
 * vc_cu_tmap_extent() - bytes from the global address that a tensor of
 * @rank dimensions @dims with byte strides @strides (rank - 1 of them, for
 * dimensions 1..rank-1) reaches: the innermost row plus (dims[i] - 1) *
 * strides[i - 1] for each outer dimension. 0 or CUDA_ERROR_INVALID_VALUE (a
 * rank or type the driver refuses, an empty dimension, an overflow).
 */
static int tmap_extent(int32_t dtype, uint32_t rank, const uint64_t *dims, const uint64_t *strides, uint64_t *ext)
{
	uint64_t e;

	if (rank < 1 || rank > VC_CU_TMAP_RANK_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < rank; i++)
		if (!dims[i])
			return CUDA_ERROR_INVALID_VALUE;
	if (!(e = row_bytes(dtype, dims[0])))
		return CUDA_ERROR_INVALID_VALUE;
	for (uint32_t i = 1; i < rank; i++) {
		uint64_t d = dims[i] - 1, s = strides[i - 1], t;

		if (d && s > UINT64_MAX / d)
			return CUDA_ERROR_INVALID_VALUE;
		t = d * s;
		if (e > UINT64_MAX - t)
			return CUDA_ERROR_INVALID_VALUE;
		e += t;
	}
	*ext = e;
	return 0;
}

static void remember(struct vc_cu_session *x, const CUtensorMap *m, uint64_t extent)
{
	struct vc_cu_tmap_rec *r;

	if (!x->tmaps && !(x->tmaps = calloc(1, sizeof(*x->tmaps))))
		return; /* the map works; only replacing its address will be refused */
	r = &x->tmaps->rec[x->tmaps->next];
	x->tmaps->next = (x->tmaps->next + 1) % VC_CU_TMAPS_KEPT;
	memcpy(r->map, m, sizeof(r->map));
	r->extent = extent;
	r->used = true;
}

static const struct vc_cu_tmap_rec *recall(struct vc_cu_session *x, const uint8_t *map)
{
	for (uint32_t i = 0; x->tmaps && i < VC_CU_TMAPS_KEPT; i++)
		if (x->tmaps->rec[i].used && !memcmp(x->tmaps->rec[i].map, map, 128))
			return &x->tmaps->rec[i];
	return NULL;
}

/* The driver's encoding of request @rq into @m. */
static CUresult encode(struct vc_cu_session *x, const struct vc_cu_req_tmap *rq, CUtensorMap *m)
{
	void *a = (void *)(uintptr_t)rq->addr;
	const cuuint64_t *dims = (const cuuint64_t *)rq->dims, *strides = (const cuuint64_t *)rq->strides;
	CUtensorMapDataType t = (CUtensorMapDataType)rq->dtype;
	CUtensorMapInterleave il = (CUtensorMapInterleave)rq->interleave;
	CUtensorMapSwizzle sw = (CUtensorMapSwizzle)rq->swizzle;
	CUtensorMapL2promotion l2 = (CUtensorMapL2promotion)rq->l2;
	CUtensorMapFloatOOBfill oob = (CUtensorMapFloatOOBfill)rq->oob;

	static_assert(sizeof(cuuint64_t) == sizeof(uint64_t), "dimensions travel as 64 bits");
	switch (rq->kind) {
	case VC_CU_TMAP_TILED:
		return x->drv->cuTensorMapEncodeTiled(m, t, rq->rank, a, dims, strides, rq->box, rq->estrides, il, sw,
						      l2, oob);
	case VC_CU_TMAP_IM2COL:
		return x->drv->cuTensorMapEncodeIm2col(m, t, rq->rank, a, dims, strides, rq->lower, rq->upper,
						       rq->cpp, rq->ppc, rq->estrides, il, sw, l2, oob);
	default:
		return x->drv->cuTensorMapEncodeIm2colWide(m, t, rq->rank, a, dims, strides, rq->lower_w,
							   rq->upper_w, rq->cpp, rq->ppc, rq->estrides, il,
							   (CUtensorMapIm2ColWideMode)rq->mode, sw, l2, oob);
	}
}

int vc_cu_manual_vcTensorMap(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_tmap rq;
	struct vc_cu_rep_tmap rp;
	const struct vc_cu_tmap_rec *r;
	CUtensorMap m;
	uint64_t ext = 0;
	int rc;

	TAKE(rq);
	if (rq.kind > VC_CU_TMAP_REPLACE)
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	memset(&m, 0, sizeof(m));
	if (rq.kind == VC_CU_TMAP_REPLACE) {
		/* Only a map of ours: its extent is known, its bytes are not ours to parse. */
		if (!(r = recall(x, rq.map)))
			return CUDA_ERROR_INVALID_VALUE;
		ext = r->extent;
		if ((rc = vc_cu_check_range(x, rq.addr, ext)))
			return rc;
		memcpy(&m, rq.map, sizeof(m));
		if ((rc = x->drv->cuTensorMapReplaceAddress(&m, (void *)(uintptr_t)rq.addr)))
			return rc;
	} else {
		if ((rc = tmap_extent(rq.dtype, rq.rank, rq.dims, rq.strides, &ext)) ||
		    (rc = vc_cu_check_range(x, rq.addr, ext)) || (rc = encode(x, &rq, &m)))
			return rc;
	}
	remember(x, &m, ext);
	memcpy(rp.map, &m, sizeof(rp.map));
	REPLY(rp);
	return 0;
}
