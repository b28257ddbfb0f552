/* SPDX-License-Identifier: MIT */
/*
 * ctx.c - the CI stand-in's contexts: bookkeeping, one current per thread
 * as natively, with the limits and stream priorities a GPU reports.
 */
#include "standin/standin_priv.h"

/* ---- contexts ------------------------------------------------------------------ */

static CUresult s_ctx_create(CUcontext *pc, CUctxCreateParams *p, unsigned flags, CUdevice d)
{
	struct obj *c;

	(void)p;
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	c = vc_si_new_obj(T_CTX);
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->flags = flags;
	c->dev = d;
	t_ctx = c;
	*pc = (CUcontext)c;
	return CUDA_SUCCESS;
}

static CUresult s_ctx_destroy(CUcontext c)
{
	if (!vc_si_is(c, T_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	vc_si_printf_flush();
	pthread_mutex_lock(&g_mu);
	vc_smem_free_owner(&g_mem, c);
	pthread_mutex_unlock(&g_mu);
	if (t_ctx == (struct obj *)c)
		t_ctx = NULL;
	vc_si_memops_ctx_gone(c); /* its streams' held operations go with it */
	/* What lived in it goes with it; the executor forgets their ids (a
	 * stale one reads a dead record: an invalid handle, as natively). */
	vc_si_del_ctx_objects(c);
	vc_si_del_obj(c);
	return CUDA_SUCCESS;
}

static CUresult s_ctx_set(CUcontext c)
{
	if (c && !vc_si_is(c, T_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	t_ctx = (struct obj *)c;
	return CUDA_SUCCESS;
}

static CUresult s_ctx_get(CUcontext *c)
{
	*c = (CUcontext)t_ctx;
	return CUDA_SUCCESS;
}

static CUresult s_ctx_sync(void)
{
	vc_si_wait_host_funcs();
	vc_si_sim_drain();
	vc_si_memops_drain_ctx(t_ctx);
	return vc_si_synced(vc_si_need_ctx());
}

static CUresult s_ctx_sync2(CUcontext c)
{
	return c && !vc_si_is(c, T_CTX) ? CUDA_ERROR_INVALID_CONTEXT : c ? CUDA_SUCCESS : vc_si_need_ctx();
}

static CUresult s_ctx_device(CUdevice *d)
{
	*d = t_ctx ? t_ctx->dev : 0;
	return vc_si_need_ctx();
}

static CUresult s_ctx_device2(CUdevice *d, CUcontext c)
{
	const struct obj *o = c ? (const struct obj *)c : t_ctx;

	*d = o && vc_si_is(o, T_CTX) ? o->dev : 0;
	return s_ctx_sync2(c);
}

static CUresult s_ctx_api(CUcontext c, unsigned int *v)
{
	*v = 13000;
	return s_ctx_sync2(c);
}

static CUresult s_ctx_flags(unsigned int *f)
{
	*f = t_ctx ? t_ctx->flags : 0;
	return vc_si_need_ctx();
}

static CUresult s_ctx_prio(int *least, int *greatest)
{
	if (least)
		*least = 0;
	if (greatest)
		*greatest = -5;
	return vc_si_need_ctx();
}

static CUresult s_ctx_limit_get(size_t *v, CUlimit l)
{
	(void)l;
	*v = 1024;
	return vc_si_need_ctx();
}

static CUresult s_ctx_limit_set(CUlimit l, size_t v)
{
	(void)l, (void)v;
	return vc_si_need_ctx();
}

static CUresult s_ctx_id(CUcontext c, unsigned long long *id)
{
	struct obj *o = c ? (struct obj *)c : t_ctx;

	if (!o || !vc_si_is(o, T_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	*id = o->id;
	return CUDA_SUCCESS;
}

void vc_si_fill_ctx(struct vc_cuda_driver *d)
{
	d->cuCtxCreate_v4 = s_ctx_create;
	d->cuCtxDestroy_v2 = s_ctx_destroy;
	d->cuCtxSetCurrent = s_ctx_set;
	d->cuCtxGetCurrent = s_ctx_get;
	d->cuCtxSynchronize = s_ctx_sync;
	d->cuCtxSynchronize_v2 = s_ctx_sync2;
	d->cuCtxGetDevice = s_ctx_device;
	d->cuCtxGetDevice_v2 = s_ctx_device2;
	d->cuCtxGetApiVersion = s_ctx_api;
	d->cuCtxGetFlags = s_ctx_flags;
	d->cuCtxGetStreamPriorityRange = s_ctx_prio;
	d->cuCtxGetLimit = s_ctx_limit_get;
	d->cuCtxSetLimit = s_ctx_limit_set;
	d->cuCtxGetId = s_ctx_id;
}
