#define _GNU_SOURCE
/* Drives the interposer (as libcuda.so.1) over fake_driver.so: checks that
 * thunks, cuGetProcAddress results and wrapped export-table slots deliver the
 * same results as the fake driver itself, in both modes (tail jump and
 * VC_PROBE_RETVALS=1 call-through). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct big { uint64_t x[5]; };
typedef int (*gpa_t)(const char *, void **, int, uint64_t, int *);
typedef int (*lk_t)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                    uint64_t, uint64_t);
static int fails;
#define T(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); fails++; } } while (0)

static const unsigned char U1[16] = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                     0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
static const unsigned char U2[16] = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                                     0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};
static const unsigned char U3[16] = {0x42, 0xd8, 0x5a, 0x81};

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    T(h);
    if (!h) return 1;
    Dl_info di;
    void *init = dlsym(h, "cuInit");
    T(init && dladdr(init, &di) && strstr(di.dli_fname, ".probe"));
    T(((int (*)(unsigned))init)(0) == 0);
    int n = 0;
    T(((int (*)(int *))dlsym(h, "cuDeviceGetCount"))(&n) == 0 && n == 3);
    lk_t lk = (lk_t)dlsym(h, "cuLaunchKernel");
    int expect = 1 + 2 * 2 + 3 * 3 + 4 * 4 + 5 * 5 + 6 * 6 + 7 * 7 + 8 * 8 + 9 * 9 + 10 * 10 + 11 * 11;
    T(lk(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) == expect);
    gpa_t gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
    void *p = NULL;
    int st = -1;
    T(gpa("cuGetProcAddress", &p, 13000, 0, &st) == 0 && p == (void *)gpa); /* our own handed back */
    T(gpa("cuLaunchKernel", &p, 13000, 0, &st) == 0 && p && p != (void *)lk);
    T(((lk_t)p)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) == expect);
    T(gpa("cuGetExportTable", &p, 13000, 0, &st) == 0 && p == dlsym(h, "cuGetExportTable"));
    T(gpa("cuNoSuch", &p, 13000, 0, &st) == 500 && st == 1);
    int (*get)(const void **, const void *) = (int (*)(const void **, const void *))dlsym(h, "cuGetExportTable");
    const uint64_t *t = NULL;
    T(get((const void **)&t, U1) == 0 && t && t[0] == 48);
    struct big (*fb)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) =
        (struct big (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))t[1];
    for (int r = 0; r < 5; r++) {
        struct big b = fb(10, 20, 30, 40, 5, 6, 7 + r);
        T(b.x[0] == 17 + (uint64_t)r && b.x[1] == 20 && b.x[2] == 30 && b.x[3] == 40 && b.x[4] == 30);
    }
    double (*ff)(double, int, double, float) = (double (*)(double, int, double, float))t[2];
    T(ff(1.5, 4, 0.25, 0.5f) == 1.5 * 4 + 0.25 - 0.5);
    int (*fo)(void **, int) = (int (*)(void **, int))t[3];
    void *o = NULL;
    T(fo(&o, 7) == 0 && o == (void *)14);
    T(fo(&o, 8) == 1 && o == (void *)16);
    T(t[4] == 0);
    int (*fv)(int, ...) = (int (*)(int, ...))t[5];
    T(fv(9, 1.0, 2.0, 3) == 9);
    const uint64_t *t2 = NULL;
    T(get((const void **)&t2, U2) == 0 && t2);
    T(((int (*)(void **, int))t2[0])(&o, 7) == 0 && o == (void *)14);
    T(((double (*)(double, int, double, float))t2[1])(2.0, 2, 1.0, 1.0f) == 4.0);
    const void *t3 = NULL;
    T(get(&t3, U3) == 0 && t3 == (const void *)1);
    const void *again = NULL;
    T(get(&again, U1) == 0 && again == (const void *)t);
    printf(fails ? "test_interposer: %d FAILED\n" : "test_interposer: OK%d\n", fails);
    return fails != 0;
}
