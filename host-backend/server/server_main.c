/* SPDX-License-Identifier: MIT */
/*
 * server_main.c - vcuda-server's listener: one process per VM (or per group
 * of host-local clients). It listens on a unix socket and hands each client
 * to a worker process of its own (worker.c), which serves that client's
 * session and frees everything when the client disconnects, dies or breaks
 * the protocol. The listener itself never loads CUDA, so that workers can be
 * forked safely and a fault in one never reaches the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
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
#include "core/handshake.h"
#include "server/pending.h"
#include "resources/gpushare.h"
#include "resources/fdbroker.h"
#include "resources/ipc.h"
#include "server/server_config.h"
#include "vc_abi_hash.h"
#include "vc_shm.h"
#include "vc_sock.h"
#include "vc_time.h"
#include "server/vm_link.h"

#define STOP_GRACE_MS 5000

struct worker {
	struct worker *next;
	pid_t pid;
	uint32_t id;
	int acct;
};

static struct vc_server_config g_cfg;
static struct vc_vm_link *g_vm;
static struct vc_acct *g_acct;
static struct vc_admin *g_admin;
static struct worker *g_workers;
static struct vc_pending g_pending; /* connections waiting for their hello */
static uint32_t g_next_id = 1;
static unsigned g_nworkers;
static volatile sig_atomic_t g_quit;
static int g_wake[2] = {-1, -1};

static void wake(int sig)
{
	char b = 0;

	if (sig == SIGINT || sig == SIGTERM)
		g_quit = 1;
	if (write(g_wake[1], &b, 1) < 0) {
		/* the pipe is full: a wake-up is pending anyway */
	}
}

static void refuse_busy(int fd)
{
	struct vc_welcome w = {.magic = VC_WELCOME_MAGIC, .version = VC_PROTO_VERSION,
			       .abi_hash = VC_ABI_HASH, .status = -EBUSY};

	snprintf(w.message, sizeof(w.message),
		 "vcuda-server: server full: %u sessions open (--max-sessions %u); try again later", g_nworkers,
		 g_cfg.max_sessions);
	vc_sock_send(fd, &w, sizeof(w), NULL, 0);
}

/* Collect workers that ended; say how, when it was not a clean exit. */
static void reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		vc_ipc_reap(pid); /* its IPC handles went with it */
		vc_fdbroker_reap(pid); /* and the descriptors it exported */
		if (g_vm && vc_vm_link_reaped(g_vm, pid, status))
			continue;
		for (struct worker **pp = &g_workers; *pp; pp = &(*pp)->next) {
			struct worker *w = *pp;

			if (w->pid != pid)
				continue;
			if (WIFSIGNALED(status))
				vc_log("session %u: worker %d killed by signal %d; the session's resources went with it",
				       w->id, (int)pid, WTERMSIG(status));
			{
				struct vc_acct_entry *e = &g_acct->e[w->acct];
				const char *why = vc_acct_end_reason(e, status);
				uint64_t freed;

				/* A session that was ready and ended before the watcher
				 * looked is announced now: its end is reported too. */
				/* Acquire pairs with the worker's release store of 2 in
				 * vc_acct_client() (acct.c): seeing 2, we see the pid,
				 * uid and comm that the announcement reports. */
				if (!e->announced && vc_shm_load32(&e->state, VC_ACQUIRE) == 2) {
					e->announced = 1;
					vc_admin_session_opened(g_admin, e);
				}
				freed = vc_acct_release(g_acct, w->acct);

				if (e->announced)
					vc_admin_session_closed(g_admin, e, why, freed);
			}
			*pp = w->next;
			free(w);
			g_nworkers--;
			break;
		}
	}
}

static void stop_all(void)
{
	int64_t t0;

	for (struct worker *w = g_workers; w; w = w->next) {
		g_acct->e[w->acct].stop_why = VC_ACCT_STOP_SERVER;
		kill(w->pid, SIGTERM);
	}
	t0 = vc_now_ms();
	while (g_workers) {
		reap();
		if (vc_now_ms() - t0 > STOP_GRACE_MS) {
			for (struct worker *w = g_workers; w; w = w->next)
				kill(w->pid, SIGKILL);
		}
		usleep(10000);
	}
}

static void spawn(int lfd, int cfd, uint32_t id, const struct vc_hello *hello)
{
	struct worker *w = calloc(1, sizeof(*w));
	pid_t pid;
	int idx = w ? vc_acct_reserve(g_acct, id, VC_ACCT_LOCAL, 0) : -ENOMEM;

	if (idx < 0) {
		refuse_busy(cfd);
		close(cfd);
		free(w);
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* A worker does not outlive its listener: killing vcuda-server ends
		 * its sessions (their guests see the server gone). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(1);
		signal(SIGCHLD, SIG_DFL);
		(void)lfd;
		/* Nothing of the listener's: not the VM link's sockets and memory. */
		vc_close_all_but(&cfd, 1);
		vc_acct_bind(g_acct, idx);
		/* The listener reads hellos without blocking; the worker blocks. */
		fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) & ~O_NONBLOCK);
		_exit(vc_worker_main(&g_cfg, cfd, id, hello));
	}
	close(cfd);
	if (pid < 0) {
		vc_log("cannot start a worker for client %u: %s", id, strerror(errno));
		vc_acct_release(g_acct, idx);
		free(w);
		return;
	}
	g_acct->e[idx].worker = pid;
	w->pid = pid;
	w->id = id;
	w->acct = idx;
	w->next = g_workers;
	g_workers = w;
	g_nworkers++;
}

/* A pending connection's hello arrived (pending.c): refuse it, or give it a
 * worker of its own. Only now does it count as a session. */
static void on_hello(void *arg, int cfd, const void *msg, ssize_t n)
{
	struct vc_welcome w = {.magic = VC_WELCOME_MAGIC, .version = VC_PROTO_VERSION,
			       .abi_hash = VC_ABI_HASH};
	struct vc_hello hello;
	int lfd = *(int *)arg, rc;

	if (n == 0) { /* it went away */
		close(cfd);
		return;
	}
	rc = vc_hello_decode(msg, n, &hello, w.message, sizeof(w.message));
	if (rc) {
		vc_log("client %u: %s; refused", g_next_id++, w.message);
		w.status = rc;
		vc_sock_send(cfd, &w, sizeof(w), NULL, 0);
		close(cfd);
		return;
	}
	if (g_nworkers >= g_cfg.max_sessions) {
		vc_log("refusing pid %u (%s): %u sessions open (--max-sessions)", hello.pid, hello.comm, g_nworkers);
		refuse_busy(cfd);
		close(cfd);
		return;
	}
	spawn(lfd, cfd, g_next_id++, &hello);
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "vcuda-server: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A stale socket from a dead server is replaced; a live one is not. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		fprintf(stderr, "vcuda-server: another server is listening on %s\n", path);
		close(fd);
		return -1;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "vcuda-server: cannot listen on %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	chmod(path, 0660);
	return fd;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vcuda-server [--socket PATH] [--vm-socket PATH | --vm-conn-fd N] [options]\n"
		"  -s, --socket PATH        unix socket for host-local clients (default $VCUDA_SOCKET,\n"
		"                           unless a VM socket or connection is given)\n"
		"      --vm-socket PATH     unix socket for the VM's QEMU (virtio-vcuda-pci's chardev)\n"
		"      --vm-conn-fd N       serve the QEMU connection already open on fd N (vcuda-mgmtd)\n"
		"      --vm-name NAME       the VM's name, for logs and the admin socket\n"
		"      --admin-socket PATH  JSON admin socket for vcuda-mgmtd (docs/MGMT.md)\n"
		"      --gpu ID             use only this GPU (UUID or index, as CUDA_VISIBLE_DEVICES)\n"
		"      --mem-quota BYTES    device memory for all sessions together (default: no quota)\n"
		"      --pinned-quota BYTES page-locked guest memory for all sessions together\n"
		"      --weight N           compute weight, 1..10000 (default 100)\n"
		"      --idle-timeout SECS  end sessions idle this long (default 0: never)\n"
		"      --sched FILE         share the GPU by weight with the servers using the same FILE\n"
		"  -e, --executor NAME      cuda (default) or ci-standin (tests without a GPU only)\n"
		"      --driver PATH        the NVIDIA libcuda.so.1 to load (default: the usual places)\n"
		"      --nvml-lib PATH      the host's libnvidia-ml.so.1 for the guest's NVML, or none\n"
		"                           (default: libnvidia-ml.so.1; none with the CI stand-in)\n"
		"      --ring-size BYTES    command ring per session (power of two; default 1M)\n"
		"      --arena-size BYTES   staging arena per session (default 64M)\n"
		"      --pinned-size BYTES  pool for the guest's page-locked memory (default 256M, 0: none)\n"
		"      --pinned-max BYTES   page-locked memory beyond the pool, per host-local session\n"
		"                           (default: half the host's RAM; 0: none)\n"
		"      --chunk-size BYTES   arena chunk (default 512K)\n"
		"      --slots N            reply slots per session (default 64)\n"
		"      --slot-size BYTES    reply slot size (default 8K)\n"
		"      --max-sessions N     refuse clients beyond N (default 64)\n"
		"      --max-pending N      connections waiting for their hello, in all (default 64)\n"
		"      --max-pending-per-peer N  ... of one uid (default 16); past either, the oldest goes\n"
		"      --spin-us US         busy-poll before sleeping (default 100)\n"
		"      --standin-mem BYTES  ci-standin device memory per session (default 1G)\n"
		"      --op-times           time each CUDA operation on a session's serving thread and\n"
		"                           log the 20 that took the most when the session closes\n"
		"  -v, --verbose            log every CUDA operation that fails\n"
		"Sizes accept K, M and G suffixes.\n");
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_u32(const char *opt, const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_size(s, &v) || v > UINT32_MAX) {
		fprintf(stderr, "vcuda-server: %s: bad value '%s'\n", opt, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	enum { O_RING = 256, O_ARENA, O_CHUNK, O_SLOTS, O_SLOTSZ, O_MAX, O_SPIN, O_SMEM, O_DRIVER, O_PINNED,
	       O_VMSOCK, O_VMFD, O_VMNAME, O_ADMIN, O_GPU, O_MEMQ, O_PINQ, O_WEIGHT, O_IDLE, O_SCHED, O_PEND,
	       O_PENDPEER, O_PINMAX, O_NVML, O_OPTIMES };
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"executor", required_argument, NULL, 'e'},
		{"ring-size", required_argument, NULL, O_RING},
		{"arena-size", required_argument, NULL, O_ARENA},
		{"chunk-size", required_argument, NULL, O_CHUNK},
		{"slots", required_argument, NULL, O_SLOTS},
		{"slot-size", required_argument, NULL, O_SLOTSZ},
		{"max-sessions", required_argument, NULL, O_MAX},
		{"max-pending", required_argument, NULL, O_PEND},
		{"max-pending-per-peer", required_argument, NULL, O_PENDPEER},
		{"spin-us", required_argument, NULL, O_SPIN},
		{"standin-mem", required_argument, NULL, O_SMEM},
		{"driver", required_argument, NULL, O_DRIVER},
		{"nvml-lib", required_argument, NULL, O_NVML},
		{"pinned-size", required_argument, NULL, O_PINNED},
		{"pinned-max", required_argument, NULL, O_PINMAX},
		{"vm-socket", required_argument, NULL, O_VMSOCK},
		{"vm-conn-fd", required_argument, NULL, O_VMFD},
		{"vm-name", required_argument, NULL, O_VMNAME},
		{"admin-socket", required_argument, NULL, O_ADMIN},
		{"gpu", required_argument, NULL, O_GPU},
		{"mem-quota", required_argument, NULL, O_MEMQ},
		{"pinned-quota", required_argument, NULL, O_PINQ},
		{"weight", required_argument, NULL, O_WEIGHT},
		{"idle-timeout", required_argument, NULL, O_IDLE},
		{"sched", required_argument, NULL, O_SCHED},
		{"op-times", no_argument, NULL, O_OPTIMES},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	uint32_t u;
	int o;

	g_cfg.executor = "cuda";
	g_cfg.max_sessions = 64;
	g_cfg.max_pending = 64;
	g_cfg.max_pending_per_peer = 16;
	g_cfg.lreq.pinned_size = 256ull << 20;
	g_cfg.pinned_max = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 2;
	g_cfg.weight = 100;
	g_cfg.vm_conn_fd = -1;
	while ((o = getopt_long(argc, argv, "s:e:vh", opts, NULL)) != -1) {
		switch (o) {
		case 's': g_cfg.socket_path = optarg; break;
		case 'e': g_cfg.executor = optarg; break;
		case 'v': g_cfg.verbose++; break;
		case O_OPTIMES: g_cfg.op_times = true; break;
		case O_DRIVER: g_cfg.driver = optarg; break;
		case O_NVML: g_cfg.nvml_lib = optarg; break;
		case O_VMSOCK: g_cfg.vm_socket_path = optarg; break;
		case O_VMNAME: g_cfg.vm_name = optarg; break;
		case O_ADMIN: g_cfg.admin_path = optarg; break;
		case O_GPU: g_cfg.gpu = optarg; break;
		case O_SCHED: g_cfg.sched_path = optarg; break;
		case O_VMFD:
			if (parse_u32("--vm-conn-fd", optarg, &u) || u < 3 || u > INT32_MAX)
				return -1;
			g_cfg.vm_conn_fd = (int)u;
			break;
		case O_MEMQ:
			if (parse_size(optarg, &g_cfg.mem_quota)) {
				fprintf(stderr, "vcuda-server: --mem-quota: bad value '%s'\n", optarg);
				return -1;
			}
			break;
		case O_PINQ:
			if (parse_size(optarg, &g_cfg.pinned_quota)) {
				fprintf(stderr, "vcuda-server: --pinned-quota: bad value '%s'\n", optarg);
				return -1;
			}
			break;
		case O_WEIGHT:
			if (parse_u32("--weight", optarg, &g_cfg.weight) || !g_cfg.weight || g_cfg.weight > 10000) {
				fprintf(stderr, "vcuda-server: --weight: 1..10000\n");
				return -1;
			}
			break;
		case O_IDLE:
			if (parse_u32("--idle-timeout", optarg, &g_cfg.idle_timeout_s))
				return -1;
			break;
		case 'h': usage(stdout); exit(0);
		case O_RING: if (parse_u32("--ring-size", optarg, &g_cfg.lreq.ring_size)) return -1; break;
		case O_CHUNK: if (parse_u32("--chunk-size", optarg, &g_cfg.lreq.chunk_size)) return -1; break;
		case O_SLOTS: if (parse_u32("--slots", optarg, &g_cfg.lreq.slot_count)) return -1; break;
		case O_SLOTSZ: if (parse_u32("--slot-size", optarg, &g_cfg.lreq.slot_size)) return -1; break;
		case O_SPIN: if (parse_u32("--spin-us", optarg, &g_cfg.spin_us)) return -1; break;
		case O_MAX:
			if (parse_u32("--max-sessions", optarg, &u) || !u)
				return -1;
			g_cfg.max_sessions = u;
			break;
		case O_PEND:
			if (parse_u32("--max-pending", optarg, &u) || !u || u > 4096)
				return -1;
			g_cfg.max_pending = u;
			break;
		case O_PENDPEER:
			if (parse_u32("--max-pending-per-peer", optarg, &u) || !u || u > 4096)
				return -1;
			g_cfg.max_pending_per_peer = u;
			break;
		case O_ARENA:
			if (parse_size(optarg, &g_cfg.lreq.arena_size)) {
				fprintf(stderr, "vcuda-server: --arena-size: bad value '%s'\n", optarg);
				return -1;
			}
			break;
		case O_PINNED:
			if (parse_size(optarg, &g_cfg.lreq.pinned_size)) {
				fprintf(stderr, "vcuda-server: --pinned-size: bad value '%s'\n", optarg);
				return -1;
			}
			break;
		case O_PINMAX:
			if (parse_size(optarg, &g_cfg.pinned_max)) {
				fprintf(stderr, "vcuda-server: --pinned-max: bad value '%s'\n", optarg);
				return -1;
			}
			break;
		case O_SMEM:
			if (parse_size(optarg, &g_cfg.standin.mem_limit)) {
				fprintf(stderr, "vcuda-server: --standin-mem: bad value '%s'\n", optarg);
				return -1;
			}
			break;
		default: usage(stderr); return -1;
		}
	}
	/* $VCUDA_SOCKET only names the host-local socket of a server that was
	 * given no socket at all: a VM's server inherits no client's setting. */
	if (!g_cfg.socket_path && !g_cfg.vm_socket_path && g_cfg.vm_conn_fd < 0)
		g_cfg.socket_path = getenv("VCUDA_SOCKET");
	if (optind != argc || (!g_cfg.socket_path && !g_cfg.vm_socket_path && g_cfg.vm_conn_fd < 0)) {
		usage(stderr);
		return -1;
	}
	return 0;
}

static int adopt(void *arg, int fd, char *err, size_t errlen)
{
	(void)arg;
	if (!g_vm) {
		close(fd);
		snprintf(err, errlen, "this server serves no VM");
		return -EINVAL;
	}
	return vc_vm_link_adopt(g_vm, fd, err, errlen);
}

/* Sessions whose worker reported its client: announce them. Idle ones past
 * the timeout: stop them (their workers' exits free what they held).
 * Returns how long the loop may sleep before the next look. */
static int watch_sessions(void)
{
	/* The listener's own word in the shared page (set by main() and by
	 * admin.c set() in this process; no worker touches it): relaxed. */
	uint32_t idle_s = vc_shm_load32(&g_acct->idle_timeout_s, VC_RELAXED);
	uint64_t now = vc_now_ns();

	vc_sched_beat();

	for (unsigned i = 0; i < VC_ACCT_MAX; i++) {
		struct vc_acct_entry *e = &g_acct->e[i];

		/* Acquire pairs with the worker's release store of 2 in
		 * vc_acct_client(): then its pid, uid and comm are visible. */
		if (vc_shm_load32(&e->state, VC_ACQUIRE) != 2)
			continue;
		if (!e->announced && e->kind == VC_ACCT_LOCAL) {
			e->announced = 1;
			vc_admin_session_opened(g_admin, e);
		}
		/* A figure (the worker's relaxed store in vc_acct_activity()): a
		 * late view only delays the reclaim by one look. */
		uint64_t active = vc_shm_load64(&e->active_ns, VC_RELAXED);

		if (idle_s && !e->stop_why && e->worker > 0 && now > active &&
		    now - active > (uint64_t)idle_s * 1000000000ull) {
			vc_log("session %u: idle for %u s (--idle-timeout): reclaiming it", e->id, idle_s);
			e->stop_why = VC_ACCT_STOP_IDLE;
			kill(e->worker, SIGTERM);
		}
	}
	return 1000;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = wake};
	struct vc_layout probe;
	struct pollfd *pfd;
	size_t pfd_cap;
	int lfd, rc;

	if (parse_args(argc, argv))
		return 2;
	if (strcmp(g_cfg.executor, "ci-standin") && strcmp(g_cfg.executor, "cuda")) {
		fprintf(stderr, "vcuda-server: unknown executor '%s' (cuda, ci-standin)\n", g_cfg.executor);
		return 2;
	}
	if (vc_layout_compute(&g_cfg.lreq, &probe)) {
		fprintf(stderr, "vcuda-server: invalid region sizes (ring a power of two in 4K..16M, "
				"chunk a multiple of 4K in 4K..64M, arena a multiple of the chunk up to 4G, "
				"pinned pool a multiple of 2M up to 64G)\n");
		return 2;
	}
	/* The GPU this server may use: workers load the driver after fork and
	 * see only it. */
	if (g_cfg.gpu && setenv("CUDA_VISIBLE_DEVICES", g_cfg.gpu, 1) < 0)
		return 1;
	g_acct = vc_acct_create();
	if (!g_acct || vc_ipc_create())
		return 1;
	if ((rc = vc_fdbroker_create())) {
		fprintf(stderr, "vcuda-server: cannot make the descriptor broker's socket: %s\n", strerror(-rc));
		return 1;
	}
	/* No worker exists yet (fork orders these for them): plain stores. */
	g_acct->quota[VC_ACCT_MEM] = g_cfg.mem_quota;
	g_acct->quota[VC_ACCT_PINNED] = g_cfg.pinned_quota;
	g_acct->weight = g_cfg.weight;
	g_acct->idle_timeout_s = g_cfg.idle_timeout_s;
	if (g_cfg.sched_path) {
		rc = vc_sched_attach(g_cfg.sched_path, g_cfg.weight);
		if (rc) {
			fprintf(stderr, "vcuda-server: --sched %s: %s\n", g_cfg.sched_path,
				rc == -ENOSPC ? "no free entry (64 servers share it)" : strerror(-rc));
			return 1;
		}
	}
	/* Check the executor in a child: this process must not load CUDA. */
	pid_t pid = fork();
	int st = 0;

	if (pid == 0)
		_exit(vc_worker_probe(&g_cfg));
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return 1;
	pfd_cap = 4 + VC_VM_MAX_SESSIONS + 32 + g_cfg.max_pending;
	pfd = calloc(pfd_cap, sizeof(*pfd));
	if (!pfd || vc_pending_init(&g_pending, g_cfg.max_pending, g_cfg.max_pending_per_peer))
		return 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	lfd = -1;
	if (g_cfg.socket_path) {
		lfd = listen_on(g_cfg.socket_path);
		if (lfd < 0)
			return 1;
		fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK); /* accept until EAGAIN */
	}
	if (g_cfg.vm_socket_path || g_cfg.vm_conn_fd >= 0) {
		struct vc_vm_link_params vp = {.cfg = &g_cfg, .path = g_cfg.vm_socket_path, .next_id = &g_next_id,
					       .acct = g_acct};

		rc = vc_vm_link_create(&vp, &g_vm);
		if (rc) {
			fprintf(stderr, "vcuda-server: cannot listen on %s: %s\n", g_cfg.vm_socket_path,
				rc == -EADDRINUSE ? "another server is listening there" : strerror(-rc));
			goto err_lfd;
		}
	}
	if (g_cfg.admin_path) {
		struct vc_admin_params ap = {.path = g_cfg.admin_path, .acct = g_acct, .vm_name = g_cfg.vm_name,
					     .gpu = g_cfg.gpu, .adopt = adopt};

		rc = vc_admin_create(&ap, &g_admin);
		if (rc) {
			fprintf(stderr, "vcuda-server: cannot make the admin socket %s: %s\n", g_cfg.admin_path,
				rc == -EADDRINUSE ? "another server is listening there" : strerror(-rc));
			goto err_vm;
		}
		if (g_vm)
			vc_vm_link_set_admin(g_vm, g_admin);
	}
	if (g_cfg.vm_conn_fd >= 0) {
		char why[160];

		if (vc_vm_link_adopt(g_vm, g_cfg.vm_conn_fd, why, sizeof(why))) {
			fprintf(stderr, "vcuda-server: --vm-conn-fd %d: %s\n", g_cfg.vm_conn_fd, why);
			goto err_admin;
		}
	}
	if (!strcmp(g_cfg.executor, "ci-standin"))
		vc_log("WARNING: executor is the CI stand-in for a GPU (host RAM, kernels not run)");
	if (lfd >= 0)
		vc_log("listening on %s (protocol v%u, abi %016" PRIx64 "), a worker process per session",
		       g_cfg.socket_path, VC_PROTO_VERSION, (uint64_t)VC_ABI_HASH);
	if (g_cfg.vm_socket_path)
		vc_log("listening for the VM's QEMU on %s", g_cfg.vm_socket_path);
	if (g_cfg.sched_path)
		vc_log("sharing the GPU by weight (%u) through %s", g_cfg.weight, g_cfg.sched_path);
	if (g_cfg.mem_quota || g_cfg.pinned_quota || g_cfg.idle_timeout_s || g_cfg.gpu)
		vc_log("GPU %s, device memory quota %" PRIu64 " B, pinned quota %" PRIu64 " B, weight %u, idle timeout %u s",
		       g_cfg.gpu ? g_cfg.gpu : "(all)", g_cfg.mem_quota, g_cfg.pinned_quota, g_cfg.weight,
		       g_cfg.idle_timeout_s);

	while (!g_quit) {
		int npfd = 2, nvm = 0, nadm = 0, nfdb, npend, timeout, vt;
		char drain[64];
		int pr;

		pfd[0] = (struct pollfd){.fd = g_wake[0], .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = lfd, .events = POLLIN}; /* -1: ignored by poll */
		timeout = watch_sessions();
		if (g_vm) {
			nvm = vc_vm_link_pollfds(g_vm, pfd + npfd, (int)pfd_cap - npfd);
			npfd += nvm;
			vt = vc_vm_link_timeout_ms(g_vm);
			if (vt >= 0 && vt < timeout)
				timeout = vt;
		}
		if (g_admin) {
			nadm = vc_admin_pollfds(g_admin, pfd + npfd, (int)pfd_cap - npfd);
			npfd += nadm;
		}
		nfdb = vc_fdbroker_pollfd(&pfd[npfd]);
		npfd += nfdb;
		npend = vc_pending_pollfds(&g_pending, pfd + npfd, (int)pfd_cap - npfd);
		npfd += npend;
		vt = vc_pending_timeout_ms(&g_pending);
		if (vt >= 0 && vt < timeout)
			timeout = vt;
		pr = poll(pfd, (nfds_t)npfd, timeout);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0 && (pfd[0].revents & POLLIN))
			while (read(g_wake[0], drain, sizeof(drain)) > 0)
				;
		reap();
		if (g_vm)
			vc_vm_link_handle(g_vm, pfd + 2, pr > 0 ? nvm : 0);
		if (g_admin)
			vc_admin_handle(g_admin, pfd + 2 + nvm, pr > 0 ? nadm : 0);
		if (pr > 0 && nfdb && (pfd[2 + nvm + nadm].revents & POLLIN))
			vc_fdbroker_handle();
		/* Hellos first (and deadlines), then new connections: a client
		 * that spoke is never dropped for one that has not yet. */
		vc_pending_handle(&g_pending, pfd + 2 + nvm + nadm + nfdb, pr > 0 ? npend : 0, on_hello, &lfd);
		if (pr <= 0 || lfd < 0 || !(pfd[1].revents & POLLIN))
			continue;
		/* No worker before the hello: a connection waits in the listener,
		 * counted apart from sessions (pending.h). */
		for (int k = 0; k < 64; k++) {
			int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

			if (cfd < 0)
				break;
			vc_pending_add(&g_pending, cfd);
		}
	}
	vc_pending_fini(&g_pending);
	free(pfd);
	reap();
	vc_log("shutting down: stopping %u sessions", g_nworkers + (g_vm ? vc_vm_link_workers(g_vm) : 0));
	/* Before the workers stop: a worker letting go of an exported descriptor
	 * is then refused at once, not left waiting for an answer. */
	vc_fdbroker_destroy();
	vc_vm_link_destroy(g_vm);
	g_vm = NULL; /* stop_all() reaps: nothing may reach the freed link */
	stop_all();
	vc_admin_destroy(g_admin);
	vc_sched_detach();
	if (lfd >= 0) {
		close(lfd);
		unlink(g_cfg.socket_path);
	}
	return 0;

err_admin:
	vc_admin_destroy(g_admin);
err_vm:
	vc_vm_link_destroy(g_vm);
	g_vm = NULL;
err_lfd:
	if (lfd >= 0) {
		close(lfd);
		unlink(g_cfg.socket_path);
	}
	return 1;
}
