/* SPDX-License-Identifier: MIT */
/*
 * link.c - the CI stand-in's JIT linker: a TEST DOUBLE with known semantics,
 * not a linker. It checks and records its inputs, and "links" them by
 * concatenating their text (NUL bytes dropped, so the result reads as one
 * PTX-like image that the stand-in's module loader accepts); it writes
 * known lines into the log buffers its options name:
 *   info log:  "vcuda stand-in linker: input <name> (<n> bytes)" per input,
 *              then "vcuda stand-in linker: linked <k> inputs, <m> bytes"
 *   error log: "vcuda stand-in linker: <name> refused" for an input that
 *              contains VC_STANDIN_LINK_REFUSE, which fails with
 *              CUDA_ERROR_INVALID_PTX;
 * and a wall time of 0.5 ms. cuModuleLoadDataEx loads like cuModuleLoadData
 * and writes "vcuda stand-in JIT: loaded" into the info log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"

#define LINK_MAGIC 0x4c494e4bu
#define LINK_INPUT_MAX (64u << 20)

struct slink {
	uint32_t magic;
	unsigned int n;
	CUjit_option *opt; /* the caller's arrays, valid for the link's life */
	void **val;
	size_t info_cap, err_cap; /* the log sizes given (the arrays then hold the filled sizes) */
	char *out;
	size_t len, cap;
	unsigned inputs;
	int complete;
};

/* The value of option @o in the arrays, or 0. */
static size_t opt_value(CUjit_option *opt, void **val, unsigned int n, int o)
{
	for (unsigned int i = 0; i < n; i++)
		if ((int)opt[i] == o)
			return (size_t)(uintptr_t)val[i];
	return 0;
}

/* Append @text to the log of option @buf_opt, of @cap bytes. */
static void log_add(CUjit_option *opt, void **val, unsigned int n, int buf_opt, size_t cap, const char *text)
{
	char *buf = (char *)opt_value(opt, val, n, buf_opt);
	size_t used;

	if (!buf || !cap)
		return;
	used = strnlen(buf, cap);
	if (used >= cap - 1)
		return;
	snprintf(buf + used, cap - used, "%s%s", used ? "\n" : "", text);
}

/* Report the filled sizes and the wall time, as the driver does after a call. */
static void log_sizes(CUjit_option *opt, void **val, unsigned int n)
{
	char *info = NULL, *err = NULL;

	for (unsigned int i = 0; i < n; i++) {
		if (opt[i] == CU_JIT_INFO_LOG_BUFFER)
			info = val[i];
		if (opt[i] == CU_JIT_ERROR_LOG_BUFFER)
			err = val[i];
	}
	for (unsigned int i = 0; i < n; i++) {
		size_t cap = (size_t)(uintptr_t)val[i];

		if (opt[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES && info && cap)
			val[i] = (void *)(uintptr_t)(strlen(info) + 1);
		else if (opt[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES && err && cap)
			val[i] = (void *)(uintptr_t)(strlen(err) + 1);
		else if (opt[i] == CU_JIT_WALL_TIME) {
			float ms = 0.5f;

			memcpy(&val[i], &ms, sizeof(ms));
		}
	}
}

static int opts_ok(unsigned int n, CUjit_option *opt, void **val)
{
	if (n && (!opt || !val))
		return 0;
	for (unsigned int i = 0; i < n; i++)
		if ((int)opt[i] < 0 || opt[i] >= CU_JIT_NUM_OPTIONS)
			return 0;
	return 1;
}

static CUresult s_link_create(unsigned int n, CUjit_option *opt, void **val, CUlinkState *out)
{
	struct slink *l;

	if (!out || !opts_ok(n, opt, val))
		return CUDA_ERROR_INVALID_VALUE;
	if (vc_si_need_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!(l = calloc(1, sizeof(*l))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	l->magic = LINK_MAGIC;
	l->n = n;
	l->opt = opt;
	l->val = val;
	l->info_cap = opt_value(opt, val, n, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
	l->err_cap = opt_value(opt, val, n, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
	*out = (CUlinkState)l;
	return CUDA_SUCCESS;
}

static struct slink *link_of(CUlinkState s)
{
	struct slink *l = (struct slink *)s;

	return l && l->magic == LINK_MAGIC ? l : NULL;
}

static CUresult s_link_add(CUlinkState s, CUjitInputType type, void *data, size_t size, const char *name,
			   unsigned int n, CUjit_option *opt, void **val)
{
	struct slink *l = link_of(s);
	char line[320];
	const char *nm = name ? name : "(unnamed)";

	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!data || !size || (int)type < 0 || type >= CU_JIT_NUM_INPUT_TYPES || !opts_ok(n, opt, val))
		return CUDA_ERROR_INVALID_VALUE;
	if (size > LINK_INPUT_MAX - l->len)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (memmem(data, size, VC_STANDIN_LINK_REFUSE, strlen(VC_STANDIN_LINK_REFUSE))) {
		snprintf(line, sizeof(line), "vcuda stand-in linker: %s refused", nm);
		log_add(l->opt, l->val, l->n, CU_JIT_ERROR_LOG_BUFFER, l->err_cap, line);
		log_sizes(l->opt, l->val, l->n);
		return CUDA_ERROR_INVALID_PTX;
	}
	if (l->len + size + 2 > l->cap) {
		size_t cap = (l->len + size + 2) * 2;
		char *p = realloc(l->out, cap);

		if (!p)
			return CUDA_ERROR_OUT_OF_MEMORY;
		l->out = p;
		l->cap = cap;
	}
	for (size_t i = 0; i < size; i++)
		if (((const char *)data)[i])
			l->out[l->len++] = ((const char *)data)[i];
	l->out[l->len++] = '\n';
	l->out[l->len] = '\0';
	l->inputs++;
	snprintf(line, sizeof(line), "vcuda stand-in linker: input %s (%zu bytes)", nm, size);
	log_add(l->opt, l->val, l->n, CU_JIT_INFO_LOG_BUFFER, l->info_cap, line);
	log_sizes(l->opt, l->val, l->n);
	return CUDA_SUCCESS;
}

static CUresult s_link_complete(CUlinkState s, void **cubin, size_t *size)
{
	struct slink *l = link_of(s);
	char line[128];

	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!cubin || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (!l->inputs)
		return CUDA_ERROR_INVALID_IMAGE; /* nothing to link */
	snprintf(line, sizeof(line), "vcuda stand-in linker: linked %u inputs, %zu bytes", l->inputs, l->len + 1);
	log_add(l->opt, l->val, l->n, CU_JIT_INFO_LOG_BUFFER, l->info_cap, line);
	log_sizes(l->opt, l->val, l->n);
	l->complete = 1;
	*cubin = l->out;
	*size = l->len + 1; /* its NUL: the image is text */
	return CUDA_SUCCESS;
}

static CUresult s_link_destroy(CUlinkState s)
{
	struct slink *l = link_of(s);

	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	l->magic = 0;
	free(l->out);
	free(l);
	return CUDA_SUCCESS;
}

static CUresult s_load_ex(CUmodule *m, const void *img, unsigned int n, CUjit_option *opt, void **val)
{
	CUresult rc;

	if (!opts_ok(n, opt, val))
		return CUDA_ERROR_INVALID_VALUE;
	if (!img || !m)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_si_make(T_MOD, (void **)m)) == CUDA_SUCCESS) {
		log_add(opt, val, n, CU_JIT_INFO_LOG_BUFFER, opt_value(opt, val, n, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES),
			"vcuda stand-in JIT: loaded");
		log_sizes(opt, val, n);
	}
	return rc;
}

static CUresult s_kernel_library(CUlibrary *lib, CUkernel k)
{
	if (!lib)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_is(k, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	*lib = (CUlibrary)((struct obj *)k)->parent;
	return CUDA_SUCCESS;
}

void vc_si_fill_link(struct vc_cuda_driver *d)
{
	d->cuLinkCreate_v2 = s_link_create;
	d->cuLinkAddData_v2 = s_link_add;
	d->cuLinkComplete = s_link_complete;
	d->cuLinkDestroy = s_link_destroy;
	d->cuModuleLoadDataEx = s_load_ex;
	d->cuKernelGetLibrary = s_kernel_library;
}
