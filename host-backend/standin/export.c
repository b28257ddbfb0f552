/* SPDX-License-Identifier: MIT */
/*
 * export.c - the CI stand-in's private export tables, the ones the executor
 * asks the driver for: 21318c60 (context queries) and 1734dc26 (clusters).
 */
#include <stdlib.h>
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

/* ---- 1734dc26, the cluster prototype table (cuBLASLt) --------------------------------
 * A test double: slot 4 mallocs two TPC maps of VC_STANDIN_TPCS bytes,
 * vgpc[i] = i / 9 and mtpc[i] = i % 9 (an H200 has 66 TPCs in GPCs of up to
 * 9), which slot 13 frees; slot 8 says clusters launch; slot 5 answers a
 * function's default cluster shape, set by slot 1. */

static int g_cluster_dim[3];

static CUresult s_cl_set_dim(CUfunction f, int x, int y, int z)
{
	if (!f || x < 0 || y < 0 || z < 0)
		return CUDA_ERROR_INVALID_VALUE;
	g_cluster_dim[0] = x;
	g_cluster_dim[1] = y;
	g_cluster_dim[2] = z;
	return CUDA_SUCCESS;
}

static CUresult s_cl_tpc_maps(unsigned char **vgpc, unsigned char **mtpc)
{
	if (!vgpc || !mtpc)
		return CUDA_ERROR_INVALID_VALUE;
	*vgpc = malloc(VC_STANDIN_TPCS);
	*mtpc = malloc(VC_STANDIN_TPCS);
	if (!*vgpc || !*mtpc) {
		free(*vgpc);
		free(*mtpc);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (int i = 0; i < VC_STANDIN_TPCS; i++) {
		(*vgpc)[i] = (unsigned char)(i / 9);
		(*mtpc)[i] = (unsigned char)(i % 9);
	}
	return CUDA_SUCCESS;
}

static CUresult s_cl_free_maps(unsigned char *vgpc, unsigned char *mtpc)
{
	free(vgpc);
	free(mtpc);
	return CUDA_SUCCESS;
}

static CUresult s_cl_get_dim(CUfunction f, int *x, int *y, int *z)
{
	if (!f || !x || !y || !z)
		return CUDA_ERROR_INVALID_VALUE;
	*x = g_cluster_dim[0];
	*y = g_cluster_dim[1];
	*z = g_cluster_dim[2];
	return CUDA_SUCCESS;
}

static CUresult s_cl_dev_launch(CUdevice d, int *v)
{
	if (!vc_si_dev_ok(d) || !v)
		return CUDA_ERROR_INVALID_DEVICE;
	*v = 1;
	return CUDA_SUCCESS;
}

static uint64_t g_t1734dc26[17];

static CUresult s_export_table(const void **t, const CUuuid *id)
{
	static const uint8_t want[16] = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
					 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};
	CUresult (*f4)(CUcontext, uint64_t *, void *) = s_ctxq4;
	CUresult (*f39)(CUcontext, void *, int *, void *) = s_ctxq39;
	CUresult (*f51)(CUcontext, CUstream, void **, void *) = s_ctxq51;

	static const uint8_t cluster[16] = {0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45,
					    0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca};
	CUresult (*c1)(CUfunction, int, int, int) = s_cl_set_dim;
	CUresult (*c4)(unsigned char **, unsigned char **) = s_cl_tpc_maps;
	CUresult (*c5)(CUfunction, int *, int *, int *) = s_cl_get_dim;
	CUresult (*c8)(CUdevice, int *) = s_cl_dev_launch;
	CUresult (*c13)(unsigned char *, unsigned char *) = s_cl_free_maps;

	if (!t || !id)
		return CUDA_ERROR_INVALID_VALUE;
	if (!memcmp(id->bytes, cluster, sizeof(cluster))) {
		g_t1734dc26[0] = sizeof(g_t1734dc26);
		memcpy(&g_t1734dc26[1], &c1, sizeof(c1));
		memcpy(&g_t1734dc26[4], &c4, sizeof(c4));
		memcpy(&g_t1734dc26[5], &c5, sizeof(c5));
		memcpy(&g_t1734dc26[8], &c8, sizeof(c8));
		memcpy(&g_t1734dc26[13], &c13, sizeof(c13));
		*t = g_t1734dc26;
		return CUDA_SUCCESS;
	}
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
