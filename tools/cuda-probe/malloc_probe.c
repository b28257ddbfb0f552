/* SPDX-License-Identifier: MIT */
/*
 * malloc_probe.c - a research probe (not part of vcuda): what loading and
 * initialising a libcuda.so.1 does to the process's malloc. Prints, before
 * and after cuInit + a primary context, the smallest request size glibc
 * serves with mmap (the dynamic mmap threshold) and logs any mallopt() call
 * the library makes (this executable's mallopt interposes the libc one).
 *
 *   cc -o malloc_probe malloc_probe.c -ldl; ./malloc_probe
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mallopt(int param, int value)
{
	static int (*real)(int, int);

	if (!real)
		real = (int (*)(int, int))dlsym(RTLD_NEXT, "mallopt");
	fprintf(stderr, "malloc_probe: mallopt(%d, %d) from the library\n", param, value);
	return real(param, value);
}

/* glibc marks a chunk served by mmap with bit 1 of its size word. */
static size_t threshold(void)
{
	for (size_t n = 64 << 10; n <= (64u << 20); n += 64 << 10) {
		void *p = malloc(n);
		int mm = p && (*(volatile size_t *)((uintptr_t)p - sizeof(size_t)) & 2);

		free(p);
		if (mm)
			return n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "init";
	void *h = NULL, *ctx = NULL;
	int dev = 0, rc = 0;

	/* Probed once, at the end: the probe's own free of an mmapped chunk
	 * raises the threshold, so a second probe would measure the first. */
	if (strcmp(mode, "none")) {
		h = dlopen("libcuda.so.1", RTLD_NOW);
		if (!h) {
			printf("malloc_probe: %s\n", dlerror());
			return 1;
		}
	}
	if (!strcmp(mode, "init")) {
		rc = ((int (*)(unsigned))dlsym(h, "cuInit"))(0);
		if (!rc)
			rc = ((int (*)(int *, int))dlsym(h, "cuDeviceGet"))(&dev, 0);
		if (!rc)
			rc = ((int (*)(void **, int))dlsym(h, "cuDevicePrimaryCtxRetain"))(&ctx, dev);
		if (!rc)
			rc = ((int (*)(void *))dlsym(h, "cuCtxSetCurrent"))(ctx);
	}
	struct mallinfo2 mi = mallinfo2();
	printf("malloc_probe: mode %s (rc %d): mmap threshold %zu KiB; arena %zu KiB, mmapped %zu KiB in %zu blocks, "
	       "top %zu KiB\n",
	       mode, rc, threshold() >> 10, mi.arena >> 10, mi.hblkhd >> 10, mi.hblks, mi.keepcost >> 10);
	return 0;
}
