/* SPDX-License-Identifier: MIT */
/*
 * array.c - the CI stand-in's CUDA arrays, mipmapped arrays, texture and
 * surface objects, and every copy with an array or a host side (2D and 3D).
 *
 * An array is a record with its descriptor and its elements packed densely
 * (row after row, slice after slice) in the stand-in's device memory, owned
 * by its context; a mipmapped array holds one such array per level.
 * Deferred-mapping and sparse arrays hold no memory (copies to them fail).
 * Texture and surface objects are records with the descriptors they were
 * made with, answered back as given. Handles are checked against the live
 * records before use, never dereferenced blindly. Planar and
 * block-compressed formats are not served (CUDA_ERROR_NOT_SUPPORTED).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"
#include "vc_cuda_array.h"

#define REQ_ALIGN 65536u /* what memory requirements are rounded to */

struct sarr {
	struct sarr *next;
	CUDA_ARRAY3D_DESCRIPTOR d;
	uint64_t va; /* the elements in g_mem, 0: none (deferred mapping, sparse) */
	uint64_t row, rows, slices, bytes;
	int mip;            /* a mipmapped array: its levels in lv */
	int is_level;       /* a level of a mipmapped array */
	unsigned levels;
	struct sarr **lv;
};

struct sobj {
	struct sobj *next;
	CUtexObject value;
	int surf;
	CUDA_RESOURCE_DESC res;
	CUDA_TEXTURE_DESC tex;
	CUDA_RESOURCE_VIEW_DESC view;
};

/* Records, under g_amu (taken before g_mu, never after). */
static struct sarr *g_arrs;
static struct sobj *g_objs;
static CUtexObject g_next_obj = 1;
static pthread_mutex_t g_amu = PTHREAD_MUTEX_INITIALIZER;

static struct sarr *live(const void *h, int mip)
{
	for (struct sarr *a = g_arrs; a; a = a->next)
		if (a == h && a->mip == mip)
			return a;
	return NULL;
}

static uint64_t dim(uint64_t v)
{
	return v ? v : 1;
}

/* A new record for @d, its memory allocated unless deferred or sparse. */
static CUresult make(const CUDA_ARRAY3D_DESCRIPTOR *d, struct sarr **out)
{
	uint32_t e = vc_cu_array_elem_bytes((uint32_t)d->Format, d->NumChannels);
	bool simple = d->Format < 0x40; /* the plain formats take 1, 2 or 4 channels */
	struct sarr *a;
	int rc = 0;

	if (!d->Width || (simple && d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
		return CUDA_ERROR_INVALID_VALUE;
	if (!e)
		return CUDA_ERROR_NOT_SUPPORTED; /* planar video, block-compressed: not in the stand-in */
	if (!d->Height && d->Depth && !(d->Flags & CUDA_ARRAY3D_LAYERED))
		return CUDA_ERROR_INVALID_VALUE;
	if ((d->Flags & CUDA_ARRAY3D_CUBEMAP) && (d->Width != d->Height || d->Depth % 6 || !d->Depth))
		return CUDA_ERROR_INVALID_VALUE;
	if (d->Width > (1u << 20) || d->Height > (1u << 20) || d->Depth > (1u << 20))
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->d = *d;
	a->row = d->Width * e;
	a->rows = dim(d->Height);
	a->slices = dim(d->Depth);
	if (__builtin_mul_overflow(a->row, a->rows, &a->bytes) || __builtin_mul_overflow(a->bytes, a->slices, &a->bytes)) {
		free(a);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (!(d->Flags & (CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_SPARSE))) {
		pthread_mutex_lock(&g_mu);
		rc = vc_smem_alloc(&g_mem, a->bytes, t_ctx, &a->va);
		pthread_mutex_unlock(&g_mu);
	}
	if (rc) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = a;
	return CUDA_SUCCESS;
}

static void unmake(struct sarr *a)
{
	if (a->va) {
		pthread_mutex_lock(&g_mu);
		vc_smem_free(&g_mem, a->va);
		pthread_mutex_unlock(&g_mu);
	}
	free(a);
}

static void link_in(struct sarr *a)
{
	a->next = g_arrs;
	g_arrs = a;
}

static void unlink_arr(struct sarr *a)
{
	for (struct sarr **p = &g_arrs; *p; p = &(*p)->next)
		if (*p == a) {
			*p = a->next;
			return;
		}
}

static CUresult s_array3d_create(CUarray *h, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	struct sarr *a;
	CUresult rc;

	if (!h || !d)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_si_need_ctx()) || (rc = make(d, &a)))
		return rc;
	pthread_mutex_lock(&g_amu);
	link_in(a);
	pthread_mutex_unlock(&g_amu);
	*h = (CUarray)a;
	return CUDA_SUCCESS;
}

static CUresult s_array_create(CUarray *h, const CUDA_ARRAY_DESCRIPTOR *d)
{
	CUDA_ARRAY3D_DESCRIPTOR d3 = {0};

	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	d3.Width = d->Width;
	d3.Height = d->Height;
	d3.Format = d->Format;
	d3.NumChannels = d->NumChannels;
	return s_array3d_create(h, &d3);
}

static CUresult s_array_destroy(CUarray h)
{
	struct sarr *a;

	pthread_mutex_lock(&g_amu);
	a = live(h, 0);
	if (a && !a->is_level)
		unlink_arr(a);
	pthread_mutex_unlock(&g_amu);
	if (!a || a->is_level)
		return a ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
	unmake(a);
	return CUDA_SUCCESS;
}

static CUresult s_array_desc(CUDA_ARRAY_DESCRIPTOR *d, CUarray h)
{
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;
	struct sarr *a;

	pthread_mutex_lock(&g_amu);
	if ((a = live(h, 0))) {
		d->Width = a->d.Width;
		d->Height = a->d.Height;
		d->Format = a->d.Format;
		d->NumChannels = a->d.NumChannels;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_amu);
	return rc;
}

static CUresult s_array3d_desc(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray h)
{
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;
	struct sarr *a;

	pthread_mutex_lock(&g_amu);
	if ((a = live(h, 0))) {
		*d = a->d;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_amu);
	return rc;
}

static CUresult s_array_plane(CUarray *p, CUarray h, unsigned idx)
{
	CUresult rc;

	(void)p;
	(void)idx;
	pthread_mutex_lock(&g_amu);
	rc = live(h, 0) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE; /* no planar formats here */
	pthread_mutex_unlock(&g_amu);
	return rc;
}

static uint64_t round_req(uint64_t b)
{
	return (b + REQ_ALIGN - 1) / REQ_ALIGN * REQ_ALIGN;
}

/* Memory requirements: only of deferred-mapping arrays, as natively. */
static CUresult s_array_req(CUDA_ARRAY_MEMORY_REQUIREMENTS *r, CUarray h, CUdevice dev)
{
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;
	struct sarr *a;

	if (!r || !vc_si_dev_ok(dev))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_amu);
	if ((a = live(h, 0))) {
		rc = CUDA_ERROR_INVALID_VALUE;
		if (a->d.Flags & CUDA_ARRAY3D_DEFERRED_MAPPING) {
			memset(r, 0, sizeof(*r));
			r->size = round_req(a->bytes);
			r->alignment = REQ_ALIGN;
			rc = CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&g_amu);
	return rc;
}

static CUresult sparse_props(const struct sarr *a, CUDA_ARRAY_SPARSE_PROPERTIES *p)
{
	if (!(a->d.Flags & CUDA_ARRAY3D_SPARSE))
		return CUDA_ERROR_INVALID_VALUE;
	memset(p, 0, sizeof(*p));
	p->tileExtent.width = 64;
	p->tileExtent.height = a->d.Height ? 64 : 1;
	p->tileExtent.depth = 1;
	p->miptailFirstLevel = a->levels;
	return CUDA_SUCCESS;
}

static CUresult s_array_sparse(CUDA_ARRAY_SPARSE_PROPERTIES *p, CUarray h)
{
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;
	struct sarr *a;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_amu);
	if ((a = live(h, 0)))
		rc = sparse_props(a, p);
	pthread_mutex_unlock(&g_amu);
	return rc;
}

/* ---- mipmapped arrays --------------------------------------------------------------------- */

static void unmake_mip(struct sarr *m)
{
	for (unsigned l = 0; l < m->levels; l++)
		if (m->lv[l]) {
			unlink_arr(m->lv[l]);
			unmake(m->lv[l]);
		}
	free(m->lv);
	free(m);
}

static CUresult s_mip_create(CUmipmappedArray *h, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
	uint64_t big;
	unsigned most = 0;
	bool layers;
	struct sarr *m;
	CUresult rc;

	if (!h || !d)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_si_need_ctx()))
		return rc;
	layers = d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);
	big = d->Width > d->Height ? d->Width : d->Height;
	if (!layers && d->Depth > big)
		big = d->Depth;
	while (most < 64 && big >> most)
		most++;
	if (!levels)
		return CUDA_ERROR_INVALID_VALUE;
	if (levels > most)
		levels = most; /* as the driver (580) does: more levels than the size allows are clamped */
	m = calloc(1, sizeof(*m));
	if (!m || !(m->lv = calloc(levels, sizeof(*m->lv)))) {
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->d = *d;
	m->mip = 1;
	m->levels = levels;
	pthread_mutex_lock(&g_amu);
	for (unsigned l = 0; l < levels && !rc; l++) {
		CUDA_ARRAY3D_DESCRIPTOR ld = *d;

		ld.Width = dim(d->Width >> l);
		ld.Height = d->Height ? dim(d->Height >> l) : 0;
		ld.Depth = layers || !d->Depth ? d->Depth : dim(d->Depth >> l);
		if ((rc = make(&ld, &m->lv[l])) == CUDA_SUCCESS) {
			m->lv[l]->is_level = 1;
			link_in(m->lv[l]);
		}
	}
	if (rc)
		unmake_mip(m);
	else
		link_in(m);
	pthread_mutex_unlock(&g_amu);
	if (!rc)
		*h = (CUmipmappedArray)m;
	return rc;
}

static CUresult s_mip_destroy(CUmipmappedArray h)
{
	struct sarr *m;

	pthread_mutex_lock(&g_amu);
	if ((m = live(h, 1))) {
		unlink_arr(m);
		unmake_mip(m);
	}
	pthread_mutex_unlock(&g_amu);
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_mip_level(CUarray *out, CUmipmappedArray h, unsigned level)
{
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;
	struct sarr *m;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_amu);
	if ((m = live(h, 1))) {
		rc = level < m->levels ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
		if (!rc)
			*out = (CUarray)m->lv[level];
	}
	pthread_mutex_unlock(&g_amu);
	return rc;
}

static CUresult s_mip_req(CUDA_ARRAY_MEMORY_REQUIREMENTS *r, CUmipmappedArray h, CUdevice dev)
{
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;
	struct sarr *m;

	if (!r || !vc_si_dev_ok(dev))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_amu);
	if ((m = live(h, 1))) {
		rc = CUDA_ERROR_INVALID_VALUE;
		if (m->d.Flags & CUDA_ARRAY3D_DEFERRED_MAPPING) {
			memset(r, 0, sizeof(*r));
			for (unsigned l = 0; l < m->levels; l++)
				r->size += round_req(m->lv[l]->bytes);
			r->alignment = REQ_ALIGN;
			rc = CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&g_amu);
	return rc;
}

static CUresult s_mip_sparse(CUDA_ARRAY_SPARSE_PROPERTIES *p, CUmipmappedArray h)
{
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;
	struct sarr *m;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_amu);
	if ((m = live(h, 1)))
		rc = sparse_props(m, p);
	pthread_mutex_unlock(&g_amu);
	return rc;
}

/* ---- copies -------------------------------------------------------------------------------- */

struct bside {
	uint8_t *base; /* the box's origin */
	uint64_t pitch, slice;
};

/* One side of a box of w x h x d, under g_amu and g_mu. */
static CUresult side(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr, uint64_t x, uint64_t y,
		     uint64_t z, uint64_t pitch, uint64_t height, uint64_t w, uint64_t h, uint64_t d, struct bside *o)
{
	uint64_t org, ext;
	struct sarr *a;

	if (t == CU_MEMORYTYPE_UNIFIED) {
		t = vc_smem_find(&g_mem, dev, 1) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
		host = (const void *)(uintptr_t)dev;
	}
	if (t == CU_MEMORYTYPE_ARRAY) {
		uint8_t *p;

		if (!(a = live(arr, 0)))
			return CUDA_ERROR_INVALID_VALUE;
		if (!a->va || x > a->row || w > a->row - x || y > a->rows || h > a->rows - y || z > a->slices ||
		    d > a->slices - z || !(p = vc_smem_ptr(&g_mem, a->va, a->bytes)))
			return CUDA_ERROR_INVALID_VALUE;
		o->pitch = a->row;
		o->slice = a->row * a->rows;
		o->base = p + z * o->slice + y * o->pitch + x;
		return CUDA_SUCCESS;
	}
	if (((h > 1 || d > 1) && pitch < w) || (d > 1 && height < h))
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_mul_overflow(pitch, height, &o->slice) || __builtin_mul_overflow(z, o->slice, &org) ||
	    __builtin_add_overflow(org, y * pitch + x, &org) || __builtin_mul_overflow(o->slice, d - 1, &ext) ||
	    __builtin_add_overflow(ext, (h - 1) * pitch + w, &ext))
		return CUDA_ERROR_INVALID_VALUE;
	o->pitch = pitch;
	if (t == CU_MEMORYTYPE_HOST) {
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
		o->base = (uint8_t *)(uintptr_t)host + org;
		return CUDA_SUCCESS;
	}
	if (t != CU_MEMORYTYPE_DEVICE || !(o->base = vc_smem_ptr(&g_mem, dev + org, ext)))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult copy3d(const CUDA_MEMCPY3D *c)
{
	struct bside s, d;
	CUresult rc;

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c->WidthInBytes || !c->Height || !c->Depth)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&g_amu);
	pthread_mutex_lock(&g_mu);
	rc = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes, c->srcY, c->srcZ,
		  c->srcPitch, c->srcHeight, c->WidthInBytes, c->Height, c->Depth, &s);
	if (!rc)
		rc = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes, c->dstY, c->dstZ,
			  c->dstPitch, c->dstHeight, c->WidthInBytes, c->Height, c->Depth, &d);
	for (uint64_t z = 0; !rc && z < c->Depth; z++)
		for (uint64_t y = 0; y < c->Height; y++)
			memmove(d.base + z * d.slice + y * d.pitch, s.base + z * s.slice + y * s.pitch, c->WidthInBytes);
	pthread_mutex_unlock(&g_mu);
	pthread_mutex_unlock(&g_amu);
	return rc;
}

CUresult vc_si_copy2d_any(const CUDA_MEMCPY2D *c)
{
	CUDA_MEMCPY3D c3;

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&c3, 0, sizeof(c3));
	c3.srcMemoryType = c->srcMemoryType;
	c3.srcHost = c->srcHost;
	c3.srcDevice = c->srcDevice;
	c3.srcArray = c->srcArray;
	c3.srcXInBytes = c->srcXInBytes;
	c3.srcY = c->srcY;
	c3.srcPitch = c->srcPitch;
	c3.srcHeight = c->Height;
	c3.dstMemoryType = c->dstMemoryType;
	c3.dstHost = c->dstHost;
	c3.dstDevice = c->dstDevice;
	c3.dstArray = c->dstArray;
	c3.dstXInBytes = c->dstXInBytes;
	c3.dstY = c->dstY;
	c3.dstPitch = c->dstPitch;
	c3.dstHeight = c->Height;
	c3.WidthInBytes = c->WidthInBytes;
	c3.Height = c->Height;
	c3.Depth = 1;
	return copy3d(&c3);
}

static CUresult s_copy3d(const CUDA_MEMCPY3D *c)
{
	return vc_si_synced(copy3d(c));
}

static CUresult s_copy3d_a(const CUDA_MEMCPY3D *c, CUstream st)
{
	return vc_si_stream_ok(st) ? copy3d(c) : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- texture and surface objects ------------------------------------------------------------- */

static CUresult resource_ok(const CUDA_RESOURCE_DESC *r, int surf)
{
	struct sarr *a;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	if (r->flags)
		return rc;
	pthread_mutex_lock(&g_amu);
	pthread_mutex_lock(&g_mu);
	switch (r->resType) {
	case CU_RESOURCE_TYPE_ARRAY:
		a = live(r->res.array.hArray, 0);
		/* The driver (580) makes a surface on any array, one made without
		 * CUDA_ARRAY3D_SURFACE_LDST included (measured on an H100). */
		if (a)
			rc = CUDA_SUCCESS;
		break;
	case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
		if (!surf && live(r->res.mipmap.hMipmappedArray, 1))
			rc = CUDA_SUCCESS;
		break;
	case CU_RESOURCE_TYPE_LINEAR:
		if (!surf && r->res.linear.sizeInBytes &&
		    vc_smem_find(&g_mem, r->res.linear.devPtr, r->res.linear.sizeInBytes))
			rc = CUDA_SUCCESS;
		break;
	case CU_RESOURCE_TYPE_PITCH2D:
		if (!surf && r->res.pitch2D.width && r->res.pitch2D.height &&
		    vc_smem_find(&g_mem, r->res.pitch2D.devPtr,
				 r->res.pitch2D.pitchInBytes * (r->res.pitch2D.height - 1) + 1))
			rc = CUDA_SUCCESS;
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&g_mu);
	pthread_mutex_unlock(&g_amu);
	return rc;
}

static CUresult obj_create(CUtexObject *out, const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *t,
			   const CUDA_RESOURCE_VIEW_DESC *v, int surf)
{
	struct sobj *o;
	CUresult rc;

	if (!out || !r || (!surf && !t))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_si_need_ctx()) || (rc = resource_ok(r, surf)))
		return rc;
	if (!(o = calloc(1, sizeof(*o))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	o->surf = surf;
	o->res = *r;
	if (t)
		o->tex = *t;
	if (v)
		o->view = *v;
	pthread_mutex_lock(&g_amu);
	o->value = g_next_obj++;
	o->next = g_objs;
	g_objs = o;
	pthread_mutex_unlock(&g_amu);
	*out = o->value;
	return CUDA_SUCCESS;
}

static CUresult s_tex_create(CUtexObject *out, const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *t,
			     const CUDA_RESOURCE_VIEW_DESC *v)
{
	return obj_create(out, r, t, v, 0);
}

static CUresult s_surf_create(CUsurfObject *out, const CUDA_RESOURCE_DESC *r)
{
	return obj_create(out, r, NULL, NULL, 1);
}

static CUresult obj_destroy(CUtexObject v, int surf)
{
	struct sobj *o = NULL;

	pthread_mutex_lock(&g_amu);
	for (struct sobj **p = &g_objs; *p; p = &(*p)->next)
		if ((*p)->value == v && (*p)->surf == surf) {
			o = *p;
			*p = o->next;
			break;
		}
	pthread_mutex_unlock(&g_amu);
	free(o);
	return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_tex_destroy(CUtexObject v)
{
	return obj_destroy(v, 0);
}

static CUresult s_surf_destroy(CUsurfObject v)
{
	return obj_destroy(v, 1);
}

/* Descriptor @what (0 resource, 1 texture, 2 view) of object @v into @out. */
static CUresult obj_get(void *out, CUtexObject v, int surf, int what)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	if (!out)
		return rc;
	pthread_mutex_lock(&g_amu);
	for (struct sobj *o = g_objs; o; o = o->next)
		if (o->value == v && o->surf == surf) {
			if (what == 0)
				memcpy(out, &o->res, sizeof(o->res));
			else if (what == 1)
				memcpy(out, &o->tex, sizeof(o->tex));
			else
				memcpy(out, &o->view, sizeof(o->view));
			rc = CUDA_SUCCESS;
			break;
		}
	pthread_mutex_unlock(&g_amu);
	return rc;
}

static CUresult s_tex_res(CUDA_RESOURCE_DESC *r, CUtexObject v)
{
	return obj_get(r, v, 0, 0);
}

static CUresult s_tex_tex(CUDA_TEXTURE_DESC *t, CUtexObject v)
{
	return obj_get(t, v, 0, 1);
}

static CUresult s_tex_view(CUDA_RESOURCE_VIEW_DESC *d, CUtexObject v)
{
	return obj_get(d, v, 0, 2);
}

static CUresult s_surf_res(CUDA_RESOURCE_DESC *r, CUsurfObject v)
{
	return obj_get(r, v, 1, 0);
}

void vc_si_fill_array(struct vc_cuda_driver *d)
{
	d->cuArrayCreate_v2 = s_array_create;
	d->cuArray3DCreate_v2 = s_array3d_create;
	d->cuArrayDestroy = s_array_destroy;
	d->cuArrayGetDescriptor_v2 = s_array_desc;
	d->cuArray3DGetDescriptor_v2 = s_array3d_desc;
	d->cuArrayGetPlane = s_array_plane;
	d->cuArrayGetMemoryRequirements = s_array_req;
	d->cuArrayGetSparseProperties = s_array_sparse;
	d->cuMipmappedArrayCreate = s_mip_create;
	d->cuMipmappedArrayDestroy = s_mip_destroy;
	d->cuMipmappedArrayGetLevel = s_mip_level;
	d->cuMipmappedArrayGetMemoryRequirements = s_mip_req;
	d->cuMipmappedArrayGetSparseProperties = s_mip_sparse;
	d->cuMemcpy3D_v2 = s_copy3d;
	d->cuMemcpy3DAsync_v2 = s_copy3d_a;
	d->cuTexObjectCreate = s_tex_create;
	d->cuTexObjectDestroy = s_tex_destroy;
	d->cuTexObjectGetResourceDesc = s_tex_res;
	d->cuTexObjectGetTextureDesc = s_tex_tex;
	d->cuTexObjectGetResourceViewDesc = s_tex_view;
	d->cuSurfObjectCreate = s_surf_create;
	d->cuSurfObjectDestroy = s_surf_destroy;
	d->cuSurfObjectGetResourceDesc = s_surf_res;
}
