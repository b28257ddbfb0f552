/* SPDX-License-Identifier: MIT */
/*
 * logs.c - the CI stand-in's error log: a TEST DOUBLE of the driver's. The
 * stand-in's device-resource and green-context calls log their failures
 * (vc_si_log()) as one line "[CUDA][E] <call> failed with error <n>";
 * registered callbacks get each message as it is logged, on the failing
 * thread, as the driver calls them. The buffer keeps the newest 25600 bytes
 * of messages, as the driver's does; iterators count messages.
 */
#include <stdio.h>
#include <string.h>

#include "standin/standin_priv.h"

#define LOG_BYTES 25600u
#define LOG_MSGS 256u
#define CB_MAX 16u

static struct {
	char text[160];
	uint32_t len; /* without the newline */
} g_log[LOG_MSGS]; /* under g_log_mu: message i is g_log[i % LOG_MSGS] */
static uint32_t g_nlog; /* messages logged so far */
static struct {
	CUlogsCallback fn;
	void *data;
	int live;
} g_cb[CB_MAX];
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;

CUresult vc_si_log(const char *fn, CUresult rc)
{
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "[CUDA][E] %s failed with error %d", fn, (int)rc);
	CUlogsCallback fns[CB_MAX];
	void *data[CB_MAX];
	unsigned k = 0;

	if (n < 0)
		return rc;
	if ((size_t)n >= sizeof(msg))
		n = (int)sizeof(msg) - 1;
	pthread_mutex_lock(&g_log_mu);
	memcpy(g_log[g_nlog % LOG_MSGS].text, msg, (size_t)n + 1);
	g_log[g_nlog % LOG_MSGS].len = (uint32_t)n;
	g_nlog++;
	for (unsigned i = 0; i < CB_MAX; i++)
		if (g_cb[i].live) {
			fns[k] = g_cb[i].fn;
			data[k++] = g_cb[i].data;
		}
	pthread_mutex_unlock(&g_log_mu);
	for (unsigned i = 0; i < k; i++)
		fns[i](data[i], CU_LOG_LEVEL_ERROR, msg, (size_t)n);
	return rc;
}

static CUresult s_logs_current(CUlogIterator *it, unsigned flags)
{
	(void)flags; /* reserved, yet the driver takes any (measured on an H100) */
	if (!it)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_log_mu);
	*it = g_nlog;
	pthread_mutex_unlock(&g_log_mu);
	return CUDA_SUCCESS;
}

/* With g_log_mu held: the oldest message still kept. */
static uint32_t oldest(void)
{
	uint32_t first = g_nlog > LOG_MSGS ? g_nlog - LOG_MSGS : 0, bytes = 0, i = g_nlog;

	/* The newest LOG_BYTES bytes of messages. */
	while (i > first && bytes + g_log[(i - 1) % LOG_MSGS].len + 1 <= LOG_BYTES)
		bytes += g_log[--i % LOG_MSGS].len + 1;
	return i;
}

static CUresult s_logs_dump(CUlogIterator *it, char *buf, size_t *size, unsigned flags)
{
	static const char trunc[] = "[CUDA][W] earlier messages were left out\n";
	uint32_t from, fit, i;
	size_t need = 0, cap, w = 0;
	int cut;

	if (!buf || !size || flags)
		return CUDA_ERROR_INVALID_VALUE;
	cap = *size;
	pthread_mutex_lock(&g_log_mu);
	from = oldest();
	if (it && *it > from)
		from = *it > g_nlog ? g_nlog : *it;
	if (from == g_nlog) {
		pthread_mutex_unlock(&g_log_mu);
		*size = 0;
		if (cap)
			buf[0] = 0;
		return CUDA_SUCCESS;
	}
	/* The newest messages that fit with the NUL (and a note when some do not). */
	for (fit = g_nlog; fit > from && need + g_log[(fit - 1) % LOG_MSGS].len + 1 + 1 <= cap; fit--)
		need += g_log[(fit - 1) % LOG_MSGS].len + 1;
	cut = fit > from;
	if (cut)
		while (fit < g_nlog && need + sizeof(trunc) > cap) /* room for the note */
			need -= g_log[fit++ % LOG_MSGS].len + 1;
	if (fit == g_nlog) {
		pthread_mutex_unlock(&g_log_mu);
		*size = 0;
		return CUDA_ERROR_INVALID_VALUE; /* not one message fits */
	}
	if (cut) {
		memcpy(buf, trunc, sizeof(trunc) - 1);
		w = sizeof(trunc) - 1;
	}
	for (i = fit; i < g_nlog; i++) {
		memcpy(buf + w, g_log[i % LOG_MSGS].text, g_log[i % LOG_MSGS].len);
		w += g_log[i % LOG_MSGS].len;
		buf[w++] = '\n';
	}
	buf[w] = 0;
	if (it)
		*it = g_nlog;
	pthread_mutex_unlock(&g_log_mu);
	*size = w;
	return CUDA_SUCCESS;
}

static CUresult s_logs_register(CUlogsCallback fn, void *data, CUlogsCallbackHandle *out)
{
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_log_mu);
	for (unsigned i = 0; i < CB_MAX; i++)
		if (!g_cb[i].live) {
			g_cb[i].fn = fn;
			g_cb[i].data = data;
			g_cb[i].live = 1;
			pthread_mutex_unlock(&g_log_mu);
			if (out)
				*out = (CUlogsCallbackHandle)&g_cb[i];
			return CUDA_SUCCESS;
		}
	pthread_mutex_unlock(&g_log_mu);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult s_logs_unregister(CUlogsCallbackHandle h)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&g_log_mu);
	for (unsigned i = 0; i < CB_MAX; i++)
		if (h == (CUlogsCallbackHandle)&g_cb[i] && g_cb[i].live) {
			g_cb[i].live = 0;
			rc = CUDA_SUCCESS;
		}
	pthread_mutex_unlock(&g_log_mu);
	return rc;
}

void vc_si_fill_logs(struct vc_cuda_driver *d)
{
	d->cuLogsCurrent = s_logs_current;
	d->cuLogsDumpToMemory = s_logs_dump;
	d->cuLogsRegisterCallback = s_logs_register;
	d->cuLogsUnregisterCallback = s_logs_unregister;
}
