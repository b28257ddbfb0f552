/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - vcuda-mgmtd's metrics in the Prometheus text format
 * (docs/METRICS.md lists every name, its type, labels and unit).
 *
 * Two parts: counters of what the daemon sees happen (sessions opened and
 * closed with their reason, memory reclaimed, QEMU connections and
 * management requests refused, servers started and ended), kept in this
 * process from the moment the endpoint is enabled; and, at each scrape, the
 * state: GPUs and VMs from the database, and each running VM's live figures
 * from its vcuda-server's admin "status" (memory used, sessions, kernel
 * launches, GPU time under contention, quota refusals).
 *
 * The HTTP endpoint (metrics_http.c, libmicrohttpd) runs in the daemon's
 * poll loop: a scrape is handled between other work, like a vcudactl
 * request. It is off unless --metrics-listen is given.
 */
#ifndef VC_MGMT_METRICS_H
#define VC_MGMT_METRICS_H

#include <jansson.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "mgmtd.h"

/** vc_metrics_enable() - start counting (the hooks below do nothing before). 0 or -ENOMEM. */
int vc_metrics_enable(void);

/** vc_metrics_disable() - stop counting and forget every counter. */
void vc_metrics_disable(void);

/**
 * vc_metrics_event() - an event of @kind ("session.opened") about VM @vm
 * (NULL: none) was logged outside a request (vc_mgmtd_event()): sessions
 * opened, QEMU connections refused, servers started and ended are counted.
 */
void vc_metrics_event(const char *kind, const char *vm);

/**
 * vc_metrics_session_closed() - a session of VM @vm ended for @reason (the
 * server's word: "client-exit", "idle", "fatal", "crashed", "stopped",
 * "failed"; NULL or anything else counts as "unknown"), freeing @freed bytes
 * of device memory.
 */
void vc_metrics_session_closed(const char *vm, const char *reason, uint64_t freed);

/** vc_metrics_qemu_refused() - a QEMU connection was refused with WELCOME status @status (-errno). */
void vc_metrics_qemu_refused(int status);

/** vc_metrics_request() - a management request was answered with @reply ("ok", or "code"). */
void vc_metrics_request(const json_t *reply);

/**
 * vc_metrics_render() - every metric, as Prometheus text (format 0.0.4), in a
 * malloc'd string of *@len bytes; NULL when out of memory. Asks each running
 * VM's server for its status (bounded by VC_ADMIN_TIMEOUT_MS each).
 */
char *vc_metrics_render(struct vc_mgmtd *d, size_t *len);

/**
 * vc_metrics_parse_listen() - "PORT" (loopback: 127.0.0.1), "HOST:PORT"
 * (an IPv4 literal or "localhost") or "[IPV6]:PORT" into @sa (a struct
 * sockaddr_storage), its length in *@salen. Returns 0 or -EINVAL.
 */
int vc_metrics_parse_listen(const char *s, void *sa, unsigned *salen);

/**
 * vc_metrics_http_start() - serve GET /metrics on @listen (as
 * vc_metrics_parse_listen()) for @d, and enable the counters. Returns 0, or
 * -errno with a sentence in @err.
 */
int vc_metrics_http_start(struct vc_mgmtd *d, const char *listen, char *err, size_t errlen);

/** vc_metrics_http_pollfd() - the endpoint's descriptor into @p; returns 1, or 0 when it is off. */
int vc_metrics_http_pollfd(struct pollfd *p);

/** vc_metrics_http_timeout() - ms until the endpoint has work due (idle connections), or -1. */
int vc_metrics_http_timeout(void);

/** vc_metrics_http_run() - serve what is ready (never blocks on a client). */
void vc_metrics_http_run(void);

/** vc_metrics_http_stop() - close the endpoint and its connections. */
void vc_metrics_http_stop(void);

#endif /* VC_MGMT_METRICS_H */
