/* SPDX-License-Identifier: MIT */
/*
 * cu_manual.c - the CUDA operations whose host side is hand-written: device
 * facts, emulated primary contexts and contexts, image staging and loads,
 * parameter layouts, launches, memory, copies and memsets.
 *
 * Each handler copies its request out of the private span first, validates
 * it, then calls the driver. Protocol violations return -VC_FATAL_*; CUDA
 * errors return the driver's code.
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/console.h"
#include "cuda/exec_priv.h"
#include "resources/gpushare.h"

static_assert(sizeof(struct vc_cu_rep_ctx) <= VC_CU_REP_MAX, "reply fits");

/* ---- context ownership -------------------------------------------------------- */

/* Index of the context with id @id in the handle table, or UINT32_MAX. */
static uint32_t ctx_index(struct vc_cu_session *x, uint64_t id)
{
	void *real;

	if (!id || vc_cu_lookup(x, VC_H_CUCONTEXT, id, &real))
		return UINT32_MAX;
	return (uint32_t)(id & 0xffffffu);
}

/* Publish a handle created under the current context, owned by it. */
static int publish_owned(struct vc_cu_session *x, int kind, void *real, uint64_t *id)
{
	int rc = vc_cu_publish(x, kind, real, id);

	if (rc == 0 && *id)
		x->h[*id & 0xffffffu].owner = ctx_index(x, x->cur_id);
	return rc;
}

/* Forget context @id and every handle that lived in it. */
static void forget_context(struct vc_cu_session *x, uint64_t id)
{
	uint32_t ci = ctx_index(x, id);

	for (uint32_t i = 0; ci != UINT32_MAX && i < x->nh; i++) {
		struct vc_cu_handle *h = &x->h[i];

		if (h->live && h->owner == ci && i != ci && h->kind != VC_H_CUCONTEXT)
			vc_cu_forget_slot(x, i);
	}
	if (x->cur_id == id)
		x->cur_id = UINT64_MAX; /* force the next vc_cu_enter() to set one */
	for (int d = 0; d < VC_CU_MAX_DEVICES; d++)
		if (x->primary[d] == id) {
			/* A primary context's handle outlives a reset natively (the
			 * runtime keeps it): the id stays, dormant until retained. */
			x->primary_refs[d] = 0;
			x->primary_flags[d] = 0;
			vc_cu_rebind(x, VC_H_CUCONTEXT, id, NULL);
			return;
		}
	vc_cu_forget(x, VC_H_CUCONTEXT, id);
}

/* ---- facts --------------------------------------------------------------------- */

int vc_cu_manual_vcDriverInfo(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_prefix rq;
	struct vc_cu_rep_vcDriverInfo rp = {0};
	int v = 0, n = 0, rc;

	TAKE(rq);
	if ((rc = x->drv->cuDriverGetVersion(&v)) || (rc = x->drv->cuDeviceGetCount(&n)))
		return rc;
	rp.driver_version = v;
	rp.device_count = n > VC_CU_MAX_DEVICES ? VC_CU_MAX_DEVICES : n;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_vcDeviceInfo(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_req_vcDeviceInfo rq;
	struct vc_cu_device_info *info;
	CUdevice dev;
	CUuuid uuid;
	size_t mem = 0;
	int rc;

	TAKE(rq);
	if (!out->data || out->data_cap < sizeof(*info))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuDeviceGet(&dev, rq.dev)))
		return rc;
	info = (struct vc_cu_device_info *)out->data;
	memset(info, 0, sizeof(*info));
	if ((rc = x->drv->cuDeviceGetName(info->name, sizeof(info->name), dev)) ||
	    (rc = x->drv->cuDeviceGetUuid_v2(&uuid, dev)) || (rc = x->drv->cuDeviceTotalMem_v2(&mem, dev)))
		return rc;
	info->name[sizeof(info->name) - 1] = 0;
	memcpy(info->uuid, uuid.bytes, sizeof(info->uuid));
	info->total_mem = mem;
	info->attr_count = CU_DEVICE_ATTRIBUTE_MAX;
	for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; a++) {
		int v = 0;

		/* Unsupported attributes answer an error natively; 0 is what the
		 * guest reports for them too (it keeps the driver's error code
		 * out of a value table). */
		if (x->drv->cuDeviceGetAttribute(&v, (CUdevice_attribute)a, dev) == CUDA_SUCCESS)
			info->attrs[a] = v;
	}
	info->pci_domain = info->attrs[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID];
	info->pci_bus = info->attrs[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID];
	info->pci_device = info->attrs[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID];
	out->data_len = sizeof(*info);
	return 0;
}

/* ---- primary contexts (one set per session) and contexts ------------------------- */

static int primary_get(struct vc_cu_session *x, int32_t dev, uint64_t *id)
{
	CUcontext c = NULL;
	CUdevice d;
	void *real = NULL;
	int rc;

	if (dev < 0 || dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	if (x->primary[dev] && !vc_cu_lookup(x, VC_H_CUCONTEXT, x->primary[dev], &real) && real) {
		*id = x->primary[dev];
		return 0;
	}
	if ((rc = x->drv->cuDeviceGet(&d, dev)))
		return rc;
	/* A context of the session's own stands in for the device's primary
	 * context: the server process's real primary context is shared by
	 * every session, and one client's fault must not reach another. */
	if ((rc = x->drv->cuCtxCreate_v4(&c, NULL, x->primary_flags[dev], d)))
		return rc;
	if (x->primary[dev]) /* a dormant primary context wakes with its old id */
		rc = vc_cu_rebind(x, VC_H_CUCONTEXT, x->primary[dev], c);
	else
		rc = vc_cu_publish(x, VC_H_CUCONTEXT, c, &x->primary[dev]);
	if (rc) {
		x->drv->cuCtxDestroy_v2(c);
		return rc;
	}
	*id = x->primary[dev];
	x->h[*id & 0xffffffu].owner = (uint32_t)(*id & 0xffffffu);
	x->cur_id = *id; /* cuCtxCreate made it current */
	return 0;
}

int vc_cu_manual_cuDevicePrimaryCtxRetain(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					  struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;
	struct vc_cu_rep_ctx rp = {0};
	int rc;

	TAKE(rq);
	if ((rc = primary_get(x, rq.dev, &rp.pctx)))
		return rc;
	x->primary_refs[rq.dev]++;
	REPLY(rp);
	return 0;
}

static int destroy_context(struct vc_cu_session *x, uint64_t id)
{
	void *c;
	int rc;

	if ((rc = vc_cu_lookup(x, VC_H_CUCONTEXT, id, &c)))
		return rc;
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	vc_cu_sched_ctx_gone(x, c);
	rc = x->drv->cuCtxDestroy_v2(c);
	forget_context(x, id);
	vc_cu_quota_ctx_gone(x, id); /* its allocations went with it */
	return rc;
}

int vc_cu_manual_cuDevicePrimaryCtxRelease_v2(struct vc_cu_session *x, const uint8_t *p,
					      uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;

	TAKE(rq);
	if (rq.dev < 0 || rq.dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!x->primary[rq.dev] || !x->primary_refs[rq.dev])
		return CUDA_ERROR_INVALID_CONTEXT;
	/* As natively: the last release destroys the primary context. */
	if (--x->primary_refs[rq.dev] == 0) {
		out->console = true;
		return destroy_context(x, x->primary[rq.dev]);
	}
	return 0;
}

int vc_cu_manual_cuDevicePrimaryCtxReset_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					    struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;

	TAKE(rq);
	void *real = NULL;

	if (rq.dev < 0 || rq.dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	if (x->primary[rq.dev] && !vc_cu_lookup(x, VC_H_CUCONTEXT, x->primary[rq.dev], &real) && real) {
		out->console = true;
		return destroy_context(x, x->primary[rq.dev]);
	}
	x->primary_flags[rq.dev] = 0;
	return 0;
}

int vc_cu_manual_cuDevicePrimaryCtxGetState(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					    struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;
	struct vc_cu_rep_ctx rp = {0};
	void *real = NULL;

	TAKE(rq);
	if (rq.dev < 0 || rq.dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	rp.flags = x->primary_flags[rq.dev];
	/* Active once retained, as natively; the context may exist earlier (the
	 * runtime asks for its handle through an export table first). */
	rp.active = x->primary[rq.dev] && x->primary_refs[rq.dev] &&
		    !vc_cu_lookup(x, VC_H_CUCONTEXT, x->primary[rq.dev], &real) && real;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuDevicePrimaryCtxSetFlags_v2(struct vc_cu_session *x, const uint8_t *p,
					       uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;

	(void)out;
	TAKE(rq);
	if (rq.dev < 0 || rq.dev >= VC_CU_MAX_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	x->primary_flags[rq.dev] = rq.flags;
	/* Already created: apply them, as setting a live primary context's
	 * flags does natively. */
	void *real = NULL;

	if (x->primary[rq.dev] && !vc_cu_lookup(x, VC_H_CUCONTEXT, x->primary[rq.dev], &real) && real) {
		int rc = vc_cu_enter(x, x->primary[rq.dev]);

		return rc ? rc : (int)x->drv->cuCtxSetFlags(rq.flags);
	}
	return 0;
}

int vc_cu_manual_cuCtxCreate_v4(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;
	struct vc_cu_rep_ctx rp = {0};
	CUcontext c = NULL;
	CUdevice d;
	int rc;

	TAKE(rq);
	if ((rc = x->drv->cuDeviceGet(&d, rq.dev)))
		return rc;
	if ((rc = x->drv->cuCtxCreate_v4(&c, NULL, rq.flags, d)))
		return rc;
	if ((rc = vc_cu_publish(x, VC_H_CUCONTEXT, c, &rp.pctx))) {
		x->drv->cuCtxDestroy_v2(c);
		return rc;
	}
	x->h[rp.pctx & 0xffffffu].owner = (uint32_t)(rp.pctx & 0xffffffu);
	x->cur_id = rp.pctx;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuCtxDestroy_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				 struct vc_cu_out *out)
{
	struct vc_cu_req_ctx rq;

	TAKE(rq);
	for (int d = 0; d < VC_CU_MAX_DEVICES; d++)
		if (rq.target && x->primary[d] == rq.target)
			return CUDA_ERROR_INVALID_CONTEXT; /* a primary context is released, not destroyed */
	out->console = true;
	return destroy_context(x, rq.target);
}

/* ---- images and loads -------------------------------------------------------------- */

static struct vc_cu_image *image(struct vc_cu_session *x, uint64_t id)
{
	for (int i = 0; i < VC_CU_MAX_IMAGES; i++)
		if (x->img[i].buf && x->img[i].id == id)
			return &x->img[i];
	return NULL;
}

static void image_free(struct vc_cu_session *x, struct vc_cu_image *im)
{
	x->img_bytes -= im->size;
	free(im->buf);
	memset(im, 0, sizeof(*im));
}

/* Zero bytes after every staged image: the driver parses the image's own
 * headers, so a lying header should meet zeros, not the heap. */
#define IMAGE_SLACK 4096u

int vc_cu_manual_vcImageBegin(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_req_vcImageBegin rq;
	struct vc_cu_rep_vcImageBegin rp;
	struct vc_cu_image *im = NULL;

	TAKE(rq);
	if (!rq.size || rq.size > VC_CU_IMAGE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	/* Bounded host memory per session, whatever the guest asks for. */
	if (rq.size > VC_CU_IMAGE_MAX - x->img_bytes)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (int i = 0; i < VC_CU_MAX_IMAGES && !im; i++)
		if (!x->img[i].buf)
			im = &x->img[i];
	if (!im)
		return CUDA_ERROR_OUT_OF_MEMORY;
	im->buf = calloc(1, rq.size + IMAGE_SLACK);
	if (!im->buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	im->size = rq.size;
	x->img_bytes += rq.size;
	im->id = ++x->next_image;
	rp.image = im->id;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_vcImagePut(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			    struct vc_cu_out *out)
{
	struct vc_cu_req_vcImagePut rq;
	struct vc_cu_image *im;
	const void *src;

	TAKE(rq);
	im = image(x, rq.image);
	if (!im)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!(rq.len <= im->size && rq.offset <= im->size - rq.len))
		return CUDA_ERROR_INVALID_VALUE;
	if (rq.inline_data) {
		if (rq.len > len - sizeof(rq))
			return -VC_FATAL_PAYLOAD;
		src = p + sizeof(rq);
	} else {
		src = x->svc->arena(x->svc->arg, rq.arena_off, rq.len);
		if (!src)
			return -VC_FATAL_ARENA;
		out->bulk = true;
	}
	memcpy(im->buf + rq.offset, src, rq.len);
	return 0;
}

int vc_cu_manual_vcLoad(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_load rq;
	struct vc_cu_rep_load rp = {0};
	struct vc_cu_image *im;
	int rc;

	TAKE(rq);
	im = image(x, rq.image);
	if (!im)
		return CUDA_ERROR_INVALID_HANDLE;
	out->console = true; /* the driver flushes device printf at a module load */
	if ((rc = vc_cu_enter(x, rq.ctx)))
		goto out;
	if (rq.kind == VC_CU_LOAD_MODULE) {
		CUmodule m = NULL;

		if ((rc = x->drv->cuModuleLoadData(&m, im->buf)) == 0)
			rc = publish_owned(x, VC_H_CUMODULE, m, &rp.handle);
	} else if (rq.kind == VC_CU_LOAD_LIBRARY) {
		CUlibrary l = NULL;

		/* Libraries are context-independent; they are freed with the
		 * session's last context by the driver at teardown. */
		if ((rc = x->drv->cuLibraryLoadData(&l, im->buf, NULL, NULL, 0, NULL, NULL, 0)) == 0)
			rc = vc_cu_publish(x, VC_H_CULIBRARY, l, &rp.handle);
	} else {
		rc = -VC_FATAL_PAYLOAD;
	}
out:
	image_free(x, im);
	if (rc == 0)
		REPLY(rp);
	return rc;
}

/* ---- kernels ---------------------------------------------------------------------- */

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
	/* The dynamic shared memory it may have, so that the guest refuses a
	 * launch that asks for more at once, as the driver does. */
	int smem = 0;
	CUdevice dev = 0;

	if (is_kernel) {
		x->drv->cuCtxGetDevice(&dev);
		x->drv->cuKernelGetAttribute(&smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f, dev);
	} else {
		x->drv->cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f);
	}
	pl->max_dyn_smem = smem > 0 ? (uint32_t)smem : 0;
	out->data_len = sizeof(*pl);
	return 0;
}

/* A launch configuration from the wire: attributes that are plain values. */
static int launch_config(const struct vc_cu_req_launch *rq, const uint8_t *attrs_p, CUlaunchAttribute *attrs,
			 CUlaunchConfig *cfg, void *stream)
{
	struct vc_cu_launch_attr wa;
	uint32_t n = 0;

	for (uint32_t i = 0; i < rq->nattrs; i++) {
		memcpy(&wa, attrs_p + i * sizeof(wa), sizeof(wa));
		/* Attributes that carry handles or host pointers cannot be
		 * forwarded as bytes. */
		if (wa.id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
		    wa.id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT ||
		    wa.id == CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE ||
		    wa.id == CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW)
			return CUDA_ERROR_NOT_SUPPORTED;
		memset(&attrs[n], 0, sizeof(attrs[n]));
		attrs[n].id = (CUlaunchAttributeID)wa.id;
		memcpy(&attrs[n].value, wa.value, sizeof(attrs[n].value));
		n++;
	}
	if (rq->flags & VC_CU_LAUNCH_COOPERATIVE) {
		memset(&attrs[n], 0, sizeof(attrs[n]));
		attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		attrs[n].value.cooperative = 1;
		n++;
	}
	memset(cfg, 0, sizeof(*cfg));
	cfg->gridDimX = rq->grid[0];
	cfg->gridDimY = rq->grid[1];
	cfg->gridDimZ = rq->grid[2];
	cfg->blockDimX = rq->block[0];
	cfg->blockDimY = rq->block[1];
	cfg->blockDimZ = rq->block[2];
	cfg->sharedMemBytes = rq->shared_mem;
	cfg->hStream = stream;
	cfg->attrs = n ? attrs : NULL;
	cfg->numAttrs = n;
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
	    (rc = launch_config(&rq, p + sizeof(rq), attrs, &cfg, stream)))
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
	    (rc = launch_config(&rq, p + sizeof(rq), attrs, &cfg, stream)))
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
	if (rc == CUDA_SUCCESS && vc_sched_enabled()) {
		void *ctx = NULL;

		vc_cu_lookup(x, VC_H_CUCONTEXT, x->cur_id, &ctx);
		vc_cu_sched_after(x, ctx, stream);
	}
	return rc;
}

/* ---- memory ---------------------------------------------------------------------- */

int vc_cu_manual_vcMemAlloc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			    struct vc_cu_out *out)
{
	struct vc_cu_req_alloc rq;
	struct vc_cu_rep_alloc rp = {0};
	CUdeviceptr d = 0;
	size_t pitch = 0;
	void *stream, *pool;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	/* Every path charges the quota first; a failure refunds. */
	switch (rq.kind) {
	case VC_CU_ALLOC_PLAIN:
		if ((rc = vc_cu_quota_charge(x, rq.size)))
			return rc;
		rc = x->drv->cuMemAlloc_v2(&d, rq.size);
		if (rc == 0 && (rc = vc_cu_quota_track(x, d, rq.size, x->cur_id)))
			x->drv->cuMemFree_v2(d);
		if (rc)
			vc_cu_quota_refund(x, rq.size);
		break;
	case VC_CU_ALLOC_PITCH: {
		/* The pitch is the driver's choice: charge the least it can be,
		 * then the rest once it is known. */
		uint64_t least = rq.width * rq.height, all;

		if (rq.height && least / rq.height != rq.width)
			return CUDA_ERROR_INVALID_VALUE;
		if ((rc = vc_cu_quota_charge(x, least)))
			return rc;
		rc = x->drv->cuMemAllocPitch_v2(&d, &pitch, rq.width, rq.height, rq.elem);
		if (rc) {
			vc_cu_quota_refund(x, least);
			break;
		}
		all = (uint64_t)pitch * rq.height;
		all = all > least ? all : least;
		if ((rc = vc_cu_quota_charge(x, all - least))) {
			x->drv->cuMemFree_v2(d);
			vc_cu_quota_refund(x, least);
		} else if ((rc = vc_cu_quota_track(x, d, all, x->cur_id))) {
			x->drv->cuMemFree_v2(d);
			vc_cu_quota_refund(x, all);
		}
		break;
	}
	case VC_CU_ALLOC_ASYNC:
		if ((rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
		    (rc = vc_cu_lookup(x, VC_H_CUMEMORYPOOL, rq.pool, &pool)))
			return rc;
		if (x->nasync == x->capasync) {
			uint32_t cap = x->capasync ? x->capasync * 2 : 64;
			uint64_t *na = cap <= VC_CU_MAX_HANDLES ? realloc(x->async_ptr, cap * sizeof(*na)) : NULL;

			if (!na)
				return CUDA_ERROR_OUT_OF_MEMORY;
			x->async_ptr = na;
			x->capasync = cap;
		}
		if ((rc = vc_cu_quota_charge(x, rq.size)))
			return rc;
		rc = pool ? x->drv->cuMemAllocFromPoolAsync(&d, rq.size, pool, stream)
			  : x->drv->cuMemAllocAsync(&d, rq.size, stream);
		if (rc == 0 && (rc = vc_cu_quota_track(x, d, rq.size, 0)))
			x->drv->cuMemFreeAsync(d, stream);
		if (rc)
			vc_cu_quota_refund(x, rq.size);
		else
			x->async_ptr[x->nasync++] = d;
		break;
	default:
		return -VC_FATAL_PAYLOAD;
	}
	if (rc)
		return rc;
	rp.dptr = d;
	rp.pitch = pitch;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_vcMemFree(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			   struct vc_cu_out *out)
{
	struct vc_cu_req_free rq;
	void *stream;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (rq.async) {
		uint32_t i;

		for (i = 0; i < x->nasync && x->async_ptr[i] != rq.dptr; i++)
			;
		if (i == x->nasync)
			return CUDA_ERROR_INVALID_VALUE;
		if ((rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
			return rc;
		rc = x->drv->cuMemFreeAsync((CUdeviceptr)rq.dptr, stream);
		if (rc == 0) {
			x->async_ptr[i] = x->async_ptr[--x->nasync];
			vc_cu_quota_untrack(x, rq.dptr);
		}
		return rc;
	}
	if (!rq.dptr)
		return 0; /* cuMemFree(0) succeeds natively */
	/* Only the start of an allocation of ours may be freed. */
	if ((rc = vc_cu_check_range(x, rq.dptr, 1)))
		return rc;
	rc = x->drv->cuMemFree_v2((CUdeviceptr)rq.dptr);
	if (rc == 0)
		vc_cu_quota_untrack(x, rq.dptr);
	return rc;
}

/*
 * Work that cannot be recorded into a graph: a copy staged through the arena
 * (its bytes are gone when the graph runs) and a host function (its record
 * is freed when it has run once). On a capturing stream it is refused, as
 * natively an unsupported operation is, instead of being recorded wrongly.
 */
static int not_capturing(struct vc_cu_session *x, void *stream)
{
	return vc_cu_capturing(x, stream) ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : 0;
}

int vc_cu_manual_vcMemcpy(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			  struct vc_cu_out *out)
{
	struct vc_cu_req_memcpy rq;
	void *stream, *host;
	int rc;

	TAKE(rq);
	out->console = !rq.async; /* a blocking copy synchronises */
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
		return rc;
	if (rq.dir == VC_CU_COPY_DTOD) {
		if ((rc = vc_cu_check_range(x, rq.dst, rq.len)) || (rc = vc_cu_check_range(x, rq.src, rq.len)))
			return rc;
		return rq.async ? x->drv->cuMemcpyDtoDAsync_v2(rq.dst, rq.src, rq.len, stream)
				: x->drv->cuMemcpyDtoD_v2(rq.dst, rq.src, rq.len);
	}
	if (rq.host == VC_CU_HOST_INLINE) {
		if (rq.dir == VC_CU_COPY_HTOD) {
			if (rq.len > len - sizeof(rq))
				return -VC_FATAL_PAYLOAD;
			host = (void *)(p + sizeof(rq));
		} else {
			if (!out->data)
				return -VC_FATAL_PAYLOAD; /* inline device-to-host needs a reply */
			if (rq.len > out->data_cap)
				return CUDA_ERROR_INVALID_VALUE;
			host = out->data;
			out->data_len = (uint32_t)rq.len;
		}
	} else if (rq.host == VC_CU_HOST_ARENA) {
		host = x->svc->arena(x->svc->arg, rq.arena_off, rq.len);
		if (!host)
			return -VC_FATAL_ARENA;
		out->bulk = true;
	} else if (rq.host == VC_CU_HOST_PINNED) {
		/* The guest's own page-locked memory: the copy is DMA and, when
		 * asynchronous, really is (the guest owns those pages). */
		host = vc_cu_pinned_ptr(x, rq.arena_off, rq.len);
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
	} else {
		return -VC_FATAL_PAYLOAD;
	}
	if (rq.async && rq.host != VC_CU_HOST_PINNED && (rc = not_capturing(x, stream)))
		return rc;
	if (rq.dir == VC_CU_COPY_HTOD) {
		if ((rc = vc_cu_check_range(x, rq.dst, rq.len)))
			return rc;
		/* The arena is not registered with the driver (yet): an async copy
		 * from it is staged before the call returns, so the chunk may be
		 * reused as soon as this command completes. */
		return rq.async ? x->drv->cuMemcpyHtoDAsync_v2(rq.dst, host, rq.len, stream)
				: x->drv->cuMemcpyHtoD_v2(rq.dst, host, rq.len);
	}
	if (rq.dir == VC_CU_COPY_DTOH) {
		if ((rc = vc_cu_check_range(x, rq.src, rq.len)))
			return rc;
		/* Into pageable memory the async form completes before returning,
		 * so done_seq covers the data, as the guest expects. */
		return rq.async ? x->drv->cuMemcpyDtoHAsync_v2(host, rq.src, rq.len, stream)
				: x->drv->cuMemcpyDtoH_v2(host, rq.src, rq.len);
	}
	return -VC_FATAL_PAYLOAD;
}

int vc_cu_manual_vcMemcpy2D(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			    struct vc_cu_out *out)
{
	struct vc_cu_req_memcpy2d rq;
	CUDA_MEMCPY2D c;
	void *stream;
	int rc;

	TAKE(rq);
	out->console = !rq.async; /* a blocking copy synchronises */
	if (!rq.height || !rq.width)
		return 0;
	if (rq.dpitch < rq.width || rq.spitch < rq.width ||
	    rq.height - 1 > (UINT64_MAX - rq.width) / (rq.dpitch > rq.spitch ? rq.dpitch : rq.spitch))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
	    (rc = vc_cu_check_range(x, rq.dst, rq.dpitch * (rq.height - 1) + rq.width)) ||
	    (rc = vc_cu_check_range(x, rq.src, rq.spitch * (rq.height - 1) + rq.width)))
		return rc;
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = rq.src;
	c.srcPitch = rq.spitch;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = rq.dst;
	c.dstPitch = rq.dpitch;
	c.WidthInBytes = rq.width;
	c.Height = rq.height;
	return rq.async ? x->drv->cuMemcpy2DAsync_v2(&c, stream) : x->drv->cuMemcpy2DUnaligned_v2(&c);
}

int vc_cu_manual_vcMemset(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			  struct vc_cu_out *out)
{
	struct vc_cu_req_memset rq;
	void *stream;
	int rc;

	(void)out;
	TAKE(rq);
	uint64_t extent;

	if (rq.elem != 1 && rq.elem != 2 && rq.elem != 4)
		return -VC_FATAL_PAYLOAD;
	if (rq.count > UINT64_MAX / rq.elem)
		return CUDA_ERROR_INVALID_VALUE;
	extent = rq.count * rq.elem;
	if (rq.height && !extent)
		return VC_CUDA_SUCCESS; /* rows of nothing */
	if (rq.height) {
		/* Rows pitch apart: the last row ends at pitch * (height - 1) + width
		 * (pitch >= width > 0 here, so the division is safe). */
		if (rq.pitch < extent || rq.height - 1 > (UINT64_MAX - extent) / rq.pitch)
			return CUDA_ERROR_INVALID_VALUE;
		extent += rq.pitch * (rq.height - 1);
	}
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
	    (rc = vc_cu_check_range(x, rq.dst, extent)))
		return rc;
	if (rq.height) {
		switch (rq.elem) {
		case 1:
			return rq.async ? x->drv->cuMemsetD2D8Async(rq.dst, rq.pitch, (unsigned char)rq.value, rq.count, rq.height, stream)
					: x->drv->cuMemsetD2D8_v2(rq.dst, rq.pitch, (unsigned char)rq.value, rq.count, rq.height);
		case 2:
			return rq.async ? x->drv->cuMemsetD2D16Async(rq.dst, rq.pitch, (unsigned short)rq.value, rq.count, rq.height, stream)
					: x->drv->cuMemsetD2D16_v2(rq.dst, rq.pitch, (unsigned short)rq.value, rq.count, rq.height);
		default:
			return rq.async ? x->drv->cuMemsetD2D32Async(rq.dst, rq.pitch, rq.value, rq.count, rq.height, stream)
					: x->drv->cuMemsetD2D32_v2(rq.dst, rq.pitch, rq.value, rq.count, rq.height);
		}
	}
	switch (rq.elem) {
	case 1:
		return rq.async ? x->drv->cuMemsetD8Async(rq.dst, (unsigned char)rq.value, rq.count, stream)
				: x->drv->cuMemsetD8_v2(rq.dst, (unsigned char)rq.value, rq.count);
	case 2:
		return rq.async ? x->drv->cuMemsetD16Async(rq.dst, (unsigned short)rq.value, rq.count, stream)
				: x->drv->cuMemsetD16_v2(rq.dst, (unsigned short)rq.value, rq.count);
	default:
		return rq.async ? x->drv->cuMemsetD32Async(rq.dst, rq.value, rq.count, stream)
				: x->drv->cuMemsetD32_v2(rq.dst, rq.value, rq.count);
	}
}

/* ---- host callbacks and export-table slots ----------------------------------------------- */

struct hostcb {
	struct vc_cu_session *x;
	uint64_t cookie;
};

/* The driver's thread, when the stream reaches the callback: queue it for the
 * guest, wake the guest, and hold the stream until the guest has run it. */
static void CUDA_CB host_cb(void *arg)
{
	struct hostcb *c = arg;
	struct vc_cu_session *x = c->x;
	uint32_t idx = 0, wait_us = 5;
	int sig = -EAGAIN;

	pthread_mutex_lock(&x->cb_mu);
	while (!x->cb_abort) {
		sig = x->svc->cb_push(x->svc->arg, c->cookie, &idx);
		if (sig != -EAGAIN)
			break;
		pthread_mutex_unlock(&x->cb_mu);
		usleep(100); /* the guest's queue is full: it is running callbacks */
		pthread_mutex_lock(&x->cb_mu);
	}
	/* Shared memory is read only under cb_mu with cb_abort clear: the
	 * session's teardown sets cb_abort before the region goes away. */
	while (sig >= 0 && !x->cb_abort && (int32_t)(x->svc->cb_done(x->svc->arg) - idx) <= 0) {
		pthread_mutex_unlock(&x->cb_mu);
		usleep(wait_us);
		wait_us = wait_us < 1000 ? wait_us * 2 : 1000;
		pthread_mutex_lock(&x->cb_mu);
	}
	x->cb_inflight--;
	pthread_cond_broadcast(&x->cb_cv);
	pthread_mutex_unlock(&x->cb_mu);
	free(c);
}

int vc_cu_manual_vcHostFunc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			    struct vc_cu_out *out)
{
	struct vc_cu_req_hostfunc rq;
	struct hostcb *c;
	void *stream;
	int rc;

	(void)out; /* asynchronous: no reply */
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
	    (rc = not_capturing(x, stream)))
		return rc;
	c = malloc(sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->x = x;
	c->cookie = rq.cookie;
	pthread_mutex_lock(&x->cb_mu);
	x->cb_inflight++;
	pthread_mutex_unlock(&x->cb_mu);
	rc = x->drv->cuLaunchHostFunc(stream, host_cb, c);
	if (rc) {
		pthread_mutex_lock(&x->cb_mu);
		x->cb_inflight--;
		pthread_mutex_unlock(&x->cb_mu);
		free(c);
	}
	return rc;
}

/*
 * 21318c60 (asked for by cuBLAS, cuBLASLt and cuFFT): slots 4, 39 and 51, as
 * measured (docs/cuda13-driver-surface.md), asked of the host's own driver on
 * the session's real context, made current as it is when the libraries call
 * them. Slot 51 takes a stream (the guest's id, looked up here: the library's
 * stream, 0 for the default one) and answers a driver object: the guest gets
 * an opaque id for it, never the host pointer.
 */
static int ctx_table_slot(struct vc_cu_session *x, uint32_t slot, uint64_t target, uint64_t arg,
			  uint64_t *value)
{
	static const CUuuid id = {{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff,
				   0x73, 0x24, 0xc8, 0xf2}};
	const void *table = NULL;
	const uint64_t *t;
	void *ctx, *obj;
	int rc;

	if ((rc = vc_cu_lookup(x, VC_H_CUCONTEXT, target, &ctx)))
		return rc;
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if ((rc = vc_cu_enter(x, target)))
		return rc;
	if ((rc = x->drv->cuGetExportTable(&table, &id)) || !table)
		return rc ? rc : CUDA_ERROR_NOT_SUPPORTED;
	t = table;
	/* The first qword is the table's size in bytes: the slot must lie inside. */
	if (t[0] < 8 * (slot + 1) || !t[slot])
		return CUDA_ERROR_NOT_SUPPORTED;
	if (slot == 4) {
		/* The third argument was a pointer when cuBLASLt called it: give
		 * the driver scratch memory of ours to write, never NULL. */
		CUresult (*fn)(CUcontext, uint64_t *, void *);
		uint64_t scratch[64] = {0};

		memcpy(&fn, &t[slot], sizeof(fn));
		return fn(ctx, value, scratch);
	}
	if (slot == 51) {
		CUresult (*fn)(CUcontext, void *, void **, void *);
		uint64_t scratch[64] = {0};
		void *stream;

		if ((rc = vc_cu_lookup(x, VC_H_CUSTREAM, arg, &stream)))
			return rc;
		memcpy(&fn, &t[slot], sizeof(fn));
		obj = NULL;
		if ((rc = fn(ctx, stream, &obj, scratch)))
			return rc;
		return publish_owned(x, VC_H_VCOPAQUE, obj, value);
	}
	CUresult (*fn39)(CUcontext, void *, int *, void *);
	uint64_t scratch[64] = {0};
	int v = 0;

	if ((rc = vc_cu_lookup(x, VC_H_VCOPAQUE, arg, &obj)))
		return rc;
	memcpy(&fn39, &t[slot], sizeof(fn39));
	if ((rc = fn39(ctx, obj, &v, scratch)))
		return rc;
	*value = (uint32_t)v;
	return 0;
}

int vc_cu_manual_vcExportSlot(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_req_vcExportSlot rq;
	struct vc_cu_rep_vcExportSlot rp = {0};
	int rc;

	TAKE(rq);
	if (rq.table == 0 && rq.slot == 2) {
		/* 6bd5fb6c/2: the device's primary context, without a retain. */
		if ((rc = primary_get(x, rq.dev, &rp.value)))
			return rc;
		REPLY(rp);
		return 0;
	}
	if (rq.table == 1 && (rq.slot == 4 || rq.slot == 39 || rq.slot == 51)) {
		rc = ctx_table_slot(x, rq.slot, rq.target, rq.arg, &rp.value);
		if (rc == 0)
			REPLY(rp);
		return rc;
	}
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- device printf output ------------------------------------------------------------------ */

int vc_cu_manual_vcConsole(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_vcConsole rq;
	struct vc_cu_rep_vcConsole rp = {0};
	uint32_t cap;

	(void)x;
	TAKE(rq);
	if (!out->data)
		return CUDA_ERROR_INVALID_VALUE;
	cap = rq.max < out->data_cap ? rq.max : out->data_cap;
	out->data_len = vc_console_take(out->data, cap, &rp.end, &rp.left);
	REPLY(rp);
	return 0;
}
