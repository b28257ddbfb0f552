/* Plain C program that dlopens libcuda.so.1 and calls cuInit/cuDriverGetVersion
 * and cuGetProcAddress directly: the local smoke test of the interposer (no GPU
 * needed: it must load, forward, and report the real driver's answer). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*init_t)(unsigned);
typedef int (*ver_t)(int *);
typedef int (*gpa2_t)(const char *, void **, int, unsigned long long, int *);

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen failed: %s\n", dlerror());
        return 2;
    }
    Dl_info di;
    init_t init = (init_t)dlsym(h, "cuInit");
    if (!init || !dladdr((void *)init, &di)) {
        printf("no cuInit\n");
        return 2;
    }
    printf("libcuda.so.1 from %s\n", di.dli_fname);
    int rc = init(0);
    int v = -1;
    int rc2 = ((ver_t)dlsym(h, "cuDriverGetVersion"))(&v);
    printf("cuInit -> %d, cuDriverGetVersion -> %d (%d)\n", rc, rc2, v);
    gpa2_t gpa = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
    void *p = NULL;
    int st = -1;
    int rc3 = gpa ? gpa("cuMemAlloc", &p, 13000, 0, &st) : -1;
    printf("cuGetProcAddress_v2(cuMemAlloc) -> %d status %d ptr %p\n", rc3, st, p);
    int (*dc)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
    int cnt = -1;
    int rc4 = dc ? dc(&cnt) : -1;
    printf("cuDeviceGetCount -> %d (%d)\n", rc4, cnt);
    int (*ge)(const void **, const void *) = (int (*)(const void **, const void *))dlsym(h, "cuGetExportTable");
    static const unsigned char uuid[16] = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                           0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
    const void *t = NULL;
    int rc5 = ge ? ge(&t, uuid) : -1;
    printf("cuGetExportTable(6bd5fb6c) -> %d %p\n", rc5, t);
    if (rc == 0 && rc2 == 0 && rc3 == 0 && p && rc4 == 0 && cnt > 0 && rc5 == 0 && t) {
        printf("PASS drvapi\n");
        return 0;
    }
    printf("drvapi: the driver answered errors (expected without a GPU)\n");
    return 0;
}
