/* SPDX-License-Identifier: MIT */
/*
 * vc_client.c - the transport client: a session over the host-local unix
 * socket (the handshake, the doorbell and completion eventfds) or over the
 * virtio-vcuda device in a VM (vc_dev.c); then, the same for both,
 * reply-slot management and pipelined bulk copies through the staging arena.
 */
#include "vc_client.h"
#include "vc_place.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vc_abi_hash.h"
#include "vc_copy.h"
#include "vc_dev.h"
#include "vc_layout.h"
#include "vc_ring_guest.h"
#include "vc_sock.h"
#include "vc_crew.h"

#define DEFAULT_SOCKET "/run/vcuda/vcuda.sock"
#define DEFAULT_DEVICE "/dev/vcuda0"
#define HANDSHAKE_TIMEOUT_MS 10000
#define PIECE_MIN (256u << 10)
#define PIECES_MIN 4u
#define WINDOW_BYTES (16ull << 20)
#define HELPERS_DEFAULT 3u             /* threads copying a large copy into or out of the arena */
#define HELPERS_MAX VC_CREW_MAX
#define SPIN_US 50u                    /* a wait spins this long, then sleeps (VCUDA_SPIN_US) */
#define BULK_PARALLEL_MIN (2ull << 20) /* smaller copies are the caller's alone (docs/PERFORMANCE.md) */

struct vc_client {
	int sock, mem_fd, doorbell_fd, complete_fd;
	bool on_dev;       /* through the virtio-vcuda device: dev below */
	struct vc_dev dev;
	void *base;
	size_t size;
	uint32_t session_id;
	struct vc_ring_guest ring;

	pthread_mutex_t lock;      /* ring writes and publishes, slot bitmap */
	pthread_cond_t slot_cv;
	uint64_t *slot_free;       /* bitmap of free reply slots */
	pthread_mutex_t bulk_lock; /* owner of the staging-arena chunks */

	pthread_mutex_t wait_mu;   /* one thread polls the eventfd, others wait here */
	pthread_cond_t wait_cv;
	bool sleeper;
	bool dead;
	uint64_t wake_gen;

	/* Commands published that may give the device work (all but the
	 * operations the caller named as queries): written under lock,
	 * read with a relaxed load (process memory, not shared). */
	uint64_t work;
	const uint8_t *queries; /* one byte per operation from queries_base */
	uint32_t queries_base, queries_n;
	uint64_t replied_seq;      /* highest command seq whose reply was read (atomic max) */
	uint64_t piece_min;        /* bulk copies: smallest piece (PIECE_MIN, or VCUDA_BULK_PIECE_MIN) */
	uint32_t pieces_min;       /* and pieces per copy (PIECES_MIN, or VCUDA_BULK_PIECES) */
	uint32_t helpers;          /* large copies: threads filling or reading the arena (VCUDA_BULK_THREADS) */
	uint64_t parallel_min;     /* from this size on (BULK_PARALLEL_MIN, or VCUDA_BULK_PARALLEL_MIN) */
	struct vc_crew crew;       /* the helpers, started at the first large copy (under bulk_lock) */
	bool fence;                /* vc_client_call_fenced() may fence (VCUDA_FENCE, default on) */
};

/* (Without the suffixes, VCUDA_BULK_PARALLEL_MIN=4M was taken as unset,
 * silently, in a benchmark run.) */
uint64_t vc_client_env_size(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;
	unsigned shift = 0;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || end == v)
		return def;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || n > (UINT64_MAX >> shift))
		return def;
	n <<= shift;
	if (n < lo || n > hi)
		return def;
	return n;
}

/* ---- transport operations for the ring --------------------------------- */

static int sock_kick(void *ctx)
{
	struct vc_client *c = ctx;
	uint64_t one = 1;

	if (c->on_dev)
		return vc_dev_kick(&c->dev);
	if (write(c->doorbell_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

/*
 * Sleep until the completion eventfd fires. One thread at a time polls the
 * eventfd (the "sleeper"); the others wait on a condition variable that the
 * sleeper broadcasts whenever it wakes, so that no wake-up is lost between
 * threads reading the same eventfd.
 */
static int sock_sleep(void *ctx, int timeout_ms)
{
	struct vc_client *c = ctx;
	struct pollfd pfd[2];
	bool dead = false;
	uint64_t v;

	pthread_mutex_lock(&c->wait_mu);
	if (c->dead) {
		pthread_mutex_unlock(&c->wait_mu);
		return -EPIPE;
	}
	if (c->sleeper) {
		uint64_t gen = c->wake_gen;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)timeout_ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		while (c->wake_gen == gen && !c->dead)
			if (pthread_cond_timedwait(&c->wait_cv, &c->wait_mu, &ts) == ETIMEDOUT)
				break;
		dead = c->dead;
		pthread_mutex_unlock(&c->wait_mu);
		return dead ? -EPIPE : 0;
	}
	c->sleeper = true;
	pthread_mutex_unlock(&c->wait_mu);

	if (c->on_dev) {
		dead = vc_dev_wait(&c->dev, timeout_ms) == -EPIPE;
		goto woke;
	}
	pfd[0] = (struct pollfd){.fd = c->complete_fd, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = c->sock, .events = POLLIN | POLLRDHUP};
	if (poll(pfd, 2, timeout_ms) > 0) {
		if (pfd[0].revents & POLLIN)
			(void)!read(c->complete_fd, &v, sizeof(v));
		/* The server sends nothing after the handshake: any event on the
		 * socket means it closed the session or died. */
		if (pfd[1].revents)
			dead = true;
	}
woke:
	pthread_mutex_lock(&c->wait_mu);
	c->sleeper = false;
	c->wake_gen++;
	if (dead)
		c->dead = true;
	pthread_cond_broadcast(&c->wait_cv);
	pthread_mutex_unlock(&c->wait_mu);
	return dead ? -EPIPE : 0;
}

static const struct vc_ring_wait_ops sock_ops = {.kick = sock_kick, .sleep = sock_sleep};

/* ---- session setup -------------------------------------------------------- */

static int handshake(struct vc_client *c, struct vc_welcome *w, char *err, size_t errlen)
{
	struct vc_hello h = {.magic = VC_HELLO_MAGIC, .version = VC_PROTO_VERSION,
			     .abi_hash = VC_ABI_HASH, .pid = (uint32_t)getpid()};
	int fds[VC_SOCK_MAX_FDS], nfds, rc;
	ssize_t n;

	FILE *f = fopen("/proc/self/comm", "r");
	if (f) {
		if (fgets(h.comm, sizeof(h.comm), f))
			h.comm[strcspn(h.comm, "\n")] = 0;
		fclose(f);
	}
	rc = vc_sock_send(c->sock, &h, sizeof(h), NULL, 0);
	/* A server that refused us before reading the hello (an older one, or
	 * one dropping silent connections) may have said why already: its
	 * refusal waits in our socket even though it closed its end. */
	n = vc_sock_recv(c->sock, w, sizeof(*w), fds, VC_SOCK_MAX_FDS, &nfds, rc ? 0 : HANDSHAKE_TIMEOUT_MS);
	if (rc && (n != (ssize_t)sizeof(*w) || w->magic != VC_WELCOME_MAGIC)) {
		for (int i = 0; n > 0 && i < nfds; i++)
			close(fds[i]);
		snprintf(err, errlen, "vcuda: cannot send hello: %s", strerror(-rc));
		return rc;
	}
	if (n < 0 || n != (ssize_t)sizeof(*w) || w->magic != VC_WELCOME_MAGIC) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		snprintf(err, errlen, "vcuda: no valid answer from the server (%s)",
			 n < 0 ? strerror((int)-n) : n == 0 ? "it closed the connection" : "bad message");
		return n < 0 ? (int)n : -EPROTO;
	}
	w->message[sizeof(w->message) - 1] = 0;
	if (w->status || nfds != 3) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		snprintf(err, errlen, "vcuda: server refused the session: %s",
			 w->message[0] ? w->message : strerror(w->status < 0 ? -w->status : EPROTO));
		return w->status < 0 ? w->status : -EPROTO;
	}
	if (w->version != VC_PROTO_VERSION || w->abi_hash != VC_ABI_HASH) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		snprintf(err, errlen,
			 "vcuda: protocol mismatch: server v%u abi %016" PRIx64 ", this library v%u abi %016" PRIx64,
			 w->version, w->abi_hash, VC_PROTO_VERSION, (uint64_t)VC_ABI_HASH);
		return -EPROTONOSUPPORT;
	}
	c->mem_fd = fds[0];
	c->doorbell_fd = fds[1];
	c->complete_fd = fds[2];
	return 0;
}

/* The session over the host-local socket at @path: handshake, then map. */
static int open_socket(struct vc_client *c, const char *path, struct vc_layout *layout, char *err,
		       size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct vc_welcome w;
	struct stat st;
	int rc;

	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "vcuda: socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(a.sun_path, path);
	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->sock < 0) {
		rc = -errno;
		snprintf(err, errlen, "vcuda: socket: %s", strerror(errno));
		return rc;
	}
	if (connect(c->sock, (struct sockaddr *)&a, sizeof(a)) < 0) {
		rc = -errno;
		snprintf(err, errlen,
			 "vcuda: cannot reach vcuda-server at %s: %s (is it running? set VCUDA_SOCKET)",
			 path, strerror(errno));
		return rc;
	}
	rc = handshake(c, &w, err, errlen);
	if (rc)
		return rc;
	if (vc_layout_check(&w.layout) || fstat(c->mem_fd, &st) < 0 ||
	    (uint64_t)st.st_size < w.layout.region_size) {
		snprintf(err, errlen, "vcuda: server sent an unusable region layout");
		return -EPROTO;
	}
	c->size = w.layout.region_size;
	c->base = vc_place_map(c->size, PROT_READ | PROT_WRITE, MAP_SHARED, c->mem_fd, 0);
	if (c->base == MAP_FAILED) {
		rc = -errno;
		snprintf(err, errlen, "vcuda: cannot map the session region: %s", strerror(errno));
		return rc;
	}
	c->session_id = w.session_id;
	*layout = w.layout;
	return 0;
}

int vc_client_open(const char *path, struct vc_client **out, char *err, size_t errlen)
{
	struct vc_layout layout;
	struct vc_client *c;
	struct stat st;
	bool dev = false;
	int rc;

	/* Where: the caller's path (a socket, or a device node); else
	 * $VCUDA_DEVICE, $VCUDA_SOCKET, the device if the guest has one, the
	 * default socket. */
	if (!path) {
		path = getenv("VCUDA_DEVICE");
		dev = path != NULL;
	}
	if (!path)
		path = getenv("VCUDA_SOCKET");
	if (!path && access(DEFAULT_DEVICE, F_OK) == 0) {
		path = DEFAULT_DEVICE;
		dev = true;
	}
	if (!path)
		path = DEFAULT_SOCKET;
	if (!dev && stat(path, &st) == 0 && S_ISCHR(st.st_mode))
		dev = true;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "vcuda: out of memory");
		return -ENOMEM;
	}
	c->sock = c->mem_fd = c->doorbell_fd = c->complete_fd = -1;
	c->dev.fd = -1;
	c->base = MAP_FAILED;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->bulk_lock, NULL);
	pthread_mutex_init(&c->wait_mu, NULL);
	vc_crew_init(&c->crew);
	pthread_cond_init(&c->slot_cv, NULL);
	pthread_cond_init(&c->wait_cv, NULL);

	if (dev) {
		rc = vc_dev_open(path, &c->dev, err, errlen);
		if (rc)
			goto err_free;
		c->on_dev = true;
		c->base = c->dev.base;
		c->size = c->dev.size;
		c->session_id = c->dev.session_id;
		layout = c->dev.layout;
	} else {
		rc = open_socket(c, path, &layout, err, errlen);
		if (rc)
			goto err_free;
	}
	/* Fault in everything but the pinned pool, which fills as it is used. */
	if (madvise(c->base, layout.pinned_size ? layout.pinned_off : layout.region_size, MADV_POPULATE_WRITE) < 0) {
		volatile uint8_t *q = c->base;

		for (size_t i = 0; i < (layout.pinned_size ? layout.pinned_off : layout.region_size); i += 4096)
			q[i] = q[i];
	}
	rc = vc_ring_guest_init(&c->ring, c->base, &layout, &sock_ops, c);
	if (rc) {
		snprintf(err, errlen, "vcuda: the session region does not match this library (%s)",
			 strerror(-rc));
		goto err_unmap;
	}
	c->slot_free = calloc((layout.slot_count + 63) / 64, sizeof(uint64_t));
	if (!c->slot_free) {
		rc = -ENOMEM;
		snprintf(err, errlen, "vcuda: out of memory");
		goto err_ring;
	}
	for (uint32_t i = 0; i < layout.slot_count; i++)
		c->slot_free[i / 64] |= 1ull << (i % 64);
	/* Rotate through at most WINDOW_BYTES of the arena: the pieces in flight
	 * then stay in the cache shared by the two sides' cores. */
	vc_ring_guest_set_window(&c->ring, (uint32_t)(WINDOW_BYTES / layout.chunk_size));
	c->piece_min = vc_client_env_size("VCUDA_BULK_PIECE_MIN", PIECE_MIN, 4096, layout.chunk_size);
	c->pieces_min = (uint32_t)vc_client_env_size("VCUDA_BULK_PIECES", PIECES_MIN, 1, 1024);
	/* By default one processor stays the caller's, which issues the
	 * pieces; a number set in the environment is taken as it is. */
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		uint64_t r = cpus > 1 ? (cpus - 1 < (long)HELPERS_DEFAULT ? (uint64_t)(cpus - 1) : HELPERS_DEFAULT) : 0;

		c->helpers = (uint32_t)vc_client_env_size("VCUDA_BULK_THREADS", r, 0, HELPERS_MAX);
	}
	c->parallel_min = vc_client_env_size("VCUDA_BULK_PARALLEL_MIN", BULK_PARALLEL_MIN, 4096, UINT64_MAX);
	/* How long a wait spins before it sleeps, in microseconds: CPU time
	 * against the sleeper's wake-up (the host's eventfd write and a
	 * scheduler wake-up). A wait of known length spins longer
	 * (vc_client_spin_next()). */
	c->ring.spin_us = (uint32_t)vc_client_env_size("VCUDA_SPIN_US", SPIN_US, 0, 10000000);
	/* VCUDA_FENCE=0: every blocking copy is answered when it is done, as
	 * before fences (for comparisons). */
	c->fence = vc_client_env_size("VCUDA_FENCE", 1, 0, 1) != 0;
	*out = c;
	return 0;

err_ring:
	vc_ring_guest_fini(&c->ring);
err_unmap:
	if (!c->on_dev)
		munmap(c->base, c->size);
	c->base = MAP_FAILED;
err_free:
	vc_client_close(c);
	return rc;
}

void vc_client_close(struct vc_client *c)
{
	if (!c)
		return;
	vc_crew_fini(&c->crew); /* parked: no copy is under way */
	if (c->base != MAP_FAILED) {
		vc_ring_guest_fini(&c->ring);
		if (!c->on_dev)
			munmap(c->base, c->size);
	}
	vc_dev_close(&c->dev); /* nothing when it was never opened */
	if (c->sock >= 0)
		close(c->sock);
	if (c->mem_fd >= 0)
		close(c->mem_fd);
	if (c->doorbell_fd >= 0)
		close(c->doorbell_fd);
	if (c->complete_fd >= 0)
		close(c->complete_fd);
	free(c->slot_free);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->bulk_lock);
	pthread_mutex_destroy(&c->wait_mu);
	pthread_cond_destroy(&c->slot_cv);
	pthread_cond_destroy(&c->wait_cv);
	free(c);
}

/* ---- commands --------------------------------------------------------------- */

/*
 * Size of the pieces a bulk copy of @len bytes is cut into: at most a chunk,
 * and small enough that a copy has at least PIECES_MIN of them, so that our
 * memcpy of piece k overlaps the server's work on piece k-1 even for a 1 MiB
 * copy (one large piece would leave both sides taking turns), but no smaller
 * than PIECE_MIN: on a GPU each piece costs the server a driver copy (about
 * 10 us for a DMA of up to 512 KiB from the registered arena), so that a
 * 128 KiB copy cut in four 32 KiB pieces took 93 us where native took 53 us
 * and one piece 52 us (2D FFT totals at n = 128, docs/PERFORMANCE.md); 16
 * pieces of 64 KiB had halved a 1 MiB copy's speed, 4 of 256 KiB beat
 * native. Both bounds can be tuned from the environment: VCUDA_BULK_PIECES
 * and VCUDA_BULK_PIECE_MIN (bytes).
 */
static uint64_t piece_size(const struct vc_client *c, uint64_t len)
{
	uint64_t p = (len / c->pieces_min + 4095) & ~4095ull;

	if (p < c->piece_min)
		p = c->piece_min;
	return p < c->ring.layout.chunk_size ? p : c->ring.layout.chunk_size;
}

static uint32_t slot_get(struct vc_client *c)
{
	uint32_t words = (c->ring.layout.slot_count + 63) / 64;

	for (;;) {
		for (uint32_t w = 0; w < words; w++) {
			if (c->slot_free[w]) {
				int b = __builtin_ctzll(c->slot_free[w]);

				c->slot_free[w] &= ~(1ull << b);
				return w * 64 + (uint32_t)b;
			}
		}
		pthread_cond_wait(&c->slot_cv, &c->lock);
	}
}

static void slot_put(struct vc_client *c, uint32_t slot)
{
	pthread_mutex_lock(&c->lock);
	c->slot_free[slot / 64] |= 1ull << (slot % 64);
	pthread_cond_signal(&c->slot_cv);
	pthread_mutex_unlock(&c->lock);
}

/* With c->lock held, after command @op was written: count it unless it is a
 * query. (A command queued with @more counts before its publish; the count is
 * only ever compared for equality, so counting early only loses a fast path.) */
static void count_work(struct vc_client *c, uint32_t op)
{
	if (op - c->queries_base < c->queries_n && c->queries[op - c->queries_base])
		return;
	__atomic_store_n(&c->work, c->work + 1, __ATOMIC_RELAXED);
}

void vc_client_set_queries(struct vc_client *c, const uint8_t *queries, uint32_t base, uint32_t n)
{
	pthread_mutex_lock(&c->lock);
	c->queries = queries;
	c->queries_base = base;
	c->queries_n = n;
	pthread_mutex_unlock(&c->lock);
}

uint64_t vc_client_work(struct vc_client *c)
{
	return __atomic_load_n(&c->work, __ATOMIC_RELAXED);
}

int vc_client_broken(struct vc_client *c)
{
	uint32_t why;
	bool dead;

	pthread_mutex_lock(&c->wait_mu);
	dead = c->dead;
	pthread_mutex_unlock(&c->wait_mu);
	return dead || (vc_ring_guest_status(&c->ring, &why) & VC_STATUS_FATAL);
}

/* This thread's next vc_client_call() spins this long at least (0: as
 * the ring does). */
static __thread uint32_t t_spin_next;

void vc_client_spin_next(uint32_t us)
{
	t_spin_next = us;
}

/* One synchronous command; with @fence_spin set (vc_client_call_fenced()),
 * sent fenced where its slot has a fence word, and *@done says whether its
 * work is known done when this returns. */
static int call(struct vc_client *c, uint32_t op, const void *req, size_t reqlen, const void *data,
		size_t dlen, void *out, size_t outcap, size_t *outlen, uint32_t *fence_spin, bool *done)
{
	uint32_t spin = t_spin_next, flags = VC_CMD_F_REPLY;
	int64_t seq, len;
	uint32_t slot;
	int32_t status;
	int rc;

	t_spin_next = 0;
	if (fence_spin && *fence_spin > spin)
		spin = *fence_spin; /* a host that does not fence replies when the work is done */

	pthread_mutex_lock(&c->lock);
	slot = slot_get(c);
	if (fence_spin && c->fence && slot < VC_FENCE_SLOTS)
		flags |= VC_CMD_F_FENCE;
	seq = vc_ring_guest_write(&c->ring, op, flags, slot, req, reqlen, data, dlen);
	if (seq >= 0 && (flags & VC_CMD_F_FENCE))
		vc_ring_guest_fence_arm(&c->ring, slot, (uint64_t)seq);
	rc = seq < 0 ? (int)seq : vc_ring_guest_publish(&c->ring);
	if (!rc)
		count_work(c, op);
	pthread_mutex_unlock(&c->lock);
	if (rc)
		goto out;
	rc = vc_ring_guest_wait_reply_spin(&c->ring, slot, (uint64_t)seq, spin);
	if (rc)
		goto out;
	len = vc_ring_guest_read_reply(&c->ring, slot, (uint64_t)seq, &status, out, outcap);
	if (len < 0) {
		rc = (int)len;
		goto out;
	}
	if (outlen)
		*outlen = (size_t)len;
	rc = status;
	/* A reply for @seq means the host decoded every command before it (in
	 * order), so their asynchronous errors are recorded: done_seq, which
	 * the serving thread publishes at the end of a span, may still lag
	 * behind a reply written by its synchronisation thread. */
	for (uint64_t r = __atomic_load_n(&c->replied_seq, __ATOMIC_RELAXED); r < (uint64_t)seq &&
	     !__atomic_compare_exchange_n(&c->replied_seq, &r, (uint64_t)seq, true, __ATOMIC_RELAXED,
					  __ATOMIC_RELAXED);)
		;
	/* The slot stays ours while its fence word is waited for. */
	if (done)
		*done = !(flags & VC_CMD_F_FENCE) || status != 0 ||
			vc_ring_guest_fence_wait(&c->ring, slot, (uint64_t)seq, *fence_spin) == 0;
out:
	slot_put(c, slot);
	return rc;
}

int vc_client_call(struct vc_client *c, uint32_t op, const void *req, size_t reqlen,
		   const void *data, size_t dlen, void *out, size_t outcap, size_t *outlen)
{
	return call(c, op, req, reqlen, data, dlen, out, outcap, outlen, NULL, NULL);
}

int vc_client_call_fenced(struct vc_client *c, uint32_t op, const void *req, size_t reqlen, void *out,
			  size_t outcap, size_t *outlen, uint32_t spin_us, bool *done)
{
	*done = true;
	return call(c, op, req, reqlen, NULL, 0, out, outcap, outlen, &spin_us, done);
}

int vc_client_submit(struct vc_client *c, uint32_t op, const void *req, size_t reqlen,
		     const void *data, size_t dlen, int more, uint64_t *seq)
{
	int64_t s;
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	s = vc_ring_guest_write(&c->ring, op, 0, 0, req, reqlen, data, dlen);
	if (s < 0)
		rc = (int)s;
	else if (!more)
		rc = vc_ring_guest_publish(&c->ring);
	if (s >= 0)
		count_work(c, op);
	pthread_mutex_unlock(&c->lock);
	if (!rc && seq)
		*seq = (uint64_t)s;
	return rc;
}

int vc_client_flush(struct vc_client *c)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = vc_ring_guest_publish(&c->ring);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int vc_client_wait(struct vc_client *c, uint64_t seq)
{
	return vc_ring_guest_wait(&c->ring, seq);
}

int vc_client_take_error(struct vc_client *c, uint64_t seq)
{
	int32_t code;
	uint64_t eseq;

	if (vc_ring_guest_error(&c->ring, &code, &eseq) && eseq <= seq) {
		vc_ring_guest_ack_error(&c->ring, eseq);
		return code;
	}
	return 0;
}

struct inflight {
	int idx;
	uint64_t aoff, doff, n, seq;
};

/*
 * The helper threads of one large bulk copy (a team). The caller, holding
 * bulk_lock, owns the ring and the chunks: it publishes pieces in order;
 * helpers take them in that order, do their part (fill a piece into the
 * arena, or read one out) and mark its entry done. A helper's failure
 * stops the team.
 */
struct team {
	struct vc_client *c;
	const uint8_t *src; /* filled from (host to device) */
	bool stream;        /* filled with non-temporal stores (VC_CLIENT_PUT_DMA) */
	uint8_t *dst;       /* read out into (device to host) */
	int (*work)(struct team *, const struct inflight *);
	struct inflight *q; /* piece k in q[k % nq] */
	uint8_t *done;      /* per entry: its piece's part done (or never will be) */
	uint32_t nq;
	uint64_t pieces, published, taken; /* in all, published, taken by helpers */
	int rc;                            /* the first failure: -errno of a wait, or 1 (a command failed) */
	bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a piece published or done, or stop */
	uint32_t n; /* helpers running it */
};

/* One helper's part of a team's copy: pieces, in order, until none is left. */
static void team_helper(void *arg)
{
	struct team *g = arg;

	pthread_mutex_lock(&g->mu);
	for (;;) {
		struct inflight f;
		uint64_t k;
		int rc;

		while (!g->stop && g->taken == g->published && g->taken < g->pieces)
			pthread_cond_wait(&g->cv, &g->mu);
		if (g->stop || g->taken == g->pieces)
			break;
		k = g->taken++;
		f = g->q[k % g->nq];
		pthread_mutex_unlock(&g->mu);
		rc = g->work(g, &f);
		pthread_mutex_lock(&g->mu);
		g->done[k % g->nq] = 1;
		if (rc && !g->rc) {
			g->rc = rc;
			g->stop = true;
		}
		pthread_cond_broadcast(&g->cv);
	}
	pthread_mutex_unlock(&g->mu);
}

static void team_free(struct team *g)
{
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g->q);
	free(g->done);
}

/* Up to @want helpers (the client's crew) doing @work for a copy of
 * @pieces pieces: how many (0: none could start, the team is freed), or
 * -ENOMEM. With bulk_lock held, as the crew runs one job at a time. */
static int team_start(struct team *g, struct vc_client *c, uint64_t pieces, uint32_t want,
		      int (*work)(struct team *, const struct inflight *))
{
	g->c = c;
	g->work = work;
	g->nq = c->ring.window;
	g->pieces = pieces;
	g->q = calloc(g->nq, sizeof(*g->q));
	g->done = calloc(g->nq, 1);
	if (!g->q || !g->done) {
		free(g->q);
		free(g->done);
		return -ENOMEM;
	}
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->n = vc_crew_run(&c->crew, want, team_helper, g);
	if (!g->n)
		team_free(g);
	return (int)g->n;
}

/* Piece @f is the next: a helper may take it. */
static void team_publish(struct team *g, const struct inflight *f)
{
	pthread_mutex_lock(&g->mu);
	g->q[g->published % g->nq] = *f;
	g->done[g->published % g->nq] = 0;
	g->published++;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

/* Whether the entry of piece @k is done (its part of piece @k, or of the
 * piece before it there), without waiting. */
static bool team_done(struct team *g, uint64_t k)
{
	bool d;

	pthread_mutex_lock(&g->mu);
	d = g->done[k % g->nq];
	pthread_mutex_unlock(&g->mu);
	return d;
}

/* Waits until the entry of piece @k is done: true, or false once the team
 * has stopped. */
static bool team_wait(struct team *g, uint64_t k)
{
	bool ok;

	pthread_mutex_lock(&g->mu);
	while (!g->stop && !g->done[k % g->nq])
		pthread_cond_wait(&g->cv, &g->mu);
	ok = !g->stop;
	pthread_mutex_unlock(&g->mu);
	return ok;
}

/* Whether a helper's failure has stopped the team. */
static bool team_stopped(struct team *g)
{
	bool st;

	pthread_mutex_lock(&g->mu);
	st = g->stop;
	pthread_mutex_unlock(&g->mu);
	return st;
}

/* No more pieces (stopping the helpers at once if @stop): the helpers
 * finish those they took and end. */
static void team_finish(struct team *g, bool stop)
{
	pthread_mutex_lock(&g->mu);
	g->pieces = g->published;
	if (stop)
		g->stop = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	vc_crew_wait(&g->c->crew);
}

/*
 * A large host-to-device copy written into the arena on several threads:
 * one writer fills a piece at about the native pageable copy's speed, so
 * the copy never beat native by much and, on a busy machine, fell below it
 * (82-86 % on the H100 in one run). The caller hands pieces out as their
 * chunks come free, writers fill them in any order, and the caller issues
 * each piece's command in order once it is filled.
 */
static int fill_piece(struct team *g, const struct inflight *f)
{
	vc_ring_guest_arena_write(&g->c->ring, f->aoff, g->src + f->doff, f->n, g->stream);
	return 0;
}

static int put_parallel(struct vc_client *c, const uint8_t *s, uint64_t len, vc_client_emit_fn emit, void *arg,
			uint32_t want, bool stream, bool *fallback, uint64_t *last)
{
	uint64_t chunk = piece_size(c, len), emitted = 0;
	struct team g = {.src = s, .stream = stream};
	int rc = team_start(&g, c, (len + chunk - 1) / chunk, want, fill_piece);

	*fallback = rc == 0;
	if (rc <= 0)
		return rc;
	rc = 0;
	while (!rc && emitted < g.pieces) {
		uint64_t k = g.published;

		/* Issue what is filled, in order. */
		if (emitted < k && team_done(&g, emitted)) {
			struct inflight *f = &g.q[emitted % g.nq];

			rc = emit(c, arg, f->doff, f->n, f->aoff, &f->seq);
			if (rc)
				break;
			vc_ring_guest_chunk_release(&c->ring, f->idx, f->seq);
			*last = f->seq;
			emitted++;
			continue;
		}
		/* Hand the next piece out when its chunk is free (the command
		 * of the piece before it there has ended), or when the writers
		 * have nothing else. */
		if (k < g.pieces && k - emitted < g.nq &&
		    (k == emitted || k < g.nq || vc_ring_guest_done(&c->ring) >= g.q[k % g.nq].seq)) {
			struct inflight f = {.doff = k * chunk, .n = len - k * chunk < chunk ? len - k * chunk : chunk};

			f.idx = vc_ring_guest_chunk_get(&c->ring, &f.aoff);
			if (f.idx < 0) {
				rc = f.idx;
				break;
			}
			team_publish(&g, &f);
			continue;
		}
		/* A piece is with the writers: wait for the next in order. */
		team_wait(&g, emitted);
	}
	team_finish(&g, true);
	/* Handed out but never issued (an error): no command will read them. */
	for (uint64_t k = emitted; k < g.published; k++)
		vc_ring_guest_chunk_release(&c->ring, g.q[k % g.nq].idx, 0);
	team_free(&g);
	return rc;
}

int vc_client_put(struct vc_client *c, const void *src, uint64_t len, vc_client_emit_fn emit, void *arg,
		  unsigned flags)
{
	const uint8_t *s = src;
	uint64_t chunk = piece_size(c, len), done = 0, last = 0;
	/* A DMA right after plain stores took twice as long (512 KiB: 30
	 * against 17-20 us on the H100 machine): the device's reads snoop each
	 * line still dirty in the writer's cache. Non-temporal stores leave
	 * none; the host's CPU, reading the piece next, is better served by
	 * lines in the cache. */
	bool stream = flags & VC_CLIENT_PUT_DMA;
	int rc = 0;

	pthread_mutex_lock(&c->bulk_lock);
	if (len >= c->parallel_min && c->helpers) {
		bool fallback = false;

		rc = put_parallel(c, s, len, emit, arg, c->helpers, stream, &fallback, &last);
		if (!fallback)
			done = len; /* every piece issued, or a failure in rc */
	}
	/* Pipelined: we fill piece k while the server drains piece k-1. */
	while (!rc && done < len) {
		uint64_t n = len - done < chunk ? len - done : chunk, aoff;
		int idx = vc_ring_guest_chunk_get(&c->ring, &aoff);

		if (idx < 0) {
			rc = idx;
			break;
		}
		vc_ring_guest_arena_write(&c->ring, aoff, s + done, n, stream);
		rc = emit(c, arg, done, n, aoff, &last);
		if (rc)
			break;
		vc_ring_guest_chunk_release(&c->ring, idx, last);
		done += n;
	}
	pthread_mutex_unlock(&c->bulk_lock);
	if (rc || (flags & VC_CLIENT_PUT_ASYNC) || !last)
		return rc;
	rc = vc_client_wait(c, last);
	return rc ? rc : vc_client_take_error(c, last);
}

/* Whether the error of a command up to @seq waits: looked at, not taken. */
static bool error_pending(struct vc_client *c, uint64_t seq)
{
	int32_t code;
	uint64_t eseq;

	return vc_ring_guest_error(&c->ring, &code, &eseq) && eseq <= seq;
}

/*
 * A bulk copy's error, taken once every piece's command up to @last has
 * ended: the host keeps the first error until it is taken, and a later
 * piece's, were the first taken earlier, would be reported to the next
 * caller. The first error's code, or -errno.
 */
static int fail_after(struct vc_client *c, uint64_t last)
{
	int rc = vc_client_wait(c, last);

	return rc ? rc : vc_client_take_error(c, last);
}

/*
 * A large device-to-host copy read out of the arena on several threads.
 * One reader copies a piece out at about 10 GB/s on the H100 machine, below
 * the server's DMA into the arena and below the native pageable copy: a
 * 256 MiB copy ran at 78-84 % of native. Here the caller issues the pieces,
 * up to the window's worth ahead, and readers take them in order, each
 * waiting for its piece's command and copying it out; the caller reuses a
 * chunk only once it was read.
 */
static int read_piece(struct team *g, const struct inflight *f)
{
	int rc = vc_client_wait(g->c, f->seq);

	/* A failed command left no bytes to read (the caller takes the
	 * error; we only look). */
	if (!rc && error_pending(g->c, f->seq))
		rc = 1;
	if (!rc)
		vc_ring_guest_arena_read(&g->c->ring, f->aoff, g->dst + f->doff, f->n, true);
	return rc;
}

static int get_parallel(struct vc_client *c, uint8_t *d, uint64_t len, vc_client_emit_fn emit, void *arg,
			uint32_t want, bool *fallback)
{
	uint64_t chunk = piece_size(c, len), done = 0, last = 0;
	struct team g = {.dst = d};
	int rc = team_start(&g, c, (len + chunk - 1) / chunk, want, read_piece);

	*fallback = rc == 0;
	if (rc <= 0)
		return rc;
	rc = 0;
	for (uint64_t k = 0; k < g.pieces; k++) {
		struct inflight f = {.doff = done, .n = len - done < chunk ? len - done : chunk};

		/* The entry's chunk comes back once its last piece was read. */
		if (k >= g.nq ? !team_wait(&g, k) : team_stopped(&g))
			break;
		if (k >= g.nq)
			vc_ring_guest_chunk_release(&c->ring, g.q[k % g.nq].idx, 0);
		f.idx = vc_ring_guest_chunk_get(&c->ring, &f.aoff);
		if (f.idx < 0) {
			rc = f.idx;
			break;
		}
		rc = emit(c, arg, done, f.n, f.aoff, &f.seq);
		/* Held until a reader has read it out, not merely until it is filled. */
		vc_ring_guest_chunk_release(&c->ring, f.idx, rc ? 0 : UINT64_MAX);
		if (rc)
			break;
		last = f.seq;
		done += f.n;
		team_publish(&g, &f);
	}
	/* No more pieces: the readers finish those taken, the rest never are. */
	team_finish(&g, rc != 0);
	/* Chunks still held: free once read, or once their commands end. */
	for (uint64_t k = g.published > g.nq ? g.published - g.nq : 0; k < g.published; k++) {
		const struct inflight *f = &g.q[k % g.nq];

		vc_ring_guest_chunk_release(&c->ring, f->idx, k < g.taken ? 0 : f->seq);
	}
	if (!rc)
		rc = g.rc < 0 ? g.rc : last ? fail_after(c, last) : 0;
	team_free(&g);
	return rc;
}

int vc_client_get(struct vc_client *c, void *dst, uint64_t len, vc_client_emit_fn emit, void *arg)
{
	uint64_t chunk = piece_size(c, len), done = 0, last = 0;
	uint32_t nq = c->ring.window, head = 0, count = 0;
	struct inflight *q;
	uint8_t *d = dst;
	bool failed = false;
	int rc = 0;

	if (!nq)
		return -ENOSPC;
	if (len >= c->parallel_min && c->helpers) {
		bool fallback = false;

		pthread_mutex_lock(&c->bulk_lock);
		rc = get_parallel(c, d, len, emit, arg, c->helpers, &fallback);
		pthread_mutex_unlock(&c->bulk_lock);
		if (!fallback)
			return rc;
		rc = 0; /* no reader could start: read it out alone */
	}
	q = calloc(nq, sizeof(*q));
	if (!q)
		return -ENOMEM;
	/* Keep every chunk busy: up to nq reads in flight, drained in order. */
	pthread_mutex_lock(&c->bulk_lock);
	while (!rc && (done < len || count)) {
		if (done < len && count < nq) {
			struct inflight *f = &q[(head + count) % nq];

			f->n = len - done < chunk ? len - done : chunk;
			f->idx = vc_ring_guest_chunk_get(&c->ring, &f->aoff);
			if (f->idx < 0) {
				rc = f->idx;
				break;
			}
			f->doff = done;
			rc = emit(c, arg, done, f->n, f->aoff, &f->seq);
			/* Held until we have read it out, not merely until it is filled. */
			vc_ring_guest_chunk_release(&c->ring, f->idx, rc ? 0 : UINT64_MAX);
			if (rc)
				break;
			last = f->seq;
			done += f->n;
			count++;
			continue;
		}
		struct inflight *f = &q[head];

		rc = vc_client_wait(c, f->seq);
		if (rc)
			break;
		if (error_pending(c, f->seq)) {
			failed = true;
			break;
		}
		vc_ring_guest_arena_read(&c->ring, f->aoff, d + f->doff, f->n, len >= VC_STREAM_THRESHOLD);
		vc_ring_guest_chunk_release(&c->ring, f->idx, 0);
		head = (head + 1) % nq;
		count--;
	}
	/* On error, chunks still in flight are freed once their commands end. */
	for (; count; count--, head = (head + 1) % nq)
		vc_ring_guest_chunk_release(&c->ring, q[head].idx, q[head].seq);
	if (failed)
		rc = fail_after(c, last);
	pthread_mutex_unlock(&c->bulk_lock);
	free(q);
	return rc;
}

uint64_t vc_client_console(struct vc_client *c)
{
	return vc_ring_guest_console(&c->ring);
}

uint32_t vc_client_inline_max(struct vc_client *c)
{
	return c->ring.layout.slot_size - (uint32_t)sizeof(struct vc_reply_hdr);
}

void vc_client_bulk_shape(const struct vc_client *c, uint64_t len, uint64_t *piece, uint32_t *inflight)
{
	*piece = piece_size(c, len);
	*inflight = c->ring.window;
}

void vc_client_get_info(struct vc_client *c, struct vc_client_info *info)
{
	const struct vc_layout *l = &c->ring.layout;

	info->session_id = c->session_id;
	info->region_size = l->region_size;
	info->ring_size = l->ring_size;
	info->slot_count = l->slot_count;
	info->slot_size = l->slot_size;
	info->chunk_size = l->chunk_size;
	info->arena_size = l->arena_size;
	pthread_mutex_lock(&c->lock);
	info->kicks = c->ring.kicks;
	pthread_mutex_unlock(&c->lock);
	info->done_seq = vc_ring_guest_done(&c->ring);
	if (info->done_seq < __atomic_load_n(&c->replied_seq, __ATOMIC_RELAXED))
		info->done_seq = __atomic_load_n(&c->replied_seq, __ATOMIC_RELAXED);
}

void *vc_client_pinned(struct vc_client *c, uint64_t *size)
{
	*size = c->ring.layout.pinned_size;
	return *size ? (uint8_t *)c->base + c->ring.layout.pinned_off : NULL;
}

int vc_client_pinned_map(struct vc_client *c, uint64_t off, uint64_t len)
{
	/* Host-locally the whole region is one ordinary shared mapping. */
	return c->on_dev ? vc_dev_pool_map(&c->dev, off, len) : 0;
}

int vc_client_pinned_alias(struct vc_client *c, uint64_t off, void *addr, uint64_t len)
{
	const struct vc_layout *l = &c->ring.layout;
	uint64_t at = l->pinned_off + off;
	void *m;

	if (off > l->pinned_size || len > l->pinned_size - off || ((uintptr_t)addr | at | len) & 4095)
		return -EINVAL;
	if (c->on_dev)
		return vc_dev_map_at(&c->dev, at, addr, len);
	m = mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, c->mem_fd, (off_t)at);
	return m == MAP_FAILED ? -errno : 0;
}

int vc_client_pass_fd(struct vc_client *c, uint64_t token, int fd)
{
	struct vc_segfd_msg m = {.magic = VC_SEGFD_MAGIC, .token = token};

	if (c->on_dev || c->sock < 0)
		return -EOPNOTSUPP; /* no descriptor reaches the host from a VM */
	return vc_sock_send(c->sock, &m, sizeof(m), &fd, 1);
}

int vc_client_pin(struct vc_client *c, uint64_t addr, uint64_t len, uint32_t *entry, uint64_t *gen)
{
	return c->on_dev ? vc_dev_pin(&c->dev, addr, len, entry, gen) : -EOPNOTSUPP;
}

int vc_client_unpin(struct vc_client *c, uint32_t entry, uint64_t gen)
{
	return c->on_dev ? vc_dev_unpin(&c->dev, entry, gen) : -EOPNOTSUPP;
}

int vc_client_cb_next(struct vc_client *c, uint64_t *cookie)
{
	return vc_ring_guest_cb_next(&c->ring, cookie, VC_CLIENT_CB_SPIN_US);
}

void vc_client_cb_finish(struct vc_client *c)
{
	vc_ring_guest_cb_finish(&c->ring);
}

struct vc_ring_guest *vc_client_raw_ring(struct vc_client *c)
{
	return &c->ring;
}
