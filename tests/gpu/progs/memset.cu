// cudaMemset / cudaMemsetAsync (8-bit values) over many sizes and offsets,
// overlapping memsets in stream order, value truncation to a byte, and a
// memset followed by a kernel that reads it.
#include <vector>
#include "common.h"

__global__ void sum_bytes(const unsigned char *p, size_t n, unsigned long long *out)
{
    unsigned long long s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += p[i];
    atomicAdd(out, s);
}

int main(void)
{
    const size_t n = 32u << 20;
    std::vector<unsigned char> ref(n, 0), h(n);
    unsigned char *d;
    CK(cudaMalloc(&d, n));
    CK(cudaMemset(d, 0, n));
    struct { size_t off, len; int v; } ops[] = {
        {0, 1, 0x11}, {1, 2, 0x22}, {3, 5, 0x33}, {100, 4093, 0x44}, {5000, 65536, 0x55},
        {70001, 1u << 20, 0x66}, {2u << 20, 8u << 20, 0x77}, {(2u << 20) + 7, 3, 0x88},
        {n - 1, 1, 0x99}, {n - 4097, 4096, 0xaa}, {12345678, 5u << 20, 0x1bb /* -> 0xbb */},
    };
    int nops = sizeof ops / sizeof ops[0];
    for (int i = 0; i < nops; i++) {
        CK(cudaMemset(d + ops[i].off, ops[i].v, ops[i].len));
        memset(ref.data() + ops[i].off, ops[i].v & 0xff, ops[i].len);
    }
    CK(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost));
    int ok_sync = memcmp(h.data(), ref.data(), n) == 0;
    printf("sync_ok=%d checksum=%016llx\n", ok_sync, (unsigned long long)fnv1a(h.data(), n));
    EXPECT(ok_sync, "cudaMemset results differ");

    // Async memsets on two streams to disjoint halves, overlapping within each stream.
    cudaStream_t s1, s2;
    CK(cudaStreamCreate(&s1));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    for (int k = 0; k < 20; k++) {
        size_t off = (size_t)k * 100003, len = 1u << 19;
        CK(cudaMemsetAsync(d + off, k + 1, len, s1));
        memset(ref.data() + off, k + 1, len);
        size_t off2 = n / 2 + (size_t)k * 77777;
        CK(cudaMemsetAsync(d + off2, 200 - k, len + k, s2));
        memset(ref.data() + off2, 200 - k, len + k);
    }
    CK(cudaStreamSynchronize(s1));
    CK(cudaStreamSynchronize(s2));
    CK(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost));
    int ok_async = memcmp(h.data(), ref.data(), n) == 0;
    printf("async_ok=%d checksum=%016llx\n", ok_async, (unsigned long long)fnv1a(h.data(), n));
    EXPECT(ok_async, "cudaMemsetAsync results differ");

    // A kernel sees the memset (stream order on the legacy stream).
    unsigned long long *dsum, got = 0;
    CK(cudaMalloc(&dsum, sizeof *dsum));
    CK(cudaMemset(dsum, 0, sizeof *dsum));
    CK(cudaMemsetAsync(d, 3, n, 0));
    sum_bytes<<<256, 256>>>(d, n, dsum);
    CKL();
    CK(cudaMemcpy(&got, dsum, sizeof got, cudaMemcpyDeviceToHost));
    printf("kernel_sum=%llu\n", got);
    EXPECT(got == 3ull * n, "kernel sum %llu", got);

    // Zero-length memset is a no-op that succeeds.
    CK(cudaMemset(d, 0x5a, 0));
    unsigned char first;
    CK(cudaMemcpy(&first, d, 1, cudaMemcpyDeviceToHost));
    printf("zero_length_noop=%d\n", first == 3);
    EXPECT(first == 3, "zero-length memset wrote");

    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
    CK(cudaFree(d));
    CK(cudaFree(dsum));
    return finish();
}
