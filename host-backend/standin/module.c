/* SPDX-License-Identifier: MIT */
/*
 * module.c - the CI stand-in's modules, libraries, functions and kernels:
 * any image loads and none is read; functions and kernels are named
 * records, two of them test doubles (standin.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"

/* ---- modules, libraries, functions ------------------------------------------------- */

static CUresult s_mod_load(CUmodule *m, const void *img)
{
	/* Any image loads: kernels are never run here. */
	return img ? vc_si_make(T_MOD, (void **)m) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_mod_unload(CUmodule m)
{
	if (!vc_si_is(m, T_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	vc_si_del_obj(m);
	return vc_si_synced(CUDA_SUCCESS);
}

/* A function or kernel object named @name. */
static CUresult make_named(enum tag t, const char *name, void **out)
{
	CUresult rc = vc_si_make(t, out);

	if (rc == CUDA_SUCCESS && name) {
		snprintf(((struct obj *)*out)->name, sizeof(((struct obj *)*out)->name), "%s", name);
		((struct obj *)*out)->printer = !strcmp(name, VC_STANDIN_PRINTF_NAME);
		((struct obj *)*out)->store = !strcmp(name, VC_STANDIN_STORE_NAME);
	}
	return rc;
}

static CUresult s_mod_func(CUfunction *f, CUmodule m, const char *name)
{
	CUresult rc = vc_si_is(m, T_MOD) ? make_named(T_FUNC, name, (void **)f) : CUDA_ERROR_INVALID_HANDLE;

	if (rc == CUDA_SUCCESS)
		vc_si_adopt(*f, m); /* functions go with their module */
	return rc;
}

static CUresult s_lib_load(CUlibrary *l, const void *code, CUjit_option *jo, void **jv, unsigned nj,
			   CUlibraryOption *lo, void **lv, unsigned nl)
{
	(void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
	return code ? vc_si_make(T_LIB, (void **)l) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_lib_unload(CUlibrary l)
{
	if (!vc_si_is(l, T_LIB))
		return CUDA_ERROR_INVALID_HANDLE;
	vc_si_del_obj(l);
	return vc_si_synced(CUDA_SUCCESS);
}

static CUresult s_lib_kernel(CUkernel *k, CUlibrary l, const char *name)
{
	CUresult rc = vc_si_is(l, T_LIB) ? make_named(T_KERN, name, (void **)k) : CUDA_ERROR_INVALID_HANDLE;

	if (rc == CUDA_SUCCESS)
		vc_si_adopt(*k, l); /* kernels go with their library */
	return rc;
}

/* A kernel's function: one per kernel (natively one per kernel and
 * context), made at the first call, deleted with the kernel. */
static CUresult s_kernel_func(CUfunction *f, CUkernel k)
{
	struct obj *kern = (struct obj *)k;
	CUresult rc = CUDA_SUCCESS;

	if (!vc_si_is(k, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!kern->mfunc && (rc = make_named(T_FUNC, kern->name, (void **)&kern->mfunc)) == CUDA_SUCCESS) {
		kern->mfunc->printer = kern->printer;
		kern->mfunc->store = kern->store;
		vc_si_adopt(kern->mfunc, kern);
	}
	if (rc == CUDA_SUCCESS)
		*f = (CUfunction)kern->mfunc;
	return rc;
}

/* Every stand-in module holds one function, as cuFFT's modules do. */
static CUresult s_mod_func_count(unsigned int *n, CUmodule m)
{
	if (!vc_si_is(m, T_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	*n = 1;
	return CUDA_SUCCESS;
}

static CUresult s_mod_enum(CUfunction *f, unsigned int n, CUmodule m)
{
	struct obj *mod = (struct obj *)m;
	CUresult rc = CUDA_SUCCESS;

	if (!vc_si_is(m, T_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!f || !n)
		return CUDA_ERROR_INVALID_VALUE;
	/* Modules are the serving thread's alone (as lib->kern is). */
	if (!mod->mfunc)
		if ((rc = make_named(T_FUNC, "standin_function", (void **)&mod->mfunc)) == CUDA_SUCCESS)
			vc_si_adopt(mod->mfunc, mod);
	if (rc == CUDA_SUCCESS)
		f[0] = (CUfunction)mod->mfunc;
	return rc;
}

static CUresult s_lib_kernel_count(unsigned int *n, CUlibrary l)
{
	if (!vc_si_is(l, T_LIB))
		return CUDA_ERROR_INVALID_HANDLE;
	*n = LIB_KERNELS;
	return CUDA_SUCCESS;
}

static CUresult s_lib_enum(CUkernel *k, unsigned int n, CUlibrary l)
{
	struct obj *lib = (struct obj *)l;
	CUresult rc = CUDA_SUCCESS;

	if (!vc_si_is(l, T_LIB))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!k || !n)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	if (!lib->kern)
		lib->kern = calloc(LIB_KERNELS, sizeof(*lib->kern));
	pthread_mutex_unlock(&g_mu);
	if (!lib->kern)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned i = 0; i < n && i < LIB_KERNELS && rc == CUDA_SUCCESS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "standin_kernel_%u", i);
		if (!lib->kern[i])
			if ((rc = make_named(T_KERN, name, (void **)&lib->kern[i])) == CUDA_SUCCESS)
				vc_si_adopt(lib->kern[i], lib);
		k[i] = (CUkernel)lib->kern[i];
	}
	return rc;
}

static CUresult s_get_name(const char **name, void *h, enum tag t)
{
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_is(h, t))
		return CUDA_ERROR_INVALID_HANDLE;
	*name = ((struct obj *)h)->name;
	return CUDA_SUCCESS;
}

static CUresult s_kernel_name(const char **name, CUkernel k)
{
	return s_get_name(name, k, T_KERN);
}

static CUresult s_func_name(const char **name, CUfunction f)
{
	return s_get_name(name, f, T_FUNC);
}

static CUresult s_global(CUdeviceptr *d, size_t *n, void *owner, const char *name)
{
	struct obj *o = owner;
	struct sglobal *g;
	CUresult rc;

	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	for (g = o->globals; g && strcmp(g->name, name); g = g->next)
		;
	if (!g) {
		if (strlen(name) >= sizeof(g->name))
			return CUDA_ERROR_NOT_FOUND;
		g = calloc(1, sizeof(*g));
		if (!g)
			return CUDA_ERROR_OUT_OF_MEMORY;
		if ((rc = vc_si_alloc(&g->d, GLOBAL_BYTES))) {
			free(g);
			return rc;
		}
		snprintf(g->name, sizeof(g->name), "%s", name);
		g->next = o->globals;
		o->globals = g;
	}
	if (d)
		*d = g->d;
	if (n)
		*n = GLOBAL_BYTES;
	return CUDA_SUCCESS;
}

static CUresult s_mod_global(CUdeviceptr *d, size_t *n, CUmodule m, const char *name)
{
	return vc_si_is(m, T_MOD) ? s_global(d, n, m, name) : CUDA_ERROR_INVALID_HANDLE;
}

CUresult vc_si_lib_global(CUdeviceptr *d, size_t *n, CUlibrary l, const char *name)
{
	return vc_si_is(l, T_LIB) ? s_global(d, n, l, name) : CUDA_ERROR_INVALID_HANDLE;
}

/* The test doubles' parameters: the printf double's int, the store
 * double's pointer and value. */
static CUresult printer_params(const void *f, size_t i, size_t *off, size_t *size)
{
	const struct obj *o = f;

	if (o->printer && i == 0) {
		*off = 0;
		*size = sizeof(int);
		return CUDA_SUCCESS;
	}
	if (o->store && i < 2) {
		*off = i ? sizeof(CUdeviceptr) : 0;
		*size = i ? sizeof(unsigned int) : sizeof(CUdeviceptr);
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_func_params(CUfunction f, size_t i, size_t *off, size_t *size)
{
	/* The layout is in the image's .nv.info, which the stand-in does not
	 * read: "no parameter", so launches carry none. */
	return vc_si_is(f, T_FUNC) ? printer_params(f, i, off, size) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_kernel_params(CUkernel k, size_t i, size_t *off, size_t *size)
{
	return vc_si_is(k, T_KERN) ? printer_params(k, i, off, size) : CUDA_ERROR_INVALID_HANDLE;
}

static int attr_value(int a)
{
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		return 1024;
	case CU_FUNC_ATTRIBUTE_NUM_REGS:
		return 32;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION:
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
		return 90;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		return 48 * 1024;
	default:
		return 0;
	}
}

static CUresult s_func_attr(int *v, CUfunction_attribute a, CUfunction f)
{
	if (!vc_si_is(f, T_FUNC) && !vc_si_is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	*v = attr_value(a);
	if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && ((struct obj *)f)->max_dyn_smem)
		*v = ((struct obj *)f)->max_dyn_smem;
	return CUDA_SUCCESS;
}

static CUresult s_kernel_attr(int *v, CUfunction_attribute a, CUkernel k, CUdevice d)
{
	(void)d;
	return s_func_attr(v, a, (CUfunction)k);
}

static CUresult s_func_set_attr(CUfunction f, CUfunction_attribute a, int v)
{
	if (!vc_si_is(f, T_FUNC) && !vc_si_is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
		if (v < 0 || v > vc_standin_attrs[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN])
			return CUDA_ERROR_INVALID_VALUE;
		((struct obj *)f)->max_dyn_smem = v;
	}
	return CUDA_SUCCESS;
}

static CUresult s_kernel_set_attr(CUfunction_attribute a, int v, CUkernel k, CUdevice d)
{
	(void)d;
	return s_func_set_attr((CUfunction)k, a, v);
}

static CUresult s_func_cache(CUfunction f, CUfunc_cache c)
{
	(void)c;
	return vc_si_is(f, T_FUNC) || vc_si_is(f, T_KERN) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_kernel_cache(CUkernel k, CUfunc_cache c, CUdevice d)
{
	(void)d;
	return s_func_cache((CUfunction)k, c);
}

/* Functions are loaded as their module is (the double has no lazy loading
 * to do), so loading one only checks the handle. */
static CUresult s_func_load(CUfunction f)
{
	return vc_si_is(f, T_FUNC) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_func_is_loaded(CUfunctionLoadingState *st, CUfunction f)
{
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_is(f, T_FUNC))
		return CUDA_ERROR_INVALID_HANDLE;
	*st = CU_FUNCTION_LOADING_STATE_LOADED;
	return CUDA_SUCCESS;
}

static CUresult s_loading_mode(CUmoduleLoadingMode *m)
{
	*m = CU_MODULE_LAZY_LOADING;
	return CUDA_SUCCESS;
}

void vc_si_fill_module(struct vc_cuda_driver *d)
{
	d->cuModuleLoadData = s_mod_load;
	d->cuModuleUnload = s_mod_unload;
	d->cuModuleGetFunction = s_mod_func;
	d->cuModuleGetGlobal_v2 = s_mod_global;
	d->cuModuleGetLoadingMode = s_loading_mode;
	d->cuLibraryLoadData = s_lib_load;
	d->cuLibraryUnload = s_lib_unload;
	d->cuLibraryGetKernel = s_lib_kernel;
	d->cuLibraryGetKernelCount = s_lib_kernel_count;
	d->cuModuleGetFunctionCount = s_mod_func_count;
	d->cuModuleEnumerateFunctions = s_mod_enum;
	d->cuLibraryEnumerateKernels = s_lib_enum;
	d->cuKernelGetName = s_kernel_name;
	d->cuFuncGetName = s_func_name;
	d->cuFuncLoad = s_func_load;
	d->cuFuncIsLoaded = s_func_is_loaded;
	d->cuLibraryGetGlobal = vc_si_lib_global;
	d->cuKernelGetFunction = s_kernel_func;
	d->cuFuncGetParamInfo = s_func_params;
	d->cuKernelGetParamInfo = s_kernel_params;
	d->cuFuncGetAttribute = s_func_attr;
	d->cuKernelGetAttribute = s_kernel_attr;
	d->cuFuncSetAttribute = s_func_set_attr;
	d->cuKernelSetAttribute = s_kernel_set_attr;
	d->cuFuncSetCacheConfig = s_func_cache;
	d->cuKernelSetCacheConfig = s_kernel_cache;
}
