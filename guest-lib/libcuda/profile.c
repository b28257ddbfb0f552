/* SPDX-License-Identifier: MIT */
/*
 * profile.c - VCUDA_PROFILE: where the guest process spends its time.
 *
 * VCUDA_STATS counts what went to the host and how long the program waited
 * for a reply; a program slow for other reasons (CPU-bound in the guest, or
 * blocked somewhere the statistics do not see) needs the other half. This
 * samples the process and records, for each sample, the call stack the
 * signal interrupted (glibc's backtrace(), primed at start so that the
 * handler neither loads nor allocates):
 *   VCUDA_PROFILE=1     CPU time of the whole process (ITIMER_PROF);
 *   VCUDA_PROFILE=wall  wall-clock time of the thread that loaded the
 *                       library (a POSIX timer aimed at it): where it runs
 *                       and where it blocks (a sleep the signal cuts
 *                       short returns early, as on any signal: EINTR;
 *                       Python and vcuda's own waits carry on);
 *   VCUDA_PROFILE_HZ=N  samples per second (default 1000).
 * At exit it prints the shares by library, by symbol (dladdr's nearest
 * exported name, or the offset in the library: for vcuda's own library
 * always the offset, which `addr2line -f -e libcuda.so.1 OFFSET` names from
 * its debug information), by the innermost frame in vcuda's library, and
 * by the first frame outside the C library (who made the system call).
 *
 * The same file builds libvcuda-profile.so, to preload into a native run
 * (LD_PRELOAD=.../libvcuda-profile.so VCUDA_PROFILE=wall): the two profiles
 * of one program, natively and through vcuda, side by side.
 *
 * Off (the default), nothing is installed. On, the samples go to an array
 * mapped at start; the handler only stores (an index taken with a relaxed
 * atomic add, no locks), and a full array stops recording. A program's own
 * SIGPROF handler replaces this one, as it would with any profiler.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_SAMPLES (1u << 19) /* almost 9 minutes at 1 kHz */
#define DEPTH 16
#define TOP 30

struct sample {
	uintptr_t pc[DEPTH]; /* [0]: the interrupted instruction; 0 ends */
};

static struct sample *g_pc;
static timer_t g_timer;
static int g_wall;
static uint32_t g_n; /* samples taken; only this process's threads add */
static unsigned g_hz;
static void *g_self; /* this library's load address */

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	void *frames[DEPTH + 1];
	uint32_t i;
	int n;

	(void)sig;
	(void)si;
	i = __atomic_fetch_add(&g_n, 1, __ATOMIC_RELAXED);
	if (i >= MAX_SAMPLES)
		return;
	g_pc[i].pc[0] = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	/* frames[0] is this handler, [1] the signal trampoline, then the
	 * interrupted function's callers */
	n = backtrace(frames, DEPTH + 1);
	for (int k = 2; k < n && k - 1 < DEPTH; k++)
		g_pc[i].pc[k - 1] = (uintptr_t)frames[k];
}

__attribute__((constructor)) static void profile_start(void)
{
	const char *v = getenv("VCUDA_PROFILE"), *hz = getenv("VCUDA_PROFILE_HZ");
	struct sigaction sa;
	void *m, *prime[2];

	if (!v || !*v || !strcmp(v, "0"))
		return;
	g_wall = !strcmp(v, "wall");
	g_hz = hz ? (unsigned)strtoul(hz, NULL, 10) : 1000;
	if (g_hz < 10 || g_hz > 10000)
		g_hz = 1000;
	m = mmap(NULL, MAX_SAMPLES * sizeof(*g_pc), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	g_pc = m;
	backtrace(prime, 2); /* loads the unwinder now, not in the handler */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL))
		goto fail;
	if (g_wall) {
		struct sigevent ev;
		struct itimerspec it;

		memset(&ev, 0, sizeof(ev));
		ev.sigev_notify = SIGEV_THREAD_ID;
		ev.sigev_signo = SIGPROF;
		ev._sigev_un._tid = gettid(); /* sigev_notify_thread_id: glibc 2.35 on */
		if (timer_create(CLOCK_MONOTONIC, &ev, &g_timer))
			goto fail;
		it.it_interval.tv_sec = 0;
		it.it_interval.tv_nsec = 1000000000L / g_hz;
		it.it_value = it.it_interval;
		if (timer_settime(g_timer, 0, &it, NULL)) {
			timer_delete(g_timer);
			goto fail;
		}
	} else {
		struct itimerval it;

		it.it_interval.tv_sec = 0;
		it.it_interval.tv_usec = (suseconds_t)(1000000 / g_hz);
		it.it_value = it.it_interval;
		if (setitimer(ITIMER_PROF, &it, NULL))
			goto fail;
	}
	return;
fail:
	munmap(m, MAX_SAMPLES * sizeof(*g_pc));
	g_pc = NULL;
}

struct row {
	char name[160];
	uint32_t n;
};

/* A table of names and their counts, found by a hash of the name (a long
 * run's samples times frames would make a linear search slow at exit). */
#define ROWS 4096
#define SLOTS (2 * ROWS)

struct table {
	struct row *rows;
	uint32_t *slot; /* index + 1 of the row a name hashes to; 0: free */
	uint32_t n;
};

/* Count @name in @t; names past ROWS distinct ones go uncounted. */
static void tally(struct table *t, const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (const char *c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	for (uint32_t k = h % SLOTS;; k = (k + 1) % SLOTS) {
		uint32_t r = t->slot[k];

		if (r && !strcmp(t->rows[r - 1].name, name)) {
			t->rows[r - 1].n++;
			return;
		}
		if (!r) {
			if (t->n == ROWS)
				return;
			snprintf(t->rows[t->n].name, sizeof(t->rows[t->n].name), "%s", name);
			t->rows[t->n].n = 1;
			t->slot[k] = ++t->n;
			return;
		}
	}
}

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

static void print_top(const char *what, struct row *rows, uint32_t nrows, uint32_t total)
{
	qsort(rows, nrows, sizeof(*rows), by_count);
	fprintf(stderr, "  %-64s %8s %6s\n", what, "samples", "share");
	for (uint32_t i = 0; i < nrows && i < TOP; i++)
		fprintf(stderr, "  %-64.64s %8u %5.1f%%\n", rows[i].name, rows[i].n, 100.0 * rows[i].n / total);
}

/* Whether @lib (a file name) is the C library's or the loader's. */
static int is_libc(const char *lib)
{
	return !strncmp(lib, "libc.so", 7) || !strncmp(lib, "ld-linux", 8) || !strncmp(lib, "linux-vdso", 10) ||
	       !strncmp(lib, "libpthread", 10) || !strncmp(lib, "libgcc_s", 8);
}

/* The name of address @pc in @name: library and symbol or offset. 0, or -1
 * when no object holds it. Sets *@lib to the library's file name and
 * *@ours when it is this library. */
static int name_of(uintptr_t pc, char *name, size_t cap, const char **lib, int *ours)
{
	Dl_info di;
	const char *base;

	*ours = 0;
	if (!dladdr((void *)pc, &di) || !di.dli_fname) {
		snprintf(name, cap, "? %#lx", (unsigned long)pc);
		*lib = "?";
		return -1;
	}
	*lib = (base = strrchr(di.dli_fname, '/')) ? base + 1 : di.dli_fname;
	if (!**lib)
		*lib = "(main program)";
	*ours = di.dli_fbase == g_self;
	/* vcuda's own static functions have no exported name near them:
	 * 256-byte pieces of this library, for addr2line; elsewhere the
	 * nearest exported name, or 4 KiB pieces of a stripped library */
	if (di.dli_sname && !*ours)
		snprintf(name, cap, "%s %s", *lib, di.dli_sname);
	else
		snprintf(name, cap, "%s +%#lx", *lib,
			 (unsigned long)(pc - (uintptr_t)di.dli_fbase) & (*ours ? ~0xfful : ~0xffful));
	return 0;
}

__attribute__((destructor)) static void profile_print(void)
{
	struct table tab[4];
	uint32_t n;
	Dl_info self;
	int ok = 1;

	if (!g_pc)
		return;
	if (dladdr((void *)profile_print, &self))
		g_self = self.dli_fbase;
	if (g_wall) {
		timer_delete(g_timer);
	} else {
		struct itimerval off;

		memset(&off, 0, sizeof(off));
		setitimer(ITIMER_PROF, &off, NULL);
	}
	n = __atomic_load_n(&g_n, __ATOMIC_RELAXED);
	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	for (int t = 0; t < 4; t++) {
		tab[t].rows = calloc(ROWS, sizeof(struct row));
		tab[t].slot = calloc(SLOTS, sizeof(uint32_t));
		tab[t].n = 0;
		ok = ok && tab[t].rows && tab[t].slot;
	}
	if (!ok || !n)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		const struct sample *sm = &g_pc[i];
		const char *lib;
		char name[160];
		int ours, in_vcuda = 0, caller = 0;

		name_of(sm->pc[0], name, sizeof(name), &lib, &ours);
		tally(&tab[0], lib);
		tally(&tab[1], name);
		for (int k = 0; k < DEPTH && sm->pc[k] && !(in_vcuda && caller); k++) {
			/* a return address points after its call: look one byte back */
			if (name_of(sm->pc[k] - (k > 0), name, sizeof(name), &lib, &ours))
				continue;
			if (ours && !in_vcuda) {
				tally(&tab[2], name);
				in_vcuda = 1;
			}
			if (!caller && !is_libc(lib)) {
				tally(&tab[3], name);
				caller = 1;
			}
		}
	}
	fprintf(stderr, "vcuda profile (pid %d): %u samples of %s at %u Hz (%.2f s)\n", (int)getpid(), n,
		g_wall ? "one thread's wall-clock time" : "the process's CPU time", g_hz, (double)n / g_hz);
	print_top("library", tab[0].rows, tab[0].n, n);
	print_top("library and symbol (nearest exported name, or offset)", tab[1].rows, tab[1].n, n);
	print_top("innermost frame in vcuda's library (offset, for addr2line)", tab[2].rows, tab[2].n, n);
	print_top("first frame outside the C library", tab[3].rows, tab[3].n, n);
out:
	for (int t = 0; t < 4; t++) {
		free(tab[t].rows);
		free(tab[t].slot);
	}
	munmap(g_pc, MAX_SAMPLES * sizeof(*g_pc));
	g_pc = NULL;
}
