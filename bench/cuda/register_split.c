/* SPDX-License-Identifier: MIT */
/*
 * register_split.c - where the time of registering 1 GiB of a program's
 * memory goes, natively, for each way vcuda could move it into shared memory
 * (guest-lib/libcuda/pinseg.c). Runs on the GPU machine against the real
 * driver; prints one "name<TAB>ms" line per step. Not a test: a measuring
 * tool whose figures docs/PERFORMANCE.md quotes.
 *
 *   register_split [MiB] [SECTIONS]
 *
 * SECTIONS: "a" the alias step alone; "m" adds the one-file variants;
 * "w" the files written by pwrite on a thread each, the driver registering
 * after or during the writes; "h" whether new pages cost less right after
 * memory was freed, and the program's pages replaced chunk by chunk (each
 * chunk's old pages freed before the next chunk's are made); anything else (or nothing) the several-file
 * variants, the overlap and the alias.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#include "ckd.h"

static size_t g_n;

/* The clock in milliseconds. */
static double ms(void)
{
	return ckd_now_us() / 1e3;
}

struct job {
	uint8_t *dst;
	const uint8_t *src;
	size_t len;
	int populate;
	int fd; /* >= 0: fallocate this file's [off, off + len) */
	off_t off;
};

static void *work(void *a)
{
	struct job *j = a;

	if (j->fd >= 0 && fallocate(j->fd, 0, j->off, (off_t)j->len) < 0)
		perror("fallocate");
	if (j->populate && madvise(j->dst, j->len, MADV_POPULATE_WRITE) < 0)
		perror("madvise");
	if (j->src)
		memcpy(j->dst, j->src, j->len);
	return NULL;
}

/* [dst, dst + len) on @nt threads: populated, copied from @src, or both. */
static void par(uint8_t *dst, const uint8_t *src, size_t len, int nt, int populate, int fd)
{
	pthread_t t[64];
	struct job j[64];
	size_t per = len / (size_t)nt;

	for (int i = 0; i < nt; i++) {
		j[i] = (struct job){dst + per * i, src ? src + per * i : NULL, i == nt - 1 ? len - per * i : per,
				    populate, fd, (off_t)(per * i)};
		pthread_create(&t[i], NULL, work, &j[i]);
	}
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
}

static uint8_t *program_buffer(void)
{
	uint8_t *p = mmap(NULL, g_n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	memset(p, 2, g_n);
	return p;
}

static uint8_t *shared_map(int nfd, int *fds)
{
	uint8_t *a = mmap(NULL, g_n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	size_t per = g_n / (size_t)nfd;

	for (int i = 0; i < nfd; i++) {
		fds[i] = memfd_create("split", MFD_CLOEXEC);
		if (ftruncate(fds[i], (off_t)per) < 0)
			perror("ftruncate");
		mmap(a + per * i, per, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fds[i], 0);
	}
	return a;
}

static void drop(uint8_t *a, int nfd, int *fds)
{
	munmap(a, g_n);
	for (int i = 0; i < nfd; i++)
		close(fds[i]);
}

static void reg(const char *name, uint8_t *a)
{
	double t = ms();

	CKD(cuMemHostRegister(a, g_n, 0));
	printf("%s_register\t%.1f\n", name, ms() - t);
	t = ms();
	CKD(cuMemHostUnregister(a));
	printf("%s_unregister\t%.1f\n", name, ms() - t);
}

/* Making and filling the shared pages, one way. */
static void make(const char *name, int nfd, int nt, int populate_first, int falloc)
{
	uint8_t *src = program_buffer(), *a;
	int fds[64];
	double t0 = ms(), t1;

	a = shared_map(nfd, fds);
	if (falloc && nfd == 1)
		par(a, NULL, g_n, nt, 0, fds[0]);
	t1 = ms();
	if (populate_first)
		par(a, NULL, g_n, nt, 1, -1);
	printf("%s_make\t%.1f\n", name, ms() - t1 + (falloc ? t1 - t0 : 0));
	t1 = ms();
	par(a, src, g_n, nt, 0, -1);
	printf("%s_fill\t%.1f\n", name, ms() - t1);
	printf("%s_total\t%.1f\n", name, ms() - t0);
	reg(name, a);
	drop(a, nfd, fds);
	munmap(src, g_n);
}

struct regjob {
	uint8_t *a;
	CUcontext ctx;
	double took;
};

static void *reg_thread(void *arg)
{
	struct regjob *r = arg;
	double t = ms();

	CKD(cuCtxSetCurrent(r->ctx));
	CKD(cuMemHostRegister(r->a, g_n, 0));
	r->took = ms() - t;
	return NULL;
}

/* Pages made first, then the driver registers while the copy goes on. */
static void overlap(int nfd, int nt, CUcontext ctx)
{
	uint8_t *src = program_buffer(), *a;
	struct regjob r = {.ctx = ctx};
	pthread_t t;
	int fd[64];
	double t0 = ms(), t1;

	a = shared_map(nfd, fd);
	par(a, NULL, g_n, nt, 1, -1);
	t1 = ms();
	r.a = a;
	pthread_create(&t, NULL, reg_thread, &r);
	par(a, src, g_n, nt, 0, -1);
	printf("overlap%d_fill\t%.1f\n", nfd, ms() - t1);
	pthread_join(t, NULL);
	printf("overlap%d_register\t%.1f\n", nfd, r.took);
	printf("overlap%d_total\t%.1f\n", nfd, ms() - t0);
	CKD(cuMemHostUnregister(a));
	if (memcmp(a, src, 4096) || memcmp(a + g_n - 4096, src + g_n - 4096, 4096))
		printf("overlap_bytes_differ\t1\n");
	drop(a, nfd, fd);
	munmap(src, g_n);
}

static void *unmapper(void *arg)
{
	munmap(arg, g_n);
	return NULL;
}

/* Replacing the program's pages with the shared ones at the same address. */
static void alias(int nt)
{
	uint8_t *src, *a, *scratch, *r;
	int fd;
	double t;
	pthread_t th;

	/* As now: mremap over the range frees the old pages inline. */
	src = program_buffer();
	a = shared_map(1, &fd);
	par(a, src, g_n, nt, 1, -1);
	t = ms();
	if (mremap(a, 0, g_n, MREMAP_MAYMOVE | MREMAP_FIXED, src) == MAP_FAILED)
		perror("mremap");
	printf("alias_inline\t%.1f\n", ms() - t);
	drop(a, 1, &fd);
	munmap(src, g_n);

	/* The old pages moved aside (DONTUNMAP leaves the range mapped,
	 * empty), the shared ones mapped in, the old ones freed by a thread. */
	src = program_buffer();
	a = shared_map(1, &fd);
	par(a, src, g_n, nt, 1, -1);
	r = mmap(NULL, g_n + (2u << 20), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	scratch = r + (((uintptr_t)src - (uintptr_t)r) & ((2u << 20) - 1));
	t = ms();
	if (mremap(src, g_n, g_n, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, scratch) == MAP_FAILED) {
		printf("alias_dontunmap_errno\t%d\n", errno);
	} else {
		double t2 = ms();

		if (mremap(a, 0, g_n, MREMAP_MAYMOVE | MREMAP_FIXED, src) == MAP_FAILED)
			perror("mremap");
		printf("alias_moveaside\t%.1f\n", t2 - t);
		printf("alias_deferred\t%.1f\n", ms() - t);
		t = ms();
		pthread_create(&th, NULL, unmapper, scratch);
		pthread_join(th, NULL);
		printf("alias_background_free\t%.1f\n", ms() - t);
		if (src[0] != 2 || src[g_n - 1] != 2)
			printf("alias_bytes_differ\t1\n");
	}
	drop(a, 1, &fd);
	munmap(src, g_n);
}

struct wjob {
	int fd;
	const uint8_t *src;
	size_t len;
};

static void *writer(void *arg)
{
	struct wjob *w = arg;

	for (size_t done = 0; done < w->len;) {
		ssize_t r = pwrite(w->fd, w->src + done, w->len - done, (off_t)done);

		if (r <= 0) {
			perror("pwrite");
			break;
		}
		done += (size_t)r;
	}
	return NULL;
}

/* The files written by the kernel, a thread per file (a written page is
 * not cleared first, and this process maps none of them); the driver
 * registers after the writes, or from their start on a thread of its own
 * (@during). */
static void written(int nfd, int during, CUcontext ctx)
{
	uint8_t *src = program_buffer(), *a;
	struct regjob r = {.ctx = ctx};
	struct wjob w[64];
	pthread_t t[64], rt;
	size_t per = g_n / (size_t)nfd;
	int fds[64];
	double t0 = ms(), t1;

	a = shared_map(nfd, fds);
	r.a = a;
	if (during)
		pthread_create(&rt, NULL, reg_thread, &r);
	for (int i = 0; i < nfd; i++) {
		w[i] = (struct wjob){fds[i], src + per * (size_t)i, per};
		pthread_create(&t[i], NULL, writer, &w[i]);
	}
	for (int i = 0; i < nfd; i++)
		pthread_join(t[i], NULL);
	t1 = ms();
	printf("write%d%s_fill\t%.1f\n", nfd, during ? "_during" : "", t1 - t0);
	if (during) {
		pthread_join(rt, NULL);
	} else {
		reg_thread(&r);
	}
	printf("write%d%s_register\t%.1f\n", nfd, during ? "_during" : "", r.took);
	printf("write%d%s_total\t%.1f\n", nfd, during ? "_during" : "", ms() - t0);
	if (memcmp(a, src, 4096) || memcmp(a + g_n - 4096, src + g_n - 4096, 4096))
		printf("write_bytes_differ\t1\n");
	CKD(cuMemHostUnregister(a));
	drop(a, nfd, fds);
	munmap(src, g_n);
}

/* Timed: a new anonymous gigabyte written by one thread. */
static uint8_t *timed_buffer(const char *name)
{
	double t = ms();
	uint8_t *p = program_buffer();

	printf("%s\t%.1f\n", name, ms() - t);
	return p;
}

/* Timed: 16 files' pages made on 16 threads, then dropped. */
static void timed_populate(const char *name)
{
	int fds[64];
	uint8_t *a = shared_map(16, fds);
	double t = ms();

	par(a, NULL, g_n, 16, 1, -1);
	printf("%s\t%.1f\n", name, ms() - t);
	drop(a, 16, fds);
}

struct swapjob {
	uint8_t *a, *src;
	int fd;
	size_t len;
	size_t chunk;
};

static void *swapper(void *arg)
{
	struct swapjob *j = arg;

	for (size_t o = 0; o < j->len; o += j->chunk) {
		size_t n = j->len - o < j->chunk ? j->len - o : j->chunk;

		if (madvise(j->a + o, n, MADV_POPULATE_WRITE) < 0)
			perror("madvise");
		memcpy(j->a + o, j->src + o, n);
		if (mmap(j->src + o, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, j->fd, (off_t)o) == MAP_FAILED)
			perror("mmap");
	}
	return NULL;
}

/* The program's pages replaced chunk by chunk, each chunk's old pages freed
 * (by the mapping over them) before the next chunk's new ones are made. */
static void swap_chunks(size_t chunk, CUcontext ctx)
{
	uint8_t *src = program_buffer(), *a;
	struct swapjob j[16];
	pthread_t t[16];
	size_t per = g_n / 16;
	int fds[64];
	double t0 = ms();

	a = shared_map(16, fds);
	for (int i = 0; i < 16; i++) {
		j[i] = (struct swapjob){a + per * (size_t)i, src + per * (size_t)i, fds[i], per, chunk};
		pthread_create(&t[i], NULL, swapper, &j[i]);
	}
	for (int i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
	printf("swap%zuM_fill\t%.1f\n", chunk >> 20, ms() - t0);
	{
		struct regjob r = {.a = a, .ctx = ctx};

		reg_thread(&r);
		printf("swap%zuM_register\t%.1f\n", chunk >> 20, r.took);
	}
	printf("swap%zuM_total\t%.1f\n", chunk >> 20, ms() - t0);
	if (src[0] != 2 || src[g_n - 1] != 2 || a[0] != 2)
		printf("swap_bytes_differ\t1\n");
	CKD(cuMemHostUnregister(a));
	drop(a, 16, fds);
	munmap(src, g_n);
}

/* Whether new pages cost less where memory was just freed. */
static void hot(CUcontext ctx)
{
	uint8_t *p, *q;
	double t;

	p = timed_buffer("anon_new_memset");
	timed_populate("shm_populate");
	timed_populate("shm_populate_after_shm_free");
	t = ms();
	munmap(p, g_n);
	printf("anon_free\t%.1f\n", ms() - t);
	timed_populate("shm_populate_after_anon_free");
	q = timed_buffer("anon_new_memset_after_shm_free");
	munmap(q, g_n);
	make("shm16_t16_popfirst", 16, 16, 1, 0);
	swap_chunks(4u << 20, ctx);
	swap_chunks(16u << 20, ctx);
	overlap(16, 16, ctx);
}

int main(int argc, char **argv)
{
	CUcontext ctx = ckd_primary();
	uint8_t *p;
	double t;
	FILE *f;
	char line[256];

	g_n = (size_t)(argc > 1 ? atol(argv[1]) : 1024) << 20;
	f = fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "r");
	if (f && fgets(line, sizeof(line), f))
		printf("# shmem_enabled %s", line);
	if (f)
		fclose(f);
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f && fgets(line, sizeof(line), f))
		printf("# thp_enabled %s", line);
	if (f)
		fclose(f);
	printf("# cpus %ld\n", sysconf(_SC_NPROCESSORS_ONLN));

	p = program_buffer();
	t = ms();
	CKD(cuMemHostRegister(p, g_n, 0));
	printf("native_register\t%.1f\n", ms() - t);
	CKD(cuMemHostUnregister(p));
	munmap(p, g_n);

	if (argc > 2 && strchr(argv[2], 'a')) {
		alias(8);
		alias(8);
		return 0;
	}
	if (argc > 2 && strchr(argv[2], 'h')) {
		hot(ctx);
		hot(ctx);
		return 0;
	}
	if (argc > 2 && strchr(argv[2], 'w')) {
		for (int k = 0; k < 2; k++) {
			written(16, 0, ctx);
			written(16, 1, ctx);
			make("shm16_t16_popfirst", 16, 16, 1, 0);
			overlap(16, 16, ctx);
		}
		return 0;
	}
	if (argc <= 2 || strchr(argv[2], 'm')) {
		make("shm1_t8_popfirst", 1, 8, 1, 0);
		make("shm1_t8_faults", 1, 8, 0, 0);
		make("shm1_t16_popfirst", 1, 16, 1, 0);
		make("shm1_t8_falloc", 1, 8, 0, 1);
	}
	make("shm8_t8_popfirst", 8, 8, 1, 0);
	make("shm16_t8_popfirst", 16, 8, 1, 0);
	make("shm16_t16_popfirst", 16, 16, 1, 0);
	make("shm8_t8_faults", 8, 8, 0, 0);
	overlap(1, 8, ctx);
	overlap(8, 8, ctx);
	alias(8);
	return 0;
}
