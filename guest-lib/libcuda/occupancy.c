/* SPDX-License-Identifier: MIT */
/*
 * occupancy.c - the potential block size (cuOccupancyMaxPotentialBlockSize
 * and ...WithFlags) and the potential cluster size. The block size search
 * takes a callback of the program's (dynamic shared memory per block size),
 * so it runs here, as the runtime's and the driver's do: from the largest
 * block size the function and device allow down, a warp at a time, the
 * remoted per-SM block count times the block size, keeping the best, until
 * a block size fills the SM. Answers without a callback are cached per
 * function and arguments.
 */
#include <pthread.h>
#include <string.h>

#include "vc_cu_guest.h"

#define CACHE 256u /* power of two */

struct answer {
	CUfunction f;
	size_t smem;
	int limit;
	unsigned flags;
	int grid, block;
};

static struct answer g_cache[CACHE];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static unsigned slot_of(CUfunction f, size_t smem, int limit, unsigned flags)
{
	uint64_t k = (uint64_t)(uintptr_t)f ^ ((uint64_t)smem << 20) ^ ((uint64_t)(unsigned)limit << 4) ^ flags;

	return (unsigned)((k * 0x9e3779b97f4a7c15ull) >> 56) & (CACHE - 1);
}

/* The search; 0 or the first CUresult of a remoted query. */
static CUresult search(CUfunction f, CUoccupancyB2DSize cb, size_t smem, int limit, unsigned flags, int *grid,
		       int *block)
{
	const int *attrs = vc_cu_state()->dev[vc_cu_current_device()].info.attrs;
	int sm_threads = attrs[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR];
	int warp = attrs[CU_DEVICE_ATTRIBUTE_WARP_SIZE] > 0 ? attrs[CU_DEVICE_ATTRIBUTE_WARP_SIZE] : 32;
	int dev_max = attrs[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
	int sms = attrs[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT];
	int fn_max = 0, best_block = 0, best_blocks = 0, best = 0;
	CUresult rc;

	if ((rc = cuFuncGetAttribute(&fn_max, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f)))
		return rc;
	if (limit <= 0 || limit > dev_max)
		limit = dev_max;
	if (fn_max < limit)
		limit = fn_max;
	for (int aligned = (limit + warp - 1) / warp * warp; aligned > 0; aligned -= warp) {
		int size = aligned > limit ? limit : aligned, n = 0;
		size_t dyn = cb ? cb(size) : smem;

		if ((rc = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f, size, dyn, flags)))
			return rc;
		if (size * n > best) {
			best = size * n;
			best_block = size;
			best_blocks = n;
		}
		if (best == sm_threads)
			break;
	}
	*grid = best_blocks * sms;
	*block = best_block;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
							   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
							   size_t dynamicSMemSize, int blockSizeLimit,
							   unsigned int flags)
{
	unsigned k = slot_of(func, dynamicSMemSize, blockSizeLimit, flags);
	int grid = 0, block = 0;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!minGridSize || !blockSize)
		return CUDA_ERROR_INVALID_VALUE;
	if (!func)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!blockSizeToDynamicSMemSize) {
		pthread_mutex_lock(&g_mu);
		if (g_cache[k].f == func && g_cache[k].smem == dynamicSMemSize && g_cache[k].limit == blockSizeLimit &&
		    g_cache[k].flags == flags) {
			*minGridSize = g_cache[k].grid;
			*blockSize = g_cache[k].block;
			pthread_mutex_unlock(&g_mu);
			return CUDA_SUCCESS;
		}
		pthread_mutex_unlock(&g_mu);
	}
	if ((rc = search(func, blockSizeToDynamicSMemSize, dynamicSMemSize, blockSizeLimit, flags, &grid, &block)))
		return rc;
	if (!blockSizeToDynamicSMemSize) {
		pthread_mutex_lock(&g_mu);
		g_cache[k] = (struct answer){func, dynamicSMemSize, blockSizeLimit, flags, grid, block};
		pthread_mutex_unlock(&g_mu);
	}
	*minGridSize = grid;
	*blockSize = block;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
						  CUoccupancyB2DSize blockSizeToDynamicSMemSize,
						  size_t dynamicSMemSize, int blockSizeLimit)
{
	return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
							 dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}

/* The function's attributes may change (cuFuncSetAttribute): answers are
 * dropped with the parameter layouts. */
void vc_cu_occupancy_forget(void)
{
	pthread_mutex_lock(&g_mu);
	memset(g_cache, 0, sizeof(g_cache));
	pthread_mutex_unlock(&g_mu);
}

CUresult CUDAAPI cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func, const CUlaunchConfig *config)
{
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	return vc_cu_cluster_query(VC_CU_cuOccupancyMaxPotentialClusterSize, clusterSize, func, config);
}
