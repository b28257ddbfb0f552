/* SPDX-License-Identifier: MIT */
/*
 * vm_guest_test.c - the VM tests that run inside the guest, through
 * /dev/vcuda0 (vcuda.ko, virtio-vcuda-pci, the VM's vcuda-server). Prints
 * "ok - ..." / "not ok - ..." lines and exits non-zero on any failure. The
 * sessions speak the CUDA operations the guest library sends, encoded by
 * hand (tests/lib/vt_cuda.h), so every test runs over the CI stand-in and the
 * real GPU executor alike.
 *
 *   vm_guest_test bulk SIZE...   HtoD then DtoH of each size, verified byte for byte,
 *                                then a kernel's store into it, verified
 *   vm_guest_test hold           copy 64 MiB back and forth until killed
 *   vm_guest_test fill N         hold N sessions open at once, each working
 *   vm_guest_test hostile        malformed rings (each session FATAL) and hostile ones the
 *                                session survives with exact answers; a neighbour unharmed
 *   vm_guest_test driver         misuse of /dev/vcuda0 answered with clear errors
 *   vm_guest_test pins           page-locked memory pinned in place: the ioctls, the host's
 *                                mapping of the pages, DMA through them, unpinning
 *
 * DEV (default /dev/vcuda0) comes from $VCUDA_DEVICE (a vcuda-server socket
 * works too, for a run on the host: every test but driver).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kmod/vcuda_uapi.h"
#include "vc_client.h"
#include "vc_gpin.h"
#include "vc_ring_guest.h"
#include "vc_shm.h"
#include "vc_time.h"
#include "vc_wire.h"
#include "vt_cuda.h"
#include "vt_hostile.h"

static const char *g_dev = "/dev/vcuda0";
static int g_fail;

#define OK(...) (printf("ok - " __VA_ARGS__), printf("\n"))
#define NOT_OK(...) (printf("not ok - " __VA_ARGS__), printf("\n"), g_fail++)

static double now_s(void)
{
	return (double)vc_now_ns() / 1e9;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (*end == 'K' || *end == 'k')
		v <<= 10;
	else if (*end == 'M' || *end == 'm')
		v <<= 20;
	else if (*end == 'G' || *end == 'g')
		v <<= 30;
	return v;
}

/* A session with device 0's primary context retained: its id in *@ctx. */
static struct vc_client *open_or_report(const char *what, uint64_t *ctx)
{
	struct vc_client *c;
	char err[256];
	int rc;

	if (vc_client_open(g_dev, &c, err, sizeof(err))) {
		NOT_OK("%s: %s", what, err);
		return NULL;
	}
	if ((rc = vt_ctx_open(c, ctx))) {
		NOT_OK("%s: primary context: %d", what, rc);
		vc_client_close(c);
		return NULL;
	}
	return c;
}

static void fill_pattern(uint8_t *p, uint64_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (uint64_t i = 0; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	for (uint64_t i = n & ~7ull; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed);
}

/* ---- bulk --------------------------------------------------------------------- */

static int bulk(int argc, char **argv)
{
	uint64_t ctx = 0, store = 0;
	struct vc_client *c = open_or_report("bulk: open", &ctx);
	int rc;

	if (!c)
		return 1;
	if ((rc = vt_store_kernel(c, ctx, &store))) {
		NOT_OK("bulk: loading the store kernel: %d", rc);
		vc_client_close(c);
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		uint64_t n = parse_size(argv[i]), d = 0;
		uint8_t *a = malloc(n), *b = malloc(n);
		uint32_t v = 0xc0de0000u + (uint32_t)i, back = 0;
		double t0, t1, t2;

		if (!a || !b || !n) {
			NOT_OK("bulk %s: no memory for two buffers", argv[i]);
			free(a);
			free(b);
			continue;
		}
		fill_pattern(a, n, n);
		memset(b, 0, n);
		rc = vt_mem_alloc(c, ctx, n, &d);
		t0 = now_s();
		if (!rc)
			rc = vt_htod(c, ctx, d, a, n, 0);
		t1 = now_s();
		if (!rc)
			rc = vt_dtoh(c, ctx, b, d, n);
		t2 = now_s();
		if (rc)
			NOT_OK("bulk %s: copy failed (%d)", argv[i], rc);
		else if (memcmp(a, b, n))
			NOT_OK("bulk %s: data differs after the round trip", argv[i]);
		else
			OK("bulk %s: %" PRIu64 " bytes there and back, verified byte for byte "
			   "(HtoD %.1f MB/s, DtoH %.1f MB/s under this guest's CPU)",
			   argv[i], n, (double)n / 1e6 / (t1 - t0 + 1e-9), (double)n / 1e6 / (t2 - t1 + 1e-9));
		/* A kernel's store into the last word of the buffer, in stream
		 * order after the copies: its parameters arrived intact. */
		if (!rc && n >= 4) {
			uint64_t at = d + ((n - 4) & ~3ull);

			rc = vt_store(c, ctx, store, at, v);
			if (!rc)
				rc = vt_dtoh(c, ctx, &back, at, sizeof(back));
			if (!rc)
				rc = vt_sync(c, ctx);
			if (rc || back != v)
				NOT_OK("bulk %s: the store kernel's word reads %#x, expected %#x (%d)", argv[i], back, v,
				       rc);
			else
				OK("bulk %s: a kernel stored %#x at %#" PRIx64 " (buffer + %" PRIu64 "), read back",
				   argv[i], v, at, at - d);
		}
		if (d && (rc = vt_mem_free(c, ctx, d)))
			NOT_OK("bulk %s: free: %d", argv[i], rc);
		free(a);
		free(b);
	}
	vc_client_close(c);
	return g_fail ? 1 : 0;
}

/* ---- hold: to be killed mid-copy ------------------------------------------------ */

static int hold(void)
{
	const uint64_t n = 64ull << 20;
	uint64_t ctx = 0, d;
	struct vc_client *c = open_or_report("hold: open", &ctx);
	uint8_t *a = malloc(n);

	if (!c || !a || vt_mem_alloc(c, ctx, n, &d))
		return 1;
	fill_pattern(a, n, 7);
	printf("hold: copying\n");
	fflush(stdout);
	for (;;)
		if (vt_htod(c, ctx, d, a, n, 0) || vt_dtoh(c, ctx, a, d, n))
			return 1;
}

/* ---- fill: every slot at once ----------------------------------------------------- */

static int fill(int n)
{
	struct vc_client **c = calloc((size_t)n, sizeof(*c));
	int opened = 0;

	double t0 = now_s();

	/* A slot is free again once the host confirms its old session ended:
	 * a process killed just before may still hold one for a moment. */
	for (int i = 0; i < n; i++) {
		char err[256];

		while (vc_client_open(g_dev, &c[i], err, sizeof(err))) {
			if (now_s() - t0 > 10) {
				NOT_OK("fill: session %d: %s", i + 1, err);
				break;
			}
			usleep(20000);
		}
		if (!c[i])
			break;
		opened++;
	}
	if (opened == n)
		printf("fill: %d sessions open after %.2f s\n", n, now_s() - t0);
	for (int i = 0; i < opened; i++) {
		uint8_t a[4096], b[4096];
		uint64_t ctx = 0, d;

		fill_pattern(a, sizeof(a), (uint64_t)i);
		if (vt_ctx_open(c[i], &ctx) || vt_mem_alloc(c[i], ctx, sizeof(a), &d) ||
		    vt_htod(c[i], ctx, d, a, sizeof(a), 0) || vt_dtoh(c[i], ctx, b, d, sizeof(b)) ||
		    memcmp(a, b, sizeof(a)))
			NOT_OK("fill: session %d does not work", i + 1);
	}
	if (opened == n && !g_fail)
		OK("fill: %d sessions open at once, each verified", n);
	for (int i = 0; i < opened; i++)
		vc_client_close(c[i]);
	free(c);
	return g_fail ? 1 : 0;
}

/* ---- hostile ---------------------------------------------------------------------- */

static volatile int g_stop;
static uint64_t g_good_ops;
static char g_good_err[200];

/* Each round trip: 64 KiB through the arena, one word of it overwritten by
 * the store kernel in stream order, all of it read back and compared. */
static void *good_client(void *arg)
{
	struct vc_client *c;
	uint8_t a[65536], b[65536];
	uint64_t ctx = 0, d = 0, store = 0;
	char err[256];
	int rc;

	(void)arg;
	if (vc_client_open(g_dev, &c, err, sizeof(err))) {
		snprintf(g_good_err, sizeof(g_good_err), "open: %.150s", err);
		return NULL;
	}
	if ((rc = vt_ctx_open(c, &ctx)) || (rc = vt_mem_alloc(c, ctx, sizeof(a), &d)) ||
	    (rc = vt_store_kernel(c, ctx, &store))) {
		snprintf(g_good_err, sizeof(g_good_err), "context, alloc or module load failed (%d)", rc);
		vc_client_close(c);
		return NULL;
	}
	for (uint64_t i = 0; !g_stop; i++) {
		uint32_t word = (uint32_t)(i * 4 % sizeof(a)), v = (uint32_t)i ^ 0x5a5a5a5au;

		fill_pattern(a, sizeof(a), i);
		rc = vt_htod(c, ctx, d, a, sizeof(a), 0);
		if (!rc)
			rc = vt_store(c, ctx, store, d + word, v);
		memcpy(a + word, &v, sizeof(v));
		if (!rc)
			rc = vt_dtoh(c, ctx, b, d, sizeof(b));
		if (rc || memcmp(a, b, sizeof(a))) {
			snprintf(g_good_err, sizeof(g_good_err), "round trip %" PRIu64 " failed (%d)", i, rc);
			break;
		}
		__atomic_store_n(&g_good_ops, i + 1, __ATOMIC_RELAXED);
	}
	vc_client_close(c);
	return NULL;
}

static void run_bad(const char *name, void (*inject)(struct vc_ring_guest *, uint64_t, uint64_t), uint32_t want)
{
	uint64_t ops0 = __atomic_load_n(&g_good_ops, __ATOMIC_RELAXED), ctx = 0, d = 0;
	struct vc_client *c = open_or_report(name, &ctx);
	uint32_t reason = 0;
	int rc;

	if (!c)
		return;
	if ((rc = vt_mem_alloc(c, ctx, 8 << 20, &d))) { /* something for the server to free */
		NOT_OK("%s: alloc: %d", name, rc);
		vc_client_close(c);
		return;
	}
	inject(vc_client_raw_ring(c), ctx, d);
	rc = vt_sync(c, ctx); /* publishes and kicks: the server meets the bad bytes first */
	vc_ring_guest_status(vc_client_raw_ring(c), &reason);
	vc_client_close(c);
	if (rc != -EPROTO || reason != want) {
		NOT_OK("%s: got %d, fatal reason %u (expected -EPROTO, %u)", name, rc, reason, want);
		return;
	}
	for (int i = 0; i < 300 && __atomic_load_n(&g_good_ops, __ATOMIC_RELAXED) <= ops0 + 2; i++)
		usleep(10000);
	if (__atomic_load_n(&g_good_ops, __ATOMIC_RELAXED) <= ops0 + 2 || g_good_err[0]) {
		NOT_OK("%s: the neighbour stalled or failed: %s", name, g_good_err);
		return;
	}
	OK("%s: session FATAL (reason %u: %s), the neighbour kept working", name, reason, vc_fatal_name(reason));
}

/* A case the session survives with exact answers (or ends through a cap). */
static void run_live(const struct vt_live_case *k)
{
	uint64_t ops0 = __atomic_load_n(&g_good_ops, __ATOMIC_RELAXED), ctx = 0, d = 0;
	struct vc_client *c = open_or_report(k->name, &ctx);
	uint8_t a[4096], b[4096];
	char why[256] = "";
	int rc;

	if (!c)
		return;
	if ((rc = vt_mem_alloc(c, ctx, 8 << 20, &d))) {
		NOT_OK("%s: alloc: %d", k->name, rc);
		vc_client_close(c);
		return;
	}
	rc = k->run(c, ctx, d, why, sizeof(why));
	if (!rc && k->end == VT_END_CLOSE) { /* still serving: 4 KiB there and back */
		fill_pattern(a, sizeof(a), 7);
		memset(b, 0, sizeof(b));
		if (vt_htod(c, ctx, d, a, sizeof(a), 0) || vt_dtoh(c, ctx, b, d, sizeof(b)) || memcmp(a, b, sizeof(a)))
			snprintf(why, sizeof(why), "the session did not serve a round trip after it"), rc = -1;
	}
	vc_client_close(c);
	if (rc) {
		NOT_OK("%s: %s", k->name, why);
		return;
	}
	for (int i = 0; i < 300 && __atomic_load_n(&g_good_ops, __ATOMIC_RELAXED) <= ops0 + 2; i++)
		usleep(10000);
	if (__atomic_load_n(&g_good_ops, __ATOMIC_RELAXED) <= ops0 + 2 || g_good_err[0]) {
		NOT_OK("%s: the neighbour stalled or failed: %s", k->name, g_good_err);
		return;
	}
	OK("%s: exact answers, the neighbour kept working", k->name);
}

static int hostile(void)
{
	pthread_t good;

	pthread_create(&good, NULL, good_client, NULL);
	while (!__atomic_load_n(&g_good_ops, __ATOMIC_RELAXED) && !g_good_err[0])
		usleep(1000);
	for (unsigned i = 0; i < vt_hostile_ncases; i++)
		run_bad(vt_hostile_cases[i].name, vt_hostile_cases[i].inject, vt_hostile_cases[i].want);
	for (unsigned i = 0; i < vt_live_ncases; i++)
		run_live(&vt_live_cases[i]);
	g_stop = 1;
	pthread_join(good, NULL);
	if (g_good_err[0])
		NOT_OK("the good client failed: %s", g_good_err);
	else
		OK("the good client made %" PRIu64 " verified round trips throughout", g_good_ops);
	return g_fail ? 1 : 0;
}

/* ---- driver misuse ---------------------------------------------------------------- */

static void expect_errno(const char *what, int r, int want)
{
	if (r == -1 && errno == want)
		OK("driver: %s: %s", what, strerror(want));
	else
		NOT_OK("driver: %s: got %d (%s), expected %s", what, r, r < 0 ? strerror(errno) : "success",
		       strerror(want));
}

/* ---- pins in place ------------------------------------------------------------- */

/* A call returning 0 or -errno that must answer -@want. */
static void expect_err(const char *what, int r, int want)
{
	if (r == -want)
		OK("pins: %s: %s", what, strerror(want));
	else
		NOT_OK("pins: %s: got %d (%s), expected %s", what, r, r < 0 ? strerror(-r) : "success",
		       strerror(want));
}

/* Pages pinned in place by vcuda.ko, all sessions together (sysfs). */
static long pinned_pages(void)
{
	FILE *f = fopen("/sys/class/misc/vcuda0/pinned_pages", "re");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* @n bytes of new anonymous memory at a 2 MiB boundary (huge pages: few runs). */
static uint8_t *map_aligned(uint64_t n)
{
	uint8_t *r = mmap(NULL, n + (2u << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	r = (uint8_t *)(((uintptr_t)r + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
	madvise(r, n, MADV_HUGEPAGE);
	return r;
}

/*
 * Page-locked memory in place (vcuda.ko's VCUDA_IOC_PIN, the guest-pin area,
 * vcPinnedSegment MAP_GUEST): misuse of the ioctls answered with the
 * driver's errors; a pin named falsely refused and the session unharmed; a
 * refused MAP lets the pin go; a real one mapped at the process's address,
 * its copies DMA from and to the very pages the process writes; unmapped,
 * unpinned; and one still mapped when the session closes unpinned once the
 * host has ended the session.
 */
static int pins(void)
{
	const uint64_t n = 8ull << 20;
	uint64_t ctx = 0, off = 0, dev = 0, d = 0, gen, gen2;
	struct vc_client *c = open_or_report("pins: open", &ctx);
	uint8_t *buf = map_aligned(n), *want = malloc(n), *hole;
	uint32_t entry, entry2;
	long before = pinned_pages();
	int rc;

	if (!c || !buf || !want) {
		NOT_OK("pins: no session or no memory");
		return 1;
	}
	fill_pattern(buf, n, 77);
	memcpy(want, buf, n);
	hole = mmap(NULL, 1u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	expect_err("PIN of an unaligned address", vc_client_pin(c, (uint64_t)(uintptr_t)buf + 8, 4096, &entry, &gen),
		     EINVAL);
	expect_err("PIN of no bytes", vc_client_pin(c, (uint64_t)(uintptr_t)buf, 0, &entry, &gen), EINVAL);
	expect_err("PIN of inaccessible memory", vc_client_pin(c, (uint64_t)(uintptr_t)hole, 1u << 20, &entry, &gen),
		     EFAULT);
	rc = vc_client_pin(c, (uint64_t)(uintptr_t)buf, n, &entry, &gen);
	if (rc) {
		NOT_OK("pins: PIN of 8 MiB: %s (is the VM's RAM a memory-backend-memfd?)", strerror(-rc));
		return 1;
	}
	OK("pins: the guest's kernel pinned 8 MiB in place: entry %u, generation %" PRIu64 ", %ld pages pinned",
	   entry, gen, pinned_pages() - before);
	expect_err("UNPIN before the host let go", vc_client_unpin(c, entry, gen), EBUSY);
	expect_err("UNPIN of a pin that is not", vc_client_unpin(c, entry, gen + 100), EINVAL);
	/* Names the kernel never gave, and a wrong range: refused; the session
	 * lives. The wrong range named a real pin: it is let go, and unpins. */
	if (gen > 1 && (rc = vt_pin_map(c, ctx, (uint64_t)(uintptr_t)buf, n, entry, gen - 1, &off)) !=
			       CUDA_ERROR_INVALID_VALUE)
		NOT_OK("pins: MAP of an earlier generation answered %d", rc);
	rc = vt_pin_map(c, ctx, (uint64_t)(uintptr_t)buf + 4096, n - 4096, entry, gen, &off);
	if (rc != CUDA_ERROR_INVALID_VALUE)
		NOT_OK("pins: MAP of another range answered %d", rc);
	else if ((rc = vc_client_unpin(c, entry, gen)))
		NOT_OK("pins: a refused MAP did not let the pin go: UNPIN %s", strerror(-rc));
	else
		OK("pins: MAPs the kernel never described refused; the pin named let go and unpinned");
	/* The real thing. */
	if ((rc = vc_client_pin(c, (uint64_t)(uintptr_t)buf, n, &entry, &gen)) ||
	    (rc = vt_pin_map(c, ctx, (uint64_t)(uintptr_t)buf, n, entry, gen, &off)) ||
	    (rc = vt_host_register(c, ctx, off, n, &dev)) || (rc = vt_mem_alloc(c, ctx, n, &d))) {
		NOT_OK("pins: pin, map, register: %d", rc);
		return 1;
	}
	if ((rc = vt_pin_map(c, ctx, (uint64_t)(uintptr_t)buf, n, entry, gen, &off)) != CUDA_ERROR_INVALID_VALUE)
		NOT_OK("pins: a second MAP of a mapped pin answered %d", rc);
	expect_err("UNPIN of a pin the host maps", vc_client_unpin(c, entry, gen), EBUSY);
	OK("pins: mapped by the host at pinned offset %#" PRIx64 ", device address %#" PRIx64 "%s", off, dev,
	   dev == (uint64_t)(uintptr_t)buf ? " (the process's own address)" : "");
	/* The process's bytes reach the GPU with no copy of ours, and the
	 * GPU's reach the process's pages. */
	buf[5] ^= 0xff;
	want[5] ^= 0xff;
	rc = vt_copy_pinned(c, ctx, VC_CU_COPY_HTOD, d, off, n);
	memset(buf, 0, n);
	if (!rc)
		rc = vt_copy_pinned(c, ctx, VC_CU_COPY_DTOH, d, off, n);
	if (rc)
		NOT_OK("pins: DMA copies through the pin: %d", rc);
	else if (memcmp(buf, want, n))
		NOT_OK("pins: the bytes differ after the round trip through the pin");
	else
		OK("pins: 8 MiB to the GPU and back through the pinned pages, every byte");
	if ((rc = vt_pin_unmap(c, ctx, off)) || (rc = vc_client_unpin(c, entry, gen)))
		NOT_OK("pins: UNMAP then UNPIN: %d", rc);
	else
		OK("pins: unmapped by the host, then unpinned");
	/* One still mapped when the session ends: unpinned once it has. */
	if ((rc = vc_client_pin(c, (uint64_t)(uintptr_t)buf, 2u << 20, &entry2, &gen2)) ||
	    (rc = vt_pin_map(c, ctx, (uint64_t)(uintptr_t)buf, 2u << 20, entry2, gen2, &off))) {
		NOT_OK("pins: a last pin: %d", rc);
	} else {
		long now;
		int waited = 0;

		vc_client_close(c);
		c = NULL;
		while ((now = pinned_pages()) > before && waited < 150) {
			usleep(100000);
			waited++;
		}
		if (now == before)
			OK("pins: a pin left at the session's end unpinned %d ms after it", waited * 100);
		else
			NOT_OK("pins: %ld pages still pinned 15 s after the session ended (%ld before)", now, before);
	}
	if (c)
		vc_client_close(c);
	munmap(hole, 1u << 20);
	free(want);
	return g_fail ? 1 : 0;
}

static int driver(void)
{
	struct vcuda_open_args a = {.version = VCUDA_UAPI_VERSION};
	struct vcuda_wait_args w = {.timeout_ms = 10};
	int fd = open(g_dev, O_RDWR | O_CLOEXEC);
	void *p;

	if (fd < 0) {
		NOT_OK("driver: open %s: %s", g_dev, strerror(errno));
		return 1;
	}
	expect_errno("WAIT before OPEN", ioctl(fd, VCUDA_IOC_WAIT, &w), ENOTCONN);
	expect_errno("KICK before OPEN", ioctl(fd, VCUDA_IOC_KICK), ENOTCONN);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	expect_errno("mmap before OPEN", p == MAP_FAILED ? -1 : 0, ENOTCONN);
	a.version = 99;
	expect_errno("OPEN with an unknown version", ioctl(fd, VCUDA_IOC_OPEN, &a), EINVAL);
	expect_errno("an unknown ioctl", ioctl(fd, _IO('V', 77)), ENOTTY);
	expect_errno("OPEN from a bad pointer", ioctl(fd, VCUDA_IOC_OPEN, (void *)16), EFAULT);
	a.version = VCUDA_UAPI_VERSION;
	if (ioctl(fd, VCUDA_IOC_OPEN, &a) || a.status) {
		NOT_OK("driver: OPEN: %s / %d %s", strerror(errno), a.status, a.message);
		close(fd);
		return 1;
	}
	OK("driver: OPEN: slot %u, session %u, %" PRIu64 " bytes", a.slot, a.session_id, (uint64_t)a.region_size);
	expect_errno("a second OPEN on the same file", ioctl(fd, VCUDA_IOC_OPEN, &a), EBUSY);
	p = mmap(NULL, (size_t)a.region_size + (4u << 20), PROT_READ, MAP_SHARED, fd, 0);
	expect_errno("mmap beyond the session's region", p == MAP_FAILED ? -1 : 0, EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)(a.region_size + (1u << 20)));
	expect_errno("mmap at an offset past the region", p == MAP_FAILED ? -1 : 0, EINVAL);
	p = mmap(NULL, 8192, PROT_WRITE, MAP_SHARED, fd, (off_t)VCUDA_MMAP_DOORBELL);
	expect_errno("two pages of doorbell", p == MAP_FAILED ? -1 : 0, EINVAL);
	{
		/* The slot's guest-pin area is the kernel's and the host's only. */
		FILE *f = fopen("/sys/class/misc/vcuda0/slot_size", "re");
		unsigned long long slot = 0;

		if (f && fscanf(f, "%llu", &slot) == 1 && slot > VC_GPIN_AREA_SIZE) {
			p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)(slot - VC_GPIN_AREA_SIZE));
			expect_errno("mmap of the guest-pin area", p == MAP_FAILED ? -1 : 0, EINVAL);
		} else {
			NOT_OK("driver: no slot_size in sysfs");
		}
		if (f)
			fclose(f);
	}
	p = mmap(NULL, (size_t)a.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		NOT_OK("driver: mmap of the region: %s", strerror(errno));
	} else {
		const struct vc_ctrl *ctrl = p;

		if (ctrl->magic == VC_CTRL_MAGIC)
			OK("driver: the mapped region holds the session's control page");
		else
			NOT_OK("driver: mapped region has magic %08x", ctrl->magic);
		munmap(p, (size_t)a.region_size);
	}
	if (ioctl(fd, VCUDA_IOC_WAIT, &w) == 0 && ioctl(fd, VCUDA_IOC_KICK) == 0)
		OK("driver: WAIT with a timeout and KICK after OPEN");
	else
		NOT_OK("driver: WAIT/KICK after OPEN: %s", strerror(errno));
	close(fd);
	return g_fail ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (getenv("VCUDA_DEVICE"))
		g_dev = getenv("VCUDA_DEVICE");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "bulk"))
		return bulk(argc - 2, argv + 2);
	if (argc == 2 && !strcmp(argv[1], "hold"))
		return hold();
	if (argc == 3 && !strcmp(argv[1], "fill"))
		return fill(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "hostile"))
		return hostile();
	if (argc == 2 && !strcmp(argv[1], "driver"))
		return driver();
	if (argc == 2 && !strcmp(argv[1], "pins"))
		return pins();
	fprintf(stderr, "usage: vm_guest_test bulk SIZE... | hold | fill N | hostile | driver | pins\n");
	return 2;
}
