/* SPDX-License-Identifier: MIT */
/*
 * exptab_cluster.c - the driver's cluster prototype table (1734dc26, named
 * CU_ETID_CLUSTER_PROTOTYPE in NVIDIA's published headers): a size word of
 * 136 and 16 slots, as measured on driver 580. cuBLASLt asks for it before
 * its Hopper half-precision GEMMs and calls slot 4 (the device's TPC to
 * vGPC/mTPC maps, two arrays it owns) and slot 13 (frees them); a library
 * that got no table crashed. The other slots read or set a function's
 * default cluster shape and device cluster facts. Every slot is asked of
 * the host's own table; the TPC maps come back as data and are copied into
 * memory of this process, which slot 13 frees.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exptab.h"

typedef void (*vc_slot_fn)(void);

static CUresult ask(uint32_t slot, uint64_t target, int32_t a, uint64_t b, uint32_t c, uint64_t *value,
		    void *data, size_t cap, size_t *len)
{
	const struct vc_exptab_ops *ops = vc_exptab_ops_current();
	size_t n = 0;

	*value = 0;
	if (!ops || !ops->cluster_slot)
		return CUDA_ERROR_NOT_INITIALIZED;
	return ops->cluster_slot(slot, target, a, b, c, value, data, cap, len ? len : &n);
}

static uint64_t fid(CUfunction f)
{
	return (uint64_t)(uintptr_t)f;
}

/* 1: SetFunctionClusterDim(f, x, y, z); 0s reset. */
static CUresult set_dim(CUfunction f, int x, int y, int z)
{
	uint64_t v;

	return ask(1, fid(f), x, (uint64_t)(uint32_t)y, (uint32_t)z, &v, NULL, 0, NULL);
}

/* 2: SetFunctionClusterSchedulingPolicy(f, policy); 3: ...NonPortableSizeSupport(f, on). */
static CUresult set_policy(CUfunction f, int policy)
{
	uint64_t v;

	return ask(2, fid(f), policy, 0, 0, &v, NULL, 0, NULL);
}

static CUresult set_nonportable(CUfunction f, int enable)
{
	uint64_t v;

	return ask(3, fid(f), enable, 0, 0, &v, NULL, 0, NULL);
}

/* 4: GetTpcIDtovGPCmTPCMapping(&vgpc, &mtpc): two arrays this process owns. */
static CUresult get_tpc_maps(unsigned char **vgpc, unsigned char **mtpc)
{
	unsigned char *buf, *a = NULL, *b = NULL;
	size_t len = 0, na, nb;
	uint64_t v;
	CUresult rc;

	if (!vgpc || !mtpc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(buf = malloc(2 * VC_EXPTAB_TPC_MAP_MAX)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = ask(4, 0, 0, 0, 0, &v, buf, 2 * VC_EXPTAB_TPC_MAP_MAX, &len);
	na = (size_t)(v >> 32);
	nb = (size_t)(uint32_t)v;
	if (rc == CUDA_SUCCESS && (na > VC_EXPTAB_TPC_MAP_MAX || nb > VC_EXPTAB_TPC_MAP_MAX || na + nb != len))
		rc = CUDA_ERROR_UNKNOWN; /* a reply this library cannot have asked for */
	if (rc == CUDA_SUCCESS && ((na && !(a = malloc(na))) || (nb && !(b = malloc(nb)))))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS) {
		if (na)
			memcpy(a, buf, na);
		if (nb)
			memcpy(b, buf + na, nb);
		*vgpc = a;
		*mtpc = b;
		a = b = NULL;
	}
	free(a);
	free(b);
	free(buf);
	return rc;
}

/* 13: FreeTpcIDtovGPCmTPCMappingPointers(vgpc, mtpc): ours to free. */
static CUresult free_tpc_maps(unsigned char *vgpc, unsigned char *mtpc)
{
	free(vgpc);
	free(mtpc);
	return CUDA_SUCCESS;
}

/* 5: GetFunctionClusterDim(f, &x, &y, &z). */
static CUresult get_dim(CUfunction f, int *x, int *y, int *z)
{
	uint64_t v;
	CUresult rc;

	if (!x || !y || !z)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = ask(5, fid(f), 0, 0, 0, &v, NULL, 0, NULL)))
		return rc;
	*x = (int)(uint16_t)(v >> 32);
	*y = (int)(uint16_t)(v >> 16);
	*z = (int)(uint16_t)v;
	return CUDA_SUCCESS;
}

static CUresult int_answer(uint32_t slot, uint64_t target, int32_t a, uint64_t b, uint32_t c, int *out)
{
	uint64_t v;
	CUresult rc;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = ask(slot, target, a, b, c, &v, NULL, 0, NULL)))
		return rc;
	*out = (int)(uint32_t)v;
	return CUDA_SUCCESS;
}

/* 6, 7, 12: a function's policy, non-portable support, must-be-set flag. */
static CUresult get_policy(CUfunction f, int *v)
{
	return int_answer(6, fid(f), 0, 0, 0, v);
}

static CUresult get_nonportable(CUfunction f, int *v)
{
	return int_answer(7, fid(f), 0, 0, 0, v);
}

static CUresult get_must_be_set(CUfunction f, int *v)
{
	return int_answer(12, fid(f), 0, 0, 0, v);
}

/* 8, 16: a device's cluster launch and preferred-cluster support. */
static CUresult dev_cluster_launch(CUdevice dev, int *v)
{
	return int_answer(8, (uint64_t)(uint32_t)dev, 0, 0, 0, v);
}

static CUresult dev_preferred_cluster(CUdevice dev, int *v)
{
	return int_answer(16, (uint64_t)(uint32_t)dev, 0, 0, 0, v);
}

/* 9: max potential cluster size; 10: max active clusters. */
static CUresult max_cluster_size(CUfunction f, int block, size_t smem, int *n)
{
	return int_answer(9, fid(f), block, smem, 0, n);
}

static CUresult max_active_clusters(CUfunction f, int block, size_t smem, int cluster, int *n)
{
	return int_answer(10, fid(f), block, smem, (uint32_t)cluster, n);
}

/* 11: OverrideMaximumPerDeviceClusterSize(dev, size): the old size (0 when
 * the host cannot be asked). */
static uint32_t override_max_cluster(int dev, uint32_t size)
{
	uint64_t v;

	if (ask(11, (uint64_t)(uint32_t)dev, 0, size, 0, &v, NULL, 0, NULL))
		return 0;
	return (uint32_t)v;
}

/* 14: GetCnpClusterAttrsSupported(&v). */
static CUresult cnp_cluster_attrs(int *v)
{
	return int_answer(14, 0, 0, 0, 0, v);
}

/* 15: GetSingletonVGPCBase(dev, &base). */
static CUresult singleton_vgpc_base(CUdevice dev, unsigned char *base)
{
	uint64_t v;
	CUresult rc;

	if (!base)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = ask(15, (uint64_t)(uint32_t)dev, 0, 0, 0, &v, NULL, 0, NULL)))
		return rc;
	*base = (unsigned char)v;
	return CUDA_SUCCESS;
}

#define SLOT(fn) ((vc_slot_fn)(fn))

static const vc_slot_fn t_1734dc26[] = {
	(vc_slot_fn)(uintptr_t)136,
	SLOT(set_dim), SLOT(set_policy), SLOT(set_nonportable), SLOT(get_tpc_maps),
	SLOT(get_dim), SLOT(get_policy), SLOT(get_nonportable), SLOT(dev_cluster_launch),
	SLOT(max_cluster_size), SLOT(max_active_clusters), SLOT(override_max_cluster),
	SLOT(get_must_be_set), SLOT(free_tpc_maps), SLOT(cnp_cluster_attrs),
	SLOT(singleton_vgpc_base), SLOT(dev_preferred_cluster),
};
_Static_assert(sizeof(t_1734dc26) == 136, "1734dc26 is 136 bytes, as measured");

const void *vc_exptab_cluster_table(void)
{
	return t_1734dc26;
}
