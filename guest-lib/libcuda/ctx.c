/* SPDX-License-Identifier: MIT */
/*
 * ctx.c - contexts. The current context is per guest thread and kept here;
 * every call carries it, and the host makes it current before executing.
 * Primary contexts and created contexts live on the host, one set per
 * session.
 */
#include <pthread.h>
#include <string.h>

#include "exptab.h"
#include "fastpath.h"
#include "vc_cu_guest.h"

#define STACK_MAX 64
#define CTX_MAP 64

static __thread uint64_t t_stack[STACK_MAX];
static __thread int t_depth;

/* Which device each context is on (launch-shape checks, pointer ordinals).
 * Small and direct-mapped: an entry lost to another context is asked again
 * (vc_cu_ctx_ordinal()). */
static struct {
	uint64_t ctx;
	int dev;
} g_map[CTX_MAP];
static pthread_mutex_t g_map_mu = PTHREAD_MUTEX_INITIALIZER;

void vc_cu_ctx_device(uint64_t ctx, int dev)
{
	pthread_mutex_lock(&g_map_mu);
	g_map[(ctx * 0x9e3779b97f4a7c15ull) >> 58].ctx = ctx;
	g_map[(ctx * 0x9e3779b97f4a7c15ull) >> 58].dev = dev;
	pthread_mutex_unlock(&g_map_mu);
}

int vc_cu_ctx_ordinal(uint64_t ctx)
{
	CUdevice d = -1;

	if (!ctx)
		return 0;
	pthread_mutex_lock(&g_map_mu);
	if (g_map[(ctx * 0x9e3779b97f4a7c15ull) >> 58].ctx == ctx)
		d = g_map[(ctx * 0x9e3779b97f4a7c15ull) >> 58].dev;
	pthread_mutex_unlock(&g_map_mu);
	if (d >= 0)
		return d;
	/* Lost to another context: ask (the host's answer, cached), and keep it again. */
	if (cuCtxGetDevice_v2(&d, (CUcontext)(uintptr_t)ctx) != CUDA_SUCCESS || d < 0)
		return 0;
	vc_cu_ctx_device(ctx, d);
	return d;
}

int vc_cu_current_device(void)
{
	const struct vc_cu_state *st = vc_cu_state();
	int dev = vc_cu_ctx_ordinal(vc_cu_current());

	return st && dev < st->device_count ? dev : 0;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	*pctx = (CUcontext)(uintptr_t)vc_cu_current();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Replaces the top of the stack, as natively; an invalid context is
	 * reported by the first call that uses it. */
	vc_cu_set_current((uint64_t)(uintptr_t)ctx);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (t_depth == STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	t_stack[t_depth++] = vc_cu_current();
	vc_cu_set_current((uint64_t)(uintptr_t)ctx);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!vc_cu_current())
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = (CUcontext)(uintptr_t)vc_cu_current();
	vc_cu_set_current(t_depth ? t_stack[--t_depth] : 0);
	return CUDA_SUCCESS;
}

static CUresult primary(uint32_t op, CUdevice dev, uint32_t flags, struct vc_cu_rep_ctx *rp)
{
	struct vc_cu_req_ctx rq = {.dev = dev, .flags = flags};
	struct vc_cu_rep_ctx none;

	return vc_cu_call(op, &rq, sizeof(rq), NULL, 0, rp ? rp : &none, sizeof(*rp), NULL, 0, 0);
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	struct vc_cu_rep_ctx rp;
	CUresult rc;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	rc = primary(VC_CU_cuDevicePrimaryCtxRetain, dev, 0, &rp);
	if (rc == CUDA_SUCCESS) {
		*pctx = (CUcontext)(uintptr_t)rp.pctx;
		vc_cu_ctx_device(rp.pctx, dev);
	}
	return rc;
}

/* The context @dev's primary context has now, or 0. */
static uint64_t primary_id(CUdevice dev)
{
	CUcontext c = NULL;
	struct vc_cu_req_vcExportSlot rq = {.table = VC_CU_EXPTAB_PRIMARY, .slot = 2, .dev = dev};
	struct vc_cu_rep_vcExportSlot rp = {0};
	struct vc_cu_rep_ctx st;

	if (primary(VC_CU_cuDevicePrimaryCtxGetState, dev, 0, &st) || !st.active)
		return 0;
	if (vc_cu_call(VC_CU_vcExportSlot, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0))
		return 0;
	c = (CUcontext)(uintptr_t)rp.value;
	return (uint64_t)(uintptr_t)c;
}

static void context_gone(uint64_t id)
{
	if (!id)
		return;
	vc_exptab_ctx_destroyed((CUcontext)(uintptr_t)id);
	vc_cu_params_forget();
	vc_cu_streams_forget();
	vc_cu_managed_ctx_gone(id);
	if (vc_cu_current() == id)
		vc_cu_set_current(0);
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	uint64_t id = primary_id(dev);
	struct vc_cu_rep_ctx st;
	CUresult rc = primary(VC_CU_cuDevicePrimaryCtxRelease_v2, dev, 0, NULL);

	if (rc == CUDA_SUCCESS && !primary(VC_CU_cuDevicePrimaryCtxGetState, dev, 0, &st) && !st.active)
		context_gone(id);
	return rc;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	uint64_t id = primary_id(dev);
	CUresult rc = primary(VC_CU_cuDevicePrimaryCtxReset_v2, dev, 0, NULL);

	if (rc == CUDA_SUCCESS)
		context_gone(id);
	return rc;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	struct vc_cu_rep_ctx rp;
	CUresult rc;

	uint64_t epoch = vc_cu_fast_primary_epoch();

	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	if (vc_cu_fast_primary(dev, flags, active)) /* unchanged since the host said it */
		return CUDA_SUCCESS;
	rc = primary(VC_CU_cuDevicePrimaryCtxGetState, dev, 0, &rp);
	if (rc == CUDA_SUCCESS) {
		*flags = rp.flags;
		*active = rp.active;
		vc_cu_fast_primary_put(dev, epoch, rp.flags, rp.active);
	}
	return rc;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	return primary(VC_CU_cuDevicePrimaryCtxSetFlags_v2, dev, flags, NULL);
}

/* A context was created on device @dev: pushed onto the calling thread's stack. */
static void created(uint64_t id, CUdevice dev)
{
	vc_cu_ctx_device(id, dev);
	if (t_depth < STACK_MAX && vc_cu_current())
		t_stack[t_depth++] = vc_cu_current();
	vc_cu_set_current(id);
}

/* A context with execution affinity parameters (cuCtxCreate_v3, _v4). */
static CUresult create_affinity(CUcontext *pctx, const CUexecAffinityParam *prm, int n, unsigned flags, CUdevice dev)
{
	struct vc_cu_req_ctx_affinity rq;
	struct vc_cu_rep_ctx rp;
	CUresult rc;

	if (n < 0 || (n && !prm))
		return CUDA_ERROR_INVALID_VALUE;
	/* One parameter per affinity type; the driver knows one type. */
	if ((unsigned)n > VC_CU_AFFINITY_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	rq.dev = dev;
	rq.flags = flags;
	rq.nparams = (uint32_t)n;
	for (int i = 0; i < n; i++) {
		rq.params[i].type = (int32_t)prm[i].type;
		rq.params[i].value = prm[i].param.smCount.val;
	}
	rc = vc_cu_call(VC_CU_cuCtxCreate_v3, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	*pctx = (CUcontext)(uintptr_t)rp.pctx;
	created(rp.pctx, dev);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
				CUdevice dev)
{
	struct vc_cu_rep_ctx rp;
	CUresult rc;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (ctxCreateParams) {
		/* Execution affinity is the host driver's; CIG (a graphics API's
		 * queue shared with CUDA) has no graphics device in a VM. */
		if (ctxCreateParams->cigParams)
			return CUDA_ERROR_NOT_SUPPORTED;
		return create_affinity(pctx, ctxCreateParams->execAffinityParams,
				       ctxCreateParams->numExecAffinityParams, flags, dev);
	}
	rc = primary(VC_CU_cuCtxCreate_v4, dev, flags, &rp);
	if (rc != CUDA_SUCCESS)
		return rc;
	*pctx = (CUcontext)(uintptr_t)rp.pctx;
	created(rp.pctx, dev);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
				unsigned int flags, CUdevice dev)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	return create_affinity(pctx, paramsArray, numParams, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return cuCtxCreate_v4(pctx, NULL, flags, dev);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
	struct vc_cu_req_ctx rq = {.target = (uint64_t)(uintptr_t)ctx};
	struct vc_cu_rep_ctx none;
	CUresult rc;

	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(VC_CU_cuCtxDestroy_v2, &rq, sizeof(rq), NULL, 0, &none, sizeof(none), NULL, 0, 0);
	if (rc == CUDA_SUCCESS) {
		context_gone(rq.target);
		/* Destroying the current context pops it. */
		if (!vc_cu_current() && t_depth)
			vc_cu_set_current(t_stack[--t_depth]);
	}
	return rc;
}

/* ---- usage counts (cuCtxAttach, cuCtxDetach: deprecated) ------------------------- */

/* Attachments beyond the creator's, per context; a context's last detach
 * destroys it, as natively its usage count reaching zero does. */
static struct {
	uint64_t ctx;
	unsigned n;
} g_att[CTX_MAP];

CUresult CUDAAPI cuCtxAttach(CUcontext *pctx, unsigned int flags)
{
	uint64_t cur = vc_cu_current();
	CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&g_map_mu);
	unsigned k = CTX_MAP;

	for (unsigned i = 0; i < CTX_MAP; i++)
		if (g_att[i].ctx == cur || (!g_att[i].ctx && k == CTX_MAP))
			k = i;
	for (unsigned i = 0; i < CTX_MAP; i++)
		if (g_att[i].ctx == cur)
			k = i;
	if (k < CTX_MAP) {
		g_att[k].ctx = cur;
		g_att[k].n++;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_map_mu);
	if (rc == CUDA_SUCCESS)
		*pctx = (CUcontext)(uintptr_t)cur;
	return rc;
}

CUresult CUDAAPI cuCtxDetach(CUcontext ctx)
{
	uint64_t id = (uint64_t)(uintptr_t)ctx;
	int attached = 0;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&g_map_mu);
	for (unsigned i = 0; i < CTX_MAP; i++)
		if (g_att[i].ctx == id && g_att[i].n) {
			if (--g_att[i].n == 0)
				g_att[i].ctx = 0;
			attached = 1;
			break;
		}
	pthread_mutex_unlock(&g_map_mu);
	return attached ? CUDA_SUCCESS : cuCtxDestroy_v2(ctx);
}
