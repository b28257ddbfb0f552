/* SPDX-License-Identifier: MIT */
/*
 * array.c - CUDA arrays, mipmapped arrays, texture and surface objects.
 *
 * Arrays and mipmapped arrays are handles of the session's table, owned by
 * the context that made them (forgotten with it). Creating one is charged to
 * the quota by its memory requirements, asked of the driver on a twin with
 * deferred mapping (which takes no memory) before the real one is made, and
 * never less than its elements; destroying it refunds exactly that. A
 * plane's or a mipmap level's array belongs to its parent: it is forgotten
 * with it and cannot be destroyed on its own.
 *
 * Texture and surface objects are the driver's values, handed to the guest
 * as they are (kernels take them as parameters); the session keeps a table
 * of the values it made, and any other value is CUDA_ERROR_INVALID_VALUE
 * without reaching the driver. Resource descriptors carry ids where CUDA has
 * handles: each is looked up, and each device range checked as this
 * session's. At close, objects are destroyed first, then arrays.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"
#include "cuda/memmisc.h"
#include "vc_cuda_array.h"

#define MAX_OBJECTS (1u << 20)

struct texobj {
	uint64_t value;
	uint64_t ctx;    /* the context id current at creation */
	uint64_t res_id; /* the array or mipmapped array id of its resource, 0: none */
	bool surf;
};

/* An array that belongs to another: a plane, or a mipmap level. */
struct subarr {
	uint64_t id, parent;
};

struct vc_cu_arrays {
	struct texobj *obj;
	uint32_t nobj, capobj;
	struct subarr *sub;
	uint32_t nsub, capsub;
};

static struct vc_cu_arrays *state(struct vc_cu_session *x)
{
	if (!x->arr)
		x->arr = calloc(1, sizeof(*x->arr));
	return x->arr;
}

/* Grow @*v (of @*cap elements of @size bytes) to hold one more. 0 or -1. */
static int grow(void **v, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c = *cap ? *cap * 2 : 32;
	void *nv;

	if (n < *cap)
		return 0;
	if (c > MAX_OBJECTS || !(nv = realloc(*v, (size_t)c * size)))
		return -1;
	*v = nv;
	*cap = c;
	return 0;
}

/* The quota table's key for an array: never a device address (bit 63). */
static uint64_t qkey(const void *real)
{
	return (uint64_t)(uintptr_t)real | (1ull << 63);
}

/* Publish @real as a handle owned by the current context (forgotten with
 * it), as ctx.c publishes owned handles: ctx.c calls this file when a
 * context goes, so this file does not call ctx.c. */
static int publish_owned(struct vc_cu_session *x, int kind, void *real, uint64_t *id)
{
	void *ctx;
	int rc = vc_cu_publish(x, kind, real, id);

	if (rc == 0 && *id)
		x->h[*id & 0xffffffu].owner = x->cur_id && !vc_cu_lookup(x, VC_H_CUCONTEXT, x->cur_id, &ctx)
						      ? (uint32_t)(x->cur_id & 0xffffffu) : UINT32_MAX;
	return rc;
}

/* ---- creation and its charge ------------------------------------------------------ */

static uint64_t shrink(uint64_t v, unsigned l)
{
	return v ? (v >> l ? v >> l : 1) : 0;
}

/* The least an array of @d with @levels levels takes: its elements. */
static int least_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels, uint64_t *out)
{
	uint64_t e = vc_cu_array_elem_bytes(d->Format, d->NumChannels), total = 0;
	bool layers = d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);

	if (!e)
		e = 1; /* planar and block-compressed formats: the twin tells */
	for (unsigned l = 0; l < (levels ? levels : 1) && l < 64; l++) {
		uint64_t w = shrink(d->Width, l), h = shrink(d->Height, l), z = layers ? d->Depth : shrink(d->Depth, l), b;

		if (__builtin_mul_overflow(w, h ? h : 1, &b) || __builtin_mul_overflow(b, z ? z : 1, &b) ||
		    __builtin_mul_overflow(b, e, &b) || __builtin_add_overflow(total, b, &total))
			return CUDA_ERROR_INVALID_VALUE; /* beyond any array the driver makes */
	}
	*out = total;
	return 0;
}

/* What the driver says an array (or mipmapped array) like @d needs, asked of
 * a twin made with deferred mapping, which holds no memory; 0 if unknown. */
static uint64_t requirement(struct vc_cu_session *x, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels, bool mip)
{
	CUDA_ARRAY3D_DESCRIPTOR t = *d;
	CUDA_ARRAY_MEMORY_REQUIREMENTS r;
	CUmipmappedArray m;
	CUdevice dev;
	CUarray a;
	int rc;

	memset(&r, 0, sizeof(r));
	t.Flags |= CUDA_ARRAY3D_DEFERRED_MAPPING;
	if (x->drv->cuCtxGetDevice(&dev))
		return 0;
	if (mip) {
		if (x->drv->cuMipmappedArrayCreate(&m, &t, levels))
			return 0;
		rc = x->drv->cuMipmappedArrayGetMemoryRequirements(&r, m, dev);
		x->drv->cuMipmappedArrayDestroy(m);
	} else {
		if (x->drv->cuArray3DCreate_v2(&a, &t))
			return 0;
		rc = x->drv->cuArrayGetMemoryRequirements(&r, a, dev);
		x->drv->cuArrayDestroy(a);
	}
	return rc ? 0 : r.size;
}

static int create(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out, uint32_t kind)
{
	struct vc_cu_req_array_create rq;
	struct vc_cu_rep_array rp = {0};
	CUDA_ARRAY3D_DESCRIPTOR d;
	uint64_t charge = 0, least = 0, need;
	bool mip = kind == VC_CU_ARR_MIPMAP;
	void *real = NULL;
	int rc;

	TAKE(rq);
	if (rq.kind != kind)
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	memset(&d, 0, sizeof(d));
	d.Width = rq.width;
	d.Height = rq.height;
	d.Format = (CUarray_format)rq.format;
	d.NumChannels = rq.channels;
	if (kind != VC_CU_ARR_2D) {
		d.Depth = rq.depth;
		d.Flags = rq.flags;
	}
	/* Sparse and deferred-mapping arrays take no memory until memory is
	 * mapped into them (and that memory is charged where it is made). */
	if (!(d.Flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING))) {
		if ((rc = least_bytes(&d, mip ? rq.levels : 1, &least)))
			return rc;
		need = requirement(x, &d, rq.levels, mip);
		charge = need > least ? need : least;
		if ((rc = vc_cu_quota_charge(x, charge)))
			return rc;
	}
	if (mip) {
		rc = x->drv->cuMipmappedArrayCreate((CUmipmappedArray *)&real, &d, rq.levels);
	} else if (kind == VC_CU_ARR_3D) {
		rc = x->drv->cuArray3DCreate_v2((CUarray *)&real, &d);
	} else {
		CUDA_ARRAY_DESCRIPTOR d2 = {.Width = d.Width, .Height = d.Height, .Format = d.Format,
					    .NumChannels = d.NumChannels};

		rc = x->drv->cuArrayCreate_v2((CUarray *)&real, &d2);
	}
	if (rc)
		goto err_refund;
	if ((rc = publish_owned(x, mip ? VC_H_CUMIPMAPPEDARRAY : VC_H_CUARRAY, real, &rp.handle)))
		goto err_destroy;
	if (charge && (rc = vc_cu_quota_track(x, qkey(real), charge, x->cur_id)))
		goto err_forget;
	REPLY(rp);
	return 0;

err_forget:
	vc_cu_forget(x, mip ? VC_H_CUMIPMAPPEDARRAY : VC_H_CUARRAY, rp.handle);
err_destroy:
	if (mip)
		x->drv->cuMipmappedArrayDestroy(real);
	else
		x->drv->cuArrayDestroy(real);
err_refund:
	vc_cu_quota_refund(x, charge);
	return rc;
}

int vc_cu_manual_cuArrayCreate_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	return create(x, p, len, out, VC_CU_ARR_2D);
}

int vc_cu_manual_cuArray3DCreate_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	return create(x, p, len, out, VC_CU_ARR_3D);
}

int vc_cu_manual_cuMipmappedArrayCreate(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					struct vc_cu_out *out)
{
	return create(x, p, len, out, VC_CU_ARR_MIPMAP);
}

/* ---- planes and levels --------------------------------------------------------------- */

static int sub_index(struct vc_cu_arrays *a, uint64_t id)
{
	for (uint32_t i = 0; a && i < a->nsub; i++)
		if (a->sub[i].id == id)
			return (int)i;
	return -1;
}

/* Forget the arrays that belong to @parent (it was destroyed). */
static void forget_subs(struct vc_cu_session *x, uint64_t parent)
{
	struct vc_cu_arrays *a = x->arr;

	for (uint32_t i = 0; a && i < a->nsub;) {
		if (a->sub[i].parent == parent) {
			vc_cu_forget(x, VC_H_CUARRAY, a->sub[i].id);
			a->sub[i] = a->sub[--a->nsub];
		} else {
			i++;
		}
	}
}

static int sub(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out, bool level)
{
	struct vc_cu_req_array_sub rq;
	struct vc_cu_rep_array rp = {0};
	struct vc_cu_arrays *a = state(x);
	void *parent, *real = NULL;
	int rc;

	TAKE(rq);
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = vc_cu_enter(x, rq.ctx)) ||
	    (rc = vc_cu_lookup(x, level ? VC_H_CUMIPMAPPEDARRAY : VC_H_CUARRAY, rq.parent, &parent)))
		return rc;
	rc = level ? x->drv->cuMipmappedArrayGetLevel((CUarray *)&real, parent, rq.index)
		   : x->drv->cuArrayGetPlane((CUarray *)&real, parent, rq.index);
	if (rc)
		return rc;
	if ((rc = publish_owned(x, VC_H_CUARRAY, real, &rp.handle)))
		return rc;
	if (sub_index(a, rp.handle) < 0) {
		if (grow((void **)&a->sub, &a->capsub, a->nsub, sizeof(*a->sub))) {
			vc_cu_forget(x, VC_H_CUARRAY, rp.handle);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		a->sub[a->nsub++] = (struct subarr){.id = rp.handle, .parent = rq.parent};
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuArrayGetPlane(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	return sub(x, p, len, out, false);
}

int vc_cu_manual_cuMipmappedArrayGetLevel(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					  struct vc_cu_out *out)
{
	return sub(x, p, len, out, true);
}

/* ---- destruction and queries ------------------------------------------------------------ */

static int destroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len, bool mip)
{
	struct vc_cu_req_handle rq;
	int kind = mip ? VC_H_CUMIPMAPPEDARRAY : VC_H_CUARRAY;
	void *real;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, kind, rq.handle, &real)))
		return rc;
	if (!real)
		return CUDA_ERROR_INVALID_HANDLE;
	/* A plane or a level is its parent's: destroying it alone would leave
	 * the parent holding freed memory. */
	if (!mip && sub_index(x->arr, rq.handle) >= 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = mip ? x->drv->cuMipmappedArrayDestroy(real) : x->drv->cuArrayDestroy(real);
	if (rc)
		return rc;
	forget_subs(x, rq.handle);
	vc_cu_forget(x, kind, rq.handle);
	vc_cu_maparr_gone(x, rq.handle); /* memory mapped into it (memmisc.c) */
	vc_cu_quota_untrack(x, qkey(real));
	return 0;
}

int vc_cu_manual_cuArrayDestroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	(void)out;
	return destroy(x, p, len, false);
}

int vc_cu_manual_cuMipmappedArrayDestroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					 struct vc_cu_out *out)
{
	(void)out;
	return destroy(x, p, len, true);
}

static int sparse(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out, bool mip)
{
	struct vc_cu_req_handle rq;
	struct vc_cu_rep_sparse rp;
	CUDA_ARRAY_SPARSE_PROPERTIES sp;
	void *real;
	int rc;

	TAKE(rq);
	memset(&sp, 0, sizeof(sp));
	if ((rc = vc_cu_enter(x, rq.ctx)) ||
	    (rc = vc_cu_lookup(x, mip ? VC_H_CUMIPMAPPEDARRAY : VC_H_CUARRAY, rq.handle, &real)))
		return rc;
	rc = mip ? x->drv->cuMipmappedArrayGetSparseProperties(&sp, real) : x->drv->cuArrayGetSparseProperties(&sp, real);
	if (rc)
		return rc;
	memcpy(rp.props, &sp, sizeof(rp.props));
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuArrayGetSparseProperties(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					    struct vc_cu_out *out)
{
	return sparse(x, p, len, out, false);
}

int vc_cu_manual_cuMipmappedArrayGetSparseProperties(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						     struct vc_cu_out *out)
{
	return sparse(x, p, len, out, true);
}

/* ---- texture and surface objects -------------------------------------------------------- */

/*
 * The resource descriptor @raw from the guest, its ids turned into this
 * session's handles and its device range checked, into *@r; the id it names
 * in *@res_id. A handle that is no longer (or never was) the session's is
 * CUDA_ERROR_INVALID_VALUE, as a bad descriptor is natively.
 */
static int resource_in(struct vc_cu_session *x, const uint8_t *raw, CUDA_RESOURCE_DESC *r, uint64_t *res_id)
{
	void *real = NULL;
	uint64_t e, row, extent;

	memcpy(r, raw, sizeof(*r));
	*res_id = 0;
	switch (r->resType) {
	case CU_RESOURCE_TYPE_ARRAY:
		*res_id = (uint64_t)(uintptr_t)r->res.array.hArray;
		if (vc_cu_lookup(x, VC_H_CUARRAY, *res_id, &real) || !real)
			return CUDA_ERROR_INVALID_VALUE;
		r->res.array.hArray = real;
		return 0;
	case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
		*res_id = (uint64_t)(uintptr_t)r->res.mipmap.hMipmappedArray;
		if (vc_cu_lookup(x, VC_H_CUMIPMAPPEDARRAY, *res_id, &real) || !real)
			return CUDA_ERROR_INVALID_VALUE;
		r->res.mipmap.hMipmappedArray = real;
		return 0;
	case CU_RESOURCE_TYPE_LINEAR:
		return vc_cu_check_range(x, r->res.linear.devPtr, r->res.linear.sizeInBytes ? r->res.linear.sizeInBytes : 1);
	case CU_RESOURCE_TYPE_PITCH2D:
		/* Rows pitch apart; the last ends at pitch * (height - 1) + width. */
		e = vc_cu_array_elem_bytes(r->res.pitch2D.format, r->res.pitch2D.numChannels);
		if (!e || !r->res.pitch2D.height || __builtin_mul_overflow(r->res.pitch2D.width, e, &row) ||
		    r->res.pitch2D.pitchInBytes < row ||
		    __builtin_mul_overflow(r->res.pitch2D.pitchInBytes, r->res.pitch2D.height - 1, &extent) ||
		    __builtin_add_overflow(extent, row, &extent))
			return CUDA_ERROR_INVALID_VALUE;
		return vc_cu_check_range(x, r->res.pitch2D.devPtr, extent ? extent : 1);
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static int obj_find(struct vc_cu_arrays *a, uint64_t value, bool surf)
{
	for (uint32_t i = 0; a && i < a->nobj; i++)
		if (a->obj[i].value == value && a->obj[i].surf == surf)
			return (int)i;
	return -1;
}

static int obj_create(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out, bool surf)
{
	struct vc_cu_req_texobj_create rq;
	struct vc_cu_rep_texobj rp = {0};
	struct vc_cu_arrays *a = state(x);
	CUDA_RESOURCE_DESC r;
	CUDA_TEXTURE_DESC t;
	CUDA_RESOURCE_VIEW_DESC v;
	CUtexObject value = 0;
	uint64_t res_id;
	int rc;

	TAKE(rq);
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = resource_in(x, rq.res, &r, &res_id)))
		return rc;
	if (grow((void **)&a->obj, &a->capobj, a->nobj, sizeof(*a->obj)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(&t, rq.tex, sizeof(t));
	memcpy(&v, rq.view, sizeof(v));
	rc = surf ? x->drv->cuSurfObjectCreate(&value, &r)
		  : x->drv->cuTexObjectCreate(&value, &r, &t, rq.has_view ? &v : NULL);
	if (rc)
		return rc;
	a->obj[a->nobj++] = (struct texobj){.value = value, .ctx = x->cur_id, .res_id = res_id, .surf = surf};
	rp.value = value;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuTexObjectCreate(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	return obj_create(x, p, len, out, false);
}

int vc_cu_manual_cuSurfObjectCreate(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	return obj_create(x, p, len, out, true);
}

static int obj_destroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len, bool surf)
{
	struct vc_cu_req_handle rq;
	struct vc_cu_arrays *a = x->arr;
	int rc, i;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if ((i = obj_find(a, rq.handle, surf)) < 0)
		return CUDA_ERROR_INVALID_VALUE; /* not one of ours: never the driver's to see */
	rc = surf ? x->drv->cuSurfObjectDestroy(rq.handle) : x->drv->cuTexObjectDestroy(rq.handle);
	if (rc)
		return rc;
	a->obj[i] = a->obj[--a->nobj];
	return 0;
}

int vc_cu_manual_cuTexObjectDestroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	(void)out;
	return obj_destroy(x, p, len, false);
}

int vc_cu_manual_cuSurfObjectDestroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	(void)out;
	return obj_destroy(x, p, len, true);
}

enum what { RES, TEX, VIEW };

static int obj_get(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out, bool surf,
		   enum what w)
{
	struct vc_cu_req_handle rq;
	struct vc_cu_rep_texobj_desc rp;
	const struct texobj *o;
	CUDA_RESOURCE_DESC r;
	CUDA_TEXTURE_DESC t;
	CUDA_RESOURCE_VIEW_DESC v;
	int rc, i;

	TAKE(rq);
	memset(&rp, 0, sizeof(rp));
	memset(&r, 0, sizeof(r));
	memset(&t, 0, sizeof(t));
	memset(&v, 0, sizeof(v));
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if ((i = obj_find(x->arr, rq.handle, surf)) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	o = &x->arr->obj[i];
	switch (w) {
	case RES:
		rc = surf ? x->drv->cuSurfObjectGetResourceDesc(&r, rq.handle)
			  : x->drv->cuTexObjectGetResourceDesc(&r, rq.handle);
		/* Handles go back as the ids the guest named them by. */
		if (!rc && r.resType == CU_RESOURCE_TYPE_ARRAY)
			r.res.array.hArray = (CUarray)(uintptr_t)o->res_id;
		else if (!rc && r.resType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY)
			r.res.mipmap.hMipmappedArray = (CUmipmappedArray)(uintptr_t)o->res_id;
		memcpy(rp.desc, &r, sizeof(r));
		break;
	case TEX:
		rc = x->drv->cuTexObjectGetTextureDesc(&t, rq.handle);
		memcpy(rp.desc, &t, sizeof(t));
		break;
	default:
		rc = x->drv->cuTexObjectGetResourceViewDesc(&v, rq.handle);
		memcpy(rp.desc, &v, sizeof(v));
		break;
	}
	if (rc)
		return rc;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuTexObjectGetResourceDesc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					    struct vc_cu_out *out)
{
	return obj_get(x, p, len, out, false, RES);
}

int vc_cu_manual_cuTexObjectGetTextureDesc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					   struct vc_cu_out *out)
{
	return obj_get(x, p, len, out, false, TEX);
}

int vc_cu_manual_cuTexObjectGetResourceViewDesc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						struct vc_cu_out *out)
{
	return obj_get(x, p, len, out, false, VIEW);
}

int vc_cu_manual_cuSurfObjectGetResourceDesc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					     struct vc_cu_out *out)
{
	return obj_get(x, p, len, out, true, RES);
}

/* ---- contexts going, sessions closing ------------------------------------------------ */

void vc_cu_arrays_ctx_gone(struct vc_cu_session *x, uint64_t ctx)
{
	struct vc_cu_arrays *a = x->arr;

	void *real;

	/* Its objects went with it; its arrays' ids went with its handles, and
	 * with them the planes and levels they had. */
	for (uint32_t i = 0; a && i < a->nobj;) {
		if (a->obj[i].ctx == ctx)
			a->obj[i] = a->obj[--a->nobj];
		else
			i++;
	}
	for (uint32_t i = 0; a && i < a->nsub;) {
		if (vc_cu_lookup(x, VC_H_CUARRAY, a->sub[i].id, &real))
			a->sub[i] = a->sub[--a->nsub];
		else
			i++;
	}
}

void vc_cu_arrays_close(struct vc_cu_session *x)
{
	struct vc_cu_arrays *a = x->arr;
	void *ctx;

	for (uint32_t i = 0; a && i < a->nobj; i++) {
		if (vc_cu_lookup(x, VC_H_CUCONTEXT, a->obj[i].ctx, &ctx) || !ctx ||
		    x->drv->cuCtxSetCurrent(ctx))
			continue;
		if (a->obj[i].surf)
			x->drv->cuSurfObjectDestroy(a->obj[i].value);
		else
			x->drv->cuTexObjectDestroy(a->obj[i].value);
	}
	/* Then the arrays, each inside its own context (planes and levels go
	 * with their parents). */
	for (uint32_t i = 0; i < x->nh; i++) {
		struct vc_cu_handle *h = &x->h[i];

		if (!h->live || !h->real || (h->kind != VC_H_CUARRAY && h->kind != VC_H_CUMIPMAPPEDARRAY) ||
		    h->owner >= x->nh || !x->h[h->owner].live || !x->h[h->owner].real ||
		    x->drv->cuCtxSetCurrent(x->h[h->owner].real))
			continue;
		bool is_sub = false;

		for (uint32_t k = 0; a && k < a->nsub && !is_sub; k++)
			is_sub = (a->sub[k].id & 0xffffffu) == i;
		if (is_sub)
			continue;
		if (h->kind == VC_H_CUARRAY)
			x->drv->cuArrayDestroy(h->real);
		else
			x->drv->cuMipmappedArrayDestroy(h->real);
	}
	x->cur_id = UINT64_MAX; /* the current context was changed under vc_cu_enter() */
	if (a) {
		free(a->obj);
		free(a->sub);
		free(a);
	}
	x->arr = NULL;
}
