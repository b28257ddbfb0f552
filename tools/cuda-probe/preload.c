/* cuda-probe helper, LD_PRELOADed: logs which environment variables are read
 * (getenv/secure_getenv, once per name and calling object) and, with
 * VC_PROBE_DLSYM=1, which `cu*` names are looked up with dlsym/dlvsym and by
 * whom. Log lines go to VC_PROBE_LOG like the interposer's ("VCP ... ENV" /
 * "VCP ... DLSYM").
 *
 * getenv is answered by scanning environ directly (no call back into libc's
 * getenv). dlsym is forwarded to glibc's; a call with RTLD_NEXT is forwarded
 * as-is, which resolves "next after this preload library" rather than "next
 * after the caller": harmless for CUDA lookups, but why this part is opt-in.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define EXPORT __attribute__((visibility("default")))
#define MAXSEEN 4096

static int logfd = -1;
static volatile int lk;
static struct {
    char name[64];
    const void *obj;
} seen[MAXSEEN];
static int nseen;

static void lock(void)
{
    while (__atomic_exchange_n(&lk, 1, __ATOMIC_ACQUIRE))
        ;
}
static void unlock(void) { __atomic_store_n(&lk, 0, __ATOMIC_RELEASE); }

/* glibc declares the name arguments nonnull; callers may still pass NULL */
static const char *launder(const char *p)
{
    __asm__("" : "+r"(p));
    return p;
}

static char *scan_env(const char *name)
{
    if (!name || !environ)
        return NULL;
    size_t n = strlen(name);
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static void open_log(void)
{
    if (logfd != -1)
        return;
    const char *p = scan_env("VC_PROBE_LOG");
    logfd = p && *p ? open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -2;
}

static const char *base(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p ? p : "?";
}

static void note(const char *what, const char *name, const void *ret, const char *extra)
{
    Dl_info di;
    const void *obj = NULL;
    const char *on = "?";
    if (dladdr(ret, &di)) {
        obj = di.dli_fbase;
        on = di.dli_fname && *di.dli_fname ? base(di.dli_fname) : "<main>";
        if (!strncmp(on, "libcuda.so", 10))
            on = di.dli_fname; /* the interposer and the real driver share the name */
    }
    lock();
    open_log();
    int dup = 0;
    for (int i = 0; i < nseen; i++)
        if (seen[i].obj == obj && !strncmp(seen[i].name, name, sizeof seen[i].name - 1))
            dup = 1;
    if (!dup && nseen < MAXSEEN) {
        snprintf(seen[nseen].name, sizeof seen[nseen].name, "%s", name);
        seen[nseen].obj = obj;
        nseen++;
    }
    if (!dup && logfd >= 0) {
        char buf[600];
        int n = snprintf(buf, sizeof buf, "VCP - %d - - %s name=%s caller=%s%s\n", (int)getpid(), what, name, on,
                         extra);
        if (n > (int)sizeof buf - 1)
            n = (int)sizeof buf - 1;
        ssize_t w = write(logfd, buf, (size_t)n);
        (void)w;
    }
    unlock();
}

EXPORT char *getenv(const char *name)
{
    name = launder(name);
    char *v = scan_env(name);
    if (name)
        note("ENV", name, __builtin_return_address(0), v ? " set=1" : " set=0");
    return v;
}

EXPORT char *secure_getenv(const char *name)
{
    name = launder(name);
    char *v = scan_env(name);
    if (name)
        note("ENV", name, __builtin_return_address(0), v ? " set=1 secure=1" : " set=0 secure=1");
    return v;
}

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

static int dlsym_logging(void)
{
    const char *p = scan_env("VC_PROBE_DLSYM");
    return p && *p == '1';
}

static void *real_dlsym_sym(void)
{
    static void *f;
    if (!f) {
        /* dlvsym is not interposed here, so this reaches glibc's */
        f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f)
            f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    }
    return f;
}

EXPORT void *dlsym(void *handle, const char *name)
{
    dlsym_fn f = (dlsym_fn)real_dlsym_sym();
    void *r = f(handle, name);
    name = launder(name);
    if (name && name[0] == 'c' && name[1] == 'u' && dlsym_logging()) {
        Dl_info di;
        char x[200];
        const char *from = "-";
        if (r && dladdr(r, &di) && di.dli_fname)
            from = di.dli_fname;
        snprintf(x, sizeof x, " found=%d from=%s handle=%s", r != NULL, from,
                 handle == RTLD_DEFAULT ? "DEFAULT" : handle == RTLD_NEXT ? "NEXT" : "lib");
        note("DLSYM", name, __builtin_return_address(0), x);
    }
    return r;
}
