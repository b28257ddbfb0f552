/* SPDX-License-Identifier: MIT */
/*
 * pinseg.c - page-locked memory beyond the pinned pool: segments.
 *
 * A host-local guest whose page-locked allocation does not fit the pool
 * makes a memfd of its own, maps it, and passes it on its socket (the
 * session's take_fd service). The worker maps it at the guest's very address
 * (MAP_FIXED_NOREPLACE, as the pool), so that a pinned pointer means the same
 * on both sides and, registered with the driver (vcHostRegister, pinned.c),
 * is its own device address; copies from and to it are DMA. A segment is
 * named by an offset of the pinned offsets above VC_CU_PINSEG_OFF0, handed
 * out by the host and never reused in the session, so every path that takes
 * pool offsets (copies, 3D copies, graph nodes, registrations) takes
 * segments unchanged.
 *
 * A segment may be several memfds laid end to end (vc_cu_req_pinseg's
 * @files), whose pages the guest and we make on a thread per file.
 *
 * In a VM a segment is the guest process's own pages, pinned in place by its
 * kernel (MAP_GUEST; shared/vc_gpin.h): the session's guest_pin service turns
 * the pin into pieces of the guest's RAM files, mapped end to end at the
 * process's address. The pin is let go (guest_unpin) when the segment goes,
 * or at once when a MAP naming it fails, whatever failed (unless a mapping of
 * it lives), so that the guest's kernel can unpin the pages.
 *
 * Nothing of the guest's is trusted: each descriptor must be a sealable shmem
 * file (a memfd; anything else cannot take F_SEAL_SHRINK, and we seal it so
 * that it can never shrink under our mapping: SIGBUS), at least as large as
 * the claimed size once sealed; the range must not wrap or overlap the pool's
 * or another segment's, and the kernel refuses to map over anything of ours.
 * A MAP may ask for its pages to be entered into our page tables ahead
 * (VC_CU_PINSEG_PREFAULT: a segment the guest makes before any use, its
 * pages made). For a gigabyte that takes 20-35 ms, which a registration
 * finding the pages unmapped would otherwise spend first (pinned.c); a
 * thread of its own does it (one per session at a time), so that the
 * serving thread answers the MAP and goes on. It is waited for before the
 * segment is registered or unmapped.
 *
 * The segments of a session are bounded together (svc->pinned.seg_max, the
 * server's --pinned-max); past it MAP answers CUDA_ERROR_OUT_OF_MEMORY, as the
 * driver does when it cannot lock more. Registrations are charged to the
 * pinned quota like the pool's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resources/acct.h"
#include "cuda/exec_priv.h"
#include "vc_fill.h"

#define SEG_ALIGN (2ull << 20)    /* offsets advance in 2 MiB steps, a gap between segments */
#define SEG_MAX_COUNT 65536u      /* segments of one session at once */
#define SEG_OFF_END (1ull << 62)  /* offsets are never reused; past this the session has no more */

struct vc_cu_pseg {
	uint64_t off, size;
	uint8_t *addr; /* ours, equal to the guest's */
	uint32_t entry; /* a guest's pin (gen not 0): its entry and generation */
	uint64_t gen;
	bool mapped;    /* its pages entered into our page tables by a prefault */
};

struct vc_cu_psegs {
	struct vc_cu_pseg *v;
	uint32_t n, cap;
	uint64_t next_off; /* the next segment's offset */
	uint64_t total;    /* bytes mapped */
	/* The prefault running, if any (pf_busy): the segment at pf_off,
	 * [pf_addr, pf_addr + pf_size); its result in pf_rc once joined. */
	pthread_t pf_thread;
	bool pf_busy;
	uint64_t pf_off, pf_size;
	uint8_t *pf_addr;
	int pf_rc;
};

static struct vc_cu_pseg *by_off(struct vc_cu_session *x, uint64_t off, uint64_t len)
{
	struct vc_cu_psegs *g = x->psegs;

	for (uint32_t i = 0; g && i < g->n; i++) {
		struct vc_cu_pseg *s = &g->v[i];

		if (off >= s->off && off - s->off < s->size && len <= s->size - (off - s->off))
			return s;
	}
	return NULL;
}

void *vc_cu_pinseg_ptr(struct vc_cu_session *x, uint64_t off, uint64_t len)
{
	struct vc_cu_pseg *s = by_off(x, off, len ? len : 1);

	return s ? s->addr + (off - s->off) : NULL;
}

int vc_cu_pinseg_find(struct vc_cu_session *x, uint64_t addr, uint64_t len, uint64_t *off)
{
	struct vc_cu_psegs *g = x->psegs;

	for (uint32_t i = 0; g && i < g->n; i++) {
		uint64_t a = (uint64_t)(uintptr_t)g->v[i].addr;

		if (addr >= a && addr - a < g->v[i].size && len <= g->v[i].size - (addr - a)) {
			*off = g->v[i].off + (addr - a);
			return 0;
		}
	}
	return -ENOENT;
}

/* Whether [@a, @a + @n) meets the pool's guest range or a segment. */
static bool overlaps(struct vc_cu_session *x, uint64_t a, uint64_t n)
{
	struct vc_cu_psegs *g = x->psegs;
	uint64_t p = (uint64_t)(uintptr_t)x->pinned;

	if (x->pinned && x->pinned_identity && a < p + x->pinned_size && p < a + n)
		return true;
	for (uint32_t i = 0; g && i < g->n; i++) {
		uint64_t s = (uint64_t)(uintptr_t)g->v[i].addr;

		if (a < s + g->v[i].size && s < a + n)
			return true;
	}
	return false;
}

/* The guest's descriptor, fit to map @size bytes of: a shmem file we could
 * seal against shrinking, that large once sealed. 0 or a CUresult. */
static int check_fd(int fd, uint64_t size)
{
	struct stat st;
	int seals;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return CUDA_ERROR_INVALID_VALUE;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0) /* not a memfd (no seals on other files) */
		return CUDA_ERROR_INVALID_VALUE;
	if (!(seals & F_SEAL_SHRINK) && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		return CUDA_ERROR_INVALID_VALUE; /* sealed against new seals, or not sealable */
	if (fstat(fd, &st) < 0 || st.st_size < 0 || (uint64_t)st.st_size < size)
		return CUDA_ERROR_INVALID_VALUE;
	return 0;
}

/* File @i's share of a MAP of @files files: each but the last @rq->part
 * bytes, the last the rest. */
static uint64_t file_len(const struct vc_cu_req_pinseg *rq, uint32_t files, uint32_t i)
{
	return i < files - 1 ? rq->part : rq->size - (uint64_t)(files - 1) * rq->part;
}

/* The descriptors of a MAP, passed under @rq->token and the tokens after it,
 * each checked against its file's share of the segment, into @fd[]. 0 or a
 * CUresult (what was taken is closed by the caller). */
static int take_files(struct vc_cu_session *x, const struct vc_cu_req_pinseg *rq, uint32_t files, int *fd)
{
	for (uint32_t i = 0; i < files; i++) {
		int rc;

		fd[i] = x->svc->take_fd ? x->svc->take_fd(x->svc->arg, rq->token + i) : -EOPNOTSUPP;
		if (fd[i] < 0)
			return fd[i] == -EOPNOTSUPP ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
		if ((rc = check_fd(fd[i], file_len(rq, files, i))))
			return rc;
	}
	return 0;
}

/* Pieces of files mapped end to end at @addr (@size bytes in all): the
 * whole range is claimed first (the kernel refuses a range where anything of
 * ours lies), then each piece mapped into its place. The mapping, or
 * MAP_FAILED with errno set. */
static void *map_pieces(uint64_t addr, uint64_t size, const struct vc_guest_piece *v, uint32_t n)
{
	void *m = mmap((void *)(uintptr_t)addr, size, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	uint64_t at = 0;

	if (m == MAP_FAILED)
		return m;
	if ((uintptr_t)m != addr) { /* an old kernel took the address as a hint */
		munmap(m, size);
		errno = EEXIST;
		return MAP_FAILED;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (mmap((uint8_t *)m + at, v[i].len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, v[i].fd,
			 (off_t)v[i].off) == MAP_FAILED) {
			int e = errno;

			munmap(m, size);
			errno = e;
			return MAP_FAILED;
		}
		at += v[i].len;
	}
	return m;
}

/* The files of a MAP mapped end to end at @addr (map_pieces()). */
static void *map_files(uint64_t addr, const struct vc_cu_req_pinseg *rq, uint32_t files, const int *fd)
{
	struct vc_guest_piece v[VC_CU_PINSEG_FILES_MAX];

	for (uint32_t i = 0; i < files; i++)
		v[i] = (struct vc_guest_piece){.fd = fd[i], .off = 0, .len = file_len(rq, files, i)};
	return map_pieces(addr, rq->size, v, files);
}

/* Room for a segment of @size bytes at @addr: within the session's bound,
 * clear of the pool and of the other segments, with a place in the list;
 * the offsets it takes in *@step. 0 or a CUresult. */
static int seg_room(struct vc_cu_session *x, uint64_t addr, uint64_t size, uint64_t *step)
{
	struct vc_cu_psegs *g;

	if (!x->psegs && !(x->psegs = calloc(1, sizeof(*x->psegs))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	g = x->psegs;
	if (!g->next_off)
		g->next_off = VC_CU_PINSEG_OFF0;
	*step = (size + 2 * SEG_ALIGN - 1) & ~(SEG_ALIGN - 1); /* its size and a gap */
	if (size > x->svc->pinned.seg_max || g->total > x->svc->pinned.seg_max - size || g->n == SEG_MAX_COUNT ||
	    *step > SEG_OFF_END - g->next_off)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (overlaps(x, addr, size))
		return CUDA_ERROR_INVALID_VALUE;
	if (g->n == g->cap) {
		uint32_t cap = g->cap ? g->cap * 2 : 16;
		struct vc_cu_pseg *v = realloc(g->v, cap * sizeof(*v));

		if (!v)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->v = v;
		g->cap = cap;
	}
	return 0;
}

static void *prefault_run(void *arg)
{
	struct vc_cu_psegs *g = arg;

	g->pf_rc = vc_fill_map(g->pf_addr, g->pf_size); /* read by the joiner */
	return NULL;
}

/* The prefault ended, joined (waited for with @wait, else only if it has
 * ended): its segment marked mapped if it went well. Whether none runs. */
static bool prefault_reap(struct vc_cu_psegs *g, bool wait)
{
	if (!g->pf_busy)
		return true;
	if (wait ? pthread_join(g->pf_thread, NULL) : pthread_tryjoin_np(g->pf_thread, NULL))
		return false;
	g->pf_busy = false;
	for (uint32_t i = 0; i < g->n; i++)
		if (g->v[i].off == g->pf_off)
			g->v[i].mapped = g->pf_rc == 0;
	return true;
}

/* The pages of segment @s (in the list) entered into our page tables on a
 * thread of its own; skipped for a small one (a registration walks those
 * itself), while another runs, or without a thread. */
static void prefault_start(struct vc_cu_psegs *g, const struct vc_cu_pseg *s)
{
	if (s->size < VC_FILL_PARALLEL_MIN || !prefault_reap(g, false))
		return;
	g->pf_off = s->off;
	g->pf_addr = s->addr;
	g->pf_size = s->size;
	g->pf_rc = -1;
	g->pf_busy = pthread_create(&g->pf_thread, NULL, prefault_run, g) == 0;
}

bool vc_cu_pinseg_mapped(struct vc_cu_session *x, uint64_t off, uint64_t len)
{
	struct vc_cu_pseg *s = by_off(x, off, len);

	if (!s)
		return false;
	if (x->psegs->pf_busy && x->psegs->pf_off == s->off)
		prefault_reap(x->psegs, true);
	return s->mapped;
}

/* Segment @e (its address and size), mapped, into the list (seg_room() made
 * room) at the next offset, which is the reply. */
static void seg_add(struct vc_cu_session *x, struct vc_cu_pseg e, uint64_t step, struct vc_cu_out *out)
{
	struct vc_cu_psegs *g = x->psegs;
	struct vc_cu_rep_pinseg rp = {.off = g->next_off};

	/* Huge pages where the host's shmem allows them (shmem_enabled=advise):
	 * fewer pages for the driver to lock. */
	madvise(e.addr, e.size, MADV_HUGEPAGE);
	e.off = g->next_off;
	g->v[g->n++] = e;
	g->next_off += step;
	g->total += e.size;
	REPLY(rp);
}

/* What a failed mmap of a segment answers. */
static int map_error(int e)
{
	return e == EEXIST ? CUDA_ERROR_ALREADY_MAPPED : e == ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
}

/* The request's shape, whatever kind of MAP: nothing is taken from the
 * socket or the guest for a request no correct library sends. */
static bool map_shape_ok(const struct vc_cu_req_pinseg *rq)
{
	return rq->size && !(rq->size % 4096) && rq->guest_addr && !(rq->guest_addr % 4096) &&
	       rq->size <= UINT64_MAX - rq->guest_addr && rq->size <= SEG_OFF_END;
}

static int seg_map(struct vc_cu_session *x, const struct vc_cu_req_pinseg *rq, struct vc_cu_out *out)
{
	uint32_t files = rq->files ? rq->files : 1;
	int fd[VC_CU_PINSEG_FILES_MAX];
	uint64_t step;
	void *m;
	int rc;

	/* Several files: each but the last @part bytes, the last at least a
	 * page. */
	if (!map_shape_ok(rq) || files > VC_CU_PINSEG_FILES_MAX || rq->token > UINT64_MAX - files ||
	    (rq->flags & ~VC_CU_PINSEG_PREFAULT))
		return CUDA_ERROR_INVALID_VALUE;
	if (files > 1 && (!rq->part || rq->part % 4096 || rq->part > (rq->size - 4096) / (files - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < files; i++)
		fd[i] = -1;
	if ((rc = take_files(x, rq, files, fd)) || (rc = seg_room(x, rq->guest_addr, rq->size, &step)))
		goto out;
	m = map_files(rq->guest_addr, rq, files, fd);
	if (m == MAP_FAILED) {
		rc = map_error(errno);
		goto out;
	}
	seg_add(x, (struct vc_cu_pseg){.size = rq->size, .addr = m}, step, out);
	if (rq->flags & VC_CU_PINSEG_PREFAULT)
		prefault_start(x->psegs, &x->psegs->v[x->psegs->n - 1]);
	rc = 0;
out:
	for (uint32_t i = 0; i < files; i++) /* the mappings keep the files */
		if (fd[i] >= 0)
			close(fd[i]);
	return rc;
}

/* A guest's pin as a segment (MAP_GUEST). Every failure lets the pin go. */
static int seg_map_guest(struct vc_cu_session *x, const struct vc_cu_req_pinseg *rq, struct vc_cu_out *out)
{
	struct vc_guest_piece *v = NULL;
	uint64_t step;
	uint32_t n = 0;
	void *m = MAP_FAILED;
	int rc;

	if (!x->svc->guest_pin)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!map_shape_ok(rq) || !rq->gen) {
		/* Never taken: let go, unless a mapping of it lives. */
		x->svc->guest_unpin(x->svc->arg, rq->entry, rq->gen, false);
		return CUDA_ERROR_INVALID_VALUE;
	}
	rc = x->svc->guest_pin(x->svc->arg, rq->entry, rq->gen, rq->guest_addr, rq->size, &v, &n);
	if (rc) {
		x->svc->guest_unpin(x->svc->arg, rq->entry, rq->gen, false);
		return rc == -EOPNOTSUPP ? CUDA_ERROR_NOT_SUPPORTED
		       : rc == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	}
	if ((rc = seg_room(x, rq->guest_addr, rq->size, &step)) == 0) {
		m = map_pieces(rq->guest_addr, rq->size, v, n);
		if (m == MAP_FAILED)
			rc = map_error(errno);
	}
	free(v);
	if (rc) {
		/* Taken by this MAP, and nothing of it is mapped. */
		x->svc->guest_unpin(x->svc->arg, rq->entry, rq->gen, true);
		return rc;
	}
	seg_add(x, (struct vc_cu_pseg){.size = rq->size, .addr = m, .entry = rq->entry, .gen = rq->gen}, step, out);
	return 0;
}

/* Drop the registrations inside [@off, @off + @size) (the guest unregisters
 * first; these are a buggy or hostile guest's). */
static void drop_regs(struct vc_cu_session *x, uint64_t ctx, uint64_t off, uint64_t size)
{
	bool entered = false;

	for (uint32_t i = 0; i < x->npregs;) {
		struct vc_cu_preg *r = &x->pregs[i];

		if (r->off < off || r->off - off >= size) {
			i++;
			continue;
		}
		if (!entered) {
			vc_cu_enter(x, ctx);
			entered = true;
		}
		/* Whatever it answers (its context may be gone, and the
		 * registration with it), the range is ours no more. */
		x->drv->cuMemHostUnregister(vc_cu_pinseg_ptr(x, r->off, 1));
		vc_acct_uncharge(VC_ACCT_PINNED, r->size);
		*r = x->pregs[--x->npregs];
	}
}

static int seg_unmap(struct vc_cu_session *x, const struct vc_cu_req_pinseg *rq)
{
	struct vc_cu_psegs *g = x->psegs;
	uint32_t i;

	for (i = 0; g && i < g->n && g->v[i].off != rq->off; i++)
		;
	if (!g || i == g->n)
		return CUDA_ERROR_INVALID_VALUE; /* no segment starts there */
	if (g->pf_busy && g->pf_off == rq->off)
		prefault_reap(g, true); /* no page of it touched once unmapped */
	drop_regs(x, rq->ctx, g->v[i].off, g->v[i].size);
	munmap(g->v[i].addr, g->v[i].size);
	if (g->v[i].gen) /* no mapping or registration of the guest's pages is left */
		x->svc->guest_unpin(x->svc->arg, g->v[i].entry, g->v[i].gen, true);
	g->total -= g->v[i].size;
	g->v[i] = g->v[--g->n];
	return 0;
}

int vc_cu_manual_vcPinnedSegment(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_pinseg rq;

	TAKE(rq);
	if (rq.op == VC_CU_PINSEG_MAP)
		return seg_map(x, &rq, out);
	if (rq.op == VC_CU_PINSEG_UNMAP)
		return seg_unmap(x, &rq);
	if (rq.op == VC_CU_PINSEG_MAP_GUEST)
		return seg_map_guest(x, &rq, out);
	return -VC_FATAL_PAYLOAD;
}

void vc_cu_pinseg_fini(struct vc_cu_session *x)
{
	struct vc_cu_psegs *g = x->psegs;

	if (g)
		prefault_reap(g, true);
	for (uint32_t i = 0; g && i < g->n; i++) {
		munmap(g->v[i].addr, g->v[i].size);
		if (g->v[i].gen)
			x->svc->guest_unpin(x->svc->arg, g->v[i].entry, g->v[i].gen, true);
	}
	if (g)
		free(g->v);
	free(g);
	x->psegs = NULL;
}
