/* SPDX-License-Identifier: MIT */
/*
 * launch.c - the CI stand-in's kernel launches, checked for shape and
 * counted, never run: only the test doubles (standin.h) do what they
 * stand for (the printf double's output waits in printf.c). Also
 * occupancy, which answers as a GPU would.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"

/* Parameter @i (@size bytes at packed offset @off) of a launch, from the
 * pointer array or the packed buffer; false when it is not there. */
static bool launch_arg(void **params, void **extra, int i, size_t off, void *v, size_t size)
{
	void *buf = NULL;
	size_t bsize = 0;

	if (params && params[i]) {
		memcpy(v, params[i], size);
		return true;
	}
	for (int k = 0; extra && k < 8 && extra[k] != CU_LAUNCH_PARAM_END; k += 2) {
		if (extra[k] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[k + 1];
		else if (extra[k] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[k + 1])
			bsize = *(size_t *)extra[k + 1];
	}
	if (!buf || bsize < off + size)
		return false;
	memcpy(v, (uint8_t *)buf + off, size);
	return true;
}

/* The printf double's int parameter. */
static int printf_arg(void **params, void **extra)
{
	int v = 0;

	launch_arg(params, extra, 0, 0, &v, sizeof(v));
	return v < 0 ? 0 : v;
}

/* ---- launches and occupancy ---------------------------------------------------- */

static CUresult s_launch(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	if (!vc_si_is(f, T_FUNC) && !vc_si_is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!c->gridDimX || !c->gridDimY || !c->gridDimZ || !c->blockDimX || !c->blockDimY || !c->blockDimZ ||
	    (uint64_t)c->blockDimX * c->blockDimY * c->blockDimZ > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_stream_ok(c->hStream))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_mu);
	g_launches++;
	if (g_sim_ns) {
		g_busy_until = vc_si_sim_submit(vc_si_sim_now());
	}
	if (((struct obj *)f)->store) {
		CUdeviceptr dst = 0;
		unsigned int v = 0;
		uint8_t *at;

		if (!launch_arg(params, extra, 0, 0, &dst, sizeof(dst)) ||
		    !launch_arg(params, extra, 1, sizeof(dst), &v, sizeof(v))) {
			pthread_mutex_unlock(&g_mu);
			return CUDA_ERROR_INVALID_VALUE;
		}
		at = vc_smem_ptr(&g_mem, dst, sizeof(v));
		if (!at) {
			pthread_mutex_unlock(&g_mu);
			return CUDA_ERROR_ILLEGAL_ADDRESS; /* where a GPU would fault */
		}
		memcpy(at, &v, sizeof(v));
	}
	if (t_ctx && ((struct obj *)f)->printer)
		vc_si_printf_queue(printf_arg(params, extra));
	pthread_mutex_unlock(&g_mu);
	return vc_si_need_ctx();
}

static CUresult s_occupancy(int *n, CUfunction f, int block, size_t smem)
{
	(void)smem;
	if (!vc_si_is(f, T_FUNC) && !vc_si_is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	*n = block > 0 ? 2048 / block : 0;
	return CUDA_SUCCESS;
}

/* One cluster of any shape fits at a time (the figure is the driver's to give). */
static CUresult s_max_clusters(int *n, CUfunction f, const CUlaunchConfig *c)
{
	if (!vc_si_is(f, T_FUNC) && !vc_si_is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n || !c)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 1;
	return CUDA_SUCCESS;
}

/* Functions use no shared memory of their own here: all a block may have. */
static CUresult s_avail_smem(size_t *n, CUfunction f, int blocks, int block)
{
	if (!vc_si_is(f, T_FUNC) && !vc_si_is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n || blocks <= 0 || block <= 0 || block > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	*n = (size_t)vc_standin_attrs[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN];
	return CUDA_SUCCESS;
}

static CUresult s_occupancy_f(int *n, CUfunction f, int block, size_t smem, unsigned flags)
{
	(void)flags;
	return s_occupancy(n, f, block, smem);
}

void vc_si_fill_launch(struct vc_cuda_driver *d)
{
	d->cuLaunchKernelEx = s_launch;
	d->cuOccupancyMaxActiveBlocksPerMultiprocessor = s_occupancy;
	d->cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags = s_occupancy_f;
	d->cuOccupancyAvailableDynamicSMemPerBlock = s_avail_smem;
	d->cuOccupancyMaxActiveClusters = s_max_clusters;
}
