/* SPDX-License-Identifier: MIT */
/*
 * metrics_http.c - GET /metrics over HTTP (libmicrohttpd), inside vcuda-mgmtd's
 * poll loop (metrics.h).
 *
 * libmicrohttpd runs without a thread of its own (MHD_USE_EPOLL, no
 * MHD_USE_INTERNAL_POLLING_THREAD): its epoll descriptor is one more entry
 * in the daemon's poll set, and MHD_run() serves whatever is ready without
 * blocking on a client. The handler therefore runs on the daemon's one
 * thread and reads its state as every request handler does. Clients are
 * untrusted: at most CONN_MAX connections (2 per address), 64 KiB of memory
 * each, dropped after IDLE_S seconds of silence; only GET and HEAD of
 * /metrics are answered, everything else gets 404 or 405.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "metrics.h"
#include "util.h"

#define CONN_MAX 16
#define CONN_PER_IP 4
#define CONN_MEM (64u << 10)
#define IDLE_S 10

static struct MHD_Daemon *g_mhd;
static struct vc_mgmtd *g_d;

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	vc_mlog("metrics endpoint: %s", msg);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, char *body, size_t len, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	char *body = strdup(msg);

	return body ? reply(c, status, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_len, void **state)
{
	size_t len;
	char *body;

	(void)cls;
	(void)version;
	(void)upload;
	(void)state;
	if (*upload_len)
		return MHD_NO; /* a body on a GET: not ours to read */
	if (strcmp(url, "/metrics"))
		return text(c, MHD_HTTP_NOT_FOUND, "vcuda-mgmtd serves /metrics only\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD\n");
	body = vc_metrics_render(g_d, &len);
	if (!body)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return reply(c, MHD_HTTP_OK, body, len, "text/plain; version=0.0.4; charset=utf-8");
}

static void describe(const struct sockaddr_storage *sa, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)sa;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(out, len, "[%s]:%u", host, ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const void *)sa;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(out, len, "%s:%u", host, ntohs(a->sin_port));
	}
}

static bool is_loopback(const struct sockaddr_storage *sa)
{
	if (sa->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
}

int vc_metrics_http_start(struct vc_mgmtd *d, const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	unsigned salen, flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	char where[80];

	if (vc_metrics_parse_listen(listen, &sa, &salen)) {
		snprintf(err, errlen, "--metrics-listen %s: expected PORT, HOST:PORT (an IPv4 address) or [IPV6]:PORT",
			 listen);
		return -EINVAL;
	}
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	g_d = d;
	if (vc_metrics_enable()) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g_mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_MAX,
				 MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)CONN_PER_IP,
				 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEM, MHD_OPTION_CONNECTION_TIMEOUT,
				 (unsigned)IDLE_S, MHD_OPTION_END);
	if (!g_mhd) {
		int e = errno ? errno : EADDRINUSE;

		vc_metrics_disable();
		snprintf(err, errlen, "cannot serve metrics on %s: %s", listen, strerror(e));
		return -e;
	}
	describe(&sa, where, sizeof(where));
	vc_mlog("metrics on http://%s/metrics%s", where,
		is_loopback(&sa) ? "" : " (not loopback: whoever reaches it reads VM names and usage)");
	return 0;
}

int vc_metrics_http_pollfd(struct pollfd *p)
{
	const union MHD_DaemonInfo *i;

	if (!g_mhd || !(i = MHD_get_daemon_info(g_mhd, MHD_DAEMON_INFO_EPOLL_FD)))
		return 0;
	*p = (struct pollfd){.fd = i->epoll_fd, .events = POLLIN};
	return 1;
}

int vc_metrics_http_timeout(void)
{
	MHD_UNSIGNED_LONG_LONG ms;

	if (!g_mhd || MHD_get_timeout(g_mhd, &ms) != MHD_YES)
		return -1;
	return ms > 60000 ? 60000 : (int)ms;
}

void vc_metrics_http_run(void)
{
	if (g_mhd)
		MHD_run(g_mhd);
}

void vc_metrics_http_stop(void)
{
	if (!g_mhd)
		return;
	MHD_stop_daemon(g_mhd);
	g_mhd = NULL;
	vc_metrics_disable();
}
