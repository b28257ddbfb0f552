/* SPDX-License-Identifier: MIT */
/*
 * test_vm_link.c - vcuda-server's VM link (docs/VM.md) with this test in
 * QEMU's place: it makes the sessions memfd and eventfds as the
 * virtio-vcuda-pci device does, speaks the frames of shared/vc_vm.h and
 * drives a session's ring in its slot as the guest library would.
 *
 * Needs a running server: VCUDA_VM_SOCKET=PATH (vcuda-server --vm-socket
 * PATH --executor ci-standin).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vc_abi_hash.h"
#include "vc_gpin.h"
#include "vc_layout.h"
#include "vc_ring_guest.h"
#include "vc_vm.h"

#define SLOTS 4u
#define SLOT_SIZE (32ull << 20)
#define TIMEOUT_MS 10000

struct vm {
	int sock, mem_fd, bell[SLOTS], done;
	uint8_t *mem;
};

static const char *sock_path(void)
{
	const char *p = getenv("VCUDA_VM_SOCKET");

	ck_assert_msg(p != NULL, "set VCUDA_VM_SOCKET");
	return p;
}

static int connect_raw(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path());
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Read one frame (blocking, with a timeout). Returns 0, or -errno. */
static int recv_frame(int sock, struct vc_vm_msg *m)
{
	struct vc_vm_rx rx;
	char why[96];
	int r;

	vc_vm_rx_init(&rx);
	for (;;) {
		struct pollfd p = {.fd = sock, .events = POLLIN};

		if (poll(&p, 1, TIMEOUT_MS) != 1)
			return -ETIMEDOUT;
		r = vc_vm_rx_read(sock, &rx);
		if (r < 0)
			return r;
		if (r == 1)
			break;
	}
	vc_vm_rx_drop(&rx);
	return vc_vm_msg_decode(rx.buf, m, ~0u, why, sizeof(why));
}

static int make_memfd(uint64_t size, bool seal)
{
	int fd = memfd_create("test-vcuda-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	if (seal)
		ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
	return fd;
}

static int hello(int sock, int mem_fd, uint64_t size, uint32_t slots, struct vc_vm_msg *w)
{
	struct vc_vm_msg m;

	vc_vm_msg_init(&m, VC_VM_HELLO, 0);
	m.region_size = size;
	m.max_sessions = slots;
	snprintf(m.name, sizeof(m.name), "test-vm");
	/* A server that refuses at once may have closed before our HELLO: its
	 * WELCOME is still there to read. */
	int rc = vc_vm_send(sock, &m, &mem_fd, 1);

	ck_assert(rc == 0 || rc == -EPIPE || rc == -ECONNRESET);
	return recv_frame(sock, w);
}

/*
 * Connect and say HELLO; while the server is still stopping the sessions of a
 * previous connection it answers -EAGAIN, and QEMU's chardev would simply
 * reconnect a little later: so do we.
 */
static int hello_retry(int *sock, int mem_fd, uint64_t size, uint32_t slots, struct vc_vm_msg *w)
{
	for (int tries = 0; tries < 200; tries++) {
		*sock = connect_raw();
		ck_assert_int_eq(hello(*sock, mem_fd, size, slots, w), 0);
		ck_assert_int_eq(w->type, VC_VM_WELCOME);
		if (w->status != -EAGAIN)
			return 0;
		close(*sock);
		usleep(25000);
	}
	return -EAGAIN;
}

static void vm_up(struct vm *v)
{
	struct vc_vm_msg w;

	v->mem_fd = make_memfd(SLOTS * SLOT_SIZE, true);
	ck_assert_int_eq(hello_retry(&v->sock, v->mem_fd, SLOTS * SLOT_SIZE, SLOTS, &w), 0);
	ck_assert_msg(w.status == 0, "WELCOME refused: %s", w.message);
	v->mem = mmap(NULL, SLOTS * SLOT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, v->mem_fd, 0);
	ck_assert(v->mem != MAP_FAILED);
	for (unsigned i = 0; i < SLOTS; i++)
		v->bell[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	v->done = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

static void vm_down(struct vm *v)
{
	close(v->sock);
	munmap(v->mem, SLOTS * SLOT_SIZE);
	close(v->mem_fd);
	for (unsigned i = 0; i < SLOTS; i++)
		close(v->bell[i]);
	close(v->done);
}

static void send_open(struct vm *v, uint32_t slot)
{
	struct vc_vm_msg m;
	int fds[2] = {v->bell[slot], v->done};

	vc_vm_msg_init(&m, VC_VM_OPEN, slot);
	m.region_off = slot * SLOT_SIZE;
	m.region_size = SLOT_SIZE;
	m.pid = 4242;
	m.uid = 1000;
	snprintf(m.comm, sizeof(m.comm), "guest-app");
	ck_assert_int_eq(vc_vm_send(v->sock, &m, fds, 2), 0);
}

static struct vc_vm_msg open_slot(struct vm *v, uint32_t slot)
{
	struct vc_vm_msg r;

	send_open(v, slot);
	ck_assert_int_eq(recv_frame(v->sock, &r), 0);
	ck_assert_int_eq(r.type, VC_VM_OPENED);
	ck_assert_uint_eq(r.slot, slot);
	return r;
}

static void close_slot(struct vm *v, uint32_t slot)
{
	struct vc_vm_msg m, r;

	vc_vm_msg_init(&m, VC_VM_CLOSE, slot);
	ck_assert_int_eq(vc_vm_send(v->sock, &m, NULL, 0), 0);
	ck_assert_int_eq(recv_frame(v->sock, &r), 0);
	ck_assert_int_eq(r.type, VC_VM_CLOSED);
	ck_assert_uint_eq(r.slot, slot);
}

/* The guest library's two transport operations, on the test's eventfds. */
struct guest {
	struct vm *v;
	uint32_t slot;
};

static int g_kick(void *ctx)
{
	struct guest *g = ctx;
	uint64_t one = 1;

	return write(g->v->bell[g->slot], &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

static int g_sleep(void *ctx, int timeout_ms)
{
	struct guest *g = ctx;
	struct pollfd p = {.fd = g->v->done, .events = POLLIN};
	uint64_t v;

	if (poll(&p, 1, timeout_ms) == 1)
		(void)!read(g->v->done, &v, sizeof(v));
	return 0;
}

static const struct vc_ring_wait_ops g_ops = {.kick = g_kick, .sleep = g_sleep};

/* Echo @n bytes through the session in @slot; returns the CUDA status. */
static int echo(struct vm *v, uint32_t slot, struct vc_ring_guest *ring, size_t n)
{
	struct vc_echo_req rq = {.len = (uint32_t)n};
	uint8_t in[512], out[512];
	int32_t status;
	int64_t seq, len;

	for (size_t i = 0; i < n; i++)
		in[i] = (uint8_t)(i * 7 + slot);
	seq = vc_ring_guest_write(ring, VC_OP_ECHO, VC_CMD_F_REPLY, 0, &rq, sizeof(rq), in, n);
	if (seq < 0)
		return (int)seq;
	if (vc_ring_guest_publish(ring) || vc_ring_guest_wait_reply(ring, 0, (uint64_t)seq))
		return -EIO;
	len = vc_ring_guest_read_reply(ring, 0, (uint64_t)seq, &status, out, sizeof(out));
	if (len != (int64_t)n || memcmp(in, out, n))
		return -EBADMSG;
	(void)v;
	return status;
}

static void ring_attach(struct vm *v, uint32_t slot, struct guest *g, struct vc_ring_guest *ring,
			uint64_t used)
{
	const struct vc_ctrl *c = (const void *)(v->mem + slot * SLOT_SIZE);
	struct vc_layout l = c->layout;

	ck_assert_uint_eq(c->magic, VC_CTRL_MAGIC);
	ck_assert_uint_eq(c->abi_hash, VC_ABI_HASH);
	ck_assert_int_eq(vc_layout_check(&l), 0);
	ck_assert_uint_eq(l.region_size, used);
	ck_assert_uint_le(l.region_size, SLOT_SIZE);
	g->v = v;
	g->slot = slot;
	ck_assert_int_eq(vc_ring_guest_init(ring, v->mem + slot * SLOT_SIZE, &l, &g_ops, g), 0);
}

START_TEST(open_echo_close)
{
	struct vm v;
	struct guest g[2];
	struct vc_ring_guest ring[2];

	vm_up(&v);
	for (uint32_t s = 0; s < 2; s++) {
		struct vc_vm_msg r = open_slot(&v, s);

		ck_assert_msg(r.status == 0, "OPEN refused: %s", r.message);
		ck_assert_uint_gt(r.session_id, 0);
		ring_attach(&v, s, &g[s], &ring[s], r.region_size);
		/* The slot is filled: the pinned pool takes what is left
		 * before the guest-pin area (whole 2 MiB units). */
		ck_assert_uint_gt(ring[s].layout.pinned_size, 0);
		ck_assert_uint_le(ring[s].layout.region_size, SLOT_SIZE - VC_GPIN_AREA_SIZE);
		ck_assert_uint_le(SLOT_SIZE - ring[s].layout.region_size, (4u << 20) + VC_GPIN_AREA_SIZE);
	}
	for (int k = 0; k < 200; k++)
		for (uint32_t s = 0; s < 2; s++)
			ck_assert_int_eq(echo(&v, s, &ring[s], (size_t)(k * 37) % 500 + 1), 0);
	for (uint32_t s = 0; s < 2; s++) {
		vc_ring_guest_fini(&ring[s]);
		close_slot(&v, s);
	}
	/* Closed slots hold nothing of the old session (punched: zeros). */
	ck_assert_uint_eq(((const struct vc_ctrl *)(void *)v.mem)->magic, 0);
	/* A slot can be opened again once CLOSED came. */
	ck_assert_int_eq(open_slot(&v, 0).status, 0);
	close_slot(&v, 0);
	vm_down(&v);
}
END_TEST

START_TEST(open_busy_slot_refused)
{
	struct vm v;
	struct vc_vm_msg r;

	vm_up(&v);
	ck_assert_int_eq(open_slot(&v, 1).status, 0);
	r = open_slot(&v, 1);
	ck_assert_int_eq(r.status, -EBUSY);
	close_slot(&v, 1);
	vm_down(&v);
}
END_TEST

START_TEST(fatal_session_is_lost)
{
	struct vm v;
	struct guest g;
	struct vc_ring_guest ring;
	struct vc_vm_msg r;
	uint8_t junk[64];

	vm_up(&v);
	r = open_slot(&v, 2);
	ck_assert_int_eq(r.status, 0);
	ring_attach(&v, 2, &g, &ring, r.region_size);
	/* An unknown opcode: FATAL; the session's process ends; QEMU hears LOST. */
	memset(junk, 0, sizeof(junk));
	ck_assert_int_gt(vc_ring_guest_write(&ring, 0x7777, 0, 0, junk, sizeof(junk), NULL, 0), 0);
	vc_ring_guest_publish(&ring);
	ck_assert_int_eq(recv_frame(v.sock, &r), 0);
	ck_assert_int_eq(r.type, VC_VM_LOST);
	ck_assert_uint_eq(r.slot, 2);
	vc_ring_guest_fini(&ring);
	close_slot(&v, 2);
	/* The other slots are fine. */
	ck_assert_int_eq(open_slot(&v, 3).status, 0);
	close_slot(&v, 3);
	vm_down(&v);
}
END_TEST

START_TEST(hello_checks)
{
	struct vc_vm_msg w;
	int s, fd;

	/* not sealed against shrinking: refused */
	fd = make_memfd(SLOTS * SLOT_SIZE, false);
	ck_assert_int_eq(hello_retry(&s, fd, SLOTS * SLOT_SIZE, SLOTS, &w), 0);
	ck_assert_int_eq(w.status, -EINVAL);
	ck_assert_ptr_nonnull(strstr(w.message, "sealed"));
	close(fd);
	close(s);
	/* size does not match the file */
	fd = make_memfd(SLOTS * SLOT_SIZE, true);
	ck_assert_int_eq(hello_retry(&s, fd, 2 * SLOTS * SLOT_SIZE, SLOTS, &w), 0);
	ck_assert_int_eq(w.status, -EINVAL);
	close(fd);
	close(s);
	/* slots not a power of two */
	fd = make_memfd(3 * SLOT_SIZE, true);
	ck_assert_int_eq(hello_retry(&s, fd, 3 * SLOT_SIZE, 3, &w), 0);
	ck_assert_int_eq(w.status, -EINVAL);
	close(fd);
	close(s);
}
END_TEST

START_TEST(malformed_frames_close_only_that_connection)
{
	struct vm v;
	struct vc_vm_msg m, r;
	uint8_t junk[VC_VM_FRAME];
	int s;

	/* garbage instead of HELLO */
	s = connect_raw();
	memset(junk, 0xa5, sizeof(junk));
	ck_assert_int_eq(write(s, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	ck_assert_int_eq(recv_frame(s, &r), -ECONNRESET);
	close(s);
	/* OPEN without its eventfds, after a good HELLO */
	vm_up(&v);
	vc_vm_msg_init(&m, VC_VM_OPEN, 0);
	m.region_size = SLOT_SIZE;
	ck_assert_int_eq(vc_vm_send(v.sock, &m, NULL, 0), 0);
	ck_assert_int_eq(recv_frame(v.sock, &r), -ECONNRESET);
	vm_down(&v);
	/* a slot out of range */
	vm_up(&v);
	vc_vm_msg_init(&m, VC_VM_CLOSE, SLOTS + 1);
	ck_assert_int_eq(vc_vm_send(v.sock, &m, NULL, 0), 0);
	ck_assert_int_eq(recv_frame(v.sock, &r), -ECONNRESET);
	vm_down(&v);
	/* and the server still serves */
	vm_up(&v);
	ck_assert_int_eq(open_slot(&v, 0).status, 0);
	close_slot(&v, 0);
	vm_down(&v);
}
END_TEST

START_TEST(one_vm_at_a_time_and_reconnect)
{
	struct vm v, v2;
	struct vc_vm_msg w, r;
	int s, fd;

	vm_up(&v);
	ck_assert_int_eq(open_slot(&v, 0).status, 0);
	s = connect_raw();
	fd = make_memfd(SLOTS * SLOT_SIZE, true);
	ck_assert_int_eq(recv_frame(s, &w), 0); /* refused at once */
	ck_assert_int_eq(w.type, VC_VM_WELCOME);
	ck_assert_int_eq(w.status, -EBUSY);
	close(fd);
	close(s);
	/* QEMU goes away with a session open: the server stops it; a new
	 * connection is served once it is gone. */
	vm_down(&v);
	vm_up(&v2);
	r = open_slot(&v2, 0);
	ck_assert_int_eq(r.status, 0);
	close_slot(&v2, 0);
	vm_down(&v2);
}
END_TEST

/* The guest-pin area's head at the end of @slot (shared/vc_gpin.h). */
static const struct vc_gpin_head *gpin_head(struct vm *v, uint32_t slot)
{
	return (const void *)(v->mem + (slot + 1) * SLOT_SIZE - VC_GPIN_AREA_SIZE);
}

/* A MEM frame: guest-physical [@gpa, @gpa + @size) at @off of @fd. */
static void send_mem(struct vm *v, uint32_t i, uint64_t gpa, uint64_t size, uint64_t off, int fd)
{
	struct vc_vm_msg m;

	vc_vm_msg_init(&m, VC_VM_MEM, i);
	m.region_off = gpa;
	m.region_size = size;
	m.mem_off = off;
	ck_assert_int_eq(vc_vm_send(v->sock, &m, &fd, fd >= 0 ? 1 : 0), 0);
}

/*
 * The VM's RAM, announced after HELLO: a memfd sealed against shrinking
 * serves, and the sessions' guest-pin areas then say that pins can be
 * mapped; without it (QEMU's anonymous RAM, or a file that cannot be
 * sealed) they say not, and the VM works as before. Malformed frames break
 * the connection.
 */
START_TEST(guest_ram_announced)
{
	struct vm v;
	struct vc_vm_msg r;
	int ram, loose;

	/* none: no pins */
	vm_up(&v);
	ck_assert_int_eq(open_slot(&v, 0).status, 0);
	ck_assert_uint_eq(gpin_head(&v, 0)->magic, VC_GPIN_MAGIC);
	ck_assert_uint_eq(gpin_head(&v, 0)->entries, VC_GPIN_ENTRIES);
	ck_assert_uint_eq(gpin_head(&v, 0)->flags & VC_GPIN_F_RAM, 0);
	close_slot(&v, 0);
	vm_down(&v);
	/* two ranges with a hole, as below and above 4 GiB */
	ram = make_memfd(16u << 20, true);
	loose = memfd_create("test-vcuda-loose", MFD_CLOEXEC);
	ck_assert_int_ge(loose, 0);
	ck_assert_int_eq(ftruncate(loose, 1u << 20), 0);
	vm_up(&v);
	send_mem(&v, 0, 0, 8u << 20, 0, ram);
	send_mem(&v, 1, 16u << 20, 8u << 20, 8u << 20, ram);
	send_mem(&v, 2, 64u << 20, 1u << 20, 0, loose); /* not sealable: left out */
	ck_assert_int_eq(open_slot(&v, 1).status, 0);
	ck_assert_uint_eq(gpin_head(&v, 1)->magic, VC_GPIN_MAGIC);
	ck_assert_uint_eq(gpin_head(&v, 1)->flags & VC_GPIN_F_RAM, VC_GPIN_F_RAM);
	close_slot(&v, 1);
	vm_down(&v);
	/* malformed: no descriptor; past the file; overlapping; unaligned */
	for (int k = 0; k < 4; k++) {
		vm_up(&v);
		if (k == 0)
			send_mem(&v, 0, 0, 8u << 20, 0, -1);
		if (k == 1)
			send_mem(&v, 0, 0, 32u << 20, 0, ram);
		if (k == 2) {
			send_mem(&v, 0, 0, 8u << 20, 0, ram);
			send_mem(&v, 1, 4u << 20, 8u << 20, 8u << 20, ram);
		}
		if (k == 3)
			send_mem(&v, 0, 4096 + 8, 8u << 20, 0, ram);
		ck_assert_int_eq(recv_frame(v.sock, &r), -ECONNRESET);
		vm_down(&v);
	}
	close(ram);
	close(loose);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vm_link");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, open_echo_close);
	tcase_add_test(t, open_busy_slot_refused);
	tcase_add_test(t, fatal_session_is_lost);
	tcase_add_test(t, hello_checks);
	tcase_add_test(t, malformed_frames_close_only_that_connection);
	tcase_add_test(t, one_vm_at_a_time_and_reconnect);
	tcase_add_test(t, guest_ram_announced);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_set_fork_status(r, CK_NOFORK);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
