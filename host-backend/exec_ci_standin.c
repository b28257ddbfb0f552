/* SPDX-License-Identifier: MIT */
/*
 * exec_ci_standin.c - the CI STAND-IN FOR A GPU.
 *
 * Used where there is no GPU (CI, developers' machines): "device" memory is
 * host RAM behind synthetic device addresses, copies and memsets really move
 * bytes, launches are validated for shape and recorded but run nothing.
 * CUDA operations go through the real CUDA executor over the stand-in driver
 * (cu_driver_standin.c), so that everything above the driver is the code
 * that runs on a GPU.
 * vcuda-server uses it only when asked by name; it is never a default.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "acct.h"
#include "cu_standin.h"
#include "standin_mem.h"
#include "vc_copy.h"
#include "vc_wire.h"
#include "vcuda/server.h"

#define VA_BASE 0x7f0000000000ull /* looks like a device address, never a host one */
#define DEFAULT_LIMIT (1ull << 30)

struct standin {
	struct vc_smem mem;  /* the transport test operations' memory */
	void *cu;            /* CUDA operations: the CUDA executor over the stand-in driver */
	uint64_t launches;
	uint64_t last_func;
	uint64_t param_hash;
};

static int standin_open(void *factory, void **ctx)
{
	const struct vc_standin_config *cfg = factory;
	struct standin *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	uint64_t limit = cfg && cfg->mem_limit ? cfg->mem_limit : DEFAULT_LIMIT;
	int rc;

	vc_smem_init(&s->mem, VA_BASE, limit);
	s->param_hash = 0xcbf29ce484222325ull;
	rc = vc_exec_cuda_ops.open((void *)vc_cuda_driver_standin(limit), &s->cu);
	if (rc) {
		vc_smem_fini(&s->mem);
		free(s);
		return rc;
	}
	*ctx = s;
	return 0;
}

static int standin_cuda_call(void *ctx, uint32_t op, const uint8_t *req, uint32_t len, struct vc_cu_out *out)
{
	struct standin *s = ctx;

	return vc_exec_cuda_ops.cuda_call(s->cu, op, req, len, out);
}

static bool standin_busy(void *ctx)
{
	struct standin *s = ctx;

	return vc_exec_cuda_ops.busy(s->cu);
}

static void standin_close(void *ctx)
{
	struct standin *s = ctx;

	vc_exec_cuda_ops.close(s->cu);
	vc_smem_fini(&s->mem);
	free(s);
}

static int standin_mem_alloc(void *ctx, uint64_t size, uint64_t *dptr)
{
	struct standin *s = ctx;
	int rc;

	if (vc_acct_charge(VC_ACCT_MEM, size)) /* the server's quota, as for CUDA allocations */
		return VC_CUDA_ERROR_OUT_OF_MEMORY;
	rc = vc_smem_alloc(&s->mem, size, NULL, dptr);
	if (rc)
		vc_acct_uncharge(VC_ACCT_MEM, size);
	return rc == -EINVAL ? VC_CUDA_ERROR_INVALID_VALUE : rc ? VC_CUDA_ERROR_OUT_OF_MEMORY : 0;
}

static int standin_mem_free(void *ctx, uint64_t dptr)
{
	struct standin *s = ctx;
	struct vc_smem_alloc *a = vc_smem_find(&s->mem, dptr, 1);
	uint64_t size = a && a->base == dptr ? a->size : 0;

	if (vc_smem_free(&s->mem, dptr))
		return VC_CUDA_ERROR_INVALID_VALUE;
	vc_acct_uncharge(VC_ACCT_MEM, size);
	return VC_CUDA_SUCCESS;
}

static uint8_t *dev(struct standin *s, uint64_t ptr, uint64_t len)
{
	return vc_smem_ptr(&s->mem, ptr, len);
}

/* A GPU's copy engine writes device memory without passing through the host
 * CPU's caches; pieces of large transfers are copied the same way here, so
 * that the stand-in does not charge the transport for cache traffic a GPU
 * never makes. The guest cuts a transfer into at least 16 pieces of at most a
 * chunk, so with the default 512 KiB chunk only transfers of 8 MiB or more
 * have pieces this large; at 256 KiB a 4 MiB transfer, which fits the caches,
 * was streamed to memory too and ran at 76-79% of the same pipeline without
 * the protocol (bench/pipe_ceiling.c), against 85-97% now. */
#define DMA_LIKE_MIN (512u << 10)

static int standin_htod(void *ctx, uint64_t dst, const void *src, uint64_t len)
{
	uint8_t *d = dev(ctx, dst, len);

	if (!d)
		return VC_CUDA_ERROR_INVALID_VALUE;
	if (len >= DMA_LIKE_MIN)
		vc_copy_stream(d, src, len);
	else
		memcpy(d, src, len);
	return VC_CUDA_SUCCESS;
}

static int standin_dtoh(void *ctx, void *dst, uint64_t src, uint64_t len)
{
	uint8_t *d = dev(ctx, src, len);

	if (!d)
		return VC_CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, d, len);
	return VC_CUDA_SUCCESS;
}

static int standin_dtod(void *ctx, uint64_t dst, uint64_t src, uint64_t len)
{
	uint8_t *d = dev(ctx, dst, len), *sp = dev(ctx, src, len);

	if (!d || !sp)
		return VC_CUDA_ERROR_INVALID_VALUE;
	memmove(d, sp, len);
	return VC_CUDA_SUCCESS;
}

static int standin_memset(void *ctx, uint64_t dst, uint32_t value, uint32_t elem_size,
			  uint64_t count)
{
	uint8_t *d;

	if (count > UINT64_MAX / elem_size)
		return VC_CUDA_ERROR_INVALID_VALUE;
	d = dev(ctx, dst, count * elem_size);
	if (!d)
		return VC_CUDA_ERROR_INVALID_VALUE;
	if (elem_size == 1) {
		memset(d, (int)(value & 0xff), count);
	} else if (elem_size == 2) {
		uint16_t v = (uint16_t)value;

		for (uint64_t i = 0; i < count; i++)
			memcpy(d + 2 * i, &v, 2);
	} else {
		for (uint64_t i = 0; i < count; i++)
			memcpy(d + 4 * i, &value, 4);
	}
	return VC_CUDA_SUCCESS;
}

static int standin_launch(void *ctx, const struct vc_launch *l, const void *params,
			  uint32_t param_size)
{
	struct standin *s = ctx;
	const uint8_t *p = params;
	uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];

	if (!l->func)
		return VC_CUDA_ERROR_INVALID_HANDLE;
	for (int i = 0; i < 3; i++)
		if (!l->grid[i] || !l->block[i])
			return VC_CUDA_ERROR_INVALID_VALUE;
	if (threads > 1024 || l->grid[1] > 65535 || l->grid[2] > 65535)
		return VC_CUDA_ERROR_INVALID_VALUE;
	s->launches++;
	s->last_func = l->func;
	for (uint32_t i = 0; i < param_size; i++)
		s->param_hash = (s->param_hash ^ p[i]) * 0x100000001b3ull;
	return VC_CUDA_SUCCESS;
}

static int standin_synchronize(void *ctx)
{
	(void)ctx;
	return VC_CUDA_SUCCESS;
}

void vc_standin_stats(void *ctx, uint64_t *launches, uint64_t *bytes_in_use, uint64_t *allocs)
{
	const struct standin *s = ctx;

	*launches = s ? s->launches : 0;
	*bytes_in_use = s ? s->mem.in_use : 0;
	*allocs = s ? s->mem.n : 0;
}

const struct vc_executor_ops vc_exec_ci_standin_ops = {
	.name = "ci-standin (CI stand-in for a GPU: host RAM, launches recorded, not run)",
	.open = standin_open,
	.close = standin_close,
	.mem_alloc = standin_mem_alloc,
	.mem_free = standin_mem_free,
	.memcpy_htod = standin_htod,
	.memcpy_dtoh = standin_dtoh,
	.memcpy_dtod = standin_dtod,
	.memset = standin_memset,
	.launch = standin_launch,
	.synchronize = standin_synchronize,
	.cuda_call = standin_cuda_call,
	.busy = standin_busy,
};
