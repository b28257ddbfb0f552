/* SPDX-License-Identifier: MIT */
/*
 * managed_fault.c - the guest's view of managed memory, kept coherent with
 * the device by protection faults.
 *
 * The host driver owns each managed range; the guest maps the same address
 * range here, backed by a memfd of its own, twice: the program's view at the
 * device address (no access until touched) and the library's own view
 * elsewhere (always read-write), so that the library fills and reads pages
 * without ever touching the program's view. A SIGSEGV handler (installed at
 * the first managed range, chaining to the previous handler for any other
 * address) fetches the touched granule (64 KiB, up to 2 MiB on sequential
 * access) from the device through an ordinary device-to-host copy, then
 * opens it read-only on a read fault, read-write (dirty) on a write fault.
 * Before work that lets the device run is submitted, vc_cu_managed_flush()
 * writes every dirty granule back and closes every granule again, since a
 * kernel may write them: the CPU must not touch managed memory while the GPU
 * runs (concurrentManagedAccess = 0, as on systems without concurrent
 * access). The faulting thread is in the program's code, never in this
 * library (which never touches the program's view), so the handler may take
 * the library's locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "managed.h"
#include "vc_client.h"
#include "vc_cu_guest.h"

#define PAGE 4096ull
#define GRAN (64ull << 10)
#define RUN_MAX 32u    /* granules fetched at once on sequential access: 2 MiB */
#define RANGES_MAX 65536u

enum { ABSENT = 0, CLEAN = 1, DIRTY = 2 };

struct mrange {
	struct vc_mgd_info info;
	uint64_t span;   /* bytes mapped: size rounded up to whole pages */
	int fd;
	uint8_t *alias;  /* the library's view */
	uint8_t *state;  /* per granule */
	uint64_t ngran;
	uint64_t next;   /* the granule after the last fetch (sequential access) */
	unsigned run;    /* granules of the last fetch */
	struct vc_cu_managed_piece *pc; /* a module's variables in the range, by */
	uint32_t npc;                   /* address (0: the range is one allocation) */
};

/* The program's managed ranges, sorted by base. Under g_mu; the two counters
 * are written under it and read without it (one relaxed load on every call
 * that submits work: vc_cu_managed_before()). */
static struct mrange **g_r;
static size_t g_n, g_cap;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
unsigned long vc_cu_mgd_resident; /* granules open to the CPU */
unsigned long vc_cu_mgd_ranges;   /* ranges mapped */

static uint64_t g_last_ctx; /* the last context a managed operation ran in */
static struct sigaction g_prev;
static pthread_once_t g_sig_once = PTHREAD_ONCE_INIT;

/* With g_mu held: the range holding [@p, @p + @n), or NULL. */
static struct mrange *lookup(uint64_t p, uint64_t n)
{
	size_t lo = 0, hi = g_n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g_r[mid]->info.base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	struct mrange *r = g_r[lo - 1];

	return p - r->info.base < r->span && n <= r->span - (p - r->info.base) ? r : NULL;
}

/* ---- copies between the library's view and the device ------------------------ */

/* The context @r's copies run in: its own, else (a library's managed
 * variable, looked up before the runtime had a context) the calling
 * thread's, else the last one seen. */
static uint64_t ctx_of(struct mrange *r)
{
	uint64_t c = vc_cu_current();

	if (c)
		__atomic_store_n(&g_last_ctx, c, __ATOMIC_RELAXED);
	if (!r->info.ctx)
		r->info.ctx = c ? c : __atomic_load_n(&g_last_ctx, __ATOMIC_RELAXED);
	return r->info.ctx;
}

struct xfer {
	uint32_t dir;
	uint64_t dev, ctx;
};

static int emit(struct vc_client *c, void *arg, uint64_t off, uint64_t n, uint64_t aoff, uint64_t *seq)
{
	const struct xfer *x = arg;
	struct vc_cu_req_memcpy rq;

	memset(&rq, 0, sizeof(rq));
	rq.ctx = x->ctx; /* the range's context: the faulting thread may have none */
	rq.dir = x->dir;
	rq.len = n;
	rq.host = VC_CU_HOST_ARENA;
	rq.arena_off = aoff;
	if (x->dir == VC_CU_COPY_HTOD)
		rq.dst = x->dev + off;
	else
		rq.src = x->dev + off;
	return vc_client_submit(c, VC_CU_vcMemcpy, &rq, sizeof(rq), NULL, 0, 0, seq);
}

/*
 * Bytes [@off, @off + @len) of @r between the device and the library's view,
 * in direction @dir, piece by piece: the mapping is whole pages, an
 * allocation need not be (a 4-byte __managed__ variable), and the host
 * refuses a copy past its end or from one of a module's variables into the
 * next. What lies between pieces stays zero.
 */
static int move(struct mrange *r, uint64_t off, uint64_t len, uint32_t dir)
{
	struct vc_cu_state *st = vc_cu_state();
	struct vc_cu_managed_piece whole = {.base = r->info.base, .size = r->info.size};
	const struct vc_cu_managed_piece *pc = r->npc ? r->pc : &whole;
	uint64_t from = r->info.base + off, to = from + len;
	int rc;

	if (!st)
		return -ENODEV;
	for (uint32_t i = 0; i < (r->npc ? r->npc : 1); i++) {
		uint64_t lo = pc[i].base > from ? pc[i].base : from;
		uint64_t hi = pc[i].base + pc[i].size < to ? pc[i].base + pc[i].size : to;
		struct xfer x = {.dir = dir, .dev = lo, .ctx = ctx_of(r)};

		if (lo >= hi)
			continue;
		if (dir == VC_CU_COPY_DTOH)
			rc = vc_client_get(st->client, r->alias + (lo - r->info.base), hi - lo, emit, &x);
		else
			rc = vc_client_put(st->client, r->alias + (lo - r->info.base), hi - lo, emit, &x,
					   VC_CLIENT_PUT_DMA); /* a blocking copy: DMA from the arena */
		if (rc)
			return rc;
	}
	return 0;
}

/* Granules [@g, @g + @count) of @r from the device into the library's view. */
static int fetch(struct mrange *r, uint64_t g, uint64_t count)
{
	return move(r, g * GRAN, count * GRAN, VC_CU_COPY_DTOH);
}

/* Granules [@g, @g + @count) of @r from the library's view to the device. */
static int write_back(struct mrange *r, uint64_t g, uint64_t count)
{
	return move(r, g * GRAN, count * GRAN, VC_CU_COPY_HTOD);
}

/* The program's view of granules [@g, @g + @count) of @r with protection @prot. */
static void protect(struct mrange *r, uint64_t g, uint64_t count, int prot)
{
	uint64_t off = g * GRAN, len = count * GRAN;

	if (off + len > r->span)
		len = r->span - off;
	mprotect((void *)(uintptr_t)(r->info.base + off), len, prot);
}

/* ---- the fault handler ------------------------------------------------------- */

/* Open the granule holding @a to the CPU. 0, or -1 when @a is not managed
 * memory of ours or its data cannot be had (then the program faults as it
 * would have natively). */
static int resolve(uint64_t a, int write)
{
	struct mrange *r;
	uint64_t g, count;
	int rc = -1;

	pthread_mutex_lock(&g_mu);
	r = lookup(a, 1);
	if (!r)
		goto out;
	g = (a - r->info.base) / GRAN;
	if (r->state[g] == ABSENT) {
		/* Sequential access fetches more at once: twice the last run. */
		r->run = g == r->next && r->run ? (r->run * 2 > RUN_MAX ? RUN_MAX : r->run * 2) : 1;
		for (count = 1; count < r->run && g + count < r->ngran && r->state[g + count] == ABSENT; count++)
			;
		if (fetch(r, g, count))
			goto out;
		protect(r, g, count, PROT_READ);
		memset(r->state + g, CLEAN, count);
		__atomic_add_fetch(&vc_cu_mgd_resident, count, __ATOMIC_RELAXED);
		r->next = g + count;
	}
	if (write && r->state[g] == CLEAN) {
		protect(r, g, 1, PROT_READ | PROT_WRITE);
		r->state[g] = DIRTY;
	}
	rc = 0; /* or another thread opened it meanwhile */
out:
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* Not ours: what would have happened without us. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;

	if ((g_prev.sa_flags & SA_SIGINFO) && g_prev.sa_sigaction) {
		g_prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (!(g_prev.sa_flags & SA_SIGINFO) && g_prev.sa_handler != SIG_DFL && g_prev.sa_handler != SIG_IGN) {
		g_prev.sa_handler(sig);
		return;
	}
	/* The default action: the faulting instruction runs again and dies. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	if (si->si_code <= 0)
		raise(sig); /* sent, not a fault: nothing runs again */
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	int saved = errno, write = 1;

#if defined(__x86_64__)
	/* The page-fault error code: bit 1 is set for a write. */
	write = (((ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#endif
	if (si->si_code > 0 && resolve((uint64_t)(uintptr_t)si->si_addr, write) == 0) {
		errno = saved;
		return;
	}
	errno = saved;
	chain(sig, si, uc);
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &g_prev);
}

/* ---- ranges ------------------------------------------------------------------- */

static void release(struct mrange *r)
{
	if (r->alias)
		munmap(r->alias, r->span);
	if (r->fd >= 0)
		close(r->fd);
	free(r->state);
	free(r->pc);
	free(r);
}

int vc_mgd_map(uint64_t base, uint64_t size, uint64_t ctx, int owned)
{
	return vc_mgd_map_pieces(base, size, ctx, owned, NULL, 0);
}

int vc_mgd_map_pieces(uint64_t base, uint64_t size, uint64_t ctx, int owned, const struct vc_cu_managed_piece *pc,
		      uint32_t npc)
{
	struct mrange *r;
	void *v;
	size_t i;
	int rc = -ENOMEM;

	if (!size || base % PAGE || size > UINT64_MAX - PAGE)
		return -EINVAL;
	for (uint32_t k = 0; k < npc; k++)
		if (pc[k].base < base || pc[k].size > size || pc[k].base - base > size - pc[k].size)
			return -EINVAL;
	pthread_once(&g_sig_once, install);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (npc) {
		r->pc = malloc(npc * sizeof(*pc));
		if (!r->pc) {
			free(r);
			return -ENOMEM;
		}
		memcpy(r->pc, pc, npc * sizeof(*pc));
		r->npc = npc;
	}
	r->info = (struct vc_mgd_info){.base = base, .size = size, .ctx = ctx, .owned = owned};
	if (ctx)
		__atomic_store_n(&g_last_ctx, ctx, __ATOMIC_RELAXED);
	r->span = (size + PAGE - 1) & ~(PAGE - 1);
	r->ngran = (r->span + GRAN - 1) / GRAN;
	r->fd = memfd_create("vcuda-managed", MFD_CLOEXEC);
	r->state = calloc(r->ngran, 1);
	if (r->fd < 0 || !r->state)
		goto err;
	if (ftruncate(r->fd, (off_t)r->span) < 0) {
		rc = -errno;
		goto err;
	}
	r->alias = mmap(NULL, r->span, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->alias == MAP_FAILED) {
		r->alias = NULL;
		rc = -errno;
		goto err;
	}
	/* Not with a child after fork(): CUDA is not usable there either. */
	madvise(r->alias, r->span, MADV_DONTFORK);
	v = mmap((void *)(uintptr_t)base, r->span, PROT_NONE, MAP_SHARED | MAP_FIXED_NOREPLACE, r->fd, 0);
	if (v == MAP_FAILED || v != (void *)(uintptr_t)base) {
		rc = v == MAP_FAILED && errno != EEXIST ? -errno : -EEXIST;
		if (v != MAP_FAILED)
			munmap(v, r->span); /* an old kernel took it as a hint */
		goto err;
	}
	madvise(v, r->span, MADV_DONTFORK);
	pthread_mutex_lock(&g_mu);
	if (g_n == g_cap) {
		size_t cap = g_cap ? g_cap * 2 : 16;
		struct mrange **n = cap <= RANGES_MAX ? realloc(g_r, cap * sizeof(*n)) : NULL;

		if (!n) {
			pthread_mutex_unlock(&g_mu);
			munmap(v, r->span);
			goto err;
		}
		g_r = n;
		g_cap = cap;
	}
	for (i = g_n; i > 0 && g_r[i - 1]->info.base > base; i--)
		g_r[i] = g_r[i - 1];
	g_r[i] = r;
	g_n++;
	__atomic_add_fetch(&vc_cu_mgd_ranges, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&g_mu);
	return 0;
err:
	release(r);
	return rc;
}

/* With g_mu held: take range @i out of the table and unmap it. */
static void unmap_at(size_t i)
{
	struct mrange *r = g_r[i];
	unsigned long open = 0;

	for (uint64_t g = 0; g < r->ngran; g++)
		open += r->state[g] != ABSENT;
	__atomic_sub_fetch(&vc_cu_mgd_resident, open, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&vc_cu_mgd_ranges, 1, __ATOMIC_RELAXED);
	memmove(&g_r[i], &g_r[i + 1], (g_n - i - 1) * sizeof(*g_r));
	g_n--;
	munmap((void *)(uintptr_t)r->info.base, r->span);
	release(r);
}

int vc_mgd_unmap(uint64_t base)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_n; i++)
		if (g_r[i]->info.base == base) {
			unmap_at(i);
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

void vc_mgd_ctx_gone(uint64_t ctx)
{
	pthread_mutex_lock(&g_mu);
	for (size_t i = g_n; i-- > 0;) {
		if (g_r[i]->info.ctx != ctx)
			continue;
		if (g_r[i]->info.owned)
			unmap_at(i);
		else
			g_r[i]->info.ctx = 0; /* a library's: it outlives contexts */
	}
	if (__atomic_load_n(&g_last_ctx, __ATOMIC_RELAXED) == ctx)
		__atomic_store_n(&g_last_ctx, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&g_mu);
}

int vc_mgd_find(uint64_t p, uint64_t n, struct vc_mgd_info *out)
{
	struct mrange *r;

	pthread_mutex_lock(&g_mu);
	r = lookup(p, n ? n : 1);
	if (r)
		*out = r->info;
	pthread_mutex_unlock(&g_mu);
	return r ? 0 : -ENOENT;
}

int vc_cu_managed_has(uint64_t p, uint64_t n)
{
	struct vc_mgd_info i;

	return vc_mgd_find(p, n, &i) == 0;
}

/* ---- before the device runs ---------------------------------------------------- */

/* Operations that never let the device touch memory: no need to close the
 * CPU's granules before them. */
static int harmless(uint32_t op)
{
	switch (op) {
	case VC_CU_vcConsole:
	case VC_CU_vcFuncParams:
	case VC_CU_vcDriverInfo:
	case VC_CU_vcDeviceInfo:
	case VC_CU_vcManagedQuery:
	case VC_CU_vcMemRangeAttrs:
	case VC_CU_vcManagedAlloc:
	case VC_CU_vcManagedFree:
		return 1;
	default:
		return 0;
	}
}

/*
 * Write back what the CPU wrote, run by run of dirty granules, and close
 * every open granule (its bytes dropped: the next touch fetches them again).
 * The program's view is closed first, so a thread touching it meanwhile
 * waits in the fault handler. Write-backs are blocking copies on the legacy
 * stream; a synchronisation of that stream then makes sure they have landed
 * before the work about to be submitted runs, on whatever stream.
 */
void vc_cu_managed_flush(uint32_t op)
{
	struct vc_cu_state *st = vc_cu_state();
	uint64_t sync_ctx = 0;
	int wrote = 0;

	if (harmless(op) || !st)
		return;
	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_n; i++) {
		struct mrange *r = g_r[i];

		for (uint64_t g = 0; g < r->ngran;) {
			uint64_t e = g;

			if (r->state[g] == ABSENT) {
				g++;
				continue;
			}
			while (e < r->ngran && r->state[e] != ABSENT)
				e++;
			protect(r, g, e - g, PROT_NONE);
			for (uint64_t d = g; d < e;) {
				uint64_t de = d;

				if (r->state[d] != DIRTY) {
					d++;
					continue;
				}
				while (de < e && r->state[de] == DIRTY)
					de++;
				if (write_back(r, d, de - d) == 0) {
					wrote = 1;
					sync_ctx = ctx_of(r);
				}
				d = de;
			}
			fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(g * GRAN),
				  (off_t)((e - g) * GRAN));
			memset(r->state + g, ABSENT, e - g);
			__atomic_sub_fetch(&vc_cu_mgd_resident, e - g, __ATOMIC_RELAXED);
			g = e;
		}
	}
	if (wrote) {
		struct vc_cu_req_sync rq = {.ctx = sync_ctx, .handle = (uint64_t)(uintptr_t)CU_STREAM_LEGACY,
					    .kind = VC_CU_SYNC_STREAM};

		vc_client_call(st->client, VC_CU_vcSync, &rq, sizeof(rq), NULL, 0, NULL, 0, NULL);
	}
	pthread_mutex_unlock(&g_mu);
}
