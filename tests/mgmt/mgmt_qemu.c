/* SPDX-License-Identifier: MIT */
/*
 * mgmt_qemu.c - QEMU's side of a VM socket, for ci/mgmt-test.sh: connect to
 * vcuda-mgmtd's RUN_DIR/vms/NAME.sock as virtio-vcuda-pci's chardev would,
 * say HELLO (shared/vc_vm.h), open session slots, and in slot 0 allocate
 * device memory as the guest's libcuda.so.1 does (vcDriverInfo,
 * cuDevicePrimaryCtxRetain, vcMemAlloc), printing one line per step:
 *
 *   welcome status=0 message=...
 *   opened slot=0 session=7 status=0
 *   alloc bytes=67108864 status=0
 *
 * Then it closes its slots and exits, or with --hold waits to be killed.
 *
 * With --guest, slot 0 is used by a child process that plays the guest's
 * CUDA program ("guest pid=N ready"); when it dies (the test kills it), this
 * process sends CLOSE for its slot, as the guest kernel and QEMU do when a
 * guest process exits, and reports "guest pid=N died: closed slot=0".
 *
 * usage: mgmt_qemu --socket PATH [--name VM] [--open N] [--alloc BYTES]...
 *                  [--device N] [--comm NAME] [--guest] [--hold]
 * (--device: the allocations are made in device N's primary context; 0 by default.)
 * Exit: 0 done, 1 usage or I/O error, 3 WELCOME refused, 4 OPEN refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vc_cuda_manual.h"
#include "vc_cuda_wire.h"
#include "vc_layout.h"
#include "vc_ring_guest.h"
#include "vc_vm.h"

#define SLOTS 4u
#define SLOT_SIZE (32ull << 20)
#define TIMEOUT_MS 15000
#define MAX_ALLOCS 16

static int g_sock, g_done, g_bell[SLOTS], g_dev;
static uint8_t *g_mem;
static uint64_t g_used0; /* bytes of slot 0 the server's layout uses */

static uint64_t used0_shared(void)
{
	/* The child was forked before OPENED came: read the size from the
	 * control page the server wrote into the shared slot. */
	const struct vc_ctrl *c = (const void *)g_mem;

	return c->layout.region_size;
}

static int recv_frame(struct vc_vm_msg *m, uint32_t want)
{
	for (;;) {
		struct vc_vm_rx rx;
		char why[96];
		int r;

		vc_vm_rx_init(&rx);
		for (;;) {
			struct pollfd p = {.fd = g_sock, .events = POLLIN};

			if (poll(&p, 1, TIMEOUT_MS) != 1)
				return -ETIMEDOUT;
			r = vc_vm_rx_read(g_sock, &rx);
			if (r < 0)
				return r;
			if (r == 1)
				break;
		}
		vc_vm_rx_drop(&rx);
		if (vc_vm_msg_decode(rx.buf, m, ~0u, why, sizeof(why)))
			return -EPROTO;
		if (m->type == want)
			return 0;
		printf("frame type=%u slot=%u status=%d message=%s\n", m->type, m->slot, m->status, m->message);
	}
}

static int g_kick(void *ctx)
{
	uint64_t one = 1;

	return write(g_bell[(uintptr_t)ctx], &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

static int g_sleep(void *ctx, int timeout_ms)
{
	struct pollfd p = {.fd = g_done, .events = POLLIN};
	uint64_t v;

	(void)ctx;
	if (poll(&p, 1, timeout_ms) == 1)
		(void)!read(g_done, &v, sizeof(v));
	return 0;
}

static const struct vc_ring_wait_ops g_ops = {.kick = g_kick, .sleep = g_sleep};

/* One synchronous CUDA call in the ring; returns its CUresult (or -errno). */
static int call(struct vc_ring_guest *ring, uint32_t op, const void *req, size_t len, void *rep, size_t replen)
{
	uint8_t buf[VC_CU_REP_MAX];
	int32_t status;
	int64_t seq, got;

	seq = vc_ring_guest_write(ring, op, VC_CMD_F_REPLY, 0, req, len, NULL, 0);
	if (seq < 0)
		return (int)seq;
	if (vc_ring_guest_publish(ring) || vc_ring_guest_wait_reply(ring, 0, (uint64_t)seq))
		return -EIO;
	got = vc_ring_guest_read_reply(ring, 0, (uint64_t)seq, &status, buf, sizeof(buf));
	if (got < 0)
		return (int)got;
	memcpy(rep, buf, replen < (size_t)got ? replen : (size_t)got);
	return status;
}

static int alloc_all(uint64_t used, const uint64_t *sizes, int n)
{
	const struct vc_ctrl *c = (const void *)g_mem;
	struct vc_layout l = c->layout;
	struct vc_ring_guest ring;
	struct vc_cu_prefix pre = {0};
	struct vc_cu_rep_vcDriverInfo di = {0};
	struct vc_cu_req_ctx cq = {.dev = g_dev};
	struct vc_cu_rep_ctx cr = {0};
	int rc;

	if (c->magic != VC_CTRL_MAGIC || vc_layout_check(&l) || l.region_size != used) {
		fprintf(stderr, "mgmt_qemu: slot 0 holds no valid session layout\n");
		return -EPROTO;
	}
	if (vc_ring_guest_init(&ring, g_mem, &l, &g_ops, (void *)(uintptr_t)0))
		return -EPROTO;
	rc = call(&ring, VC_CU_vcDriverInfo, &pre, sizeof(pre), &di, sizeof(di));
	printf("driver status=%d version=%d devices=%d\n", rc, di.driver_version, di.device_count);
	if (rc == 0) {
		rc = call(&ring, VC_CU_cuDevicePrimaryCtxRetain, &cq, sizeof(cq), &cr, sizeof(cr));
		printf("context status=%d\n", rc);
	}
	for (int i = 0; rc == 0 && i < n; i++) {
		struct vc_cu_req_alloc aq = {.ctx = cr.pctx, .kind = VC_CU_ALLOC_PLAIN, .size = sizes[i]};
		struct vc_cu_rep_alloc ar = {0};
		int st = call(&ring, VC_CU_vcMemAlloc, &aq, sizeof(aq), &ar, sizeof(ar));

		printf("alloc bytes=%llu status=%d\n", (unsigned long long)sizes[i], st);
		if (st < 0)
			rc = st;
	}
	fflush(stdout);
	vc_ring_guest_fini(&ring);
	return rc < 0 ? rc : 0;
}

int main(int argc, char **argv)
{
	const char *path = NULL, *name = "vm", *comm = "mgmt_qemu";
	uint64_t sizes[MAX_ALLOCS];
	unsigned nopen = 1;
	int nalloc = 0, hold = 0, guest = 0, mem_fd, rc, go[2] = {-1, -1};
	pid_t child = 0;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct vc_vm_msg m, w, r;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--hold") || !strcmp(argv[i], "--guest")) {
			*(!strcmp(argv[i], "--hold") ? &hold : &guest) = 1;
			continue;
		}
		if (!v)
			goto usage;
		if (!strcmp(argv[i], "--socket"))
			path = v;
		else if (!strcmp(argv[i], "--name"))
			name = v;
		else if (!strcmp(argv[i], "--comm"))
			comm = v;
		else if (!strcmp(argv[i], "--open"))
			nopen = (unsigned)atoi(v);
		else if (!strcmp(argv[i], "--device"))
			g_dev = atoi(v);
		else if (!strcmp(argv[i], "--alloc") && nalloc < MAX_ALLOCS)
			sizes[nalloc++] = strtoull(v, NULL, 0);
		else
			goto usage;
		i++;
	}
	if (!path || nopen > SLOTS || strlen(path) >= sizeof(a.sun_path))
		goto usage;
	setvbuf(stdout, NULL, _IOLBF, 0);
	strcpy(a.sun_path, path);
	g_sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (g_sock < 0 || connect(g_sock, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "mgmt_qemu: cannot connect to %s: %s\n", path, strerror(errno));
		return 1;
	}
	mem_fd = memfd_create("mgmt-qemu-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mem_fd < 0 || ftruncate(mem_fd, (off_t)(SLOTS * SLOT_SIZE)) < 0 ||
	    fcntl(mem_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return 1;
	vc_vm_msg_init(&m, VC_VM_HELLO, 0);
	m.region_size = SLOTS * SLOT_SIZE;
	m.max_sessions = SLOTS;
	snprintf(m.name, sizeof(m.name), "%s", name);
	/* A refusal may come before our HELLO is read: read it anyway. */
	rc = vc_vm_send(g_sock, &m, &mem_fd, 1);
	if (rc && rc != -EPIPE && rc != -ECONNRESET)
		return 1;
	rc = recv_frame(&w, VC_VM_WELCOME);
	if (rc) {
		printf("welcome error=%s\n", strerror(-rc));
		return 1;
	}
	printf("welcome status=%d message=%s\n", w.status, w.message);
	if (w.status)
		return 3;
	g_mem = mmap(NULL, SLOTS * SLOT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, mem_fd, 0);
	g_done = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g_mem == MAP_FAILED || g_done < 0)
		return 1;
	for (uint32_t s = 0; s < nopen; s++)
		g_bell[s] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (guest) {
		/* The guest process exists before its session is opened for it. */
		char b;

		if (pipe(go) < 0)
			return 1;
		child = fork();
		if (child == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(go[1]);
			if (read(go[0], &b, 1) != 1)
				_exit(1);
			if (nalloc && alloc_all(used0_shared(), sizes, nalloc))
				_exit(1);
			printf("guest pid=%d ready\n", (int)getpid());
			for (;;)
				pause();
		}
		close(go[0]);
		if (child < 0)
			return 1;
	}
	for (uint32_t s = 0; s < nopen; s++) {
		int fds[2];

		fds[0] = g_bell[s];
		fds[1] = g_done;
		vc_vm_msg_init(&m, VC_VM_OPEN, s);
		m.region_off = s * SLOT_SIZE;
		m.region_size = SLOT_SIZE;
		m.pid = (uint32_t)(s == 0 && child > 0 ? child : getpid());
		m.uid = (uint32_t)getuid();
		snprintf(m.comm, sizeof(m.comm), "%s", comm);
		if (vc_vm_send(g_sock, &m, fds, 2) || recv_frame(&r, VC_VM_OPENED))
			return 1;
		printf("opened slot=%u session=%u status=%d message=%s\n", r.slot, r.session_id, r.status, r.message);
		if (r.status)
			return 4;
		if (s == 0)
			g_used0 = r.region_size;
	}
	if (child > 0) {
		int st;

		if (write(go[1], "g", 1) != 1 || waitpid(child, &st, 0) != child)
			return 1;
		/* The guest process is gone: its kernel closes the device file,
		 * and QEMU sends CLOSE for the slot. */
		vc_vm_msg_init(&m, VC_VM_CLOSE, 0);
		if (vc_vm_send(g_sock, &m, NULL, 0) || recv_frame(&r, VC_VM_CLOSED))
			return 1;
		printf("guest pid=%d died: closed slot=0\n", (int)child);
	} else if (nalloc && nopen && alloc_all(g_used0, sizes, nalloc)) {
		return 1;
	}
	if (hold) {
		printf("holding\n");
		for (;;)
			pause();
	}
	for (uint32_t s = child > 0 ? 1 : 0; s < nopen; s++) {
		vc_vm_msg_init(&m, VC_VM_CLOSE, s);
		if (vc_vm_send(g_sock, &m, NULL, 0) || recv_frame(&r, VC_VM_CLOSED))
			return 1;
		printf("closed slot=%u\n", s);
	}
	return 0;

usage:
	fprintf(stderr, "usage: mgmt_qemu --socket PATH [--name VM] [--open N] [--alloc BYTES]... [--device N] "
			"[--comm NAME] [--guest] [--hold]\n");
	return 1;
}
