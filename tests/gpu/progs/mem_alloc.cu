// cudaMalloc/cudaFree: many sizes (1 byte to 256 MiB), many live allocations,
// cudaMemGetInfo reacting to a large allocation, cudaMalloc(0), cudaFree(NULL),
// double free and a pointer never allocated, and an allocation too large to
// succeed (cudaErrorMemoryAllocation, not sticky).
#include "common.h"

__global__ void touch(unsigned char *p, size_t n, unsigned char v)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i + 1 < n)
        p[i] = v;
    if (i == 0)
        p[n - 1] = v ^ 0xff;
}

int main(void)
{
    const size_t sizes[] = {1, 2, 3, 255, 256, 4095, 4096, 65537, 1u << 20, (2u << 20) + 1, 64u << 20, 256u << 20};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        unsigned char *d = NULL;
        CK(cudaMalloc(&d, n));
        EXPECT(((uintptr_t)d & 255) == 0, "allocation of %zu not 256-byte aligned", n);
        size_t t = n < 65536 ? n : 65536;
        touch<<<(unsigned)((t + 255) / 256), 256>>>(d, n, (unsigned char)si);
        CKL();
        unsigned char first = 0, last = 0;
        CK(cudaMemcpy(&first, d, 1, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&last, d + n - 1, 1, cudaMemcpyDeviceToHost));
        int ok = (n == 1 ? first == (unsigned char)(si ^ 0xff) : first == (unsigned char)si) &&
                 last == (unsigned char)(si ^ 0xff);
        printf("size=%zu aligned=%d ok=%d\n", n, ((uintptr_t)d & 255) == 0, ok);
        EXPECT(ok, "size %zu: first %u last %u", n, first, last);
        CK(cudaFree(d));
    }

    // Many live allocations, distinct and non-overlapping.
    const int k = 1000;
    unsigned char **ptrs = (unsigned char **)malloc(k * sizeof *ptrs);
    for (int i = 0; i < k; i++) {
        CK(cudaMalloc(&ptrs[i], 1000 + i));
        CK(cudaMemset(ptrs[i], i & 0xff, 1000 + i));
    }
    int bad = 0;
    unsigned char *buf = (unsigned char *)malloc(2000);
    for (int i = 0; i < k; i += 37) {
        CK(cudaMemcpy(buf, ptrs[i], 1000 + i, cudaMemcpyDeviceToHost));
        for (int j = 0; j < 1000 + i; j++)
            bad += buf[j] != (i & 0xff);
    }
    for (int i = 0; i < k; i++)
        CK(cudaFree(ptrs[i]));
    printf("many_allocations=%d bad=%d\n", k, bad);
    EXPECT(bad == 0, "many allocations: %d bytes wrong", bad);
    free(ptrs);
    free(buf);

    // cudaMemGetInfo sees a 512 MiB allocation come and go. The device's free
    // memory is every process's: a neighbour that allocates or frees between
    // two readings (the soak runs eight) moves it too, so a few tries.
    size_t free0, total0, free1, total1, free2, total2;
    int dropped = 0, returned = 0;
    for (int attempt = 0; attempt < 5 && !(dropped && returned); attempt++) {
        CK(cudaMemGetInfo(&free0, &total0));
        void *big;
        CK(cudaMalloc(&big, 512u << 20));
        CK(cudaMemGetInfo(&free1, &total1));
        CK(cudaFree(big));
        CK(cudaMemGetInfo(&free2, &total2));
        dropped = free0 > free1 && free0 - free1 >= (500u << 20);
        returned = free2 > free1;
    }
    printf("meminfo total_constant=%d free_dropped_by_512MiB=%d free_returned=%d\n",
           total0 == total1 && total1 == total2, dropped, returned);
    EXPECT(total0 == total1 && dropped && returned, "cudaMemGetInfo did not follow the allocation");

    // Edge cases.
    void *z = (void *)1;
    cudaError_t e0 = cudaMalloc(&z, 0);
    printf("malloc0=%s null=%d\n", cudaGetErrorName(e0), z == NULL);
    CK(cudaFree(NULL));
    void *once;
    CK(cudaMalloc(&once, 4096));
    CK(cudaFree(once));
    cudaError_t e1 = cudaFree(once);
    printf("double_free=%s\n", cudaGetErrorName(e1));
    EXPECT(e1 != cudaSuccess, "double free: %s", cudaGetErrorName(e1));
    int host_var;
    cudaError_t e2 = cudaFree(&host_var);
    printf("free_host_pointer=%s\n", cudaGetErrorName(e2));
    EXPECT(e2 != cudaSuccess, "freeing a host pointer: %s", cudaGetErrorName(e2));
    void *huge = NULL;
    cudaError_t e3 = cudaMalloc(&huge, total0 * 2);
    printf("too_large=%s\n", cudaGetErrorName(e3));
    EXPECT(e3 != cudaSuccess, "oversized allocation: %s", cudaGetErrorName(e3));
    printf("last_error=%s\n", cudaGetErrorName(cudaGetLastError()));
    printf("last_error_again=%s\n", cudaGetErrorName(cudaGetLastError()));
    // Not sticky: the device still works.
    void *after;
    CK(cudaMalloc(&after, 1 << 20));
    CK(cudaMemset(after, 1, 1 << 20));
    CK(cudaDeviceSynchronize());
    CK(cudaFree(after));
    return finish();
}
