/* SPDX-License-Identifier: MIT */
/*
 * tensormap.c - the CI stand-in's tensor maps, a TEST DOUBLE: a map is
 * encoded as a recognisable record (VC_STANDIN_TMAP_MAGIC, then the global
 * address, type, rank, kind, dimensions and strides), not the GPU's format.
 * The checks are real: the rank, type, alignment and boxes the driver
 * requires, and the global range the map covers lies in one allocation of
 * the stand-in's memory.
 */
#include <string.h>

#include "standin/standin_priv.h"

/* Word 0 of a stand-in tensor map: "VCTMAP01". */
#define VC_STANDIN_TMAP_MAGIC 0x313050414d544356ull

/* Bytes per element (1/2 for the packed four- and six-bit types: rounded up per 16). */
static uint64_t row_bytes(CUtensorMapDataType t, uint64_t n)
{
	static const unsigned esz[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};

	if ((unsigned)t < sizeof(esz) / sizeof(esz[0]))
		return n > UINT64_MAX / esz[t] ? 0 : n * esz[t];
	if (t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B)
		return (n + 15) / 16 * 8;
	if (t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || t == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B)
		return (n + 15) / 16 * 16;
	return 0;
}

/* The checks every encoding makes, and the extent; 0 for a refusal. */
static uint64_t check(CUtensorMapDataType t, cuuint32_t rank, cuuint32_t min_rank, const void *addr,
		      const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *estrides)
{
	uint64_t e;

	if (rank < min_rank || rank > 5 || !dims || !estrides || (rank > 1 && !strides) ||
	    ((uintptr_t)addr & 15))
		return 0;
	for (cuuint32_t i = 0; i < rank; i++)
		if (!dims[i] || dims[i] > (1ull << 32) || !estrides[i] || estrides[i] > 8)
			return 0;
	if (!(e = row_bytes(t, dims[0])))
		return 0;
	for (cuuint32_t i = 1; i < rank; i++) {
		uint64_t d = dims[i] - 1, s = strides[i - 1];

		if ((s & 15) || s >= (1ull << 40) || (d && s > UINT64_MAX / d) || e > UINT64_MAX - d * s)
			return 0;
		e += d * s;
	}
	return e;
}

static CUresult fill(CUtensorMap *m, unsigned kind, CUtensorMapDataType t, cuuint32_t rank, void *addr,
		     const cuuint64_t *dims, const cuuint64_t *strides, uint64_t extent)
{
	int ok;

	pthread_mutex_lock(&g_mu);
	ok = vc_smem_find(&g_mem, (uint64_t)(uintptr_t)addr, extent) != NULL;
	pthread_mutex_unlock(&g_mu);
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	memset(m, 0, sizeof(*m));
	m->opaque[0] = VC_STANDIN_TMAP_MAGIC;
	m->opaque[1] = (uint64_t)(uintptr_t)addr;
	m->opaque[2] = (uint64_t)t | (uint64_t)rank << 8 | (uint64_t)kind << 16;
	for (cuuint32_t i = 0; i < rank; i++) {
		m->opaque[3 + i] = dims[i];
		if (i + 1 < rank)
			m->opaque[8 + i] = strides[i];
	}
	m->opaque[12] = extent;
	return CUDA_SUCCESS;
}

static CUresult s_tiled(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank, void *addr, const cuuint64_t *dims,
			const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *estrides,
			CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
			CUtensorMapFloatOOBfill oob)
{
	uint64_t e = check(t, rank, 1, addr, dims, strides, estrides);

	(void)il, (void)sw, (void)l2, (void)oob;
	if (!m || !e || !box)
		return CUDA_ERROR_INVALID_VALUE;
	for (cuuint32_t i = 0; i < rank; i++)
		if (!box[i] || box[i] > 256)
			return CUDA_ERROR_INVALID_VALUE;
	return fill(m, 0, t, rank, addr, dims, strides, e);
}

static CUresult s_im2col(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank, void *addr, const cuuint64_t *dims,
			 const cuuint64_t *strides, const int *lo, const int *hi, cuuint32_t cpp, cuuint32_t ppc,
			 const cuuint32_t *estrides, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
			 CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
	uint64_t e = check(t, rank, 3, addr, dims, strides, estrides);

	(void)il, (void)sw, (void)l2, (void)oob;
	if (!m || !e || !lo || !hi || !cpp || cpp > 256 || !ppc || ppc > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	return fill(m, 1, t, rank, addr, dims, strides, e);
}

static CUresult s_im2col_wide(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank, void *addr,
			      const cuuint64_t *dims, const cuuint64_t *strides, int lo, int hi, cuuint32_t cpp,
			      cuuint32_t ppc, const cuuint32_t *estrides, CUtensorMapInterleave il,
			      CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
			      CUtensorMapFloatOOBfill oob)
{
	uint64_t e = check(t, rank, 3, addr, dims, strides, estrides);

	(void)lo, (void)hi, (void)il, (void)mode, (void)sw, (void)l2, (void)oob;
	if (!m || !e || !cpp || cpp > 256 || !ppc || ppc > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	return fill(m, 2, t, rank, addr, dims, strides, e);
}

static CUresult s_replace(CUtensorMap *m, void *addr)
{
	int ok;

	if (!m || m->opaque[0] != VC_STANDIN_TMAP_MAGIC || ((uintptr_t)addr & 15))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	ok = vc_smem_find(&g_mem, (uint64_t)(uintptr_t)addr, m->opaque[12]) != NULL;
	pthread_mutex_unlock(&g_mu);
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	m->opaque[1] = (uint64_t)(uintptr_t)addr;
	return CUDA_SUCCESS;
}

void vc_si_fill_tensormap(struct vc_cuda_driver *d)
{
	d->cuTensorMapEncodeTiled = s_tiled;
	d->cuTensorMapEncodeIm2col = s_im2col;
	d->cuTensorMapEncodeIm2colWide = s_im2col_wide;
	d->cuTensorMapReplaceAddress = s_replace;
}
