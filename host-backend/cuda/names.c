/* SPDX-License-Identifier: MIT */
/*
 * names.c - what the driver answers with memory of its own: lists of
 * handles (a page of ids at a time) and kernel and
 * function names (the string itself, which the guest keeps).
 */
#include <stdlib.h>

#include "cuda/exec_priv.h"

int vc_cu_list_reply(struct vc_cu_session *x, const struct vc_cu_req_list *rq, int kind, void *const *items,
		     uint64_t total, bool owned, struct vc_cu_out *out)
{
	struct vc_cu_rep_list rp = {.total = total};
	uint64_t *ids = (uint64_t *)out->data;
	int rc;

	if (rq->count > VC_CU_LIST_PAGE || !out->data || out->data_cap < rq->count * sizeof(uint64_t))
		return CUDA_ERROR_INVALID_VALUE;
	for (uint64_t i = rq->first; i < total && rp.returned < rq->count; i++, rp.returned++) {
		if ((rc = vc_cu_publish_child(x, kind, items[i], owned ? rq->owner : 0, &ids[rp.returned])))
			return rc;
	}
	out->data_len = rp.returned * (uint32_t)sizeof(uint64_t);
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuLibraryEnumerateKernels(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					   struct vc_cu_out *out)
{
	struct vc_cu_req_list rq;
	unsigned int total = 0;
	CUkernel *all = NULL;
	void *lib;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CULIBRARY, rq.owner, &lib)))
		return rc;
	if ((rc = x->drv->cuLibraryGetKernelCount(&total, lib)))
		return rc;
	if (total && !(all = calloc(total, sizeof(*all))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!total || !(rc = x->drv->cuLibraryEnumerateKernels(all, total, lib)))
		rc = vc_cu_list_reply(x, &rq, VC_H_CUKERNEL, (void *const *)all, total, true, out);
	free(all);
	return rc;
}

int vc_cu_manual_cuModuleEnumerateFunctions(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					    struct vc_cu_out *out)
{
	struct vc_cu_req_list rq;
	unsigned int total = 0;
	CUfunction *all = NULL;
	void *mod;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUMODULE, rq.owner, &mod)))
		return rc;
	if ((rc = x->drv->cuModuleGetFunctionCount(&total, mod)))
		return rc;
	if (total && !(all = calloc(total, sizeof(*all))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!total || !(rc = x->drv->cuModuleEnumerateFunctions(all, total, mod)))
		rc = vc_cu_list_reply(x, &rq, VC_H_CUFUNCTION, (void *const *)all, total, true, out);
	free(all);
	return rc;
}

/* The name behind @name from the driver, into the reply data. */
static int put_name(struct vc_cu_out *out, const char *name)
{
	size_t n;

	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!out->data || out->data_cap < VC_CU_NAME_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	n = strnlen(name, VC_CU_NAME_MAX - 1);
	memcpy(out->data, name, n);
	out->data[n] = 0;
	out->data_len = (uint32_t)n + 1;
	out->rep_len = 0;
	return 0;
}

int vc_cu_manual_cuKernelGetName(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				 struct vc_cu_out *out)
{
	struct vc_cu_req_handle rq;
	const char *name = NULL;
	void *k;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUKERNEL, rq.handle, &k)))
		return rc;
	if ((rc = x->drv->cuKernelGetName(&name, k)))
		return rc;
	return put_name(out, name);
}

int vc_cu_manual_cuFuncGetName(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			       struct vc_cu_out *out)
{
	struct vc_cu_req_handle rq;
	const char *name = NULL;
	void *f;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup_func(x, rq.handle, &f, NULL)))
		return rc;
	if ((rc = x->drv->cuFuncGetName(&name, f)))
		return rc;
	return put_name(out, name);
}
