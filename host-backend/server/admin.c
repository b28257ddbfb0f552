/* SPDX-License-Identifier: MIT */
/*
 * admin.c - the admin socket: line-delimited JSON (Jansson) for the host
 * manager. The socket is the server owner's alone (mode 0600); every request
 * is still checked, and a malformed one gets an error reply, an oversized
 * one closes that connection. A subscriber that does not read its events
 * is dropped rather than allowed to stall the listener.
 */
#include "server/admin.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "resources/gpushare.h"
#include "server/server_config.h"
#include "vc_shm.h"
#include "vc_sock.h"
#include "vc_time.h"

#define LINE_MAX_BYTES (64u << 10)
#define MAX_CONNS 16
#define MAX_FDS 4
#define RECENT 64 /* session-closed events kept for a subscriber that was away */

struct conn {
	int fd;
	bool subscribed;
	size_t len;
	int fds[MAX_FDS], nfds;
	char buf[LINE_MAX_BYTES];
};

struct vc_admin {
	struct vc_admin_params p;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd;
	struct conn *c[MAX_CONNS];
	int map[1 + MAX_CONNS]; /* what each pollfd entry is: -1 listener, else conn index */
	int nmap;
	uint64_t seq;             /* events so far; each event carries its number */
	json_t *recent[RECENT];   /* the last session-closed events, a ring */
	unsigned nrecent;         /* how many were ever kept */
};

int vc_admin_create(const struct vc_admin_params *p, struct vc_admin **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct vc_admin *a;
	int rc;

	if (strlen(p->path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->p = *p;
	strcpy(a->path, p->path);
	strcpy(sa.sun_path, p->path);
	a->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (a->lfd < 0) {
		rc = -errno;
		goto err_free;
	}
	if (connect(a->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		rc = -EADDRINUSE;
		goto err_close;
	}
	unlink(p->path);
	if (bind(a->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(p->path, 0600) < 0 ||
	    listen(a->lfd, 8) < 0) {
		rc = -errno;
		goto err_close;
	}
	*out = a;
	return 0;

err_close:
	close(a->lfd);
err_free:
	free(a);
	return rc;
}

static void conn_close(struct vc_admin *a, int i)
{
	struct conn *c = a->c[i];

	for (int k = 0; k < c->nfds; k++)
		close(c->fds[k]);
	close(c->fd);
	free(c);
	a->c[i] = NULL;
}

void vc_admin_destroy(struct vc_admin *a)
{
	if (!a)
		return;
	for (int i = 0; i < MAX_CONNS; i++)
		if (a->c[i])
			conn_close(a, i);
	close(a->lfd);
	unlink(a->path);
	for (unsigned i = 0; i < RECENT; i++)
		json_decref(a->recent[i]);
	free(a);
}

/* One line out; false when the peer cannot take it now (it is then dropped). */
static bool send_json(struct conn *c, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	size_t n, done = 0;
	bool ok = true;

	json_decref(j);
	if (!s)
		return false;
	n = strlen(s);
	s[n++] = '\n'; /* json_dumps leaves room for its NUL: overwrite it */
	while (done < n) {
		ssize_t w = send(c->fd, s + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ok = false;
			break;
		}
		done += (size_t)w;
	}
	free(s);
	return ok;
}

static json_t *error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:b,s:s}", "ok", 0, "error", msg);
}

/*
 * The accounting page (resources/acct.h) is shared with the workers. The
 * callers have seen the worker publish the client's pid, uid and comm:
 * they loaded e->state == 2 with acquire (pairing with the worker's release
 * store in vc_acct_client()), or got the worker's report on its control
 * socket (vm_link.c), sent after vc_acct_client(). id, kind, slot and
 * opened_at are this process's own. used[], commands and active_ns are
 * figures that the worker changes with relaxed RMWs and stores (acct.c):
 * relaxed loads.
 */
static json_t *session_json(const struct vc_acct_entry *e, uint64_t now)
{
	uint64_t active = vc_shm_load64(&e->active_ns, VC_RELAXED);
	char comm[sizeof(e->comm) + 1];

	memcpy(comm, e->comm, sizeof(e->comm));
	comm[sizeof(e->comm)] = 0;
	for (char *q = comm; *q; q++)
		if (*q < 0x20 || *q > 0x7e)
			*q = '?';
	return json_pack("{s:I,s:s,s:I,s:I,s:I,s:s,s:I,s:I,s:I,s:I,s:I}", "id", (json_int_t)e->id, "kind",
			 e->kind == VC_ACCT_VM ? "vm" : "local", "slot", (json_int_t)e->slot, "pid",
			 (json_int_t)e->pid, "uid", (json_int_t)e->uid, "comm", comm, "mem_bytes",
			 (json_int_t)vc_shm_load64(&e->used[VC_ACCT_MEM], VC_RELAXED), "pinned_bytes",
			 (json_int_t)vc_shm_load64(&e->used[VC_ACCT_PINNED], VC_RELAXED), "commands",
			 (json_int_t)vc_shm_load64(&e->commands, VC_RELAXED),
			 "idle_ms", (json_int_t)(now > active ? (now - active) / 1000000 : 0), "opened_at",
			 (json_int_t)e->opened_at);
}

/*
 * The reply to a subscription: the number of the last event, and the
 * session-closed events kept (oldest first), so that a subscriber that was
 * away learns how the sessions it knew ended, and what they freed.
 */
static json_t *subscribed(struct vc_admin *a)
{
	json_t *list = json_array();
	unsigned n = a->nrecent < RECENT ? a->nrecent : RECENT;

	for (unsigned i = a->nrecent - n; list && i < a->nrecent; i++)
		json_array_append(list, a->recent[i % RECENT]);
	return json_pack("{s:b,s:I,s:o*}", "ok", 1, "seq", (json_int_t)a->seq, "recent", list);
}

/* Counters since this server started, for the manager's metrics: the workers'
 * relaxed RMWs (acct.c, gpushare.c); counts that order nothing: relaxed. */
static json_t *counters(json_t *st, struct vc_acct *ac)
{
	if (!st)
		return NULL;
	json_object_set_new(st, "mem_refused", json_integer((json_int_t)vc_shm_load64(&ac->refused[VC_ACCT_MEM], VC_RELAXED)));
	json_object_set_new(st, "pinned_refused",
			    json_integer((json_int_t)vc_shm_load64(&ac->refused[VC_ACCT_PINNED], VC_RELAXED)));
	json_object_set_new(st, "kernel_launches", json_integer((json_int_t)vc_shm_load64(&ac->launches, VC_RELAXED)));
	json_object_set_new(st, "gpu_busy_ns", json_integer((json_int_t)vc_sched_busy_ns()));
	return st;
}

/* Device memory the sessions hold on each device, by the server's ordinal:
 * as many as --gpu names, else up to the last one used. The workers'
 * relaxed RMWs in vc_acct_on_device(); counts: relaxed. */
static json_t *by_device(const char *gpu, struct vc_acct *ac)
{
	json_t *list = json_array();
	unsigned n = 0;

	if (gpu && gpu[0]) {
		n = 1;
		for (const char *p = gpu; *p; p++)
			n += *p == ',';
	} else {
		for (unsigned d = 0; d < VC_ACCT_DEVS; d++)
			if (vc_shm_load64(&ac->dev_used[d], VC_RELAXED))
				n = d + 1;
	}
	for (unsigned d = 0; list && d < n && d < VC_ACCT_DEVS; d++)
		json_array_append_new(list, json_integer((json_int_t)vc_shm_load64(&ac->dev_used[d], VC_RELAXED)));
	return list;
}

static json_t *status(struct vc_admin *a)
{
	struct vc_acct *ac = a->p.acct;
	json_t *list = json_array();
	uint64_t now = vc_now_ns();

	/* Acquire pairs with the worker's release store of 2 in
	 * vc_acct_client(): session_json() reads what it published. */
	for (unsigned i = 0; i < VC_ACCT_MAX; i++)
		if (vc_shm_load32(&ac->e[i].state, VC_ACQUIRE) == 2)
			json_array_append_new(list, session_json(&ac->e[i], now));
	/* quota[], weight and idle_timeout_s: this process's own stores (set()
	 * below, main()); used[]: counts of the workers' relaxed RMWs. All
	 * figures: relaxed. */
	return counters(json_pack("{s:b,s:s?,s:s?,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o*}", "ok", 1, "vm", a->p.vm_name, "gpu",
			 a->p.gpu, "mem_quota", (json_int_t)vc_shm_load64(&ac->quota[VC_ACCT_MEM], VC_RELAXED),
			 "mem_used", (json_int_t)vc_shm_load64(&ac->used[VC_ACCT_MEM], VC_RELAXED), "pinned_quota",
			 (json_int_t)vc_shm_load64(&ac->quota[VC_ACCT_PINNED], VC_RELAXED), "pinned_used",
			 (json_int_t)vc_shm_load64(&ac->used[VC_ACCT_PINNED], VC_RELAXED), "weight",
			 (json_int_t)vc_shm_load32(&ac->weight, VC_RELAXED), "idle_timeout",
			 (json_int_t)vc_shm_load32(&ac->idle_timeout_s, VC_RELAXED), "sessions", list, "mem_used_by_device",
			 by_device(a->p.gpu, ac)), ac);
}

/* A non-negative integer field, if present. -1: bad; 0: absent; 1: set. */
static int get_uint(json_t *req, const char *key, uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(req, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 1;
}

static json_t *set(struct vc_admin *a, json_t *req)
{
	struct vc_acct *ac = a->p.acct;
	uint64_t mq = 0, pq = 0, w = 0, idle = 0;
	int hm, hp, hw, hi;
	const char *key;
	json_t *v;

	json_object_foreach(req, key, v) {
		if (strcmp(key, "op") && strcmp(key, "v") && strcmp(key, "mem_quota") && strcmp(key, "pinned_quota") &&
		    strcmp(key, "weight") && strcmp(key, "idle_timeout"))
			return error("unknown field '%s' (mem_quota, pinned_quota, weight, idle_timeout)", key);
	}
	hm = get_uint(req, "mem_quota", INT64_MAX, &mq);
	hp = get_uint(req, "pinned_quota", INT64_MAX, &pq);
	hw = get_uint(req, "weight", 10000, &w);
	hi = get_uint(req, "idle_timeout", 365ull * 86400, &idle);
	if (hm < 0 || hp < 0 || hw < 0 || hi < 0 || (hw > 0 && w == 0))
		return error("quotas are byte counts >= 0, weight 1..10000, idle_timeout seconds >= 0");
	/* The quotas are read by the workers' vc_acct_charge() (relaxed loads):
	 * a new quota applies from their next charge and publishes nothing, so
	 * relaxed. weight and idle_timeout_s are read by this process only
	 * (status(), watch_sessions() in server_main.c): relaxed. */
	if (hm > 0)
		vc_shm_store64(&ac->quota[VC_ACCT_MEM], mq, VC_RELAXED);
	if (hp > 0)
		vc_shm_store64(&ac->quota[VC_ACCT_PINNED], pq, VC_RELAXED);
	if (hw > 0) {
		vc_shm_store32(&ac->weight, (uint32_t)w, VC_RELAXED);
		vc_sched_set_weight((uint32_t)w);
	}
	if (hi > 0)
		vc_shm_store32(&ac->idle_timeout_s, (uint32_t)idle, VC_RELAXED);
	vc_log("admin: limits now: memory quota %" PRIu64 ", pinned quota %" PRIu64 ", weight %u, idle timeout %u s",
	       vc_shm_load64(&ac->quota[VC_ACCT_MEM], VC_RELAXED), vc_shm_load64(&ac->quota[VC_ACCT_PINNED], VC_RELAXED),
	       vc_shm_load32(&ac->weight, VC_RELAXED), vc_shm_load32(&ac->idle_timeout_s, VC_RELAXED));
	return json_pack("{s:b}", "ok", 1);
}

static json_t *adopt(struct vc_admin *a, struct conn *c)
{
	char why[160];
	int fd, rc;

	if (!c->nfds)
		return error("adopt needs the QEMU connection's socket in SCM_RIGHTS");
	fd = c->fds[0];
	memmove(c->fds, c->fds + 1, (size_t)--c->nfds * sizeof(int));
	if (!a->p.adopt) {
		close(fd);
		return error("this server serves no VM");
	}
	why[0] = 0;
	rc = a->p.adopt(a->p.adopt_arg, fd, why, sizeof(why));
	if (rc)
		return error("%s", why[0] ? why : strerror(-rc));
	return json_pack("{s:b}", "ok", 1);
}

static bool request(struct vc_admin *a, struct conn *c, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr), *rep;
	const char *op;
	json_t *ver;

	if (!req || !json_is_object(req)) {
		rep = req ? error("a request is a JSON object") : error("not JSON: %s", jerr.text);
		json_decref(req);
		return send_json(c, rep);
	}
	ver = json_object_get(req, "v");
	op = json_string_value(json_object_get(req, "op"));
	if (ver && (!json_is_integer(ver) || json_integer_value(ver) != 1))
		rep = error("protocol version %s not supported (this server speaks 1)",
			    json_is_integer(ver) ? "other than 1" : "not an integer");
	else if (!op)
		rep = error("missing \"op\" (status, set, adopt, subscribe)");
	else if (!strcmp(op, "status"))
		rep = status(a);
	else if (!strcmp(op, "set"))
		rep = set(a, req);
	else if (!strcmp(op, "adopt"))
		rep = adopt(a, c);
	else if (!strcmp(op, "subscribe")) {
		c->subscribed = true;
		rep = subscribed(a);
	} else
		rep = error("unknown op '%.40s' (status, set, adopt, subscribe)", op);
	json_decref(req);
	return send_json(c, rep);
}

/* Read what is there; handle each whole line. False: close the connection. */
static bool conn_read(struct vc_admin *a, struct conn *c)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
		struct cmsghdr align;
	} u;

	for (;;) {
		struct iovec iov = {.iov_base = c->buf + c->len, .iov_len = sizeof(c->buf) - c->len};
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf)};
		size_t room, got;
		ssize_t r;
		char *nl;

		if (!iov.iov_len) {
			send_json(c, error("request longer than %u bytes", LINE_MAX_BYTES));
			return false;
		}
		r = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		if (r == 0)
			return false;
		room = MAX_FDS - (size_t)c->nfds;
		got = vc_sock_fds_collect(&msg, c->fds + c->nfds, room);
		c->nfds += (int)(got < room ? got : room);
		c->len += (size_t)r;
		while ((nl = memchr(c->buf, '\n', c->len))) {
			size_t n = (size_t)(nl - c->buf);

			if (!request(a, c, c->buf, n))
				return false;
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
		}
	}
}

static void on_accept(struct vc_admin *a)
{
	int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	for (int i = 0; i < MAX_CONNS; i++) {
		if (!a->c[i]) {
			a->c[i] = calloc(1, sizeof(struct conn));
			if (!a->c[i])
				break;
			a->c[i]->fd = fd;
			return;
		}
	}
	close(fd); /* too many admin connections */
}

int vc_admin_pollfds(struct vc_admin *a, struct pollfd *p, int max)
{
	int n = 0;

	if (!a || max < 1)
		return 0;
	a->nmap = 0;
	p[n] = (struct pollfd){.fd = a->lfd, .events = POLLIN};
	a->map[n++] = -1;
	for (int i = 0; i < MAX_CONNS && n < max; i++) {
		if (!a->c[i])
			continue;
		p[n] = (struct pollfd){.fd = a->c[i]->fd, .events = POLLIN};
		a->map[n++] = i;
	}
	a->nmap = n;
	return n;
}

void vc_admin_handle(struct vc_admin *a, const struct pollfd *p, int n)
{
	bool accept_pending = false;

	if (!a)
		return;
	if (n > a->nmap)
		n = a->nmap;
	for (int k = 0; k < n; k++) {
		int i = a->map[k];

		if (!p[k].revents)
			continue;
		if (i < 0) {
			accept_pending = true;
			continue;
		}
		if (a->c[i] && a->c[i]->fd == p[k].fd && !conn_read(a, a->c[i]))
			conn_close(a, i);
	}
	if (accept_pending)
		on_accept(a);
}

static void broadcast(struct vc_admin *a, json_t *ev)
{
	json_object_set_new(ev, "seq", json_integer((json_int_t)++a->seq));
	for (int i = 0; i < MAX_CONNS; i++) {
		if (!a->c[i] || !a->c[i]->subscribed)
			continue;
		if (!send_json(a->c[i], json_incref(ev))) {
			vc_log("admin: a subscriber does not read its events; dropping it");
			conn_close(a, i);
		}
	}
	json_decref(ev);
}

void vc_admin_session_opened(struct vc_admin *a, const struct vc_acct_entry *e)
{
	json_t *ev;

	if (!a)
		return;
	ev = session_json(e, vc_now_ns());
	json_object_set_new(ev, "event", json_string("session-opened"));
	broadcast(a, ev);
}

void vc_admin_session_closed(struct vc_admin *a, const struct vc_acct_entry *e, const char *reason,
			     uint64_t freed)
{
	json_t *ev;

	/* The worker was reaped: its last relaxed add to commands came before
	 * its exit. */
	uint64_t commands = vc_shm_load64(&e->commands, VC_RELAXED);

	vc_log("session %u (%s pid %u %.16s) ended: %s; %" PRIu64 " bytes of device memory freed, %" PRIu64
	       " commands",
	       e->id, e->kind == VC_ACCT_VM ? "guest" : "client", e->pid, e->comm, reason, freed, commands);
	if (!a)
		return;
	ev = json_pack("{s:s,s:I,s:s,s:I,s:I,s:I,s:I}", "event", "session-closed", "id", (json_int_t)e->id,
		       "reason", reason, "freed_bytes", (json_int_t)freed, "commands", (json_int_t)commands,
		       "pid", (json_int_t)e->pid, "slot", (json_int_t)e->slot);
	if (!ev)
		return;
	broadcast(a, json_incref(ev)); /* numbers it */
	json_decref(a->recent[a->nrecent % RECENT]);
	a->recent[a->nrecent++ % RECENT] = ev;
}
