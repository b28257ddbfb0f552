/* SPDX-License-Identifier: MIT */
/*
 * texref.c - legacy texture and surface references (deprecated, still served
 * by the CUDA 13 driver to PTX that declares .texref or .surfref): the part
 * the generator cannot describe. The rest (module getters, cuTexRefCreate,
 * formats, modes, arrays bound) is generated from tools/gen/cuda_api.py.
 *
 * A reference is a handle of the session's table: a module's belongs to the
 * module (it goes when the module is unloaded), cuTexRefCreate's to the
 * context current then. Only those can be destroyed, and they are destroyed
 * before their context goes and when the session closes. An address bound is
 * checked first as device memory of the session, over the whole extent a
 * fetch may read (1D: the bytes bound; 2D: every row up to the last texel).
 * Arrays read back are answered only by the ids the session gave them: the
 * driver still names an array the program destroyed, which must never come
 * back as a handle.
 */
#include "cuda/exec_priv.h"
#include "vc_cuda_array.h"
#include "vc_cuda_texref.h"

/* ---- destruction ------------------------------------------------------------------- */

/* Whether table slot @i is a reference the program created (its owner a context). */
static bool created(struct vc_cu_session *x, uint32_t i)
{
	const struct vc_cu_handle *h = &x->h[i];

	return h->live && h->real && h->kind == VC_H_CUTEXREF && h->owner < x->nh && x->h[h->owner].live &&
	       x->h[h->owner].kind == VC_H_CUCONTEXT;
}

int vc_cu_manual_cuTexRefDestroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_handle rq;
	void *real;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUTEXREF, rq.handle, &real)))
		return rc;
	/* A module's reference is the module's: destroying it alone would
	 * leave the module holding freed memory. */
	if (real && !created(x, (uint32_t)(rq.handle & 0xffffffu)))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuTexRefDestroy(real)))
		return rc;
	vc_cu_forget(x, VC_H_CUTEXREF, rq.handle);
	return 0;
}

/* Destroy the references context @ctx (an id) owns, inside it; NULL: every created one. */
static void destroy_created(struct vc_cu_session *x, const uint64_t *ctx)
{
	for (uint32_t i = 0; i < x->nh; i++) {
		uint32_t o = x->h[i].owner;

		if (!created(x, i) || (ctx && o != (uint32_t)(*ctx & 0xffffffu)))
			continue;
		x->cur_id = UINT64_MAX; /* the current context changes under vc_cu_enter() */
		if (x->drv->cuCtxSetCurrent(x->h[o].real) == CUDA_SUCCESS)
			x->drv->cuTexRefDestroy(x->h[i].real);
		vc_cu_forget_slot(x, i);
	}
}

void vc_cu_texref_ctx_gone(struct vc_cu_session *x, uint64_t ctx)
{
	destroy_created(x, &ctx);
}

void vc_cu_texref_close(struct vc_cu_session *x)
{
	destroy_created(x, NULL);
}

/* ---- binding addresses ------------------------------------------------------------- */

int vc_cu_manual_cuTexRefSetAddress_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				       struct vc_cu_out *out)
{
	struct vc_cu_req_texref_addr rq;
	struct vc_cu_rep_texref_addr rp = {0};
	size_t off = 0;
	void *tr;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUTEXREF, rq.texref, &tr)))
		return rc;
	/* Fetches read [dptr, dptr + bytes) (from the base the driver aligns
	 * down, within the same allocation): the session's memory or refused,
	 * as an address the driver does not know is. Nothing at 0 unbinds. */
	if ((rq.dptr || rq.bytes) && (rc = vc_cu_check_range(x, rq.dptr, rq.bytes)))
		return rc;
	if ((rc = x->drv->cuTexRefSetAddress_v2(&off, tr, (CUdeviceptr)rq.dptr, (size_t)rq.bytes)))
		return rc;
	rp.offset = off;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuTexRefSetAddress2D_v3(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					 struct vc_cu_out *out)
{
	struct vc_cu_req_texref_addr rq;
	struct vc_cu_rep_texref_addr rp = {0};
	CUDA_ARRAY_DESCRIPTOR d;
	uint64_t row, extent;
	uint32_t e;
	void *tr;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUTEXREF, rq.texref, &tr)))
		return rc;
	/* A fetch at (x, y) reads dptr + y * pitch + x * element: the extent
	 * ends after the last row's last texel. Unknown formats and channel
	 * counts are refused as the driver refuses them. */
	e = rq.channels <= 4 ? vc_cu_array_elem_bytes(rq.format, rq.channels) : 0;
	if (!e || !rq.width || __builtin_mul_overflow(rq.width, (uint64_t)e, &row) ||
	    __builtin_mul_overflow(rq.pitch, (rq.height ? rq.height : 1) - 1, &extent) ||
	    __builtin_add_overflow(extent, row, &extent))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_check_range(x, rq.dptr, extent)))
		return rc;
	memset(&d, 0, sizeof(d));
	d.Width = (size_t)rq.width;
	d.Height = (size_t)rq.height;
	d.Format = (CUarray_format)rq.format;
	d.NumChannels = rq.channels;
	if ((rc = x->drv->cuTexRefSetAddress2D_v3(tr, &d, (CUdeviceptr)rq.dptr, (size_t)rq.pitch)))
		return rc;
	REPLY(rp);
	return 0;
}

/* ---- the border colour ------------------------------------------------------------- */

int vc_cu_manual_cuTexRefSetBorderColor(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					struct vc_cu_out *out)
{
	struct vc_cu_req_texref_border rq;
	float color[4];
	void *tr;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUTEXREF, rq.texref, &tr)))
		return rc;
	memcpy(color, rq.color, sizeof(color));
	return x->drv->cuTexRefSetBorderColor(tr, color);
}

int vc_cu_manual_cuTexRefGetBorderColor(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					struct vc_cu_out *out)
{
	struct vc_cu_req_handle rq;
	struct vc_cu_rep_texref_border rp;
	float color[4] = {0};
	void *tr;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUTEXREF, rq.handle, &tr)))
		return rc;
	if ((rc = x->drv->cuTexRefGetBorderColor(color, tr)))
		return rc;
	memcpy(rp.color, color, sizeof(rp.color));
	REPLY(rp);
	return 0;
}

/* ---- the arrays bound -------------------------------------------------------------- */

enum bound { TEX_ARRAY, TEX_MIPMAP, SURF_ARRAY };

static int bound(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out, enum bound what)
{
	struct vc_cu_req_handle rq;
	struct vc_cu_rep_texref_array rp = {0};
	void *ref, *arr = NULL;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) ||
	    (rc = vc_cu_lookup(x, what == SURF_ARRAY ? VC_H_CUSURFREF : VC_H_CUTEXREF, rq.handle, &ref)))
		return rc;
	if (what == TEX_ARRAY)
		rc = x->drv->cuTexRefGetArray((CUarray *)&arr, ref);
	else if (what == TEX_MIPMAP)
		rc = x->drv->cuTexRefGetMipmappedArray((CUmipmappedArray *)&arr, ref);
	else
		rc = x->drv->cuSurfRefGetArray((CUarray *)&arr, ref);
	if (rc)
		return rc;
	/* An array the program destroyed has no id any more: as if none were
	 * bound (the driver's answer for a reference bound to no array). */
	if (arr && vc_cu_find(x, what == TEX_MIPMAP ? VC_H_CUMIPMAPPEDARRAY : VC_H_CUARRAY, arr, &rp.handle))
		return CUDA_ERROR_INVALID_VALUE;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuTexRefGetArray(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	return bound(x, p, len, out, TEX_ARRAY);
}

int vc_cu_manual_cuTexRefGetMipmappedArray(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					   struct vc_cu_out *out)
{
	return bound(x, p, len, out, TEX_MIPMAP);
}

int vc_cu_manual_cuSurfRefGetArray(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	return bound(x, p, len, out, SURF_ARRAY);
}
