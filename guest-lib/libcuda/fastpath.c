/* SPDX-License-Identifier: MIT */
/*
 * fastpath.c - answers the guest can give without the host (fastpath.h).
 *
 * Idle targets. The transport counts every command published that may give
 * the device work (everything but the queries in g_queries). A successful
 * synchronisation asked when that count was W proves its target idle at W;
 * while the count is still W, nothing was submitted since (by any thread),
 * so the same synchronisation, or a query of the same target, has the same
 * answer: CUDA_SUCCESS. A context synchronisation also covers the context's
 * default streams (legacy and per-thread). A query's success proves its
 * target idle for later queries only: a synchronisation also prints the
 * device's printf output, which a query does not.
 *
 * Errors: no asynchronous error can be pending for idle work (the
 * synchronisation that proved it idle took them), and any query answered
 * with an error (another stream's kernel may fault later and make the
 * context's error sticky) drops everything known, so that no later call
 * answers CUDA_SUCCESS where the host would see the error. Events opened
 * from another process's handle may be recorded by that process: once the
 * process opened one, events are never answered here. Managed memory the
 * CPU holds is written back before a synchronisation: then it goes to the
 * host too.
 *
 * Capture status. Captures begun (cuStreamBeginCapture_v2,
 * cuStreamBeginCaptureToGraph) and ended (cuStreamEndCapture answering
 * success or invalidated) are counted; while none is active no stream is
 * capturing, a capture can only spread from one. A default stream is valid
 * when a context is current and none was ever destroyed in the process (a
 * thread may still hold a destroyed one as current).
 *
 * Cached answers (kernel and function attributes, a kernel's function in the
 * current context, a context's device) hold while the handles they name
 * live and nothing that changes them was called: unloads, context ends and
 * attribute or configuration setters bump g_ans_epoch, except an attribute
 * set that repeats the value last set (attr_set()).
 *
 * Primary context state changes only through the calls counted in
 * g_prim_epoch; the host's answer is kept per device until one of them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath.h"
#include "stats.h"
#include "vc_client.h"
#include "vc_cu_guest.h"

#define NOPS (VC_CU_OP_END_ - VC_CU_OP_BASE)
#define REC_MAX 16
#define DEV_MAX 16

static uint8_t g_queries[NOPS];
static int g_off; /* VCUDA_FASTPATH=0: every call goes to the host (for comparisons) */

/* Process memory, relaxed atomics: each is a one-way flag or a counter
 * compared for equality; none orders other data. */
static int g_captures;	  /* captures begun and not ended */
static int g_ctx_gone;	  /* a context was destroyed, released or reset */
static int g_ipc_events;  /* an event of another process was opened */
static uint64_t g_prim_epoch;

struct rec {
	uint32_t kind;
	int synced;
	uint64_t handle, ctx;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_rec_work = UINT64_MAX; /* the work count g_rec holds for */
static struct rec g_rec[REC_MAX];
static unsigned g_nrec;

/* Answers that cannot change while the handles they name live: a kernel's or
 * function's fixed attributes, a kernel's function in a context, a context's
 * device. Direct-mapped; valid while g_ans_epoch == epoch + 1. */
#define ANS_MAX 1024
static uint64_t g_ans_epoch; /* bumped by unloads and context ends */
/* The values last set (cuKernelSetAttribute, cuFuncSetAttribute) are kept
 * among the answers under epochs of their own: bumped by unloads and
 * context ends too, and each by a set of the other kind that changed a
 * value (a kernel's attribute set through a function of it, or the other
 * way), not by every set, so that two kernels each setting its own value
 * before every launch do not drop each other's. */
static uint64_t g_kset_epoch, g_fset_epoch;

/* The epoch @op's answers are valid under. */
static uint64_t *epoch_of(uint32_t op)
{
	return op == VC_CU_cuKernelSetAttribute ? &g_kset_epoch
	       : op == VC_CU_cuFuncSetAttribute ? &g_fset_epoch : &g_ans_epoch;
}

static struct ans {
	uint32_t op;
	uint64_t k1, k2, k3, val, epoch;
} g_ans[ANS_MAX];

static struct {
	uint64_t epoch; /* valid while g_prim_epoch == epoch + 1 */
	unsigned int flags;
	int active;
} g_prim[DEV_MAX];

void vc_cu_fast_init(struct vc_client *c)
{
	static const uint32_t q[] = {
		VC_CU_vcSync, VC_CU_vcConsole, VC_CU_vcFuncParams, VC_CU_cuStreamQuery, VC_CU_cuEventQuery,
		VC_CU_cuStreamIsCapturing, VC_CU_cuStreamGetCaptureInfo_v3, VC_CU_cuFuncGetAttribute,
		VC_CU_cuDevicePrimaryCtxGetState, VC_CU_cuCtxGetDevice, VC_CU_cuCtxGetDevice_v2,
		VC_CU_cuStreamGetFlags, VC_CU_cuStreamGetPriority, VC_CU_cuStreamGetId, VC_CU_cuStreamGetCtx,
		VC_CU_cuCtxGetId, VC_CU_cuEventElapsedTime_v2, VC_CU_cuMemGetInfo_v2,
		VC_CU_cuOccupancyMaxActiveBlocksPerMultiprocessor,
		VC_CU_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
		/* attributes read or set: no device work either */
		VC_CU_cuKernelGetAttribute, VC_CU_cuKernelGetFunction, VC_CU_cuKernelSetAttribute,
		VC_CU_cuFuncSetAttribute,
	};

	const char *off = getenv("VCUDA_FASTPATH");

	g_off = off && strcmp(off, "0") == 0;
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		g_queries[q[i] - VC_CU_OP_BASE] = 1;
	vc_client_set_queries(c, g_queries, VC_CU_OP_BASE, NOPS);
}

static void forget(void)
{
	pthread_mutex_lock(&g_mu);
	g_nrec = 0;
	g_rec_work = UINT64_MAX;
	pthread_mutex_unlock(&g_mu);
}

static int ans_get(uint32_t op, uint64_t k1, uint64_t k2, uint64_t k3, uint64_t *val);
static void ans_put(uint32_t op, uint64_t k1, uint64_t k2, uint64_t k3, uint64_t val, uint64_t epoch);

/* Everything kept about kernels and functions is dropped, values set too
 * (an unload, a context's end). */
static void answers_drop(void)
{
	__atomic_add_fetch(&g_ans_epoch, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g_kset_epoch, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g_fset_epoch, 1, __ATOMIC_RELAXED);
}

/*
 * An attribute set (cuKernelSetAttribute, cuFuncSetAttribute) answered @rc.
 * Libraries set the same attribute to the same value before every launch
 * (cuDNN's and PyTorch's kernels their dynamic shared memory); such a set
 * changes nothing, and is answered in the guest (cuKernelSetAttribute()
 * below) while the value last set for that (handle, attribute, device) is
 * kept. A set that changed a value drops every cached answer about
 * attributes (g_ans_epoch), the dynamic shared memory limits kept with the
 * launch-parameter layouts (asked again by the next launch that needs one:
 * the offsets and sizes stay) and occupancy answers, and the values kept for
 * the other kind of handle; then its own value is kept. A failed set
 * changed nothing natively; the answers are dropped all the same, as
 * before. Two threads setting different values of one attribute at once
 * race natively too; here the loser's value may be the one kept, so a later
 * repeat of it may be answered without reaching the driver.
 */
static void attr_set(uint32_t op, const void *req, size_t reqlen, int rc)
{
	uint64_t k1 = 0, k2 = 0, v;
	uint32_t val = 0;
	int known = 0;

	if (op == VC_CU_cuKernelSetAttribute && reqlen >= sizeof(struct vc_cu_req_cuKernelSetAttribute)) {
		struct vc_cu_req_cuKernelSetAttribute rq;

		memcpy(&rq, req, sizeof(rq));
		k1 = rq.kernel;
		k2 = ((uint64_t)(uint32_t)rq.dev << 32) | (uint32_t)rq.attrib;
		val = (uint32_t)rq.val;
		known = 1;
	} else if (op == VC_CU_cuFuncSetAttribute && reqlen >= sizeof(struct vc_cu_req_cuFuncSetAttribute)) {
		struct vc_cu_req_cuFuncSetAttribute rq;

		memcpy(&rq, req, sizeof(rq));
		k1 = rq.hfunc;
		k2 = (uint32_t)rq.attrib;
		val = (uint32_t)rq.value;
		known = 1;
	}
	if (rc == CUDA_SUCCESS && known && ans_get(op, k1, k2, 0, &v) && v == val)
		return; /* a repeat (another thread's, raced past the check): nothing changed */
	__atomic_add_fetch(&g_ans_epoch, 1, __ATOMIC_RELAXED);
	if (rc != CUDA_SUCCESS)
		return;
	vc_cu_params_limits_forget();
	__atomic_add_fetch(op == VC_CU_cuKernelSetAttribute ? &g_fset_epoch : &g_kset_epoch, 1, __ATOMIC_RELAXED);
	if (known)
		ans_put(op, k1, k2, 0, val, __atomic_load_n(epoch_of(op), __ATOMIC_RELAXED));
}

void vc_cu_fast_after(uint32_t op, const void *req, size_t reqlen, int rc)
{
	switch (op) {
	case VC_CU_cuStreamBeginCapture_v2:
	case VC_CU_cuStreamBeginCaptureToGraph:
		if (rc == CUDA_SUCCESS)
			__atomic_add_fetch(&g_captures, 1, __ATOMIC_RELAXED);
		break;
	case VC_CU_cuStreamEndCapture:
		if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
			__atomic_sub_fetch(&g_captures, 1, __ATOMIC_RELAXED);
		break;
	case VC_CU_cuCtxDestroy_v2:
	case VC_CU_cuDevicePrimaryCtxRelease_v2:
	case VC_CU_cuDevicePrimaryCtxReset_v2:
		__atomic_store_n(&g_ctx_gone, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&g_prim_epoch, 1, __ATOMIC_RELAXED);
		answers_drop();
		break;
	case VC_CU_cuKernelSetAttribute:
	case VC_CU_cuFuncSetAttribute:
		attr_set(op, req, reqlen, rc);
		break;
	case VC_CU_cuModuleUnload:
	case VC_CU_cuLibraryUnload:
		answers_drop();
		break;
	case VC_CU_cuFuncSetCacheConfig:
	case VC_CU_cuKernelSetCacheConfig:
	case VC_CU_cuFuncSetSharedMemConfig:
	case VC_CU_cuCtxSetCacheConfig:
	case VC_CU_cuCtxSetSharedMemConfig:
		__atomic_add_fetch(&g_ans_epoch, 1, __ATOMIC_RELAXED);
		break;
	case VC_CU_cuDevicePrimaryCtxRetain:
	case VC_CU_cuDevicePrimaryCtxSetFlags_v2:
	case VC_CU_cuCtxSetFlags:
	case VC_CU_cuCtxCreate_v4:
	case VC_CU_cuCtxCreate_v3:
		__atomic_add_fetch(&g_prim_epoch, 1, __ATOMIC_RELAXED);
		break;
	case VC_CU_vcExportSlot: {
		struct vc_cu_req_vcExportSlot rq;

		/* The runtime's private table retains primary contexts too. */
		if (reqlen >= sizeof(rq)) {
			memcpy(&rq, req, sizeof(rq));
			if (rq.table == VC_CU_EXPTAB_PRIMARY)
				__atomic_add_fetch(&g_prim_epoch, 1, __ATOMIC_RELAXED);
		}
		break;
	}
	case VC_CU_cuIpcOpenEventHandle:
		if (rc == CUDA_SUCCESS)
			__atomic_store_n(&g_ipc_events, 1, __ATOMIC_RELAXED);
		break;
	default:
		break;
	}
	if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY)
		forget();
}

uint64_t vc_cu_fast_work(void)
{
	struct vc_cu_state *st = vc_cu_state();

	return st ? vc_client_work(st->client) : UINT64_MAX - 1;
}

/* The context a target's record names: a default stream's is the current one. */
static uint64_t rec_ctx(enum vc_cu_fast_kind kind, uint64_t handle, uint64_t raw)
{
	if (kind == VC_FAST_CTX)
		return handle;
	if (kind == VC_FAST_STREAM && raw <= (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)
		return vc_cu_current();
	return 0;
}

static int usable(enum vc_cu_fast_kind kind)
{
	struct vc_cu_state *st = vc_cu_state();

	if (g_off || !st || vc_cu_managed_any() || vc_client_broken(st->client))
		return 0;
	return kind != VC_FAST_EVENT || !__atomic_load_n(&g_ipc_events, __ATOMIC_RELAXED);
}

int vc_cu_fast_idle(enum vc_cu_fast_kind kind, uint64_t handle, uint64_t raw, int synced)
{
	uint64_t ctx = rec_ctx(kind, handle, raw), work;
	int hit = 0;

	if (!usable(kind) || (kind != VC_FAST_EVENT && !ctx && !handle))
		return 0;
	work = vc_cu_fast_work();
	pthread_mutex_lock(&g_mu);
	if (work == g_rec_work) {
		for (unsigned i = 0; i < g_nrec && !hit; i++) {
			const struct rec *r = &g_rec[i];

			if (synced && !r->synced)
				continue;
			hit = (r->kind == kind && r->handle == handle && r->ctx == ctx) ||
			      (kind == VC_FAST_STREAM && ctx && r->kind == VC_FAST_CTX && r->handle == ctx);
		}
	}
	pthread_mutex_unlock(&g_mu);
	return hit;
}

void vc_cu_fast_done(enum vc_cu_fast_kind kind, uint64_t handle, uint64_t raw, int synced, uint64_t work)
{
	uint64_t ctx = rec_ctx(kind, handle, raw);

	if (!usable(kind) || (kind != VC_FAST_EVENT && !ctx && !handle))
		return;
	pthread_mutex_lock(&g_mu);
	/* Work published since the call was asked may not be covered by it. */
	if (work == vc_cu_fast_work()) {
		if (g_rec_work != work) {
			g_rec_work = work;
			g_nrec = 0;
		}
		for (unsigned i = 0; i < g_nrec; i++) {
			struct rec *r = &g_rec[i];

			if (r->kind == kind && r->handle == handle && r->ctx == ctx) {
				r->synced |= synced;
				goto out;
			}
		}
		if (g_nrec < REC_MAX)
			g_rec[g_nrec++] = (struct rec){.kind = kind, .synced = synced, .handle = handle, .ctx = ctx};
	}
out:
	pthread_mutex_unlock(&g_mu);
}

int vc_cu_fast_not_capturing(CUstream raw)
{
	return !g_off && (uintptr_t)raw <= (uintptr_t)CU_STREAM_PER_THREAD && vc_cu_state() && vc_cu_current() &&
	       !__atomic_load_n(&g_ctx_gone, __ATOMIC_RELAXED) && !__atomic_load_n(&g_captures, __ATOMIC_RELAXED);
}

int vc_cu_fast_captures_maybe(void)
{
	return g_off || __atomic_load_n(&g_captures, __ATOMIC_RELAXED) != 0;
}

int vc_cu_fast_primary(CUdevice dev, unsigned int *flags, int *active)
{
	int hit = 0;

	if (g_off || dev < 0 || dev >= DEV_MAX || !vc_cu_state())
		return 0;
	pthread_mutex_lock(&g_mu);
	if (g_prim[dev].epoch == __atomic_load_n(&g_prim_epoch, __ATOMIC_RELAXED) + 1) {
		*flags = g_prim[dev].flags;
		*active = g_prim[dev].active;
		hit = 1;
		VC_STATS_LOCAL(VC_STAT_PRIMARY_CTX_STATE);
	}
	pthread_mutex_unlock(&g_mu);
	return hit;
}

uint64_t vc_cu_fast_primary_epoch(void)
{
	return __atomic_load_n(&g_prim_epoch, __ATOMIC_RELAXED);
}

void vc_cu_fast_primary_put(CUdevice dev, uint64_t epoch, unsigned int flags, int active)
{
	if (dev < 0 || dev >= DEV_MAX)
		return;
	pthread_mutex_lock(&g_mu);
	if (epoch == __atomic_load_n(&g_prim_epoch, __ATOMIC_RELAXED)) {
		g_prim[dev].epoch = epoch + 1;
		g_prim[dev].flags = flags;
		g_prim[dev].active = active;
	}
	pthread_mutex_unlock(&g_mu);
}

/* ---- the calls answered here ------------------------------------------------------- */

CUresult vc_gen_cuStreamQuery(CUstream hStream);
CUresult vc_gen_cuEventQuery(CUevent hEvent);
CUresult vc_gen_cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus);

CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
	uint64_t id, w;
	CUresult rc;

	if (!vc_cu_state())
		return vc_gen_cuStreamQuery(hStream);
	id = vc_cu_stream_id(hStream);
	if (vc_cu_fast_idle(VC_FAST_STREAM, id, (uint64_t)(uintptr_t)hStream, 0)) {
		VC_STATS_LOCAL(VC_STAT_STREAM_QUERY);
		return CUDA_SUCCESS;
	}
	w = vc_cu_fast_work();
	rc = vc_gen_cuStreamQuery(hStream);
	if (rc == CUDA_SUCCESS)
		vc_cu_fast_done(VC_FAST_STREAM, id, (uint64_t)(uintptr_t)hStream, 0, w);
	return rc;
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
	uint64_t w;
	CUresult rc;

	if (!hEvent || !vc_cu_state())
		return vc_gen_cuEventQuery(hEvent);
	if (vc_cu_fast_idle(VC_FAST_EVENT, (uint64_t)(uintptr_t)hEvent, 0, 0)) {
		VC_STATS_LOCAL(VC_STAT_EVENT_QUERY);
		return CUDA_SUCCESS;
	}
	w = vc_cu_fast_work();
	rc = vc_gen_cuEventQuery(hEvent);
	if (rc == CUDA_SUCCESS)
		vc_cu_fast_done(VC_FAST_EVENT, (uint64_t)(uintptr_t)hEvent, 0, 0, w);
	return rc;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	if (captureStatus && vc_cu_fast_not_capturing(hStream)) {
		VC_STATS_LOCAL(VC_STAT_STREAM_IS_CAPTURING);
		*captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
		return CUDA_SUCCESS;
	}
	return vc_gen_cuStreamIsCapturing(hStream, captureStatus);
}

/* ---- cached answers ------------------------------------------------------------ */

static struct ans *ans_slot(uint32_t op, uint64_t k1, uint64_t k2, uint64_t k3)
{
	uint64_t h = (op * 0x9e3779b97f4a7c15ull) ^ (k1 * 0xc2b2ae3d27d4eb4full) ^ (k2 * 0x165667b19e3779f9ull) ^
		     (k3 * 0x27d4eb2f165667c5ull);

	return &g_ans[(h ^ (h >> 29)) % ANS_MAX];
}

/* The cached answer of @op for (@k1, @k2, @k3) into *@val: 1, or 0. */
static int ans_get(uint32_t op, uint64_t k1, uint64_t k2, uint64_t k3, uint64_t *val)
{
	struct ans *a = ans_slot(op, k1, k2, k3);
	int hit;

	if (g_off || !vc_cu_state())
		return 0;
	pthread_mutex_lock(&g_mu);
	hit = a->epoch == __atomic_load_n(epoch_of(op), __ATOMIC_RELAXED) + 1 && a->op == op && a->k1 == k1 &&
	      a->k2 == k2 && a->k3 == k3;
	if (hit)
		*val = a->val;
	pthread_mutex_unlock(&g_mu);
	return hit;
}

/* The host answered @val, asked at @epoch. */
static void ans_put(uint32_t op, uint64_t k1, uint64_t k2, uint64_t k3, uint64_t val, uint64_t epoch)
{
	struct ans *a = ans_slot(op, k1, k2, k3);

	pthread_mutex_lock(&g_mu);
	if (epoch == __atomic_load_n(epoch_of(op), __ATOMIC_RELAXED))
		*a = (struct ans){.op = op, .k1 = k1, .k2 = k2, .k3 = k3, .val = val, .epoch = epoch + 1};
	pthread_mutex_unlock(&g_mu);
}

CUresult vc_gen_cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev);
CUresult vc_gen_cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);

/*
 * A set that repeats the value last set for the same handle, attribute and
 * device, with nothing changed since (the cached answers' epoch: any other
 * set, an unload, a context's end drops it), is answered here: natively it
 * succeeds and changes nothing. PyTorch's attention kernels set their
 * dynamic shared memory before every launch: in a GPT-2 decode on the H100
 * that was 426 round trips of about 200 us each.
 */
CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
	uint64_t v;

	if (ans_get(VC_CU_cuKernelSetAttribute, (uint64_t)(uintptr_t)kernel,
		    ((uint64_t)(uint32_t)dev << 32) | (uint32_t)attrib, 0, &v) &&
	    v == (uint32_t)val) {
		VC_STATS_LOCAL(VC_STAT_KERNEL_SET_ATTRIBUTE);
		return CUDA_SUCCESS;
	}
	return vc_gen_cuKernelSetAttribute(attrib, val, kernel, dev);
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
	uint64_t v;

	if (ans_get(VC_CU_cuFuncSetAttribute, (uint64_t)(uintptr_t)hfunc, (uint32_t)attrib, 0, &v) &&
	    v == (uint32_t)value) {
		VC_STATS_LOCAL(VC_STAT_FUNC_SET_ATTRIBUTE);
		return CUDA_SUCCESS;
	}
	return vc_gen_cuFuncSetAttribute(hfunc, attrib, value);
}

/* Attributes the guest keeps: those fixed when the code was loaded, and the
 * settable ones, which change only through the calls that bump g_ans_epoch
 * (setting an attribute or a cache or shared memory configuration). Values
 * past the enum go to the host, which answers them as the driver does. */
static int fixed_attribute(CUfunction_attribute a)
{
	return a >= CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK && a < CU_FUNC_ATTRIBUTE_MAX;
}

CUresult vc_gen_cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev);
CUresult vc_gen_cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc);
CUresult vc_gen_cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel);
CUresult vc_gen_cuCtxGetDevice(CUdevice *device);
CUresult vc_gen_cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);

CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
	uint64_t k1 = (uint64_t)(uintptr_t)kernel, k2 = ((uint64_t)(uint32_t)dev << 32) | (uint32_t)attrib, v;
	uint64_t epoch = __atomic_load_n(&g_ans_epoch, __ATOMIC_RELAXED);
	CUresult rc;

	if (!pi || !fixed_attribute(attrib))
		return vc_gen_cuKernelGetAttribute(pi, attrib, kernel, dev);
	if (ans_get(VC_CU_cuKernelGetAttribute, k1, k2, vc_cu_current(), &v)) {
		VC_STATS_LOCAL(VC_STAT_FUNC_ATTRIBUTE);
		*pi = (int)v;
		return CUDA_SUCCESS;
	}
	rc = vc_gen_cuKernelGetAttribute(pi, attrib, kernel, dev);
	if (rc == CUDA_SUCCESS)
		ans_put(VC_CU_cuKernelGetAttribute, k1, k2, vc_cu_current(), (uint64_t)(uint32_t)*pi, epoch);
	return rc;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
	uint64_t k1 = (uint64_t)(uintptr_t)hfunc, v;
	uint64_t epoch = __atomic_load_n(&g_ans_epoch, __ATOMIC_RELAXED);
	CUresult rc;

	if (!pi || !fixed_attribute(attrib))
		return vc_gen_cuFuncGetAttribute(pi, attrib, hfunc);
	if (ans_get(VC_CU_cuFuncGetAttribute, k1, (uint64_t)attrib, vc_cu_current(), &v)) {
		VC_STATS_LOCAL(VC_STAT_FUNC_ATTRIBUTE);
		*pi = (int)v;
		return CUDA_SUCCESS;
	}
	rc = vc_gen_cuFuncGetAttribute(pi, attrib, hfunc);
	if (rc == CUDA_SUCCESS)
		ans_put(VC_CU_cuFuncGetAttribute, k1, (uint64_t)attrib, vc_cu_current(), (uint64_t)(uint32_t)*pi, epoch);
	return rc;
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	uint64_t k1 = (uint64_t)(uintptr_t)kernel, v;
	uint64_t epoch = __atomic_load_n(&g_ans_epoch, __ATOMIC_RELAXED);
	CUresult rc;

	if (!pFunc)
		return vc_gen_cuKernelGetFunction(pFunc, kernel);
	if (ans_get(VC_CU_cuKernelGetFunction, k1, 0, vc_cu_current(), &v)) {
		VC_STATS_LOCAL(VC_STAT_FUNC_ATTRIBUTE);
		*pFunc = (CUfunction)(uintptr_t)v;
		return CUDA_SUCCESS;
	}
	rc = vc_gen_cuKernelGetFunction(pFunc, kernel);
	if (rc == CUDA_SUCCESS)
		ans_put(VC_CU_cuKernelGetFunction, k1, 0, vc_cu_current(), (uint64_t)(uintptr_t)*pFunc, epoch);
	return rc;
}

CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	uint64_t k1 = (uint64_t)(uintptr_t)ctx, v;
	uint64_t epoch = __atomic_load_n(&g_ans_epoch, __ATOMIC_RELAXED);
	CUresult rc;

	if (!device)
		return vc_gen_cuCtxGetDevice_v2(device, ctx);
	if (ans_get(VC_CU_cuCtxGetDevice_v2, k1, 0, vc_cu_current(), &v)) {
		VC_STATS_LOCAL(VC_STAT_CTX_DEVICE);
		*device = (CUdevice)v;
		return CUDA_SUCCESS;
	}
	rc = vc_gen_cuCtxGetDevice_v2(device, ctx);
	if (rc == CUDA_SUCCESS)
		ans_put(VC_CU_cuCtxGetDevice_v2, k1, 0, vc_cu_current(), (uint64_t)(uint32_t)*device, epoch);
	return rc;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	uint64_t epoch = __atomic_load_n(&g_ans_epoch, __ATOMIC_RELAXED), v;
	CUresult rc;

	if (!device)
		return vc_gen_cuCtxGetDevice(device);
	if (ans_get(VC_CU_cuCtxGetDevice, 0, 0, vc_cu_current(), &v)) {
		VC_STATS_LOCAL(VC_STAT_CTX_DEVICE);
		*device = (CUdevice)v;
		return CUDA_SUCCESS;
	}
	rc = vc_gen_cuCtxGetDevice(device);
	if (rc == CUDA_SUCCESS)
		ans_put(VC_CU_cuCtxGetDevice, 0, 0, vc_cu_current(), (uint64_t)(uint32_t)*device, epoch);
	return rc;
}
