/* SPDX-License-Identifier: MIT */
/*
 * export.c - the slots of the driver's export tables that the guest forwards
 * to the host: a device's primary context, and the context table's slots
 * that cuBLAS, cuBLASLt and cuFFT call.
 */
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

int vc_cu_manual_vcExportSlot(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_req_vcExportSlot rq;
	struct vc_cu_rep_vcExportSlot rp = {0};
	int rc;

	TAKE(rq);
	if (rq.table == 0 && rq.slot == 2) {
		/* 6bd5fb6c/2: the device's primary context, without a retain. */
		if ((rc = vc_cu_primary_get(x, rq.dev, &rp.value)))
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
