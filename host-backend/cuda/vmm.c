/* SPDX-License-Identifier: MIT */
/*
 * vmm.c - virtual memory management: address ranges, physical allocations
 * (cuMemCreate), mappings, access, granularity and allocation handles.
 *
 * Allocation handles are ids of the session's own table (vmm.h): a forged,
 * stale or foreign id is CUDA_ERROR_INVALID_VALUE, as the driver answers an
 * unknown handle. A guest may map, unmap and free only ranges it reserved,
 * and unmap only whole mappings (as the driver demands). cuMemCreate is
 * charged to the quota; the charge goes when the memory really goes: the
 * handle released and every mapping of it unmapped. The Windows handle
 * metadata pointer of CUmemAllocationProp must be 0 (it means nothing on
 * Linux; a guest pointer means nothing here). At close, everything left is
 * unmapped, released and freed.
 */
#include <errno.h>
#include <stdlib.h>

#include "resources/acct.h"
#include "resources/ipc.h"
#include "vc_cuda_vmm.h"
#include "cuda/vmm.h"

#define ID_TAG (0x7dull << 56) /* not the handle table's 0x7c: never taken for one */
#define ID_GEN_SHIFT 24
#define ID_INDEX_MASK 0xffffffu
#define MAX_OBJS (1u << 20)
#define MAX_RANGES (1u << 20)

struct vc_cu_vmm *vc_cu_vmm_state(struct vc_cu_session *x)
{
	if (!x->vmm)
		x->vmm = calloc(1, sizeof(*x->vmm));
	return x->vmm;
}

int vc_cu_vmm_range_add(struct vc_cu_vrange **l, uint32_t *n, uint32_t *cap, uint64_t va, uint64_t size,
			uint64_t aux)
{
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 16;
		struct vc_cu_vrange *nl;

		if (c > MAX_RANGES || !(nl = realloc(*l, c * sizeof(*nl))))
			return -ENOMEM;
		*l = nl;
		*cap = c;
	}
	(*l)[(*n)++] = (struct vc_cu_vrange){.va = va, .size = size, .aux = aux};
	return 0;
}

/* ---- the handle table ---------------------------------------------------------------- */

static uint64_t make_id(const struct vc_cu_vmm *v, uint32_t idx)
{
	return ID_TAG | ((uint64_t)(v->obj[idx].gen & 0xffffff) << ID_GEN_SHIFT) | idx;
}

/* The slot of live handle id @id (the guest holds a reference), or NULL. */
static struct vc_cu_vobj *lookup(struct vc_cu_vmm *v, uint64_t id)
{
	uint32_t idx = (uint32_t)(id & ID_INDEX_MASK);
	struct vc_cu_vobj *o;

	if (!v || (id & (0xffull << 56)) != ID_TAG || (id >> 48 & 0xff) || idx >= v->nobj)
		return NULL;
	o = &v->obj[idx];
	if (!o->real || !o->refs || (o->gen & 0xffffff) != ((id >> ID_GEN_SHIFT) & 0xffffff))
		return NULL;
	return o;
}

static int new_slot(struct vc_cu_vmm *v, uint32_t *idx)
{
	if (v->free_head) {
		*idx = v->free_head - 1;
		v->free_head = v->obj[*idx].next_free;
		return 0;
	}
	if (v->nobj == v->capobj) {
		uint32_t cap = v->capobj ? v->capobj * 2 : 64;
		struct vc_cu_vobj *n;

		if (cap > MAX_OBJS || !(n = realloc(v->obj, cap * sizeof(*n))))
			return -ENOMEM;
		v->obj = n;
		v->capobj = cap;
	}
	*idx = v->nobj++;
	v->obj[*idx] = (struct vc_cu_vobj){0};
	return 0;
}

static int add_obj(struct vc_cu_vmm *v, uint64_t real, uint64_t size, uint64_t charged, int dev, uint64_t *id)
{
	uint32_t idx;

	if (new_slot(v, &idx))
		return CUDA_ERROR_OUT_OF_MEMORY;
	struct vc_cu_vobj *o = &v->obj[idx];

	o->real = real;
	o->size = size;
	o->charged = charged;
	o->dev = dev;
	o->refs = 1;
	o->maps = 0;
	o->gen++;
	*id = make_id(v, idx);
	return 0;
}

/* Allocation @real is gone: its shareable handles go, and the descriptor
 * the listener kept for it (cuda/ipc.c). */
static void exports_gone(struct vc_cu_session *x, uint64_t real)
{
	if (x->vmm->nexported)
		vc_ipc_forget(VC_IPC_FD, VC_IPC_FABRIC, real);
}

/* The memory of slot @idx is gone when no reference and no mapping is left. */
static void settle(struct vc_cu_session *x, uint32_t idx)
{
	struct vc_cu_vmm *v = x->vmm;
	struct vc_cu_vobj *o = &v->obj[idx];

	if (!o->real || o->refs || o->maps)
		return;
	vc_cu_quota_gone(x, o->dev, o->charged);
	exports_gone(x, o->real);
	o->real = 0;
	o->charged = 0;
	o->next_free = v->free_head;
	v->free_head = idx + 1;
}

int vc_cu_vmm_import(struct vc_cu_session *x, uint64_t real, uint64_t *id)
{
	struct vc_cu_vmm *v = vc_cu_vmm_state(x);

	if (!v)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* Not charged: the exporter's quota holds it. Its size is the
	 * exporter's, unknown here: the driver checks mappings of it. */
	return add_obj(v, real, UINT64_MAX, 0, -1, id);
}

int vc_cu_vmm_real(struct vc_cu_session *x, uint64_t id, uint64_t *real)
{
	struct vc_cu_vobj *o = lookup(x->vmm, id);

	if (!o)
		return CUDA_ERROR_INVALID_VALUE;
	*real = o->real;
	return 0;
}

int vc_cu_vmm_info(struct vc_cu_session *x, uint64_t id, uint64_t *real, uint64_t *size, uint32_t *slot)
{
	struct vc_cu_vobj *o = lookup(x->vmm, id);

	if (!o)
		return CUDA_ERROR_INVALID_VALUE;
	*real = o->real;
	*size = o->size;
	*slot = (uint32_t)(o - x->vmm->obj);
	return 0;
}

void vc_cu_vmm_pin(struct vc_cu_session *x, uint32_t slot, bool pin)
{
	struct vc_cu_vmm *v = x->vmm;

	if (!v || slot >= v->nobj || !v->obj[slot].real)
		return;
	if (pin) {
		v->obj[slot].maps++;
	} else if (v->obj[slot].maps) {
		v->obj[slot].maps--;
		settle(x, slot);
	}
}

/* ---- ranges ------------------------------------------------------------------------- */

/* Whether [@p, @p + @len) lies in one reserved range. */
static bool reserved(const struct vc_cu_vmm *v, uint64_t p, uint64_t len)
{
	for (uint32_t i = 0; v && i < v->nresv; i++)
		if (p >= v->resv[i].va && len <= v->resv[i].size && p - v->resv[i].va <= v->resv[i].size - len)
			return true;
	return false;
}

/* Forget mappings [@a, @b): their allocations may go. */
static void drop_maps(struct vc_cu_session *x, uint32_t a, uint32_t b)
{
	struct vc_cu_vmm *v = x->vmm;

	for (uint32_t i = a; i < b; i++) {
		uint32_t o = (uint32_t)v->map[i].aux;

		v->obj[o].maps--;
		settle(x, o);
	}
	memmove(&v->map[a], &v->map[b], (v->nmap - b) * sizeof(v->map[0]));
	v->nmap -= b - a;
}

/* ---- the handlers ------------------------------------------------------------------- */

int vc_cu_manual_cuMemAddressReserve(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				     struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	struct vc_cu_rep_vmm rp = {0};
	struct vc_cu_vmm *v;
	CUdeviceptr ptr = 0;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (!(v = vc_cu_vmm_state(x)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = x->drv->cuMemAddressReserve(&ptr, rq.size, rq.offset, (CUdeviceptr)rq.ptr, rq.flags);
	if (rc)
		return rc;
	if (vc_cu_vmm_range_add(&v->resv, &v->nresv, &v->capresv, ptr, rq.size, 0)) {
		x->drv->cuMemAddressFree(ptr, rq.size);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	rp.value = ptr;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemAddressFree(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				  struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	struct vc_cu_vmm *v = x->vmm;
	uint32_t i, a, b;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	/* Only a whole range this session reserved, as the driver demands. */
	for (i = 0; v && i < v->nresv && !(v->resv[i].va == rq.ptr && v->resv[i].size == rq.size); i++)
		;
	if (!v || i == v->nresv)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuMemAddressFree((CUdeviceptr)rq.ptr, rq.size)))
		return rc;
	/* Mappings the driver let go with the range. */
	a = vc_cu_vmm_map_after(v, rq.ptr);
	if (a > 0 && v->map[a - 1].va == rq.ptr)
		a--;
	for (b = a; b < v->nmap && v->map[b].va < rq.ptr + rq.size; b++)
		;
	drop_maps(x, a, b);
	v->resv[i] = v->resv[--v->nresv];
	return 0;
}

/* Properties from the guest: the Windows pointer must be 0 (it means nothing here). */
static int take_prop(const uint8_t *bytes, CUmemAllocationProp *prop)
{
	memcpy(prop, bytes, sizeof(*prop));
	return prop->win32HandleMetaData ? CUDA_ERROR_INVALID_VALUE : 0;
}

int vc_cu_manual_cuMemCreate(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_vmm_create rq;
	struct vc_cu_rep_vmm rp = {0};
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle h = 0;
	struct vc_cu_vmm *v;
	int dev, rc;

	TAKE(rq);
	if ((rc = take_prop(rq.prop, &prop)) || (rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (!(v = vc_cu_vmm_state(x)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = vc_cu_quota_charge(x, rq.size)))
		return rc;
	dev = prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop.location.id : -1;
	rc = x->drv->cuMemCreate(&h, rq.size, &prop, rq.flags);
	if (rc == 0 && (rc = add_obj(v, h, rq.size, rq.size, dev, &rp.value)))
		x->drv->cuMemRelease(h);
	if (rc) {
		vc_cu_quota_refund(x, rq.size);
		return rc;
	}
	vc_acct_on_device(dev, rq.size, true); /* the guest NVML's view of that device */
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemRelease(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	struct vc_cu_vobj *o;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (!(o = lookup(x->vmm, rq.handle)))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuMemRelease(o->real)))
		return rc;
	o->refs--;
	settle(x, (uint32_t)(o - x->vmm->obj));
	return 0;
}

int vc_cu_manual_cuMemMap(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	struct vc_cu_rep_vmm rp = {.value = UINT64_MAX};
	struct vc_cu_vmm *v = x->vmm;
	CUmemAllocationProp prop;
	struct vc_cu_vobj *o;
	uint32_t i;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (!(o = lookup(v, rq.handle)))
		return CUDA_ERROR_INVALID_VALUE;
	/* Into a range of ours, over no mapping, within the allocation. */
	if (!rq.size || !reserved(v, rq.ptr, rq.size) || rq.size > o->size || rq.offset > o->size - rq.size)
		return CUDA_ERROR_INVALID_VALUE;
	i = vc_cu_vmm_map_after(v, rq.ptr);
	if ((i > 0 && v->map[i - 1].va + v->map[i - 1].size > rq.ptr) ||
	    (i < v->nmap && v->map[i].va < rq.ptr + rq.size))
		return CUDA_ERROR_INVALID_VALUE;
	/* Room first, so that a mapping made is always recorded. */
	if (v->nmap == v->capmap) {
		if (vc_cu_vmm_range_add(&v->map, &v->nmap, &v->capmap, 0, 0, 0))
			return CUDA_ERROR_OUT_OF_MEMORY;
		v->nmap--;
	}
	if ((rc = x->drv->cuMemMap((CUdeviceptr)rq.ptr, rq.size, rq.offset, o->real, rq.flags)))
		return rc;
	memmove(&v->map[i + 1], &v->map[i], (v->nmap - i) * sizeof(v->map[0]));
	v->map[i] = (struct vc_cu_vrange){.va = rq.ptr, .size = rq.size, .aux = (uint64_t)(o - v->obj)};
	v->nmap++;
	o->maps++;
	/* The device whose memory it is: the guest's pointer attributes
	 * answer it (UINT64_MAX: not a device's). Known for what this session
	 * made; an imported allocation's is asked of the driver. */
	memset(&prop, 0, sizeof(prop));
	if (o->dev >= 0)
		rp.value = (uint64_t)o->dev;
	else if (!o->charged &&
		 x->drv->cuMemGetAllocationPropertiesFromHandle(&prop, o->real) == CUDA_SUCCESS &&
		 prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE && prop.location.id >= 0)
		rp.value = (uint64_t)prop.location.id;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemUnmap(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	uint32_t a, b;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	/* Whole mappings of ours only, as the driver demands. */
	if (!x->vmm || !vc_cu_vmm_covered(x->vmm, rq.ptr, rq.size, true, &a, &b))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuMemUnmap((CUdeviceptr)rq.ptr, rq.size)))
		return rc;
	drop_maps(x, a, b);
	return 0;
}

int vc_cu_manual_cuMemSetAccess(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	CUmemAccessDesc d[VC_CU_ACCESS_MAX];
	uint32_t a, b;
	int rc;

	(void)out;
	TAKE(rq);
	if (rq.count > VC_CU_ACCESS_MAX || len - sizeof(rq) < (uint64_t)rq.count * sizeof(d[0]))
		return -VC_FATAL_PAYLOAD;
	memcpy(d, p + sizeof(rq), rq.count * sizeof(d[0]));
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (!rq.count || !x->vmm || !vc_cu_vmm_covered(x->vmm, rq.ptr, rq.size, false, &a, &b))
		return CUDA_ERROR_INVALID_VALUE;
	return x->drv->cuMemSetAccess((CUdeviceptr)rq.ptr, rq.size, d, rq.count);
}

int vc_cu_manual_cuMemGetAllocationGranularity(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					       struct vc_cu_out *out)
{
	struct vc_cu_req_vmm_create rq;
	struct vc_cu_rep_vmm rp = {0};
	CUmemAllocationProp prop;
	size_t g = 0;
	int rc;

	TAKE(rq);
	if ((rc = take_prop(rq.prop, &prop)) || (rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if ((rc = x->drv->cuMemGetAllocationGranularity(&g, &prop, (CUmemAllocationGranularity_flags)rq.option)))
		return rc;
	rp.value = g;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemRetainAllocationHandle(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					     struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	struct vc_cu_rep_vmm rp = {0};
	CUmemGenericAllocationHandle h = 0;
	struct vc_cu_vmm *v = x->vmm;
	struct vc_cu_vobj *o;
	uint32_t a, b;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (!v || !vc_cu_vmm_covered(v, rq.ptr, 1, false, &a, &b))
		return CUDA_ERROR_INVALID_VALUE;
	o = &v->obj[v->map[a].aux];
	if ((rc = x->drv->cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)rq.ptr)))
		return rc;
	/* The handle that was mapped there, natively the same value: here
	 * the same id, with one more reference. */
	o->refs++;
	rp.value = make_id(v, (uint32_t)(o - v->obj));
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemGetAllocationPropertiesFromHandle(struct vc_cu_session *x, const uint8_t *p,
							uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	struct vc_cu_rep_vmm_prop rp;
	CUmemAllocationProp prop;
	struct vc_cu_vobj *o;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (!(o = lookup(x->vmm, rq.handle)))
		return CUDA_ERROR_INVALID_VALUE;
	memset(&prop, 0, sizeof(prop));
	if ((rc = x->drv->cuMemGetAllocationPropertiesFromHandle(&prop, o->real)))
		return rc;
	prop.win32HandleMetaData = NULL; /* a host pointer is never shown */
	memcpy(rp.prop, &prop, sizeof(rp.prop));
	REPLY(rp);
	return 0;
}

void vc_cu_vmm_fini(struct vc_cu_session *x)
{
	struct vc_cu_vmm *v = x->vmm;

	if (!v)
		return;
	/* Work in flight may use the mappings: let it end, in a context of ours. */
	for (uint32_t i = 0; v->nmap && i < x->nh; i++)
		if (x->h[i].live && x->h[i].kind == VC_H_CUCONTEXT && x->h[i].real &&
		    x->drv->cuCtxSetCurrent(x->h[i].real) == CUDA_SUCCESS) {
			vc_cu_quiesce(x); /* bounded: a stream may wait for ever */
			break;
		}
	for (uint32_t i = 0; i < v->nmap; i++)
		x->drv->cuMemUnmap((CUdeviceptr)v->map[i].va, v->map[i].size);
	for (uint32_t i = 0; i < v->nobj; i++) {
		struct vc_cu_vobj *o = &v->obj[i];

		for (uint32_t r = 0; o->real && r < o->refs; r++)
			x->drv->cuMemRelease(o->real);
		if (o->real)
			vc_cu_quota_gone(x, o->dev, o->charged);
	}
	for (uint32_t i = 0; i < v->nresv; i++)
		x->drv->cuMemAddressFree((CUdeviceptr)v->resv[i].va, v->resv[i].size);
	free(v->obj);
	free(v->map);
	free(v->resv);
	free(v->opened);
	free(v);
	x->vmm = NULL;
}
