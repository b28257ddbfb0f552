/* A fake "real driver" for testing the interposer without a GPU: exports a few
 * driver names with checkable behaviour, a cuGetProcAddress_v2 and a
 * cuGetExportTable whose tables mimic the shapes seen in libcuda (a size word
 * then function pointers; a table without size word). The slots take many
 * arguments (stack arguments), doubles, and return a struct in memory, so that
 * the trampolines' register and stack handling is exercised. */
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int cuInit(unsigned f) { return f == 0 ? 0 : 1; }
EXPORT int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
EXPORT int cuDeviceGetCount(int *n) { *n = 3; return 0; }

/* 11 arguments: 5 of them on the stack */
EXPORT int cuLaunchKernel(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f, uint64_t g,
                          uint64_t h, uint64_t i, uint64_t j, uint64_t k)
{
    return (int)(a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j + 11 * k);
}

struct big { uint64_t x[5]; };
static struct big slot_big(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f, uint64_t g)
{
    struct big r = {{a + g, b, c, d, e * f}};
    return r;
}
static double slot_fp(double x, int n, double y, float z) { return x * n + y - z; }
static int slot_out(void **out, int v) { *out = (void *)(uintptr_t)(v * 2); return v == 7 ? 0 : 1; }
static int slot_var(int n, ...) { return n; } /* varargs: %al must survive */

static const uint64_t table_sized[] = {6 * 8, (uint64_t)(uintptr_t)slot_big, (uint64_t)(uintptr_t)slot_fp,
                                       (uint64_t)(uintptr_t)slot_out, 0, (uint64_t)(uintptr_t)slot_var};
static const uint64_t table_nosize[] = {(uint64_t)(uintptr_t)slot_out, (uint64_t)(uintptr_t)slot_fp, 0};
static const unsigned char U1[16] = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                     0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
static const unsigned char U2[16] = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                                     0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};
static const unsigned char U3[16] = {0x42, 0xd8, 0x5a, 0x81};

EXPORT int cuGetExportTable(const void **t, const void *id)
{
    if (!memcmp(id, U1, 16)) { *t = table_sized; return 0; }
    if (!memcmp(id, U2, 16)) { *t = table_nosize; return 0; }
    if (!memcmp(id, U3, 16)) { *t = (const void *)1; return 0; } /* not a pointer */
    return 500;
}

EXPORT int cuGetProcAddress_v2(const char *s, void **p, int ver, uint64_t flags, int *st)
{
    (void)ver; (void)flags;
    void *r = NULL;
    if (!strcmp(s, "cuGetProcAddress")) r = (void *)cuGetProcAddress_v2;
    else if (!strcmp(s, "cuLaunchKernel")) r = (void *)cuLaunchKernel;
    else if (!strcmp(s, "cuDeviceGetCount")) r = (void *)cuDeviceGetCount;
    else if (!strcmp(s, "cuGetExportTable")) r = (void *)cuGetExportTable;
    *p = r;
    if (st) *st = r ? 0 : 1;
    return r ? 0 : 500;
}
EXPORT int cuGetProcAddress(const char *s, void **p, int ver, uint64_t flags)
{
    return cuGetProcAddress_v2(s, p, ver, flags, NULL);
}
