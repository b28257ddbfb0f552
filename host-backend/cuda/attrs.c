/* SPDX-License-Identifier: MIT */
/*
 * attrs.c - launch and stream attributes from the wire, as the driver takes
 * them: a CUlaunchAttributeValue is 64 bytes, most of them plain values, but
 * two carry a CUevent (a programmatic event, a launch completion event: ids
 * of the session's tables, translated here) and one a device address range
 * (an access policy window: checked as the session's own memory, as every
 * range the guest names is). Unknown attributes are refused, never
 * forwarded as bytes a later driver might read as pointers. Also stream
 * attributes and the potential cluster size, which take the same values.
 */
#include <string.h>

#include "cuda/exec_priv.h"

/* An access policy window: hitRatio and properties are the driver's to
 * judge; its range must be the session's memory. An empty window (which
 * turns the policy off) names no memory. */
static int check_window(struct vc_cu_session *x, const CUaccessPolicyWindow *w)
{
	if (!w->num_bytes)
		return 0;
	return vc_cu_check_range(x, (uint64_t)(uintptr_t)w->base_ptr, (uint64_t)w->num_bytes);
}

/* A CUevent id of the session, as the real handle; NULL is the driver's to refuse. */
static int event_of(struct vc_cu_session *x, CUevent *ev)
{
	void *real = NULL;
	int rc = vc_cu_lookup(x, VC_H_CUEVENT, (uint64_t)(uintptr_t)*ev, &real);

	if (rc == 0)
		*ev = real;
	return rc;
}

int vc_cu_launch_attr(struct vc_cu_session *x, uint32_t id, const uint8_t *value, CUlaunchAttribute *a)
{
	memset(a, 0, sizeof(*a));
	a->id = (CUlaunchAttributeID)id;
	memcpy(&a->value, value, sizeof(a->value));
	switch (id) {
	case CU_LAUNCH_ATTRIBUTE_IGNORE:
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
	case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
	case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
		return 0; /* plain values */
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		return check_window(x, &a->value.accessPolicyWindow);
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
		return event_of(x, &a->value.programmaticEvent.event);
	case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
		return event_of(x, &a->value.launchCompletionEvent.event);
	case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
		/* A kernel node's attribute (graphs): it hands back a device
		 * node handle, which a launch has none of. */
		return CUDA_ERROR_INVALID_VALUE;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* A launch configuration from the wire; each attribute as the driver takes
 * it (attrs.c: handles inside looked up, ranges checked). */
int vc_cu_launch_config(struct vc_cu_session *x, const struct vc_cu_req_launch *rq, const uint8_t *attrs_p,
			CUlaunchAttribute *attrs, CUlaunchConfig *cfg, void *stream)
{
	struct vc_cu_launch_attr wa;
	uint32_t n = 0;
	int rc;

	for (uint32_t i = 0; i < rq->nattrs; i++) {
		memcpy(&wa, attrs_p + i * sizeof(wa), sizeof(wa));
		if ((rc = vc_cu_launch_attr(x, wa.id, wa.value, &attrs[n])))
			return rc;
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

/* The stream attributes (a subset of the launch attributes), all plain values
 * or a checked window. */
static bool stream_attr(uint32_t id)
{
	return id == CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW || id == CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY ||
	       id == CU_LAUNCH_ATTRIBUTE_PRIORITY || id == CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP ||
	       id == CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
}

int vc_cu_manual_cuStreamSetAttribute(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_stream_attr rq;
	CUlaunchAttribute a;
	void *s;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &s)))
		return rc;
	/* Events are launch attributes, not stream ones: refused before a
	 * handle could reach the driver as bytes. Other plain launch
	 * attributes go to the driver, which answers as natively. */
	if (rq.attr == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT || rq.attr == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_launch_attr(x, rq.attr, rq.value, &a)))
		return rc;
	return x->drv->cuStreamSetAttribute(s, (CUstreamAttrID)rq.attr, &a.value);
}

int vc_cu_manual_cuStreamGetAttribute(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_stream_attr rq;
	struct vc_cu_rep_stream_attr rp;
	CUstreamAttrValue v;
	void *s;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &s)))
		return rc;
	/* Only values without handles come back (a real event pointer never
	 * reaches the guest). */
	if (!stream_attr(rq.attr))
		return CUDA_ERROR_INVALID_VALUE;
	memset(&v, 0, sizeof(v));
	if ((rc = x->drv->cuStreamGetAttribute(s, (CUstreamAttrID)rq.attr, &v)))
		return rc;
	static_assert(sizeof(v) == sizeof(rp.value), "a stream attribute value is 64 bytes");
	memcpy(rp.value, &v, sizeof(rp.value));
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuOccupancyMaxPotentialClusterSize(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						    struct vc_cu_out *out)
{
	struct vc_cu_req_launch rq;
	CUlaunchAttribute attrs[VC_CU_LAUNCH_ATTRS_MAX + 1];
	CUlaunchConfig cfg;
	struct vc_cu_rep_vcExportSlot rp = {0};
	void *f, *stream;
	int n = 0, rc;

	TAKE(rq);
	if (rq.nattrs > VC_CU_LAUNCH_ATTRS_MAX ||
	    (uint64_t)rq.nattrs * sizeof(struct vc_cu_launch_attr) > len - sizeof(rq))
		return -VC_FATAL_PAYLOAD;
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup_func(x, rq.func, &f, NULL)) ||
	    (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)) ||
	    (rc = vc_cu_launch_config(x, &rq, p + sizeof(rq), attrs, &cfg, stream)))
		return rc;
	if ((rc = x->drv->cuOccupancyMaxPotentialClusterSize(&n, f, &cfg)))
		return rc;
	rp.value = (uint64_t)(uint32_t)n;
	REPLY(rp);
	return 0;
}
