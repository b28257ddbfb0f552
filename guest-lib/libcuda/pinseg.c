/* SPDX-License-Identifier: MIT */
/*
 * pinseg.c - page-locked memory beyond the pinned pool: segments.
 *
 * An allocation the pool has no room for (cuMemHostAlloc, cudaMallocHost,
 * pin_memory of gigabytes; cuMemHostRegister of a large range, whose pages
 * move as into the pool) gets memfds of its own, one per slice of
 * vc_fill_plan() (their pages are made on a thread each: on one file the
 * threads would queue on its locks): mapped here end to end at a 2 MiB
 * aligned address, passed to the server on the session's socket
 * (SCM_RIGHTS), which maps them at the same address and registers the whole
 * with its driver like pool memory. Copies from and to it are DMA, and its pointer is
 * its own device address. The server names it by an offset among the pinned
 * offsets (above VC_CU_PINSEG_OFF0), so that the copy paths, which name
 * pinned memory by offset, take it unchanged.
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
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vc_client.h"
#include "vc_cu_guest.h"
#include "vc_fill.h"

#define SEG_ALIGN (2ull << 20)
#define MAP_TRIES 4

struct seg {
	uint64_t off, size;
	uint64_t part; /* bytes of each file but the last (mappings split there) */
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
	pthread_mutex_t mu;
	/* One segment's descriptors in flight at a time: the server keeps a
	 * bounded number waiting (VC_FDBOX_MAX), and two threads' 16 files
	 * each passed before either command was taken would not fit. */
	pthread_mutex_t offer_mu;
} g_seg = {.mu = PTHREAD_MUTEX_INITIALIZER, .offer_mu = PTHREAD_MUTEX_INITIALIZER};

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

/* The files of a @size-byte segment, sized and sealed. 0 or -errno. */
static int files_make(struct files *f, uint64_t size)
{
	unsigned n;
	uint64_t per = vc_fill_plan(size, &n);

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
 * the kernel gives them to shmem), or NULL. */
static uint8_t *map_aligned(const struct files *f, uint64_t size)
{
	uint8_t *r = mmap(NULL, size + SEG_ALIGN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *a;

	if (r == MAP_FAILED)
		return NULL;
	a = (uint8_t *)(((uintptr_t)r + SEG_ALIGN - 1) & ~(uintptr_t)(SEG_ALIGN - 1));
	for (unsigned i = 0; i < f->n; i++) {
		if (mmap(a + (uint64_t)i * f->part, file_len(f, i, size), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, f->fd[i], 0) == MAP_FAILED) {
			munmap(r, size + SEG_ALIGN);
			return NULL;
		}
	}
	if (a > r)
		munmap(r, (size_t)(a - r));
	if (r + size + SEG_ALIGN > a + size)
		munmap(a + size, (size_t)(r + SEG_ALIGN - a));
	madvise(a, size, MADV_HUGEPAGE);
	return a;
}

/* Offer the segment of files @f, mapped at @a, to the server: its offset
 * in *@off. Each descriptor goes under a token of its own, in order. */
static CUresult offer(const struct files *f, uint8_t *a, uint64_t size, uint64_t *off)
{
	struct vc_cu_state *st = vc_cu_state();
	struct vc_cu_req_pinseg rq = {.op = VC_CU_PINSEG_MAP, .guest_addr = (uint64_t)(uintptr_t)a, .size = size,
				      .files = f->n, .part = f->n > 1 ? f->part : 0};
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

static int remember(uint8_t *a, uint64_t size, uint64_t part, uint64_t off)
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
		g_seg.v[g_seg.n++] = (struct seg){.off = off, .size = size, .part = part, .addr = a};
	else
		rc = -ENOMEM;
	pthread_mutex_unlock(&g_seg.mu);
	return rc;
}

static void unmap_on_host(uint64_t off)
{
	struct vc_cu_req_pinseg rq = {.op = VC_CU_PINSEG_UNMAP, .off = off};
	struct vc_cu_prefix none;

	vc_cu_call(VC_CU_vcPinnedSegment, &rq, sizeof(rq), NULL, 0, &none, 0, NULL, 0, 0);
}

/*
 * How the pages of a registered range reach the segment. Mapped and copied
 * on several threads (vc_fill.h), each populating its slice first: on the
 * GPU machine the single-threaded write below was most of cudaHostRegister's
 * time for a gigabyte. Under AddressSanitizer the kernel copies (the
 * write): the range is whole pages, and bytes around the program's object in
 * them are read by no code of ours (the concern of memory.c's copy_pages()).
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

/* The files filled from @src by the kernel, each with its share. */
static int fill_from(const struct files *f, const void *src, uint64_t size)
{
	for (unsigned i = 0; i < f->n; i++) {
		const uint8_t *from = (const uint8_t *)src + (uint64_t)i * f->part;
		uint64_t len = file_len(f, i, size);

		for (uint64_t done = 0; done < len;) {
			ssize_t w = pwrite(f->fd[i], from + done, len - done, (off_t)done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			done += (uint64_t)w;
		}
	}
	return 0;
}

CUresult vc_cu_pinseg_alloc(uint64_t size, const void *src, void **p, uint64_t *off)
{
	uint8_t *taken[MAP_TRIES], *a = NULL;
	CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
	struct files f;
	int n = 0, filled = 0, e;

	size = (size + 4095) & ~4095ull;
	if (!vc_cu_state() || __atomic_load_n(&g_seg.unsupported, __ATOMIC_RELAXED))
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((e = files_make(&f, size)))
		return e == -ENOSYS ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_OUT_OF_MEMORY;
	if (src && FILL_BY_WRITE && fill_from(&f, src, size))
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
			if (vc_fill_copy(a, src, size)) {
				rc = CUDA_ERROR_OUT_OF_MEMORY;
				break;
			}
			filled = 1;
		}
		rc = offer(&f, a, size, off);
		if (rc != CUDA_ERROR_ALREADY_MAPPED)
			break;
		taken[n++] = a; /* held, so that the next mapping lands elsewhere */
		a = NULL;
	}
	if (rc == CUDA_ERROR_ALREADY_MAPPED)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS && remember(a, size, f.part, *off)) {
		unmap_on_host(*off);
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	}
	/* Mapped here too, as cudaMallocHost's pages are when it returns (the
	 * server's driver made them when it locked them). */
	if (rc == CUDA_SUCCESS && !src)
		vc_fill_populate(a, size);
	if (rc == CUDA_ERROR_NOT_SUPPORTED)
		__atomic_store_n(&g_seg.unsupported, 1, __ATOMIC_RELAXED);
	if (rc != CUDA_SUCCESS && a)
		munmap(a, size);
	while (n)
		munmap(taken[--n], size);
out:
	files_close(&f);
	if (rc == CUDA_SUCCESS)
		*p = a;
	return rc;
}

/* The segment holding pinned offsets [@off, @off + @n): a copy in *@s. */
static int find(uint64_t off, uint64_t n, struct seg *s)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&g_seg.mu);
	for (size_t i = 0; i < g_seg.n; i++) {
		const struct seg *e = &g_seg.v[i];

		if (off >= e->off && off - e->off < e->size && n <= e->size - (off - e->off)) {
			*s = *e;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&g_seg.mu);
	return rc;
}

void vc_cu_pinseg_free(uint64_t off)
{
	struct seg s = {0};
	size_t i;

	pthread_mutex_lock(&g_seg.mu);
	for (i = 0; i < g_seg.n && g_seg.v[i].off != off; i++)
		;
	if (i < g_seg.n) {
		s = g_seg.v[i];
		g_seg.v[i] = g_seg.v[--g_seg.n];
	}
	pthread_mutex_unlock(&g_seg.mu);
	if (!s.addr)
		return;
	unmap_on_host(off);
	/* Ours is the last mapping: unmapping it frees the pages, for a
	 * gigabyte most of what cudaFreeHost cost. A thread of ours does it
	 * while the program goes on (aside.c). */
	vc_cu_aside_drop(s.addr, s.size);
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
