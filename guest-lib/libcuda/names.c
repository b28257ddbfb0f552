/* SPDX-License-Identifier: MIT */
/*
 * names.c - lists of handles and names. Lists (a library's kernels, a
 * graph's nodes) come a page at a time; cuKernelGetName and cuFuncGetName hand out strings that
 * must stay valid, so the guest keeps one copy per handle (for the life of
 * the process: a handful of bytes per kernel that was ever asked about).
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vc_cuda_manual.h"
#include "vc_cu_guest.h"

CUresult vc_cu_list(uint32_t op, uint64_t owner, uint64_t *ids, uint64_t n, uint64_t *total)
{
	struct vc_cu_req_list rq = {.owner = owner};
	struct vc_cu_rep_list rp = {0};
	uint64_t page[VC_CU_LIST_PAGE];
	uint64_t done = 0;
	size_t got;
	CUresult rc;

	do {
		rq.first = (uint32_t)done;
		rq.count = n - done < VC_CU_LIST_PAGE ? (uint32_t)(n - done) : VC_CU_LIST_PAGE;
		if (done > UINT32_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		rc = vc_cu_call_sized(op, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), page, sizeof(page), &got, 0);
		if (rc != CUDA_SUCCESS)
			return rc;
		if (rp.returned > rq.count || got != rp.returned * sizeof(page[0]))
			return CUDA_ERROR_INVALID_VALUE;
		if (got)
			memcpy(ids + done, page, got);
		done += rp.returned;
	} while (rp.returned && done < n && done < rp.total);
	if (total)
		*total = rp.total;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib)
{
	uint64_t *ids;
	CUresult rc;

	if (!kernels || !numKernels)
		return CUDA_ERROR_INVALID_VALUE;
	ids = calloc(numKernels, sizeof(*ids));
	if (!ids)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* At most numKernels, as natively; the rest of the array is left alone. */
	rc = vc_cu_list(VC_CU_cuLibraryEnumerateKernels, (uint64_t)(uintptr_t)lib, ids, numKernels, NULL);
	for (unsigned int i = 0; rc == CUDA_SUCCESS && i < numKernels && ids[i]; i++)
		kernels[i] = (CUkernel)(uintptr_t)ids[i];
	free(ids);
	return rc;
}

CUresult vc_cu_module_functions(CUmodule mod, CUfunction *fns, unsigned int max, unsigned int *total)
{
	uint64_t *ids = NULL, all = 0;
	CUresult rc;

	if (max && !(ids = calloc(max, sizeof(*ids))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = vc_cu_list(VC_CU_cuModuleEnumerateFunctions, (uint64_t)(uintptr_t)mod, ids, max, &all);
	for (unsigned int i = 0; rc == CUDA_SUCCESS && i < max && ids[i]; i++)
		fns[i] = (CUfunction)(uintptr_t)ids[i];
	if (rc == CUDA_SUCCESS && total)
		*total = all > UINT_MAX ? UINT_MAX : (unsigned int)all;
	free(ids);
	return rc;
}

CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions, CUmodule mod)
{
	if (!functions || !numFunctions)
		return CUDA_ERROR_INVALID_VALUE;
	return vc_cu_module_functions(mod, functions, numFunctions, NULL);
}

struct name {
	struct name *next;
	uint32_t op;
	uint64_t handle;
	char s[];
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct name *g_names[256];

static CUresult get_name(uint32_t op, uint64_t handle, const char **out)
{
	struct vc_cu_req_handle rq = {.handle = handle};
	unsigned k = (unsigned)((handle * 0x9e3779b97f4a7c15ull) >> 56);
	struct vc_cu_prefix none;
	char buf[VC_CU_NAME_MAX];
	struct name *n;
	size_t got = 0;
	CUresult rc;

	if (!out || !handle)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	for (n = g_names[k]; n; n = n->next)
		if (n->op == op && n->handle == handle)
			break;
	pthread_mutex_unlock(&g_mu);
	if (n) {
		*out = n->s;
		return CUDA_SUCCESS;
	}
	rc = vc_cu_call_sized(op, &rq, sizeof(rq), NULL, 0, &none, 0, buf, sizeof(buf), &got, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!got || got > sizeof(buf) || buf[got - 1])
		return CUDA_ERROR_INVALID_VALUE;
	n = malloc(sizeof(*n) + got);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->op = op;
	n->handle = handle;
	memcpy(n->s, buf, got);
	pthread_mutex_lock(&g_mu);
	n->next = g_names[k];
	g_names[k] = n;
	pthread_mutex_unlock(&g_mu);
	*out = n->s;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
	return get_name(VC_CU_cuKernelGetName, (uint64_t)(uintptr_t)hfunc, name);
}

CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
	return get_name(VC_CU_cuFuncGetName, (uint64_t)(uintptr_t)hfunc, name);
}
