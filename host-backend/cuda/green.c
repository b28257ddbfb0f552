/* SPDX-License-Identifier: MIT */
/*
 * green.c - green contexts and device resources (cuDeviceGetDevResource,
 * cuDevSmResourceSplitByCount, cuDevResourceGenerateDesc, cuGreenCtxCreate,
 * cuGreenCtxDestroy; the rest is generated). The driver does the work.
 *
 * Resources: a CUdevResource is a struct whose internal bytes belong to the
 * driver. The host keeps every resource it hands out in a table of the
 * session's and hands out its public part (type, union) with the entry's id
 * instead of those bytes; a resource coming back is looked up by id and must
 * still have the public part it was given (the driver's own words: it is not
 * to be modified). So the driver only ever sees resources it made.
 *
 * Green contexts: a green context (VC_H_CUGREENCTX) owns its streams and the
 * context cuCtxFromGreenCtx converts it into, which the host converts at
 * creation (its id is then the same however the guest reaches it: the
 * conversion, cuStreamGetCtx of a green stream). Destroying the green context
 * forgets them all. A green context retains the device's primary context (of
 * the worker process); so that memory allocated in it lives as natively,
 * where the runtime keeps that context retained, the session retains it too
 * from its first green context to its end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"
#include "vc_cuda_green.h"

/* Resources a session remembers (the oldest is forgotten past this). */
#define RES_BITS 10
#define RES_MAX (1u << RES_BITS)

struct vc_cu_green {
	struct {
		uint64_t id; /* 0: empty */
		CUdevResource r;
	} res[RES_MAX];
	uint64_t seq;   /* resources handed out so far */
	struct vc_cu_res split[VC_CU_SPLIT_MAX + 1]; /* the last split's groups, then its remainder */
	uint32_t nsplit;
};

static struct vc_cu_green *state(struct vc_cu_session *x)
{
	if (!x->green)
		x->green = calloc(1, sizeof(*x->green));
	return x->green;
}

/* ---- resources: the host keeps them, the guest names them -------------------------- */

/* Hand out driver resource @r as @w: its public part, and the id of its entry. */
static void res_issue(struct vc_cu_green *g, const CUdevResource *r, struct vc_cu_res *w)
{
	uint32_t idx;

	memset(w, 0, sizeof(*w));
	w->type = (int32_t)r->type;
	memcpy(w->u, (const uint8_t *)r + offsetof(CUdevResource, sm), VC_CU_RES_UNION);
	/* The same resource again (a device's, asked twice) keeps its entry. */
	for (idx = 0; idx < RES_MAX; idx++)
		if (g->res[idx].id && !memcmp(&g->res[idx].r, r, sizeof(*r))) {
			w->id = g->res[idx].id;
			return;
		}
	g->seq++;
	idx = (uint32_t)(g->seq & (RES_MAX - 1));
	g->res[idx].id = (g->seq << RES_BITS) | idx; /* never 0: seq starts at 1 */
	g->res[idx].r = *r;
	w->id = g->res[idx].id;
}

/*
 * The driver's resource behind @w, in *@r: CUDA_ERROR_INVALID_RESOURCE_TYPE
 * for a type that is not one (the driver's answer), CUDA_ERROR_INVALID_VALUE
 * for a resource this session was never given, @changed_rc for one whose
 * public part was changed (the H100's driver 580 answers a descriptor of a
 * group with more SMs than its split gave it with
 * CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION).
 */
static int res_take(struct vc_cu_session *x, const struct vc_cu_res *w, CUdevResource *r, int changed_rc)
{
	struct vc_cu_green *g = x->green;
	uint32_t idx = (uint32_t)(w->id & (RES_MAX - 1));

	if (w->type != CU_DEV_RESOURCE_TYPE_SM)
		return CUDA_ERROR_INVALID_RESOURCE_TYPE;
	if (!g || !w->id || g->res[idx].id != w->id || (int32_t)g->res[idx].r.type != w->type)
		return CUDA_ERROR_INVALID_VALUE;
	if (memcmp((const uint8_t *)&g->res[idx].r + offsetof(CUdevResource, sm), w->u, VC_CU_RES_UNION))
		return changed_rc;
	*r = g->res[idx].r;
	return 0;
}

/* cuDeviceGetDevResource, cuCtxGetDevResource, cuGreenCtxGetDevResource (@which: 0, 1, 2). */
static int res_get(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out, int which)
{
	struct vc_cu_req_res_get rq;
	struct vc_cu_rep_res_get rp;
	struct vc_cu_green *g;
	CUdevResource r;
	void *h = NULL;
	int rc = CUDA_ERROR_INVALID_VALUE;

	TAKE(rq);
	if (!(g = state(x)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&r, 0, sizeof(r));
	if (which == 0)
		rc = x->drv->cuDeviceGetDevResource(rq.dev, &r, (CUdevResourceType)rq.type);
	else if (which == 1 && !(rc = vc_cu_lookup(x, VC_H_CUCONTEXT, rq.handle, &h)))
		rc = x->drv->cuCtxGetDevResource(h, &r, (CUdevResourceType)rq.type);
	else if (which == 2 && !(rc = vc_cu_lookup(x, VC_H_CUGREENCTX, rq.handle, &h)))
		rc = x->drv->cuGreenCtxGetDevResource(h, &r, (CUdevResourceType)rq.type);
	if (rc)
		return rc;
	res_issue(g, &r, &rp.res);
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuDeviceGetDevResource(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					struct vc_cu_out *out)
{
	return res_get(x, p, len, out, 0);
}

int vc_cu_manual_cuCtxGetDevResource(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				     struct vc_cu_out *out)
{
	return res_get(x, p, len, out, 1);
}

int vc_cu_manual_cuGreenCtxGetDevResource(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					  struct vc_cu_out *out)
{
	return res_get(x, p, len, out, 2);
}

/* The last split's resources from @first on, as many as the reply data holds. */
static void split_page(struct vc_cu_green *g, uint32_t first, struct vc_cu_out *out)
{
	uint32_t n = 0;

	while (out->data && first + n < g->nsplit && (uint64_t)(n + 1) * sizeof(struct vc_cu_res) <= out->data_cap) {
		memcpy(out->data + (size_t)n * sizeof(struct vc_cu_res), &g->split[first + n], sizeof(struct vc_cu_res));
		n++;
	}
	out->data_len = n * (uint32_t)sizeof(struct vc_cu_res);
}

int vc_cu_manual_cuDevSmResourceSplitByCount(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					     struct vc_cu_out *out)
{
	struct vc_cu_req_res_split rq;
	struct vc_cu_rep_res_split rp = {0};
	struct vc_cu_green *g;
	CUdevResource in, rem, *res = NULL;
	unsigned int nb;
	int rc;

	TAKE(rq);
	if (!(g = state(x)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = res_take(x, &rq.input, &in, CUDA_ERROR_INVALID_VALUE)))
		return rc;
	/* No GPU has more SMs than this: a larger array cannot get more groups. */
	nb = rq.nb_groups > VC_CU_SPLIT_MAX ? VC_CU_SPLIT_MAX : rq.nb_groups;
	if (rq.want_result && !(res = calloc(nb ? nb : 1, sizeof(*res))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&rem, 0, sizeof(rem));
	rc = x->drv->cuDevSmResourceSplitByCount(res, &nb, &in, rq.want_remaining ? &rem : NULL, rq.flags,
						 rq.min_count);
	if (rc)
		goto out;
	if (rq.want_result && (nb > VC_CU_SPLIT_MAX || nb > rq.nb_groups)) {
		rc = CUDA_ERROR_UNKNOWN; /* more than it was given room for */
		goto out;
	}
	g->nsplit = 0;
	for (uint32_t i = 0; res && i < nb; i++)
		res_issue(g, &res[i], &g->split[g->nsplit++]);
	if (rq.want_remaining)
		res_issue(g, &rem, &g->split[g->nsplit++]);
	rp.nb_groups = nb;
	rp.total = g->nsplit;
	split_page(g, 0, out);
	REPLY(rp);
out:
	free(res);
	return rc;
}

int vc_cu_manual_vcGreenSplitRead(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_res_read rq;

	TAKE(rq);
	if (!x->green || rq.first >= x->green->nsplit)
		return CUDA_ERROR_INVALID_VALUE;
	split_page(x->green, rq.first, out);
	return 0;
}

int vc_cu_manual_cuDevResourceGenerateDesc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					   struct vc_cu_out *out)
{
	struct vc_cu_req_res_desc rq;
	struct vc_cu_rep_res_desc rp = {0};
	CUdevResource res[VC_CU_RES_DESC_MAX];
	CUdevResourceDesc d = NULL;
	int rc;

	TAKE(rq);
	if (rq.count > VC_CU_RES_DESC_MAX || (uint64_t)rq.count * sizeof(struct vc_cu_res) > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	for (uint32_t i = 0; i < rq.count; i++) {
		struct vc_cu_res w;

		memcpy(&w, p + sizeof(rq) + (size_t)i * sizeof(w), sizeof(w));
		if ((rc = res_take(x, &w, &res[i], CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)))
			return rc;
	}
	if ((rc = x->drv->cuDevResourceGenerateDesc(&d, res, rq.count)))
		return rc;
	/* Descriptors have no destroy call: the worker's end frees them. */
	if ((rc = vc_cu_publish(x, VC_H_CUDEVRESOURCEDESC, d, &rp.desc)))
		return rc;
	REPLY(rp);
	return 0;
}

/* ---- green contexts ------------------------------------------------------------------ */

int vc_cu_manual_cuGreenCtxCreate(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_green rq;
	struct vc_cu_rep_green rp = {0};
	struct vc_cu_green *g;
	CUgreenCtx gc = NULL;
	CUcontext c = NULL;
	void *desc;
	int rc;

	TAKE(rq);
	if (!(g = state(x)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = vc_cu_lookup(x, VC_H_CUDEVRESOURCEDESC, rq.handle, &desc)))
		return rc;
	if ((rc = x->drv->cuGreenCtxCreate(&gc, desc, rq.dev, rq.flags)))
		return rc;
	if ((rc = x->drv->cuCtxFromGreenCtx(&c, gc)))
		goto fail;
	if ((rc = vc_cu_publish(x, VC_H_CUGREENCTX, gc, &rp.green)))
		goto fail;
	if ((rc = vc_cu_publish_child(x, VC_H_CUCONTEXT, c, rp.green, &rp.context))) {
		vc_cu_forget(x, VC_H_CUGREENCTX, rp.green);
		goto fail;
	}
	/* The device's primary context, as the runtime would hold it natively
	 * (once per session and device; released at the session's end). */
	if (rq.dev >= 0 && rq.dev < VC_CU_MAX_DEVICES && !x->green_primary[rq.dev]) {
		CUcontext pc = NULL;

		if (x->drv->cuDevicePrimaryCtxRetain(&pc, rq.dev) == CUDA_SUCCESS)
			x->green_primary[rq.dev] = pc;
	}
	REPLY(rp);
	return 0;
fail:
	x->drv->cuGreenCtxDestroy(gc);
	return rc;
}

/* The context green context @gc converts into, or NULL. */
static CUcontext green_context(struct vc_cu_session *x, CUgreenCtx gc)
{
	CUcontext c = NULL;

	return gc && x->drv->cuCtxFromGreenCtx(&c, gc) == CUDA_SUCCESS ? c : NULL;
}

/* Green context @gc goes: nothing of the session's may wait on its context. */
static void green_going(struct vc_cu_session *x, CUgreenCtx gc)
{
	CUcontext c = green_context(x, gc);
	uint64_t cid;

	if (!c)
		return;
	vc_cu_sched_ctx_gone(x, c);
	vc_cu_sync_ctx_gone(x, c);
	if (vc_cu_find(x, VC_H_CUCONTEXT, c, &cid) == 0 && x->cur_id == cid)
		x->cur_id = UINT64_MAX; /* the next vc_cu_enter() sets one */
}

int vc_cu_manual_cuGreenCtxDestroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_green rq;
	void *gc;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_lookup(x, VC_H_CUGREENCTX, rq.handle, &gc)))
		return rc;
	green_going(x, gc);
	out->console = true;
	/* Natively its streams are not destroyed (they answer
	 * CUDA_ERROR_CONTEXT_IS_DESTROYED afterwards): here their ids go with it. */
	if ((rc = x->drv->cuGreenCtxDestroy(gc)))
		return rc;
	vc_cu_forget(x, VC_H_CUGREENCTX, rq.handle);
	return 0;
}

void vc_cu_green_close(struct vc_cu_session *x)
{
	/* Streams made on a green context (or in its context) first: the
	 * driver does not destroy them with it. Then the green contexts, then
	 * the primary contexts the session retained for them. */
	for (uint32_t i = 0; i < x->nh; i++) {
		struct vc_cu_handle *h = &x->h[i];
		uint32_t o = h->owner, oo;

		if (!h->live || h->kind != VC_H_CUSTREAM || !h->real || o >= x->nh)
			continue;
		oo = x->h[o].owner;
		if (x->h[o].kind == VC_H_CUGREENCTX ||
		    (x->h[o].kind == VC_H_CUCONTEXT && oo < x->nh && oo != o && x->h[oo].kind == VC_H_CUGREENCTX))
			x->drv->cuStreamDestroy_v2(h->real);
	}
	for (uint32_t i = 0; i < x->nh; i++) {
		struct vc_cu_handle *h = &x->h[i];

		if (!h->live || h->kind != VC_H_CUGREENCTX || !h->real)
			continue;
		x->drv->cuGreenCtxDestroy(h->real);
		vc_cu_forget_slot(x, i); /* and its context: never cuCtxDestroy'd */
	}
	for (int d = 0; d < VC_CU_MAX_DEVICES; d++)
		if (x->green_primary[d]) {
			x->drv->cuDevicePrimaryCtxRelease_v2(d);
			x->green_primary[d] = NULL;
		}
	free(x->green);
	x->green = NULL;
}
