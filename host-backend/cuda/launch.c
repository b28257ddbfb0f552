/* SPDX-License-Identifier: MIT */
/*
 * launch.c - kernels: parameter layouts asked of the driver, launch
 * configurations from the wire, cluster occupancy and launches (with their
 * part in compute weights, gpushare.h).
 */
#include <string.h>

#include "cuda/exec_priv.h"
#include "resources/acct.h"
#include "resources/gpushare.h"

int vc_cu_func_layout(struct vc_cu_session *x, void *f, bool is_kernel, struct vc_cu_param_layout *pl)
{
	memset(pl, 0, sizeof(*pl));
	/* Ask until the driver says there is no such parameter. */
	for (uint32_t i = 0; i < VC_CU_PARAMS_MAX; i++) {
		size_t off = 0, size = 0;
		int rc = is_kernel ? x->drv->cuKernelGetParamInfo(f, i, &off, &size)
				   : x->drv->cuFuncGetParamInfo(f, i, &off, &size);

		if (rc != CUDA_SUCCESS)
			break;
		if (off > VC_LAUNCH_PARAMS_MAX || size > VC_LAUNCH_PARAMS_MAX - off)
			return CUDA_ERROR_INVALID_VALUE;
		pl->offset[i] = (uint16_t)off;
		pl->size[i] = (uint16_t)size;
		pl->count = i + 1;
		if (off + size > pl->total)
			pl->total = (uint32_t)(off + size);
	}
	return 0;
}

int vc_cu_manual_vcFuncParams(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_req_vcFuncParams rq;
	struct vc_cu_param_layout *pl;
	bool is_kernel;
	void *f;
	int rc;

	TAKE(rq);
	if (!out->data || out->data_cap < sizeof(*pl))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup_func(x, rq.func, &f, &is_kernel)))
		return rc;
	pl = (struct vc_cu_param_layout *)out->data;
	if ((rc = vc_cu_func_layout(x, f, is_kernel, pl)))
		return rc;
	/* The dynamic shared memory it may have and the threads a block of it
	 * may have (its launch bounds, its registers), so that the guest
	 * knows a launch the driver refuses at once (launch.c there). */
	int smem = 0, threads = 0;
	CUdevice dev = 0;

	if (is_kernel) {
		x->drv->cuCtxGetDevice(&dev);
		x->drv->cuKernelGetAttribute(&smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f, dev);
		x->drv->cuKernelGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f, dev);
	} else {
		x->drv->cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f);
		x->drv->cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
	}
	pl->max_dyn_smem = smem > 0 ? (uint32_t)smem : 0;
	pl->max_threads = threads > 0 ? (uint32_t)threads : 0;
	out->data_len = sizeof(*pl);
	return 0;
}

int vc_cu_manual_vcOccupancyClusters(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				     struct vc_cu_out *out)
{
	struct vc_cu_req_launch rq;
	CUlaunchAttribute attrs[VC_CU_LAUNCH_ATTRS_MAX + 1];
	CUlaunchConfig cfg;
	struct vc_cu_rep_vcExportSlot rp = {0};
	void *f, *stream;
	bool is_kernel;
	int n = 0, rc;

	TAKE(rq);
	if (rq.nattrs > VC_CU_LAUNCH_ATTRS_MAX ||
	    (uint64_t)rq.nattrs * sizeof(struct vc_cu_launch_attr) > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup_func(x, rq.func, &f, &is_kernel)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
	    (rc = vc_cu_launch_config(x, &rq, p + sizeof(rq), attrs, &cfg, stream)))
		return rc;
	if ((rc = x->drv->cuOccupancyMaxActiveClusters(&n, f, &cfg)))
		return rc;
	rp.value = (uint64_t)(uint32_t)n;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_vcLaunch(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_launch rq;
	CUlaunchAttribute attrs[VC_CU_LAUNCH_ATTRS_MAX + 1];
	CUlaunchConfig cfg;
	const uint8_t *params;
	size_t psize;
	void *f, *stream, *extra[5];
	bool is_kernel;
	int rc;

	(void)out;
	TAKE(rq);
	if (rq.nattrs > VC_CU_LAUNCH_ATTRS_MAX || rq.param_size > VC_LAUNCH_PARAMS_MAX ||
	    (uint64_t)rq.nattrs * sizeof(struct vc_cu_launch_attr) + rq.param_size > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup_func(x, rq.func, &f, &is_kernel)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
	    (rc = vc_cu_launch_config(x, &rq, p + sizeof(rq), attrs, &cfg, stream)))
		return rc;
	params = p + sizeof(rq) + (size_t)rq.nattrs * sizeof(struct vc_cu_launch_attr);
	psize = rq.param_size;
	/* One packed buffer, laid out by the guest from this function's layout;
	 * cuLaunchKernelEx takes it for every launch form, cooperative included. */
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = (void *)params;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = &psize;
	extra[4] = CU_LAUNCH_PARAM_END;
	vc_cu_sched_before(x);
	rc = x->drv->cuLaunchKernelEx(&cfg, f, NULL, psize ? extra : NULL);
	if (rc == CUDA_SUCCESS)
		vc_acct_launched(); /* for the manager's metrics (acct.h) */
	if (rc == CUDA_SUCCESS && vc_sched_enabled()) {
		void *ctx = NULL;

		vc_cu_lookup(x, VC_H_CUCONTEXT, x->cur_id, &ctx);
		vc_cu_sched_after(x, ctx, stream);
	}
	return rc;
}
