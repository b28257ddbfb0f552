/* SPDX-License-Identifier: MIT */
/*
 * pool.c - memory pools: cuMemPoolCreate and the pool attributes, whose
 * values are an int or a cuuint64_t by attribute. Allocations from a pool go
 * through vcMemAlloc (memory.c), which charges them to the quota like any
 * other; memory a pool keeps after frees (its release threshold) is not
 * charged, as it is not the guest's to use.
 */
#include "cuda/exec_priv.h"

int vc_cu_manual_cuMemPoolCreate(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				 struct vc_cu_out *out)
{
	struct vc_cu_req_pool_create rq;
	struct vc_cu_rep_pool_create rp = {0};
	CUmemPoolProps props;
	CUmemoryPool pool;
	int rc;

	TAKE(rq);
	memcpy(&props, rq.props, sizeof(props));
	/* A guest pointer means nothing here; the driver wants 0 on Linux. */
	if (props.win32SecurityAttributes)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if ((rc = x->drv->cuMemPoolCreate(&pool, &props)))
		return rc;
	if ((rc = vc_cu_publish(x, VC_H_CUMEMORYPOOL, pool, &rp.pool))) {
		x->drv->cuMemPoolDestroy(pool);
		return rc;
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemPoolSetAttribute(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				       struct vc_cu_out *out)
{
	struct vc_cu_req_pool_attr rq;
	void *pool;
	int iv;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUMEMORYPOOL, rq.pool, &pool)))
		return rc;
	switch (vc_cu_pool_attr_size(rq.attr)) {
	case sizeof(int):
		iv = (int)rq.value;
		return x->drv->cuMemPoolSetAttribute(pool, (CUmemPool_attribute)rq.attr, &iv);
	case sizeof(cuuint64_t):
		return x->drv->cuMemPoolSetAttribute(pool, (CUmemPool_attribute)rq.attr, &rq.value);
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

int vc_cu_manual_cuMemPoolGetAttribute(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				       struct vc_cu_out *out)
{
	struct vc_cu_req_pool_attr rq;
	struct vc_cu_rep_pool_attr rp = {0};
	cuuint64_t v = 0;
	void *pool;
	int iv = 0;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUMEMORYPOOL, rq.pool, &pool)))
		return rc;
	switch (vc_cu_pool_attr_size(rq.attr)) {
	case sizeof(int):
		rc = x->drv->cuMemPoolGetAttribute(pool, (CUmemPool_attribute)rq.attr, &iv);
		v = (cuuint64_t)(int64_t)iv;
		break;
	case sizeof(cuuint64_t):
		rc = x->drv->cuMemPoolGetAttribute(pool, (CUmemPool_attribute)rq.attr, &v);
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (rc)
		return rc;
	rp.value = v;
	REPLY(rp);
	return 0;
}
