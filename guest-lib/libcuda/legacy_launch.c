/* SPDX-License-Identifier: MIT */
/*
 * legacy_launch.c - the deprecated execution control the driver still serves:
 * cuFuncSetBlockShape, cuFuncSetSharedSize, cuParamSet*, cuLaunch,
 * cuLaunchGrid(Async), kept per function here and launched as cuLaunchKernel
 * with the parameter buffer (the `extra` form) the program laid out; and
 * cuLaunchCooperativeKernelMultiDevice, which on one device is a
 * cooperative launch. cuParamSetTexRef is remoted with the texture
 * references (generated; texref.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vc_cu_guest.h"

#define FUNCS 64u /* functions with legacy state at once; the oldest goes first */

struct legacy {
	CUfunction f;
	int block[3];
	unsigned shared;
	unsigned size; /* cuParamSetSize */
	uint8_t *params; /* VC_LAUNCH_PARAMS_MAX bytes */
};

static struct legacy g_f[FUNCS];
static unsigned g_next;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

/* With g_mu held: @f's state, made when @make (NULL if that fails). */
static struct legacy *state(CUfunction f, int make)
{
	struct legacy *l;

	for (unsigned i = 0; i < FUNCS; i++)
		if (g_f[i].f == f)
			return &g_f[i];
	if (!make)
		return NULL;
	l = &g_f[g_next++ % FUNCS];
	free(l->params);
	memset(l, 0, sizeof(*l));
	if (!(l->params = calloc(1, VC_LAUNCH_PARAMS_MAX)))
		return NULL;
	l->f = f;
	l->block[0] = l->block[1] = l->block[2] = 1;
	return l;
}

/* Ready to be used: an initialised library and a function. */
static CUresult usable(CUfunction f)
{
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!vc_cu_current())
		return CUDA_ERROR_INVALID_CONTEXT;
	return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z)
{
	struct legacy *l;
	CUresult rc = usable(hfunc);

	if (rc)
		return rc;
	if (x <= 0 || y <= 0 || z <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	if ((l = state(hfunc, 1))) {
		l->block[0] = x;
		l->block[1] = y;
		l->block[2] = z;
	}
	pthread_mutex_unlock(&g_mu);
	return l ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes)
{
	struct legacy *l;
	CUresult rc = usable(hfunc);

	if (rc)
		return rc;
	pthread_mutex_lock(&g_mu);
	if ((l = state(hfunc, 1)))
		l->shared = bytes;
	pthread_mutex_unlock(&g_mu);
	return l ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuParamSetSize(CUfunction hfunc, unsigned int numbytes)
{
	struct legacy *l;
	CUresult rc = usable(hfunc);

	if (rc)
		return rc;
	if (numbytes > VC_LAUNCH_PARAMS_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	if ((l = state(hfunc, 1)))
		l->size = numbytes;
	pthread_mutex_unlock(&g_mu);
	return l ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuParamSetv(CUfunction hfunc, int offset, void *ptr, unsigned int numbytes)
{
	struct legacy *l;
	CUresult rc = usable(hfunc);

	if (rc)
		return rc;
	if (offset < 0 || (numbytes && !ptr) || numbytes > VC_LAUNCH_PARAMS_MAX ||
	    (unsigned)offset > VC_LAUNCH_PARAMS_MAX - numbytes)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	if ((l = state(hfunc, 1)))
		memcpy(l->params + offset, ptr, numbytes);
	pthread_mutex_unlock(&g_mu);
	return l ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuParamSeti(CUfunction hfunc, int offset, unsigned int value)
{
	return cuParamSetv(hfunc, offset, &value, sizeof(value));
}

CUresult CUDAAPI cuParamSetf(CUfunction hfunc, int offset, float value)
{
	return cuParamSetv(hfunc, offset, &value, sizeof(value));
}

CUresult CUDAAPI cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream)
{
	struct legacy copy, *l;
	size_t size;
	void *extra[5];
	CUresult rc = usable(f);

	if (rc)
		return rc;
	if (grid_width <= 0 || grid_height <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(copy.params = malloc(VC_LAUNCH_PARAMS_MAX)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g_mu);
	if ((l = state(f, 0))) {
		memcpy(copy.block, l->block, sizeof(copy.block));
		copy.shared = l->shared;
		copy.size = l->size;
		memcpy(copy.params, l->params, l->size);
	} else {
		copy.block[0] = copy.block[1] = copy.block[2] = 1;
		copy.shared = copy.size = 0;
	}
	pthread_mutex_unlock(&g_mu);
	size = copy.size;
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = copy.params;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = &size;
	extra[4] = CU_LAUNCH_PARAM_END;
	rc = cuLaunchKernel(f, (unsigned)grid_width, (unsigned)grid_height, 1, (unsigned)copy.block[0],
			    (unsigned)copy.block[1], (unsigned)copy.block[2], copy.shared, hStream, NULL,
			    size ? extra : NULL);
	free(copy.params);
	return rc;
}

CUresult CUDAAPI cuLaunchGrid(CUfunction f, int grid_width, int grid_height)
{
	return cuLaunchGridAsync(f, grid_width, grid_height, NULL);
}

CUresult CUDAAPI cuLaunch(CUfunction f)
{
	return cuLaunchGridAsync(f, 1, 1, NULL);
}

/* ---- cooperative launches on several devices ------------------------------------- */

CUresult CUDAAPI cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *launchParamsList, unsigned int numDevices,
						      unsigned int flags)
{
	const CUDA_LAUNCH_PARAMS *p = launchParamsList;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!p || !numDevices ||
	    (flags & ~(unsigned)(CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC |
				 CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC)))
		return CUDA_ERROR_INVALID_VALUE;
	/* A VM sees one GPU: two launches would be two on the same device,
	 * which the call forbids. One is a cooperative launch (the sync flags
	 * only order it against other devices' streams). */
	if (numDevices > (unsigned)vc_cu_state()->device_count)
		return CUDA_ERROR_INVALID_VALUE;
	return cuLaunchCooperativeKernel(p->function, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
					 p->blockDimY, p->blockDimZ, p->sharedMemBytes, p->hStream, p->kernelParams);
}
