// Dynamic shared memory: extern __shared__ with a small size, then with a size
// above the 48 KiB default after cudaFuncSetAttribute(MaxDynamicSharedMemorySize),
// the refusal of that size without the attribute, cudaFuncGetAttributes, and
// the occupancy calculator.
#include "common.h"

// Reverses each block's chunk of `n_per_block` ints through shared memory.
__global__ void reverse_chunks(const int *in, int *out, int n_per_block)
{
    extern __shared__ int s[];
    const int *src = in + (size_t)blockIdx.x * n_per_block;
    for (int i = threadIdx.x; i < n_per_block; i += blockDim.x)
        s[i] = src[i];
    __syncthreads();
    int *dst = out + (size_t)blockIdx.x * n_per_block;
    for (int i = threadIdx.x; i < n_per_block; i += blockDim.x)
        dst[i] = s[n_per_block - 1 - i] * 2 + 1;
}

__global__ void reverse_chunks_big(const int *in, int *out, int n_per_block)
{
    extern __shared__ int s[];
    const int *src = in + (size_t)blockIdx.x * n_per_block;
    for (int i = threadIdx.x; i < n_per_block; i += blockDim.x)
        s[i] = src[i];
    __syncthreads();
    int *dst = out + (size_t)blockIdx.x * n_per_block;
    for (int i = threadIdx.x; i < n_per_block; i += blockDim.x)
        dst[i] = s[n_per_block - 1 - i] * 2 + 1;
}

static int run(void (*k)(const int *, int *, int), int blocks, int per_block, size_t smem)
{
    size_t n = (size_t)blocks * per_block;
    int *h = (int *)malloc(n * sizeof(int)), *r = (int *)malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        h[i] = (int)(i * 2654435761u % 1000003);
    int *din, *dout;
    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dout, n * sizeof(int)));
    CK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    k<<<blocks, 256, smem>>>(din, dout, per_block);
    CKL();
    CK(cudaMemcpy(r, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < per_block; i++)
            bad += r[(size_t)b * per_block + i] != h[(size_t)b * per_block + per_block - 1 - i] * 2 + 1;
    CK(cudaFree(din));
    CK(cudaFree(dout));
    free(h);
    free(r);
    return bad;
}

int main(void)
{
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    printf("optin_above_48KiB=%d\n", optin > 48 * 1024);
    if (optin <= 48 * 1024)
        fail_now("device has no opt-in shared memory above 48 KiB");

    int bad = run(reverse_chunks, 64, 1000, 1000 * sizeof(int));
    printf("small_bad=%d\n", bad);
    EXPECT(bad == 0, "4 KB dynamic shared memory: %d wrong", bad);

    // The largest multiple of 1 KiB the device allows, at least 64 KiB on cc >= 7.5.
    size_t big = (size_t)optin / 1024 * 1024;
    int per_block = (int)(big / sizeof(int));

    // Without the attribute, more than 48 KiB is refused at launch.
    int *dummy;
    CK(cudaMalloc(&dummy, 16));
    reverse_chunks_big<<<1, 256, big>>>(dummy, dummy, 1);
    cudaError_t e = cudaGetLastError();
    printf("big_without_attribute=%s\n", cudaGetErrorName(e));
    EXPECT(e != cudaSuccess, "launch with %zu bytes of shared memory accepted without opt-in", big);
    CK(cudaFree(dummy));

    CK(cudaFuncSetAttribute(reverse_chunks_big, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)big));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, reverse_chunks_big));
    printf("attr_max_dynamic_matches=%d\n", (size_t)fa.maxDynamicSharedSizeBytes == big);
    printf("attr_max_threads=%d\n", fa.maxThreadsPerBlock);
    EXPECT((size_t)fa.maxDynamicSharedSizeBytes == big, "maxDynamicSharedSizeBytes %d", fa.maxDynamicSharedSizeBytes);

    bad = run(reverse_chunks_big, 2 * 132, per_block, big);
    printf("big_bad=%d\n", bad);
    EXPECT(bad == 0, "opt-in dynamic shared memory: %d wrong", bad);

    int nblk = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nblk, reverse_chunks_big, 256, big));
    printf("occupancy_big_ge_1=%d\n", nblk >= 1);
    EXPECT(nblk >= 1, "occupancy %d", nblk);
    int small_blk = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&small_blk, reverse_chunks, 256, 4000));
    printf("occupancy_small_ge_big=%d\n", small_blk >= nblk);

    // Too much is refused at launch.
    reverse_chunks_big<<<1, 256, big + 4096>>>(NULL, NULL, 0);
    e = cudaGetLastError();
    printf("over_limit=%s\n", cudaGetErrorName(e));
    EXPECT(e != cudaSuccess, "launch above the opt-in limit accepted");
    CK(cudaDeviceSynchronize());
    return finish();
}
