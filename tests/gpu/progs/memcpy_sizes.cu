// cudaMemcpy / cudaMemcpyAsync host<->device and device<->device, sizes from 1
// byte to 64 MiB, unaligned offsets on both sides, cudaMemcpyDefault (UVA),
// pageable and pinned host buffers; every byte is checked.
#include "common.h"

static int check_bytes(const unsigned char *a, const unsigned char *b, size_t n)
{
    return memcmp(a, b, n) != 0;
}

int main(void)
{
    const size_t sizes[] = {1, 2, 3, 7, 8, 63, 64, 65, 4095, 4096, 4097, 65535, 65537,
                            (1u << 20) + 13, (4u << 20) - 1, 16u << 20, 64u << 20};
    const size_t maxn = 64u << 20;
    unsigned char *src = (unsigned char *)malloc(maxn + 64);
    unsigned char *dst = (unsigned char *)malloc(maxn + 64);
    unsigned char *pin_src, *pin_dst;
    CK(cudaMallocHost(&pin_src, maxn + 64));
    CK(cudaMallocHost(&pin_dst, maxn + 64));
    fill_pattern(src, maxn + 64, 1);
    memcpy(pin_src, src, maxn + 64);
    unsigned char *d1, *d2;
    CK(cudaMalloc(&d1, maxn + 64));
    CK(cudaMalloc(&d2, maxn + 64));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));

    int failures = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        size_t hoff = si % 7, doff = (si * 5) % 11, doff2 = (si * 3) % 13;
        int r[6];
        // 1. sync pageable H2D, D2D, D2H
        memset(dst, 0, n + hoff);
        CK(cudaMemcpy(d1 + doff, src + hoff, n, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d2 + doff2, d1 + doff, n, cudaMemcpyDeviceToDevice));
        CK(cudaMemcpy(dst + hoff, d2 + doff2, n, cudaMemcpyDeviceToHost));
        r[0] = check_bytes(dst + hoff, src + hoff, n);
        // 2. async pinned H2D, D2D, D2H on a stream
        memset(pin_dst, 0, n + hoff);
        CK(cudaMemsetAsync(d1, 0, n + doff, s));
        CK(cudaMemcpyAsync(d1 + doff, pin_src + hoff, n, cudaMemcpyHostToDevice, s));
        CK(cudaMemcpyAsync(d2 + doff2, d1 + doff, n, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemcpyAsync(pin_dst + hoff, d2 + doff2, n, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        r[1] = check_bytes(pin_dst + hoff, src + hoff, n);
        // 3. async with pageable memory
        memset(dst, 0, n + hoff);
        CK(cudaMemcpyAsync(d1 + doff, src + hoff + 1, n, cudaMemcpyHostToDevice, s));
        CK(cudaMemcpyAsync(dst + hoff, d1 + doff, n, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        r[2] = check_bytes(dst + hoff, src + hoff + 1, n);
        // 4. cudaMemcpyDefault in every direction
        memset(dst, 0, n);
        CK(cudaMemcpy(d2, src + 3, n, cudaMemcpyDefault));
        CK(cudaMemcpy(d1 + 1, d2, n, cudaMemcpyDefault));
        CK(cudaMemcpy(dst, d1 + 1, n, cudaMemcpyDefault));
        r[3] = check_bytes(dst, src + 3, n);
        // 5. pinned to pageable staging through the device, default stream async
        CK(cudaMemcpyAsync(d1, pin_src + 5, n, cudaMemcpyHostToDevice, 0));
        CK(cudaMemcpyAsync(pin_dst, d1, n, cudaMemcpyDeviceToHost, 0));
        CK(cudaDeviceSynchronize());
        r[4] = check_bytes(pin_dst, src + 5, n);
        // 6. host to host through cudaMemcpy
        memset(dst, 0, n);
        CK(cudaMemcpy(dst, pin_src + 9, n, cudaMemcpyHostToHost));
        r[5] = check_bytes(dst, src + 9, n);
        printf("size=%zu sync=%d async_pinned=%d async_pageable=%d default=%d stream0=%d h2h=%d\n", n,
               !r[0], !r[1], !r[2], !r[3], !r[4], !r[5]);
        for (int i = 0; i < 6; i++)
            if (r[i]) {
                failures++;
                note_failure("size %zu, case %d: bytes differ", n, i + 1);
            }
    }
    // A checksum of the last device buffer, read back whole.
    CK(cudaMemcpy(dst, d2, maxn, cudaMemcpyDeviceToHost));
    printf("final_checksum=%016llx\n", (unsigned long long)fnv1a(dst, maxn));
    printf("failures=%d\n", failures);

    CK(cudaStreamDestroy(s));
    CK(cudaFree(d1));
    CK(cudaFree(d2));
    CK(cudaFreeHost(pin_src));
    CK(cudaFreeHost(pin_dst));
    free(src);
    free(dst);
    return finish();
}
