/* SPDX-License-Identifier: MIT */
/*
 * launch.c - kernel launches. The host tells the parameter layout of each
 * function once (cuFuncGetParamInfo on the real driver); the guest caches it
 * and packs kernelParams into one buffer of up to 32 KiB, sent with the
 * launch as one asynchronous command. Shape errors that CUDA reports at once
 * are caught here, the rest surface at the next synchronisation.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vc_cu_guest.h"

#define CACHE_SIZE 4096u /* power of two */

struct layout_entry {
	uint64_t func;
	struct vc_cu_param_layout *pl;
	bool limit_stale; /* an attribute changed since: max_dyn_smem is asked again */
};

static struct layout_entry g_cache[CACHE_SIZE];
static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER;

void vc_cu_params_forget(void)
{
	pthread_rwlock_wrlock(&g_lock);
	for (unsigned i = 0; i < CACHE_SIZE; i++) {
		free(g_cache[i].pl);
		g_cache[i].pl = NULL;
		g_cache[i].func = 0;
	}
	pthread_rwlock_unlock(&g_lock);
	vc_cu_occupancy_forget(); /* a function's attributes changed, or it went away */
}

void vc_cu_params_limits_forget(void)
{
	pthread_rwlock_wrlock(&g_lock);
	for (unsigned i = 0; i < CACHE_SIZE; i++)
		g_cache[i].limit_stale = true;
	pthread_rwlock_unlock(&g_lock);
	vc_cu_occupancy_forget(); /* a function's attributes changed */
}

static unsigned slot_of(uint64_t f)
{
	return (unsigned)((f * 0x9e3779b97f4a7c15ull) >> 40) & (CACHE_SIZE - 1);
}

/* Copy the used part of a layout (readers never hold a cache pointer). */
static void copy_layout(struct vc_cu_param_layout *dst, const struct vc_cu_param_layout *src)
{
	dst->count = src->count;
	dst->total = src->total;
	dst->max_dyn_smem = src->max_dyn_smem;
	dst->max_threads = src->max_threads;
	memcpy(dst->offset, src->offset, src->count * sizeof(src->offset[0]));
	memcpy(dst->size, src->size, src->count * sizeof(src->size[0]));
}

CUresult vc_cu_params_layout(uint64_t func, struct vc_cu_param_layout *out)
{
	struct vc_cu_req_vcFuncParams rq = {.func = func};
	struct vc_cu_param_layout *pl;
	struct vc_cu_prefix none;
	unsigned k = slot_of(func);
	CUresult rc;

	pthread_rwlock_rdlock(&g_lock);
	if (g_cache[k].func == func && g_cache[k].pl) {
		copy_layout(out, g_cache[k].pl);
		pthread_rwlock_unlock(&g_lock);
		return CUDA_SUCCESS;
	}
	pthread_rwlock_unlock(&g_lock);

	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = vc_cu_call(VC_CU_vcFuncParams, &rq, sizeof(rq), NULL, 0, &none, 0, pl, sizeof(*pl), 0);
	if (rc != CUDA_SUCCESS || pl->count > VC_CU_PARAMS_MAX || pl->total > VC_LAUNCH_PARAMS_MAX) {
		free(pl);
		return rc ? rc : CUDA_ERROR_INVALID_VALUE;
	}
	copy_layout(out, pl);
	/* Direct-mapped: a collision replaces the older entry. */
	pthread_rwlock_wrlock(&g_lock);
	free(g_cache[k].pl);
	g_cache[k].func = func;
	g_cache[k].pl = pl;
	g_cache[k].limit_stale = false;
	pthread_rwlock_unlock(&g_lock);
	return CUDA_SUCCESS;
}

CUresult vc_cu_params_limit(uint64_t func, uint32_t *max_dyn_smem)
{
	struct vc_cu_param_layout *pl;
	unsigned k = slot_of(func);
	CUresult rc;
	bool stale;

	/* A layout kept from before an attribute changed is asked again. */
	pthread_rwlock_rdlock(&g_lock);
	stale = g_cache[k].func == func && g_cache[k].pl && g_cache[k].limit_stale;
	pthread_rwlock_unlock(&g_lock);
	if (stale) {
		pthread_rwlock_wrlock(&g_lock);
		if (g_cache[k].func == func && g_cache[k].pl && g_cache[k].limit_stale) {
			free(g_cache[k].pl);
			g_cache[k].pl = NULL;
			g_cache[k].func = 0;
		}
		pthread_rwlock_unlock(&g_lock);
	}
	pl = malloc(sizeof(*pl));
	if (!pl)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = vc_cu_params_layout(func, pl);
	if (rc == CUDA_SUCCESS)
		*max_dyn_smem = pl->max_dyn_smem;
	free(pl);
	return rc;
}

/* Parameters from kernelParams (per the layout) or from extra's buffer form. */
CUresult vc_cu_params_pack(CUfunction f, void **kernelParams, void **extra, uint8_t *buf, uint32_t *size,
			   uint32_t *max_threads)
{
	struct vc_cu_param_layout *pl;
	CUresult rc;

	*size = 0;
	if (extra) {
		const void *p = NULL;
		size_t n = 0;

		for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				p = extra[i + 1];
			else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				n = *(const size_t *)extra[i + 1];
			else
				return CUDA_ERROR_INVALID_VALUE;
		}
		if (kernelParams || (n && !p) || n > VC_LAUNCH_PARAMS_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		/* The layout is not needed, but asking for it (once: it is
		 * cached until a module, library or context goes) tells a dead
		 * function at once, as the driver does, not at the next
		 * synchronisation. */
		if (!(pl = malloc(sizeof(*pl))))
			return CUDA_ERROR_OUT_OF_MEMORY;
		rc = vc_cu_params_layout((uint64_t)(uintptr_t)f, pl);
		/* The driver refuses a buffer larger than the parameters (the
		 * last one's end, without a struct's tail padding) at the
		 * launch, and takes a smaller one (measured on driver 580);
		 * where the layout is known, so is the answer. */
		if (rc == CUDA_SUCCESS && pl->count && n > pl->total)
			rc = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
		if (rc == CUDA_SUCCESS && max_threads)
			*max_threads = pl->max_threads;
		free(pl);
		if (rc)
			return rc;
		memcpy(buf, p, n);
		*size = (uint32_t)n;
		return CUDA_SUCCESS;
	}
	pl = malloc(sizeof(*pl));
	if (!pl)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = vc_cu_params_layout((uint64_t)(uintptr_t)f, pl)))
		goto out;
	rc = CUDA_ERROR_INVALID_VALUE;
	if (pl->count && !kernelParams)
		goto out;
	memset(buf, 0, pl->total);
	for (uint32_t i = 0; i < pl->count; i++) {
		if (!kernelParams[i])
			goto out;
		memcpy(buf + pl->offset[i], kernelParams[i], pl->size[i]);
	}
	*size = pl->total;
	if (max_threads)
		*max_threads = pl->max_threads;
	rc = CUDA_SUCCESS;
out:
	free(pl);
	return rc;
}

/*
 * Shape errors the driver reports at once, checked against the device's
 * limits (cached at cuInit), so that they are reported at once here too
 * instead of surfacing at the next synchronisation.
 */
static CUresult check_shape(const unsigned grid[3], const unsigned block[3], unsigned shmem)
{
	static const CUdevice_attribute gmax[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
						   CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
						   CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
	static const CUdevice_attribute bmax[3] = {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
						   CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
						   CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
	const int *attrs = vc_cu_state()->dev[vc_cu_current_device()].info.attrs;
	uint64_t threads = (uint64_t)block[0] * block[1] * block[2];

	for (int i = 0; i < 3; i++) {
		if (!grid[i] || !block[i])
			return CUDA_ERROR_INVALID_VALUE;
		if ((attrs[gmax[i]] && grid[i] > (unsigned)attrs[gmax[i]]) ||
		    (attrs[bmax[i]] && block[i] > (unsigned)attrs[bmax[i]]))
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (attrs[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] &&
	    threads > (uint64_t)attrs[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK])
		return CUDA_ERROR_INVALID_VALUE;
	/* More dynamic shared memory than any block may have (a function's own,
	 * lower limit is the driver's to check, at the next synchronisation). */
	if (attrs[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] &&
	    shmem > (unsigned)attrs[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN])
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* Not sent: this launch waits for the driver's verdict (launch() only). */
#define LAUNCH_VERDICT 0x80000000u

static CUresult launch(CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned shmem,
		       CUstream stream, void **kernelParams, void **extra, uint32_t flags,
		       const CUlaunchAttribute *attrs, unsigned nattrs)
{
	struct {
		struct vc_cu_req_launch rq;
		struct vc_cu_launch_attr a[VC_CU_LAUNCH_ATTRS_MAX];
		uint8_t params[VC_LAUNCH_PARAMS_MAX];
	} *m;
	uint32_t psize, max_threads = 0;
	uint64_t threads;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if ((rc = check_shape(grid, block, shmem)))
		return rc;
	if (nattrs > VC_CU_LAUNCH_ATTRS_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	m = malloc(sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&m->rq, 0, sizeof(m->rq));
	rc = vc_cu_params_pack(f, kernelParams, extra, m->params, &psize, &max_threads);
	if (rc)
		goto out;
	/* Above the 48 KiB every function may have, the function's own limit
	 * (raised with cuFuncSetAttribute) decides, at once, as natively. */
	if (shmem > 48u * 1024) {
		uint32_t limit = 0;

		rc = vc_cu_params_limit((uint64_t)(uintptr_t)f, &limit);
		if (rc == CUDA_SUCCESS && shmem > limit)
			rc = CUDA_ERROR_INVALID_VALUE;
		if (rc)
			goto out;
	}
	m->rq.func = (uint64_t)(uintptr_t)f;
	m->rq.stream = vc_cu_stream_id(stream);
	memcpy(m->rq.grid, grid, sizeof(m->rq.grid));
	memcpy(m->rq.block, block, sizeof(m->rq.block));
	m->rq.shared_mem = shmem;
	m->rq.flags = flags;
	m->rq.nattrs = nattrs;
	m->rq.param_size = psize;
	for (unsigned i = 0; i < nattrs; i++) {
		memset(&m->a[i], 0, sizeof(m->a[i]));
		m->a[i].id = (uint32_t)attrs[i].id;
		memcpy(m->a[i].value, &attrs[i].value, sizeof(attrs[i].value));
	}
	/* Header, attributes and parameters travel as one command. */
	if (nattrs)
		memmove((uint8_t *)m->a + nattrs * sizeof(m->a[0]), m->params, psize);
	for (unsigned i = 0; i < nattrs; i++)
		if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && attrs[i].value.cooperative)
			flags |= VC_CU_LAUNCH_COOPERATIVE;
	/* A block larger than the function may have (its launch bounds, its
	 * registers) is refused at once natively, with a code that depends on
	 * why: such a launch waits for the driver's verdict. The limit came
	 * with the layout the parameters were packed by (0: not known). */
	threads = (uint64_t)block[0] * block[1] * block[2];
	if (max_threads && threads > max_threads)
		flags |= LAUNCH_VERDICT;
	if (flags & (VC_CU_LAUNCH_COOPERATIVE | LAUNCH_VERDICT)) {
		/* A grid too large to be co-resident is refused at once natively:
		 * cooperative launches wait for the driver's verdict too. */
		struct vc_cu_prefix none;

		rc = vc_cu_call(VC_CU_vcLaunch, &m->rq, sizeof(m->rq),
				nattrs ? (const void *)m->a : (const void *)m->params,
				nattrs * sizeof(m->a[0]) + psize, &none, 0, NULL, 0, 0);
	} else {
		rc = vc_cu_submit(VC_CU_vcLaunch, &m->rq, sizeof(m->rq),
				  nattrs ? (const void *)m->a : (const void *)m->params,
				  nattrs * sizeof(m->a[0]) + psize);
	}
out:
	free(m);
	return rc;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
				unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
				void **kernelParams, void **extra)
{
	unsigned g[3] = {gridDimX, gridDimY, gridDimZ}, b[3] = {blockDimX, blockDimY, blockDimZ};

	return launch(f, g, b, sharedMemBytes, hStream, kernelParams, extra, 0, NULL, 0);
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
					   unsigned int gridDimZ, unsigned int blockDimX,
					   unsigned int blockDimY, unsigned int blockDimZ,
					   unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
	unsigned g[3] = {gridDimX, gridDimY, gridDimZ}, b[3] = {blockDimX, blockDimY, blockDimZ};

	return launch(f, g, b, sharedMemBytes, hStream, kernelParams, NULL, VC_CU_LAUNCH_COOPERATIVE,
		      NULL, 0);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
				  void **extra)
{
	unsigned g[3], b[3];

	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	g[0] = config->gridDimX;
	g[1] = config->gridDimY;
	g[2] = config->gridDimZ;
	b[0] = config->blockDimX;
	b[1] = config->blockDimY;
	b[2] = config->blockDimZ;
	if (config->numAttrs && !config->attrs)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, g, b, config->sharedMemBytes, config->hStream, kernelParams, extra, 0,
		      config->attrs, config->numAttrs);
}

CUresult vc_cu_cluster_query(uint32_t op, int *out, CUfunction func, const CUlaunchConfig *config)
{
	struct {
		struct vc_cu_req_launch rq;
		struct vc_cu_launch_attr a[VC_CU_LAUNCH_ATTRS_MAX];
	} m;
	struct vc_cu_rep_vcExportSlot rp;
	CUresult rc;

	if (!out || !config || (config->numAttrs && !config->attrs) || config->numAttrs > VC_CU_LAUNCH_ATTRS_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&m, 0, sizeof(m));
	m.rq.func = (uint64_t)(uintptr_t)func;
	m.rq.stream = vc_cu_stream_id(config->hStream);
	m.rq.grid[0] = config->gridDimX;
	m.rq.grid[1] = config->gridDimY;
	m.rq.grid[2] = config->gridDimZ;
	m.rq.block[0] = config->blockDimX;
	m.rq.block[1] = config->blockDimY;
	m.rq.block[2] = config->blockDimZ;
	m.rq.shared_mem = config->sharedMemBytes;
	m.rq.nattrs = config->numAttrs;
	for (unsigned i = 0; i < config->numAttrs; i++) {
		m.a[i].id = (uint32_t)config->attrs[i].id;
		memcpy(m.a[i].value, &config->attrs[i].value, sizeof(config->attrs[i].value));
	}
	rc = vc_cu_call(op, &m.rq, sizeof(m.rq), m.a, config->numAttrs * sizeof(m.a[0]), &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*out = (int)rp.value;
	return rc;
}

CUresult CUDAAPI cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config)
{
	return vc_cu_cluster_query(VC_CU_vcOccupancyClusters, numClusters, func, config);
}
