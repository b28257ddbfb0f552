/* SPDX-License-Identifier: MIT */
/*
 * logs.c - the driver's error logs (host-backend/cuda/logs.c). Dumps come
 * from the host's driver a reply's data at a time; cuLogsDumpToFile writes
 * the guest's file, since the path is the guest's. Callbacks are kept here:
 * while there is one, the host's own driver callback queues every message
 * (level and text as the driver gave them), and after a call that failed the
 * library fetches them and calls the callbacks on the failing thread, before
 * that call returns, as the driver calls them during the call. Messages of
 * calls that succeeded (warnings) arrive with the next failure; errors the
 * library answers itself, without the driver, have no message.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vc_cu_guest.h"
#include "vc_cuda_green.h"

struct logcb {
	struct logcb *next;
	CUlogsCallback fn;
	void *data;
};

static struct logcb *g_cbs; /* under g_mu */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
unsigned long vc_cu_log_callbacks; /* how many: written under g_mu, read with one relaxed load */
static __thread int t_delivering;

static CUresult logs_op(struct vc_cu_req_logs *rq, struct vc_cu_rep_logs *rp, void *out, size_t cap, size_t *got)
{
	memset(rp, 0, sizeof(*rp));
	return vc_cu_call_sized(VC_CU_vcLogs, rq, sizeof(*rq), NULL, 0, rp, sizeof(*rp), out, cap, got, 0);
}

/* A dump of at most @cap bytes (NUL included) into @buf: the driver's answer. */
static CUresult dump(CUlogIterator *iterator, char *buf, size_t *size, unsigned flags)
{
	struct vc_cu_req_logs rq = {.op = VC_CU_LOGS_DUMP, .size = *size, .flags = flags};
	struct vc_cu_rep_logs rp;
	size_t cap = *size, have = 0, got = 0;
	CUresult rc;

	if (iterator) {
		rq.has_iter = 1;
		rq.iter = *iterator;
	}
	if ((rc = logs_op(&rq, &rp, buf, cap < VC_CU_LOGS_MAX ? cap : VC_CU_LOGS_MAX, &have)))
		return rc;
	if (rp.size >= cap && rp.size) /* never more than the room before the NUL */
		return CUDA_ERROR_UNKNOWN;
	while (have < rp.size) {
		struct vc_cu_req_logs rr = {.op = VC_CU_LOGS_READ, .offset = have};
		struct vc_cu_rep_logs r2;

		if ((rc = logs_op(&rr, &r2, buf + have, rp.size - have, &got)))
			return rc;
		if (!got)
			return CUDA_ERROR_UNKNOWN;
		have += got;
	}
	if (rp.rc == CUDA_SUCCESS && cap)
		buf[rp.size] = 0;
	*size = rp.size;
	if (iterator)
		*iterator = rp.iter;
	return (CUresult)rp.rc;
}

CUresult CUDAAPI cuLogsDumpToMemory(CUlogIterator *iterator, char *buffer, size_t *size, unsigned int flags)
{
	if (!buffer || !size)
		return CUDA_ERROR_INVALID_VALUE;
	return dump(iterator, buffer, size, flags);
}

CUresult CUDAAPI cuLogsDumpToFile(CUlogIterator *iterator, const char *pathToFile, unsigned int flags)
{
	size_t size = VC_CU_LOGS_MAX;
	char *buf;
	CUresult rc;
	int fd;

	if (!pathToFile)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!(buf = malloc(size)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* Everything the driver keeps fits (25600 bytes). */
	rc = dump(iterator, buf, &size, flags);
	if (rc == CUDA_SUCCESS) {
		/* The guest's file, written over as the driver does (measured
		 * on an H100: a second dump does not append). */
		fd = open(pathToFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			rc = CUDA_ERROR_INVALID_VALUE;
		} else {
			for (size_t off = 0; off < size;) {
				ssize_t n = write(fd, buf + off, size - off);

				if (n <= 0) {
					rc = CUDA_ERROR_INVALID_VALUE;
					break;
				}
				off += (size_t)n;
			}
			close(fd);
		}
	}
	free(buf);
	return rc;
}

static CUresult watch(unsigned on)
{
	struct vc_cu_req_logs rq = {.op = VC_CU_LOGS_WATCH, .flags = on};
	struct vc_cu_rep_logs rp;
	CUresult rc = logs_op(&rq, &rp, NULL, 0, NULL);

	return rc ? rc : (CUresult)rp.rc;
}

CUresult CUDAAPI cuLogsRegisterCallback(CUlogsCallback callbackFunc, void *userData, CUlogsCallbackHandle *callback_out)
{
	struct logcb *c;
	CUresult rc = CUDA_SUCCESS;

	if (!callbackFunc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!(c = calloc(1, sizeof(*c))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->fn = callbackFunc;
	c->data = userData;
	pthread_mutex_lock(&g_mu);
	if (!g_cbs)
		rc = watch(1); /* the host starts queueing the driver's messages */
	if (rc == CUDA_SUCCESS) {
		c->next = g_cbs;
		g_cbs = c;
		__atomic_store_n(&vc_cu_log_callbacks, vc_cu_log_callbacks + 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&g_mu);
	if (rc != CUDA_SUCCESS) {
		free(c);
		return rc;
	}
	if (callback_out)
		*callback_out = (CUlogsCallbackHandle)c;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLogsUnregisterCallback(CUlogsCallbackHandle callback)
{
	struct logcb **pp, *c = NULL;

	pthread_mutex_lock(&g_mu);
	for (pp = &g_cbs; *pp; pp = &(*pp)->next)
		if (*pp == (struct logcb *)callback) {
			c = *pp;
			*pp = c->next;
			__atomic_store_n(&vc_cu_log_callbacks, vc_cu_log_callbacks - 1, __ATOMIC_RELAXED);
			break;
		}
	if (c && !g_cbs)
		watch(0);
	pthread_mutex_unlock(&g_mu);
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	free(c);
	return CUDA_SUCCESS;
}

/* Call every callback with message @m (level, text of len bytes at @text). */
static void call_all(int32_t level, const char *text, uint32_t len)
{
	struct {
		CUlogsCallback fn;
		void *data;
	} fns[64];
	unsigned n = 0;
	char *msg = malloc((size_t)len + 1);

	if (!msg)
		return;
	pthread_mutex_lock(&g_mu);
	for (struct logcb *c = g_cbs; c && n < 64; c = c->next) {
		fns[n].fn = c->fn;
		fns[n++].data = c->data;
	}
	pthread_mutex_unlock(&g_mu);
	for (unsigned i = 0; i < n; i++) {
		/* A fresh copy each: the callback may write into its message. */
		memcpy(msg, text, len);
		msg[len] = 0;
		fns[i].fn(fns[i].data, (CUlogLevel)level, msg, len);
	}
	free(msg);
}

void vc_cu_logs_deliver(void)
{
	uint8_t *buf;
	size_t cap = VC_DEFAULT_SLOT_SIZE_MIN_DATA;

	if (t_delivering || !(buf = malloc(cap)))
		return;
	t_delivering = 1;
	for (int more = 1, rounds = 0; more && rounds < 64; rounds++) {
		struct vc_cu_req_logs rq = {.op = VC_CU_LOGS_FETCH};
		struct vc_cu_rep_logs rp;
		size_t got = 0, off = 0;

		if (logs_op(&rq, &rp, buf, cap, &got) != CUDA_SUCCESS)
			break;
		more = rp.iter != 0 && rp.size != 0;
		for (uint64_t i = 0; i < rp.size && off + sizeof(struct vc_cu_log_msg) <= got; i++) {
			struct vc_cu_log_msg m;

			memcpy(&m, buf + off, sizeof(m));
			off += sizeof(m);
			if (m.len > got - off)
				break;
			call_all(m.level, (const char *)buf + off, m.len);
			off += (m.len + 7u) & ~7u;
		}
	}
	t_delivering = 0;
	free(buf);
}
