/* SPDX-License-Identifier: MIT */
/*
 * ctx.c - contexts: which handles a context owns (they are forgotten with
 * it), the session's emulated primary contexts (one set per session), and
 * cuCtxCreate/cuCtxDestroy.
 */
#include <assert.h>
#include <stdint.h>

#include "cuda/exec_priv.h"

static_assert(sizeof(struct vc_cu_rep_ctx) <= VC_CU_REP_MAX, "reply fits");

/* ---- context ownership -------------------------------------------------------- */

/* Index of the context with id @id in the handle table, or UINT32_MAX. */
static uint32_t ctx_index(struct vc_cu_session *x, uint64_t id)
{
	void *real;

	if (!id || vc_cu_lookup(x, VC_H_CUCONTEXT, id, &real))
		return UINT32_MAX;
	return (uint32_t)(id & 0xffffffu);
}

/* Publish a handle created under the current context, owned by it. */
int vc_cu_publish_owned(struct vc_cu_session *x, int kind, void *real, uint64_t *id)
{
	return vc_cu_publish_child(x, kind, real, x->cur_id, id);
}

/* Forget context @id and every handle that lived in it. */
static void forget_context(struct vc_cu_session *x, uint64_t id)
{
	uint32_t ci = ctx_index(x, id);

	/* Its modules (and their functions), streams, events, ... */
	if (ci != UINT32_MAX)
		vc_cu_forget_owned(x, ci);
	if (x->cur_id == id)
		x->cur_id = UINT64_MAX; /* force the next vc_cu_enter() to set one */
	for (int d = 0; d < VC_CU_MAX_DEVICES; d++)
		if (x->primary[d] == id) {
			/* A primary context's handle outlives a reset natively (the
			 * runtime keeps it): the id stays, dormant until retained. */
			x->primary_refs[d] = 0;
			x->primary_flags[d] = 0;
			vc_cu_rebind(x, VC_H_CUCONTEXT, id, NULL);
			return;
		}
	vc_cu_forget(x, VC_H_CUCONTEXT, id);
}

/* ---- primary contexts (one set per session) and contexts ------------------------- */

int vc_cu_primary_get(struct vc_cu_session *x, int32_t dev, uint64_t *id)
{
	CUcontext c = NULL;
	CUdevice d;
	void *real = NULL;
	int rc;

	if (dev < 0 || dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	if (x->primary[dev] && !vc_cu_lookup(x, VC_H_CUCONTEXT, x->primary[dev], &real) && real) {
		*id = x->primary[dev];
		return 0;
	}
	if ((rc = x->drv->cuDeviceGet(&d, dev)))
		return rc;
	/* A context of the session's own stands in for the device's primary
	 * context: the server process's real primary context is shared by
	 * every session, and one client's fault must not reach another. */
	if ((rc = x->drv->cuCtxCreate_v4(&c, NULL, x->primary_flags[dev], d)))
		return rc;
	if (x->primary[dev]) /* a dormant primary context wakes with its old id */
		rc = vc_cu_rebind(x, VC_H_CUCONTEXT, x->primary[dev], c);
	else
		rc = vc_cu_publish(x, VC_H_CUCONTEXT, c, &x->primary[dev]);
	if (rc) {
		x->drv->cuCtxDestroy_v2(c);
		return rc;
	}
	*id = x->primary[dev];
	x->h[*id & 0xffffffu].owner = (uint32_t)(*id & 0xffffffu);
	x->cur_id = *id; /* cuCtxCreate made it current */
	return 0;
}

int vc_cu_manual_cuDevicePrimaryCtxRetain(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					  struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;
	struct vc_cu_rep_ctx rp = {0};
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_primary_get(x, rq.dev, &rp.pctx)))
		return rc;
	x->primary_refs[rq.dev]++;
	REPLY(rp);
	return 0;
}

static int destroy_context(struct vc_cu_session *x, uint64_t id)
{
	void *c;
	int rc;

	if ((rc = vc_cu_lookup(x, VC_H_CUCONTEXT, id, &c)))
		return rc;
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	vc_cu_sched_ctx_gone(x, c);
	vc_cu_sync_ctx_gone(x, c);
	vc_cu_texref_ctx_gone(x, id); /* cuTexRefCreate's references */
	rc = x->drv->cuCtxDestroy_v2(c);
	forget_context(x, id);
	vc_cu_quota_ctx_gone(x, id); /* its allocations went with it */
	vc_cu_managed_ctx_gone(x, id);
	vc_cu_arrays_ctx_gone(x, id);
	return rc;
}

int vc_cu_manual_cuDevicePrimaryCtxRelease_v2(struct vc_cu_session *x, const uint8_t *p,
					      uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;

	TAKE(rq);
	if (rq.dev < 0 || rq.dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!x->primary[rq.dev] || !x->primary_refs[rq.dev])
		return CUDA_ERROR_INVALID_CONTEXT;
	/* As natively: the last release destroys the primary context. */
	if (--x->primary_refs[rq.dev] == 0) {
		out->console = true;
		return destroy_context(x, x->primary[rq.dev]);
	}
	return 0;
}

int vc_cu_manual_cuDevicePrimaryCtxReset_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					    struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;

	TAKE(rq);
	void *real = NULL;

	if (rq.dev < 0 || rq.dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	if (x->primary[rq.dev] && !vc_cu_lookup(x, VC_H_CUCONTEXT, x->primary[rq.dev], &real) && real) {
		out->console = true;
		return destroy_context(x, x->primary[rq.dev]);
	}
	x->primary_flags[rq.dev] = 0;
	return 0;
}

int vc_cu_manual_cuDevicePrimaryCtxGetState(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					    struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;
	struct vc_cu_rep_ctx rp = {0};
	void *real = NULL;

	TAKE(rq);
	if (rq.dev < 0 || rq.dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	rp.flags = x->primary_flags[rq.dev];
	/* Active once retained, as natively; the context may exist earlier (the
	 * runtime asks for its handle through an export table first). */
	rp.active = x->primary[rq.dev] && x->primary_refs[rq.dev] &&
		    !vc_cu_lookup(x, VC_H_CUCONTEXT, x->primary[rq.dev], &real) && real;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuDevicePrimaryCtxSetFlags_v2(struct vc_cu_session *x, const uint8_t *p,
					       uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;

	(void)out;
	TAKE(rq);
	if (rq.dev < 0 || rq.dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	x->primary_flags[rq.dev] = rq.flags;
	/* Already created: apply them, as setting a live primary context's
	 * flags does natively. */
	void *real = NULL;

	if (x->primary[rq.dev] && !vc_cu_lookup(x, VC_H_CUCONTEXT, x->primary[rq.dev], &real) && real) {
		int rc = vc_cu_enter(x, x->primary[rq.dev]);

		return rc ? rc : (int)x->drv->cuCtxSetFlags(rq.flags);
	}
	return 0;
}

int vc_cu_manual_cuCtxCreate_v4(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;
	struct vc_cu_rep_ctx rp = {0};
	CUcontext c = NULL;
	CUdevice d;
	int rc;

	TAKE(rq);
	if ((rc = x->drv->cuDeviceGet(&d, rq.dev)))
		return rc;
	if ((rc = x->drv->cuCtxCreate_v4(&c, NULL, rq.flags, d)))
		return rc;
	if ((rc = vc_cu_publish(x, VC_H_CUCONTEXT, c, &rp.pctx))) {
		x->drv->cuCtxDestroy_v2(c);
		return rc;
	}
	x->h[rp.pctx & 0xffffffu].owner = (uint32_t)(rp.pctx & 0xffffffu);
	x->cur_id = rp.pctx;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuCtxDestroy_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				 struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;

	TAKE(rq);
	for (int d = 0; d < VC_CU_MAX_DEVICES; d++)
		if (rq.target && x->primary[d] == rq.target)
			return CUDA_ERROR_INVALID_CONTEXT; /* a primary context is released, not destroyed */
	out->console = true;
	return destroy_context(x, rq.target);
}
