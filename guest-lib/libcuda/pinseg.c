/* SPDX-License-Identifier: MIT */
/*
 * pinseg.c - page-locked memory beyond the pinned pool: segments.
 *
 * An allocation the pool has no room for (cuMemHostAlloc, cudaMallocHost,
 * pin_memory of gigabytes; cuMemHostRegister of a large range, whose pages
 * move as into the pool) gets memfds of its own, one per slice of
 * vc_fill_plan() (their pages are made on a thread each: on one file the
 * threads would queue on its locks): mapped here end to end at a 2 MiB
 * aligned address in a zone of their own (vc_place.h), passed to the
 * server on the session's socket (SCM_RIGHTS), which maps them at the same
 * address, and registered with its driver (vcHostRegister, the bytes asked)
 * like pool memory. Copies from and to it are DMA, and its pointer is its
 * own device address. The server
 * names it by an offset among the pinned offsets (above VC_CU_PINSEG_OFF0),
 * so that the copy paths, which name pinned memory by offset, take it
 * unchanged.
 *
 * A segment given back is parked, not unmapped: unregistered with the
 * driver, so that it is neither locked nor charged to the session's pinned
 * quota, but its pages made and mapped on both sides, and inaccessible here
 * (PROT_NONE, so that a use after cudaFreeHost faults as natively). The next
 * allocation or registration it fits takes it without the pages to make:
 * for a gigabyte, making them was most of what cudaHostRegister cost
 * through vcuda (docs/PERFORMANCE.md). A registration copies the program's
 * bytes into it while the server registers it. Parked segments are bounded
 * together by VCUDA_PINNED_KEEP (default 2 GiB, 0 turns parking off), the
 * oldest going first past it; they count against the server's --pinned-max,
 * and an allocation it refuses gets them all dropped and is tried again. A
 * large segment is made up to 2 MiB larger than asked (to a 2 MiB boundary,
 * past at least a page of slack), so that one made for cudaMallocHost of N
 * bytes fits cudaHostRegister of a malloc'd N bytes, which spans one page
 * more.
 *
 * Where the address is taken in the server's process, the segment is mapped
 * elsewhere here and offered again (a few times). The server bounds the
 * segments of a session (--pinned-max) and answers CUDA_ERROR_OUT_OF_MEMORY
 * past it, as the driver does when it cannot lock more. In a VM no
 * descriptor reaches the host: segments are not supported there, and the
 * pool stays the limit (docs/ARCHITECTURE.md, page-locked memory).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pinspare.h"
#include "vc_client.h"
#include "vc_cu_guest.h"
#include "vc_fill.h"
#include "vc_place.h"
#include "vc_thread.h"

#define SEG_ALIGN (2ull << 20)
#define MAP_TRIES 4
#define SLACK_MIN (64ull << 20) /* segments from this size get their slack */
#define KEEP_DEFAULT (2ull << 30)

struct seg {
	uint64_t off, size;
	uint64_t part;   /* bytes of each file but the last (mappings split there) */
	uint64_t devptr; /* its device address, while in use (registered) */
	uint64_t parked; /* 0 in use, else when it was parked (a count: oldest first) */
	uint8_t *addr;
};

/* The files of a segment being made. */
struct files {
	int fd[VC_CU_PINSEG_FILES_MAX];
	unsigned n;
	uint64_t part; /* each but the last; the last holds the rest */
};

_Static_assert(VC_FILL_SLICES_MAX <= VC_CU_PINSEG_FILES_MAX, "a file per fill slice");

static struct {
	struct seg *v;
	size_t n, cap;
	int unsupported; /* the transport passes no descriptors (a VM) */
	uint64_t token;
	uint64_t parked_bytes, clock;
	pthread_mutex_t mu;
	/* One segment's descriptors in flight at a time: the server keeps a
	 * bounded number waiting (VC_FDBOX_MAX), and two threads' 16 files
	 * each passed before either command was taken would not fit. */
	pthread_mutex_t offer_mu;
} g_seg = {.mu = PTHREAD_MUTEX_INITIALIZER, .offer_mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t g_keep;
static pthread_once_t g_keep_once = PTHREAD_ONCE_INIT;

static void keep_read(void)
{
	g_keep = vc_client_env_size("VCUDA_PINNED_KEEP", KEEP_DEFAULT, 0, UINT64_MAX);
}

static uint64_t seg_size(uint64_t len);

/* How many bytes of segments may stay parked: VCUDA_PINNED_KEEP, and the
 * spare beside it (pinspare.c), so that parking a freed segment does not
 * push the spare out. */
static uint64_t keep_bytes(void)
{
	uint64_t spare = vc_cu_pinspare_len();

	pthread_once(&g_keep_once, keep_read);
	spare = spare ? seg_size((spare + 4095) & ~4095ull) : 0;
	return g_keep > UINT64_MAX - spare ? UINT64_MAX : g_keep + spare;
}

/* A segment's size for @len bytes (whole pages): from SLACK_MIN, to the next
 * 2 MiB boundary past at least one more page. */
static uint64_t seg_size(uint64_t len)
{
	return len < SLACK_MIN ? len : (len + 4096 + SEG_ALIGN - 1) & ~(SEG_ALIGN - 1);
}

/* Whether a parked segment of @size bytes may serve @len: large enough, and
 * not much larger than one made for it would be. */
static int fits(uint64_t size, uint64_t len)
{
	uint64_t want = seg_size(len);

	return size >= len && (size <= want || size - want <= want / 8);
}

static uint64_t file_len(const struct files *f, unsigned i, uint64_t size)
{
	return i < f->n - 1 ? f->part : size - (uint64_t)(f->n - 1) * f->part;
}

static void files_close(struct files *f)
{
	for (unsigned i = 0; i < f->n; i++)
		close(f->fd[i]); /* the mappings keep the files */
	f->n = 0;
}

/* The files of a @size-byte segment for @len bytes, sized and sealed, split
 * where vc_fill_plan() splits @len (the last file holds the slack). 0 or
 * -errno. */
static int files_make(struct files *f, uint64_t size, uint64_t len)
{
	unsigned n;
	uint64_t per = vc_fill_plan(len, &n);

	f->n = 0;
	f->part = n > 1 ? per : size;
	for (unsigned i = 0; i < n; i++) {
		/* The first file names the segment in /proc/PID/maps; the
		 * others follow it. */
		int fd = memfd_create(i ? "vcuda-pinned-cont" : "vcuda-pinned", MFD_CLOEXEC | MFD_ALLOW_SEALING), e;

		if (fd < 0) {
			e = errno == ENOSYS ? -ENOSYS : -ENOMEM;
			files_close(f);
			return e;
		}
		f->fd[f->n++] = fd;
		if (ftruncate(fd, (off_t)file_len(f, i, size)) < 0 ||
		    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
			files_close(f);
			return -ENOMEM;
		}
	}
	return 0;
}

/* The files mapped end to end at a 2 MiB aligned address (huge pages where
 * the kernel gives them to shmem), or NULL: in the segments' zone, where
 * the worker's libraries and the driver's reservations are not
 * (vc_place.h), else where the kernel chooses. */
static uint8_t *map_aligned(const struct files *f, uint64_t size)
{
	uint8_t *r = vc_place_reserve(size, SEG_ALIGN), *a;
	uint64_t rlen = size;

	if (!r) {
		rlen = size + SEG_ALIGN;
		r = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED)
			return NULL;
	}
	a = (uint8_t *)(((uintptr_t)r + SEG_ALIGN - 1) & ~(uintptr_t)(SEG_ALIGN - 1));
	for (unsigned i = 0; i < f->n; i++) {
		if (mmap(a + (uint64_t)i * f->part, file_len(f, i, size), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, f->fd[i], 0) == MAP_FAILED) {
			munmap(r, rlen);
			return NULL;
		}
	}
	if (a > r)
		munmap(r, (size_t)(a - r));
	if (r + rlen > a + size)
		munmap(a + size, (size_t)(r + rlen - (a + size)));
	madvise(a, size, MADV_HUGEPAGE);
	return a;
}

/* Offer the segment of files @f, mapped at @a, to the server (with
 * VC_CU_PINSEG_PREFAULT in @flags, the server maps its pages ahead): its
 * offset in *@off. Each descriptor goes under a token of its own, in order. */
static CUresult offer(const struct files *f, uint8_t *a, uint64_t size, uint32_t flags, uint64_t *off)
{
	struct vc_cu_state *st = vc_cu_state();
	struct vc_cu_req_pinseg rq = {.op = VC_CU_PINSEG_MAP, .guest_addr = (uint64_t)(uintptr_t)a, .size = size,
				      .files = f->n, .part = f->n > 1 ? f->part : 0, .flags = flags};
	struct vc_cu_rep_pinseg rp;
	CUresult rc;

	pthread_mutex_lock(&g_seg.mu);
	rq.token = g_seg.token + 1;
	g_seg.token += f->n;
	pthread_mutex_unlock(&g_seg.mu);
	pthread_mutex_lock(&g_seg.offer_mu);
	for (unsigned i = 0; i < f->n; i++) {
		int e = vc_client_pass_fd(st->client, rq.token + i, f->fd[i]);

		if (e) {
			pthread_mutex_unlock(&g_seg.offer_mu);
			return e == -EOPNOTSUPP ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	rc = vc_cu_call(VC_CU_vcPinnedSegment, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	pthread_mutex_unlock(&g_seg.offer_mu);
	if (rc == CUDA_SUCCESS)
		*off = rp.off;
	return rc;
}

static int remember(const struct seg *s)
{
	int rc = 0;

	pthread_mutex_lock(&g_seg.mu);
	if (g_seg.n == g_seg.cap) {
		size_t cap = g_seg.cap ? g_seg.cap * 2 : 16;
		struct seg *v = realloc(g_seg.v, cap * sizeof(*v));

		if (v) {
			g_seg.v = v;
			g_seg.cap = cap;
		}
	}
	if (g_seg.n < g_seg.cap)
		g_seg.v[g_seg.n++] = *s;
	else
		rc = -ENOMEM;
	pthread_mutex_unlock(&g_seg.mu);
	return rc;
}

void vc_cu_pinseg_host_unmap(uint64_t off)
{
	struct vc_cu_req_pinseg rq = {.op = VC_CU_PINSEG_UNMAP, .off = off};
	struct vc_cu_prefix none;

	vc_cu_call(VC_CU_vcPinnedSegment, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

/* A segment out of the list, gone on both sides. Ours is the last mapping:
 * unmapping it frees the pages, for a gigabyte most of what cudaFreeHost
 * cost. A thread of ours does it while the program goes on (aside.c). */
static void drop(const struct seg *s)
{
	vc_cu_pinseg_host_unmap(s->off);
	vc_cu_aside_drop(s->addr, s->size);
}

/* Index of the segment at offset @off, parked or not; g_seg.n if none.
 * Under g_seg.mu. */
static size_t index_of(uint64_t off)
{
	size_t i;

	for (i = 0; i < g_seg.n && g_seg.v[i].off != off; i++)
		;
	return i;
}

/* Take segment @i out of the list into *@s. Under g_seg.mu. */
static void take_out(size_t i, struct seg *s)
{
	*s = g_seg.v[i];
	if (s->parked)
		g_seg.parked_bytes -= s->size;
	g_seg.v[i] = g_seg.v[--g_seg.n];
}

/*
 * How the pages of a registered range reach the segment. Mapped and copied
 * on several threads (vc_fill.h), each populating its slice first: on the
 * GPU machine the single-threaded write below was most of cudaHostRegister's
 * time for a gigabyte. Under AddressSanitizer the kernel copies (the
 * write) into a new segment, and an uninstrumented loop into a parked one:
 * the range is whole pages, and bytes around the program's object in them
 * are read by no code of ours (the concern of memory.c's copy_pages()).
 */
#if defined(__SANITIZE_ADDRESS__)
#define FILL_BY_WRITE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FILL_BY_WRITE 1
#endif
#endif
#ifndef FILL_BY_WRITE
#define FILL_BY_WRITE 0
#endif

/* The first @len bytes of files @f filled from @src by the kernel. */
static int fill_from(const struct files *f, const void *src, uint64_t len)
{
	for (unsigned i = 0; i < f->n; i++) {
		const uint8_t *from = (const uint8_t *)src + (uint64_t)i * f->part;
		uint64_t n = (uint64_t)i * f->part >= len ? 0 : len - (uint64_t)i * f->part;

		n = n < f->part || i == f->n - 1 ? n : f->part;
		for (uint64_t done = 0; done < n;) {
			ssize_t w = pwrite(f->fd[i], from + done, n - done, (off_t)done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			done += (uint64_t)w;
		}
	}
	return 0;
}

#if FILL_BY_WRITE
__attribute__((no_sanitize_address)) static int refill(uint8_t *dst, const void *src, uint64_t len)
{
	const uint64_t *s = src;
	uint64_t *d = (uint64_t *)dst;

	for (uint64_t i = 0; i < len / 8; i++) {
		d[i] = s[i];
		__asm__ volatile("" ::: "memory");
	}
	return 0;
}
#else
static int refill(uint8_t *dst, const void *src, uint64_t len)
{
	return vc_fill_copy(dst, src, len);
}
#endif

/* The smallest parked segment that fits @len, in use again, into *@s;
 * -ENOENT if none. */
static int take_parked(uint64_t len, struct seg *s)
{
	size_t best = SIZE_MAX;

	pthread_mutex_lock(&g_seg.mu);
	for (size_t i = 0; i < g_seg.n; i++)
		if (g_seg.v[i].parked && fits(g_seg.v[i].size, len) &&
		    (best == SIZE_MAX || g_seg.v[i].size < g_seg.v[best].size))
			best = i;
	if (best != SIZE_MAX) {
		g_seg.v[best].parked = 0;
		g_seg.parked_bytes -= g_seg.v[best].size;
		*s = g_seg.v[best];
	}
	pthread_mutex_unlock(&g_seg.mu);
	return best == SIZE_MAX ? -ENOENT : 0;
}

CUresult vc_cu_pinseg_host_register(uint64_t off, uint64_t len, uint64_t *devptr)
{
	struct vc_cu_req_host_register rq = {.off = off, .size = len,
					     .flags = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP};
	struct vc_cu_rep_host_register rp;
	CUresult rc = vc_cu_call(VC_CU_vcHostRegister, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);

	if (rc == CUDA_SUCCESS)
		*devptr = rp.devptr;
	return rc;
}

static CUresult host_unregister(uint64_t off)
{
	struct vc_cu_req_host_register rq = {.off = off};
	struct vc_cu_prefix none;

	return vc_cu_call(VC_CU_vcHostUnregister, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

/* A refill on a thread of its own, beside the registration. */
struct refill_job {
	uint8_t *dst;
	const void *src;
	uint64_t len;
	int rc;
};

static void *refill_run(void *arg)
{
	struct refill_job *j = arg;

	j->rc = refill(j->dst, j->src, j->len);
	return NULL;
}

/* Segment @s taken from the parked ones, accessible again, registered (its
 * device address in @s) and, with @src, holding its @len bytes: the copy
 * runs while the server registers the pages, which exist already. 0, or
 * -errno: then it is out of the list and gone. */
static int reuse(struct seg *s, const void *src, uint64_t len)
{
	struct refill_job j = {.dst = s->addr, .src = src, .len = len, .rc = -1};
	CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
	struct seg gone;
	pthread_t t;
	int apart = 0;
	size_t i;

	if (!mprotect(s->addr, s->size, PROT_READ | PROT_WRITE)) {
		if (src)
			apart = !vc_thread_start(&t, false, refill_run, &j);
		rc = vc_cu_pinseg_host_register(s->off, len, &s->devptr);
		if (apart)
			pthread_join(t, NULL);
		else if (src && rc == CUDA_SUCCESS)
			j.rc = refill(s->addr, src, len);
		if (rc == CUDA_SUCCESS && src && j.rc) {
			host_unregister(s->off);
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	if (rc == CUDA_SUCCESS) {
		pthread_mutex_lock(&g_seg.mu);
		if ((i = index_of(s->off)) < g_seg.n)
			g_seg.v[i].devptr = s->devptr;
		pthread_mutex_unlock(&g_seg.mu);
		return 0;
	}
	pthread_mutex_lock(&g_seg.mu);
	if ((i = index_of(s->off)) < g_seg.n)
		take_out(i, &gone);
	pthread_mutex_unlock(&g_seg.mu);
	drop(s);
	return -ENOMEM;
}

/* A new segment of seg_size(@len) bytes, its first @len bytes from @src
 * unless NULL, offered, registered unless @unregistered (a spare: made on a
 * thread with no context) and in the list: in *@s. *@bound is set when the
 * server refused to map it (past its --pinned-max). A spare's pages are
 * made before it is offered, and the server asked to map them ahead: its
 * first registration then costs what a parked segment's does (the server's
 * mapping of a parked one holds its pages since its first registration). */
static CUresult make(uint64_t len, const void *src, struct seg *s, int *bound, bool unregistered)
{
	uint64_t size = seg_size(len), off = 0;
	uint8_t *taken[MAP_TRIES], *a = NULL;
	CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
	struct files f;
	int n = 0, tries = 0, filled = 0, offered = 0, e;

	if ((e = files_make(&f, size, len)))
		return e == -ENOSYS ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_OUT_OF_MEMORY;
	if (src && FILL_BY_WRITE && fill_from(&f, src, len))
		goto out;
	while (n < MAP_TRIES) {
		a = map_aligned(&f, size);
		if (!a) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
		/* Filled once, through the first mapping: the files keep it.
		 * The fill's slices are the files (vc_fill_plan()). */
		if (src && !FILL_BY_WRITE && !filled) {
			if (vc_fill_copy(a, src, len)) {
				rc = CUDA_ERROR_OUT_OF_MEMORY;
				break;
			}
			filled = 1;
		}
		if (unregistered && !filled) {
			vc_fill_populate(a, size); /* or made on first touch */
			filled = 1;
		}
		rc = offer(&f, a, size, unregistered ? VC_CU_PINSEG_PREFAULT : 0, &off);
		*bound = rc == CUDA_ERROR_OUT_OF_MEMORY;
		if (rc != CUDA_ERROR_ALREADY_MAPPED)
			break;
		taken[n++] = a; /* held, so that the next mapping lands elsewhere */
		a = NULL;
	}
	if (rc == CUDA_ERROR_ALREADY_MAPPED)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	offered = rc == CUDA_SUCCESS;
	/* A new allocation's pages made here before the server registers it
	 * (as cudaMallocHost's pages are mapped when it returns); the server
	 * leaves pages already made to the driver's walk
	 * (host-backend/cuda/pinned.c). */
	if (rc == CUDA_SUCCESS && !src && !unregistered)
		vc_fill_populate(a, size);
	*s = (struct seg){.off = off, .size = size, .part = f.part, .addr = a};
	if (rc == CUDA_SUCCESS && !unregistered)
		rc = vc_cu_pinseg_host_register(s->off, len, &s->devptr);
	if (rc == CUDA_SUCCESS && remember(s))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc != CUDA_SUCCESS && offered)
		vc_cu_pinseg_host_unmap(off); /* with the registration, were there one */
	if (rc == CUDA_ERROR_NOT_SUPPORTED && !offered)
		__atomic_store_n(&g_seg.unsupported, 1, __ATOMIC_RELAXED);
	if (rc != CUDA_SUCCESS && a)
		munmap(a, size);
	tries = n;
	while (n)
		munmap(taken[--n], size);
out:
	files_close(&f);
	if (rc != CUDA_SUCCESS && vc_cu_debug())
		fprintf(stderr, "vcuda: no page-locked segment of %llu MiB made (CUresult %d, %s, %d addresses taken)\n",
			(unsigned long long)(size >> 20), (int)rc, offered ? "offered" : "not offered", tries);
	return rc;
}

CUresult vc_cu_pinseg_get(uint64_t len, const void *src, void **p, uint64_t *off, uint64_t *devptr)
{
	struct seg s;
	CUresult rc;
	int bound = 0, parked; /* bound: set by make() only */

	len = (len + 4095) & ~4095ull;
	if (!vc_cu_state() || __atomic_load_n(&g_seg.unsupported, __ATOMIC_RELAXED))
		return CUDA_ERROR_NOT_SUPPORTED;
	/* A spare being made that fits is waited for: it is further along
	 * than a new segment would be (pinspare.c). */
	parked = !take_parked(len, &s) || (vc_cu_pinspare_wait(len) && !take_parked(len, &s));
	if (parked)
		vc_cu_pinspare_kick(); /* the spare, if that was it, made again */
	rc = !parked || reuse(&s, src, len) ? make(len, src, &s, &bound, false) : CUDA_SUCCESS;
	/* Past the server's bound on segments, which counts the parked ones. */
	if (bound && vc_cu_pinseg_trim())
		rc = make(len, src, &s, &bound, false);
	if (rc == CUDA_SUCCESS) {
		*p = s.addr;
		*off = s.off;
		*devptr = s.devptr;
	}
	return rc;
}

int vc_cu_pinseg_fits(uint64_t seg_len, uint64_t len)
{
	return fits(seg_size((seg_len + 4095) & ~4095ull), (len + 4095) & ~4095ull);
}

int vc_cu_pinseg_parked_fits(uint64_t len)
{
	int found = 0;

	len = (len + 4095) & ~4095ull;
	pthread_mutex_lock(&g_seg.mu);
	for (size_t i = 0; i < g_seg.n && !found; i++)
		found = g_seg.v[i].parked && fits(g_seg.v[i].size, len);
	pthread_mutex_unlock(&g_seg.mu);
	return found;
}

int vc_cu_pinseg_park_new(uint64_t len)
{
	uint64_t keep;
	struct seg s;
	CUresult rc;
	size_t i;
	int bound, closed, e;

	len = (len + 4095) & ~4095ull;
	if (!vc_cu_state() || __atomic_load_n(&g_seg.unsupported, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	keep = keep_bytes(); /* not under g_seg.mu: it takes pinspare.c's lock */
	pthread_mutex_lock(&g_seg.mu);
	e = g_seg.parked_bytes + seg_size(len) > keep ? -ENOSPC : 0; /* it would push another out */
	pthread_mutex_unlock(&g_seg.mu);
	if (e)
		return e;
	/* Its pages made, offered (the server maps them ahead), not
	 * registered, then closed here as a parked segment's are. */
	if ((rc = make(len, NULL, &s, &bound, true)))
		return rc == CUDA_ERROR_NOT_SUPPORTED ? -EOPNOTSUPP : -ENOMEM;
	closed = !mprotect(s.addr, s.size, PROT_NONE);
	pthread_mutex_lock(&g_seg.mu);
	if ((i = index_of(s.off)) < g_seg.n) {
		if (closed) {
			g_seg.v[i].parked = ++g_seg.clock;
			g_seg.parked_bytes += s.size;
		} else {
			take_out(i, &s);
		}
	}
	pthread_mutex_unlock(&g_seg.mu);
	if (!closed) {
		drop(&s);
		return -ENOMEM;
	}
	return 0;
}

void vc_cu_pinseg_put(uint64_t off)
{
	uint64_t keep = keep_bytes();
	struct seg s;
	size_t i;

	pthread_mutex_lock(&g_seg.mu);
	i = index_of(off);
	if (i == g_seg.n || g_seg.v[i].parked) {
		pthread_mutex_unlock(&g_seg.mu);
		return;
	}
	s = g_seg.v[i];
	if (s.size > keep)
		take_out(i, &s);
	pthread_mutex_unlock(&g_seg.mu);
	if (s.size > keep) {
		drop(&s);
		return;
	}
	/* Unregistered (neither locked nor charged while parked); where the
	 * server cannot, or the pages cannot be closed here, it goes. */
	if (host_unregister(off) != CUDA_SUCCESS || mprotect(s.addr, s.size, PROT_NONE)) {
		pthread_mutex_lock(&g_seg.mu);
		if ((i = index_of(off)) < g_seg.n)
			take_out(i, &s);
		pthread_mutex_unlock(&g_seg.mu);
		drop(&s);
		return;
	}
	pthread_mutex_lock(&g_seg.mu);
	if ((i = index_of(off)) < g_seg.n) {
		g_seg.v[i].parked = ++g_seg.clock;
		g_seg.parked_bytes += s.size;
	}
	/* Past the bound, the oldest go (this one is within it alone). */
	while (g_seg.parked_bytes > keep) {
		size_t old = SIZE_MAX;

		for (i = 0; i < g_seg.n; i++)
			if (g_seg.v[i].parked && (old == SIZE_MAX || g_seg.v[i].parked < g_seg.v[old].parked))
				old = i;
		take_out(old, &s);
		pthread_mutex_unlock(&g_seg.mu);
		drop(&s);
		pthread_mutex_lock(&g_seg.mu);
	}
	pthread_mutex_unlock(&g_seg.mu);
}

int vc_cu_pinseg_trim(void)
{
	int n = 0;

	for (;;) {
		struct seg s;
		size_t i;
		int found;

		pthread_mutex_lock(&g_seg.mu);
		for (i = 0; i < g_seg.n && !g_seg.v[i].parked; i++)
			;
		found = i < g_seg.n;
		if (found)
			take_out(i, &s);
		pthread_mutex_unlock(&g_seg.mu);
		if (!found)
			return n;
		drop(&s);
		n++;
	}
}

/* The segment in use holding pinned offsets [@off, @off + @n): a copy in *@s. */
static int find(uint64_t off, uint64_t n, struct seg *s)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&g_seg.mu);
	for (size_t i = 0; i < g_seg.n; i++) {
		const struct seg *e = &g_seg.v[i];

		if (!e->parked && off >= e->off && off - e->off < e->size && n <= e->size - (off - e->off)) {
			*s = *e;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&g_seg.mu);
	return rc;
}

void *vc_cu_pinseg_addr(uint64_t off, uint64_t n)
{
	struct seg s;

	return find(off, n ? n : 1, &s) ? NULL : s.addr + (off - s.off);
}

int vc_cu_pinseg_alias(uint64_t off, void *addr, uint64_t len)
{
	uint64_t at, done = 0;
	struct seg s;

	if (find(off, len, &s) || ((uintptr_t)addr | len) & 4095)
		return -EINVAL;
	/* A second mapping of the same shared pages (old size 0), a file at a
	 * time: a mapping moves only within one (mremap). */
	for (at = off - s.off; done < len;) {
		uint64_t in_file = s.part - at % s.part, n = len - done < in_file ? len - done : in_file;

		if (mremap(s.addr + at, 0, n, MREMAP_MAYMOVE | MREMAP_FIXED, (uint8_t *)addr + done) == MAP_FAILED)
			return -errno;
		at += n;
		done += n;
	}
	return 0;
}
