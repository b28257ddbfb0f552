/* SPDX-License-Identifier: MIT */
/*
 * crash.c - the crash reporter of a session worker (crash.h).
 *
 * The handler runs on a broken process: it writes with write(2) from a stack
 * buffer, and uses only backtrace(3) (its unwinder loaded at install, so that
 * it does not allocate here) and dladdr(3), which read loader state.
 */
#include "core/crash.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "vc_cuda_wire.h"
#include "vc_sanitize.h"

#define FRAMES 48

static uint32_t g_id;
static uint32_t g_op; /* the serving thread's current operation; see vc_crash_note_op() */

void vc_crash_note_op(uint32_t op)
{
	/* Plain bookkeeping for the crash handler of this process; no ordering. */
	__atomic_store_n(&g_op, op, __ATOMIC_RELAXED);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "vcuda-server[%d] ", (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* nowhere else to say it */
	}
}

static void frame(int i, void *pc)
{
	Dl_info dl;

	if (dladdr(pc, &dl) && dl.dli_fname) {
		const char *mod = strrchr(dl.dli_fname, '/');

		say("  #%-2d %s+0x%lx%s%s%s", i, mod ? mod + 1 : dl.dli_fname,
		    (unsigned long)((char *)pc - (char *)dl.dli_fbase), dl.dli_sname ? " (" : "",
		    dl.dli_sname ? dl.dli_sname : "", dl.dli_sname ? ")" : "");
	} else {
		say("  #%-2d %p", i, pc);
	}
}

static void on_crash(int sig, siginfo_t *si, void *ucv)
{
	uint32_t op = __atomic_load_n(&g_op, __ATOMIC_RELAXED);
	const ucontext_t *uc = ucv;
	void *pcs[FRAMES];
	int n;

	say("session %u: worker crashed: signal %d (%s), address %p, during %s; backtrace "
	    "(addr2line -e MODULE OFFSET):",
	    g_id, sig, strsignal(sig), si->si_addr, op ? vc_cu_op_name(op) : "no CUDA operation");
#if defined(__x86_64__)
	frame(0, (void *)uc->uc_mcontext.gregs[REG_RIP]);
#else
	(void)uc;
#endif
	n = backtrace(pcs, FRAMES);
	for (int i = 0; i < n; i++)
		frame(i + 1, pcs[i]);
	/* SA_RESETHAND put the default action back: die of the same signal. */
	raise(sig);
}

void vc_crash_install(uint32_t id)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	struct sigaction sa = {.sa_sigaction = on_crash, .sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER};
	void *warm[1];

	g_id = id;
#if defined(VC_ASAN) || defined(VC_TSAN)
	return; /* the sanitizer's own report says more */
#endif
	backtrace(warm, 1); /* loads the unwinder now, not in the handler */
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
