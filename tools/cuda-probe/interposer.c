/* cuda-probe: a logging, forwarding libcuda.so.1.
 *
 * Built with SONAME libcuda.so.1 and placed first on the library path, it
 * dlopens the real driver by absolute path and forwards every call to it,
 * logging what NVIDIA's runtime and math libraries ask of the driver:
 *   - every driver symbol called through its exported name (generated thunks,
 *     thunks.S), with the calling object, counted;
 *   - every cuGetProcAddress / cuGetProcAddress_v2 lookup (name, cudaVersion,
 *     flags, status, result); the result handed back is a counting trampoline
 *     around the real pointer, except for cuGetProcAddress{,_v2} and
 *     cuGetExportTable themselves, for which our own functions are returned;
 *   - every cuGetExportTable call (UUID); the table handed back is a copy of the
 *     driver's whose code pointers are replaced by counting trampolines; the
 *     size word (first qword, when it is not a code pointer) is preserved.
 * Log: file named by VC_PROBE_LOG (append, one line per event, each line one
 * write(2)); stderr when unset. A summary is written at exit.
 * VC_PROBE_RETVALS=1 calls through instead of tail-jumping, logging return
 * values and the memory behind pointer arguments of export-table slots.
 * VC_REAL_LIBCUDA names the real driver; otherwise the usual places are tried.
 *
 * Never a part of vcuda's guest library: a research tool (tools/cuda-probe).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "syms.h"

#define EXPORT __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

typedef int CUresult;
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_NOT_FOUND 500

enum { K_DIRECT, K_PROC, K_SLOT };

#define MAX_CALLERS 6
#define MAX_OBJS 128
#define MAX_TABLES 64
#define MAX_REQS 8192
#define TABLE_SCAN_MAX 160 /* qwords scanned/copied at most */
#define TABLE_EXTRA 8      /* qwords copied past the declared size */
#define SLOT_LOG_CALLS 3   /* arg dumps per (slot, caller) */

struct callrec {
    int obj;
    uint64_t n;
};

struct ent {
    int kind;
    int table, slot;   /* K_SLOT */
    int beyond;        /* K_SLOT: slot lies past the declared size */
    const char *name;  /* K_DIRECT: symbol; K_PROC: first name requested */
    void *real;
    int resolved;
    uint64_t count, nonzero_ret;
    int ncallers;
    struct callrec callers[MAX_CALLERS];
    uint64_t other_callers;
};

struct table {
    unsigned char uuid[16];
    const void *real;
    uint64_t *copy;
    uint64_t *snap_real; /* the real table as first seen */
    int nq;              /* qwords copied */
    int64_t sizeword;    /* -1: first qword is a code pointer */
    int declared;        /* qwords per size word (incl. the word), or 0 */
    int ncode;           /* code pointers wrapped */
    int leading;         /* no size word: qwords before the first data qword */
    int first_ent;       /* pool index of qword 0 (-1 where not code) */
    int ent_of[TABLE_SCAN_MAX];
    uint64_t requests;
    int readable;
    CUresult rc;
};

struct req {
    char name[64];
    int ver;
    uint64_t flags;
    int v2;
    int status;
    CUresult rc;
    int ent;   /* pool entry, -1 none, -2 own function */
    int obj;
    uint64_t n;
};

static struct ent ents[VC_NDIRECT + VC_NPOOL];
static int npool;
static char *objnames[MAX_OBJS];
static int nobjs;
static struct table tables[MAX_TABLES];
static int ntables;
static struct req *reqs;
static int nreqs;

static pthread_mutex_t mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int logfd = 2;
static char procname[64] = "?";
static void *real_handle;
static char real_path[512];
static void *real_base; /* load address of the real driver, to name it in caller lists */
static int retvals;
static struct timespec t0;
static uint64_t seq;

/* our own functions, handed out by cuGetProcAddress */
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, uint64_t flags);
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, uint64_t flags,
                                    int *symbolStatus);
EXPORT CUresult cuGetExportTable(const void **ppExportTable, const void *pExportTableId);
EXPORT CUresult cuInit(unsigned int flags);
EXPORT CUresult cuDriverGetVersion(int *driverVersion);

extern char vc_pool_tramps[] HIDDEN;

/* ---------------------------------------------------------------- log */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6;
}

__attribute__((format(printf, 1, 2))) static void vlog(const char *fmt, ...)
{
    char buf[8192];
    int n = snprintf(buf, sizeof buf, "VCP %s %d %" PRIu64 " %.3f ", procname, (int)getpid(),
                     __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED), now_ms());
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    n += m;
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(logfd, buf, (size_t)n);
    (void)w;
}

static void hex(char *out, const void *p, size_t len)
{
    static const char d[] = "0123456789abcdef";
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[2 * len] = 0;
}

/* Reads len bytes at addr without faulting; 0 on success. */
static int safe_read(void *dst, const void *addr, size_t len)
{
    struct iovec l = {dst, len}, r = {(void *)addr, len};
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* --------------------------------------------------------- real driver */

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) || stat(b, &sb))
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void open_real(void)
{
    Dl_info self;
    const char *selfpath = "";
    if (dladdr((void *)&open_real, &self) && self.dli_fname)
        selfpath = self.dli_fname;
    const char *cands[] = {getenv("VC_REAL_LIBCUDA"), "/usr/local/nvidia/lib64/libcuda.so.1",
                           "/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                           "/usr/lib64/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        const char *c = cands[i];
        if (!c || !*c || access(c, R_OK))
            continue;
        if (same_file(c, selfpath)) {
            vlog("REAL skip %s (is the interposer)", c);
            continue;
        }
        real_handle = dlopen(c, RTLD_NOW | RTLD_LOCAL);
        if (real_handle) {
            snprintf(real_path, sizeof real_path, "%s", c);
            Dl_info ri;
            void *sym = dlsym(real_handle, "cuInit");
            if (sym && dladdr(sym, &ri))
                real_base = ri.dli_fbase;
            vlog("REAL loaded %s (interposer %s)", c, selfpath);
            return;
        }
        vlog("REAL dlopen %s failed: %s", c, dlerror());
    }
    vlog("REAL none found; every call returns CUDA_ERROR_NO_DEVICE");
}

static void init(void)
{
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *p = getenv("VC_PROBE_LOG");
    if (p && *p) {
        int fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
            logfd = fd;
    }
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, procname, sizeof procname - 1);
        if (n > 0) {
            procname[n] = 0;
            char *nl = strchr(procname, '\n');
            if (nl)
                *nl = 0;
            for (char *c = procname; *c; c++)
                if (*c == ' ')
                    *c = '_';
        }
        close(fd);
    }
    const char *rv = getenv("VC_PROBE_RETVALS");
    retvals = rv && *rv == '1';
    reqs = calloc(MAX_REQS, sizeof *reqs);
    for (int i = 0; i < VC_NDIRECT; i++) {
        ents[i].kind = K_DIRECT;
        ents[i].name = vc_direct_names[i];
    }
    vlog("START retvals=%d ndirect=%d", retvals, VC_NDIRECT);
    open_real();
}

static void ensure_init(void) { pthread_once(&once, init); }

/* --------------------------------------------------------- callers */

static int obj_index(const char *name)
{
    for (int i = 0; i < nobjs; i++)
        if (!strcmp(objnames[i], name))
            return i;
    if (nobjs == MAX_OBJS)
        return MAX_OBJS - 1;
    objnames[nobjs] = strdup(name);
    return nobjs++;
}

#define CACHE 16384
static uintptr_t cache_key[CACHE];
static int cache_obj[CACHE];

static int caller_obj(const void *ret)
{
    uintptr_t k = (uintptr_t)ret;
    unsigned h = (unsigned)((k >> 4) * 2654435761u) % CACHE;
    for (unsigned i = 0; i < CACHE; i++) {
        unsigned j = (h + i) % CACHE;
        if (cache_key[j] == k)
            return cache_obj[j];
        if (!cache_key[j]) {
            Dl_info di;
            const char *nm = "?";
            char buf[300];
            if (dladdr(ret, &di) && real_base && di.dli_fbase == real_base) {
                nm = "REAL-libcuda"; /* the real driver calling its own exports (LD_PRELOAD) */
            } else if (dladdr(ret, &di) && di.dli_fname) {
                nm = di.dli_fname;
                const char *sl = strrchr(nm, '/');
                if (sl)
                    nm = sl + 1;
                if (!*nm) {
                    snprintf(buf, sizeof buf, "<main:%s>", procname);
                    nm = buf;
                }
            }
            int o = obj_index(nm);
            cache_key[j] = k;
            cache_obj[j] = o;
            return o;
        }
    }
    return obj_index("?");
}

/* ------------------------------------------------------------ entries */

static CUresult vc_missing(void) { return CUDA_ERROR_NO_DEVICE; }

static void ent_label(int idx, char *buf, size_t len)
{
    const struct ent *e = &ents[idx];
    if (e->kind == K_SLOT) {
        char u[33];
        hex(u, tables[e->table].uuid, 16);
        snprintf(buf, len, "table=%.8s slot=%d%s", u, e->slot, e->beyond ? " (beyond size)" : "");
    } else {
        snprintf(buf, len, "%s=%s", e->kind == K_DIRECT ? "direct" : "proc", e->name ? e->name : "?");
    }
}

static void resolve_direct(int idx)
{
    struct ent *e = &ents[idx];
    if (e->resolved)
        return;
    void *p = real_handle ? dlsym(real_handle, e->name) : NULL;
    e->real = p ? p : (void *)vc_missing;
    e->resolved = 1;
    if (!p)
        vlog("RESOLVE-FAIL %s (real driver lacks it; returns %d)", e->name, CUDA_ERROR_NO_DEVICE);
}

static int new_pool_ent(int kind, void *real)
{
    if (npool == VC_NPOOL)
        return -1;
    int idx = VC_NDIRECT + npool++;
    ents[idx].kind = kind;
    ents[idx].real = real;
    ents[idx].resolved = 1;
    return idx;
}

static void *pool_addr(int idx) { return vc_pool_tramps + 16 * (idx - VC_NDIRECT); }

/* Dumps the 32 bytes behind each register argument that points to readable memory. */
static void dump_ptr_args(char *out, size_t len, const uint64_t *regs)
{
    size_t n = 0;
    out[0] = 0;
    for (int a = 0; a < 6 && n < len; a++) {
        unsigned char b[32];
        char h[65];
        if (regs[a] < 65536 || safe_read(b, (void *)regs[a], sizeof b))
            continue;
        hex(h, b, sizeof b);
        n += (size_t)snprintf(out + n, len - n, " *a%d=%s", a, h);
    }
}

struct vc_ret {
    void *target;
    uint64_t mode;
};

/* Called by vc_common for every call of a thunk or trampoline. regs: saved
 * rdi rsi rdx rcx r8 r9 rax r10; stack: the caller's stack arguments. */
HIDDEN struct vc_ret vc_dispatch(uint64_t idx, void *ret, uint64_t *regs, uint64_t *stack)
{
    ensure_init();
    struct vc_ret r = {(void *)vc_missing, 0};
    if (idx >= (uint64_t)(VC_NDIRECT + VC_NPOOL))
        return r;
    pthread_mutex_lock(&mu);
    struct ent *e = &ents[idx];
    if (e->kind == K_DIRECT && !e->resolved)
        resolve_direct((int)idx);
    e->count++;
    int o = caller_obj(ret);
    struct callrec *c = NULL;
    for (int i = 0; i < e->ncallers; i++)
        if (e->callers[i].obj == o)
            c = &e->callers[i];
    if (!c && e->ncallers < MAX_CALLERS) {
        c = &e->callers[e->ncallers++];
        c->obj = o;
    }
    uint64_t pairn = 0;
    if (c)
        pairn = ++c->n;
    else
        e->other_callers++;
    int lim = e->kind == K_SLOT ? SLOT_LOG_CALLS : 1;
    int logit = c && pairn <= (uint64_t)lim;
    if (logit) {
        char lab[160], mem[600] = "";
        ent_label((int)idx, lab, sizeof lab);
        if (e->kind == K_SLOT)
            dump_ptr_args(mem, sizeof mem, regs);
        vlog("CALL %s caller=%s n=%" PRIu64 " args=%" PRIx64 ",%" PRIx64 ",%" PRIx64 ",%" PRIx64 ",%" PRIx64
             ",%" PRIx64 " stk=%" PRIx64 ",%" PRIx64 "%s",
             lab, objnames[o], pairn, regs[0], regs[1], regs[2], regs[3], regs[4], regs[5], stack[0], stack[1],
             mem);
    }
    r.target = e->real;
    if (retvals)
        r.mode = logit ? 2 : 1;
    pthread_mutex_unlock(&mu);
    return r;
}

/* Called after a call-through (VC_PROBE_RETVALS=1). frame: see thunks.S. */
HIDDEN void vc_after(uint64_t idx, uint64_t *frame, void *ret, uint64_t mode)
{
    if (idx >= (uint64_t)(VC_NDIRECT + VC_NPOOL))
        return;
    uint64_t rax = frame[26];
    pthread_mutex_lock(&mu);
    struct ent *e = &ents[idx];
    if ((uint32_t)rax != 0)
        e->nonzero_ret++;
    int first_err = (uint32_t)rax != 0 && e->nonzero_ret <= 2;
    if (mode == 2 || first_err) {
        char lab[160], mem[600] = "";
        ent_label((int)idx, lab, sizeof lab);
        if (e->kind == K_SLOT)
            dump_ptr_args(mem, sizeof mem, frame);
        vlog("RET %s caller=%s rax=%" PRIx64 " rdx=%" PRIx64 "%s", lab, objnames[caller_obj(ret)], rax, frame[27],
             mem);
    }
    pthread_mutex_unlock(&mu);
}

/* ----------------------------------------------------- own functions */

static void note_direct(const char *name, void *ret, const char *extra)
{
    /* accounts a call of an exported C function as a direct call */
    pthread_mutex_lock(&mu);
    int o = caller_obj(ret);
    vlog("CALL direct=%s caller=%s %s", name, objnames[o], extra);
    pthread_mutex_unlock(&mu);
}

EXPORT CUresult cuInit(unsigned int flags)
{
    ensure_init();
    void *ret = __builtin_return_address(0);
    CUresult (*f)(unsigned) = real_handle ? (CUresult(*)(unsigned))dlsym(real_handle, "cuInit") : NULL;
    CUresult rc = f ? f(flags) : CUDA_ERROR_NO_DEVICE;
    char x[64];
    snprintf(x, sizeof x, "flags=%u rc=%d", flags, rc);
    note_direct("cuInit", ret, x);
    return rc;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    ensure_init();
    void *ret = __builtin_return_address(0);
    CUresult (*f)(int *) = real_handle ? (CUresult(*)(int *))dlsym(real_handle, "cuDriverGetVersion") : NULL;
    CUresult rc = f ? f(v) : CUDA_ERROR_NO_DEVICE;
    char x[64];
    snprintf(x, sizeof x, "rc=%d version=%d", rc, (rc == 0 && v) ? *v : -1);
    note_direct("cuDriverGetVersion", ret, x);
    return rc;
}

static CUresult gpa(const char *symbol, void **pfn, int ver, uint64_t flags, int *status, int v2, void *ret)
{
    ensure_init();
    CUresult rc;
    int st = -1;
    void *p = NULL;
    if (!real_handle) {
        rc = CUDA_ERROR_NO_DEVICE;
    } else if (v2) {
        static CUresult (*f)(const char *, void **, int, uint64_t, int *);
        if (!f)
            f = (CUresult(*)(const char *, void **, int, uint64_t, int *))dlsym(real_handle, "cuGetProcAddress_v2");
        rc = f ? f(symbol, &p, ver, flags, &st) : CUDA_ERROR_NOT_FOUND;
    } else {
        static CUresult (*f)(const char *, void **, int, uint64_t);
        if (!f)
            f = (CUresult(*)(const char *, void **, int, uint64_t))dlsym(real_handle, "cuGetProcAddress");
        rc = f ? f(symbol, &p, ver, flags) : CUDA_ERROR_NOT_FOUND;
    }
    void *out = p;
    int entno = -1;
    pthread_mutex_lock(&mu);
    if (rc == 0 && p) {
        void *own_v1 = dlsym(real_handle, "cuGetProcAddress");
        void *own_v2 = dlsym(real_handle, "cuGetProcAddress_v2");
        void *own_et = dlsym(real_handle, "cuGetExportTable");
        const char *sn = symbol ? symbol : "";
        void *q = p; /* what to compare: the real pointer, or by name for aliases */
        if (p != own_v1 && p != own_v2 && p != own_et) {
            /* the driver may hand out an internal alias: decide by name */
            if (!strcmp(sn, "cuGetProcAddress_v2") || (!strcmp(sn, "cuGetProcAddress") && ver >= 12000))
                q = own_v2;
            else if (!strcmp(sn, "cuGetProcAddress"))
                q = own_v1;
            else if (!strcmp(sn, "cuGetExportTable"))
                q = own_et;
            if (q != p)
                vlog("GPA-ALIAS sym=%s ver=%d real=%p is not the exported symbol; handing our own", sn, ver, p);
        }
        if (q == own_v2) {
            out = (void *)cuGetProcAddress_v2;
            entno = -2;
        } else if (q == own_v1) {
            out = (void *)cuGetProcAddress;
            entno = -2;
        } else if (q == own_et) {
            out = (void *)cuGetExportTable;
            entno = -2;
        } else {
            for (int i = VC_NDIRECT; i < VC_NDIRECT + npool; i++)
                if (ents[i].kind == K_PROC && ents[i].real == p) {
                    entno = i;
                    break;
                }
            if (entno < 0) {
                entno = new_pool_ent(K_PROC, p);
                if (entno >= 0)
                    ents[entno].name = strdup(symbol ? symbol : "?");
            }
            if (entno >= 0)
                out = pool_addr(entno);
        }
    }
    if (pfn)
        *pfn = out;
    if (status)
        *status = st;
    int o = caller_obj(ret);
    struct req *q = NULL;
    for (int i = 0; i < nreqs; i++)
        if (reqs[i].ver == ver && reqs[i].flags == flags && reqs[i].obj == o && reqs[i].v2 == v2 &&
            !strncmp(reqs[i].name, symbol ? symbol : "", sizeof reqs[i].name))
            q = &reqs[i];
    if (!q && nreqs < MAX_REQS) {
        q = &reqs[nreqs++];
        snprintf(q->name, sizeof q->name, "%s", symbol ? symbol : "(null)");
        q->ver = ver;
        q->flags = flags;
        q->v2 = v2;
        q->obj = o;
        q->status = st;
        q->rc = rc;
        q->ent = entno;
    }
    if (q && q->n++ == 0) {
        char lab[64] = "none";
        if (entno == -2)
            snprintf(lab, sizeof lab, "own");
        else if (entno >= 0)
            snprintf(lab, sizeof lab, "ent%d", entno);
        Dl_info di;
        const char *rs = "";
        if (p && dladdr(p, &di) && di.dli_sname)
            rs = di.dli_sname;
        vlog("GPA%s sym=%s ver=%d flags=%" PRIu64 " rc=%d status=%d real=%p(%s) handed=%s caller=%s", v2 ? "2" : "1",
             symbol ? symbol : "(null)", ver, flags, rc, st, p, rs, lab, objnames[o]);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, uint64_t flags)
{
    return gpa(symbol, pfn, cudaVersion, flags, NULL, 0, __builtin_return_address(0));
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, uint64_t flags, int *symbolStatus)
{
    return gpa(symbol, pfn, cudaVersion, flags, symbolStatus, 1, __builtin_return_address(0));
}

/* ------------------------------------------- integrity check (d4082055) */
/* NVIDIA's runtime authenticates the driver: export table d4082055 slot 1,
 * (u32 version, u64 unix_seconds, u64 out[2]) -> CUresult. For version % 10
 * of 0 and 1 the answer is a constant; otherwise it is an HMAC (RFC 2104) with
 * MD2 (RFC 1319) over the driver version, the version asked, pid, thread, the
 * addresses of the cudart-interface table (6bd5fb6c) and of the
 * integrity-check table as the runtime received them, the slot's function
 * address, the time, then each device's UUID and PCI domain/bus/device (see
 * docs/cuda13-driver-surface.md for the sources). The runtime recomputes it
 * from its own view, so a wrapped table fails the check ("integrity checks
 * failed", 103) unless the answer is computed over the wrapped addresses,
 * which this interposer does; it also recomputes the driver's answer over the
 * real addresses and logs whether it matches (IC-VERIFY). */

static const unsigned char md2_s[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,   243, 192, 199,
    115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,
    138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122, 169, 104,
    121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,  128, 127, 93,  154, 90,  144, 50,  39,
    53,  62,  204, 231, 191, 247, 151, 3,   255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,
    170, 198, 79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,
    100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246, 28,  70,
    97,  105, 52,  64,  126, 15,  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,
    44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,  106, 220, 55,  200, 108, 193,
    171, 250, 36,  225, 123, 8,   12,  189, 177, 74,  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254,
    59,  0,   29,  57,  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,  49,  68,
    80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20};

struct md2 {
    unsigned char x[48], c[16], buf[16];
    unsigned n;
};

static void md2_block(struct md2 *m, const unsigned char *blk)
{
    unsigned char l = m->c[15];
    for (int j = 0; j < 16; j++) {
        m->x[16 + j] = blk[j];
        m->x[32 + j] = (unsigned char)(m->x[j] ^ blk[j]);
        l = m->c[j] ^= md2_s[blk[j] ^ l];
    }
    unsigned t = 0;
    for (unsigned r = 0; r < 18; r++) {
        for (int k = 0; k < 48; k++)
            t = m->x[k] ^= md2_s[t];
        t = (t + r) & 0xff;
    }
}

static void md2_init(struct md2 *m) { memset(m, 0, sizeof *m); }

static void md2_update(struct md2 *m, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len--) {
        m->buf[m->n++] = *p++;
        if (m->n == 16) {
            md2_block(m, m->buf);
            m->n = 0;
        }
    }
}

static void md2_final(struct md2 *m, unsigned char out[16])
{
    unsigned char pad[16], ck[16];
    unsigned k = 16 - m->n;
    memset(pad, (int)k, sizeof pad);
    md2_update(m, pad, k);
    memcpy(ck, m->c, 16);
    md2_update(m, ck, 16);
    memcpy(out, m->x, 16);
}

static const unsigned char ic_key[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
                                         0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f};

struct ic_msg {
    uint32_t driver_version, version, pid, tid;
    uint64_t cudart_table, integrity_table, fn, unix_seconds;
};
struct ic_dev {
    unsigned char uuid[16];
    int32_t domain, bus, device;
};

static CUresult (*ic_real_fn)(uint32_t, uint64_t, uint64_t *);
static int ic_ent = -1;

static int ic_devices(struct ic_dev *d, int max)
{
    CUresult (*cnt)(int *) = (CUresult(*)(int *))dlsym(real_handle, "cuDeviceGetCount");
    CUresult (*uuid)(void *, int) = (CUresult(*)(void *, int))dlsym(real_handle, "cuDeviceGetUuid_v2");
    CUresult (*attr)(int *, int, int) = (CUresult(*)(int *, int, int))dlsym(real_handle, "cuDeviceGetAttribute");
    int n = 0;
    if (!cnt || !uuid || !attr || cnt(&n))
        return 0;
    if (n > max)
        n = max;
    for (int i = 0; i < n; i++) {
        memset(&d[i], 0, sizeof d[i]);
        uuid(d[i].uuid, i);
        attr(&d[i].domain, 50, i); /* CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID */
        attr(&d[i].bus, 33, i);    /* CU_DEVICE_ATTRIBUTE_PCI_BUS_ID */
        attr(&d[i].device, 34, i); /* CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID */
    }
    return n;
}

static void ic_hmac(uint32_t dv, uint32_t version, uint32_t tid, uint64_t secs, const void *cudart_tbl,
                    const void *ic_tbl, const void *fn, const struct ic_dev *devs, int nd, uint64_t out[2])
{
    struct ic_msg msg;
    memset(&msg, 0, sizeof msg);
    msg.driver_version = dv;
    msg.version = version;
    msg.pid = (uint32_t)getpid();
    msg.tid = tid;
    msg.cudart_table = (uint64_t)(uintptr_t)cudart_tbl;
    msg.integrity_table = (uint64_t)(uintptr_t)ic_tbl;
    msg.fn = (uint64_t)(uintptr_t)fn;
    msg.unix_seconds = secs;
    unsigned char k[16], inner[16];
    struct md2 m;
    md2_init(&m);
    for (int i = 0; i < 16; i++)
        k[i] = ic_key[i] ^ 0x36;
    md2_update(&m, k, 16);
    md2_update(&m, &msg, sizeof msg);
    for (int i = 0; i < nd; i++)
        md2_update(&m, &devs[i], sizeof devs[i]);
    md2_final(&m, inner);
    md2_init(&m);
    for (int i = 0; i < 16; i++)
        k[i] = ic_key[i] ^ 0x5c;
    md2_update(&m, k, 16);
    md2_update(&m, inner, 16);
    md2_final(&m, (unsigned char *)out);
}

static struct table *table_by_prefix(uint32_t be_prefix);

/* Handed out in place of d4082055 slot 1 (behind its counting trampoline). */
static CUresult vc_integrity_check(uint32_t version, uint64_t secs, uint64_t *out)
{
    uint64_t drv[2] = {0, 0};
    CUresult rc = ic_real_fn ? ic_real_fn(version, secs, drv) : CUDA_ERROR_NO_DEVICE;
    if (rc != 0 || !out) {
        if (out)
            memcpy(out, drv, sizeof drv);
        return rc;
    }
    if (version % 10 < 2) {
        memcpy(out, drv, sizeof drv);
        return rc;
    }
    pthread_mutex_lock(&mu);
    struct table *ct = table_by_prefix(0x6bd5fb6c), *it = table_by_prefix(0xd4082055);
    const void *ct_real = ct ? ct->real : NULL, *it_real = it ? it->real : NULL;
    const void *ct_seen = ct && ct->copy ? (const void *)ct->copy : ct_real;
    const void *it_seen = it && it->copy ? (const void *)it->copy : it_real;
    const void *fn_seen = it && it->copy ? (const void *)(uintptr_t)it->copy[1] : (const void *)ic_real_fn;
    pthread_mutex_unlock(&mu);
    /* which thread id and driver version does the driver hash? try the candidates */
    int dvq = 0;
    CUresult (*gv)(int *) = (CUresult(*)(int *))dlsym(real_handle, "cuDriverGetVersion");
    if (gv)
        gv(&dvq);
    struct ic_dev devs[64];
    int nd = ic_devices(devs, 64);
    uint32_t tids[3] = {(uint32_t)(uintptr_t)pthread_self(), (uint32_t)gettid(), 0};
    uint32_t dvs[2] = {(uint32_t)dvq, version - version % 10};
    const char *tidn[3] = {"pthread_self", "gettid", "zero"};
    uint64_t check[2] = {0, 0}, mine[2];
    int found = -1;
    for (int a = 0; a < 3 && found < 0; a++)
        for (int b = 0; b < 2 && found < 0; b++) {
            ic_hmac(dvs[b], version, tids[a], secs, ct_real, it_real, (const void *)ic_real_fn, devs, nd, check);
            if (!memcmp(check, drv, sizeof drv))
                found = a * 2 + b;
        }
    if (found < 0) {
        vlog("IC-VERIFY version=%u secs=%" PRIu64 " driver=%016" PRIx64 "%016" PRIx64
             " match=0: no candidate reproduces the driver's answer; handing the driver's (will fail)",
             version, secs, drv[0], drv[1]);
        memcpy(out, drv, sizeof drv);
        return rc;
    }
    ic_hmac(dvs[found % 2], version, tids[found / 2], secs, ct_seen, it_seen, fn_seen, devs, nd, mine);
    vlog("IC-VERIFY version=%u secs=%" PRIu64 " driver=%016" PRIx64 "%016" PRIx64 " match=1 tid=%s dv=%u ndev=%d"
         " handed=%016" PRIx64 "%016" PRIx64 " (over wrapped addresses)",
         version, secs, drv[0], drv[1], tidn[found / 2], dvs[found % 2], nd, mine[0], mine[1]);
    memcpy(out, mine, sizeof mine);
    return rc;
}

/* ----------------------------------------------------- export tables */

struct maprange {
    uintptr_t lo, hi;
    char perm[5];
    char path[160];
};
static struct maprange *maps;
static int nmaps;

static void read_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    if (!maps)
        maps = calloc(8192, sizeof *maps);
    nmaps = 0;
    char line[600];
    while (nmaps < 8192 && fgets(line, sizeof line, f)) {
        struct maprange *m = &maps[nmaps];
        unsigned long lo, hi;
        char perm[5] = "", path[400] = "";
        if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %399[^\n]", &lo, &hi, perm, path) < 3)
            continue;
        m->lo = lo;
        m->hi = hi;
        memcpy(m->perm, perm, 5);
        const char *s = strrchr(path, '/');
        snprintf(m->path, sizeof m->path, "%s", s ? s + 1 : path);
        nmaps++;
    }
    fclose(f);
}

static const struct maprange *map_of(uintptr_t a)
{
    for (int i = 0; i < nmaps; i++)
        if (a >= maps[i].lo && a < maps[i].hi)
            return &maps[i];
    return NULL;
}

static int is_code(uint64_t v)
{
    const struct maprange *m = map_of((uintptr_t)v);
    return m && m->perm[2] == 'x';
}

static int readable_qwords(const void *p)
{
    /* how many qwords from p are readable in one mapping (capped) */
    const struct maprange *m = map_of((uintptr_t)p);
    if (!m || m->perm[0] != 'r')
        return 0;
    uintptr_t n = (m->hi - (uintptr_t)p) / 8;
    return n > TABLE_SCAN_MAX ? TABLE_SCAN_MAX : (int)n;
}

static void wrap_table(struct table *t)
{
    read_maps();
    const uint64_t *src = t->real;
    int avail = readable_qwords(src);
    t->readable = avail > 0;
    t->sizeword = -1;
    t->first_ent = -1;
    for (int i = 0; i < TABLE_SCAN_MAX; i++)
        t->ent_of[i] = -1;
    if (!avail)
        return;
    int nq;
    if (!is_code(src[0]) && src[0] > 0 && src[0] < 65536 && src[0] % 8 == 0) {
        t->sizeword = (int64_t)src[0];
        t->declared = (int)(src[0] / 8);
        nq = t->declared + TABLE_EXTRA;
    } else {
        /* no size word: copy while qwords are code pointers or NULL, then a few more */
        if (!is_code(src[0]) && src[0] != 0)
            t->sizeword = (int64_t)src[0];
        int last = 0;
        for (int i = 0; i < avail; i++) {
            if (is_code(src[i]))
                last = i;
            else if (src[i] != 0 && i > 0)
                break;
        }
        t->leading = last + 1;
        nq = last + 1 + TABLE_EXTRA;
    }
    if (nq > avail)
        nq = avail;
    t->nq = nq;
    t->copy = calloc((size_t)nq, 8);
    t->snap_real = calloc((size_t)nq, 8);
    memcpy(t->copy, src, (size_t)nq * 8);
    memcpy(t->snap_real, src, (size_t)nq * 8);
    for (int i = 0; i < nq; i++) {
        if (!is_code(src[i]))
            continue;
        int e = new_pool_ent(K_SLOT, (void *)src[i]);
        if (e < 0)
            break;
        ents[e].table = (int)(t - tables);
        ents[e].slot = i;
        ents[e].beyond = t->declared ? i >= t->declared : i >= t->leading;
        t->ent_of[i] = e;
        t->copy[i] = (uint64_t)(uintptr_t)pool_addr(e);
        t->ncode++;
    }
}

static struct table *table_by_prefix(uint32_t be_prefix)
{
    for (int i = 0; i < ntables; i++) {
        const unsigned char *u = tables[i].uuid;
        if (((uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3]) == be_prefix)
            return &tables[i];
    }
    return NULL;
}

/* VC_PROBE_UNWRAP: comma-separated UUID prefixes (8 hex digits) of tables to hand out unwrapped */
static int unwrap_requested(const char *uuidhex)
{
    const char *e = getenv("VC_PROBE_UNWRAP");
    if (!e)
        return 0;
    if (!strcmp(e, "all"))
        return 1;
    for (const char *p = e; *p;) {
        if (!strncmp(p, uuidhex, 8))
            return 1;
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    return 0;
}

EXPORT CUresult cuGetExportTable(const void **ppExportTable, const void *pExportTableId)
{
    ensure_init();
    void *ret = __builtin_return_address(0);
    static CUresult (*f)(const void **, const void *);
    if (real_handle && !f)
        f = (CUresult(*)(const void **, const void *))dlsym(real_handle, "cuGetExportTable");
    const void *tbl = NULL;
    CUresult rc = f ? f(&tbl, pExportTableId) : CUDA_ERROR_NO_DEVICE;
    unsigned char id[16] = {0};
    if (pExportTableId)
        memcpy(id, pExportTableId, 16);
    char u[33];
    hex(u, id, 16);
    pthread_mutex_lock(&mu);
    int o = caller_obj(ret);
    struct table *t = NULL;
    for (int i = 0; i < ntables; i++)
        if (!memcmp(tables[i].uuid, id, 16))
            t = &tables[i];
    int fresh = 0;
    if (!t && ntables < MAX_TABLES) {
        t = &tables[ntables++];
        memcpy(t->uuid, id, 16);
        t->rc = rc;
        t->real = tbl;
        t->sizeword = -1;
        fresh = 1;
        if (rc == 0 && tbl && !unwrap_requested(u))
            wrap_table(t);
        else if (rc == 0 && tbl)
            vlog("ETBL-UNWRAPPED uuid=%s (VC_PROBE_UNWRAP)", u);
        if (t->copy && !memcmp(id, "\xd4\x08\x20\x55", 4) && t->nq > 1 && t->ent_of[1] >= 0 && !getenv("VC_PROBE_NO_IC")) {
            ic_ent = t->ent_of[1];
            ic_real_fn = (CUresult(*)(uint32_t, uint64_t, uint64_t *))ents[ic_ent].real;
            ents[ic_ent].real = (void *)vc_integrity_check;
            vlog("IC-EMULATE d4082055 slot 1 answered over the wrapped addresses (real fn %p)", (void *)ic_real_fn);
        }
    }
    const void *out = tbl;
    if (t) {
        t->requests++;
        if (rc == 0 && t->copy && t->real == tbl)
            out = t->copy;
    }
    if (ppExportTable)
        *ppExportTable = rc == 0 ? out : tbl;
    if (t && (fresh || t->requests <= 3)) {
        char first[40] = "";
        if (t->readable)
            snprintf(first, sizeof first, "%" PRIx64, ((const uint64_t *)tbl)[0]);
        vlog("ETBL uuid=%s rc=%d real=%p readable=%d qword0=%s sizeword=%" PRId64
             " declared_qwords=%d leading_code=%d copied=%d code_ptrs=%d handed=%s caller=%s req=%" PRIu64,
             u, rc, tbl, t->readable, first, t->sizeword, t->declared, t->leading, t->nq, t->ncode,
             out == tbl ? "real" : "wrapped", objnames[o], t->requests);
        if (fresh && t->copy) {
            /* layout: per qword c=code (wrapped), 0=NULL, d=data */
            char lay[TABLE_SCAN_MAX + 1];
            const uint64_t *src = tbl;
            for (int i = 0; i < t->nq; i++)
                lay[i] = t->ent_of[i] >= 0 ? 'c' : src[i] == 0 ? '0' : 'd';
            lay[t->nq] = 0;
            vlog("ETBL-LAYOUT uuid=%s %s", u, lay);
            for (int i = 0; i < t->nq; i++) {
                if (t->ent_of[i] >= 0) {
                    Dl_info di;
                    const char *mp = "";
                    const struct maprange *m = map_of((uintptr_t)src[i]);
                    if (m)
                        mp = m->path;
                    long off = 0;
                    if (dladdr((void *)src[i], &di) && di.dli_fbase)
                        off = (long)((uintptr_t)src[i] - (uintptr_t)di.dli_fbase);
                    vlog("ETBL-SLOT uuid=%s slot=%d real=%" PRIx64 " in=%s+0x%lx ent=%d", u, i, src[i], mp, off,
                         t->ent_of[i]);
                } else if (src[i]) {
                    vlog("ETBL-DATA uuid=%s slot=%d value=%" PRIx64, u, i, src[i]);
                }
            }
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* ------------------------------------------------------------ summary */

static int summaries;

static void summary(const char *why)
{
    pthread_mutex_lock(&mu);
    summaries++;
    vlog("SUMMARY-BEGIN %s #%d", why, summaries);
    for (int i = 0; i < ntables; i++) {
        struct table *t = &tables[i];
        char u[33];
        hex(u, t->uuid, 16);
        vlog("S-TABLE uuid=%s rc=%d requests=%" PRIu64 " sizeword=%" PRId64
             " declared_qwords=%d leading_code=%d copied=%d code_ptrs=%d",
             u, t->rc, t->requests, t->sizeword, t->declared, t->leading, t->nq, t->ncode);
        if (t->copy) {
            for (int q = 0; q < t->nq; q++) {
                uint64_t r;
                if (t->ent_of[q] < 0 && t->copy[q] != t->snap_real[q])
                    vlog("S-TABLE-WRITTEN uuid=%s slot=%d caller wrote %" PRIx64 " (was %" PRIx64 ")", u, q,
                         t->copy[q], t->snap_real[q]);
                if (t->ent_of[q] >= 0 && t->copy[q] != (uint64_t)(uintptr_t)pool_addr(t->ent_of[q]))
                    vlog("S-TABLE-WRITTEN uuid=%s slot=%d caller overwrote wrapped slot with %" PRIx64, u, q, t->copy[q]);
                if (!safe_read(&r, (const uint64_t *)t->real + q, 8) && r != t->snap_real[q])
                    vlog("S-TABLE-CHANGED uuid=%s slot=%d real table now %" PRIx64 " (was %" PRIx64 ")", u, q, r,
                         t->snap_real[q]);
            }
        }
    }
    for (int i = 0; i < VC_NDIRECT + npool; i++) {
        struct ent *e = &ents[i];
        if (!e->count)
            continue;
        char lab[160], cl[600];
        size_t n = 0;
        cl[0] = 0;
        for (int k = 0; k < e->ncallers && n < sizeof cl; k++)
            n += (size_t)snprintf(cl + n, sizeof cl - n, "%s%s:%" PRIu64, k ? "," : "", objnames[e->callers[k].obj],
                                  e->callers[k].n);
        ent_label(i, lab, sizeof lab);
        vlog("S-CALLS %s count=%" PRIu64 " nonzero_ret=%" PRIu64 " callers=%s%s", lab, e->count, e->nonzero_ret, cl,
             e->other_callers ? " +others" : "");
    }
    for (int i = 0; i < nreqs; i++) {
        struct req *q = &reqs[i];
        uint64_t calls = q->ent >= 0 ? ents[q->ent].count : 0;
        vlog("S-GPA v%d sym=%s ver=%d flags=%" PRIu64 " rc=%d status=%d handed=%s calls_of_target=%" PRIu64
             " caller=%s n=%" PRIu64,
             q->v2 ? 2 : 1, q->name, q->ver, q->flags, q->rc, q->status,
             q->ent == -2 ? "own" : q->ent >= 0 ? "wrapped" : "none", calls, objnames[q->obj], q->n);
    }
    vlog("SUMMARY-END %s #%d pool_used=%d/%d objs=%d", why, summaries, npool, VC_NPOOL, nobjs);
    pthread_mutex_unlock(&mu);
}

static void at_exit(void) { summary("atexit"); }

__attribute__((constructor)) static void ctor(void)
{
    ensure_init();
    atexit(at_exit);
}

__attribute__((destructor)) static void dtor(void) { summary("destructor"); }
