// cudaHostRegister / cudaHostUnregister on ordinary malloc'd memory (page
// aligned and not), on mmap'd memory, with the Default and Portable flags;
// async copies through registered memory; cudaHostGetFlags; registering twice;
// unregistering memory that is not registered; the memory stays usable by the
// host after unregistering.
#include <sys/mman.h>
#include "common.h"

__global__ void negate(int *p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = -p[i] + 7;
}

static int exercise(int *h, size_t n, cudaStream_t s)
{
    for (size_t i = 0; i < n; i++)
        h[i] = (int)(i * 31 % 100000);
    int *d;
    CK(cudaMalloc(&d, n * sizeof(int)));
    CK(cudaMemcpyAsync(d, h, n * sizeof(int), cudaMemcpyHostToDevice, s));
    negate<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(d, n);
    CKL();
    CK(cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaFree(d));
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += h[i] != -(int)(i * 31 % 100000) + 7;
    return bad;
}

int main(void)
{
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    const size_t n = 3u << 20;

    // Page-aligned malloc'd memory.
    int *a = NULL;
    if (posix_memalign((void **)&a, 4096, n * sizeof(int)))
        fail_now("posix_memalign");
    CK(cudaHostRegister(a, n * sizeof(int), cudaHostRegisterDefault));
    unsigned fl = 0;
    CK(cudaHostGetFlags(&fl, a));
    printf("aligned getflags_ok=1\n");
    int bad = exercise(a, n, s);
    printf("aligned bad=%d\n", bad);
    EXPECT(bad == 0, "aligned registered buffer: %d wrong", bad);
    cudaError_t e = cudaHostRegister(a, n * sizeof(int), cudaHostRegisterDefault);
    printf("register_twice=%s\n", cudaGetErrorName(e));
    EXPECT(e == cudaErrorHostMemoryAlreadyRegistered, "second register: %s", cudaGetErrorName(e));
    (void)cudaGetLastError();
    CK(cudaHostUnregister(a));
    e = cudaHostUnregister(a);
    printf("unregister_twice=%s\n", cudaGetErrorName(e));
    EXPECT(e == cudaErrorHostMemoryNotRegistered, "second unregister: %s", cudaGetErrorName(e));
    (void)cudaGetLastError();
    // Still ordinary host memory afterwards.
    a[0] = 123;
    a[n - 1] = 456;
    printf("usable_after_unregister=%d\n", a[0] + a[n - 1] == 579);
    free(a);

    // Unaligned malloc'd memory (inside a larger block), Portable flag.
    char *raw = (char *)malloc(n * sizeof(int) + 4096 + 64);
    int *b = (int *)(raw + 4096 + 12);
    CK(cudaHostRegister(b, n * sizeof(int) - 100, cudaHostRegisterPortable));
    // Unregistering from inside the range, not its start.
    e = cudaHostUnregister(b + 20);
    printf("unregister_inside=%s\n", cudaGetErrorName(e));
    EXPECT(e != cudaSuccess, "unregistering from inside the range succeeded");
    (void)cudaGetLastError();
    CK(cudaHostGetFlags(&fl, b));
    printf("unaligned portable_flag=%d\n", (fl & cudaHostAllocPortable) != 0);
    bad = exercise(b, n - 25, s);
    printf("unaligned bad=%d\n", bad);
    EXPECT(bad == 0, "unaligned registered buffer: %d wrong", bad);
    CK(cudaHostUnregister(b));
    free(raw);

    // mmap'd anonymous memory.
    size_t mbytes = 8u << 20;
    void *m = mmap(NULL, mbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        fail_now("mmap");
    CK(cudaHostRegister(m, mbytes, cudaHostRegisterDefault));
    bad = exercise((int *)m, mbytes / sizeof(int), s);
    printf("mmap bad=%d\n", bad);
    EXPECT(bad == 0, "mmap'd registered buffer: %d wrong", bad);
    CK(cudaHostUnregister(m));
    munmap(m, mbytes);

    // Never-registered memory.
    int local[16];
    e = cudaHostUnregister(local);
    printf("unregister_unknown=%s\n", cudaGetErrorName(e));
    EXPECT(e != cudaSuccess, "unregistering unknown memory succeeded");
    (void)cudaGetLastError();
    CK(cudaStreamDestroy(s));
    return finish();
}
