/* SPDX-License-Identifier: MIT */
/*
 * entry.c - entry points answered inside the guest: device facts (fetched
 * once at cuInit), cuGetProcAddress from the table measured on the real
 * driver, cuGetExportTable, and error names and strings.
 */
#include <string.h>

#include "exptab.h"
#include "vc_cu_guest.h"

/* ---- device facts ------------------------------------------------------------ */

/* Device @dev's facts, or the error a query about it answers. */
static CUresult device(CUdevice dev, const struct vc_cu_device_info **info)
{
	struct vc_cu_state *st = vc_cu_state();

	if (!st)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= st->device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	*info = &st->dev[dev].info;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	struct vc_cu_state *st = vc_cu_state();

	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!st)
		return CUDA_ERROR_NOT_INITIALIZED;
	*count = st->device_count;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	const struct vc_cu_device_info *i;
	CUresult rc = device(dev, &i);

	if (rc)
		return rc;
	if (!pi || (int)attrib < 1 || (int)attrib >= i->attr_count)
		return CUDA_ERROR_INVALID_VALUE;
	/* Device attributes do not change while a device is up: the runtime
	 * asks ~110 of them at start-up, each answered here without a trip. */
	*pi = i->attrs[attrib];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	const struct vc_cu_device_info *i;
	CUresult rc = device(dev, &i);

	if (rc)
		return rc;
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, i->uuid, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid_v2(uuid, dev);
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	const struct vc_cu_device_info *i;
	CUresult rc = device(dev, &i);

	if (rc)
		return rc;
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = i->total_mem;
	return CUDA_SUCCESS;
}

/* ---- cuGetProcAddress ------------------------------------------------------------ */

/*
 * The answer the real driver gives for (name, cudaVersion, flags) was measured
 * for every versioned entry point (tools/gen/procaddr.tsv): the newest entry
 * whose version does not exceed the caller's. Flags other than the per-thread
 * default stream bit select the legacy-stream variants.
 */
static CUresult procaddr(const char *symbol, void **pfn, int version, cuuint64_t flags,
			 CUdriverProcAddressQueryResult *status)
{
	int want = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? 2 : 0;
	size_t lo = 0, hi = vc_procaddr_count;
	const void *best = NULL;
	int found = 0;

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(vc_procaddr_table[mid].name, symbol) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < vc_procaddr_count && !strcmp(vc_procaddr_table[i].name, symbol); i++) {
		const struct vc_procaddr_entry *e = &vc_procaddr_table[i];

		found = 1;
		if (e->flags == want && e->version <= version)
			best = e->fn; /* sorted by version: the last match is the newest */
	}
	if (status)
		*status = best ? CU_GET_PROC_ADDRESS_SUCCESS
			       : found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
				       : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!best)
		return status ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
	*pfn = (void *)best;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				      CUdriverProcAddressQueryResult *symbolStatus)
{
	return procaddr(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return procaddr(symbol, pfn, cudaVersion, flags, NULL);
}

CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	return vc_exptab_get(ppExportTable, pExportTableId);
}

/* ---- errors ---------------------------------------------------------------------- */

static const struct vc_cu_errstr *errstr(CUresult e)
{
	for (size_t i = 0; i < vc_cu_nerrors; i++)
		if (vc_cu_errors[i].code == (int)e)
			return &vc_cu_errors[i];
	return NULL;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
	const struct vc_cu_errstr *e = errstr(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = e ? e->name : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
	const struct vc_cu_errstr *e = errstr(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = e ? e->desc : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
