/* SPDX-License-Identifier: MIT */
/*
 * texref.c - the CI stand-in's legacy texture and surface references:
 * records of what was set, answered back as set, with the driver's
 * refusals of values it does not know.
 *
 * A module declares its references in its PTX (".texref NAME",
 * ".surfref NAME"), which the stand-in's loads scan (the loaders are
 * wrapped here: a fatbin or an ELF image declares none); cuModuleGetTexRef
 * and cuModuleGetSurfRef find them by name (CUDA_ERROR_NOT_FOUND
 * otherwise), the same record each time, dead with its module.
 * cuTexRefCreate's records live until cuTexRefDestroy. Handles are checked
 * against the live records before use, never dereferenced blindly.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"
#include "vc_cuda_array.h"

#define MAX_DECLS 64u /* references one module may declare */

struct sref {
	struct sref *next;
	int surf;
	const struct obj *mod; /* the declaring module; NULL: cuTexRefCreate's */
	uint64_t mod_id;       /* its id: a reused record is another module */
	char name[64];
	CUarray arr;
	CUmipmappedArray mip;
	CUdeviceptr dptr;
	int linear; /* bound to an address */
	CUarray_format fmt;
	int nch;
	CUaddress_mode am[3];
	CUfilter_mode fm, mfm;
	float bias, minc, maxc, border[4];
	unsigned aniso, flags;
};

/* Records, under g_rmu (taken alone). */
static struct sref *g_refs;
static pthread_mutex_t g_rmu = PTHREAD_MUTEX_INITIALIZER;
static CUresult (*g_load)(CUmodule *, const void *);
static CUresult (*g_load_ex)(CUmodule *, const void *, unsigned int, CUjit_option *, void **);

static int mod_alive(const struct sref *r)
{
	return !r->mod || (vc_si_is(r->mod, T_MOD) && r->mod->id == r->mod_id);
}

/* With g_rmu held: the live record @h of kind @surf, or NULL. Records of
 * unloaded modules are freed on the way. */
static struct sref *live(const void *h, int surf)
{
	struct sref **pp = &g_refs, *r, *found = NULL;

	while ((r = *pp)) {
		if (!mod_alive(r)) {
			*pp = r->next;
			free(r);
			continue;
		}
		if (r == h && r->surf == surf)
			found = r;
		pp = &r->next;
	}
	return found;
}

static struct sref *new_ref(int surf, const struct obj *mod, const char *name, size_t n)
{
	struct sref *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->surf = surf;
	r->mod = mod;
	r->mod_id = mod ? mod->id : 0;
	memcpy(r->name, name, n);
	r->fmt = CU_AD_FORMAT_FLOAT;
	r->nch = 1;
	r->next = g_refs;
	g_refs = r;
	return r;
}

/* ---- declarations in PTX, and the module getters ------------------------------------ */

static int is_ident(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

/* Module @m was loaded from @img: record the references its PTX declares. */
static void scan(const struct obj *m, const void *img)
{
	static const char *const kw[2] = {".texref", ".surfref"};
	const unsigned char *b = img;
	unsigned n = 0;

	/* Binary images (fatbin, ELF, the fatbin wrapper) declare none here;
	 * anything else reached the driver as PTX ending with a NUL. */
	if ((b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55 && b[3] == 0xba) ||
	    (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') ||
	    (b[0] == 0xb1 && b[1] == 0x43 && b[2] == 0x62 && b[3] == 0x46))
		return; /* (each test stops at the first byte that differs: a NUL does) */
	pthread_mutex_lock(&g_rmu);
	for (int k = 0; k < 2; k++)
		for (const char *s = img; n < MAX_DECLS && (s = strstr(s, kw[k]));) {
			const char *e;

			s += strlen(kw[k]);
			if (!isspace((unsigned char)*s))
				continue;
			while (isspace((unsigned char)*s))
				s++;
			for (e = s; is_ident((unsigned char)*e); e++)
				;
			if (e > s && (size_t)(e - s) < sizeof(((struct sref *)0)->name) && new_ref(k, m, s, (size_t)(e - s)))
				n++;
			s = e;
		}
	pthread_mutex_unlock(&g_rmu);
}

static CUresult s_load(CUmodule *m, const void *img)
{
	CUresult rc = g_load(m, img);

	if (rc == CUDA_SUCCESS)
		scan((const struct obj *)*m, img);
	return rc;
}

static CUresult s_load_ex(CUmodule *m, const void *img, unsigned int n, CUjit_option *o, void **v)
{
	CUresult rc = g_load_ex(m, img, n, o, v);

	if (rc == CUDA_SUCCESS)
		scan((const struct obj *)*m, img);
	return rc;
}

static CUresult mod_get(void **out, CUmodule m, const char *name, int surf)
{
	struct sref *r, *found = NULL;

	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_is(m, T_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_rmu);
	live(NULL, 0); /* drop the records of unloaded modules */
	for (r = g_refs; r && !found; r = r->next)
		if (r->mod == (const struct obj *)m && r->mod_id == ((const struct obj *)m)->id && r->surf == surf &&
		    !strcmp(r->name, name))
			found = r;
	pthread_mutex_unlock(&g_rmu);
	if (!found)
		return CUDA_ERROR_NOT_FOUND;
	*out = found;
	return CUDA_SUCCESS;
}

static CUresult s_mod_tex(CUtexref *t, CUmodule m, const char *name)
{
	return mod_get((void **)t, m, name, 0);
}

static CUresult s_mod_surf(CUsurfref *s, CUmodule m, const char *name)
{
	return mod_get((void **)s, m, name, 1);
}

/* ---- creation and destruction ------------------------------------------------------ */

static CUresult s_create(CUtexref *t)
{
	struct sref *r;
	CUresult rc;

	if (!t)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_si_need_ctx()))
		return rc;
	pthread_mutex_lock(&g_rmu);
	r = new_ref(0, NULL, "", 0);
	pthread_mutex_unlock(&g_rmu);
	*t = (CUtexref)r;
	return r ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult s_destroy(CUtexref t)
{
	struct sref **pp, *r;
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;

	pthread_mutex_lock(&g_rmu);
	r = live(t, 0);
	if (r && r->mod)
		rc = CUDA_ERROR_INVALID_VALUE; /* a module's reference is the module's */
	for (pp = &g_refs; r && !r->mod && *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			free(r);
			rc = CUDA_SUCCESS;
			break;
		}
	pthread_mutex_unlock(&g_rmu);
	return rc;
}

/* ---- setters and getters: one function, by what (the driver's checks) ------------- */

enum what { SET_ARRAY, SET_MIP, SET_ADDR, SET_ADDR2D, SET_FORMAT, SET_AMODE, SET_FMODE, SET_MFMODE, SET_BIAS,
	    SET_CLAMP, SET_ANISO, SET_BORDER, SET_FLAGS, GET_ADDR, GET_ARRAY, GET_MIP, GET_AMODE, GET_FMODE,
	    GET_FORMAT, GET_MFMODE, GET_BIAS, GET_CLAMP, GET_ANISO, GET_BORDER, GET_FLAGS };

struct args {
	const void *h;      /* a handle (array, mipmapped array) */
	CUdeviceptr d;
	int i;              /* dim, channels */
	unsigned u;         /* flags, a mode, a format, anisotropy */
	float f[4];
	void *o1, *o2;      /* outputs */
	const CUDA_ARRAY_DESCRIPTOR *desc;
};

#define TRSF_KNOWN (CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB | \
		    CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION | CU_TRSF_SEAMLESS_CUBEMAP)

static CUresult set(struct sref *r, enum what w, const struct args *a)
{
	switch (w) {
	case SET_ARRAY:
	case SET_MIP:
		if (!a->h || a->u != (r->surf ? 0u : CU_TRSA_OVERRIDE_FORMAT))
			return CUDA_ERROR_INVALID_VALUE;
		r->arr = w == SET_ARRAY ? (CUarray)a->h : NULL;
		r->mip = w == SET_MIP ? (CUmipmappedArray)a->h : NULL;
		r->dptr = 0;
		r->linear = 0;
		return CUDA_SUCCESS;
	case SET_ADDR2D:
		if (!a->desc || !vc_cu_array_elem_bytes((uint32_t)a->desc->Format, 1) ||
		    (a->desc->NumChannels != 1 && a->desc->NumChannels != 2 && a->desc->NumChannels != 4))
			return CUDA_ERROR_INVALID_VALUE;
		r->fmt = a->desc->Format;
		r->nch = (int)a->desc->NumChannels;
		/* fall through */
	case SET_ADDR:
		r->arr = NULL;
		r->mip = NULL;
		r->dptr = a->d;
		r->linear = a->d != 0;
		if (a->o1)
			*(size_t *)a->o1 = 0; /* allocations are aligned */
		return CUDA_SUCCESS;
	case SET_FORMAT:
		if (!vc_cu_array_elem_bytes(a->u, 1) || (a->i != 1 && a->i != 2 && a->i != 4))
			return CUDA_ERROR_INVALID_VALUE;
		r->fmt = (CUarray_format)a->u;
		r->nch = a->i;
		return CUDA_SUCCESS;
	case SET_AMODE:
		if (a->i < 0 || a->i > 2 || a->u > CU_TR_ADDRESS_MODE_BORDER)
			return CUDA_ERROR_INVALID_VALUE;
		r->am[a->i] = (CUaddress_mode)a->u;
		return CUDA_SUCCESS;
	case SET_FMODE:
	case SET_MFMODE:
		if (a->u > CU_TR_FILTER_MODE_LINEAR)
			return CUDA_ERROR_INVALID_VALUE;
		*(w == SET_FMODE ? &r->fm : &r->mfm) = (CUfilter_mode)a->u;
		return CUDA_SUCCESS;
	case SET_BIAS:
		r->bias = a->f[0];
		return CUDA_SUCCESS;
	case SET_CLAMP:
		r->minc = a->f[0];
		r->maxc = a->f[1];
		return CUDA_SUCCESS;
	case SET_ANISO:
		r->aniso = a->u;
		return CUDA_SUCCESS;
	case SET_BORDER:
		memcpy(r->border, a->f, sizeof(r->border));
		return CUDA_SUCCESS;
	case SET_FLAGS:
		if (a->u & ~(unsigned)TRSF_KNOWN)
			return CUDA_ERROR_INVALID_VALUE;
		r->flags = a->u;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult get(const struct sref *r, enum what w, const struct args *a)
{
	switch (w) {
	case GET_ADDR:
		if (!r->linear)
			return CUDA_ERROR_INVALID_VALUE; /* bound to no memory range */
		*(CUdeviceptr *)a->o1 = r->dptr;
		return CUDA_SUCCESS;
	case GET_ARRAY:
	case GET_MIP:
		if (!(w == GET_ARRAY ? (const void *)r->arr : (const void *)r->mip))
			return CUDA_ERROR_INVALID_VALUE; /* bound to no such array */
		*(const void **)a->o1 = w == GET_ARRAY ? (const void *)r->arr : (const void *)r->mip;
		return CUDA_SUCCESS;
	case GET_AMODE:
		if (a->i < 0 || a->i > 2)
			return CUDA_ERROR_INVALID_VALUE;
		*(CUaddress_mode *)a->o1 = r->am[a->i];
		return CUDA_SUCCESS;
	case GET_FMODE:
	case GET_MFMODE:
		*(CUfilter_mode *)a->o1 = w == GET_FMODE ? r->fm : r->mfm;
		return CUDA_SUCCESS;
	case GET_FORMAT:
		*(CUarray_format *)a->o1 = r->fmt;
		if (a->o2)
			*(int *)a->o2 = r->nch;
		return CUDA_SUCCESS;
	case GET_BIAS:
		*(float *)a->o1 = r->bias;
		return CUDA_SUCCESS;
	case GET_CLAMP:
		*(float *)a->o1 = r->minc;
		*(float *)a->o2 = r->maxc;
		return CUDA_SUCCESS;
	case GET_ANISO:
		*(int *)a->o1 = (int)r->aniso;
		return CUDA_SUCCESS;
	case GET_BORDER:
		memcpy(a->o1, r->border, sizeof(r->border));
		return CUDA_SUCCESS;
	case GET_FLAGS:
		*(unsigned *)a->o1 = r->flags;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* Operation @w on reference @h (a surface reference with @surf), under the lock. */
static CUresult op(const void *h, int surf, enum what w, const struct args *a)
{
	struct sref *r;
	CUresult rc;

	if (w >= GET_ADDR && (!a->o1 || ((w == GET_CLAMP) && !a->o2)))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_rmu);
	if (!(r = live(h, surf)))
		rc = CUDA_ERROR_INVALID_HANDLE;
	else
		rc = w >= GET_ADDR ? get(r, w, a) : set(r, w, a);
	pthread_mutex_unlock(&g_rmu);
	return rc;
}

static CUresult s_set_array(CUtexref t, CUarray arr, unsigned fl)
{
	return op(t, 0, SET_ARRAY, &(struct args){.h = arr, .u = fl});
}

static CUresult s_set_mip(CUtexref t, CUmipmappedArray m, unsigned fl)
{
	return op(t, 0, SET_MIP, &(struct args){.h = m, .u = fl});
}

static CUresult s_set_addr(size_t *off, CUtexref t, CUdeviceptr d, size_t n)
{
	(void)n;
	return op(t, 0, SET_ADDR, &(struct args){.d = d, .o1 = off});
}

static CUresult s_set_addr2d(CUtexref t, const CUDA_ARRAY_DESCRIPTOR *desc, CUdeviceptr d, size_t pitch)
{
	(void)pitch;
	return op(t, 0, SET_ADDR2D, &(struct args){.d = d, .desc = desc});
}

static CUresult s_set_format(CUtexref t, CUarray_format f, int n)
{
	return op(t, 0, SET_FORMAT, &(struct args){.u = (unsigned)f, .i = n});
}

static CUresult s_set_amode(CUtexref t, int dim, CUaddress_mode am)
{
	return op(t, 0, SET_AMODE, &(struct args){.i = dim, .u = (unsigned)am});
}

static CUresult s_set_fmode(CUtexref t, CUfilter_mode fm)
{
	return op(t, 0, SET_FMODE, &(struct args){.u = (unsigned)fm});
}

static CUresult s_set_mfmode(CUtexref t, CUfilter_mode fm)
{
	return op(t, 0, SET_MFMODE, &(struct args){.u = (unsigned)fm});
}

static CUresult s_set_bias(CUtexref t, float b)
{
	return op(t, 0, SET_BIAS, &(struct args){.f = {b}});
}

static CUresult s_set_clamp(CUtexref t, float lo, float hi)
{
	return op(t, 0, SET_CLAMP, &(struct args){.f = {lo, hi}});
}

static CUresult s_set_aniso(CUtexref t, unsigned a)
{
	return op(t, 0, SET_ANISO, &(struct args){.u = a});
}

static CUresult s_set_border(CUtexref t, float *c)
{
	struct args a = {0};

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(a.f, c, sizeof(a.f));
	return op(t, 0, SET_BORDER, &a);
}

static CUresult s_set_flags(CUtexref t, unsigned fl)
{
	return op(t, 0, SET_FLAGS, &(struct args){.u = fl});
}

static CUresult s_get_addr(CUdeviceptr *d, CUtexref t)
{
	return op(t, 0, GET_ADDR, &(struct args){.o1 = d});
}

static CUresult s_get_array(CUarray *arr, CUtexref t)
{
	return op(t, 0, GET_ARRAY, &(struct args){.o1 = arr});
}

static CUresult s_get_mip(CUmipmappedArray *m, CUtexref t)
{
	return op(t, 0, GET_MIP, &(struct args){.o1 = m});
}

static CUresult s_get_amode(CUaddress_mode *am, CUtexref t, int dim)
{
	return op(t, 0, GET_AMODE, &(struct args){.o1 = am, .i = dim});
}

static CUresult s_get_fmode(CUfilter_mode *fm, CUtexref t)
{
	return op(t, 0, GET_FMODE, &(struct args){.o1 = fm});
}

static CUresult s_get_format(CUarray_format *f, int *n, CUtexref t)
{
	return op(t, 0, GET_FORMAT, &(struct args){.o1 = f, .o2 = n});
}

static CUresult s_get_mfmode(CUfilter_mode *fm, CUtexref t)
{
	return op(t, 0, GET_MFMODE, &(struct args){.o1 = fm});
}

static CUresult s_get_bias(float *b, CUtexref t)
{
	return op(t, 0, GET_BIAS, &(struct args){.o1 = b});
}

static CUresult s_get_clamp(float *lo, float *hi, CUtexref t)
{
	return op(t, 0, GET_CLAMP, &(struct args){.o1 = lo, .o2 = hi});
}

static CUresult s_get_aniso(int *a, CUtexref t)
{
	return op(t, 0, GET_ANISO, &(struct args){.o1 = a});
}

static CUresult s_get_border(float *c, CUtexref t)
{
	return op(t, 0, GET_BORDER, &(struct args){.o1 = c});
}

static CUresult s_get_flags(unsigned *fl, CUtexref t)
{
	return op(t, 0, GET_FLAGS, &(struct args){.o1 = fl});
}

static CUresult s_surf_set(CUsurfref s, CUarray arr, unsigned fl)
{
	return op(s, 1, SET_ARRAY, &(struct args){.h = arr, .u = fl});
}

static CUresult s_surf_get(CUarray *arr, CUsurfref s)
{
	return op(s, 1, GET_ARRAY, &(struct args){.o1 = arr});
}

/* A texture reference's "binding" to a function: the module's already is. */
static CUresult s_param_texref(CUfunction f, int unit, CUtexref t)
{
	struct sref *r;

	if (!vc_si_is(f, T_FUNC))
		return CUDA_ERROR_INVALID_HANDLE;
	if (unit != CU_PARAM_TR_DEFAULT)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_rmu);
	r = live(t, 0);
	pthread_mutex_unlock(&g_rmu);
	return r ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

void vc_si_fill_texref(struct vc_cuda_driver *d)
{
	/* The loads are wrapped: this runs after module.c and link.c set them. */
	g_load = d->cuModuleLoadData;
	g_load_ex = d->cuModuleLoadDataEx;
	d->cuModuleLoadData = s_load;
	d->cuModuleLoadDataEx = s_load_ex;
	d->cuModuleGetTexRef = s_mod_tex;
	d->cuModuleGetSurfRef = s_mod_surf;
	d->cuTexRefCreate = s_create;
	d->cuTexRefDestroy = s_destroy;
	d->cuTexRefSetArray = s_set_array;
	d->cuTexRefSetMipmappedArray = s_set_mip;
	d->cuTexRefSetAddress_v2 = s_set_addr;
	d->cuTexRefSetAddress2D_v3 = s_set_addr2d;
	d->cuTexRefSetFormat = s_set_format;
	d->cuTexRefSetAddressMode = s_set_amode;
	d->cuTexRefSetFilterMode = s_set_fmode;
	d->cuTexRefSetMipmapFilterMode = s_set_mfmode;
	d->cuTexRefSetMipmapLevelBias = s_set_bias;
	d->cuTexRefSetMipmapLevelClamp = s_set_clamp;
	d->cuTexRefSetMaxAnisotropy = s_set_aniso;
	d->cuTexRefSetBorderColor = s_set_border;
	d->cuTexRefSetFlags = s_set_flags;
	d->cuTexRefGetAddress_v2 = s_get_addr;
	d->cuTexRefGetArray = s_get_array;
	d->cuTexRefGetMipmappedArray = s_get_mip;
	d->cuTexRefGetAddressMode = s_get_amode;
	d->cuTexRefGetFilterMode = s_get_fmode;
	d->cuTexRefGetFormat = s_get_format;
	d->cuTexRefGetMipmapFilterMode = s_get_mfmode;
	d->cuTexRefGetMipmapLevelBias = s_get_bias;
	d->cuTexRefGetMipmapLevelClamp = s_get_clamp;
	d->cuTexRefGetMaxAnisotropy = s_get_aniso;
	d->cuTexRefGetBorderColor = s_get_border;
	d->cuTexRefGetFlags = s_get_flags;
	d->cuSurfRefSetArray = s_surf_set;
	d->cuSurfRefGetArray = s_surf_get;
	d->cuParamSetTexRef = s_param_texref;
}
