/* SPDX-License-Identifier: MIT */
/*
 * core.c - the guest libcuda.so.1's connection to vcuda-server and the paths
 * every call takes: initialisation (once per process), the calling thread's
 * current context, synchronous calls with replies, asynchronous submissions,
 * and what transport failures become.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exptab.h"
#include "fastpath.h"
#include "pinspare.h"
#include "stats.h"
#include "vc_client.h"
#include "vc_cu_guest.h"

/* Lets vcuda-server refuse to load this library as the real driver. */
__attribute__((visibility("default"))) const char vcuda_guest_library[] = "vcuda guest libcuda.so.1";

static struct vc_cu_state g_state;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CUresult g_init_rc = CUDA_ERROR_NOT_INITIALIZED;
static int g_inited; /* cuInit succeeded in this process */
static int g_forked; /* this is a child forked after cuInit */
static __thread uint64_t t_ctx;

int vc_cu_debug(void)
{
	static int d = -1;

	if (d < 0)
		d = getenv("VCUDA_DEBUG") != NULL;
	return d;
}

static void say_once(const char *what)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "vcuda: %s\n", what);
}

CUresult vc_cu_error(int rc)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "lost vcuda-server (%s); CUDA calls now fail",
		 rc == -EPROTO ? "the session was ended for a protocol violation" : strerror(-rc));
	say_once(msg);
	return CUDA_ERROR_DEVICE_UNAVAILABLE;
}

int vc_cu_unsupported(const char *name)
{
	if (vc_cu_debug())
		fprintf(stderr, "vcuda: %s is not supported; it answers CUDA_ERROR_NOT_SUPPORTED\n", name);
	return CUDA_ERROR_NOT_SUPPORTED;
}

static void in_child(void)
{
	g_forked = 1;
}

struct vc_cu_state *vc_cu_state(void)
{
	/* A forked child shares the parent's ring: CUDA in a child forked after
	 * initialisation is not supported natively either. (A fork handler
	 * tells, not getpid(): this runs on every call.) */
	if (!g_inited || g_forked)
		return NULL;
	return &g_state;
}

uint64_t vc_cu_current(void)
{
	return t_ctx;
}

void vc_cu_set_current(uint64_t ctx)
{
	t_ctx = ctx;
}

/* ---- export-table callbacks ------------------------------------------------ */

static int ex_device_count(void)
{
	return g_state.device_count;
}

static int ex_device_ident(int ordinal, uint8_t uuid[16], int *dom, int *bus, int *dev)
{
	const struct vc_cu_device_info *i;

	if (ordinal < 0 || ordinal >= g_state.device_count)
		return -EINVAL;
	i = &g_state.dev[ordinal].info;
	memcpy(uuid, i->uuid, 16);
	*dom = i->pci_domain;
	*bus = i->pci_bus;
	*dev = i->pci_device;
	return 0;
}

static int ex_driver_version(void)
{
	return g_state.driver_version;
}

static CUcontext ex_current_ctx(void)
{
	return (CUcontext)(uintptr_t)t_ctx;
}

/* VCUDA_STATS: which export-table slot a vcExportSlot was, and its wait. */
#define SLOT_STATS(rq, t0)                                                                         \
	do {                                                                                       \
		if (__builtin_expect(vc_cu_stats_on, 0))                                           \
			vc_cu_stats_slot((rq).table, (rq).slot, vc_cu_stats_now() - (t0));          \
	} while (0)

static CUresult ex_primary_ctx(CUcontext *out, CUdevice dev)
{
	struct vc_cu_req_vcExportSlot rq = {.table = VC_CU_EXPTAB_PRIMARY, .slot = 2, .dev = dev};
	struct vc_cu_rep_vcExportSlot rp = {0};
	uint64_t t0 = VC_STATS_T0();
	CUresult rc = vc_cu_call(VC_CU_vcExportSlot, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);

	SLOT_STATS(rq, t0);
	if (rc == CUDA_SUCCESS)
		*out = (CUcontext)(uintptr_t)rp.value;
	return rc;
}

static CUresult ex_ctx_query(uint32_t table, uint32_t slot, CUcontext ctx, uint64_t arg, uint64_t *out)
{
	struct vc_cu_req_vcExportSlot rq = {.table = VC_CU_EXPTAB_CTXQ, .slot = slot, .target = (uint64_t)(uintptr_t)ctx,
					    .arg = arg};
	struct vc_cu_rep_vcExportSlot rp = {0};
	uint64_t t0;
	CUresult rc;

	if (table != VC_EXPTAB_CTXQ_TABLE)
		return CUDA_ERROR_NOT_SUPPORTED;
	t0 = VC_STATS_T0();
	rc = vc_cu_call(VC_CU_vcExportSlot, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	SLOT_STATS(rq, t0);
	if (rc == CUDA_SUCCESS)
		*out = rp.value;
	return rc;
}

static CUresult ex_cluster_slot(uint32_t slot, uint64_t target, int32_t a, uint64_t b, uint32_t c,
				uint64_t *value, void *data, size_t cap, size_t *len)
{
	struct vc_cu_req_vcExportSlot rq = {.table = VC_CU_EXPTAB_CLUSTER, .slot = slot, .target = target,
					    .arg = b, .dev = a, .arg2 = c};
	struct vc_cu_rep_vcExportSlot rp = {0};
	uint64_t t0;
	CUresult rc;

	_Static_assert(VC_EXPTAB_TPC_MAP_MAX == VC_CU_TPC_MAP_MAX, "one cap for the TPC maps");
	*len = 0;
	t0 = VC_STATS_T0();
	rc = vc_cu_call_sized(VC_CU_vcExportSlot, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), data, cap, len, 0);
	SLOT_STATS(rq, t0);
	if (rc == CUDA_SUCCESS)
		*value = rp.value;
	return rc;
}

static const struct vc_exptab_ops exptab_ops = {
	.device_count = ex_device_count,
	.device_ident = ex_device_ident,
	.driver_version = ex_driver_version,
	.current_ctx = ex_current_ctx,
	.primary_ctx = ex_primary_ctx,
	.ctx_query = ex_ctx_query,
	.cluster_slot = ex_cluster_slot,
	.module_functions = vc_cu_module_functions,
};

/* ---- initialisation ------------------------------------------------------------- */

static void init_once(void)
{
	struct vc_cu_prefix rq = {0};
	struct vc_cu_rep_vcDriverInfo di;
	char err[256];
	int rc;

	vc_exptab_init(&exptab_ops);
	rc = vc_client_open(NULL, &g_state.client, err, sizeof(err));
	if (rc) {
		/* The server's reason is on stderr, once. A full server is a
		 * device busy now, as a GPU in exclusive-process mode taken by
		 * another process is; anything else is no device at all. */
		say_once(err + (strncmp(err, "vcuda: ", 7) ? 0 : 7));
		g_init_rc = rc == -EBUSY ? CUDA_ERROR_DEVICE_UNAVAILABLE : CUDA_ERROR_NO_DEVICE;
		return;
	}
	pthread_atfork(NULL, NULL, in_child);
	vc_cu_fast_init(g_state.client);
	g_inited = 1; /* vc_cu_call works from here on */
	g_init_rc = vc_cu_call(VC_CU_vcDriverInfo, &rq, sizeof(rq), NULL, 0, &di, sizeof(di), NULL, 0, 0);
	if (g_init_rc)
		goto fail;
	g_state.driver_version = di.driver_version;
	g_state.device_count = di.device_count > 16 ? 16 : di.device_count;
	for (int d = 0; d < g_state.device_count; d++) {
		struct vc_cu_req_vcDeviceInfo dq = {.dev = d};
		struct vc_cu_prefix none;

		g_init_rc = vc_cu_call(VC_CU_vcDeviceInfo, &dq, sizeof(dq), NULL, 0, &none, 0,
				       &g_state.dev[d].info, sizeof(g_state.dev[d].info), 0);
		if (g_init_rc)
			goto fail;
		vc_cu_managed_attrs(g_state.dev[d].info.attrs, VC_CU_ATTR_MAX);
		vc_cu_refused_attrs(g_state.dev[d].info.attrs, VC_CU_ATTR_MAX);
	}
	if (!g_state.device_count) {
		g_init_rc = CUDA_ERROR_NO_DEVICE;
		return;
	}
	vc_cu_pinned_init();
	vc_cu_pinspare_start(); /* VCUDA_PINNED_SPARE: off unless set */
	return;
fail:
	g_inited = 0;
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
	if (Flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&g_once, init_once);
	if (g_inited && g_forked)
		return CUDA_ERROR_NOT_INITIALIZED;
	return g_init_rc;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	/* Natively this works before cuInit; answer the host driver's version
	 * when connected, else the CUDA version this library implements. */
	*driverVersion = vc_cu_state() ? g_state.driver_version : CUDA_VERSION;
	return CUDA_SUCCESS;
}

/* ---- calls ---------------------------------------------------------------------- */

/* One synchronous call; with @fence_spin, a blocking operation the host may
 * answer once queued (vc_cu_call_fenced()). */
static CUresult call(uint32_t op, void *req, size_t reqlen, const void *data, size_t dlen, void *rep,
		     size_t replen, void *out, size_t outcap, size_t *outlen, int syncs, const uint32_t *fence_spin)
{
	struct vc_cu_state *st = vc_cu_state();
	uint8_t stackbuf[VC_CU_REP_MAX + 1024];
	size_t cap = VC_CU_REP_MAX + outcap, got = 0;
	uint8_t *buf = stackbuf;
	bool done = true;
	uint64_t t0;
	int rc;

	if (!st)
		return CUDA_ERROR_NOT_INITIALIZED;
	vc_cu_managed_before(op);
	((struct vc_cu_prefix *)req)->ctx = t_ctx;
	if (cap > sizeof(stackbuf)) {
		buf = malloc(cap);
		if (!buf)
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	t0 = VC_STATS_T0();
	if (fence_spin)
		rc = vc_client_call_fenced(st->client, op, req, reqlen, buf, cap, &got, *fence_spin, &done);
	else
		rc = vc_client_call(st->client, op, req, reqlen, data, dlen, buf, cap, &got);
	VC_STATS_OP(op, 1, t0);
	/* Queued, and not done within the spin: the legacy stream's
	 * synchronisation waits for it (and answers a fault that stopped the
	 * stream), sleeping where it takes long. */
	if (rc == CUDA_SUCCESS && !done)
		rc = cuStreamSynchronize(CU_STREAM_LEGACY);
	/* Device printf output reaches stdout before a synchronising call
	 * returns, failed ones included (a kernel may print, then fault). */
	vc_cu_console_check();
	if (rc < 0) {
		rc = vc_cu_error(rc);
	} else if (rc == CUDA_SUCCESS) {
		if (replen && got)
			memcpy(rep, buf, replen < got ? replen : got);
		if (outlen)
			*outlen = 0;
		if (out && got > VC_CU_REP_MAX) {
			size_t n = got - VC_CU_REP_MAX < outcap ? got - VC_CU_REP_MAX : outcap;

			memcpy(out, buf + VC_CU_REP_MAX, n);
			if (outlen)
				*outlen = n;
		}
		/* Errors up to this call's own command at least: the client
		 * counts a reply as done even where it overtook done_seq (a
		 * deferred synchronisation's), vc_client_get_info(). */
		if (syncs)
			rc = vc_cu_take_error();
	}
	vc_cu_fast_after(op, req, reqlen, rc);
	if (buf != stackbuf)
		free(buf);
	vc_cu_logs_after(rc); /* the driver's messages reach log callbacks before the call returns */
	return (CUresult)rc;
}

CUresult vc_cu_call_sized(uint32_t op, void *req, size_t reqlen, const void *data, size_t dlen, void *rep,
			  size_t replen, void *out, size_t outcap, size_t *outlen, int syncs)
{
	return call(op, req, reqlen, data, dlen, rep, replen, out, outcap, outlen, syncs, NULL);
}

CUresult vc_cu_call_fenced(uint32_t op, void *req, size_t reqlen, uint32_t spin_us)
{
	return call(op, req, reqlen, NULL, 0, NULL, 0, NULL, 0, NULL, 1, &spin_us);
}

CUresult vc_cu_call(uint32_t op, void *req, size_t reqlen, const void *data, size_t dlen, void *rep,
		    size_t replen, void *out, size_t outcap, int syncs)
{
	return vc_cu_call_sized(op, req, reqlen, data, dlen, rep, replen, out, outcap, NULL, syncs);
}

CUresult vc_cu_submit(uint32_t op, void *req, size_t reqlen, const void *data, size_t dlen)
{
	struct vc_cu_state *st = vc_cu_state();
	int rc;

	if (!st)
		return CUDA_ERROR_NOT_INITIALIZED;
	vc_cu_managed_before(op);
	((struct vc_cu_prefix *)req)->ctx = t_ctx;
	rc = vc_client_submit(st->client, op, req, reqlen, data, dlen, 0, NULL);
	VC_STATS_OP(op, 0, 0);
	return rc < 0 ? vc_cu_error(rc) : CUDA_SUCCESS;
}

CUresult vc_cu_take_error(void)
{
	struct vc_cu_state *st = vc_cu_state();
	struct vc_client_info info;

	if (!st)
		return CUDA_ERROR_NOT_INITIALIZED;
	vc_client_get_info(st->client, &info);
	return (CUresult)vc_client_take_error(st->client, info.done_seq);
}
