/* SPDX-License-Identifier: MIT */
/*
 * cu_driver_standin.c - the CI STAND-IN FOR THE CUDA DRIVER (see
 * cu_standin.h). One per process, like the real driver, and thread-safe like
 * it: sessions are served on threads of their own. Objects are small heap
 * records with a tag, so that a handle of one kind is never taken for
 * another; device memory is a vc_smem owned by contexts.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "standin/standin.h"
#include "standin/mem.h"

#define VA_BASE 0x7e0000000000ull

/* A module's or library's global, made when first asked for: the image is
 * not parsed, so every global has GLOBAL_BYTES of zeroed device memory. */
#define GLOBAL_BYTES 65536u
struct sglobal {
	struct sglobal *next;
	char name[128];
	CUdeviceptr d;
};

enum tag { T_CTX = 0x43545831, T_MOD, T_LIB, T_FUNC, T_KERN, T_STREAM, T_EVENT, T_POOL, T_GRAPH, T_NODE,
	   T_EXEC };

/* Every stand-in library holds this many kernels (more than one page of
 * cuLibraryEnumerateKernels), named standin_kernel_<i>. */
#define LIB_KERNELS 600u

struct obj {
	enum tag tag;
	struct obj *ctx;   /* owning context (contexts: themselves) */
	unsigned flags;
	int priority;
	int printer;       /* functions and kernels: VC_STANDIN_PRINTF_NAME */
	int store;         /* functions and kernels: VC_STANDIN_STORE_NAME */
	uint64_t id;
	uint64_t done_at; /* events: when the simulated work before them ends */
	char name[64];    /* functions and kernels */
	int max_dyn_smem; /* functions and kernels: raised with cuFuncSetAttribute, 0: the default */
	struct obj **kern; /* libraries: their kernels, made at the first enumeration */
	struct obj *mfunc; /* modules: their one function (standin_function), once listed */
	struct sglobal *globals; /* modules and libraries: globals asked for so far */
	uint64_t pool_threshold; /* pools: CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
	int pool_int[3];         /* pools: the three int attributes, by attribute - 1 */
	/* graphs: their nodes in the order they were added (a valid order to
	 * run them in); executable graphs: the graph */
	struct obj **nodes;
	size_t nnodes;
	struct obj *graph;
	unsigned refs; /* graphs: executable graphs made of them */
	int dead;      /* graphs: destroyed while executable graphs still run them */
	struct snode *node; /* nodes: what they do */
};

/* A graph node's work, kept apart so that other objects stay small. */
struct snode {
	CUgraphNodeType type;
	CUDA_KERNEL_NODE_PARAMS kp; /* kernelParams and extra not kept */
	uint8_t params[4096];       /* the packed parameters */
	size_t psize;
	CUDA_MEMCPY3D copy;
};

static struct vc_cuda_driver g_drv;
static struct vc_smem g_mem;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static uint64_t g_limit, g_launches, g_next_id = 1;
static __thread struct obj *t_ctx;
static pthread_cond_t g_hf_idle = PTHREAD_COND_INITIALIZER;
static unsigned g_hf_pending; /* host functions queued or running */
/*
 * Simulated kernel time, for tests of GPU sharing (VCUDA_STANDIN_KERNEL_US,
 * default 0: work completes at once): each launch occupies this process's
 * one simulated engine for that long, and synchronisations and event queries
 * see the work end then. With VCUDA_STANDIN_ENGINE=FILE the processes that
 * name the same file share one simulated engine, in submission order, as the
 * servers of VMs on one GPU share its time.
 */
static uint64_t g_sim_ns, g_busy_until;
static uint64_t *g_engine; /* the shared engine's busy-until (ns), or NULL */

/* With g_mu held: the end of a new launch's simulated work. */
static uint64_t sim_submit(uint64_t now)
{
	uint64_t start = g_busy_until > now ? g_busy_until : now, cur;

	if (!g_engine)
		return start + g_sim_ns;
	/* Pairs with this same CAS in the other processes of the engine: each
	 * launch takes the next g_sim_ns of the engine's time. */
	cur = __atomic_load_n(g_engine, __ATOMIC_ACQUIRE);
	for (;;) {
		uint64_t s = cur > start ? cur : start;

		if (__atomic_compare_exchange_n(g_engine, &cur, s + g_sim_ns, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return s + g_sim_ns;
	}
}

static void sim_engine_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	void *m;

	if (fd < 0)
		return;
	if (ftruncate(fd, 4096) == 0) {
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED)
			g_engine = m;
	}
	close(fd);
}

static uint64_t sim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wait for the simulated work queued so far. */
static void sim_drain(void)
{
	uint64_t until, now;

	if (!g_sim_ns)
		return;
	pthread_mutex_lock(&g_mu);
	until = g_busy_until;
	pthread_mutex_unlock(&g_mu);
	while ((now = sim_now()) < until) {
		struct timespec ts = {.tv_sec = (time_t)((until - now) / 1000000000ull),
				      .tv_nsec = (long)((until - now) % 1000000000ull)};

		nanosleep(&ts, NULL);
	}
}

static struct obj *new_obj(enum tag t)
{
	struct obj *o = calloc(1, sizeof(*o));

	if (o) {
		o->tag = t;
		o->ctx = t == T_CTX ? o : t_ctx;
		pthread_mutex_lock(&g_mu);
		o->id = g_next_id++;
		pthread_mutex_unlock(&g_mu);
	}
	return o;
}

static int is(const void *h, enum tag t)
{
	/* Special handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) are small
	 * integers, never objects. */
	return (uintptr_t)h >= 4096 && ((const struct obj *)h)->tag == t;
}

/* Streams: NULL and the two special handles are valid too. */
static int stream_ok(CUstream s)
{
	return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || is(s, T_STREAM);
}

static void del_obj(void *h)
{
	struct obj *o = h;

	if (o->kern)
		for (unsigned i = 0; i < LIB_KERNELS; i++)
			if (o->kern[i])
				del_obj(o->kern[i]);
	free(o->kern);
	if (o->mfunc)
		del_obj(o->mfunc);
	while (o->globals) {
		struct sglobal *g = o->globals;

		o->globals = g->next;
		free(g); /* the memory went, or goes, with the context */
	}
	if (o->tag == T_GRAPH)
		for (size_t i = 0; i < o->nnodes; i++)
			del_obj(o->nodes[i]);
	free(o->nodes);
	free(o->node);
	o->tag = 0;
	free(h);
}

/* ---- device printf (a test double, see cu_standin.h) --------------------------- */

#define PRINTF_FIFO 4096 /* launches waiting for a synchronisation; more are lost */

static int g_pf[PRINTF_FIFO];   /* each waiting launch's n, under g_mu */
static unsigned g_pf_n;
static int g_pf_budget = VC_STANDIN_PRINTF_LINES; /* lines this process may still print */
static pthread_mutex_t g_pf_mu = PTHREAD_MUTEX_INITIALIZER; /* one writer at a time, in order */

/* A synchronisation point: write what the launches so far printed. */
static void printf_flush(void)
{
	char buf[16384];
	size_t used = 0;
	unsigned n;
	int *q;

	pthread_mutex_lock(&g_pf_mu);
	pthread_mutex_lock(&g_mu);
	n = g_pf_n;
	q = n ? malloc(n * sizeof(*q)) : NULL;
	if (q)
		memcpy(q, g_pf, n * sizeof(*q));
	g_pf_n = 0;
	pthread_mutex_unlock(&g_mu);
	for (unsigned k = 0; q && k < n; k++) {
		for (int i = 0; i < q[k]; i++) {
			if (sizeof(buf) - used < 64) {
				fwrite(buf, 1, used, stdout);
				used = 0;
			}
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, VC_STANDIN_PRINTF_LINE, i, q[k]);
		}
	}
	if (used)
		fwrite(buf, 1, used, stdout);
	if (n)
		fflush(stdout);
	pthread_mutex_unlock(&g_pf_mu);
	free(q);
}

/* Parameter @i (@size bytes at packed offset @off) of a launch, from the
 * pointer array or the packed buffer; false when it is not there. */
static bool launch_arg(void **params, void **extra, int i, size_t off, void *v, size_t size)
{
	void *buf = NULL;
	size_t bsize = 0;

	if (params && params[i]) {
		memcpy(v, params[i], size);
		return true;
	}
	for (int k = 0; extra && k < 8 && extra[k] != CU_LAUNCH_PARAM_END; k += 2) {
		if (extra[k] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[k + 1];
		else if (extra[k] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[k + 1])
			bsize = *(size_t *)extra[k + 1];
	}
	if (!buf || bsize < off + size)
		return false;
	memcpy(v, (uint8_t *)buf + off, size);
	return true;
}

/* The printf double's int parameter. */
static int printf_arg(void **params, void **extra)
{
	int v = 0;

	launch_arg(params, extra, 0, 0, &v, sizeof(v));
	return v < 0 ? 0 : v;
}

static CUresult synced(CUresult rc)
{
	printf_flush();
	return rc;
}

/* ---- driver and device ------------------------------------------------------- */

static CUresult s_init(unsigned int f)
{
	return f ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult s_version(int *v)
{
	*v = vc_standin_driver_version;
	return CUDA_SUCCESS;
}

static CUresult s_count(int *n)
{
	*n = 1;
	return CUDA_SUCCESS;
}

static CUresult s_device_get(CUdevice *d, int ordinal)
{
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

static CUresult s_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if ((int)a < 1 || (int)a >= vc_standin_nattrs)
		return CUDA_ERROR_INVALID_VALUE;
	*v = vc_standin_attrs[a];
	return CUDA_SUCCESS;
}

static CUresult s_name(char *name, int len, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	/* Says what it is wherever a program prints the device's name. */
	strncpy(name, "vcuda CI stand-in (no GPU)", (size_t)len - 1);
	name[len - 1] = 0;
	return CUDA_SUCCESS;
}

static CUresult s_uuid(CUuuid *u, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	memcpy(u->bytes, "vcuda-ci-standin", 16);
	return CUDA_SUCCESS;
}

static CUresult s_total(size_t *b, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*b = g_limit;
	return CUDA_SUCCESS;
}

static CUresult s_pci(char *id, int len, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	strncpy(id, "0000:00:00.0", (size_t)len - 1);
	id[len - 1] = 0;
	return CUDA_SUCCESS;
}

static void wait_host_funcs(void);

/* ---- contexts ------------------------------------------------------------------ */

static CUresult s_ctx_create(CUcontext *pc, CUctxCreateParams *p, unsigned flags, CUdevice d)
{
	struct obj *c;

	(void)p;
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	c = new_obj(T_CTX);
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->flags = flags;
	t_ctx = c;
	*pc = (CUcontext)c;
	return CUDA_SUCCESS;
}

static CUresult s_ctx_destroy(CUcontext c)
{
	if (!is(c, T_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	printf_flush();
	pthread_mutex_lock(&g_mu);
	vc_smem_free_owner(&g_mem, c);
	pthread_mutex_unlock(&g_mu);
	if (t_ctx == (struct obj *)c)
		t_ctx = NULL;
	/* Objects in it (streams, modules) are the executor's to forget; they
	 * keep a dangling owner, as handles of a destroyed context do natively. */
	del_obj(c);
	return CUDA_SUCCESS;
}

static CUresult s_ctx_set(CUcontext c)
{
	if (c && !is(c, T_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	t_ctx = (struct obj *)c;
	return CUDA_SUCCESS;
}

static CUresult s_ctx_get(CUcontext *c)
{
	*c = (CUcontext)t_ctx;
	return CUDA_SUCCESS;
}

static CUresult need_ctx(void)
{
	return t_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult s_ctx_sync(void)
{
	wait_host_funcs();
	sim_drain();
	return synced(need_ctx());
}

static CUresult s_ctx_sync2(CUcontext c)
{
	return c && !is(c, T_CTX) ? CUDA_ERROR_INVALID_CONTEXT : c ? CUDA_SUCCESS : need_ctx();
}

static CUresult s_ctx_device(CUdevice *d)
{
	*d = 0;
	return need_ctx();
}

static CUresult s_ctx_device2(CUdevice *d, CUcontext c)
{
	*d = 0;
	return s_ctx_sync2(c);
}

static CUresult s_ctx_api(CUcontext c, unsigned int *v)
{
	*v = 13000;
	return s_ctx_sync2(c);
}

static CUresult s_ctx_flags(unsigned int *f)
{
	*f = t_ctx ? t_ctx->flags : 0;
	return need_ctx();
}

static CUresult s_ctx_prio(int *least, int *greatest)
{
	if (least)
		*least = 0;
	if (greatest)
		*greatest = -5;
	return need_ctx();
}

static CUresult s_ctx_limit_get(size_t *v, CUlimit l)
{
	(void)l;
	*v = 1024;
	return need_ctx();
}

static CUresult s_ctx_limit_set(CUlimit l, size_t v)
{
	(void)l, (void)v;
	return need_ctx();
}

static CUresult s_ctx_id(CUcontext c, unsigned long long *id)
{
	struct obj *o = c ? (struct obj *)c : t_ctx;

	if (!o || !is(o, T_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	*id = o->id;
	return CUDA_SUCCESS;
}

/* ---- memory ------------------------------------------------------------------ */

static CUresult s_alloc(CUdeviceptr *d, size_t n)
{
	uint64_t va;
	int rc;

	if (!t_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&g_mu);
	rc = vc_smem_alloc(&g_mem, n, t_ctx, &va);
	pthread_mutex_unlock(&g_mu);
	if (rc)
		return rc == -EINVAL ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
	*d = va;
	return CUDA_SUCCESS;
}

static CUresult s_alloc_pitch(CUdeviceptr *d, size_t *pitch, size_t w, size_t h, unsigned e)
{
	size_t p = (w + 511) & ~(size_t)511;

	if (!w || !h || (e != 4 && e != 8 && e != 16) || h > SIZE_MAX / p)
		return CUDA_ERROR_INVALID_VALUE;
	*pitch = p;
	return s_alloc(d, p * h);
}

static CUresult s_alloc_async(CUdeviceptr *d, size_t n, CUstream s)
{
	return stream_ok(s) ? s_alloc(d, n) : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- memory pools: attributes are kept, allocations come from device memory ---- */

static struct obj g_default_pool = {.tag = T_POOL};

static CUresult make(enum tag t, void **out);

static CUresult s_pool_create(CUmemoryPool *p, const CUmemPoolProps *props)
{
	if (!p || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->location.id != 0)
		return CUDA_ERROR_INVALID_VALUE;
	return make(T_POOL, (void **)p);
}

static CUresult s_pool_destroy(CUmemoryPool p)
{
	if (!is(p, T_POOL) || (struct obj *)p == &g_default_pool)
		return is(p, T_POOL) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
	del_obj(p);
	return CUDA_SUCCESS;
}

static CUresult s_default_pool(CUmemoryPool *p, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*p = (CUmemoryPool)&g_default_pool;
	return CUDA_SUCCESS;
}

static CUresult s_pool_attr(CUmemoryPool p, CUmemPool_attribute a, void *v, int set)
{
	struct obj *o = (struct obj *)p;
	cuuint64_t zero = 0;

	if (!is(p, T_POOL))
		return CUDA_ERROR_INVALID_HANDLE;
	switch (a) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		if (set)
			memcpy(&o->pool_int[a - 1], v, sizeof(int));
		else
			memcpy(v, &o->pool_int[a - 1], sizeof(int));
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		if (set)
			memcpy(&o->pool_threshold, v, sizeof(cuuint64_t));
		else
			memcpy(v, &o->pool_threshold, sizeof(cuuint64_t));
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (set)
			return memcmp(v, &zero, sizeof(zero)) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
		memset(v, 0, sizeof(cuuint64_t));
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		if (set)
			return CUDA_ERROR_INVALID_VALUE;
		memset(v, 0, sizeof(cuuint64_t));
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult s_pool_set(CUmemoryPool p, CUmemPool_attribute a, void *v)
{
	return s_pool_attr(p, a, v, 1);
}

static CUresult s_pool_get(CUmemoryPool p, CUmemPool_attribute a, void *v)
{
	return s_pool_attr(p, a, v, 0);
}

static CUresult s_alloc_pool(CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s)
{
	if (!is(p, T_POOL))
		return CUDA_ERROR_INVALID_HANDLE;
	return s_alloc_async(d, n, s);
}

/* Streams never capture here: every valid stream answers "not capturing". */
static CUresult s_capture_info(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
			       const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *n)
{
	if (!stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	*st = CU_STREAM_CAPTURE_STATUS_NONE;
	if (id)
		*id = 0;
	if (g)
		*g = NULL;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (n)
		*n = 0;
	return CUDA_SUCCESS;
}

static CUresult s_is_capturing(CUstream s, CUstreamCaptureStatus *st)
{
	return s_capture_info(s, st, NULL, NULL, NULL, NULL, NULL);
}

static CUresult s_free(CUdeviceptr d)
{
	int rc;

	pthread_mutex_lock(&g_mu);
	rc = vc_smem_free(&g_mem, d);
	pthread_mutex_unlock(&g_mu);
	return rc ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult s_free_async(CUdeviceptr d, CUstream s)
{
	return stream_ok(s) ? s_free(d) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_info(size_t *freeb, size_t *total)
{
	pthread_mutex_lock(&g_mu);
	*freeb = g_limit - g_mem.in_use;
	*total = g_limit;
	pthread_mutex_unlock(&g_mu);
	return need_ctx();
}

static CUresult s_ptr_attrs(unsigned n, CUpointer_attribute *a, void **data, CUdeviceptr p)
{
	struct vc_smem_alloc *al;

	pthread_mutex_lock(&g_mu);
	al = vc_smem_find(&g_mem, p, 1);
	for (unsigned i = 0; i < n; i++) {
		switch (a[i]) {
		case CU_POINTER_ATTRIBUTE_CONTEXT:
			*(CUcontext *)data[i] = al ? (CUcontext)al->owner : NULL;
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
			*(CUdeviceptr *)data[i] = al ? al->base : 0;
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
			*(size_t *)data[i] = al ? al->size : 0;
			break;
		case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
			*(unsigned *)data[i] = al ? CU_MEMORYTYPE_DEVICE : 0;
			break;
		default:
			memset(data[i], 0, sizeof(int));
		}
	}
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	struct vc_smem_alloc *al;
	CUresult rc = CUDA_ERROR_NOT_FOUND;

	pthread_mutex_lock(&g_mu);
	al = vc_smem_find(&g_mem, p, 1);
	if (al) {
		if (base)
			*base = al->base;
		if (size)
			*size = al->size;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* Copies hold the lock while they move bytes: another thread's free must not
 * pull the memory away mid-copy. */
static CUresult copy(void *dst, uint64_t ddev, const void *src, uint64_t sdev, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&g_mu);
	if (!d)
		d = vc_smem_ptr(&g_mem, ddev, n);
	if (!s)
		s = vc_smem_ptr(&g_mem, sdev, n);
	if (d && s) {
		memmove(d, s, n);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* Blocking copies are synchronisation points; asynchronous ones are not. */
static CUresult s_htod(CUdeviceptr d, const void *s, size_t n)
{
	return synced(copy(NULL, d, s, 0, n));
}

static CUresult s_dtoh(void *d, CUdeviceptr s, size_t n)
{
	return synced(copy(d, 0, NULL, s, n));
}

static CUresult s_dtod(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	return synced(copy(NULL, d, NULL, s, n));
}

static CUresult s_htod_a(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
	return stream_ok(st) ? copy(NULL, d, s, 0, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_dtoh_a(void *d, CUdeviceptr s, size_t n, CUstream st)
{
	return stream_ok(st) ? copy(d, 0, NULL, s, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_dtod_a(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	return stream_ok(st) ? copy(NULL, d, NULL, s, n) : CUDA_ERROR_INVALID_HANDLE;
}

/* 2D copies between device ranges, the only kind the executor asks for
 * (host rows are staged by the guest); row by row. */
static CUresult copy2d(const CUDA_MEMCPY2D *c)
{
	CUresult rc = CUDA_SUCCESS;

	if (!c || c->srcMemoryType != CU_MEMORYTYPE_DEVICE || c->dstMemoryType != CU_MEMORYTYPE_DEVICE ||
	    c->srcXInBytes || c->srcY || c->dstXInBytes || c->dstY)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (c->srcPitch < c->WidthInBytes || c->dstPitch < c->WidthInBytes)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t y = 0; y < c->Height && rc == CUDA_SUCCESS; y++)
		rc = copy(NULL, c->dstDevice + y * c->dstPitch, NULL, c->srcDevice + y * c->srcPitch,
			  c->WidthInBytes);
	return rc;
}

static CUresult s_copy2d(const CUDA_MEMCPY2D *c)
{
	return synced(copy2d(c));
}

static CUresult s_copy2d_a(const CUDA_MEMCPY2D *c, CUstream st)
{
	return stream_ok(st) ? copy2d(c) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fill(CUdeviceptr d, uint32_t v, unsigned elem, size_t n)
{
	uint8_t *p;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	if (n > SIZE_MAX / elem)
		return rc;
	pthread_mutex_lock(&g_mu);
	p = vc_smem_ptr(&g_mem, d, n * elem);
	if (p) {
		for (size_t i = 0; i < n; i++)
			memcpy(p + i * elem, &v, elem);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult s_set8(CUdeviceptr d, unsigned char v, size_t n)
{
	return fill(d, v, 1, n);
}

static CUresult s_set16(CUdeviceptr d, unsigned short v, size_t n)
{
	return fill(d, v, 2, n);
}

static CUresult s_set32(CUdeviceptr d, unsigned int v, size_t n)
{
	return fill(d, v, 4, n);
}

static CUresult s_set8a(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return stream_ok(s) ? fill(d, v, 1, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_set16a(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
	return stream_ok(s) ? fill(d, v, 2, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_set32a(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	return stream_ok(s) ? fill(d, v, 4, n) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fill2d(CUdeviceptr d, size_t pitch, uint32_t v, unsigned elem, size_t w, size_t h)
{
	for (size_t r = 0; r < h; r++) {
		CUresult rc = fill(d + r * pitch, v, elem, w);

		if (rc)
			return rc;
	}
	return CUDA_SUCCESS;
}

static CUresult s_2d8(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h)
{
	return fill2d(d, p, v, 1, w, h);
}

static CUresult s_2d16(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h)
{
	return fill2d(d, p, v, 2, w, h);
}

static CUresult s_2d32(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h)
{
	return fill2d(d, p, v, 4, w, h);
}

static CUresult s_2d8a(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s)
{
	return stream_ok(s) ? fill2d(d, p, v, 1, w, h) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_2d16a(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h, CUstream s)
{
	return stream_ok(s) ? fill2d(d, p, v, 2, w, h) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_2d32a(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h, CUstream s)
{
	return stream_ok(s) ? fill2d(d, p, v, 4, w, h) : CUDA_ERROR_INVALID_HANDLE;
}

/* Page-locked host memory: host memory is the stand-in's device memory too,
 * so a registered range's device address is itself (unified addressing). */
static CUresult s_host_register(void *p, size_t n, unsigned flags)
{
	(void)flags;
	return p && n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_host_unregister(void *p)
{
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_host_devptr(CUdeviceptr *d, void *p, unsigned flags)
{
	if (!p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

/* ---- modules, libraries, functions ------------------------------------------------- */

static CUresult make(enum tag t, void **out)
{
	struct obj *o = new_obj(t);

	if (!o)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = o;
	return CUDA_SUCCESS;
}

static CUresult s_mod_load(CUmodule *m, const void *img)
{
	/* Any image loads: kernels are never run here. */
	return img ? make(T_MOD, (void **)m) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_mod_unload(CUmodule m)
{
	if (!is(m, T_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	del_obj(m);
	return synced(CUDA_SUCCESS);
}

/* A function or kernel object named @name. */
static CUresult make_named(enum tag t, const char *name, void **out)
{
	CUresult rc = make(t, out);

	if (rc == CUDA_SUCCESS && name) {
		snprintf(((struct obj *)*out)->name, sizeof(((struct obj *)*out)->name), "%s", name);
		((struct obj *)*out)->printer = !strcmp(name, VC_STANDIN_PRINTF_NAME);
		((struct obj *)*out)->store = !strcmp(name, VC_STANDIN_STORE_NAME);
	}
	return rc;
}

static CUresult s_mod_func(CUfunction *f, CUmodule m, const char *name)
{
	return is(m, T_MOD) ? make_named(T_FUNC, name, (void **)f) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_lib_load(CUlibrary *l, const void *code, CUjit_option *jo, void **jv, unsigned nj,
			   CUlibraryOption *lo, void **lv, unsigned nl)
{
	(void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
	return code ? make(T_LIB, (void **)l) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_lib_unload(CUlibrary l)
{
	if (!is(l, T_LIB))
		return CUDA_ERROR_INVALID_HANDLE;
	del_obj(l);
	return synced(CUDA_SUCCESS);
}

static CUresult s_lib_kernel(CUkernel *k, CUlibrary l, const char *name)
{
	return is(l, T_LIB) ? make_named(T_KERN, name, (void **)k) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_kernel_func(CUfunction *f, CUkernel k)
{
	CUresult rc = is(k, T_KERN) ? make_named(T_FUNC, ((struct obj *)k)->name, (void **)f)
				    : CUDA_ERROR_INVALID_HANDLE;

	if (rc == CUDA_SUCCESS) {
		((struct obj *)*f)->printer = ((struct obj *)k)->printer;
		((struct obj *)*f)->store = ((struct obj *)k)->store;
	}
	return rc;
}

/* Every stand-in module holds one function, as cuFFT's modules do. */
static CUresult s_mod_func_count(unsigned int *n, CUmodule m)
{
	if (!is(m, T_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	*n = 1;
	return CUDA_SUCCESS;
}

static CUresult s_mod_enum(CUfunction *f, unsigned int n, CUmodule m)
{
	struct obj *mod = (struct obj *)m;
	CUresult rc = CUDA_SUCCESS;

	if (!is(m, T_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!f || !n)
		return CUDA_ERROR_INVALID_VALUE;
	/* Modules are the serving thread's alone (as lib->kern is). */
	if (!mod->mfunc)
		rc = make_named(T_FUNC, "standin_function", (void **)&mod->mfunc);
	if (rc == CUDA_SUCCESS)
		f[0] = (CUfunction)mod->mfunc;
	return rc;
}

static CUresult s_lib_kernel_count(unsigned int *n, CUlibrary l)
{
	if (!is(l, T_LIB))
		return CUDA_ERROR_INVALID_HANDLE;
	*n = LIB_KERNELS;
	return CUDA_SUCCESS;
}

static CUresult s_lib_enum(CUkernel *k, unsigned int n, CUlibrary l)
{
	struct obj *lib = (struct obj *)l;
	CUresult rc = CUDA_SUCCESS;

	if (!is(l, T_LIB))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!k || !n)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	if (!lib->kern)
		lib->kern = calloc(LIB_KERNELS, sizeof(*lib->kern));
	pthread_mutex_unlock(&g_mu);
	if (!lib->kern)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned i = 0; i < n && i < LIB_KERNELS && rc == CUDA_SUCCESS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "standin_kernel_%u", i);
		if (!lib->kern[i])
			rc = make_named(T_KERN, name, (void **)&lib->kern[i]);
		k[i] = (CUkernel)lib->kern[i];
	}
	return rc;
}

static CUresult s_get_name(const char **name, void *h, enum tag t)
{
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!is(h, t))
		return CUDA_ERROR_INVALID_HANDLE;
	*name = ((struct obj *)h)->name;
	return CUDA_SUCCESS;
}

static CUresult s_kernel_name(const char **name, CUkernel k)
{
	return s_get_name(name, k, T_KERN);
}

static CUresult s_func_name(const char **name, CUfunction f)
{
	return s_get_name(name, f, T_FUNC);
}

static CUresult s_alloc(CUdeviceptr *d, size_t n);

static CUresult s_global(CUdeviceptr *d, size_t *n, void *owner, const char *name)
{
	struct obj *o = owner;
	struct sglobal *g;
	CUresult rc;

	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	for (g = o->globals; g && strcmp(g->name, name); g = g->next)
		;
	if (!g) {
		if (strlen(name) >= sizeof(g->name))
			return CUDA_ERROR_NOT_FOUND;
		g = calloc(1, sizeof(*g));
		if (!g)
			return CUDA_ERROR_OUT_OF_MEMORY;
		if ((rc = s_alloc(&g->d, GLOBAL_BYTES))) {
			free(g);
			return rc;
		}
		snprintf(g->name, sizeof(g->name), "%s", name);
		g->next = o->globals;
		o->globals = g;
	}
	if (d)
		*d = g->d;
	if (n)
		*n = GLOBAL_BYTES;
	return CUDA_SUCCESS;
}

static CUresult s_mod_global(CUdeviceptr *d, size_t *n, CUmodule m, const char *name)
{
	return is(m, T_MOD) ? s_global(d, n, m, name) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_lib_global(CUdeviceptr *d, size_t *n, CUlibrary l, const char *name)
{
	return is(l, T_LIB) ? s_global(d, n, l, name) : CUDA_ERROR_INVALID_HANDLE;
}

/* The test doubles' parameters: the printf double's int, the store
 * double's pointer and value. */
static CUresult printer_params(const void *f, size_t i, size_t *off, size_t *size)
{
	const struct obj *o = f;

	if (o->printer && i == 0) {
		*off = 0;
		*size = sizeof(int);
		return CUDA_SUCCESS;
	}
	if (o->store && i < 2) {
		*off = i ? sizeof(CUdeviceptr) : 0;
		*size = i ? sizeof(unsigned int) : sizeof(CUdeviceptr);
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_func_params(CUfunction f, size_t i, size_t *off, size_t *size)
{
	/* The layout is in the image's .nv.info, which the stand-in does not
	 * read: "no parameter", so launches carry none. */
	return is(f, T_FUNC) ? printer_params(f, i, off, size) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_kernel_params(CUkernel k, size_t i, size_t *off, size_t *size)
{
	return is(k, T_KERN) ? printer_params(k, i, off, size) : CUDA_ERROR_INVALID_HANDLE;
}

static int attr_value(int a)
{
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		return 1024;
	case CU_FUNC_ATTRIBUTE_NUM_REGS:
		return 32;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION:
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
		return 90;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		return 48 * 1024;
	default:
		return 0;
	}
}

static CUresult s_func_attr(int *v, CUfunction_attribute a, CUfunction f)
{
	if (!is(f, T_FUNC) && !is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	*v = attr_value(a);
	if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && ((struct obj *)f)->max_dyn_smem)
		*v = ((struct obj *)f)->max_dyn_smem;
	return CUDA_SUCCESS;
}

static CUresult s_kernel_attr(int *v, CUfunction_attribute a, CUkernel k, CUdevice d)
{
	(void)d;
	return s_func_attr(v, a, (CUfunction)k);
}

static CUresult s_func_set_attr(CUfunction f, CUfunction_attribute a, int v)
{
	if (!is(f, T_FUNC) && !is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
		if (v < 0 || v > vc_standin_attrs[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN])
			return CUDA_ERROR_INVALID_VALUE;
		((struct obj *)f)->max_dyn_smem = v;
	}
	return CUDA_SUCCESS;
}

static CUresult s_kernel_set_attr(CUfunction_attribute a, int v, CUkernel k, CUdevice d)
{
	(void)d;
	return s_func_set_attr((CUfunction)k, a, v);
}

static CUresult s_func_cache(CUfunction f, CUfunc_cache c)
{
	(void)c;
	return is(f, T_FUNC) || is(f, T_KERN) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_kernel_cache(CUkernel k, CUfunc_cache c, CUdevice d)
{
	(void)d;
	return s_func_cache((CUfunction)k, c);
}

static CUresult s_loading_mode(CUmoduleLoadingMode *m)
{
	*m = CU_MODULE_LAZY_LOADING;
	return CUDA_SUCCESS;
}

static CUresult s_launch(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	if (!is(f, T_FUNC) && !is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!c->gridDimX || !c->gridDimY || !c->gridDimZ || !c->blockDimX || !c->blockDimY || !c->blockDimZ ||
	    (uint64_t)c->blockDimX * c->blockDimY * c->blockDimZ > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	if (!stream_ok(c->hStream))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_mu);
	g_launches++;
	if (g_sim_ns) {
		g_busy_until = sim_submit(sim_now());
	}
	if (((struct obj *)f)->store) {
		CUdeviceptr dst = 0;
		unsigned int v = 0;
		uint8_t *at;

		if (!launch_arg(params, extra, 0, 0, &dst, sizeof(dst)) ||
		    !launch_arg(params, extra, 1, sizeof(dst), &v, sizeof(v))) {
			pthread_mutex_unlock(&g_mu);
			return CUDA_ERROR_INVALID_VALUE;
		}
		at = vc_smem_ptr(&g_mem, dst, sizeof(v));
		if (!at) {
			pthread_mutex_unlock(&g_mu);
			return CUDA_ERROR_ILLEGAL_ADDRESS; /* where a GPU would fault */
		}
		memcpy(at, &v, sizeof(v));
	}
	if (t_ctx && ((struct obj *)f)->printer && g_pf_n < PRINTF_FIFO) {
		int n = printf_arg(params, extra);

		n = n < g_pf_budget ? n : g_pf_budget;
		g_pf_budget -= n;
		g_pf[g_pf_n++] = n;
	}
	pthread_mutex_unlock(&g_mu);
	return need_ctx();
}

/* ---- graphs: built and run here; kernels are counted, copies are made ------------------ */

static CUresult graph_add(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n, CUgraphNodeType type,
			  struct obj **node)
{
	struct obj *gr = (struct obj *)g, **nn;

	if (!is(g, T_GRAPH) || gr->dead)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!out || (n && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++)
		if (!is(deps[i], T_NODE) || ((struct obj *)deps[i])->graph != gr)
			return CUDA_ERROR_INVALID_VALUE;
	nn = realloc(gr->nodes, (gr->nnodes + 1) * sizeof(*nn));
	if (!nn)
		return CUDA_ERROR_OUT_OF_MEMORY;
	gr->nodes = nn;
	if (make(T_NODE, (void **)node))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!((*node)->node = calloc(1, sizeof(*(*node)->node)))) {
		del_obj(*node);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	(*node)->node->type = type;
	(*node)->graph = gr;
	gr->nodes[gr->nnodes++] = *node;
	*out = (CUgraphNode)*node;
	return CUDA_SUCCESS;
}

static CUresult s_graph_create(CUgraph *g, unsigned flags)
{
	if (!g || flags)
		return CUDA_ERROR_INVALID_VALUE;
	return make(T_GRAPH, (void **)g);
}

static CUresult s_graph_destroy(CUgraph g)
{
	struct obj *gr = (struct obj *)g;

	if (!is(g, T_GRAPH) || gr->dead)
		return CUDA_ERROR_INVALID_HANDLE;
	/* Executable graphs outlive their graph, as natively. */
	if (gr->refs)
		gr->dead = 1;
	else
		del_obj(g);
	return CUDA_SUCCESS;
}

static CUresult s_graph_nodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
	struct obj *gr = (struct obj *)g;

	if (!is(g, T_GRAPH))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodes) {
		for (size_t i = 0; i < *n; i++)
			nodes[i] = i < gr->nnodes ? (CUgraphNode)gr->nodes[i] : NULL;
		*n = *n < gr->nnodes ? *n : gr->nnodes;
	} else {
		*n = gr->nnodes;
	}
	return CUDA_SUCCESS;
}

static CUresult s_node_type(CUgraphNode n, CUgraphNodeType *t)
{
	if (!is(n, T_NODE))
		return CUDA_ERROR_INVALID_HANDLE;
	*t = ((struct obj *)n)->node->type;
	return CUDA_SUCCESS;
}

/* Node parameters @p kept in @o, with the packed parameters (extra form only:
 * vcuda always hands them over packed). */
static CUresult kernel_set(struct snode *o, const CUDA_KERNEL_NODE_PARAMS *p)
{
	const void *src = NULL;
	size_t n = 0;

	if (!p || (!is(p->func, T_FUNC) && !is(p->func, T_KERN) && !is(p->kern, T_KERN)) || !p->gridDimX ||
	    !p->blockDimX || p->kernelParams)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; p->extra && p->extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (p->extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			src = p->extra[i + 1];
		else if (p->extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			n = *(const size_t *)p->extra[i + 1];
	}
	if (n > sizeof(o->params) || (n && !src))
		return CUDA_ERROR_INVALID_VALUE;
	o->kp = *p;
	o->kp.kernelParams = NULL;
	o->kp.extra = NULL;
	if (n)
		memcpy(o->params, src, n);
	o->psize = n;
	return CUDA_SUCCESS;
}

static CUresult s_add_kernel(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
			     const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct obj *node;
	CUresult rc = graph_add(out, g, deps, n, CU_GRAPH_NODE_TYPE_KERNEL, &node);

	if (rc)
		return rc;
	if ((rc = kernel_set(node->node, p))) {
		/* Refused parameters add no node. */
		((struct obj *)g)->nnodes--;
		del_obj(node);
	}
	return rc;
}

static CUresult s_kernel_set(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!is(n, T_NODE) || ((struct obj *)n)->node->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	return kernel_set(((struct obj *)n)->node, p);
}

static CUresult s_kernel_get(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p)
{
	struct snode *o;
	static __thread void *extra[5];
	static __thread size_t size;

	if (!is(n, T_NODE) || ((struct obj *)n)->node->type != CU_GRAPH_NODE_TYPE_KERNEL || !p)
		return CUDA_ERROR_INVALID_VALUE;
	o = ((struct obj *)n)->node;
	*p = o->kp;
	size = o->psize;
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = o->params;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = &size;
	extra[4] = CU_LAUNCH_PARAM_END;
	p->extra = extra;
	return CUDA_SUCCESS;
}

static CUresult s_exec_kernel_set(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!is(e, T_EXEC) || !is(n, T_NODE) || ((struct obj *)n)->graph != ((struct obj *)e)->graph)
		return CUDA_ERROR_INVALID_VALUE;
	/* The executable graph runs the node's kept parameters: updating
	 * them is what the test double can show. */
	return s_kernel_set(n, p);
}

static CUresult s_add_memcpy(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
			     const CUDA_MEMCPY3D *c, CUcontext ctx)
{
	struct obj *node;
	CUresult rc;

	(void)ctx;
	if (!c || c->Height != 1 || c->Depth != 1 || c->srcXInBytes || c->dstXInBytes || c->srcY || c->dstY ||
	    c->srcZ || c->dstZ)
		return CUDA_ERROR_NOT_SUPPORTED; /* the stand-in copies 1D only */
	if ((rc = graph_add(out, g, deps, n, CU_GRAPH_NODE_TYPE_MEMCPY, &node)))
		return rc;
	node->node->copy = *c;
	return CUDA_SUCCESS;
}

static CUresult s_instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	CUresult rc;

	if (!e || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!is(g, T_GRAPH))
		return CUDA_ERROR_INVALID_HANDLE;
	if (((struct obj *)g)->dead)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!(rc = make(T_EXEC, (void **)e))) {
		((struct obj *)*e)->graph = (struct obj *)g;
		((struct obj *)g)->refs++;
	}
	return rc;
}

static CUresult s_exec_destroy(CUgraphExec e)
{
	struct obj *g;

	if (!is(e, T_EXEC))
		return CUDA_ERROR_INVALID_HANDLE;
	g = ((struct obj *)e)->graph;
	if (--g->refs == 0 && g->dead)
		del_obj(g);
	del_obj(e);
	return CUDA_SUCCESS;
}

static CUresult s_graph_launch(CUgraphExec e, CUstream s)
{
	struct obj *g;
	CUresult rc = CUDA_SUCCESS;

	if (!is(e, T_EXEC) || !stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	g = ((struct obj *)e)->graph;
	for (size_t i = 0; i < g->nnodes && rc == CUDA_SUCCESS; i++) {
		const struct snode *nd = g->nodes[i]->node;
		const CUDA_MEMCPY3D *c = &nd->copy;

		if (nd->type == CU_GRAPH_NODE_TYPE_KERNEL) {
			pthread_mutex_lock(&g_mu);
			g_launches++;
			pthread_mutex_unlock(&g_mu);
		} else if (nd->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
			if (c->srcMemoryType == CU_MEMORYTYPE_HOST && c->dstMemoryType == CU_MEMORYTYPE_DEVICE)
				rc = s_htod(c->dstDevice, c->srcHost, c->WidthInBytes);
			else if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE && c->dstMemoryType == CU_MEMORYTYPE_HOST)
				rc = s_dtoh(c->dstHost, c->srcDevice, c->WidthInBytes);
			else if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE && c->dstMemoryType == CU_MEMORYTYPE_DEVICE)
				rc = s_dtod(c->dstDevice, c->srcDevice, c->WidthInBytes);
			else
				rc = CUDA_ERROR_NOT_SUPPORTED;
		}
	}
	return rc;
}

/* ---- streams and events (all work completes at once) ------------------------------ */

static CUresult s_stream_create(CUstream *s, unsigned flags)
{
	CUresult rc = need_ctx();

	if (rc == CUDA_SUCCESS && (rc = make(T_STREAM, (void **)s)) == CUDA_SUCCESS)
		((struct obj *)*s)->flags = flags;
	return rc;
}

static CUresult s_stream_create_prio(CUstream *s, unsigned flags, int prio)
{
	CUresult rc = s_stream_create(s, flags);

	if (rc == CUDA_SUCCESS)
		((struct obj *)*s)->priority = prio < -5 ? -5 : prio > 0 ? 0 : prio;
	return rc;
}

static CUresult s_stream_destroy(CUstream s)
{
	if (!is(s, T_STREAM))
		return CUDA_ERROR_INVALID_HANDLE;
	del_obj(s);
	return CUDA_SUCCESS;
}

static CUresult s_stream_sync(CUstream s)
{
	if (!stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	wait_host_funcs();
	sim_drain();
	return synced(CUDA_SUCCESS);
}

static CUresult s_stream_query(CUstream s)
{
	unsigned n;

	if (!stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_mu);
	n = g_hf_pending;
	if (g_sim_ns && g_busy_until > sim_now())
		n++;
	pthread_mutex_unlock(&g_mu);
	return n ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

static CUresult s_stream_wait(CUstream s, CUevent e, unsigned f)
{
	(void)f;
	return stream_ok(s) && is(e, T_EVENT) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_stream_flags(CUstream s, unsigned *f)
{
	*f = is(s, T_STREAM) ? ((struct obj *)s)->flags : 0;
	return stream_ok(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_stream_prio(CUstream s, int *p)
{
	*p = is(s, T_STREAM) ? ((struct obj *)s)->priority : 0;
	return stream_ok(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_stream_id(CUstream s, unsigned long long *id)
{
	*id = is(s, T_STREAM) ? ((struct obj *)s)->id : (unsigned long long)(uintptr_t)s;
	return stream_ok(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult s_event_create(CUevent *e, unsigned flags)
{
	CUresult rc = need_ctx();

	if (rc == CUDA_SUCCESS && (rc = make(T_EVENT, (void **)e)) == CUDA_SUCCESS)
		((struct obj *)*e)->flags = flags;
	return rc;
}

static CUresult s_event_destroy(CUevent e)
{
	if (!is(e, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	del_obj(e);
	return CUDA_SUCCESS;
}

static CUresult s_event_record(CUevent e, CUstream s)
{
	if (!is(e, T_EVENT) || !stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_mu);
	((struct obj *)e)->done_at = g_busy_until;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_event_record_f(CUevent e, CUstream s, unsigned f)
{
	(void)f;
	return s_event_record(e, s);
}

static CUresult s_event_sync(CUevent e)
{
	if (!is(e, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	wait_host_funcs(); /* an event recorded after host functions completes after them */
	sim_drain();
	return synced(CUDA_SUCCESS);
}

static CUresult s_event_query(CUevent e)
{
	unsigned n;

	if (!is(e, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&g_mu);
	n = g_hf_pending;
	if (g_sim_ns && ((struct obj *)e)->done_at > sim_now())
		n++;
	pthread_mutex_unlock(&g_mu);
	return n ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

static CUresult s_event_elapsed(float *ms, CUevent a, CUevent b)
{
	if (!is(a, T_EVENT) || !is(b, T_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	*ms = 0.001f; /* nothing ran; positive, as a real interval would be */
	return CUDA_SUCCESS;
}

static CUresult s_occupancy(int *n, CUfunction f, int block, size_t smem)
{
	(void)smem;
	if (!is(f, T_FUNC) && !is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	*n = block > 0 ? 2048 / block : 0;
	return CUDA_SUCCESS;
}

/* ---- the one private table the executor asks the driver (21318c60) ----------------
 * Slots 4, 39 and 51 answer what an H200's driver answered (docs/
 * cuda13-driver-surface.md): 1, 7, and an opaque object. */

static int g_ctxq_obj; /* the opaque object slot 51 hands out */

static CUresult s_ctxq4(CUcontext c, uint64_t *out, void *scratch)
{
	(void)scratch;
	if (!is(c, T_CTX) || !out)
		return CUDA_ERROR_INVALID_VALUE;
	*out = 1;
	return CUDA_SUCCESS;
}

static CUresult s_ctxq51(CUcontext c, CUstream s, void **out, void *scratch)
{
	(void)scratch;
	/* The real driver dereferences the stream: anything but one of its
	 * streams (or 0) would crash it, so the stand-in refuses it loudly. */
	if (!is(c, T_CTX) || !out || !stream_ok(s))
		return CUDA_ERROR_INVALID_VALUE;
	*out = &g_ctxq_obj;
	return CUDA_SUCCESS;
}

static CUresult s_ctxq39(CUcontext c, void *obj, int *out, void *scratch)
{
	(void)scratch;
	if (!is(c, T_CTX) || obj != &g_ctxq_obj || !out)
		return CUDA_ERROR_INVALID_VALUE;
	*out = 7;
	return CUDA_SUCCESS;
}

static uint64_t g_t21318c60[93];

static CUresult s_export_table(const void **t, const CUuuid *id)
{
	static const uint8_t want[16] = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
					 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};
	CUresult (*f4)(CUcontext, uint64_t *, void *) = s_ctxq4;
	CUresult (*f39)(CUcontext, void *, int *, void *) = s_ctxq39;
	CUresult (*f51)(CUcontext, CUstream, void **, void *) = s_ctxq51;

	if (!t || !id)
		return CUDA_ERROR_INVALID_VALUE;
	if (memcmp(id->bytes, want, sizeof(want))) {
		*t = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
	g_t21318c60[0] = sizeof(g_t21318c60);
	memcpy(&g_t21318c60[4], &f4, sizeof(f4));
	memcpy(&g_t21318c60[39], &f39, sizeof(f39));
	memcpy(&g_t21318c60[51], &f51, sizeof(f51));
	*t = g_t21318c60;
	return CUDA_SUCCESS;
}

/* One cluster of any shape fits at a time (the figure is the driver's to give). */
static CUresult s_max_clusters(int *n, CUfunction f, const CUlaunchConfig *c)
{
	if (!is(f, T_FUNC) && !is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n || !c)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 1;
	return CUDA_SUCCESS;
}

/* Functions use no shared memory of their own here: all a block may have. */
static CUresult s_avail_smem(size_t *n, CUfunction f, int blocks, int block)
{
	if (!is(f, T_FUNC) && !is(f, T_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n || blocks <= 0 || block <= 0 || block > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	*n = (size_t)vc_standin_attrs[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN];
	return CUDA_SUCCESS;
}

static CUresult s_occupancy_f(int *n, CUfunction f, int block, size_t smem, unsigned flags)
{
	(void)flags;
	return s_occupancy(n, f, block, smem);
}

/* Host functions run in order on one thread of their own: work completes at
 * once here, but a host function may block (vcuda's holds the stream until
 * the guest has run the guest's function), so never on the caller's thread. */
struct hostfn {
	struct hostfn *next;
	CUhostFn fn;
	void *arg;
};

static struct hostfn *g_hf_head, **g_hf_tail = &g_hf_head;
static pthread_cond_t g_hf_cv = PTHREAD_COND_INITIALIZER;

static pthread_t g_hf_thread;
static int g_hf_started;

static void *hostfn_thread(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&g_mu);
	for (;;) {
		struct hostfn *h;

		while (!g_hf_head)
			pthread_cond_wait(&g_hf_cv, &g_mu);
		h = g_hf_head;
		g_hf_head = h->next;
		if (!g_hf_head)
			g_hf_tail = &g_hf_head;
		pthread_mutex_unlock(&g_mu);
		h->fn(h->arg);
		free(h);
		pthread_mutex_lock(&g_mu);
		if (--g_hf_pending == 0)
			pthread_cond_broadcast(&g_hf_idle);
	}
	return NULL;
}

/* Synchronisation waits for host functions too, as on a GPU. */
static void wait_host_funcs(void)
{
	pthread_mutex_lock(&g_mu);
	while (g_hf_pending)
		pthread_cond_wait(&g_hf_idle, &g_mu);
	pthread_mutex_unlock(&g_mu);
}

static CUresult s_host_func(CUstream s, CUhostFn fn, void *arg)
{
	struct hostfn *h;

	if (!stream_ok(s) || !fn)
		return CUDA_ERROR_INVALID_VALUE;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->fn = fn;
	h->arg = arg;
	pthread_mutex_lock(&g_mu);
	if (!g_hf_started && pthread_create(&g_hf_thread, NULL, hostfn_thread, NULL) == 0) {
		pthread_detach(g_hf_thread);
		g_hf_started = 1;
	}
	*g_hf_tail = h;
	g_hf_tail = &h->next;
	g_hf_pending++;
	pthread_cond_signal(&g_hf_cv);
	pthread_mutex_unlock(&g_mu);
	return g_hf_started ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- the table ----------------------------------------------------------------------- */

static void build(void)
{
	struct vc_cuda_driver *d = &g_drv;

	vc_cuda_driver_fill_unsupported(d);
	vc_smem_init(&g_mem, VA_BASE, g_limit);
	d->cuInit = s_init;
	d->cuDriverGetVersion = s_version;
	d->cuDeviceGetCount = s_count;
	d->cuDeviceGet = s_device_get;
	d->cuDeviceGetAttribute = s_attr;
	d->cuDeviceGetName = s_name;
	d->cuDeviceGetUuid_v2 = s_uuid;
	d->cuDeviceTotalMem_v2 = s_total;
	d->cuDeviceGetPCIBusId = s_pci;
	d->cuCtxCreate_v4 = s_ctx_create;
	d->cuCtxDestroy_v2 = s_ctx_destroy;
	d->cuCtxSetCurrent = s_ctx_set;
	d->cuCtxGetCurrent = s_ctx_get;
	d->cuCtxSynchronize = s_ctx_sync;
	d->cuCtxSynchronize_v2 = s_ctx_sync2;
	d->cuCtxGetDevice = s_ctx_device;
	d->cuCtxGetDevice_v2 = s_ctx_device2;
	d->cuCtxGetApiVersion = s_ctx_api;
	d->cuCtxGetFlags = s_ctx_flags;
	d->cuCtxGetStreamPriorityRange = s_ctx_prio;
	d->cuCtxGetLimit = s_ctx_limit_get;
	d->cuCtxSetLimit = s_ctx_limit_set;
	d->cuCtxGetId = s_ctx_id;
	d->cuMemAlloc_v2 = s_alloc;
	d->cuMemAllocPitch_v2 = s_alloc_pitch;
	d->cuMemAllocAsync = s_alloc_async;
	d->cuMemFree_v2 = s_free;
	d->cuMemFreeAsync = s_free_async;
	d->cuMemGetInfo_v2 = s_info;
	d->cuMemGetAddressRange_v2 = s_range;
	d->cuPointerGetAttributes = s_ptr_attrs;
	d->cuMemcpyHtoD_v2 = s_htod;
	d->cuMemcpyDtoH_v2 = s_dtoh;
	d->cuMemcpyDtoD_v2 = s_dtod;
	d->cuMemcpyHtoDAsync_v2 = s_htod_a;
	d->cuMemcpyDtoHAsync_v2 = s_dtoh_a;
	d->cuMemcpyDtoDAsync_v2 = s_dtod_a;
	d->cuMemcpy2DUnaligned_v2 = s_copy2d;
	d->cuMemcpy2DAsync_v2 = s_copy2d_a;
	d->cuMemsetD8_v2 = s_set8;
	d->cuMemsetD16_v2 = s_set16;
	d->cuMemsetD32_v2 = s_set32;
	d->cuMemsetD8Async = s_set8a;
	d->cuMemsetD16Async = s_set16a;
	d->cuMemsetD32Async = s_set32a;
	d->cuMemsetD2D8_v2 = s_2d8;
	d->cuMemsetD2D16_v2 = s_2d16;
	d->cuMemsetD2D32_v2 = s_2d32;
	d->cuMemsetD2D8Async = s_2d8a;
	d->cuMemsetD2D16Async = s_2d16a;
	d->cuMemsetD2D32Async = s_2d32a;
	d->cuModuleLoadData = s_mod_load;
	d->cuModuleUnload = s_mod_unload;
	d->cuModuleGetFunction = s_mod_func;
	d->cuModuleGetGlobal_v2 = s_mod_global;
	d->cuModuleGetLoadingMode = s_loading_mode;
	d->cuLibraryLoadData = s_lib_load;
	d->cuLibraryUnload = s_lib_unload;
	d->cuLibraryGetKernel = s_lib_kernel;
	d->cuLibraryGetKernelCount = s_lib_kernel_count;
	d->cuModuleGetFunctionCount = s_mod_func_count;
	d->cuModuleEnumerateFunctions = s_mod_enum;
	d->cuLibraryEnumerateKernels = s_lib_enum;
	d->cuKernelGetName = s_kernel_name;
	d->cuFuncGetName = s_func_name;
	d->cuMemPoolCreate = s_pool_create;
	d->cuMemPoolDestroy = s_pool_destroy;
	d->cuMemPoolSetAttribute = s_pool_set;
	d->cuMemPoolGetAttribute = s_pool_get;
	d->cuDeviceGetDefaultMemPool = s_default_pool;
	d->cuDeviceGetMemPool = s_default_pool;
	d->cuMemAllocFromPoolAsync = s_alloc_pool;
	d->cuStreamGetCaptureInfo_v3 = s_capture_info;
	d->cuStreamIsCapturing = s_is_capturing;
	d->cuGraphCreate = s_graph_create;
	d->cuGraphDestroy = s_graph_destroy;
	d->cuGraphGetNodes = s_graph_nodes;
	d->cuGraphNodeGetType = s_node_type;
	d->cuGraphAddKernelNode_v2 = s_add_kernel;
	d->cuGraphKernelNodeSetParams_v2 = s_kernel_set;
	d->cuGraphKernelNodeGetParams_v2 = s_kernel_get;
	d->cuGraphExecKernelNodeSetParams_v2 = s_exec_kernel_set;
	d->cuGraphAddMemcpyNode = s_add_memcpy;
	d->cuGraphInstantiateWithFlags = s_instantiate;
	d->cuGraphExecDestroy = s_exec_destroy;
	d->cuGraphLaunch = s_graph_launch;
	d->cuLibraryGetGlobal = s_lib_global;
	d->cuKernelGetFunction = s_kernel_func;
	d->cuFuncGetParamInfo = s_func_params;
	d->cuKernelGetParamInfo = s_kernel_params;
	d->cuFuncGetAttribute = s_func_attr;
	d->cuKernelGetAttribute = s_kernel_attr;
	d->cuFuncSetAttribute = s_func_set_attr;
	d->cuKernelSetAttribute = s_kernel_set_attr;
	d->cuFuncSetCacheConfig = s_func_cache;
	d->cuKernelSetCacheConfig = s_kernel_cache;
	d->cuLaunchKernelEx = s_launch;
	d->cuMemHostRegister_v2 = s_host_register;
	d->cuMemHostUnregister = s_host_unregister;
	d->cuMemHostGetDevicePointer_v2 = s_host_devptr;
	d->cuLaunchHostFunc = s_host_func;
	d->cuStreamCreate = s_stream_create;
	d->cuStreamCreateWithPriority = s_stream_create_prio;
	d->cuStreamDestroy_v2 = s_stream_destroy;
	d->cuStreamSynchronize = s_stream_sync;
	d->cuStreamQuery = s_stream_query;
	d->cuStreamWaitEvent = s_stream_wait;
	d->cuStreamGetFlags = s_stream_flags;
	d->cuStreamGetPriority = s_stream_prio;
	d->cuStreamGetId = s_stream_id;
	d->cuEventCreate = s_event_create;
	d->cuEventDestroy_v2 = s_event_destroy;
	d->cuEventRecord = s_event_record;
	d->cuEventRecordWithFlags = s_event_record_f;
	d->cuEventSynchronize = s_event_sync;
	d->cuEventQuery = s_event_query;
	d->cuEventElapsedTime_v2 = s_event_elapsed;
	d->cuOccupancyMaxActiveBlocksPerMultiprocessor = s_occupancy;
	d->cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags = s_occupancy_f;
	d->cuOccupancyAvailableDynamicSMemPerBlock = s_avail_smem;
	d->cuOccupancyMaxActiveClusters = s_max_clusters;
	d->cuGetExportTable = s_export_table;
}

static uint64_t g_req_limit;

static void build_once(void)
{
	g_limit = g_req_limit ? g_req_limit : (1ull << 30);
	build();
}

const struct vc_cuda_driver *vc_cuda_driver_standin(uint64_t mem_limit)
{
	const char *sim = getenv("VCUDA_STANDIN_KERNEL_US");

	g_req_limit = mem_limit;
	if (sim)
		g_sim_ns = strtoull(sim, NULL, 10) * 1000;
	if (g_sim_ns && getenv("VCUDA_STANDIN_ENGINE") && !g_engine)
		sim_engine_open(getenv("VCUDA_STANDIN_ENGINE"));
	pthread_once(&g_once, build_once);
	return &g_drv;
}

uint64_t vc_cuda_driver_standin_launches(void)
{
	uint64_t n;

	pthread_mutex_lock(&g_mu);
	n = g_launches;
	pthread_mutex_unlock(&g_mu);
	return n;
}

void vc_cuda_driver_standin_stats(uint64_t *launches, uint64_t *bytes_in_use, uint64_t *allocs)
{
	pthread_mutex_lock(&g_mu);
	*launches = g_launches;
	*bytes_in_use = g_mem.in_use;
	*allocs = g_mem.n;
	pthread_mutex_unlock(&g_mu);
}
