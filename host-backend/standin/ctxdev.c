/* SPDX-License-Identifier: MIT */
/*
 * ctxdev.c - the CI stand-in's contexts with execution affinity, context
 * events, peer access (one device: no peer), deprecated shared memory
 * configuration, device properties, atomic capabilities, the profiler, and
 * cluster shapes (checked on every launch, and the potential cluster size),
 * answering as a single H200 does.
 */
#include <string.h>

#include "standin/standin_priv.h"

static CUresult (*g_ctx_create)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);
static CUresult (*g_launch)(const CUlaunchConfig *, CUfunction, void **, void **);

#define AFF_MAX 64
static struct {
	const void *ctx;
	unsigned sms;
} g_aff[AFF_MAX]; /* under g_mu */

static unsigned sm_count(void)
{
	return (unsigned)vc_standin_attrs[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT];
}

static CUresult s_ctx_create(CUcontext *pc, CUctxCreateParams *p, unsigned flags, CUdevice d)
{
	unsigned sms = 0;
	CUresult rc;

	if (p) {
		if (p->cigParams || p->numExecAffinityParams < 0 || p->numExecAffinityParams > 1 ||
		    (p->numExecAffinityParams && !p->execAffinityParams))
			return CUDA_ERROR_INVALID_VALUE;
		if (p->numExecAffinityParams) {
			if (p->execAffinityParams[0].type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
				return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
			sms = p->execAffinityParams[0].param.smCount.val;
			if (!sms || sms > sm_count())
				return CUDA_ERROR_INVALID_VALUE;
		}
	}
	if ((rc = g_ctx_create(pc, NULL, flags, d)) || !sms)
		return rc;
	pthread_mutex_lock(&g_mu);
	for (unsigned i = 0; i < AFF_MAX; i++)
		if (!g_aff[i].ctx || !vc_si_is(g_aff[i].ctx, T_CTX)) {
			g_aff[i].ctx = *pc;
			g_aff[i].sms = sms;
			break;
		}
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_exec_affinity(CUexecAffinityParam *a, CUexecAffinityType type)
{
	CUresult rc = vc_si_need_ctx();

	if (rc)
		return rc;
	if (!a || type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
		return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
	a->type = type;
	a->param.smCount.val = sm_count();
	pthread_mutex_lock(&g_mu);
	for (unsigned i = 0; i < AFF_MAX; i++)
		if (g_aff[i].ctx == t_ctx)
			a->param.smCount.val = g_aff[i].sms;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_ctx_event(CUcontext c, CUevent e)
{
	if (!vc_si_is(c, T_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!vc_si_is(e, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

/* One device: a context's peer is on the same device, which is no peer. */
static CUresult s_peer_enable(CUcontext peer, unsigned flags)
{
	CUresult rc = vc_si_need_ctx();

	if (rc)
		return rc;
	if (!vc_si_is(peer, T_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	/* a context of the same device is no peer: measured on an H100 (580) */
	return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
}

static CUresult s_peer_disable(CUcontext peer)
{
	CUresult rc = vc_si_need_ctx();

	if (rc)
		return rc;
	return vc_si_is(peer, T_CTX) ? CUDA_ERROR_PEER_ACCESS_NOT_ENABLED : CUDA_ERROR_INVALID_CONTEXT;
}

/* Shared memory bank configuration: no effect since Maxwell; the default. */
static CUresult s_smem_get(CUsharedconfig *c)
{
	*c = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
	return vc_si_need_ctx();
}

static CUresult s_smem_set(CUsharedconfig c)
{
	if ((unsigned)c > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
		return CUDA_ERROR_INVALID_VALUE;
	return vc_si_need_ctx();
}

static CUresult s_func_smem(CUfunction f, CUsharedconfig c)
{
	if (!vc_si_is(f, T_FUNC) && !vc_si_is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	return (unsigned)c > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult s_props(CUdevprop *p, CUdevice d)
{
	const int *a = vc_standin_attrs;

	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	memset(p, 0, sizeof(*p));
	p->maxThreadsPerBlock = a[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
	for (int i = 0; i < 3; i++) {
		p->maxThreadsDim[i] = a[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i];
		p->maxGridSize[i] = a[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i];
	}
	p->sharedMemPerBlock = a[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK];
	p->totalConstantMemory = a[CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY];
	p->SIMDWidth = a[CU_DEVICE_ATTRIBUTE_WARP_SIZE];
	p->memPitch = a[CU_DEVICE_ATTRIBUTE_MAX_PITCH];
	p->regsPerBlock = a[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK];
	p->clockRate = a[CU_DEVICE_ATTRIBUTE_CLOCK_RATE];
	p->textureAlign = a[CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT];
	return CUDA_SUCCESS;
}

static CUresult s_cc(int *major, int *minor, CUdevice d)
{
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	*major = vc_standin_attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
	*minor = vc_standin_attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
	return CUDA_SUCCESS;
}

/* Atomics from the host over PCIe: none natively on this machine's profile. */
static CUresult s_host_atomics(unsigned *caps, const CUatomicOperation *ops, unsigned n, CUdevice d)
{
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!caps || !ops || !n)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < n; i++) {
		if ((unsigned)ops[i] >= CU_ATOMIC_OPERATION_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		caps[i] = 0;
	}
	return CUDA_SUCCESS;
}

static CUresult s_p2p_atomics(unsigned *caps, const CUatomicOperation *ops, unsigned n, CUdevice s, CUdevice d)
{
	if (!vc_si_dev_ok(s) || !vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	(void)caps, (void)ops, (void)n;
	return CUDA_ERROR_INVALID_DEVICE; /* no device is another's peer, nor its own */
}

/* Peers: none (each device is alone on its bus), as a GPU answers for a
 * device it has no path to. */
static CUresult s_can_access_peer(int *can, CUdevice d, CUdevice peer)
{
	if (!can)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_dev_ok(d) || !vc_si_dev_ok(peer))
		return CUDA_ERROR_INVALID_DEVICE;
	*can = 0;
	return CUDA_SUCCESS;
}

static CUresult s_p2p_attr(int *v, CUdevice_P2PAttribute a, CUdevice s, CUdevice d)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_si_dev_ok(s) || !vc_si_dev_ok(d) || s == d)
		return CUDA_ERROR_INVALID_DEVICE;
	if ((unsigned)a < CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK ||
	    (unsigned)a > CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 0;
	return CUDA_SUCCESS;
}

static CUresult s_profiler(void)
{
	return vc_si_need_ctx();
}

static CUresult s_kernel_lib(CUlibrary *l, CUkernel k)
{
	if (!vc_si_is(k, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	*l = (CUlibrary)((struct obj *)k)->parent;
	return vc_si_is(*l, T_LIB) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_stream_ctx2(CUstream s, CUcontext *c, CUgreenCtx *g)
{
	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (c)
		*c = (CUcontext)(vc_si_is(s, T_STREAM) ? ((struct obj *)s)->ctx : t_ctx);
	if (g)
		*g = NULL; /* no stream of the stand-in's is a green context's */
	return c && !*c ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

static CUresult s_stream_green(CUstream s, CUgreenCtx *g)
{
	return s_stream_ctx2(s, NULL, g);
}

/* ---- limits, kept per context, with a GPU's defaults ------------------------------------ */

#define LIMITS CU_LIMIT_MAX /* the CIG limits (7..9) are asked by cudart 13: 0 outside a CIG context */
static struct {
	const void *ctx;
	size_t v[LIMITS];
	unsigned set; /* bit per limit */
} g_lim[AFF_MAX]; /* under g_mu */

static size_t limit_default(CUlimit l)
{
	switch (l) {
	case CU_LIMIT_STACK_SIZE:
		return 1024;
	case CU_LIMIT_PRINTF_FIFO_SIZE:
		return 1u << 20;
	case CU_LIMIT_MALLOC_HEAP_SIZE:
		return 8u << 20;
	case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
		return 2048;
	case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
		return 64;
	default:
		return 0;
	}
}

static CUresult s_limit_set(CUlimit l, size_t v)
{
	CUresult rc = vc_si_need_ctx();
	unsigned k = AFF_MAX;

	if (rc)
		return rc;
	if ((unsigned)l >= LIMITS || l == CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	pthread_mutex_lock(&g_mu);
	for (unsigned i = 0; i < AFF_MAX; i++)
		if (g_lim[i].ctx == t_ctx || (k == AFF_MAX && (!g_lim[i].ctx || !vc_si_is(g_lim[i].ctx, T_CTX))))
			k = i;
	for (unsigned i = 0; i < AFF_MAX; i++)
		if (g_lim[i].ctx == t_ctx)
			k = i;
	if (k < AFF_MAX) {
		if (g_lim[k].ctx != t_ctx)
			g_lim[k].set = 0;
		g_lim[k].ctx = t_ctx;
		g_lim[k].v[l] = l == CU_LIMIT_STACK_SIZE ? (v + 15) / 16 * 16 : v; /* stacks grow in 16 bytes */
		g_lim[k].set |= 1u << l;
	}
	pthread_mutex_unlock(&g_mu);
	return k < AFF_MAX ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult s_limit_get(size_t *v, CUlimit l)
{
	CUresult rc = vc_si_need_ctx();

	if (rc)
		return rc;
	if ((unsigned)l >= LIMITS || l == CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	*v = limit_default(l);
	pthread_mutex_lock(&g_mu);
	for (unsigned i = 0; i < AFF_MAX; i++)
		if (g_lim[i].ctx == t_ctx && (g_lim[i].set & (1u << l)))
			*v = g_lim[i].v[l];
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

/* ---- clusters: the shapes a GPU of compute capability 9.0 takes --------------------- */

/* The cluster dimensions of @c (1x1x1 without the attribute); 0 or the refusal. */
static CUresult cluster_of(const CUlaunchConfig *c, unsigned dim[3])
{
	dim[0] = dim[1] = dim[2] = 1;
	for (unsigned i = 0; c->attrs && i < c->numAttrs; i++)
		if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
			dim[0] = c->attrs[i].value.clusterDim.x;
			dim[1] = c->attrs[i].value.clusterDim.y;
			dim[2] = c->attrs[i].value.clusterDim.z;
		}
	if (!dim[0] || !dim[1] || !dim[2] || (uint64_t)dim[0] * dim[1] * dim[2] > 16)
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	if (c->gridDimX % dim[0] || c->gridDimY % dim[1] || c->gridDimZ % dim[2])
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	return CUDA_SUCCESS;
}

static CUresult s_launch(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	unsigned dim[3];
	CUresult rc = c ? cluster_of(c, dim) : CUDA_ERROR_INVALID_VALUE;

	return rc ? rc : g_launch(c, f, params, extra);
}

static CUresult s_potential_cluster(int *n, CUfunction f, const CUlaunchConfig *c)
{
	if (!vc_si_is(f, T_FUNC) && !vc_si_is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n || !c)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 8; /* the portable cluster size limit */
	return CUDA_SUCCESS;
}

void vc_si_fill_ctxdev(struct vc_cuda_driver *d)
{
	g_ctx_create = d->cuCtxCreate_v4;
	g_launch = d->cuLaunchKernelEx;
	d->cuCtxCreate_v4 = s_ctx_create;
	d->cuLaunchKernelEx = s_launch;
	d->cuCtxGetExecAffinity = s_exec_affinity;
	d->cuCtxRecordEvent = s_ctx_event;
	d->cuCtxWaitEvent = s_ctx_event;
	d->cuCtxEnablePeerAccess = s_peer_enable;
	d->cuDeviceCanAccessPeer = s_can_access_peer;
	d->cuDeviceGetP2PAttribute = s_p2p_attr;
	d->cuCtxDisablePeerAccess = s_peer_disable;
	d->cuCtxGetSharedMemConfig = s_smem_get;
	d->cuCtxSetSharedMemConfig = s_smem_set;
	d->cuFuncSetSharedMemConfig = s_func_smem;
	d->cuDeviceGetProperties = s_props;
	d->cuDeviceComputeCapability = s_cc;
	d->cuDeviceGetHostAtomicCapabilities = s_host_atomics;
	d->cuDeviceGetP2PAtomicCapabilities = s_p2p_atomics;
	d->cuProfilerStart = s_profiler;
	d->cuProfilerStop = s_profiler;
	d->cuKernelGetLibrary = s_kernel_lib;
	d->cuStreamGetCtx_v2 = s_stream_ctx2;
	d->cuStreamGetGreenCtx = s_stream_green;
	d->cuOccupancyMaxPotentialClusterSize = s_potential_cluster;
	d->cuCtxSetLimit = s_limit_set;
	d->cuCtxGetLimit = s_limit_get;
}
