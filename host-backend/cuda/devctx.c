/* SPDX-License-Identifier: MIT */
/*
 * devctx.c - contexts with execution affinity (cuCtxCreate_v3, and
 * cuCtxCreate_v4 with affinity parameters), a context's affinity, and the
 * device's atomic capabilities: calls whose arguments are arrays.
 */
#include <string.h>

#include "cuda/exec_priv.h"

int vc_cu_manual_cuCtxCreate_v3(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_ctx_affinity rq;
	struct vc_cu_rep_ctx rp = {0};
	CUexecAffinityParam prm[VC_CU_AFFINITY_MAX];
	CUctxCreateParams cp;
	CUcontext c = NULL;
	CUdevice d;
	int rc;

	TAKE(rq);
	if (rq.nparams > VC_CU_AFFINITY_MAX)
		return -VC_FATAL_PAYLOAD;
	memset(prm, 0, sizeof(prm));
	for (uint32_t i = 0; i < rq.nparams; i++) {
		prm[i].type = (CUexecAffinityType)rq.params[i].type;
		prm[i].param.smCount.val = rq.params[i].value;
	}
	memset(&cp, 0, sizeof(cp));
	cp.execAffinityParams = rq.nparams ? prm : NULL;
	cp.numExecAffinityParams = (int)rq.nparams;
	if ((rc = x->drv->cuDeviceGet(&d, rq.dev)))
		return rc;
	if ((rc = x->drv->cuCtxCreate_v4(&c, &cp, rq.flags, d)))
		return rc;
	if ((rc = vc_cu_publish(x, VC_H_CUCONTEXT, c, &rp.pctx))) {
		x->drv->cuCtxDestroy_v2(c);
		return rc;
	}
	x->h[rp.pctx & 0xffffffu].owner = (uint32_t)(rp.pctx & 0xffffffu);
	x->cur_id = rp.pctx; /* made current, as cuCtxCreate does */
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuCtxGetExecAffinity(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_exec_affinity rq;
	struct vc_cu_rep_exec_affinity rp = {0};
	CUexecAffinityParam a;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	memset(&a, 0, sizeof(a));
	if ((rc = x->drv->cuCtxGetExecAffinity(&a, (CUexecAffinityType)rq.type)))
		return rc;
	rp.type = (int32_t)a.type;
	rp.value = a.param.smCount.val;
	REPLY(rp);
	return 0;
}

static int atomic_caps(struct vc_cu_session *x, bool p2p, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_atomic_caps rq;
	struct vc_cu_rep_atomic_caps rp;
	CUatomicOperation ops[VC_CU_ATOMIC_OPS_MAX];
	unsigned int caps[VC_CU_ATOMIC_OPS_MAX];
	CUdevice s, d = 0;
	int rc;

	TAKE(rq);
	if (rq.count > VC_CU_ATOMIC_OPS_MAX)
		return -VC_FATAL_PAYLOAD;
	if ((rc = x->drv->cuDeviceGet(&s, rq.src)) || (p2p && (rc = x->drv->cuDeviceGet(&d, rq.dst))))
		return rc;
	for (uint32_t i = 0; i < rq.count; i++)
		ops[i] = (CUatomicOperation)rq.ops[i];
	memset(caps, 0, sizeof(caps));
	rc = p2p ? x->drv->cuDeviceGetP2PAtomicCapabilities(caps, rq.count ? ops : NULL, rq.count, s, d)
		    : x->drv->cuDeviceGetHostAtomicCapabilities(caps, rq.count ? ops : NULL, rq.count, s);
	if (rc)
		return rc;
	memset(&rp, 0, sizeof(rp));
	for (uint32_t i = 0; i < rq.count; i++)
		rp.caps[i] = caps[i];
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuDeviceGetHostAtomicCapabilities(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						   struct vc_cu_out *out)
{
	return atomic_caps(x, false, p, len, out);
}

int vc_cu_manual_cuDeviceGetP2PAtomicCapabilities(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						  struct vc_cu_out *out)
{
	return atomic_caps(x, true, p, len, out);
}
