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
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>
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
	struct rusage r0, r1;
	getrusage(RUSAGE_THREAD, &r0);
	double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
	int rc = real_compile(prog, nopt, opts);
	double w = now(CLOCK_MONOTONIC) - w0, c = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	getrusage(RUSAGE_THREAD, &r1);
#define TV(t) ((double)(t).tv_sec * 1e3 + (double)(t).tv_usec / 1e3)
	double ut = TV(r1.ru_utime) - TV(r0.ru_utime), stm = TV(r1.ru_stime) - TV(r0.ru_stime);
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
	fprintf(f,
		"NVRTC compile src=%016llx len=%zu rc=%d wall_ms=%.1f cpu_ms=%.1f user_ms=%.1f sys_ms=%.1f minflt=%ld majflt=%ld "
		"vcsw=%ld ivcsw=%ld pch_status=%d heap=%zu need=%zu nopt=%d\n",
		(unsigned long long)h, len, rc, w * 1e3, c * 1e3, ut, stm, r1.ru_minflt - r0.ru_minflt,
		r1.ru_majflt - r0.ru_majflt, r1.ru_nvcsw - r0.ru_nvcsw, r1.ru_nivcsw - r0.ru_nivcsw, pch, heap, need, nopt);
	for (int i = 0; i < nopt && g_ncomp <= 2; i++)
		fprintf(f, "  opt %s\n", opts[i]);
	if (g_ncomp == 1) {
		/* The address space at the first compilation: what else is mapped. */
		FILE *m = fopen("/proc/self/status", "r");
		char line[256];
		while (m && fgets(line, sizeof(line), m))
			if (!strncmp(line, "Vm", 2) || !strncmp(line, "Threads", 7) || !strncmp(line, "Cpus_allowed_list", 17))
				fputs(line, f);
		if (m)
			fclose(m);
	}
	fflush(f);
	pthread_mutex_unlock(&g_mu);
	return rc;
}

/* ---- the driver's NVVM table NVRTC asks for (da9151d3) -------------- */

typedef uint64_t (*slot_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
			    uint64_t, uint64_t);
typedef int (*getexp_fn)(const void **, const void *);

static getexp_fn real_getexp;
static slot_fn real_slot[16];
static uint64_t wrapped[16];

static void dump(FILE *f, const char *tag, uint64_t p, size_t n)
{
	unsigned char b[64];
	struct iovec lo = {b, n}, re = {(void *)(uintptr_t)p, n};

	/* Only what is mapped: an argument may be a number that looks like an address. */
	if (p < 65536 || (p >> 47) || n > sizeof(b) || process_vm_readv(getpid(), &lo, 1, &re, 1, 0) != (ssize_t)n)
		return;
	fprintf(f, "    %s %#llx:", tag, (unsigned long long)p);
	for (size_t i = 0; i < n; i++)
		fprintf(f, " %02x", b[i]);
	fprintf(f, " |");
	for (size_t i = 0; i < n; i++)
		fputc(b[i] >= 32 && b[i] < 127 ? b[i] : '.', f);
	fputc('\n', f);
}

static uint64_t slot_call(int n, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
			  uint64_t s1, uint64_t s2, uint64_t s3, uint64_t s4)
{
	uint64_t a[10] = {a1, a2, a3, a4, a5, a6, s1, s2, s3, s4};
	FILE *f = logf_();
	double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);

	pthread_mutex_lock(&g_mu);
	fprintf(f, "NVVM slot %d call args:", n);
	for (int i = 0; i < 10; i++)
		fprintf(f, " %#llx", (unsigned long long)a[i]);
	fputc('\n', f);
	for (int i = 0; i < 10; i++) {
		char tag[16];
		snprintf(tag, sizeof(tag), "in%d", i + 1);
		dump(f, tag, a[i], 48);
	}
	pthread_mutex_unlock(&g_mu);
	uint64_t r = real_slot[n](a1, a2, a3, a4, a5, a6, s1, s2, s3, s4);
	double w = now(CLOCK_MONOTONIC) - w0, c = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	pthread_mutex_lock(&g_mu);
	fprintf(f, "NVVM slot %d ret %#llx wall_ms=%.2f cpu_ms=%.2f\n", n, (unsigned long long)r, w * 1e3, c * 1e3);
	for (int i = 0; i < 10; i++) {
		char tag[16];
		snprintf(tag, sizeof(tag), "out%d", i + 1);
		dump(f, tag, a[i], 48);
	}
	fflush(f);
	pthread_mutex_unlock(&g_mu);
	return r;
}

#define SLOTW(n)                                                                                              \
	static uint64_t slot_w##n(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, \
				  uint64_t s1, uint64_t s2, uint64_t s3, uint64_t s4)                           \
	{                                                                                                     \
		return slot_call(n, a1, a2, a3, a4, a5, a6, s1, s2, s3, s4);                                  \
	}
SLOTW(1) SLOTW(2) SLOTW(3) SLOTW(4) SLOTW(5) SLOTW(6) SLOTW(7)
static slot_fn slot_w[8] = {NULL, slot_w1, slot_w2, slot_w3, slot_w4, slot_w5, slot_w6, slot_w7};

static int w_getexp(const void **table, const void *id)
{
	static const unsigned char nvvm[16] = {0xda, 0x91, 0x51, 0xd3, 0x3a, 0xe6, 0xcc, 0x41,
					       0xa5, 0xc0, 0x4f, 0x26, 0xd5, 0x33, 0xe3, 0x28};
	int rc = real_getexp(table, id);

	if (rc == 0 && id && !memcmp(id, nvvm, 16) && table && *table) {
		const uint64_t *t = *table;
		unsigned n = (unsigned)(t[0] / 8);

		pthread_mutex_lock(&g_mu);
		fprintf(logf_(), "NVVM table %p size word %llu\n", (void *)t, (unsigned long long)t[0]);
		if (!wrapped[0] && n <= 8) {
			wrapped[0] = t[0];
			for (unsigned i = 1; i < n; i++) {
				real_slot[i] = (slot_fn)(uintptr_t)t[i];
				wrapped[i] = t[i] ? (uint64_t)(uintptr_t)slot_w[i] : 0;
			}
		}
		pthread_mutex_unlock(&g_mu);
		if (wrapped[0] == t[0])
			*table = wrapped;
	}
	return rc;
}

EXPORT void *dlsym(void *handle, const char *name)
{
	void *r = real_dlsym(handle, name);

	if (r && !strcmp(name, "nvrtcCreateProgram")) {
		real_create = (create_fn)r;
		return (void *)w_create;
	}
	if (r && !strcmp(name, "cuGetExportTable") && getenv("VC_NVRTC_NVVM")) {
		real_getexp = (getexp_fn)r;
		return (void *)w_getexp;
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
