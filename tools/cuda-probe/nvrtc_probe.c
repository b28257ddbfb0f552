/* SPDX-License-Identifier: MIT */
/*
 * nvrtc_probe.c - a research preload (not part of vcuda): logs each NVRTC
 * compilation a program makes (cuDNN's runtime-compiled kernels, PyTorch's
 * jiterator): its source's size and hash, its options, and the wall and
 * thread CPU time nvrtcCompileProgram took. Run the same program natively
 * and through vcuda with it to see whether both compile the same sources
 * and where a difference in time comes from (more work, or waiting).
 * NVRTC is usually found with dlopen + dlsym, so dlsym is interposed too.
 *
 *   LD_PRELOAD=.../libvcnvrtc_probe.so VC_NVRTC_LOG=file program
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*compile_fn)(void *, int, const char *const *);

static create_fn real_create;
static compile_fn real_compile;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *g_log;
static struct {
	void *prog;
	uint64_t hash;
	size_t len;
} g_progs[4096];
static unsigned g_np, g_ncomp;
static double g_wall, g_cpu;

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static FILE *logf_(void)
{
	if (!g_log) {
		const char *p = getenv("VC_NVRTC_LOG");

		g_log = p ? fopen(p, "a") : NULL;
		if (!g_log)
			g_log = stderr;
	}
	return g_log;
}

static void *real_dlsym(void *h, const char *name)
{
	static void *(*f)(void *, const char *);

	if (!f) {
		f = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!f)
			f = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	}
	return f(h, name);
}

static int w_create(void **prog, const char *src, const char *name, int nh, const char *const *hdr,
		    const char *const *inc)
{
	int rc = real_create(prog, src, name, nh, hdr, inc);
	uint64_t h = 1469598103934665603ull;
	size_t len = src ? strlen(src) : 0;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)src[i]) * 1099511628211ull;
	pthread_mutex_lock(&g_mu);
	if (rc == 0 && prog && g_np < 4096) {
		g_progs[g_np].prog = *prog;
		g_progs[g_np].hash = h;
		g_progs[g_np].len = len;
		g_np++;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static int w_compile(void *prog, int nopt, const char *const *opts)
{
	double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
	int rc = real_compile(prog, nopt, opts);
	double w = now(CLOCK_MONOTONIC) - w0, c = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	int pch = -1;
	size_t heap = 0, need = 0;
	Dl_info di;
	void *lib;

	/* The precompiled-header state of this compilation (NVRTC 12.8+). */
	if (dladdr((void *)real_compile, &di) && di.dli_fname && (lib = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD))) {
		int (*st)(void *) = (int (*)(void *))real_dlsym(lib, "nvrtcGetPCHCreateStatus");
		int (*hs)(size_t *) = (int (*)(size_t *))real_dlsym(lib, "nvrtcGetPCHHeapSize");
		int (*hr)(void *, size_t *) = (int (*)(void *, size_t *))real_dlsym(lib, "nvrtcGetPCHHeapSizeRequired");

		if (st)
			pch = st(prog);
		if (hs)
			hs(&heap);
		if (hr)
			hr(prog, &need);
		dlclose(lib);
	}
	uint64_t h = 0;
	size_t len = 0;
	FILE *f;

	pthread_mutex_lock(&g_mu);
	for (unsigned i = g_np; i-- > 0;)
		if (g_progs[i].prog == prog) {
			h = g_progs[i].hash;
			len = g_progs[i].len;
			break;
		}
	g_ncomp++;
	g_wall += w;
	g_cpu += c;
	f = logf_();
	fprintf(f, "NVRTC compile src=%016llx len=%zu rc=%d wall_ms=%.1f cpu_ms=%.1f pch_status=%d heap=%zu need=%zu nopt=%d\n",
		(unsigned long long)h, len, rc, w * 1e3, c * 1e3, pch, heap, need, nopt);
	fflush(f);
	pthread_mutex_unlock(&g_mu);
	return rc;
}

EXPORT void *dlsym(void *handle, const char *name)
{
	void *r = real_dlsym(handle, name);

	if (r && !strcmp(name, "nvrtcCreateProgram")) {
		real_create = (create_fn)r;
		return (void *)w_create;
	}
	if (r && !strcmp(name, "nvrtcCompileProgram")) {
		real_compile = (compile_fn)r;
		return (void *)w_compile;
	}
	return r;
}

__attribute__((destructor)) static void report(void)
{
	if (g_ncomp)
		fprintf(logf_(), "NVRTC total: %u compilations, wall %.2f s, thread CPU %.2f s\n", g_ncomp, g_wall,
			g_cpu);
}
