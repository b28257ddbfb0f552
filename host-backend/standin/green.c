/* SPDX-License-Identifier: MIT */
/*
 * green.c - the CI stand-in's device resources and green contexts, with the
 * rules the driver documents for a compute capability 9.0 device (the
 * recorded H200: 132 SMs). An SM resource's internal bytes hold a magic,
 * the split it came from and its group; groups are at least 8 SMs and a
 * multiple of 8 (2 and 2 with CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING:
 * the stand-in's guess at "lower"); a descriptor takes resources of one split
 * only. A green context has a context of its own (cuCtxFromGreenCtx) whose
 * streams and events are the green context's; its streams are made with
 * CU_STREAM_NON_BLOCKING, as the driver demands. Kernels do not run, so a
 * green context limits nothing here.
 */
#include <string.h>

#include "standin/standin_priv.h"

#define MAGIC 0x53495253u /* "SRIS" */
#define MIN_PART 8u
#define ALIGN 8u
#define MIN_PART_FINE 2u

static CUresult (*g_ctx_destroy)(CUcontext);
static uint64_t g_next_split = 1; /* under g_mu */

struct rinfo {
	uint32_t magic;
	uint32_t group; /* index in its split; UINT32_MAX: the remainder */
	uint64_t split; /* 0: a device's or context's whole resource */
};

static unsigned device_sms(void)
{
	return (unsigned)vc_standin_attrs[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT];
}

static void make_res(CUdevResource *r, unsigned sms, uint64_t split, uint32_t group, unsigned min, unsigned align)
{
	struct rinfo in = {MAGIC, group, split};

	memset(r, 0, sizeof(*r));
	r->type = CU_DEV_RESOURCE_TYPE_SM;
	memcpy(r->_internal_padding, &in, sizeof(in));
	r->sm.smCount = sms;
	r->sm.minSmPartitionSize = min;
	r->sm.smCoscheduledAlignment = align;
}

/* The stand-in's record in resource @r, or CUDA_ERROR_INVALID_RESOURCE_TYPE / _VALUE. */
static CUresult res_info(const CUdevResource *r, struct rinfo *in)
{
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	if (r->type != CU_DEV_RESOURCE_TYPE_SM)
		return CUDA_ERROR_INVALID_RESOURCE_TYPE;
	memcpy(in, r->_internal_padding, sizeof(*in));
	return in->magic == MAGIC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The green context that context @c was converted from, or NULL. */
static struct obj *green_of(const void *c)
{
	const struct obj *o = c;

	return vc_si_is(o, T_CTX) && o->origin && vc_si_is(o->origin, T_GREEN) ? o->origin : NULL;
}

static CUresult s_dev_resource(CUdevice dev, CUdevResource *r, CUdevResourceType type)
{
	if (!r)
		return vc_si_log("cuDeviceGetDevResource", CUDA_ERROR_INVALID_VALUE);
	if (!vc_si_dev_ok(dev))
		return vc_si_log("cuDeviceGetDevResource", CUDA_ERROR_INVALID_DEVICE);
	if (type != CU_DEV_RESOURCE_TYPE_SM)
		return vc_si_log("cuDeviceGetDevResource", CUDA_ERROR_INVALID_RESOURCE_TYPE);
	make_res(r, device_sms(), 0, 0, MIN_PART, ALIGN);
	return CUDA_SUCCESS;
}

static CUresult s_ctx_resource(CUcontext c, CUdevResource *r, CUdevResourceType type)
{
	struct obj *g = green_of(c);

	if (!vc_si_is(c, T_CTX))
		return vc_si_log("cuCtxGetDevResource", CUDA_ERROR_INVALID_CONTEXT);
	if (!r)
		return vc_si_log("cuCtxGetDevResource", CUDA_ERROR_INVALID_VALUE);
	if (type != CU_DEV_RESOURCE_TYPE_SM)
		return vc_si_log("cuCtxGetDevResource", CUDA_ERROR_INVALID_RESOURCE_TYPE);
	make_res(r, g ? g->flags : device_sms(), 0, 0, MIN_PART, ALIGN);
	return CUDA_SUCCESS;
}

static CUresult s_green_resource(CUgreenCtx gc, CUdevResource *r, CUdevResourceType type)
{
	if (!vc_si_is(gc, T_GREEN))
		return vc_si_log("cuGreenCtxGetDevResource", CUDA_ERROR_INVALID_CONTEXT);
	if (!r)
		return vc_si_log("cuGreenCtxGetDevResource", CUDA_ERROR_INVALID_VALUE);
	if (type != CU_DEV_RESOURCE_TYPE_SM)
		return vc_si_log("cuGreenCtxGetDevResource", CUDA_ERROR_INVALID_RESOURCE_TYPE);
	make_res(r, ((struct obj *)gc)->flags, 0, 0, MIN_PART, ALIGN);
	return CUDA_SUCCESS;
}

static CUresult s_split(CUdevResource *result, unsigned *nb, const CUdevResource *input, CUdevResource *rem,
			unsigned flags, unsigned min_count)
{
	unsigned fine = flags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING;
	unsigned min = fine ? MIN_PART_FINE : MIN_PART, align = fine ? MIN_PART_FINE : ALIGN, size, n;
	struct rinfo in;
	uint64_t split;
	CUresult rc;

	if (!nb)
		return vc_si_log("cuDevSmResourceSplitByCount", CUDA_ERROR_INVALID_VALUE);
	if ((rc = res_info(input, &in)))
		return vc_si_log("cuDevSmResourceSplitByCount", rc);
	if (flags & ~(unsigned)(CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING |
				CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE) ||
	    min_count > input->sm.smCount || (result && !*nb))
		return vc_si_log("cuDevSmResourceSplitByCount", CUDA_ERROR_INVALID_VALUE);
	/* The driver's rounding: at least the minimum partition, up to the alignment. */
	size = min_count > min ? min_count : min;
	size = (size + align - 1) / align * align;
	n = input->sm.smCount / size;
	if (result && *nb < n)
		n = *nb;
	pthread_mutex_lock(&g_mu);
	split = g_next_split++;
	pthread_mutex_unlock(&g_mu);
	for (unsigned i = 0; result && i < n; i++)
		make_res(&result[i], size, split, i, min, align);
	if (rem)
		make_res(rem, input->sm.smCount - n * size, split, UINT32_MAX, min, align);
	*nb = n;
	return CUDA_SUCCESS;
}

static CUresult s_gen_desc(CUdevResourceDesc *d, CUdevResource *res, unsigned n)
{
	struct rinfo first = {0}, in, other;
	unsigned sms = 0;
	struct obj *o;
	CUresult rc;

	if (!d || !res || !n)
		return vc_si_log("cuDevResourceGenerateDesc", CUDA_ERROR_INVALID_VALUE);
	for (unsigned i = 0; i < n; i++) {
		if ((rc = res_info(&res[i], &in)))
			return vc_si_log("cuDevResourceGenerateDesc", rc);
		if (i == 0)
			first = in;
		/* Several resources: outputs of one split, each once. */
		if (n > 1 && (!in.split || in.split != first.split))
			return vc_si_log("cuDevResourceGenerateDesc", CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
		for (unsigned k = 0; k < i; k++)
			if (!res_info(&res[k], &other) && other.group == in.group)
				return vc_si_log("cuDevResourceGenerateDesc", CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
		sms += res[i].sm.smCount;
	}
	if (!sms)
		return vc_si_log("cuDevResourceGenerateDesc", CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
	if (!(o = vc_si_new_obj(T_RDESC)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	o->flags = sms;
	*d = (CUdevResourceDesc)o;
	return CUDA_SUCCESS;
}

static CUresult s_green_create(CUgreenCtx *pg, CUdevResourceDesc desc, CUdevice dev, unsigned flags)
{
	struct obj *g, *c;

	if (!pg || !vc_si_is(desc, T_RDESC) || flags != CU_GREEN_CTX_DEFAULT_STREAM)
		return vc_si_log("cuGreenCtxCreate", CUDA_ERROR_INVALID_VALUE);
	if (!vc_si_dev_ok(dev))
		return vc_si_log("cuGreenCtxCreate", CUDA_ERROR_INVALID_DEVICE);
	if (!(g = vc_si_new_obj(T_GREEN)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!(c = vc_si_new_obj(T_CTX))) {
		vc_si_del_obj(g);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	g->flags = ((struct obj *)desc)->flags;
	g->origin = c;
	c->origin = g;
	c->dev = dev;
	*pg = (CUgreenCtx)g;
	return CUDA_SUCCESS;
}

static CUresult s_green_destroy(CUgreenCtx gc)
{
	struct obj *g = (struct obj *)gc;

	if (!vc_si_is(g, T_GREEN))
		return vc_si_log("cuGreenCtxDestroy", CUDA_ERROR_INVALID_CONTEXT);
	/* Its context goes with what lived in it (memory included: the
	 * stand-in has no primary context to keep it in). */
	if (vc_si_is(g->origin, T_CTX))
		g_ctx_destroy((CUcontext)g->origin);
	vc_si_del_obj(g);
	return CUDA_SUCCESS;
}

static CUresult s_ctx_from_green(CUcontext *pc, CUgreenCtx gc)
{
	if (!pc)
		return vc_si_log("cuCtxFromGreenCtx", CUDA_ERROR_INVALID_VALUE);
	if (!vc_si_is(gc, T_GREEN))
		return vc_si_log("cuCtxFromGreenCtx", CUDA_ERROR_INVALID_CONTEXT);
	*pc = (CUcontext)((struct obj *)gc)->origin;
	return CUDA_SUCCESS;
}

static CUresult s_green_id(CUgreenCtx gc, unsigned long long *id)
{
	struct obj *g = gc ? (struct obj *)gc : green_of(t_ctx);

	if (!id)
		return vc_si_log("cuGreenCtxGetId", CUDA_ERROR_INVALID_VALUE);
	if (!vc_si_is(g, T_GREEN))
		return vc_si_log("cuGreenCtxGetId", CUDA_ERROR_INVALID_CONTEXT);
	*id = g->id;
	return CUDA_SUCCESS;
}

/* Events: "hEvent and hCtx must be from the same primary context": green contexts' contexts are. */
static CUresult s_green_record(CUgreenCtx gc, CUevent e)
{
	if (!vc_si_is(gc, T_GREEN))
		return vc_si_log("cuGreenCtxRecordEvent", CUDA_ERROR_INVALID_CONTEXT);
	if (!vc_si_is(e, T_EVENT) || !green_of(((struct obj *)e)->ctx))
		return vc_si_log("cuGreenCtxRecordEvent", CUDA_ERROR_INVALID_HANDLE);
	pthread_mutex_lock(&g_mu);
	((struct obj *)e)->done_at = g_busy_until;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_green_wait(CUgreenCtx gc, CUevent e)
{
	if (!vc_si_is(gc, T_GREEN))
		return vc_si_log("cuGreenCtxWaitEvent", CUDA_ERROR_INVALID_CONTEXT);
	if (!vc_si_is(e, T_EVENT))
		return vc_si_log("cuGreenCtxWaitEvent", CUDA_ERROR_INVALID_HANDLE);
	return CUDA_SUCCESS;
}

static CUresult s_green_stream(CUstream *ps, CUgreenCtx gc, unsigned flags, int prio)
{
	struct obj *s;

	if (!ps || !(flags & CU_STREAM_NON_BLOCKING) || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return vc_si_log("cuGreenCtxStreamCreate", CUDA_ERROR_INVALID_VALUE);
	if (!vc_si_is(gc, T_GREEN))
		return vc_si_log("cuGreenCtxStreamCreate", CUDA_ERROR_INVALID_CONTEXT);
	if (!(s = vc_si_new_obj(T_STREAM)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->ctx = ((struct obj *)gc)->origin; /* the current context does not matter */
	s->flags = flags;
	s->priority = prio < -5 ? -5 : prio > 0 ? 0 : prio;
	*ps = (CUstream)s;
	return CUDA_SUCCESS;
}

/* ---- which context a stream is of ---------------------------------------------------- */

static CUresult s_stream_ctx2(CUstream s, CUcontext *c, CUgreenCtx *g)
{
	struct obj *ctx;

	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	ctx = vc_si_is(s, T_STREAM) ? ((struct obj *)s)->ctx : t_ctx;
	if (c)
		*c = (CUcontext)ctx;
	if (g)
		*g = (CUgreenCtx)green_of(ctx);
	return c && !*c ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

static CUresult s_stream_ctx(CUstream s, CUcontext *c)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	return s_stream_ctx2(s, c, NULL);
}

static CUresult s_stream_green(CUstream s, CUgreenCtx *g)
{
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	return s_stream_ctx2(s, NULL, g);
}

void vc_si_fill_green(struct vc_cuda_driver *d)
{
	g_ctx_destroy = d->cuCtxDestroy_v2;
	d->cuDeviceGetDevResource = s_dev_resource;
	d->cuCtxGetDevResource = s_ctx_resource;
	d->cuGreenCtxGetDevResource = s_green_resource;
	d->cuDevSmResourceSplitByCount = s_split;
	d->cuDevResourceGenerateDesc = s_gen_desc;
	d->cuGreenCtxCreate = s_green_create;
	d->cuGreenCtxDestroy = s_green_destroy;
	d->cuCtxFromGreenCtx = s_ctx_from_green;
	d->cuGreenCtxGetId = s_green_id;
	d->cuGreenCtxRecordEvent = s_green_record;
	d->cuGreenCtxWaitEvent = s_green_wait;
	d->cuGreenCtxStreamCreate = s_green_stream;
	d->cuStreamGetCtx = s_stream_ctx;
	d->cuStreamGetCtx_v2 = s_stream_ctx2;
	d->cuStreamGetGreenCtx = s_stream_green;
}
