/* SPDX-License-Identifier: MIT */
/*
 * graph_state.c - what a session keeps for its graphs: the records through
 * which the driver calls the guest's functions (host nodes, user object
 * destructors), the address ranges of memory allocation nodes, and the
 * session's end.
 *
 * Host nodes and destructors run in the guest: the driver calls a function
 * of ours with a record holding the guest's cookie; a host node queues the
 * cookie in the host-callback queue and holds its stream until the guest ran
 * it, at every launch; a destructor queues it and returns (the driver may
 * call it from any thread, and it must not wait). Records reach the session
 * through an anchor that outlives it, so that a late call finds the session
 * gone instead of freed memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "cuda/graph.h"

#define RECS_PER_CHUNK 256u
#define RECS_MAX (1u << 16)
#define RANGES_MAX (1u << 16)

struct vc_cu_graph_anchor {
	pthread_mutex_t mu;
	struct vc_cu_session *x; /* NULL once the session closed */
	uint32_t refs;           /* the session's, and one per live user object */
	struct hostrec **chunks; /* host node records, never moved */
	uint32_t nrec, nchunks;
	uint64_t *dead;          /* ids of user objects the driver destroyed, not yet forgotten */
	uint32_t ndead, capdead;
};

struct hostrec {
	struct vc_cu_graph_anchor *a;
	uint64_t cookie;
	uint32_t bounce; /* VC_CU_BOUNCE_*: the pair moves a memcpy node's bytes (graph_bounce.c) */
};

struct vc_cu_graph_range {
	uint64_t dptr, size;
};

struct vc_cu_graphs *vc_cu_graph_state(struct vc_cu_session *x)
{
	struct vc_cu_graphs *g = x->graphs;

	if (g)
		return g;
	if (!(g = calloc(1, sizeof(*g))) || !(g->a = calloc(1, sizeof(*g->a)))) {
		free(g);
		return NULL;
	}
	pthread_mutex_init(&g->a->mu, NULL);
	g->a->x = x;
	g->a->refs = 1;
	return x->graphs = g;
}

static void anchor_put(struct vc_cu_graph_anchor *a)
{
	bool last;

	pthread_mutex_lock(&a->mu);
	last = --a->refs == 0;
	pthread_mutex_unlock(&a->mu);
	if (!last)
		return;
	for (uint32_t i = 0; i < a->nchunks; i++)
		free(a->chunks[i]);
	free(a->chunks);
	free(a->dead);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

/* The session behind @a, holding a callback in flight (so that it stays), or NULL. */
static struct vc_cu_session *anchor_enter(struct vc_cu_graph_anchor *a)
{
	struct vc_cu_session *x;

	pthread_mutex_lock(&a->mu);
	x = a->x;
	if (x) {
		bool ok;

		pthread_mutex_lock(&x->cb_mu);
		ok = !x->cb_abort;
		if (ok)
			x->cb_inflight++;
		pthread_mutex_unlock(&x->cb_mu);
		if (!ok)
			x = NULL;
	}
	pthread_mutex_unlock(&a->mu);
	return x;
}

static void session_leave(struct vc_cu_session *x)
{
	pthread_mutex_lock(&x->cb_mu);
	x->cb_inflight--;
	pthread_cond_broadcast(&x->cb_cv);
	pthread_mutex_unlock(&x->cb_mu);
}

/* Queue @cookie for the guest; with @wait, until the guest has run it. */
static void run_in_guest(struct vc_cu_session *x, uint64_t cookie, bool wait)
{
	uint32_t idx = 0, wait_us = 5;
	int sig = -EAGAIN;

	pthread_mutex_lock(&x->cb_mu);
	while (!x->cb_abort) {
		sig = x->svc->cb_push(x->svc->arg, cookie, &idx);
		if (sig != -EAGAIN)
			break;
		pthread_mutex_unlock(&x->cb_mu);
		usleep(100); /* the guest's queue is full: it is running callbacks */
		pthread_mutex_lock(&x->cb_mu);
	}
	/* Shared memory is read only under cb_mu with cb_abort clear (hostfn.c). */
	while (wait && sig >= 0 && !x->cb_abort && (int32_t)(x->svc->cb_done(x->svc->arg) - idx) <= 0) {
		pthread_mutex_unlock(&x->cb_mu);
		usleep(wait_us);
		wait_us = wait_us < 1000 ? wait_us * 2 : 1000;
		pthread_mutex_lock(&x->cb_mu);
	}
	pthread_mutex_unlock(&x->cb_mu);
}

/* The driver's thread, at a host node: the guest runs it; the stream waits. */
static void CUDA_CB host_node(void *arg)
{
	struct hostrec *r = arg;
	struct vc_cu_session *x = anchor_enter(r->a);

	if (!x)
		return;
	run_in_guest(x, r->cookie, true);
	session_leave(x);
}

int vc_cu_graph_host_params(struct vc_cu_session *x, uint64_t cookie, uint32_t bounce, CUDA_HOST_NODE_PARAMS *hp)
{
	struct vc_cu_graphs *g = vc_cu_graph_state(x);
	struct vc_cu_graph_anchor *a;
	struct hostrec *r = NULL;

	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!(cookie & VC_CU_COOKIE_GRAPH) || (cookie & VC_CU_COOKIE_UOBJ))
		return -VC_FATAL_PAYLOAD; /* the guest library makes no other */
	a = g->a;
	/* One record per (function, data) pair of the guest's: nodes, their
	 * clones and executable graphs share it, for the session's life. */
	for (uint32_t i = 0; i < a->nrec && !r; i++)
		if (a->chunks[i / RECS_PER_CHUNK][i % RECS_PER_CHUNK].cookie == cookie)
			r = &a->chunks[i / RECS_PER_CHUNK][i % RECS_PER_CHUNK];
	if (!r) {
		if (a->nrec == RECS_MAX)
			return CUDA_ERROR_OUT_OF_MEMORY;
		if (a->nrec == a->nchunks * RECS_PER_CHUNK) {
			struct hostrec **nc = realloc(a->chunks, (a->nchunks + 1) * sizeof(*nc));

			if (!nc)
				return CUDA_ERROR_OUT_OF_MEMORY;
			a->chunks = nc;
			if (!(nc[a->nchunks] = calloc(RECS_PER_CHUNK, sizeof(**nc))))
				return CUDA_ERROR_OUT_OF_MEMORY;
			a->nchunks++;
		}
		r = &a->chunks[a->nrec / RECS_PER_CHUNK][a->nrec % RECS_PER_CHUNK];
		r->a = a;
		r->cookie = cookie;
		a->nrec++;
	}
	if (bounce)
		r->bounce = bounce;
	hp->fn = host_node;
	hp->userData = r;
	return 0;
}

int vc_cu_graph_host_cookie(const CUDA_HOST_NODE_PARAMS *hp, uint64_t *cookie)
{
	if (hp->fn != host_node || !hp->userData)
		return -ENOENT;
	*cookie = ((const struct hostrec *)hp->userData)->cookie;
	return 0;
}

uint32_t vc_cu_graph_host_bounce(const CUDA_HOST_NODE_PARAMS *hp)
{
	return hp->fn == host_node && hp->userData ? ((const struct hostrec *)hp->userData)->bounce : 0;
}

/* ---- user objects --------------------------------------------------------------------- */

/* A user object's destructor record: the guest's cookie, and the guest's
 * id, so that the id can be forgotten once the driver destroyed it. */
struct uobjrec {
	struct vc_cu_graph_anchor *a;
	uint64_t cookie; /* 0: an object the guest never had (nothing to run) */
	uint64_t id;     /* 0 until the guest has one (under a->mu) */
};

/* The driver, when a user object's last reference went (any thread): queue
 * the guest's destructor, and return without waiting for it. The object is
 * noted dead for the serving thread, which forgets its id (uobj_reap()):
 * from then on the guest's id is an invalid handle, never a freed object. */
static void CUDA_CB user_object_gone(void *arg)
{
	struct uobjrec *r = arg;
	struct vc_cu_graph_anchor *a = r->a;
	struct vc_cu_session *x = anchor_enter(a);

	if (x) {
		if (r->cookie)
			run_in_guest(x, r->cookie, false);
		session_leave(x);
	}
	pthread_mutex_lock(&a->mu);
	if (r->id && a->ndead == a->capdead) {
		uint32_t cap = a->capdead ? a->capdead * 2 : 16;
		uint64_t *nd = realloc(a->dead, cap * sizeof(*nd));

		if (nd) {
			a->dead = nd;
			a->capdead = cap;
		}
	}
	/* Without memory the id stays, as before this list: the driver is then
	 * handed a freed object only if the guest names it again. */
	if (r->id && a->ndead < a->capdead)
		a->dead[a->ndead++] = r->id;
	pthread_mutex_unlock(&a->mu);
	anchor_put(a);
	free(r);
}

/* Serving thread: forget the ids of the user objects the driver destroyed. */
static void uobj_reap(struct vc_cu_session *x)
{
	struct vc_cu_graph_anchor *a = x->graphs ? x->graphs->a : NULL;
	uint64_t *dead;
	uint32_t n;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	dead = a->dead;
	n = a->ndead;
	a->dead = NULL;
	a->ndead = a->capdead = 0;
	pthread_mutex_unlock(&a->mu);
	for (uint32_t i = 0; i < n; i++)
		vc_cu_forget(x, VC_H_CUUSEROBJECT, dead[i]); /* an id reissued since is another: kept */
	free(dead);
}

int vc_cu_manual_cuUserObjectCreate(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_graph_call rq;
	struct vc_cu_rep_graph_call rp = {0};
	struct vc_cu_graphs *g;
	CUuserObject obj;
	struct uobjrec *r;
	uint64_t stale;
	int rc;

	TAKE(rq);
	if ((rq.a & (VC_CU_COOKIE_GRAPH | VC_CU_COOKIE_UOBJ)) != (VC_CU_COOKIE_GRAPH | VC_CU_COOKIE_UOBJ))
		return -VC_FATAL_PAYLOAD;
	if (rq.v0 > UINT32_MAX || rq.v1 > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (!(g = vc_cu_graph_state(x)) || !(r = calloc(1, sizeof(*r))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->a = g->a;
	r->cookie = rq.a;
	pthread_mutex_lock(&g->a->mu);
	g->a->refs++;
	pthread_mutex_unlock(&g->a->mu);
	if ((rc = x->drv->cuUserObjectCreate(&obj, r, user_object_gone, (unsigned)rq.v0, (unsigned)rq.v1))) {
		anchor_put(g->a);
		free(r);
		return rc;
	}
	/* Its address may be a destroyed object's whose destructor has not
	 * run yet (the driver may run it later, on a thread of its own): that
	 * id is dead, and must not be handed out for this object. */
	if (vc_cu_find(x, VC_H_CUUSEROBJECT, obj, &stale) == 0)
		vc_cu_forget(x, VC_H_CUUSEROBJECT, stale);
	if ((rc = vc_cu_publish(x, VC_H_CUUSEROBJECT, obj, &rp.h))) {
		r->cookie = 0; /* the guest never had it: no destructor to run */
		x->drv->cuUserObjectRelease(obj, (unsigned)rq.v0);
		return rc;
	}
	pthread_mutex_lock(&g->a->mu);
	r->id = rp.h; /* before the guest can release it: only then can it die */
	pthread_mutex_unlock(&g->a->mu);
	vc_cu_handle_get(x, VC_H_CUUSEROBJECT, rp.h)->refs = (uint32_t)rq.v0;
	REPLY(rp);
	return 0;
}

/* +1: @how adds references to the guest's, -1: takes some away, 0: neither
 * (a graph retain that makes its own, a graph release). */
static int uobj_sign(uint64_t how)
{
	if (how & VC_CU_UOBJ_ADD)
		return 1;
	return how & (VC_CU_UOBJ_DROP | CU_GRAPH_USER_OBJECT_MOVE) ? -1 : 0;
}

int vc_cu_uobj_check(struct vc_cu_session *x, uint64_t object, uint64_t count, uint64_t how)
{
	struct vc_cu_handle *h;
	int sign = uobj_sign(how);

	if (!object)
		return 0; /* the driver's own answer to a NULL object */
	uobj_reap(x);
	if (!(h = vc_cu_handle_get(x, VC_H_CUUSEROBJECT, object)))
		return CUDA_ERROR_INVALID_HANDLE;
	/* Natively a release past the references held frees the object under
	 * whoever still uses it; here the guest's count is known. */
	if (count > UINT32_MAX || (sign > 0 && count > UINT32_MAX - h->refs) || (sign < 0 && count > h->refs))
		return CUDA_ERROR_INVALID_VALUE;
	return 0;
}

int vc_cu_uobj_note(struct vc_cu_session *x, uint64_t object, uint64_t count, uint64_t how)
{
	struct vc_cu_handle *h = vc_cu_handle_get(x, VC_H_CUUSEROBJECT, object);
	int sign = uobj_sign(how);

	/* The object may be gone already (the driver ran its destructor in
	 * the call): its id goes at the next reap. Until then, no count. */
	if (!h || !sign)
		return 0;
	if (sign > 0)
		h->refs += (uint32_t)count;
	else
		h->refs -= (uint32_t)count;
	return 0;
}

/* ---- graph memory ----------------------------------------------------------------------- */

int vc_cu_graph_note_alloc(struct vc_cu_session *x, uint64_t dptr, uint64_t size)
{
	struct vc_cu_graphs *g = vc_cu_graph_state(x);

	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < g->nranges; i++)
		if (g->ranges[i].dptr == dptr) {
			g->ranges[i].size = size;
			return 0;
		}
	if (g->nranges == g->capranges) {
		uint32_t cap = g->capranges ? g->capranges * 2 : 16;
		struct vc_cu_graph_range *nr = cap <= RANGES_MAX ? realloc(g->ranges, cap * sizeof(*nr)) : NULL;

		if (!nr)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->ranges = nr;
		g->capranges = cap;
	}
	g->ranges[g->nranges++] = (struct vc_cu_graph_range){dptr, size};
	return 0;
}

int vc_cu_graph_check_range(struct vc_cu_session *x, uint64_t ptr, uint64_t len)
{
	const struct vc_cu_graphs *g = x->graphs;

	/* Addresses an allocation node reserved are mapped only while its
	 * graph runs: the driver cannot vouch for them before. */
	for (uint32_t i = 0; g && i < g->nranges; i++)
		if (ptr >= g->ranges[i].dptr && len <= g->ranges[i].size && ptr - g->ranges[i].dptr <= g->ranges[i].size - len)
			return 0;
	return vc_cu_check_range(x, ptr, len);
}

/* ---- the session's end ------------------------------------------------------------------- */

void vc_cu_graph_close(struct vc_cu_session *x)
{
	/* Graphs that a node owns are destroyed by their owner: forgotten
	 * first, so that the session's teardown does not destroy them too. */
	for (uint32_t i = 0; i < x->nh; i++)
		if (x->h[i].live && x->h[i].kind == VC_H_CUGRAPH && x->h[i].owner != UINT32_MAX)
			vc_cu_forget_slot(x, i);
	if (x->graphs) {
		pthread_mutex_lock(&x->graphs->a->mu);
		x->graphs->a->x = NULL;
		pthread_mutex_unlock(&x->graphs->a->mu);
	}
	/* The references the guest still holds on user objects: dropped, so
	 * that an object no graph holds is freed (its destructor reaches the
	 * guest no more: the anchor above has no session). */
	uobj_reap(x);
	for (uint32_t i = 0; i < x->nh; i++)
		if (x->h[i].live && x->h[i].kind == VC_H_CUUSEROBJECT) {
			void *obj = x->h[i].real;
			uint32_t refs = x->h[i].refs;

			vc_cu_forget_slot(x, i);
			if (refs)
				x->drv->cuUserObjectRelease(obj, refs);
		}
}

void vc_cu_graph_fini(struct vc_cu_session *x)
{
	struct vc_cu_graphs *g = x->graphs;

	if (!g)
		return;
	anchor_put(g->a); /* user objects still alive keep it */
	free(g->charges);
	free(g->ranges);
	free(g->dot);
	free(g->pairs);
	free(g);
	x->graphs = NULL;
}
