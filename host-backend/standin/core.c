/* SPDX-License-Identifier: MIT */
/*
 * core.c - the CI STAND-IN FOR THE CUDA DRIVER (see standin.h): its global
 * state, the object records every API family makes (standin_priv.h), the
 * simulated engine for tests of GPU sharing, and its statistics. The driver
 * table is built in table.c.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "standin/standin_priv.h"
#include "vc_shm.h"
#include "vc_time.h"

struct vc_smem g_mem;
pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
uint64_t g_limit, g_launches;
static uint64_t g_next_id = 1;
__thread struct obj *t_ctx;
/*
 * Simulated kernel time, for tests of GPU sharing (VCUDA_STANDIN_KERNEL_US,
 * default 0: work completes at once): each launch occupies this process's
 * one simulated engine for that long, and synchronisations and event queries
 * see the work end then. With VCUDA_STANDIN_ENGINE=FILE the processes that
 * name the same file share one simulated engine, in submission order, as the
 * servers of VMs on one GPU share its time.
 */
uint64_t g_sim_ns, g_busy_until;
static uint64_t *g_engine; /* the shared engine's busy-until (ns), or NULL */

/* With g_mu held: the end of a new launch's simulated work. */
uint64_t vc_si_sim_submit(uint64_t now)
{
	uint64_t start = g_busy_until > now ? g_busy_until : now, cur;

	if (!g_engine)
		return start + g_sim_ns;
	/* The engine's busy-until, shared by the servers that name one file:
	 * pairs with this same CAS in the other processes, so that each launch
	 * takes the next g_sim_ns of the engine's time. It publishes nothing
	 * else, but acq_rel keeps every process's view of it in one order. */
	cur = vc_shm_load64(g_engine, __ATOMIC_ACQUIRE);
	for (;;) {
		uint64_t s = cur > start ? cur : start;

		if (vc_shm_cas64(g_engine, &cur, s + g_sim_ns, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
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

uint64_t vc_si_sim_now(void)
{
	return vc_now_ns();
}

/* Wait for the simulated work queued so far. */
void vc_si_sim_drain(void)
{
	uint64_t until, now;

	if (!g_sim_ns)
		return;
	pthread_mutex_lock(&g_mu);
	until = g_busy_until;
	pthread_mutex_unlock(&g_mu);
	while ((now = vc_si_sim_now()) < until) {
		struct timespec ts = {.tv_sec = (time_t)((until - now) / 1000000000ull),
				      .tv_nsec = (long)((until - now) % 1000000000ull)};

		nanosleep(&ts, NULL);
	}
}

/* Every live object, and the deleted records kept for reuse, under g_obj_mu
 * (taken alone: never with g_mu held by the caller of new and del, or the
 * other way round). */
static struct obj *g_live, *g_dead;
void (*vc_si_obj_fini)(struct obj *o);
static pthread_mutex_t g_obj_mu = PTHREAD_MUTEX_INITIALIZER;

struct obj *vc_si_new_obj(enum tag t)
{
	struct obj *o;
	uint64_t id;

	pthread_mutex_lock(&g_mu);
	id = g_next_id++;
	pthread_mutex_unlock(&g_mu);
	pthread_mutex_lock(&g_obj_mu);
	o = g_dead;
	if (o) {
		g_dead = o->lnext;
		memset(o, 0, sizeof(*o));
	} else {
		o = calloc(1, sizeof(*o));
	}
	if (o) {
		o->tag = t;
		o->ctx = t == T_CTX ? o : t_ctx;
		o->id = id;
		o->lnext = g_live;
		if (g_live)
			g_live->lprev = o;
		g_live = o;
	}
	pthread_mutex_unlock(&g_obj_mu);
	return o;
}

void vc_si_adopt(void *child, void *parent)
{
	((struct obj *)child)->parent = parent;
}

int vc_si_is(const void *h, enum tag t)
{
	/* Special handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) are small
	 * integers, never objects. */
	return (uintptr_t)h >= 4096 && ((const struct obj *)h)->tag == t;
}

int vc_si_memfd_named(int fd, const char *name)
{
	char path[64], target[128];
	size_t len = strlen(name);
	ssize_t n;

	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	return n >= 7 && (size_t)n - 7 >= len && !memcmp(target, "/memfd:", 7) && !memcmp(target + 7, name, len);
}

/* Streams: NULL and the two special handles are valid too. */
int vc_si_stream_ok(CUstream s)
{
	return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || vc_si_is(s, T_STREAM);
}

/* With g_obj_mu held. */
static void del_locked(struct obj *o)
{
	enum tag t = o->tag;

	if (!t)
		return; /* deleted already, through another owner in this pass */
	o->tag = 0;
	if (o->kern)
		for (unsigned i = 0; i < LIB_KERNELS; i++)
			if (o->kern[i])
				del_locked(o->kern[i]);
	free(o->kern);
	if (o->mfunc)
		del_locked(o->mfunc);
	if (t == T_GRAPH)
		for (size_t i = 0; i < o->nnodes; i++)
			del_locked(o->nodes[i]);
	if ((t == T_GRAPH || t == T_NODE) && vc_si_obj_fini)
		vc_si_obj_fini(o); /* edges, copied arrays, user object references */
	for (struct obj *p = g_live; p;) {
		if (p->parent == o && p->tag) {
			del_locked(p);
			p = g_live; /* the list changed: from the start */
		} else {
			p = p->lnext;
		}
	}
	while (o->globals) {
		struct sglobal *g = o->globals;

		o->globals = g->next;
		free(g); /* the memory went, or goes, with the context */
	}
	free(o->nodes);
	free(o->node);
	o->kern = NULL;
	o->nodes = NULL;
	o->node = NULL;
	if (o->lprev)
		o->lprev->lnext = o->lnext;
	else
		g_live = o->lnext;
	if (o->lnext)
		o->lnext->lprev = o->lprev;
	o->lprev = NULL;
	o->lnext = g_dead;
	g_dead = o;
}

void vc_si_del_obj(void *h)
{
	pthread_mutex_lock(&g_obj_mu);
	del_locked(h);
	pthread_mutex_unlock(&g_obj_mu);
}

void vc_si_del_ctx_objects(void *c)
{
	pthread_mutex_lock(&g_obj_mu);
	for (struct obj *p = g_live; p;) {
		if (p != c && p->ctx == c && !p->parent &&
		    (p->tag == T_MOD || p->tag == T_FUNC || p->tag == T_STREAM || p->tag == T_EVENT)) {
			del_locked(p);
			p = g_live;
		} else {
			p = p->lnext;
		}
	}
	pthread_mutex_unlock(&g_obj_mu);
}

CUresult vc_si_make(enum tag t, void **out)
{
	struct obj *o = vc_si_new_obj(t);

	if (!o)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = o;
	return CUDA_SUCCESS;
}

CUresult vc_si_need_ctx(void)
{
	return t_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

void vc_si_sim_setup(void)
{
	const char *sim = getenv("VCUDA_STANDIN_KERNEL_US");

	if (sim)
		g_sim_ns = strtoull(sim, NULL, 10) * 1000;
	if (g_sim_ns && getenv("VCUDA_STANDIN_ENGINE") && !g_engine)
		sim_engine_open(getenv("VCUDA_STANDIN_ENGINE"));
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
