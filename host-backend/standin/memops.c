/* SPDX-License-Identifier: MIT */
/*
 * memops.c - the CI stand-in's stream memory operations and stream
 * attributes. Writes and waits run in stream order on the stand-in's memory:
 * each stream has a queue of them; a wait that is not yet satisfied holds
 * the operations queued after it on its stream, and a write (on any stream)
 * lets them go on. Synchronisations and queries of the stream, and events
 * recorded behind a held operation, see the queue; those of the legacy
 * stream see its context's blocking streams' queues too, as the driver
 * orders legacy work behind theirs. Other work (launches, copies) is not
 * queued behind a held wait (a known gap, standin-gaps.txt).
 * A context destroy drops its streams' queues, and waits on them end.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "standin/standin_priv.h"

struct mop {
	uint32_t op, flags;
	CUdeviceptr addr;
	uint64_t value;
};

/* One stream's queue; special streams get one per context. */
struct mq {
	struct mq *next;
	uint64_t id;
	const void *stream; /* NULL once destroyed: it drains, then goes */
	const void *ctx;
	struct mop *ops;
	size_t n, cap, head;
	uint64_t enq, done; /* operations queued and done, ever */
	struct sattr {
		int set;
		CUstreamAttrValue v;
	} attr[11];
};

/* An event recorded behind queued operations. */
struct mark {
	struct mark *next;
	const void *event;
	uint64_t q, seq;
};

static struct mq *g_q;       /* under g_mu */
static struct mark *g_marks; /* under g_mu */
static uint64_t g_next_q = 1;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;

static int special(const void *s)
{
	return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

/* With g_mu held: stream @s's queue (in the current context for a special
 * one; NULL and CU_STREAM_LEGACY are one stream, as natively). */
static struct mq *queue_of(const void *s, int make)
{
	const void *c;
	struct mq *q;

	if (s == CU_STREAM_LEGACY)
		s = NULL;
	c = special(s) ? (const void *)t_ctx : ((const struct obj *)s)->ctx;

	for (q = g_q; q; q = q->next)
		if (q->stream == s && q->ctx == c)
			return q;
	if (!make || !(q = calloc(1, sizeof(*q))))
		return NULL;
	q->id = g_next_q++;
	q->stream = s;
	q->ctx = c;
	q->next = g_q;
	g_q = q;
	return q;
}

static struct mq *queue_by_id(uint64_t id)
{
	for (struct mq *q = g_q; q; q = q->next)
		if (q->id == id)
			return q;
	return NULL;
}

/* Where an operation's word is: device memory, or registered host memory. */
static uint8_t *target(uint64_t addr, size_t size)
{
	uint8_t *at = vc_smem_ptr(&g_mem, addr, size);

	return at ? at : vc_si_host_ptr(addr, size);
}

static int wait_met(const struct mop *m)
{
	uint64_t v = 0;
	size_t size = m->op == CU_STREAM_MEM_OP_WAIT_VALUE_64 ? 8 : 4;
	uint8_t *at = target(m->addr, size);

	if (!at)
		return 1; /* its memory is gone: nothing left to wait for */
	memcpy(&v, at, size);
	switch (m->flags & 0xf) {
	case CU_STREAM_WAIT_VALUE_EQ:
		return v == m->value;
	case CU_STREAM_WAIT_VALUE_AND:
		return (v & m->value) != 0;
	case CU_STREAM_WAIT_VALUE_NOR:
		return size == 8 ? ~(v | m->value) != 0 : (uint32_t)~((uint32_t)v | (uint32_t)m->value) != 0;
	default: /* GEQ, cyclically as the GPU compares */
		return size == 8 ? (int64_t)(v - m->value) >= 0 : (int32_t)((uint32_t)v - (uint32_t)m->value) >= 0;
	}
}

/* With g_mu held: run what can run, on every queue, until nothing moves. */
static void progress(void)
{
	int moved = 1;

	while (moved) {
		moved = 0;
		for (struct mq *q = g_q; q; q = q->next)
			while (q->head < q->n) {
				struct mop *m = &q->ops[q->head];

				if (m->op == CU_STREAM_MEM_OP_WAIT_VALUE_32 || m->op == CU_STREAM_MEM_OP_WAIT_VALUE_64) {
					if (!wait_met(m))
						break;
				} else if (m->op == CU_STREAM_MEM_OP_WRITE_VALUE_32 ||
					   m->op == CU_STREAM_MEM_OP_WRITE_VALUE_64) {
					size_t size = m->op == CU_STREAM_MEM_OP_WRITE_VALUE_64 ? 8 : 4;
					uint8_t *at = target(m->addr, size);

					if (at)
						memcpy(at, &m->value, size);
				}
				q->head++;
				q->done++;
				moved = 1;
			}
	}
	for (struct mq **pp = &g_q; *pp;) {
		struct mq *q = *pp;

		if (q->head == q->n)
			q->head = q->n = 0;
		if (!q->stream && !q->n && !special(q->stream)) {
			*pp = q->next;
			free(q->ops);
			free(q);
			continue;
		}
		pp = &q->next;
	}
	pthread_cond_broadcast(&g_cv);
}

/* The operations a GPU accepts; addresses must be the stand-in's memory. */
static CUresult check(const CUstreamBatchMemOpParams *p)
{
	size_t size;

	switch (p->operation) {
	case CU_STREAM_MEM_OP_WAIT_VALUE_32:
	case CU_STREAM_MEM_OP_WRITE_VALUE_32:
		size = 4;
		break;
	case CU_STREAM_MEM_OP_WAIT_VALUE_64:
	case CU_STREAM_MEM_OP_WRITE_VALUE_64:
		size = 8;
		break;
	case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
	case CU_STREAM_MEM_OP_BARRIER:
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return target(p->waitValue.address, size) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult s_batch(CUstream s, unsigned count, CUstreamBatchMemOpParams *p, unsigned flags)
{
	struct mq *q = NULL;
	CUresult rc = vc_si_need_ctx();

	if (rc)
		return rc;
	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!count || count > 256 || !p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mu);
	for (unsigned i = 0; i < count && !rc; i++)
		rc = check(&p[i]);
	if (!rc && !(q = queue_of(s, 1)))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (!rc && q->n + count > q->cap) {
		size_t cap = (q->n + count) * 2;
		struct mop *ops = realloc(q->ops, cap * sizeof(*ops));

		if (ops) {
			q->ops = ops;
			q->cap = cap;
		} else {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	for (unsigned i = 0; i < count && !rc; i++) {
		struct mop *m = &q->ops[q->n++];

		m->op = p[i].operation;
		m->flags = p[i].waitValue.flags;
		m->addr = p[i].waitValue.address;
		m->value = p[i].operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
					   p[i].operation == CU_STREAM_MEM_OP_WRITE_VALUE_32
				   ? p[i].waitValue.value
				   : p[i].waitValue.value64;
		if (m->op == CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES || m->op == CU_STREAM_MEM_OP_BARRIER)
			m->addr = 0;
		q->enq++;
	}
	if (!rc)
		progress();
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult one(CUstream s, CUstreamBatchMemOpType op, CUdeviceptr a, uint64_t v, unsigned flags)
{
	CUstreamBatchMemOpParams p;

	memset(&p, 0, sizeof(p));
	p.operation = op;
	p.waitValue.address = a;
	p.waitValue.value64 = v;
	p.waitValue.flags = flags;
	return s_batch(s, 1, &p, 0);
}

static CUresult s_write32(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f)
{
	return one(s, CU_STREAM_MEM_OP_WRITE_VALUE_32, a, v, f);
}

static CUresult s_write64(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f)
{
	return one(s, CU_STREAM_MEM_OP_WRITE_VALUE_64, a, v, f);
}

static CUresult s_wait32(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f)
{
	return one(s, CU_STREAM_MEM_OP_WAIT_VALUE_32, a, v, f);
}

static CUresult s_wait64(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f)
{
	return one(s, CU_STREAM_MEM_OP_WAIT_VALUE_64, a, v, f);
}

/* ---- what synchronisations and events see (stream.c, ctx.c call these) --------- */

/* With g_mu held: whether stream @s has operations held, or what the
 * driver orders it behind has: for the legacy stream, every blocking stream
 * of the calling thread's context (the per-thread one included). */
static int held_for(const void *s)
{
	struct mq *own = queue_of(s, 0);

	if (own && own->head < own->n)
		return 1;
	if (s && s != CU_STREAM_LEGACY)
		return 0;
	for (struct mq *q = g_q; q; q = q->next)
		if (q->ctx == (const void *)t_ctx && q->head < q->n && q->stream &&
		    (q->stream == CU_STREAM_PER_THREAD ||
		     (!special(q->stream) && !(((const struct obj *)q->stream)->flags & CU_STREAM_NON_BLOCKING))))
			return 1;
	return 0;
}

int vc_si_memops_pending(CUstream s)
{
	int n;

	pthread_mutex_lock(&g_mu);
	progress();
	n = held_for(s);
	pthread_mutex_unlock(&g_mu);
	return n;
}

/* With g_mu held: wait a while for progress (memory may change by a copy). */
static void nap(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&g_cv, &g_mu, &ts);
	progress();
}

CUresult vc_si_memops_drain(CUstream s)
{
	pthread_mutex_lock(&g_mu);
	progress();
	while (held_for(s))
		nap();
	pthread_mutex_unlock(&g_mu);
	return vc_si_is(s, T_STREAM) || special(s) ? CUDA_SUCCESS : CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

CUresult vc_si_memops_drain_ctx(const void *c)
{
	int busy = 1;

	pthread_mutex_lock(&g_mu);
	progress();
	while (busy) {
		busy = 0;
		for (struct mq *q = g_q; q && !busy; q = q->next)
			busy = q->ctx == c && q->head < q->n;
		if (busy)
			nap();
	}
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

void vc_si_memops_mark(CUevent e, CUstream s)
{
	struct mq *q;
	struct mark *m, **pp;

	pthread_mutex_lock(&g_mu);
	for (pp = &g_marks; *pp; pp = &(*pp)->next)
		if ((*pp)->event == e) {
			m = *pp;
			*pp = m->next;
			free(m);
			break;
		}
	q = queue_of(s, 0);
	if (q && q->head < q->n && (m = calloc(1, sizeof(*m)))) {
		m->event = e;
		m->q = q->id;
		m->seq = q->enq;
		m->next = g_marks;
		g_marks = m;
	}
	pthread_mutex_unlock(&g_mu);
}

/* With g_mu held: whether event @e still waits for queued operations. */
static int mark_pending(const void *e)
{
	for (struct mark *m = g_marks; m; m = m->next)
		if (m->event == e) {
			struct mq *q = queue_by_id(m->q);

			return q && q->done < m->seq;
		}
	return 0;
}

int vc_si_memops_event_pending(CUevent e)
{
	int n;

	pthread_mutex_lock(&g_mu);
	progress();
	n = mark_pending(e);
	pthread_mutex_unlock(&g_mu);
	return n;
}

CUresult vc_si_memops_event_wait(CUevent e)
{
	pthread_mutex_lock(&g_mu);
	progress();
	while (mark_pending(e) && vc_si_is(e, T_EVENT))
		nap();
	pthread_mutex_unlock(&g_mu);
	return vc_si_is(e, T_EVENT) ? CUDA_SUCCESS : CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

void vc_si_memops_stream_gone(CUstream s)
{
	pthread_mutex_lock(&g_mu);
	for (struct mq *q = g_q; q; q = q->next)
		if (q->stream == s && !special(s))
			q->stream = NULL; /* drains on its own, as a destroyed stream's work does */
	progress();
	pthread_mutex_unlock(&g_mu);
}

void vc_si_memops_ctx_gone(const void *c)
{
	pthread_mutex_lock(&g_mu);
	for (struct mq **pp = &g_q; *pp;) {
		struct mq *q = *pp;

		if (q->ctx == c) {
			*pp = q->next;
			free(q->ops);
			free(q);
			continue;
		}
		pp = &q->next;
	}
	pthread_cond_broadcast(&g_cv);
	pthread_mutex_unlock(&g_mu);
}

/* ---- stream attributes: stored and answered ---------------------------------------- */

static CUresult s_set_attr(CUstream s, CUstreamAttrID a, const CUstreamAttrValue *v)
{
	struct mq *q;

	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!v || (a != CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW && a != CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY &&
		   a != CU_LAUNCH_ATTRIBUTE_PRIORITY && a != CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP &&
		   a != CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN))
		return CUDA_ERROR_INVALID_VALUE;
	if (a == CU_LAUNCH_ATTRIBUTE_PRIORITY && vc_si_is(s, T_STREAM)) {
		int p = v->priority;

		((struct obj *)s)->priority = p < -5 ? -5 : p > 0 ? 0 : p; /* clamped to the range, as natively */
		return CUDA_SUCCESS;
	}
	pthread_mutex_lock(&g_mu);
	if ((q = queue_of(s, 1))) {
		q->attr[a].set = 1;
		q->attr[a].v = *v;
	}
	pthread_mutex_unlock(&g_mu);
	return q ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult s_get_attr(CUstream s, CUstreamAttrID a, CUstreamAttrValue *v)
{
	struct mq *q;

	if (!vc_si_stream_ok(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!v || (a != CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW && a != CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY &&
		   a != CU_LAUNCH_ATTRIBUTE_PRIORITY && a != CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP &&
		   a != CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN))
		return CUDA_ERROR_INVALID_VALUE;
	memset(v, 0, sizeof(*v));
	if (a == CU_LAUNCH_ATTRIBUTE_PRIORITY) {
		v->priority = vc_si_is(s, T_STREAM) ? ((struct obj *)s)->priority : 0;
		return CUDA_SUCCESS;
	}
	if (a == CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY)
		v->syncPolicy = CU_SYNC_POLICY_AUTO;
	if (a == CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP)
		v->memSyncDomainMap.remote = 1; /* the default map: remote work in domain 1 */
	pthread_mutex_lock(&g_mu);
	if ((q = queue_of(s, 0)) && q->attr[a].set)
		*v = q->attr[a].v;
	pthread_mutex_unlock(&g_mu);
	return CUDA_SUCCESS;
}

static CUresult s_copy_attrs(CUstream dst, CUstream src)
{
	static const CUstreamAttrID ids[] = {CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
					     CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, CU_LAUNCH_ATTRIBUTE_PRIORITY,
					     CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN};
	CUstreamAttrValue v;
	CUresult rc;

	if (!vc_si_stream_ok(dst) || !vc_si_stream_ok(src))
		return CUDA_ERROR_INVALID_HANDLE;
	for (unsigned i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if ((rc = s_get_attr(src, ids[i], &v)) || (rc = s_set_attr(dst, ids[i], &v)))
			return rc;
	return CUDA_SUCCESS;
}

static CUresult s_flush_rdma(CUflushGPUDirectRDMAWritesTarget t, CUflushGPUDirectRDMAWritesScope sc)
{
	if (t != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX ||
	    (sc != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER && sc != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES))
		return CUDA_ERROR_INVALID_VALUE;
	return vc_si_need_ctx();
}

void vc_si_fill_memops(struct vc_cuda_driver *d)
{
	d->cuStreamBatchMemOp_v2 = s_batch;
	d->cuStreamWriteValue32_v2 = s_write32;
	d->cuStreamWriteValue64_v2 = s_write64;
	d->cuStreamWaitValue32_v2 = s_wait32;
	d->cuStreamWaitValue64_v2 = s_wait64;
	d->cuStreamSetAttribute = s_set_attr;
	d->cuStreamGetAttribute = s_get_attr;
	d->cuStreamCopyAttributes = s_copy_attrs;
	d->cuFlushGPUDirectRDMAWrites = s_flush_rdma;
}
