/* SPDX-License-Identifier: MIT */
/*
 * vt_cuda.c - CUDA operations encoded by hand on a transport client (see
 * vt_cuda.h), request by request as guest-lib/libcuda sends them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vt_cuda.h"
#include "vt_kernels.h"

#define INLINE_IMAGE_MAX (32u << 10) /* as guest-lib/libcuda/module.c */

/* A synchronous CUDA operation whose reply is its struct (up to @replen
 * bytes of it into @rep, which may be NULL) and no data. */
static int call(struct vc_client *c, uint32_t op, const void *req, size_t reqlen, const void *data, size_t dlen,
		void *rep, size_t replen)
{
	uint8_t buf[VC_CU_REP_MAX];
	size_t got = 0;
	int rc = vc_client_call(c, op, req, reqlen, data, dlen, buf, sizeof(buf), &got);

	if (rc == 0 && rep)
		memcpy(rep, buf, replen < got ? replen : got);
	return rc;
}

int vt_take_error(struct vc_client *c)
{
	struct vc_client_info info;

	vc_client_get_info(c, &info);
	return vc_client_take_error(c, info.done_seq);
}

/* A copy in one command: queued when asynchronous, else waited for, and then
 * a pending error reported, as a blocking copy does natively. */
static int send_copy(struct vc_client *c, struct vc_cu_req_memcpy *rq, const void *data, size_t dlen)
{
	int rc;

	if (rq->async)
		return vc_client_submit(c, VC_CU_vcMemcpy, rq, sizeof(*rq), data, dlen, 0, NULL);
	rc = call(c, VC_CU_vcMemcpy, rq, sizeof(*rq), data, dlen, NULL, 0);
	return rc ? rc : vt_take_error(c);
}

int vt_ctx_open(struct vc_client *c, uint64_t *ctx)
{
	struct vc_cu_req_ctx rq = {.dev = 0};
	struct vc_cu_rep_ctx rp = {0};
	int rc = call(c, VC_CU_cuDevicePrimaryCtxRetain, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp));

	if (rc == 0)
		*ctx = rp.pctx;
	return rc;
}

int vt_ctx_close(struct vc_client *c, uint64_t ctx)
{
	struct vc_cu_req_ctx rq = {.ctx = ctx, .dev = 0};

	return call(c, VC_CU_cuDevicePrimaryCtxRelease_v2, &rq, sizeof(rq), NULL, 0, NULL, 0);
}

int vt_mem_alloc(struct vc_client *c, uint64_t ctx, uint64_t size, uint64_t *dptr)
{
	struct vc_cu_req_alloc rq = {.ctx = ctx, .kind = VC_CU_ALLOC_PLAIN, .size = size};
	struct vc_cu_rep_alloc rp = {0};
	int rc = call(c, VC_CU_vcMemAlloc, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp));

	if (rc == 0)
		*dptr = rp.dptr;
	return rc;
}

int vt_mem_free(struct vc_client *c, uint64_t ctx, uint64_t dptr)
{
	struct vc_cu_req_free rq = {.ctx = ctx, .dptr = dptr};

	return call(c, VC_CU_vcMemFree, &rq, sizeof(rq), NULL, 0, NULL, 0);
}

/* One side of a bulk copy through the arena. */
struct xfer {
	uint64_t ctx;
	uint32_t dir;
	uint64_t dev;
	int async;
};

static int emit_copy(struct vc_client *c, void *arg, uint64_t off, uint64_t n, uint64_t aoff, uint64_t *seq)
{
	const struct xfer *x = arg;
	struct vc_cu_req_memcpy rq = {.ctx = x->ctx, .dir = x->dir, .len = n, .arena_off = aoff,
				      .host = VC_CU_HOST_ARENA, .async = (uint32_t)x->async};

	if (x->dir == VC_CU_COPY_HTOD)
		rq.dst = x->dev + off;
	else
		rq.src = x->dev + off;
	return vc_client_submit(c, VC_CU_vcMemcpy, &rq, sizeof(rq), NULL, 0, 0, seq);
}

int vt_htod(struct vc_client *c, uint64_t ctx, uint64_t dst, const void *src, uint64_t len, int async)
{
	struct xfer x = {.ctx = ctx, .dir = VC_CU_COPY_HTOD, .dev = dst, .async = async};

	if (len <= VT_INLINE_HTOD_MAX) {
		struct vc_cu_req_memcpy rq = {.ctx = ctx, .dir = VC_CU_COPY_HTOD, .dst = dst, .len = len,
					      .host = VC_CU_HOST_INLINE, .async = (uint32_t)async};

		return send_copy(c, &rq, src, len);
	}
	return vc_client_put(c, src, len, emit_copy, &x, async ? VC_CLIENT_PUT_ASYNC : VC_CLIENT_PUT_DMA);
}

int vt_dtoh(struct vc_client *c, uint64_t ctx, void *dst, uint64_t src, uint64_t len)
{
	struct xfer x = {.ctx = ctx, .dir = VC_CU_COPY_DTOH, .dev = src};

	if (vc_client_inline_max(c) > VC_CU_REP_MAX && len <= vc_client_inline_max(c) - VC_CU_REP_MAX) {
		struct vc_cu_req_memcpy rq = {.ctx = ctx, .dir = VC_CU_COPY_DTOH, .src = src, .len = len,
					      .host = VC_CU_HOST_INLINE};
		size_t got = 0;
		uint8_t *buf = malloc(VC_CU_REP_MAX + len);
		int rc;

		if (!buf)
			return -ENOMEM;
		/* The reply: its struct in the first VC_CU_REP_MAX bytes, the data after. */
		rc = vc_client_call(c, VC_CU_vcMemcpy, &rq, sizeof(rq), NULL, 0, buf, VC_CU_REP_MAX + len, &got);
		if (rc == 0 && len && got != VC_CU_REP_MAX + len)
			rc = -EPROTO;
		if (rc == 0 && len)
			memcpy(dst, buf + VC_CU_REP_MAX, len);
		free(buf);
		return rc ? rc : vt_take_error(c);
	}
	return vc_client_get(c, dst, len, emit_copy, &x);
}

int vt_dtod(struct vc_client *c, uint64_t ctx, uint64_t dst, uint64_t src, uint64_t len, int async)
{
	struct vc_cu_req_memcpy rq = {.ctx = ctx, .dir = VC_CU_COPY_DTOD, .dst = dst, .src = src, .len = len,
				      .async = (uint32_t)async};

	return send_copy(c, &rq, NULL, 0);
}

int vt_memset(struct vc_client *c, uint64_t ctx, uint64_t dst, uint32_t value, uint32_t elem, uint64_t count,
	      int async)
{
	struct vc_cu_req_memset rq = {.ctx = ctx, .dst = dst, .count = count, .value = value, .elem = elem,
				      .async = (uint32_t)async};
	int rc;

	if (async)
		return vc_client_submit(c, VC_CU_vcMemset, &rq, sizeof(rq), NULL, 0, 0, NULL);
	rc = call(c, VC_CU_vcMemset, &rq, sizeof(rq), NULL, 0, NULL, 0);
	return rc ? rc : vt_take_error(c);
}

int vt_sync(struct vc_client *c, uint64_t ctx)
{
	struct vc_cu_req_sync rq = {.ctx = ctx, .handle = ctx, .kind = VC_CU_SYNC_CTX};
	int rc = call(c, VC_CU_vcSync, &rq, sizeof(rq), NULL, 0, NULL, 0);
	int err;

	if (rc < 0)
		return rc;
	err = vt_take_error(c);
	return err ? err : rc;
}

struct image_put {
	uint64_t ctx;
	uint64_t image;
};

static int emit_piece(struct vc_client *c, void *arg, uint64_t off, uint64_t n, uint64_t aoff, uint64_t *seq)
{
	const struct image_put *a = arg;
	struct vc_cu_req_vcImagePut rq = {.ctx = a->ctx, .image = a->image, .offset = off, .len = n,
					  .arena_off = aoff};

	return vc_client_submit(c, VC_CU_vcImagePut, &rq, sizeof(rq), NULL, 0, 0, seq);
}

int vt_module_load(struct vc_client *c, uint64_t ctx, const void *image, uint64_t size, uint64_t *mod)
{
	struct vc_cu_req_vcImageBegin bq = {.ctx = ctx, .size = size};
	struct vc_cu_rep_vcImageBegin bp = {0};
	struct vc_cu_req_load lq = {.ctx = ctx, .kind = VC_CU_LOAD_MODULE};
	struct vc_cu_rep_load lp = {0};
	int rc;

	if ((rc = call(c, VC_CU_vcImageBegin, &bq, sizeof(bq), NULL, 0, &bp, sizeof(bp))))
		return rc;
	if (size <= INLINE_IMAGE_MAX) {
		struct vc_cu_req_vcImagePut pq = {.ctx = ctx, .image = bp.image, .len = size, .inline_data = 1};

		rc = vc_client_submit(c, VC_CU_vcImagePut, &pq, sizeof(pq), image, size, 0, NULL);
	} else {
		struct image_put a = {.ctx = ctx, .image = bp.image};

		rc = vc_client_put(c, image, size, emit_piece, &a, VC_CLIENT_PUT_ASYNC);
	}
	if (rc)
		return rc;
	/* The load follows the pieces in the ring, so it sees the whole image. */
	lq.image = bp.image;
	rc = call(c, VC_CU_vcLoad, &lq, sizeof(lq), NULL, 0, &lp, sizeof(lp));
	if (rc == 0)
		*mod = lp.handle;
	return rc;
}

int vt_module_function(struct vc_client *c, uint64_t ctx, uint64_t mod, const char *name, uint64_t *func)
{
	struct vc_cu_req_cuModuleGetFunction rq;
	struct vc_cu_rep_cuModuleGetFunction rp = {0};
	int rc;

	memset(&rq, 0, sizeof(rq));
	rq.cur_ctx = ctx;
	rq.hmod = mod;
	rq.name_len = (uint32_t)strlen(name) + 1;
	rc = call(c, VC_CU_cuModuleGetFunction, &rq, sizeof(rq), name, rq.name_len, &rp, sizeof(rp));
	if (rc == 0)
		*func = rp.hfunc;
	return rc;
}

int vt_func_params(struct vc_client *c, uint64_t ctx, uint64_t func, struct vc_cu_param_layout *pl)
{
	struct vc_cu_req_vcFuncParams rq = {.ctx = ctx, .func = func};
	size_t cap = VC_CU_REP_MAX + sizeof(*pl), got = 0;
	uint8_t *buf = malloc(cap);
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = vc_client_call(c, VC_CU_vcFuncParams, &rq, sizeof(rq), NULL, 0, buf, cap, &got);
	if (rc == 0 && got != cap)
		rc = -EPROTO;
	if (rc == 0)
		memcpy(pl, buf + VC_CU_REP_MAX, sizeof(*pl));
	free(buf);
	return rc;
}

int vt_launch(struct vc_client *c, uint64_t ctx, uint64_t func, const uint32_t grid[3], const uint32_t block[3],
	      uint32_t shared_mem, const void *params, uint32_t param_size)
{
	struct vc_cu_req_launch rq = {.ctx = ctx, .func = func, .shared_mem = shared_mem,
				      .param_size = param_size};

	memcpy(rq.grid, grid, sizeof(rq.grid));
	memcpy(rq.block, block, sizeof(rq.block));
	return vc_client_submit(c, VC_CU_vcLaunch, &rq, sizeof(rq), params, param_size, 0, NULL);
}

int vt_store_kernel(struct vc_client *c, uint64_t ctx, uint64_t *func)
{
	uint64_t mod = 0;
	int rc = vt_module_load(c, ctx, vt_store_ptx, sizeof(vt_store_ptx), &mod);

	return rc ? rc : vt_module_function(c, ctx, mod, VT_STORE_KERNEL, func);
}

int vt_store(struct vc_client *c, uint64_t ctx, uint64_t func, uint64_t dst, uint32_t value)
{
	static const uint32_t one[3] = {1, 1, 1};
	uint8_t params[12]; /* (u64 dst, u32 value) at offsets 0 and 8 */

	memcpy(params, &dst, 8);
	memcpy(params + 8, &value, 4);
	return vt_launch(c, ctx, func, one, one, 0, params, sizeof(params));
}

int vt_pin_map(struct vc_client *c, uint64_t ctx, uint64_t addr, uint64_t len, uint32_t entry, uint64_t gen,
	       uint64_t *off)
{
	struct vc_cu_req_pinseg rq = {.ctx = ctx, .op = VC_CU_PINSEG_MAP_GUEST, .guest_addr = addr, .size = len,
				      .entry = entry, .gen = gen};
	struct vc_cu_rep_pinseg rp = {0};
	int rc = call(c, VC_CU_vcPinnedSegment, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp));

	if (rc == 0)
		*off = rp.off;
	return rc;
}

int vt_pin_unmap(struct vc_client *c, uint64_t ctx, uint64_t off)
{
	struct vc_cu_req_pinseg rq = {.ctx = ctx, .op = VC_CU_PINSEG_UNMAP, .off = off};

	return call(c, VC_CU_vcPinnedSegment, &rq, sizeof(rq), NULL, 0, NULL, 0);
}

int vt_host_register(struct vc_client *c, uint64_t ctx, uint64_t off, uint64_t len, uint64_t *devptr)
{
	struct vc_cu_req_host_register rq = {.ctx = ctx, .off = off, .size = len};
	struct vc_cu_rep_host_register rp = {0};
	int rc = call(c, VC_CU_vcHostRegister, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp));

	if (rc == 0)
		*devptr = rp.devptr;
	return rc;
}

int vt_copy_pinned(struct vc_client *c, uint64_t ctx, uint32_t dir, uint64_t dev, uint64_t off, uint64_t len)
{
	struct vc_cu_req_memcpy rq = {.ctx = ctx, .dir = dir, .len = len, .arena_off = off, .host = VC_CU_HOST_PINNED};

	if (dir == VC_CU_COPY_HTOD)
		rq.dst = dev;
	else
		rq.src = dev;
	return send_copy(c, &rq, NULL, 0);
}
