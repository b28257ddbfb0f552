/* SPDX-License-Identifier: MIT */
/*
 * servers.c - the vcuda-server of each running VM (servers.h).
 *
 * A server's life here:
 *   start (fork, exec with QEMU's connection as fd 3) -> STARTING
 *   STARTING -- its admin socket answers "subscribe" --> RUNNING
 *   STARTING -- not within READY_TIMEOUT_MS --> STOPPING
 *   any -- vc_server_stop() --> STOPPING (SIGTERM; SIGKILL after STOP_GRACE_MS)
 *   any -- its pidfd is readable (it ended) --> reaped, record freed; the
 *          VM is "stopped" in the database; a QEMU connection that waited
 *          for it goes back to vc_ops_vm_connected().
 */
#include "servers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metrics.h"
#include "ops.h"
#include "proto.h"
#include "util.h"
#include "vmsock.h"

#define READY_TIMEOUT_MS 10000
#define SUB_RETRY_MS 25
#define FAST_SUB_TRIES 250
#define FAST_SUB_US 2000
#define RESUB_MS 1000
#define STOP_GRACE_MS 5000
#define SUB_LINE_MAX 65536
#define PROBE_OUT_MAX 65536

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_kill(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* ---- running a program ------------------------------------------------------------ */

/* In a child about to exec: a clean slate (signals, descriptors but @keep). */
static void child_reset(int keep_from, int keep)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (keep > keep_from) {
		if (close_range((unsigned)keep_from, (unsigned)keep - 1, 0) < 0)
			for (int fd = keep_from; fd < keep; fd++)
				close(fd);
	}
	if (close_range((unsigned)(keep > keep_from ? keep + 1 : keep_from), ~0u, 0) < 0)
		for (int fd = keep > keep_from ? keep + 1 : keep_from; fd < 4096; fd++)
			close(fd);
}

int vc_server_probe(struct vc_mgmtd *d)
{
	static const char *const needed[] = {"--vm-name", "--vm-conn-fd", "--admin-socket", "--gpu",
					     "--mem-quota", "--pinned-quota", "--weight", "--idle-timeout"};
	char *out = malloc(PROBE_OUT_MAX + 1), missing[200] = "";
	size_t have = 0;
	int p[2], st = 0;
	pid_t pid;

	d->server_ok = d->server_sched = false;
	if (!out)
		return -ENOMEM;
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(out);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(p[1], 1);
		dup2(null, 2);
		child_reset(3, -1);
		execlp(d->cfg.server_bin, d->cfg.server_bin, "--help", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		free(out);
		return -errno;
	}
	/* Bounded: a binary that hangs on --help is killed. */
	for (int64_t deadline = vc_now_ms() + 3000; have < PROBE_OUT_MAX;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int64_t left = deadline - vc_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		n = read(p[0], out + have, PROBE_OUT_MAX - have);
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	out[have] = 0;
	close(p[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && !have) {
		snprintf(d->server_problem, sizeof(d->server_problem),
			 "cannot run %s (give its path with --server PATH)", d->cfg.server_bin);
		free(out);
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		if (!strstr(out, needed[i])) {
			size_t l = strlen(missing);

			snprintf(missing + l, sizeof(missing) - l, "%s%s", l ? ", " : "", needed[i]);
		}
	}
	d->server_sched = strstr(out, "--sched") != NULL;
	free(out);
	if (missing[0]) {
		snprintf(d->server_problem, sizeof(d->server_problem),
			 "%s does not take %s (docs/MGMT.md): build a vcuda-server that does", d->cfg.server_bin,
			 missing);
		return 0;
	}
	d->server_ok = true;
	d->server_problem[0] = 0;
	return 0;
}

/* ---- records ------------------------------------------------------------------------ */

struct vc_server *vc_server_find(struct vc_mgmtd *d, const char *vm)
{
	for (struct vc_server *s = d->servers; s; s = s->next)
		if (!strcmp(s->vm, vm))
			return s;
	return NULL;
}

static struct vc_server *server_new(struct vc_mgmtd *d, const char *vm)
{
	struct vc_server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (vc_lines_init(&s->sub, SUB_LINE_MAX, 4096)) {
		free(s);
		return NULL;
	}
	snprintf(s->vm, sizeof(s->vm), "%s", vm);
	s->pidfd = s->sub_fd = s->pending_conn = -1;
	if ((size_t)snprintf(s->admin_path, sizeof(s->admin_path), "%s/servers/%s.admin", d->cfg.run_dir, vm) >=
	    sizeof(s->admin_path)) {
		vc_lines_fini(&s->sub);
		free(s);
		return NULL;
	}
	return s;
}

static void server_free(struct vc_server *s)
{
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->sub_fd >= 0)
		close(s->sub_fd);
	if (s->pending_conn >= 0)
		close(s->pending_conn);
	vc_lines_fini(&s->sub);
	free(s->sess);
	free(s);
}

static void server_unlink(struct vc_mgmtd *d, struct vc_server *s)
{
	for (struct vc_server **pp = &d->servers; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			return;
		}
	}
}

/* ---- the admin socket --------------------------------------------------------------- */

static int admin_connect(const char *path, int *out)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

/* A reply line: an object with "ok" true, or the server's "error". */
static int admin_reply(const char *line, size_t len, json_t **rep, char *err, size_t errlen)
{
	json_t *r = json_loadb(line, len, 0, NULL);
	json_t *ok = json_object_get(r, "ok");

	if (!json_is_object(r) || !json_is_boolean(ok)) {
		snprintf(err, errlen, "vcuda-server answered something that is not a reply");
		json_decref(r);
		return -EPROTO;
	}
	if (!json_is_true(ok)) {
		const char *e = json_string_value(json_object_get(r, "error"));

		snprintf(err, errlen, "%s", e ? e : "vcuda-server refused, without a reason");
		vc_printable(err);
		json_decref(r);
		return -EREMOTEIO;
	}
	if (rep)
		*rep = r;
	else
		json_decref(r);
	return 0;
}

static const char *admin_errstr(int rc)
{
	switch (rc) {
	case -ETIMEDOUT: return "vcuda-server did not answer in time";
	case -ECONNRESET: return "vcuda-server closed its admin connection";
	case -EMSGSIZE: return "vcuda-server's reply is too long";
	default: return strerror(-rc);
	}
}

/* One exchange on a fresh connection to @path, optionally passing @fd. */
static int admin_exchange(const char *path, json_t *req, int fd, json_t **rep, char *err, size_t errlen)
{
	struct vc_lines l;
	size_t len, linelen;
	char *text, *line;
	int sock, rc;

	rc = admin_connect(path, &sock);
	if (rc) {
		snprintf(err, errlen, "cannot reach vcuda-server's admin socket %s: %s", path, strerror(-rc));
		return rc;
	}
	text = vc_json_line(req, &len);
	if (!text || vc_lines_init(&l, VC_MGMT_LINE_MAX, VC_MGMT_LINE_MAX)) {
		free(text);
		close(sock);
		return -ENOMEM;
	}
	if (fd >= 0) {
		/* The request and the descriptor in one message: the server reads
		 * the descriptor with the line that names it. */
		char cbuf[CMSG_SPACE(sizeof(int))] = {0};
		struct iovec iov = {.iov_base = text, .iov_len = len};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				   .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		ssize_t n;

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
		do
			n = sendmsg(sock, &m, MSG_NOSIGNAL);
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)len) {
			rc = n < 0 ? -errno : -EIO;
			snprintf(err, errlen, "cannot hand the connection to vcuda-server: %s", strerror(-rc));
			goto out;
		}
		rc = vc_lines_wait_line(&l, sock, VC_ADMIN_TIMEOUT_MS, &line, &linelen);
	} else {
		rc = vc_lines_request(&l, sock, text, len, VC_ADMIN_TIMEOUT_MS, &line, &linelen);
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", admin_errstr(rc));
		goto out;
	}
	rc = admin_reply(line, linelen, rep, err, errlen);
out:
	vc_lines_fini(&l);
	free(text);
	close(sock);
	return rc;
}

int vc_server_call(struct vc_server *s, json_t *req, json_t **rep, char *err, size_t errlen)
{
	if (s->state != VC_SRV_RUNNING) {
		snprintf(err, errlen, "vcuda-server of %s is %s", s->vm,
			 s->state == VC_SRV_STARTING ? "still starting" : "stopping");
		return -EAGAIN;
	}
	return admin_exchange(s->admin_path, req, -1, rep, err, errlen);
}

int vc_server_adopt(struct vc_server *s, int conn, char *err, size_t errlen)
{
	json_t *req = json_pack("{s:s}", "op", "adopt");
	int rc;

	if (!req)
		return -ENOMEM;
	rc = admin_exchange(s->admin_path, req, conn, NULL, err, errlen);
	json_decref(req);
	if (rc == 0)
		close(conn);
	return rc;
}

/* ---- the subscription --------------------------------------------------------------- */

static void try_subscribe(struct vc_server *s)
{
	static const char req[] = "{\"op\":\"subscribe\"}\n";
	int rc;

	rc = admin_connect(s->admin_path, &s->sub_fd);
	if (rc) {
		s->sub_fd = -1;
		s->next_try_ms = vc_now_ms() + (s->state == VC_SRV_STARTING ? SUB_RETRY_MS : RESUB_MS);
		return;
	}
	vc_lines_fini(&s->sub);
	if (vc_lines_init(&s->sub, SUB_LINE_MAX, 4096) || vc_lines_queue(&s->sub, req, sizeof(req) - 1) ||
	    vc_lines_flush(&s->sub, s->sub_fd) != 0) {
		close(s->sub_fd);
		s->sub_fd = -1;
		s->next_try_ms = vc_now_ms() + RESUB_MS;
		return;
	}
	s->sub_acked = false;
}

static void sub_lost(struct vc_server *s, const char *why)
{
	if (s->sub_fd < 0)
		return;
	if (s->state == VC_SRV_RUNNING)
		vc_mlog("vm %s: lost the event subscription of vcuda-server pid %d (%s); retrying", s->vm,
			(int)s->pid, why);
	close(s->sub_fd);
	s->sub_fd = -1;
	s->sub_acked = false;
	s->next_try_ms = vc_now_ms() + RESUB_MS;
}

static struct vc_srv_session *sess_find(struct vc_server *s, uint32_t id)
{
	for (size_t i = 0; i < s->nsess; i++)
		if (s->sess[i].id == id)
			return &s->sess[i];
	return NULL;
}

static void sess_add(struct vc_server *s, uint32_t id, uint32_t pid, const char *kind, const char *comm)
{
	struct vc_srv_session *e = sess_find(s, id);

	if (!e) {
		if (s->nsess == s->capsess) {
			size_t cap = s->capsess ? s->capsess * 2 : 8;
			struct vc_srv_session *n;

			/* A server reports at most its own sessions; the cap keeps a
			 * confused one from growing this without bound. */
			if (cap > 4096 || !(n = realloc(s->sess, cap * sizeof(*n))))
				return;
			s->sess = n;
			s->capsess = cap;
		}
		e = &s->sess[s->nsess++];
	}
	e->id = id;
	e->pid = pid;
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
	snprintf(e->comm, sizeof(e->comm), "%s", comm);
	vc_printable(e->kind);
	vc_printable(e->comm);
}

static const char *reason_text(const char *r, const struct vc_server *s, char *buf, size_t len)
{
	(void)s;
	if (!strcmp(r, "client-exit"))
		return "client exit";
	if (!strcmp(r, "idle"))
		return "idle past its timeout";
	if (!strcmp(r, "fatal"))
		return "protocol error (fatal)";
	if (!strcmp(r, "crashed"))
		return "its worker crashed";
	if (!strcmp(r, "stopped"))
		return "stopped by its server (QEMU disconnected, or the server stopped)";
	if (!strcmp(r, "stuck"))
		return "its client went while its GPU work could not end (worker ended)";
	snprintf(buf, len, "%s", r);
	vc_printable(buf);
	return buf;
}

static uint64_t juint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static void on_event(struct vc_mgmtd *d, struct vc_server *s, json_t *ev)
{
	const char *kind = json_string_value(json_object_get(ev, "event"));
	uint32_t id = (uint32_t)juint(ev, "id");
	uint64_t seq = juint(ev, "seq");
	char who[96] = "", rbuf[64], sz[32];

	/* Numbered events come once: a replayed one seen already is skipped. */
	if (seq && s->seq_pid == s->pid) {
		if (seq <= s->last_seq)
			return;
		s->last_seq = seq;
	}
	if (!kind) {
		vc_mlog("vm %s: vcuda-server sent an event without \"event\"; ignored", s->vm);
		return;
	}
	if (!strcmp(kind, "session-opened")) {
		const char *comm = json_string_value(json_object_get(ev, "comm"));
		const char *k = json_string_value(json_object_get(ev, "kind"));
		struct vc_srv_session *e;
		bool known = sess_find(s, id) != NULL;

		sess_add(s, id, (uint32_t)juint(ev, "pid"), k ? k : "?", comm ? comm : "?");
		if (known)
			return; /* seen already in the status read right after subscribing */
		e = sess_find(s, id);
		vc_mgmtd_event(d, "session.opened", s->vm, s->gpu, "session %u of %s opened (%s, guest pid %u %s, slot %" PRIu64 ")",
			       id, s->vm, e ? e->kind : "?", e ? e->pid : 0, e ? e->comm : "?", juint(ev, "slot"));
		return;
	}
	if (!strcmp(kind, "session-closed")) {
		const char *reason = json_string_value(json_object_get(ev, "reason"));
		struct vc_srv_session *e = sess_find(s, id);
		uint64_t freed = juint(ev, "freed_bytes");
		bool stopped = reason && !strcmp(reason, "stopped");

		if (e)
			snprintf(who, sizeof(who), " (guest pid %u %s)", e->pid, e->comm);
		vc_metrics_session_closed(s->vm, reason, freed);
		vc_mgmtd_event(d, stopped ? "session.closed" : "session.reclaimed", s->vm, s->gpu,
			       "%s session %u of %s%s: %s, freed %" PRIu64 " bytes (%s), %" PRIu64 " commands",
			       stopped ? "closed" : "reclaimed", id, s->vm, who,
			       reason_text(reason ? reason : "unknown", s, rbuf, sizeof(rbuf)), freed,
			       vc_size_format(freed, sz, sizeof(sz)), juint(ev, "commands"));
		if (e)
			*e = s->sess[--s->nsess];
		return;
	}
	/* Anything else the server reports is kept as it said it. */
	char *text = json_dumps(ev, JSON_COMPACT | JSON_ENSURE_ASCII);

	vc_mgmtd_event(d, "server.event", s->vm, s->gpu, "vcuda-server of %s: %.400s", s->vm, text ? text : "?");
	free(text);
}

/*
 * Events are only seen while subscribed: after (re)subscribing, the server's
 * own list of sessions says what happened meanwhile. Sessions new to us are
 * logged as opened; sessions we knew that it no longer has ended unseen.
 */
static void reconcile(struct vc_mgmtd *d, struct vc_server *s)
{
	json_t *req = json_pack("{s:s}", "op", "status"), *rep = NULL, *list, *e;
	char err[256];
	size_t i;

	if (!req || admin_exchange(s->admin_path, req, -1, &rep, err, sizeof(err))) {
		json_decref(req);
		return;
	}
	json_decref(req);
	list = json_object_get(rep, "sessions");
	for (size_t k = 0; k < s->nsess;) {
		bool alive = false;

		json_array_foreach(list, i, e)
			alive |= juint(e, "id") == s->sess[k].id;
		if (alive) {
			k++;
			continue;
		}
		vc_metrics_session_closed(s->vm, NULL, 0);
		vc_mgmtd_event(d, "session.closed", s->vm, s->gpu,
			       "session %u of %s (guest pid %u %s) ended while vcuda-mgmtd was not subscribed; "
			       "what it freed is not known", s->sess[k].id, s->vm, s->sess[k].pid, s->sess[k].comm);
		s->sess[k] = s->sess[--s->nsess];
	}
	json_array_foreach(list, i, e) {
		const char *comm = json_string_value(json_object_get(e, "comm"));
		const char *kind = json_string_value(json_object_get(e, "kind"));
		uint32_t id = (uint32_t)juint(e, "id");

		if (!json_is_object(e) || sess_find(s, id))
			continue;
		sess_add(s, id, (uint32_t)juint(e, "pid"), kind ? kind : "?", comm ? comm : "?");
		vc_mgmtd_event(d, "session.opened", s->vm, s->gpu,
			       "session %u of %s opened (%s, guest pid %" PRIu64 " %s, slot %" PRIu64 ")",
			       id, s->vm, kind ? kind : "?", juint(e, "pid"), sess_find(s, id) ? sess_find(s, id)->comm : "?",
			       juint(e, "slot"));
	}
	json_decref(rep);
}

static void on_sub_readable(struct vc_mgmtd *d, struct vc_server *s)
{
	char *line;
	size_t len;
	int rc;

	rc = vc_lines_fill(&s->sub, s->sub_fd);
	if (rc == 0 || (rc < 0 && rc != -EAGAIN && rc != -ENOBUFS)) {
		/* lines already read are still handled below */
	}
	while ((rc = vc_lines_next(&s->sub, &line, &len)) == 1) {
		if (!s->sub_acked) {
			char err[256];

			json_t *rep = NULL, *e;
			size_t i;

			if (admin_reply(line, len, &rep, err, sizeof(err))) {
				vc_mlog("vm %s: vcuda-server refused to subscribe: %s", s->vm, err);
				sub_lost(s, "subscribe refused");
				return;
			}
			s->sub_acked = true;
			/* Sessions that ended while we were away from this server
			 * process: their kept events say how, and what they freed.
			 * The first subscription to a process takes its count as
			 * the start (what came before is the previous daemon's). */
			if (s->seq_pid == s->pid) {
				json_array_foreach(json_object_get(rep, "recent"), i, e)
					if (json_is_object(e))
						on_event(d, s, e);
			}
			if (s->seq_pid != s->pid || juint(rep, "seq") > s->last_seq) {
				s->last_seq = juint(rep, "seq");
				s->seq_pid = s->pid;
			}
			json_decref(rep);
			if (s->state == VC_SRV_STARTING) {
				s->state = VC_SRV_RUNNING;
				vc_mlog("vm %s: vcuda-server pid %d is ready (admin socket %s)", s->vm, (int)s->pid,
					s->admin_path);
				if (s->pending_conn >= 0)
					s->adopt_at_ms = vc_now_ms();
			}
			reconcile(d, s);
			continue;
		}
		json_t *ev = json_loadb(line, len, 0, NULL);

		if (json_is_object(ev))
			on_event(d, s, ev);
		else
			vc_mlog("vm %s: vcuda-server sent an event that is not a JSON object; ignored", s->vm);
		json_decref(ev);
	}
	if (rc == -EMSGSIZE)
		sub_lost(s, "an event line past 64 KiB");
	else if (s->sub.eof)
		sub_lost(s, "closed");
}

/* ---- start, stop, end ------------------------------------------------------------------ */

static void set_vm_state(struct vc_mgmtd *d, const char *name, enum vc_vm_state state, pid_t pid)
{
	struct vc_vm vm;

	if (vc_db_vm_get(d->db, name, &vm))
		return;
	vm.state = state;
	vm.server_pid = pid;
	vm.started_ms = state == VC_VM_RUNNING ? vc_wall_ms() : vm.started_ms;
	if (vc_db_begin(d->db) || vc_db_vm_update(d->db, &vm) || vc_db_commit(d->db)) {
		vc_db_rollback(d->db);
		vc_mlog("database: cannot record the state of vm %s: %s", name, vc_db_errmsg(d->db));
	}
}

static int gpu_index(struct vc_mgmtd *d, const char *uuid)
{
	struct vc_gpu *g;
	size_t n;
	int idx = -1;

	if (vc_db_gpu_list(d->db, &g, &n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(g[i].uuid, uuid))
			idx = g[i].index;
	free(g);
	return idx;
}

int vc_server_start(struct vc_mgmtd *d, const struct vc_vm *vm, int conn, char *err, size_t errlen)
{
	char memq[24], pinq[24], weight[16], idle[16], sched[160], q1[32], q2[32], where[32];
	const char *argv[40 + 64];
	struct vc_server *s;
	int argc = 0, p[2], child_err = 0;
	pid_t pid;
	ssize_t n;

	if (!d->server_ok) {
		snprintf(err, errlen, "cannot start vcuda-server: %s", d->server_problem);
		close(conn);
		return -ENOTSUP;
	}
	s = server_new(d, vm->name);
	if (!s) {
		snprintf(err, errlen, "cannot start vcuda-server: out of memory or run directory path too long");
		close(conn);
		return -ENOMEM;
	}
	vc_vm_gpu_join(vm, s->gpu, sizeof(s->gpu));
	snprintf(memq, sizeof(memq), "%" PRIu64, vm->mem_quota);
	snprintf(pinq, sizeof(pinq), "%" PRIu64, vm->pinned_quota);
	snprintf(weight, sizeof(weight), "%u", vm->weight);
	snprintf(idle, sizeof(idle), "%u", vm->idle_timeout);
	argv[argc++] = d->cfg.server_bin;
	argv[argc++] = "--vm-name";
	argv[argc++] = vm->name;
	argv[argc++] = "--vm-conn-fd";
	argv[argc++] = "3";
	argv[argc++] = "--admin-socket";
	argv[argc++] = s->admin_path;
	argv[argc++] = "--gpu";
	argv[argc++] = s->gpu; /* one GPU, or a VM's whole GPUs in device order */
	argv[argc++] = "--mem-quota";
	argv[argc++] = memq;
	argv[argc++] = "--pinned-quota";
	argv[argc++] = pinq;
	argv[argc++] = "--weight";
	argv[argc++] = weight;
	argv[argc++] = "--idle-timeout";
	argv[argc++] = idle;
	if (d->cfg.executor) {
		argv[argc++] = "--executor";
		argv[argc++] = d->cfg.executor;
	}
	if (d->server_sched && !vc_vm_whole(vm) &&
	    (size_t)snprintf(sched, sizeof(sched), "%s/sched/%s", d->cfg.run_dir, vm->gpu) < sizeof(sched)) {
		/* One scheduling page per GPU, shared by the servers on it; a VM
		 * of whole GPUs shares none of them, so it needs none. */
		argv[argc++] = "--sched";
		argv[argc++] = sched;
	}
	for (int i = 0; i < d->cfg.nserver_args && i < 64; i++)
		argv[argc++] = d->cfg.server_args[i];
	argv[argc] = NULL;

	/* A stale socket of a server that is gone (a live one was re-attached
	 * at start, or is running and was asked to adopt instead). */
	unlink(s->admin_path);
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot start vcuda-server: %s", strerror(errno));
		goto err_free;
	}
	pid = fork();
	if (pid == 0) {
		/* The child: QEMU's connection becomes fd 3; the exec-error pipe
		 * moves above it; everything else is closed. */
		int w = fcntl(p[1], F_DUPFD_CLOEXEC, 4), null = open("/dev/null", O_RDONLY);

		if (w < 0 || null < 0)
			_exit(127);
		dup2(null, 0);
		if (conn == 3)
			fcntl(3, F_SETFD, 0);
		else if (dup2(conn, 3) < 0)
			_exit(127);
		/* Not the daemon's process group or session: a Ctrl-C at the
		 * daemon's terminal, or its end, does not reach the VMs. */
		setsid();
		child_reset(4, w);
		/* Client-side settings of the daemon's environment are not the
		 * server's: it is told everything on its command line. */
		unsetenv("VCUDA_SOCKET");
		unsetenv("VCUDA_DEVICE");
		execvp(argv[0], (char *const *)argv);
		child_err = errno;
		if (write(w, &child_err, sizeof(child_err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		snprintf(err, errlen, "cannot start vcuda-server: %s", strerror(errno));
		close(p[0]);
		goto err_free;
	}
	do
		n = read(p[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == sizeof(child_err)) {
		waitpid(pid, NULL, 0);
		snprintf(err, errlen, "cannot run %s: %s (give its path with --server PATH)", d->cfg.server_bin,
			 strerror(child_err));
		goto err_free;
	}
	close(conn);
	conn = -1;
	s->pid = pid;
	s->child = true;
	s->pidfd = pidfd_open_(pid);
	if (s->pidfd < 0) {
		snprintf(err, errlen, "cannot watch vcuda-server pid %d: %s (Linux 5.3 or later is needed)", (int)pid,
			 strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto err_free;
	}
	s->state = VC_SRV_STARTING;
	s->started_ms = vc_now_ms();
	/* QEMU's connection is already the server's: sessions may open at once.
	 * Subscribe as soon as its admin socket exists (a short, bounded wait),
	 * so that their events are seen; later, the retries of the timers. */
	for (int i = 0; i < FAST_SUB_TRIES && s->sub_fd < 0; i++) {
		struct pollfd pf = {.fd = s->pidfd, .events = POLLIN};

		try_subscribe(s);
		if (s->sub_fd >= 0 || poll(&pf, 1, FAST_SUB_US / 1000) > 0)
			break; /* subscribed, or it has ended already (the loop sees to that) */
	}
	s->next_try_ms = s->started_ms + SUB_RETRY_MS;
	s->ready_deadline_ms = s->started_ms + READY_TIMEOUT_MS;
	s->next = d->servers;
	d->servers = s;
	set_vm_state(d, vm->name, VC_VM_RUNNING, pid);
	if (vc_vm_whole(vm))
		snprintf(where, sizeof(where), "%u whole GPUs", vm->ngpus);
	else
		snprintf(where, sizeof(where), "gpu %d", gpu_index(d, vm->gpu));
	vc_mgmtd_event(d, "server.started", vm->name, s->gpu,
		       "vcuda-server for %s started as pid %d on %s (%s): mem quota %s, pinned quota %s, "
		       "weight %u, idle timeout %u s",
		       vm->name, (int)pid, where, s->gpu, vc_size_format(vm->mem_quota, q1, sizeof(q1)),
		       vc_size_format(vm->pinned_quota, q2, sizeof(q2)), vm->weight, vm->idle_timeout);
	return 0;

err_free:
	if (conn >= 0)
		close(conn);
	server_free(s);
	return -EIO;
}

void vc_server_stop(struct vc_mgmtd *d, struct vc_server *s, const char *why)
{
	(void)d;
	if (s->state == VC_SRV_STOPPING)
		return;
	snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", why);
	vc_mlog("vm %s: stopping vcuda-server pid %d: %s", s->vm, (int)s->pid, why);
	s->state = VC_SRV_STOPPING;
	pidfd_kill(s->pidfd, SIGTERM);
	s->kill_at_ms = vc_now_ms() + STOP_GRACE_MS;
}

static void ended(struct vc_mgmtd *d, struct vc_server *s)
{
	char how[96] = "ended", open_note[64] = "";
	int64_t ran = vc_now_ms() - s->started_ms;
	int st, conn;

	if (s->child && waitpid(s->pid, &st, WNOHANG) == s->pid) {
		if (WIFSIGNALED(st))
			snprintf(how, sizeof(how), "was killed by signal %d", WTERMSIG(st));
		else
			snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(st));
	}
	if (s->nsess)
		snprintf(open_note, sizeof(open_note), "; %zu open session%s ended with it", s->nsess,
			 s->nsess == 1 ? "" : "s");
	server_unlink(d, s);
	if (!s->removed) {
		struct vc_vm vm;

		if (vc_db_vm_get(d->db, s->vm, &vm) == 0 && vm.server_pid == s->pid)
			set_vm_state(d, s->vm, VC_VM_STOPPED, 0);
		vc_vmsock_server_ended(d, s->vm, ran, s->state == VC_SRV_STOPPING, how);
	}
	vc_mgmtd_event(d, "server.exited", s->vm, s->gpu, "vcuda-server of %s%s (pid %d) %s after %" PRId64 ".%01" PRId64
		       " s%s%s%s", s->vm, s->removed ? " (removed)" : "", (int)s->pid, how, ran / 1000, (ran % 1000) / 100,
		       s->stop_reason[0] ? " (stopped: " : "", s->stop_reason, s->stop_reason[0] ? ")" : "");
	if (open_note[0])
		vc_mlog("vm %s: %s", s->vm, open_note + 2);
	unlink(s->admin_path);
	conn = s->pending_conn;
	s->pending_conn = -1;
	if (conn >= 0 && !s->removed && !d->stopping) {
		char vm[VC_VM_NAME_MAX + 1];

		snprintf(vm, sizeof(vm), "%s", s->vm);
		server_free(s);
		vc_ops_vm_connected(d, vm, conn);
		return;
	}
	if (conn >= 0)
		vc_vmsock_refuse(conn, -ENOENT, "vcuda-mgmtd: %s", d->stopping ? "stopping; retry" : "this VM was removed");
	server_free(s);
}

int vc_server_reattach(struct vc_mgmtd *d, const struct vc_vm *vm)
{
	struct vc_server *s = server_new(d, vm->name);
	json_t *req = json_pack("{s:s}", "op", "status"), *rep = NULL;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	const char *name, *gpu;
	char err[256];
	int fd, rc;

	if (!s || !req) {
		rc = -ENOMEM;
		goto out;
	}
	/* Who listens there is the kernel's word (SO_PEERCRED), not the DB's pid. */
	rc = admin_connect(s->admin_path, &fd);
	if (rc)
		goto out;
	rc = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ? -errno : 0;
	close(fd);
	if (rc)
		goto out;
	rc = admin_exchange(s->admin_path, req, -1, &rep, err, sizeof(err));
	if (rc) {
		vc_mlog("vm %s: a process (pid %d) holds %s but does not answer: %s", vm->name, (int)cred.pid,
			s->admin_path, err);
		goto out;
	}
	name = json_string_value(json_object_get(rep, "vm"));
	gpu = json_string_value(json_object_get(rep, "gpu"));
	if (!name || strcmp(name, vm->name)) {
		vc_mlog("vm %s: %s answers for another VM (%s); not re-attached", vm->name, s->admin_path,
			name ? name : "none");
		rc = -ENOENT;
		goto out;
	}
	s->pid = cred.pid;
	s->pidfd = pidfd_open_(cred.pid);
	if (s->pidfd < 0) {
		rc = -errno;
		goto out;
	}
	snprintf(s->gpu, sizeof(s->gpu), "%s", gpu ? gpu : vm->gpu);
	s->child = false;
	s->state = VC_SRV_RUNNING;
	s->started_ms = vc_now_ms();
	s->next_try_ms = 0;
	/* The sessions it serves now, so that later events can name them. */
	json_t *list = json_object_get(rep, "sessions"), *e;
	size_t i;

	json_array_foreach(list, i, e) {
		const char *comm = json_string_value(json_object_get(e, "comm"));
		const char *kind = json_string_value(json_object_get(e, "kind"));

		sess_add(s, (uint32_t)juint(e, "id"), (uint32_t)juint(e, "pid"), kind ? kind : "?", comm ? comm : "?");
	}
	s->next = d->servers;
	d->servers = s;
	s = NULL;
	set_vm_state(d, vm->name, VC_VM_RUNNING, cred.pid);
	vc_mgmtd_event(d, "server.reattached", vm->name, gpu ? gpu : vm->gpu,
		       "vcuda-server of %s (pid %d) outlived the previous vcuda-mgmtd; re-attached with %zu sessions",
		       vm->name, (int)cred.pid, d->servers->nsess);
	rc = 0;
out:
	if (s)
		server_free(s);
	json_decref(req);
	json_decref(rep);
	return rc;
}

void vc_server_stop_orphans(struct vc_mgmtd *d)
{
	char dir[PATH_MAX - 64];
	struct dirent *e;
	DIR *dp;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/servers", d->cfg.run_dir) >= sizeof(dir))
		return;
	dp = opendir(dir);
	if (!dp)
		return;
	while ((e = readdir(dp))) {
		char name[VC_VM_NAME_MAX + 1], path[PATH_MAX], err[256];
		size_t n = strlen(e->d_name);
		json_t *req, *rep = NULL;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct vc_vm vm;
		const char *who;
		int fd;

		if (n <= 6 || n - 6 > VC_VM_NAME_MAX || strcmp(e->d_name + n - 6, ".admin"))
			continue;
		memcpy(name, e->d_name, n - 6);
		name[n - 6] = 0;
		if (!vc_vm_name_ok(name) || vc_db_vm_get(d->db, name, &vm) != -ENOENT)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (admin_connect(path, &fd)) {
			unlink(path); /* nobody there */
			continue;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(fd);
			continue;
		}
		close(fd);
		req = json_pack("{s:s}", "op", "status");
		if (req && admin_exchange(path, req, -1, &rep, err, sizeof(err)) == 0 &&
		    (who = json_string_value(json_object_get(rep, "vm"))) && !strcmp(who, name)) {
			/* A server of a VM the database no longer has: the daemon was
			 * killed between removing the VM and stopping its server. */
			int pfd = pidfd_open_(cred.pid);

			if (pfd >= 0) {
				pidfd_kill(pfd, SIGTERM);
				close(pfd);
				vc_mgmtd_event(d, "server.orphan", name, NULL,
					       "vcuda-server pid %d serves %s, which is not in the database; stopped it",
					       (int)cred.pid, name);
			}
		}
		json_decref(req);
		json_decref(rep);
	}
	closedir(dp);
}

/* ---- the poll loop -------------------------------------------------------------------- */

enum { T_PIDFD = 0, T_SUB = 1 };

int vc_servers_pollfds(struct vc_mgmtd *d, struct pollfd *p, struct vc_server **tag, int max)
{
	int n = 0;

	for (struct vc_server *s = d->servers; s && n + 2 <= max; s = s->next) {
		p[n] = (struct pollfd){.fd = s->pidfd, .events = POLLIN};
		tag[n++] = s;
		p[n] = (struct pollfd){.fd = s->sub_fd, .events = POLLIN}; /* -1 is ignored */
		tag[n++] = s;
	}
	return n;
}

void vc_servers_handle(struct vc_mgmtd *d, const struct pollfd *p, struct vc_server **tag, int n)
{
	/* Subscriptions first: the last events of a server that ended are
	 * logged before its end. Records may be freed below, so each is looked
	 * up again before use. */
	for (int i = 1; i < n; i += 2) {
		struct vc_server *s = tag[i];

		if (p[i].fd >= 0 && p[i].fd == s->sub_fd && (p[i].revents & (POLLIN | POLLHUP | POLLERR)))
			on_sub_readable(d, s);
	}
	for (int i = 0; i < n; i += 2) {
		struct vc_server *s = tag[i], *t;

		if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		for (t = d->servers; t && t != s; t = t->next)
			;
		if (t && t->pidfd == p[i].fd)
			ended(d, t);
	}
}

static void try_adopt(struct vc_mgmtd *d, struct vc_server *s)
{
	char err[256];
	int conn = s->pending_conn, rc;

	s->pending_conn = -1;
	rc = vc_server_adopt(s, conn, err, sizeof(err));
	if (rc == 0) {
		vc_mlog("vm %s: handed QEMU's connection to vcuda-server pid %d", s->vm, (int)s->pid);
		return;
	}
	/* Not retried: a server that refuses (it serves another connection,
	 * or its previous one's sessions are still stopping) has already told
	 * QEMU so in a WELCOME frame, and QEMU reconnects when it sees fit. */
	vc_mgmtd_event(d, "vm.refused", s->vm, s->gpu, "QEMU's connection for %s refused: vcuda-server pid %d did not take it: %s",
		       s->vm, (int)s->pid, err);
	if (rc == -EREMOTEIO)
		close(conn);
	else
		vc_vmsock_refuse(conn, -EIO, "vcuda-mgmtd: the VM's vcuda-server did not take the connection: %.50s", err);
}

int vc_servers_timers(struct vc_mgmtd *d)
{
	int64_t now = vc_now_ms(), next = INT64_MAX;

	for (struct vc_server *s = d->servers; s; s = s->next) {
		if (s->state != VC_SRV_STOPPING && s->sub_fd < 0 && now >= s->next_try_ms)
			try_subscribe(s);
		if (s->state == VC_SRV_STARTING && now >= s->ready_deadline_ms) {
			vc_mgmtd_event(d, "server.unready", s->vm, s->gpu,
				       "vcuda-server of %s (pid %d) did not answer on %s within %d s; stopping it", s->vm,
				       (int)s->pid, s->admin_path, READY_TIMEOUT_MS / 1000);
			vc_server_stop(d, s, "never became ready");
		}
		if (s->state == VC_SRV_STOPPING && s->kill_at_ms && now >= s->kill_at_ms) {
			vc_mlog("vm %s: vcuda-server pid %d ignored SIGTERM for %d s: SIGKILL", s->vm, (int)s->pid,
				STOP_GRACE_MS / 1000);
			pidfd_kill(s->pidfd, SIGKILL);
			s->kill_at_ms = 0;
		}
		if (s->state == VC_SRV_RUNNING && s->sub_acked && s->pending_conn >= 0 && now >= s->adopt_at_ms)
			try_adopt(d, s);
		if (s->state != VC_SRV_STOPPING && s->sub_fd < 0 && s->next_try_ms < next)
			next = s->next_try_ms;
		if (s->state == VC_SRV_STARTING && s->ready_deadline_ms < next)
			next = s->ready_deadline_ms;
		if (s->state == VC_SRV_STOPPING && s->kill_at_ms && s->kill_at_ms < next)
			next = s->kill_at_ms;
		if (s->state == VC_SRV_RUNNING && s->sub_acked && s->pending_conn >= 0 && s->adopt_at_ms < next)
			next = s->adopt_at_ms;
	}
	if (next == INT64_MAX)
		return -1;
	now = vc_now_ms();
	return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

void vc_servers_shutdown(struct vc_mgmtd *d, bool stop)
{
	int64_t deadline = vc_now_ms() + STOP_GRACE_MS + 1000;

	if (!stop) {
		unsigned n = 0;

		while (d->servers) {
			struct vc_server *s = d->servers;

			d->servers = s->next;
			n++;
			server_free(s);
		}
		if (n)
			vc_mlog("leaving %u vcuda-server process%s running; a new vcuda-mgmtd re-attaches them", n,
				n == 1 ? "" : "es");
		return;
	}
	for (struct vc_server *s = d->servers; s; s = s->next)
		vc_server_stop(d, s, "vcuda-mgmtd is stopping");
	while (d->servers && vc_now_ms() < deadline) {
		struct pollfd p[64];
		struct vc_server *tag[64];
		int n = 0;

		for (struct vc_server *s = d->servers; s && n < 64; s = s->next) {
			p[n] = (struct pollfd){.fd = s->pidfd, .events = POLLIN};
			tag[n++] = s;
		}
		if (poll(p, (nfds_t)n, 100) > 0) {
			for (int i = 0; i < n; i++)
				if (p[i].revents)
					ended(d, tag[i]);
		}
		vc_servers_timers(d);
	}
	while (d->servers) {
		struct vc_server *s = d->servers;

		d->servers = s->next;
		server_free(s);
	}
}
