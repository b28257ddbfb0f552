// Pinned host memory: cudaMallocHost, cudaHostAlloc with each flag
// (Default, Portable, Mapped, WriteCombined), cudaHostGetFlags, copies in both
// directions (sync and async) through each kind, cudaFreeHost, and freeing a
// pointer that is not pinned.
#include "common.h"

__global__ void inc(unsigned *p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * 3 + 1;
}

static int round_trip(unsigned *hbuf, size_t n, cudaStream_t s, int async)
{
    for (size_t i = 0; i < n; i++)
        hbuf[i] = (unsigned)(i * 2654435761u);
    unsigned *d;
    CK(cudaMalloc(&d, n * 4));
    if (async) {
        CK(cudaMemcpyAsync(d, hbuf, n * 4, cudaMemcpyHostToDevice, s));
        inc<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(d, n);
        CKL();
        CK(cudaMemcpyAsync(hbuf, d, n * 4, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
    } else {
        CK(cudaMemcpy(d, hbuf, n * 4, cudaMemcpyHostToDevice));
        inc<<<(unsigned)((n + 255) / 256), 256>>>(d, n);
        CKL();
        CK(cudaMemcpy(hbuf, d, n * 4, cudaMemcpyDeviceToHost));
    }
    CK(cudaFree(d));
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hbuf[i] != (unsigned)(i * 2654435761u) * 3u + 1u;
    return bad;
}

int main(void)
{
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    const size_t n = (4u << 20) + 3; // elements

    unsigned *a;
    CK(cudaMallocHost(&a, n * 4));
    unsigned fl = 99;
    CK(cudaHostGetFlags(&fl, a));
    printf("mallochost flags_mapped=%d\n", (fl & cudaHostAllocMapped) != 0);
    int bad = round_trip(a, n, s, 0) + round_trip(a, n, s, 1);
    printf("mallochost bad=%d\n", bad);
    EXPECT(bad == 0, "cudaMallocHost buffer: %d wrong", bad);
    // Flags of an address inside the allocation.
    CK(cudaHostGetFlags(&fl, a + 1000));
    CK(cudaFreeHost(a));

    struct { unsigned flags; const char *name; } kinds[] = {
        {cudaHostAllocDefault, "default"},
        {cudaHostAllocPortable, "portable"},
        {cudaHostAllocMapped, "mapped"},
        {cudaHostAllocWriteCombined, "writecombined"},
        {cudaHostAllocPortable | cudaHostAllocMapped, "portable_mapped"},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t m = kinds[k].flags & cudaHostAllocWriteCombined ? 65536 : n; // WC is slow to read
        unsigned *p;
        CK(cudaHostAlloc(&p, m * 4, kinds[k].flags));
        unsigned got = 0;
        CK(cudaHostGetFlags(&got, p));
        int has_requested = (got & kinds[k].flags) == kinds[k].flags;
        bad = round_trip(p, m, s, 0) + round_trip(p, m, s, 1);
        printf("hostalloc %s flags_include_requested=%d bad=%d\n", kinds[k].name, has_requested, bad);
        EXPECT(has_requested, "%s: flags %u lack %u", kinds[k].name, got, kinds[k].flags);
        EXPECT(bad == 0, "%s: %d wrong", kinds[k].name, bad);
        if (kinds[k].flags & cudaHostAllocMapped) {
            void *dp = NULL;
            CK(cudaHostGetDevicePointer(&dp, p, 0));
            printf("hostalloc %s device_pointer_nonnull=%d\n", kinds[k].name, dp != NULL);
        }
        CK(cudaFreeHost(p));
    }

    // Many small pinned allocations alive at once.
    unsigned char *small[64];
    for (int i = 0; i < 64; i++) {
        CK(cudaMallocHost(&small[i], 100 + i * 10));
        memset(small[i], i, 100 + i * 10);
    }
    unsigned char *d;
    CK(cudaMalloc(&d, 64 * 1000));
    for (int i = 0; i < 64; i++)
        CK(cudaMemcpyAsync(d + i * 1000, small[i], 100 + i * 10, cudaMemcpyHostToDevice, s));
    CK(cudaStreamSynchronize(s));
    for (int i = 0; i < 64; i++)
        memset(small[i], 0xee, 100 + i * 10);
    for (int i = 0; i < 64; i++)
        CK(cudaMemcpyAsync(small[i], d + i * 1000, 100 + i * 10, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    bad = 0;
    for (int i = 0; i < 64; i++) {
        for (int j = 0; j < 100 + i * 10; j++)
            bad += small[i][j] != i;
        CK(cudaFreeHost(small[i]));
    }
    printf("small_pinned bad=%d\n", bad);
    EXPECT(bad == 0, "small pinned buffers: %d wrong", bad);
    CK(cudaFree(d));

    // Pageable memory is not pinned.
    void *pageable = malloc(4096);
    unsigned f2 = 0;
    cudaError_t e = cudaHostGetFlags(&f2, pageable);
    printf("getflags_pageable=%s\n", cudaGetErrorName(e));
    EXPECT(e != cudaSuccess, "cudaHostGetFlags accepted pageable memory");
    (void)cudaGetLastError();
    free(pageable);
    CK(cudaFreeHost(NULL));
    CK(cudaStreamDestroy(s));
    return finish();
}
