/* SPDX-License-Identifier: MIT */
/*
 * logs.c - the driver's error logs (vcLogs; cuLogsCurrent is generated).
 *
 * A dump is made into the host's memory, at most VC_CU_LOGS_MAX bytes (the
 * driver keeps 25600), and handed back a reply's data at a time; the guest
 * writes it into the caller's buffer or file. The driver's answer and its
 * outputs (iterator, size) travel in the reply, since it sets them on an
 * error too.
 *
 * Callbacks are the guest's: while it has any, the host registers one of its
 * own with the driver, which queues each message (level and text, as the
 * driver gave them) for the guest; the guest fetches them after a call that
 * failed and calls its callbacks on that thread. The driver's log and its
 * callbacks are the process's: a worker serves one session, so they are that
 * session's (an embedder serving several sessions in one process gives each
 * every session's messages).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"
#include "vc_cuda_green.h"

#define QUEUE_MAX (64u << 10)  /* bytes of messages waiting for the guest */
#define MSG_MAX 4096u          /* bytes of one message kept (the rest is cut) */

struct vc_cu_logs {
	char *dump; /* the last dump's text */
	uint64_t ndump;
	pthread_mutex_t mu; /* the queue: the driver calls on_log() on any thread */
	uint8_t *q;
	uint32_t qlen;
	uint64_t dropped;
	CUlogsCallbackHandle cb;
	bool watching;
};

static struct vc_cu_logs *state(struct vc_cu_session *x)
{
	if (!x->logs && (x->logs = calloc(1, sizeof(*x->logs))))
		pthread_mutex_init(&x->logs->mu, NULL);
	return x->logs;
}

static uint32_t msg_bytes(uint32_t n)
{
	return (uint32_t)sizeof(struct vc_cu_log_msg) + ((n + 7u) & ~7u);
}

/* The driver's callback: queue the message for the guest (no driver call here). */
static void on_log(void *data, CUlogLevel level, char *message, size_t length)
{
	struct vc_cu_logs *l = data;
	struct vc_cu_log_msg m = {.level = (int32_t)level};
	uint32_t need;

	if (!message)
		return;
	m.len = (uint32_t)(length > MSG_MAX ? MSG_MAX : length);
	need = msg_bytes(m.len);
	pthread_mutex_lock(&l->mu);
	if (!l->q)
		l->q = malloc(QUEUE_MAX);
	if (!l->q || l->qlen + need > QUEUE_MAX) {
		l->dropped++;
	} else {
		memcpy(l->q + l->qlen, &m, sizeof(m));
		memset(l->q + l->qlen + sizeof(m), 0, need - sizeof(m));
		memcpy(l->q + l->qlen + sizeof(m), message, m.len);
		l->qlen += need;
	}
	pthread_mutex_unlock(&l->mu);
}

/* Whole messages from the front of the queue into the reply data. */
static void fetch(struct vc_cu_logs *l, struct vc_cu_out *out, struct vc_cu_rep_logs *rp)
{
	uint32_t off = 0, n = 0;

	pthread_mutex_lock(&l->mu);
	while (out->data && off < l->qlen) {
		struct vc_cu_log_msg m;
		uint32_t b;

		memcpy(&m, l->q + off, sizeof(m));
		b = msg_bytes(m.len);
		if (off + b > out->data_cap)
			break;
		off += b;
		n++;
	}
	if (off) {
		memcpy(out->data, l->q, off);
		memmove(l->q, l->q + off, l->qlen - off);
		l->qlen -= off;
	}
	rp->size = n;
	rp->iter = l->qlen != 0; /* more to fetch */
	rp->dropped = l->dropped;
	l->dropped = 0;
	pthread_mutex_unlock(&l->mu);
	out->data_len = off;
}

static int dump(struct vc_cu_session *x, struct vc_cu_logs *l, const struct vc_cu_req_logs *rq,
		struct vc_cu_out *out, struct vc_cu_rep_logs *rp)
{
	size_t cap = rq->size > VC_CU_LOGS_MAX ? VC_CU_LOGS_MAX : (size_t)rq->size, sz = cap;
	CUlogIterator it = rq->iter;
	char *buf = malloc(cap + 1);

	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rp->rc = (int32_t)x->drv->cuLogsDumpToMemory(rq->has_iter ? &it : NULL, buf, &sz, rq->flags);
	rp->iter = it;
	if (sz >= cap) /* the driver keeps room for its NUL: anything else is not a dump */
		sz = 0;
	rp->size = sz;
	free(l->dump);
	l->dump = buf;
	l->ndump = sz;
	out->data_len = 0;
	if (out->data) {
		out->data_len = (uint32_t)(sz < out->data_cap ? sz : out->data_cap);
		memcpy(out->data, buf, out->data_len);
	}
	return 0;
}

int vc_cu_manual_vcLogs(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_logs rq;
	struct vc_cu_rep_logs rp = {0};
	struct vc_cu_logs *l;
	int rc = 0;

	TAKE(rq);
	if (!(l = state(x)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	switch (rq.op) {
	case VC_CU_LOGS_DUMP:
		rc = dump(x, l, &rq, out, &rp);
		break;
	case VC_CU_LOGS_READ:
		if (rq.offset > l->ndump)
			return CUDA_ERROR_INVALID_VALUE;
		rp.size = l->ndump - rq.offset < (out->data ? out->data_cap : 0) ? l->ndump - rq.offset
										  : (out->data ? out->data_cap : 0);
		if (rp.size)
			memcpy(out->data, l->dump + rq.offset, rp.size);
		out->data_len = (uint32_t)rp.size;
		break;
	case VC_CU_LOGS_WATCH:
		if (rq.flags && !l->watching) {
			rp.rc = (int32_t)x->drv->cuLogsRegisterCallback(on_log, l, &l->cb);
			l->watching = rp.rc == CUDA_SUCCESS;
		} else if (!rq.flags && l->watching) {
			rp.rc = (int32_t)x->drv->cuLogsUnregisterCallback(l->cb);
			l->watching = false;
		}
		break;
	case VC_CU_LOGS_FETCH:
		fetch(l, out, &rp);
		break;
	default:
		return -VC_FATAL_PAYLOAD;
	}
	if (rc)
		return rc;
	REPLY(rp);
	return 0;
}

void vc_cu_logs_close(struct vc_cu_session *x)
{
	struct vc_cu_logs *l = x->logs;

	if (!l)
		return;
	if (l->watching)
		x->drv->cuLogsUnregisterCallback(l->cb);
	pthread_mutex_destroy(&l->mu);
	free(l->q);
	free(l->dump);
	free(l);
	x->logs = NULL;
}
