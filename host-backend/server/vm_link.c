/* SPDX-License-Identifier: MIT */
/*
 * vm_link.c - the VM's QEMU connection, its session slots and their workers.
 *
 * One QEMU at a time. Every frame is copied and checked before use
 * (vc_vm_msg_decode, then the slot's state), and a frame that breaks the
 * protocol closes the connection, which stops that VM's sessions; the
 * listener and host-local clients carry on.
 *
 * Slot states (docs/VM.md):
 *   FREE --OPEN--> OPENING --worker reports ok--> OPEN --CLOSE--> CLOSING --reaped--> FREE
 *   OPENING --worker fails, reaped--> FREE (OPENED with the error)
 *   OPEN --worker ends by itself, reaped--> FREE (LOST; QEMU keeps the slot
 *        until the guest closes it, and answers that CLOSE itself)
 * A slot is FREE again only once its worker has been reaped, so QEMU never
 * gets a slot back while an old worker could still write into it.
 */
#include "server/vm_link.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "resources/acct.h"
#include "server/admin.h"
#include "server/vm_ram.h"
#include "vc_abi_hash.h"
#include "vc_sock.h"
#include "vc_time.h"

#define HELLO_TIMEOUT_MS 5000
#define STOP_GRACE_MS 5000
#define MiB ((uint64_t)1 << 20)

enum slot_state { S_FREE, S_OPENING, S_OPEN, S_CLOSING };

struct slot {
	enum slot_state state;
	pid_t pid;            /* its worker; 0 once reaped */
	int ctl;              /* our end of the worker's control socket, -1 */
	int acct;             /* its accounting entry, -1 */
	uint32_t id;
	bool close_asked;     /* QEMU sent CLOSE: answer CLOSED once reaped */
	bool report_ok;       /* the worker reported a ready session */
	struct vc_vm_msg report; /* its report (an error is sent once it is reaped) */
	int64_t kill_at;      /* SIGKILL deadline while stopping; 0 none */
};

struct orphan {
	struct orphan *next;
	pid_t pid;
	int acct;
	int64_t kill_at;
};

enum { P_LISTEN = -1, P_CONN = -2 };

struct vc_vm_link {
	const struct vc_server_config *cfg;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint32_t *next_id;
	struct vc_acct *acct;
	struct vc_admin *admin;
	int lfd;
	int conn;             /* -1 when no VM is connected */
	bool welcomed;
	int64_t hello_deadline;
	struct vc_vm_rx rx;
	int mem_fd;
	uint64_t mem_size, slot_size;
	struct vc_vm_ram ram; /* the VM's RAM (MEM frames) */
	uint32_t max_sessions;
	char name[64];
	struct slot slots[VC_VM_MAX_SESSIONS];
	struct orphan *orphans; /* workers of a connection that broke */
	unsigned nworkers;
	int map[2 + VC_VM_MAX_SESSIONS]; /* what each pollfd entry is */
	int nmap;
};

static void slot_reset(struct slot *s)
{
	memset(s, 0, sizeof(*s));
	s->ctl = -1;
	s->acct = -1;
}

/* A worker was reaped: its accounting entry goes, with an event. */
static void account_end(struct vc_vm_link *l, int acct, int status)
{
	struct vc_acct_entry *e;
	const char *why;
	uint64_t freed;

	if (acct < 0)
		return;
	e = &l->acct->e[acct];
	why = vc_acct_end_reason(e, status);
	freed = vc_acct_release(l->acct, acct);
	if (e->announced)
		vc_admin_session_closed(l->admin, e, why, freed);
}

int vc_vm_link_create(const struct vc_vm_link_params *p, struct vc_vm_link **out)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct vc_vm_link *l;
	int rc;

	if (p->path && strlen(p->path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->cfg = p->cfg;
	l->next_id = p->next_id;
	l->acct = p->acct;
	l->admin = p->admin;
	l->conn = l->mem_fd = l->lfd = -1;
	vc_vm_rx_init(&l->rx);
	for (unsigned i = 0; i < VC_VM_MAX_SESSIONS; i++)
		slot_reset(&l->slots[i]);
	if (!p->path) {
		*out = l;
		return 0;
	}
	strcpy(a.sun_path, p->path);
	strcpy(l->path, p->path);
	l->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->lfd < 0) {
		rc = -errno;
		goto err_free;
	}
	/* A stale socket from a dead server is replaced; a live one is not. */
	if (connect(l->lfd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		rc = -EADDRINUSE;
		goto err_close;
	}
	unlink(p->path);
	if (bind(l->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l->lfd, 4) < 0) {
		rc = -errno;
		goto err_close;
	}
	chmod(p->path, 0660);
	*out = l;
	return 0;

err_close:
	close(l->lfd);
err_free:
	free(l);
	return rc;
}

void vc_vm_link_set_admin(struct vc_vm_link *l, struct vc_admin *a)
{
	l->admin = a;
}

/* ---- frames to QEMU --------------------------------------------------------- */

static void send_frame(struct vc_vm_link *l, const struct vc_vm_msg *m)
{
	int rc;

	if (l->conn < 0)
		return;
	rc = vc_vm_send(l->conn, m, NULL, 0);
	if (rc)
		vc_log("vm %s: cannot write to QEMU: %s", l->name, strerror(-rc));
}

static void send_simple(struct vc_vm_link *l, uint32_t type, uint32_t slot, int status, const char *msg)
{
	struct vc_vm_msg m;

	vc_vm_msg_init(&m, type, slot);
	m.status = status;
	snprintf(m.message, sizeof(m.message), "%s", msg ? msg : "");
	send_frame(l, &m);
}

/* ---- workers ------------------------------------------------------------------ */

static void stop_worker(struct slot *s)
{
	if (s->ctl >= 0) {
		close(s->ctl); /* the worker's session sees the hang-up */
		s->ctl = -1;
	}
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		s->kill_at = vc_now_ms() + STOP_GRACE_MS;
	}
}

/* Give the slot's memory back to the host; the guest reads zeros there. */
static void scrub(struct vc_vm_link *l, uint32_t slot)
{
	if (l->mem_fd >= 0)
		(void)fallocate(l->mem_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)(slot * l->slot_size), (off_t)l->slot_size);
}

static int spawn(struct vc_vm_link *l, const struct vc_vm_msg *m, int doorbell, int complete)
{
	struct slot *s = &l->slots[m->slot];
	struct vc_vm_worker_args a = {
		.mem_fd = l->mem_fd, .doorbell_fd = doorbell, .complete_fd = complete,
		.region_off = m->slot * l->slot_size, .slot_size = l->slot_size,
		.slot = m->slot, .pid = m->pid, .uid = m->uid, .vm_name = l->name,
	};
	int sv[2], idx;
	pid_t pid;

	a.id = (*l->next_id)++;
	idx = vc_acct_reserve(l->acct, a.id, VC_ACCT_VM, m->slot);
	if (idx < 0)
		return idx;
	a.acct_index = idx;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		int rc = -errno;

		vc_acct_release(l->acct, idx);
		return rc;
	}
	a.ctl_fd = sv[1];
	memcpy(a.comm, m->comm, sizeof(a.comm));
	for (size_t i = 0; i < sizeof(a.comm) && a.comm[i]; i++)
		if (a.comm[i] < 0x20 || a.comm[i] > 0x7e)
			a.comm[i] = '?'; /* the guest's process name goes into our logs */
	a.ram = l->ram.r;
	a.nram = l->ram.n;
	pid = fork();
	if (pid == 0) {
		int keep[4 + VC_VM_MEM_MAX] = {a.mem_fd, a.doorbell_fd, a.complete_fd, a.ctl_fd};

		for (uint32_t i = 0; i < l->ram.n; i++)
			keep[4 + i] = l->ram.r[i].fd;
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(1);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_IGN);
		vc_close_all_but(keep, 4 + (int)l->ram.n);
		vc_acct_bind(l->acct, a.acct_index);
		_exit(vc_worker_vm_main(l->cfg, &a));
	}
	close(sv[1]);
	if (pid < 0) {
		int rc = -errno;

		close(sv[0]);
		vc_acct_release(l->acct, idx);
		return rc;
	}
	l->acct->e[idx].worker = pid;
	slot_reset(s);
	s->state = S_OPENING;
	s->pid = pid;
	s->ctl = sv[0];
	s->id = a.id;
	s->acct = idx;
	l->nworkers++;
	return 0;
}

/* ---- the connection ------------------------------------------------------------ */


static void drop_conn(struct vc_vm_link *l, const char *why)
{
	unsigned stopping = 0;

	if (l->conn < 0)
		return;
	for (unsigned i = 0; i < VC_VM_MAX_SESSIONS; i++) {
		struct slot *s = &l->slots[i];

		if (s->pid > 0) {
			struct orphan *o = calloc(1, sizeof(*o));

			if (s->acct >= 0)
				l->acct->e[s->acct].stop_why = VC_ACCT_STOP_SERVER;
			stop_worker(s);
			if (o) {
				o->pid = s->pid;
				o->acct = s->acct;
				o->kill_at = s->kill_at;
				o->next = l->orphans;
				l->orphans = o;
			} else {
				kill(s->pid, SIGKILL); /* reaped later as an unknown child */
				l->nworkers--;
				if (s->acct >= 0)
					vc_acct_release(l->acct, s->acct);
			}
			stopping++;
		}
		slot_reset(s);
	}
	vc_log("vm %s: QEMU connection closed (%s); stopping %u sessions", l->name[0] ? l->name : "?", why,
	       stopping);
	vc_vm_rx_drop(&l->rx);
	close(l->conn);
	l->conn = -1;
	if (l->mem_fd >= 0)
		close(l->mem_fd);
	l->mem_fd = -1;
	vc_vm_ram_clear(&l->ram);
	l->welcomed = false;
	l->name[0] = 0;
}

static bool is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strcmp(target, "anon_inode:[eventfd]");
}

static void sanitize(char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
}

static void on_hello(struct vc_vm_link *l, const struct vc_vm_msg *m, int *fds, int nfds)
{
	struct vc_vm_msg w;
	struct stat st;
	int seals;

	vc_vm_msg_init(&w, VC_VM_WELCOME, 0);
	if (nfds != 1) {
		snprintf(w.message, sizeof(w.message), "HELLO needs the memfd of the sessions region");
		goto refuse;
	}
	seals = fcntl(fds[0], F_GET_SEALS);
	if (fstat(fds[0], &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != m->region_size) {
		snprintf(w.message, sizeof(w.message), "the sessions region is not a file of %" PRIu64 " bytes",
			 m->region_size);
		goto refuse;
	}
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		snprintf(w.message, sizeof(w.message), "the sessions region must be a memfd sealed against shrinking");
		goto refuse;
	}
	if (!m->max_sessions || m->max_sessions > VC_VM_MAX_SESSIONS || (m->max_sessions & (m->max_sessions - 1)) ||
	    m->region_size % m->max_sessions || (m->region_size / m->max_sessions) % (2 * MiB) ||
	    !(m->region_size / m->max_sessions)) {
		snprintf(w.message, sizeof(w.message),
			 "bad geometry: %u sessions in %" PRIu64 " bytes (a power of two up to %u, 2 MiB multiples)",
			 m->max_sessions, m->region_size, VC_VM_MAX_SESSIONS);
		goto refuse;
	}
	l->mem_fd = fds[0];
	l->mem_size = m->region_size;
	l->max_sessions = m->max_sessions;
	l->slot_size = m->region_size / m->max_sessions;
	snprintf(l->name, sizeof(l->name), "%s", m->name[0] ? m->name : "unnamed");
	sanitize(l->name);
	l->welcomed = true;
	w.max_sessions = m->max_sessions;
	snprintf(w.message, sizeof(w.message), "vcuda-server (protocol %u, abi %016" PRIx64 ", executor %s)",
		 VC_PROTO_VERSION, (uint64_t)VC_ABI_HASH, l->cfg->executor);
	send_frame(l, &w);
	vc_log("vm %s: QEMU connected: %u session slots of %" PRIu64 " MiB", l->name, l->max_sessions,
	       l->slot_size / MiB);
	return;

refuse:
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	w.status = -EINVAL;
	send_frame(l, &w);
	drop_conn(l, w.message);
}

/* A range of the VM's RAM (MEM, right after HELLO: vm_ram.h). */
static void on_mem(struct vc_vm_link *l, const struct vc_vm_msg *m, int *fds, int nfds)
{
	char why[128];
	int rc;

	if (nfds != 1) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		drop_conn(l, "MEM needs one descriptor");
		return;
	}
	rc = vc_vm_ram_add(&l->ram, m, fds[0], why, sizeof(why));
	if (rc < 0)
		drop_conn(l, why);
	else
		vc_log("vm %s: guest RAM at %#" PRIx64 ", %" PRIu64 " MiB: %s", l->name, m->region_off,
		       m->region_size / MiB, rc ? why : "page-locked memory there is pinned in place");
}

static void on_open(struct vc_vm_link *l, const struct vc_vm_msg *m, int *fds, int nfds)
{
	struct slot *s;
	char msg[sizeof(((struct vc_vm_msg *)0)->message)];
	int rc;

	if (m->slot >= l->max_sessions || nfds != 2 || !is_eventfd(fds[0]) || !is_eventfd(fds[1]) ||
	    m->region_off != m->slot * l->slot_size || m->region_size != l->slot_size) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		drop_conn(l, "malformed OPEN");
		return;
	}
	s = &l->slots[m->slot];
	if (s->state != S_FREE) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		send_simple(l, VC_VM_OPENED, m->slot, -EBUSY, "the slot is in use");
		return;
	}
	rc = spawn(l, m, fds[0], fds[1]);
	close(fds[0]);
	close(fds[1]);
	if (rc) {
		snprintf(msg, sizeof(msg), "vcuda-server cannot start a session process: %s", strerror(-rc));
		send_simple(l, VC_VM_OPENED, m->slot, rc, msg);
	}
}

static void on_close(struct vc_vm_link *l, const struct vc_vm_msg *m)
{
	struct slot *s;

	if (m->slot >= l->max_sessions) {
		drop_conn(l, "CLOSE for a slot out of range");
		return;
	}
	s = &l->slots[m->slot];
	switch (s->state) {
	case S_FREE:
		send_simple(l, VC_VM_CLOSED, m->slot, 0, "not open");
		break;
	case S_OPENING:
	case S_OPEN:
		s->close_asked = true;
		s->state = S_CLOSING;
		stop_worker(s);
		break;
	case S_CLOSING:
		s->close_asked = true;
		break;
	}
}

static void on_frame(struct vc_vm_link *l)
{
	uint32_t allowed = l->welcomed ? (1u << VC_VM_OPEN) | (1u << VC_VM_CLOSE) | (1u << VC_VM_MEM) : 1u << VC_VM_HELLO;
	struct vc_vm_msg m;
	int fds[4], nfds = l->rx.nfds;
	char why[96];

	memcpy(fds, l->rx.fds, sizeof(fds));
	l->rx.nfds = 0; /* ours now */
	if (vc_vm_msg_decode(l->rx.buf, &m, allowed, why, sizeof(why))) {
		vc_vm_rx_init(&l->rx);
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		drop_conn(l, why);
		return;
	}
	vc_vm_rx_init(&l->rx);
	switch (m.type) {
	case VC_VM_HELLO:
		on_hello(l, &m, fds, nfds);
		return;
	case VC_VM_OPEN:
		on_open(l, &m, fds, nfds);
		return;
	case VC_VM_MEM:
		on_mem(l, &m, fds, nfds);
		return;
	default:
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		on_close(l, &m);
		return;
	}
}

int vc_vm_link_adopt(struct vc_vm_link *l, int fd, char *err, size_t errlen)
{
	struct vc_vm_msg w;
	int fl;

	if (l->conn >= 0 || l->orphans) {
		vc_vm_msg_init(&w, VC_VM_WELCOME, 0);
		w.status = l->conn >= 0 ? -EBUSY : -EAGAIN;
		snprintf(w.message, sizeof(w.message), "%s",
			 l->conn >= 0 ? "this vcuda-server already serves a VM (one server per VM)"
				      : "the previous connection's sessions are still stopping; retry");
		vc_vm_send(fd, &w, NULL, 0);
		vc_log("vm link: refused a second connection: %s", w.message);
		snprintf(err, errlen, "%s", w.message);
		close(fd);
		return w.status;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		int rc = -errno;

		snprintf(err, errlen, "not a usable connection: %s", strerror(errno));
		close(fd);
		return rc;
	}
	l->conn = fd;
	l->welcomed = false;
	l->hello_deadline = vc_now_ms() + HELLO_TIMEOUT_MS;
	vc_vm_rx_init(&l->rx);
	return 0;
}

static void on_accept(struct vc_vm_link *l)
{
	int fd = accept4(l->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	char why[128];

	if (fd >= 0)
		vc_vm_link_adopt(l, fd, why, sizeof(why));
}

/* A worker's report on its control socket. */
static void on_report(struct vc_vm_link *l, uint32_t slot)
{
	struct slot *s = &l->slots[slot];
	struct vc_vm_msg m;
	char why[96];
	int nfds;
	ssize_t n = vc_sock_recv(s->ctl, &s->report, sizeof(s->report), NULL, 0, &nfds, 0);

	if (n == -ETIMEDOUT || n == -EAGAIN)
		return;
	if (n != (ssize_t)sizeof(s->report) ||
	    vc_vm_msg_decode(&s->report, &m, 1u << VC_VM_OPENED, why, sizeof(why)) || m.slot != slot) {
		/* Closed without a report (it died), or garbage: stop watching;
		 * the reaper answers QEMU. */
		close(s->ctl);
		s->ctl = -1;
		if (n > 0)
			kill(s->pid, SIGKILL);
		memset(&s->report, 0, sizeof(s->report));
		return;
	}
	s->report = m;
	if (m.status == 0 && s->state == S_OPENING) {
		s->state = S_OPEN;
		s->report_ok = true;
		m.session_id = s->id;
		send_frame(l, &m);
		/* The worker reports on its control socket after its
		 * vc_acct_client(): the socket orders the pid, uid and comm that
		 * the announcement reads (as state's release/acquire does for a
		 * local session). */
		if (s->acct >= 0 && !l->acct->e[s->acct].announced) {
			l->acct->e[s->acct].announced = 1;
			vc_admin_session_opened(l->admin, &l->acct->e[s->acct]);
		}
	}
}

bool vc_vm_link_reaped(struct vc_vm_link *l, pid_t pid, int status)
{
	char how[64];

	if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(status));
	else
		snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(status));
	for (struct orphan **pp = &l->orphans; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct orphan *o = *pp;

			*pp = o->next;
			account_end(l, o->acct, status);
			free(o);
			l->nworkers--;
			return true;
		}
	}
	for (uint32_t i = 0; i < VC_VM_MAX_SESSIONS; i++) {
		struct slot *s = &l->slots[i];
		struct vc_vm_msg m;

		if (s->pid != pid)
			continue;
		l->nworkers--;
		s->pid = 0;
		if (s->ctl >= 0) {
			close(s->ctl);
			s->ctl = -1;
		}
		account_end(l, s->acct, status);
		s->acct = -1;
		switch (s->state) {
		case S_OPENING:
			vc_vm_msg_init(&m, VC_VM_OPENED, i);
			m.session_id = s->id;
			if (s->report.magic == VC_VM_MAGIC && s->report.status) {
				m.status = s->report.status;
				memcpy(m.message, s->report.message, sizeof(m.message));
			} else {
				m.status = -EIO;
				snprintf(m.message, sizeof(m.message), "the session process %s before it was ready", how);
			}
			vc_log("vm %s slot %u: open failed: %s", l->name, i, m.message);
			scrub(l, i);
			slot_reset(s);
			send_frame(l, &m);
			break;
		case S_OPEN:
			/* QEMU keeps the slot (STALE) until the guest closes it,
			 * and answers that CLOSE itself: here it is free now. Its
			 * bytes stay until the next session of the slot clears
			 * them: the guest reads why it ended (FATAL and the
			 * reason) in its control page. */
			vc_log("vm %s slot %u: session %u's process %s; telling the guest", l->name, i, s->id, how);
			vc_vm_msg_init(&m, VC_VM_LOST, i);
			m.session_id = s->id;
			m.status = WIFSIGNALED(status) ? -EIO : -EPIPE;
			snprintf(m.message, sizeof(m.message), "the session process %s", how);
			slot_reset(s);
			send_frame(l, &m);
			break;
		case S_CLOSING:
			scrub(l, i);
			if (s->close_asked)
				send_simple(l, VC_VM_CLOSED, i, 0, "closed");
			slot_reset(s);
			break;
		default:
			break;
		}
		return true;
	}
	return false;
}

int vc_vm_link_pollfds(struct vc_vm_link *l, struct pollfd *p, int max)
{
	int n = 0;

	l->nmap = 0;
	if (l->lfd >= 0 && n < max) {
		p[n] = (struct pollfd){.fd = l->lfd, .events = POLLIN};
		l->map[n++] = P_LISTEN;
	}
	if (l->conn >= 0 && n < max) {
		p[n] = (struct pollfd){.fd = l->conn, .events = POLLIN};
		l->map[n++] = P_CONN;
	}
	for (uint32_t i = 0; i < VC_VM_MAX_SESSIONS && n < max; i++) {
		if (l->slots[i].state == S_OPENING && l->slots[i].ctl >= 0) {
			p[n] = (struct pollfd){.fd = l->slots[i].ctl, .events = POLLIN};
			l->map[n++] = (int)i;
		}
	}
	l->nmap = n;
	return n;
}

int vc_vm_link_timeout_ms(struct vc_vm_link *l)
{
	int64_t next = INT64_MAX, now = vc_now_ms();

	if (l->conn >= 0 && !l->welcomed)
		next = l->hello_deadline;
	for (uint32_t i = 0; i < VC_VM_MAX_SESSIONS; i++)
		if (l->slots[i].kill_at && l->slots[i].kill_at < next)
			next = l->slots[i].kill_at;
	for (struct orphan *o = l->orphans; o; o = o->next)
		if (o->kill_at && o->kill_at < next)
			next = o->kill_at;
	if (next == INT64_MAX)
		return -1;
	return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

static void timers(struct vc_vm_link *l)
{
	int64_t now = vc_now_ms();

	if (l->conn >= 0 && !l->welcomed && now >= l->hello_deadline)
		drop_conn(l, "no HELLO within 5 s");
	for (uint32_t i = 0; i < VC_VM_MAX_SESSIONS; i++) {
		struct slot *s = &l->slots[i];

		if (s->kill_at && now >= s->kill_at && s->pid > 0) {
			vc_log("vm %s slot %u: session %u did not stop in %d ms; killing it", l->name, i, s->id,
			       STOP_GRACE_MS);
			kill(s->pid, SIGKILL);
			s->kill_at = 0;
		}
	}
	for (struct orphan *o = l->orphans; o; o = o->next) {
		if (o->kill_at && now >= o->kill_at) {
			kill(o->pid, SIGKILL);
			o->kill_at = 0;
		}
	}
}

void vc_vm_link_handle(struct vc_vm_link *l, const struct pollfd *p, int n)
{
	bool accept_pending = false;

	if (n > l->nmap)
		n = l->nmap;
	for (int i = 0; i < n; i++) {
		if (!p[i].revents)
			continue;
		if (l->map[i] == P_LISTEN) {
			/* after the connection's own events: a QEMU that hung up and
			 * reconnected at once must find its old connection gone */
			accept_pending = true;
		} else if (l->map[i] == P_CONN) {
			for (;;) {
				int r;

				if (l->conn < 0)
					break;
				r = vc_vm_rx_read(l->conn, &l->rx);
				if (r == 0)
					break;
				if (r < 0) {
					drop_conn(l, r == -ECONNRESET ? "QEMU hung up" : "broken frame");
					break;
				}
				on_frame(l);
			}
		} else {
			uint32_t slot = (uint32_t)l->map[i];

			if (l->slots[slot].ctl == p[i].fd && l->slots[slot].state == S_OPENING)
				on_report(l, slot);
		}
	}
	if (accept_pending)
		on_accept(l);
	timers(l);
}

unsigned vc_vm_link_workers(struct vc_vm_link *l)
{
	return l->nworkers;
}

void vc_vm_link_destroy(struct vc_vm_link *l)
{
	int64_t t0;
	int status;

	if (!l)
		return;
	drop_conn(l, "server shutting down");
	t0 = vc_now_ms();
	while (l->orphans) {
		/* Only our own workers: the listener reaps its host-local ones. */
		pid_t pid = waitpid(l->orphans->pid, &status, WNOHANG);

		if (pid > 0) {
			vc_vm_link_reaped(l, pid, status);
			continue;
		}
		if (vc_now_ms() - t0 > STOP_GRACE_MS)
			for (struct orphan *o = l->orphans; o; o = o->next)
				kill(o->pid, SIGKILL);
		usleep(10000);
	}
	if (l->lfd >= 0) {
		close(l->lfd);
		unlink(l->path);
	}
	free(l);
}
