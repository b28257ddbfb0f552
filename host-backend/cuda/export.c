/* SPDX-License-Identifier: MIT */
/*
 * export.c - the slots of the driver's export tables that the guest forwards
 * to the host: a device's primary context, the context table's slots that
 * cuBLAS, cuBLASLt and cuFFT call, and the cluster prototype table that
 * cuBLASLt's half-precision GEMMs ask for.
 */
#include <malloc.h>
#include <stdint.h>
#include <string.h>

#include "cuda/exec_priv.h"

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
		return vc_cu_publish_owned(x, VC_H_VCOPAQUE, obj, value);
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

/*
 * 1734dc26 (CU_ETID_CLUSTER_PROTOTYPE in NVIDIA's published headers): 16
 * slots after the size word. cuBLASLt calls slot 4 (the TPC-to-vGPC/mTPC
 * maps of the device, two arrays the driver allocates) and slot 13 (frees
 * them) before its Hopper half-precision kernels; the other slots read or
 * set a function's default cluster shape and device cluster facts. Each is
 * asked of the host's own table with the guest's function ids looked up.
 */
static int cluster_slot(struct vc_cu_session *x, const struct vc_cu_req_vcExportSlot *rq,
			struct vc_cu_rep_vcExportSlot *rp, struct vc_cu_out *out)
{
	static const CUuuid id = {{0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1,
				   0xe7, 0xdd, 0x8b, 0xca}};
	const uint64_t *t = NULL;
	const void *table = NULL;
	void *fn = NULL, *slot;
	int a = 0, b = 0, c = 0, rc;
	CUdevice dev = 0;

	if ((rc = x->drv->cuGetExportTable(&table, &id)) || !table)
		return rc ? rc : CUDA_ERROR_NOT_SUPPORTED;
	t = table;
	if (rq->slot < 1 || rq->slot > 16 || t[0] < 8 * (rq->slot + 1) || !t[rq->slot])
		return CUDA_ERROR_NOT_SUPPORTED;
	memcpy(&slot, &t[rq->slot], sizeof(slot));
	switch (rq->slot) {
	case 1: case 2: case 3: case 5: case 6: case 7: case 9: case 10: case 12:
		if ((rc = vc_cu_lookup_func(x, rq->target, &fn, NULL)))
			return rc;
		break;
	case 8: case 11: case 15: case 16:
		if (rq->target > INT32_MAX || (rc = x->drv->cuDeviceGet(&dev, (int)rq->target)))
			return CUDA_ERROR_INVALID_DEVICE;
		break;
	default:
		break;
	}
	switch (rq->slot) {
	case 1: /* SetFunctionClusterDim(f, x, y, z) */
		return ((CUresult(*)(void *, int, int, int))slot)(fn, rq->dev, (int)rq->arg, (int)rq->arg2);
	case 2: /* SetFunctionClusterSchedulingPolicy(f, policy) */
	case 3: /* SetFunctionClusterNonPortableSizeSupport(f, enable) */
		return ((CUresult(*)(void *, int))slot)(fn, rq->dev);
	case 4: { /* GetTpcIDtovGPCmTPCMapping(&vgpc, &mtpc) */
		unsigned char *vgpc = NULL, *mtpc = NULL;
		size_t nv, nm;

		if ((rc = ((CUresult(*)(unsigned char **, unsigned char **))slot)(&vgpc, &mtpc)))
			return rc;
		/* The driver mallocs both (slot 13 exists only for Windows, "which
		 * doesn't allow free() across shared libraries"); their lengths are
		 * what the allocator holds, capped. */
		nv = vgpc ? malloc_usable_size(vgpc) : 0;
		nm = mtpc ? malloc_usable_size(mtpc) : 0;
		nv = nv > VC_CU_TPC_MAP_MAX ? VC_CU_TPC_MAP_MAX : nv;
		nm = nm > VC_CU_TPC_MAP_MAX ? VC_CU_TPC_MAP_MAX : nm;
		if (nv + nm <= out->data_cap) {
			if (nv)
				memcpy(out->data, vgpc, nv);
			if (nm)
				memcpy(out->data + nv, mtpc, nm);
			out->data_len = (uint32_t)(nv + nm);
			rp->value = (uint64_t)nv << 32 | nm;
		} else {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		}
		if (t[0] >= 8 * 14 && t[13])
			((CUresult(*)(unsigned char *, unsigned char *))t[13])(vgpc, mtpc);
		return rc;
	}
	case 5: /* GetFunctionClusterDim(f, &x, &y, &z) */
		if ((rc = ((CUresult(*)(void *, int *, int *, int *))slot)(fn, &a, &b, &c)))
			return rc;
		rp->value = (uint64_t)(uint16_t)a << 32 | (uint64_t)(uint16_t)b << 16 | (uint16_t)c;
		return 0;
	case 6: case 7: case 12: /* a function's int fact */
		if ((rc = ((CUresult(*)(void *, int *))slot)(fn, &a)))
			return rc;
		rp->value = (uint32_t)a;
		return 0;
	case 8: case 16: /* a device's int fact */
		if ((rc = ((CUresult(*)(CUdevice, int *))slot)(dev, &a)))
			return rc;
		rp->value = (uint32_t)a;
		return 0;
	case 9: /* GetFunctionClusterMaxPotentialClusterSize(f, block, smem, &n) */
		if ((rc = ((CUresult(*)(void *, int, size_t, int *))slot)(fn, rq->dev, (size_t)rq->arg, &a)))
			return rc;
		rp->value = (uint32_t)a;
		return 0;
	case 10: /* GetFunctionClusterMaxNumActiveClusters(f, block, smem, cluster, &n) */
		if ((rc = ((CUresult(*)(void *, int, size_t, int, int *))slot)(fn, rq->dev, (size_t)rq->arg,
									       (int)rq->arg2, &a)))
			return rc;
		rp->value = (uint32_t)a;
		return 0;
	case 14: /* GetCnpClusterAttrsSupported(&v) */
		if ((rc = ((CUresult(*)(int *))slot)(&a)))
			return rc;
		rp->value = (uint32_t)a;
		return 0;
	case 15: { /* GetSingletonVGPCBase(dev, &byte) */
		unsigned char v = 0;

		if ((rc = ((CUresult(*)(CUdevice, unsigned char *))slot)(dev, &v)))
			return rc;
		rp->value = v;
		return 0;
	}
	case 11: /* OverrideMaximumPerDeviceClusterSize(dev, size): the old size; the
		  * override holds in this session's worker only */
		rp->value = ((uint32_t(*)(int, uint32_t))slot)(dev, (uint32_t)rq->arg);
		return 0;
	default:
		/* 13 frees what slot 4 returned, which the guest frees itself. */
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

int vc_cu_manual_vcExportSlot(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_req_vcExportSlot rq;
	struct vc_cu_rep_vcExportSlot rp = {0};
	int rc;

	TAKE(rq);
	if (rq.table == VC_CU_EXPTAB_CLUSTER) {
		if ((rc = cluster_slot(x, &rq, &rp, out)) == 0)
			REPLY(rp);
		return rc;
	}
	if (rq.table == VC_CU_EXPTAB_PRIMARY && rq.slot == 2) {
		/* 6bd5fb6c/2: the device's primary context, without a retain. */
		if ((rc = vc_cu_primary_get(x, rq.dev, &rp.value)))
			return rc;
		REPLY(rp);
		return 0;
	}
	if (rq.table == VC_CU_EXPTAB_CTXQ && (rq.slot == 4 || rq.slot == 39 || rq.slot == 51)) {
		rc = ctx_table_slot(x, rq.slot, rq.target, rq.arg, &rp.value);
		if (rc == 0)
			REPLY(rp);
		return rc;
	}
	return CUDA_ERROR_NOT_SUPPORTED;
}
