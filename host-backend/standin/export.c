/* SPDX-License-Identifier: MIT */
/*
 * export.c - the CI stand-in's private export table, the one the executor
 * asks the driver for.
 */
#include <string.h>

#include "standin/standin_priv.h"

/* ---- the one private table the executor asks the driver (21318c60) ----------------
 * Slots 4, 39 and 51 answer what an H200's driver answered (docs/
 * cuda13-driver-surface.md): 1, 7, and an opaque object. */

static int g_ctxq_obj; /* the opaque object slot 51 hands out */

static CUresult s_ctxq4(CUcontext c, uint64_t *out, void *scratch)
{
	(void)scratch;
	if (!vc_si_is(c, T_CTX) || !out)
		return CUDA_ERROR_INVALID_VALUE;
	*out = 1;
	return CUDA_SUCCESS;
}

static CUresult s_ctxq51(CUcontext c, CUstream s, void **out, void *scratch)
{
	(void)scratch;
	/* The real driver dereferences the stream: anything but one of its
	 * streams (or 0) would crash it, so the stand-in refuses it loudly. */
	if (!vc_si_is(c, T_CTX) || !out || !vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_VALUE;
	*out = &g_ctxq_obj;
	return CUDA_SUCCESS;
}

static CUresult s_ctxq39(CUcontext c, void *obj, int *out, void *scratch)
{
	(void)scratch;
	if (!vc_si_is(c, T_CTX) || obj != &g_ctxq_obj || !out)
		return CUDA_ERROR_INVALID_VALUE;
	*out = 7;
	return CUDA_SUCCESS;
}

static uint64_t g_t21318c60[93];

static CUresult s_export_table(const void **t, const CUuuid *id)
{
	static const uint8_t want[16] = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
					 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};
	CUresult (*f4)(CUcontext, uint64_t *, void *) = s_ctxq4;
	CUresult (*f39)(CUcontext, void *, int *, void *) = s_ctxq39;
	CUresult (*f51)(CUcontext, CUstream, void **, void *) = s_ctxq51;

	if (!t || !id)
		return CUDA_ERROR_INVALID_VALUE;
	if (memcmp(id->bytes, want, sizeof(want))) {
		*t = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
	g_t21318c60[0] = sizeof(g_t21318c60);
	memcpy(&g_t21318c60[4], &f4, sizeof(f4));
	memcpy(&g_t21318c60[39], &f39, sizeof(f39));
	memcpy(&g_t21318c60[51], &f51, sizeof(f51));
	*t = g_t21318c60;
	return CUDA_SUCCESS;
}

void vc_si_fill_export(struct vc_cuda_driver *d)
{
	d->cuGetExportTable = s_export_table;
}
