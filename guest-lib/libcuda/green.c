/* SPDX-License-Identifier: MIT */
/*
 * green.c - device resources and green contexts, served by the host's driver
 * (host-backend/cuda/green.c). A CUdevResource the guest holds has the
 * driver's public part (type, SM counts) and, where the driver keeps its
 * internal bytes, the id of the host's copy (shared/vc_cuda_green.h): the
 * bytes only mean something to the host that made them. The library
 * remembers each green context's device and context, so that launch checks
 * know the device and a destroyed green context's streams and parameter
 * caches go with it. The rest (the conversion, events, streams, ids) is
 * generated.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "exptab.h"
#include "vc_cu_guest.h"
#include "vc_cuda_green.h"

#define GREEN_MAP 64

/* Green contexts of the process: their context and device (a lost entry
 * only means device 0's launch limits, as for contexts). */
static struct {
	uint64_t green, ctx;
	int dev;
} g_green[GREEN_MAP];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static unsigned slot_of(uint64_t green)
{
	return (unsigned)((green * 0x9e3779b97f4a7c15ull) >> 58) % GREEN_MAP;
}

static void to_wire(const CUdevResource *r, struct vc_cu_res *w)
{
	memset(w, 0, sizeof(*w));
	w->type = (int32_t)r->type;
	memcpy(&w->id, r->_internal_padding, sizeof(w->id));
	memcpy(w->u, (const uint8_t *)r + offsetof(CUdevResource, sm), VC_CU_RES_UNION);
}

static void from_wire(const struct vc_cu_res *w, CUdevResource *r)
{
	memset(r, 0, sizeof(*r));
	r->type = (CUdevResourceType)w->type;
	memcpy(r->_internal_padding, &w->id, sizeof(w->id));
	memcpy((uint8_t *)r + offsetof(CUdevResource, sm), w->u, VC_CU_RES_UNION);
}

static CUresult get(uint32_t op, uint64_t handle, int dev, CUdevResource *resource, CUdevResourceType type)
{
	struct vc_cu_req_res_get rq = {.handle = handle, .dev = dev, .type = (int32_t)type};
	struct vc_cu_rep_res_get rp;
	CUresult rc;

	if (!resource)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(op, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		from_wire(&rp.res, resource);
	return rc;
}

CUresult CUDAAPI cuDeviceGetDevResource(CUdevice device, CUdevResource *resource, CUdevResourceType type)
{
	return get(VC_CU_cuDeviceGetDevResource, 0, device, resource, type);
}

CUresult CUDAAPI cuCtxGetDevResource(CUcontext hCtx, CUdevResource *resource, CUdevResourceType type)
{
	return get(VC_CU_cuCtxGetDevResource, (uint64_t)(uintptr_t)hCtx, 0, resource, type);
}

CUresult CUDAAPI cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource *resource, CUdevResourceType type)
{
	return get(VC_CU_cuGreenCtxGetDevResource, (uint64_t)(uintptr_t)hCtx, 0, resource, type);
}

CUresult CUDAAPI cuDevSmResourceSplitByCount(CUdevResource *result, unsigned int *nbGroups, const CUdevResource *input,
					     CUdevResource *remaining, unsigned int useFlags, unsigned int minCount)
{
	struct vc_cu_req_res_split rq;
	struct vc_cu_rep_res_split rp = {0};
	struct vc_cu_res *w;
	size_t got = 0;
	CUresult rc;

	if (!nbGroups || !input)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	to_wire(input, &rq.input);
	rq.nb_groups = result ? *nbGroups : 0;
	rq.want_result = result != NULL;
	rq.want_remaining = remaining != NULL;
	rq.flags = useFlags;
	rq.min_count = minCount;
	w = malloc((VC_CU_SPLIT_MAX + 1) * sizeof(*w));
	if (!w)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = vc_cu_call_sized(VC_CU_cuDevSmResourceSplitByCount, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), w,
			      (VC_CU_SPLIT_MAX + 1) * sizeof(*w), &got, 0);
	if (rc != CUDA_SUCCESS)
		goto out;
	if (rp.total > VC_CU_SPLIT_MAX + 1 || rp.total < (result ? rp.nb_groups : 0) + (remaining != NULL) ||
	    (result && rp.nb_groups > *nbGroups)) {
		rc = CUDA_ERROR_UNKNOWN; /* not what this library asked for */
		goto out;
	}
	/* The rest of the groups, a reply's data at a time. */
	for (size_t have = got / sizeof(*w); have < rp.total; have += got / sizeof(*w)) {
		struct vc_cu_req_res_read rr = {.first = (uint32_t)have};

		rc = vc_cu_call_sized(VC_CU_vcGreenSplitRead, &rr, sizeof(rr), NULL, 0, NULL, 0, w + have,
				      (rp.total - have) * sizeof(*w), &got, 0);
		if (rc == CUDA_SUCCESS && got < sizeof(*w))
			rc = CUDA_ERROR_UNKNOWN;
		if (rc != CUDA_SUCCESS)
			goto out;
	}
	for (uint32_t i = 0; result && i < rp.nb_groups; i++)
		from_wire(&w[i], &result[i]);
	if (remaining)
		from_wire(&w[rp.total - 1], remaining);
	*nbGroups = rp.nb_groups;
out:
	free(w);
	return rc;
}

CUresult CUDAAPI cuDevResourceGenerateDesc(CUdevResourceDesc *phDesc, CUdevResource *resources, unsigned int nbResources)
{
	struct vc_cu_req_res_desc rq = {.count = nbResources};
	struct vc_cu_rep_res_desc rp;
	struct vc_cu_res w[VC_CU_RES_DESC_MAX];
	CUresult rc;

	if (!phDesc || (!resources && nbResources))
		return CUDA_ERROR_INVALID_VALUE;
	/* More resources than one request carries: a limit of vcuda's (a
	 * descriptor normally takes a group or two of one split). */
	if (nbResources > VC_CU_RES_DESC_MAX)
		return CUDA_ERROR_NOT_SUPPORTED;
	for (unsigned i = 0; i < nbResources; i++)
		to_wire(&resources[i], &w[i]);
	rc = vc_cu_call(VC_CU_cuDevResourceGenerateDesc, &rq, sizeof(rq), w, nbResources * sizeof(w[0]), &rp, sizeof(rp),
			NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*phDesc = (CUdevResourceDesc)(uintptr_t)rp.desc;
	return rc;
}

CUresult CUDAAPI cuGreenCtxCreate(CUgreenCtx *phCtx, CUdevResourceDesc desc, CUdevice dev, unsigned int flags)
{
	struct vc_cu_req_green rq = {.handle = (uint64_t)(uintptr_t)desc, .dev = dev, .flags = flags};
	struct vc_cu_rep_green rp;
	CUresult rc;
	unsigned k;

	if (!phCtx)
		return CUDA_ERROR_INVALID_VALUE;
	rc = vc_cu_call(VC_CU_cuGreenCtxCreate, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	*phCtx = (CUgreenCtx)(uintptr_t)rp.green;
	vc_cu_ctx_device(rp.context, dev);
	k = slot_of(rp.green);
	pthread_mutex_lock(&g_mu);
	g_green[k].green = rp.green;
	g_green[k].ctx = rp.context;
	g_green[k].dev = dev;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGreenCtxDestroy(CUgreenCtx hCtx)
{
	struct vc_cu_req_green rq = {.handle = (uint64_t)(uintptr_t)hCtx};
	struct vc_cu_rep_green none;
	uint64_t ctx = 0;
	CUresult rc;
	unsigned k = slot_of(rq.handle);

	rc = vc_cu_call(VC_CU_cuGreenCtxDestroy, &rq, sizeof(rq), NULL, 0, &none, sizeof(none), NULL, 0, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g_mu);
	if (g_green[k].green == rq.handle) {
		ctx = g_green[k].ctx;
		g_green[k].green = 0;
	}
	pthread_mutex_unlock(&g_mu);
	/* Its streams (per-thread ones included) and what was loaded in its
	 * context are gone with it. Memory stays: it is the primary context's. */
	if (ctx)
		vc_exptab_ctx_destroyed((CUcontext)(uintptr_t)ctx);
	vc_cu_params_forget();
	vc_cu_streams_forget();
	return CUDA_SUCCESS;
}

/* After cuCtxFromGreenCtx (generated): the context is on the green context's device. */
CUresult vc_cu_green_ctx_post(CUcontext *pContext, CUgreenCtx hCtx)
{
	unsigned k = slot_of((uint64_t)(uintptr_t)hCtx);
	int dev = -1;

	pthread_mutex_lock(&g_mu);
	if (g_green[k].green == (uint64_t)(uintptr_t)hCtx)
		dev = g_green[k].dev;
	pthread_mutex_unlock(&g_mu);
	if (dev >= 0)
		vc_cu_ctx_device((uint64_t)(uintptr_t)*pContext, dev);
	return CUDA_SUCCESS;
}
