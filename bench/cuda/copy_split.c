/* SPDX-License-Identifier: MIT */
/*
 * copy_split.c - what a blocking copy between page-locked memory and the
 * device costs the driver, for each kind of page-locked memory a server could
 * copy from and each way it could wait: cuMemHostAlloc's memory (what a
 * program's cudaMallocHost gets natively), a program's malloc registered with
 * cuMemHostRegister, and a shared memfd registered (what vcuda's server
 * copies from: host-backend/cuda/pinseg.c); a blocking cuMemcpyHtoD, the
 * asynchronous copy with cuStreamSynchronize, and the asynchronous copy with
 * a loop of cuStreamQuery; and the calls vcuda's server adds around a copy
 * (the driver's attributes of the device range, host-backend/cuda/handles.c
 * vc_cu_check_range; the read of an empty pipe and the flush of an
 * unbuffered stdout that collect device printf, host-backend/cuda/console.c).
 * Linked against libcuda.so.1: run it natively, or
 * through vcuda with the guest library's path first. Not a test: a measuring
 * tool whose figures docs/PERFORMANCE.md quotes; prints one "name<TAB>us"
 * line per figure, each the median of REPS.
 *
 *   copy_split [MiB ...]      (default 1 4)
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ckd.h"

#define REPS 200

static double samples[REPS];

/* The median time of @step(@arg), REPS times after 5 untimed ones. */
static double median_of(void (*step)(void *), void *arg)
{
	for (int i = -5; i < REPS; i++) {
		double a = ckd_now_us();

		step(arg);
		if (i >= 0)
			samples[i] = ckd_now_us() - a;
	}
	qsort(samples, REPS, sizeof(samples[0]), ckd_cmp_double);
	return samples[REPS / 2];
}

/* One copy of @n bytes between @h and @dev, up (@up) or down, in @form:
 * 0 blocking, 1 async + stream synchronisation, 2 async + a loop of
 * queries. */
struct copy {
	int form, up;
	void *h;
	CUdeviceptr dev;
	size_t n;
};

static void copy_step(void *arg)
{
	const struct copy *c = arg;
	CUresult r;

	if (c->form == 0) {
		CKD(c->up ? cuMemcpyHtoD(c->dev, c->h, c->n) : cuMemcpyDtoH(c->h, c->dev, c->n));
		return;
	}
	CKD(c->up ? cuMemcpyHtoDAsync(c->dev, c->h, c->n, NULL) : cuMemcpyDtoHAsync(c->h, c->dev, c->n, NULL));
	if (c->form == 1) {
		CKD(cuStreamSynchronize(NULL));
		return;
	}
	while ((r = cuStreamQuery(NULL)) == CUDA_ERROR_NOT_READY)
		;
	CKD(r);
}

/* The server's range check: the driver's attributes of a device address. */
static void attrs_step(void *arg)
{
	CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
					CU_POINTER_ATTRIBUTE_RANGE_SIZE};
	CUcontext c;
	CUdeviceptr start;
	size_t size;
	void *data[3] = {&c, &start, &size};

	CKD(cuPointerGetAttributes(3, attrs, data, *(CUdeviceptr *)arg + 64));
}

/* The console's collection: a read of an empty non-blocking pipe. */
static void pipe_step(void *arg)
{
	char b[64];

	if (read(*(int *)arg, b, sizeof(b)) >= 0)
		exit(1);
}

static void fflush_step(void *arg)
{
	(void)arg;
	fflush(stdout);
}

/* What the server does around each copy, natively: "part_*" figures. */
static void server_parts(CUdeviceptr dev)
{
	int p[2];

	printf("part_pointer_attributes\t%.3f\tus\n", median_of(attrs_step, &dev));
	if (pipe2(p, O_NONBLOCK) < 0) {
		perror("pipe2");
		exit(1);
	}
	printf("part_empty_pipe_read\t%.3f\tus\n", median_of(pipe_step, &p[0]));
	close(p[0]);
	close(p[1]);
	fflush(stdout);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("part_fflush_unbuffered\t%.3f\tus\n", median_of(fflush_step, NULL));
}

static void each_form(const char *kind, void *h, CUdeviceptr dev, size_t n)
{
	static const char *const forms[] = {"sync", "async_sync", "async_poll"};

	for (int form = 0; form < 3; form++)
		for (int up = 1; up >= 0; up--) {
			struct copy c = {.form = form, .up = up, .h = h, .dev = dev, .n = n};

			printf("%s_%zuMiB_%s_%s\t%.2f\tus\n", kind, n >> 20, up ? "h2d" : "d2h", forms[form],
			       median_of(copy_step, &c));
		}
}

/* @n bytes of a new memfd, mapped shared and written (exits on failure). */
static void *memfd_pages(size_t n)
{
	int fd = memfd_create("copy_split", MFD_CLOEXEC);
	void *p;

	if (fd < 0 || ftruncate(fd, (off_t)n) < 0) {
		perror("memfd");
		exit(1);
	}
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(p, 1, n);
	return p;
}

int main(int argc, char **argv)
{
	size_t sizes[8] = {1, 4};
	int nsizes = 2;
	CUdeviceptr dev, d4;
	uint32_t h4 = 0;
	struct copy small;

	if (argc > 1) {
		nsizes = 0;
		for (int i = 1; i < argc && nsizes < 8; i++)
			sizes[nsizes++] = strtoul(argv[i], NULL, 10);
	}
	ckd_primary();
	CKD(cuMemAlloc(&d4, 4));
	small = (struct copy){.form = 0, .up = 0, .h = &h4, .dev = d4, .n = 4};
	printf("pageable_4B_d2h_sync\t%.2f\tus\n", median_of(copy_step, &small));
	server_parts(d4);
	for (int s = 0; s < nsizes; s++) {
		size_t n = sizes[s] << 20;
		void *h;

		if (!n)
			continue;
		CKD(cuMemAlloc(&dev, n));
		CKD(cuMemHostAlloc(&h, n, 0));
		memset(h, 1, n);
		each_form("hostalloc", h, dev, n);
		CKD(cuMemFreeHost(h));

		h = malloc(n);
		memset(h, 1, n);
		CKD(cuMemHostRegister(h, n, 0));
		each_form("malloc_reg", h, dev, n);
		CKD(cuMemHostUnregister(h));
		free(h);

		h = memfd_pages(n);
		CKD(cuMemHostRegister(h, n, 0));
		each_form("memfd_reg", h, dev, n);
		CKD(cuMemHostUnregister(h));
		munmap(h, n);
		CKD(cuMemFree(dev));
	}
	CKD(cuMemFree(d4));
	return 0;
}
