// The stream-ordered allocator: cudaMallocAsync/cudaFreeAsync on the default
// pool, reuse within a stream, cross-stream use ordered by events, pool
// attributes (release threshold), an explicit pool (cudaMemPoolCreate +
// cudaMallocFromPoolAsync), cudaMemPoolTrimTo, and cudaDeviceGetDefaultMemPool.
#include "common.h"

__global__ void fill(int *p, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v + i;
}
__global__ void accumulate(const int *p, int n, long long *sum)
{
    long long s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += p[i];
    atomicAdd((unsigned long long *)sum, (unsigned long long)s);
}

int main(void)
{
    int supported = 0;
    CK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0));
    printf("pools_supported=%d\n", supported);
    if (!supported)
        fail_now("memory pools not supported");

    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    long long *dsum;
    CK(cudaMalloc(&dsum, sizeof *dsum));

    // 1. Allocate, use, free, many times on one stream.
    const int n = 1 << 20;
    long long total = 0, want = 0;
    for (int it = 0; it < 50; it++) {
        int *p;
        CK(cudaMallocAsync(&p, n * sizeof(int), s1));
        fill<<<n / 256, 256, 0, s1>>>(p, n, it);
        CKL();
        CK(cudaMemsetAsync(dsum, 0, sizeof *dsum, s1));
        accumulate<<<64, 256, 0, s1>>>(p, n, dsum);
        CKL();
        CK(cudaFreeAsync(p, s1));
        long long got;
        CK(cudaMemcpyAsync(&got, dsum, sizeof got, cudaMemcpyDeviceToHost, s1));
        CK(cudaStreamSynchronize(s1));
        total += got;
        want += (long long)it * n + (long long)n * (n - 1) / 2;
    }
    printf("loop_total=%lld\n", total);
    EXPECT(total == want, "allocate/use/free loop: %lld, expected %lld", total, want);

    // 2. Allocated on s1, used on s2 after an event, freed on s2.
    cudaEvent_t ev, ev2;
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ev2, cudaEventDisableTiming));
    int *q;
    CK(cudaMallocAsync(&q, n * sizeof(int), s1));
    fill<<<n / 256, 256, 0, s1>>>(q, n, 1000);
    CKL();
    CK(cudaEventRecord(ev, s1));
    CK(cudaStreamWaitEvent(s2, ev, 0));
    CK(cudaMemsetAsync(dsum, 0, sizeof *dsum, s2));
    accumulate<<<64, 256, 0, s2>>>(q, n, dsum);
    CKL();
    CK(cudaFreeAsync(q, s2));
    long long got2 = 0;
    CK(cudaMemcpyAsync(&got2, dsum, sizeof got2, cudaMemcpyDeviceToHost, s2));
    CK(cudaStreamSynchronize(s2));
    printf("cross_stream_sum=%lld\n", got2);
    EXPECT(got2 == 1000ll * n + (long long)n * (n - 1) / 2, "cross-stream sum %lld", got2);

    // 3. The default pool and its attributes.
    cudaMemPool_t def, cur;
    CK(cudaDeviceGetDefaultMemPool(&def, 0));
    CK(cudaDeviceGetMemPool(&cur, 0));
    printf("current_is_default=%d\n", def == cur);
    uint64_t thr = 64ull << 20, thr_back = 0;
    CK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr));
    CK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr_back));
    printf("release_threshold=%llu\n", (unsigned long long)thr_back);
    EXPECT(thr_back == thr, "release threshold %llu", (unsigned long long)thr_back);
    int *r1;
    CK(cudaMallocAsync(&r1, 32u << 20, s1));
    CK(cudaFreeAsync(r1, s1));
    CK(cudaStreamSynchronize(s1));
    uint64_t reserved = 0, used = 0;
    CK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrReservedMemCurrent, &reserved));
    CK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &used));
    printf("kept_below_threshold=%d used_after_free=%llu\n", reserved >= (32u << 20), (unsigned long long)used);
    EXPECT(used == 0, "used memory %llu after all frees", (unsigned long long)used);
    CK(cudaMemPoolTrimTo(def, 0));
    CK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrReservedMemCurrent, &reserved));
    printf("reserved_after_trim_is_zero=%d\n", reserved == 0);

    // 4. An explicit pool.
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    CK(cudaMemPoolCreate(&pool, &props));
    int *pp[8];
    for (int i = 0; i < 8; i++) {
        CK(cudaMallocFromPoolAsync((void **)&pp[i], (i + 1) * 100000 * sizeof(int), pool, s1));
        fill<<<((i + 1) * 100000 + 255) / 256, 256, 0, s1>>>(pp[i], (i + 1) * 100000, i);
        CKL();
    }
    long long psum = 0, pwant = 0;
    for (int i = 0; i < 8; i++) {
        int m = (i + 1) * 100000;
        CK(cudaMemsetAsync(dsum, 0, sizeof *dsum, s1));
        accumulate<<<64, 256, 0, s1>>>(pp[i], m, dsum);
        CKL();
        long long g;
        CK(cudaMemcpyAsync(&g, dsum, sizeof g, cudaMemcpyDeviceToHost, s1));
        CK(cudaStreamSynchronize(s1));
        psum += g;
        pwant += (long long)i * m + (long long)m * (m - 1) / 2;
        CK(cudaFreeAsync(pp[i], s1));
    }
    CK(cudaStreamSynchronize(s1));
    printf("explicit_pool_sum=%lld\n", psum);
    EXPECT(psum == pwant, "explicit pool sum %lld, expected %lld", psum, pwant);
    CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    printf("explicit_pool_used_after_free=%llu\n", (unsigned long long)used);
    CK(cudaMemPoolDestroy(pool));

    // 5. cudaFreeAsync of memory from cudaMallocAsync in the legacy stream, then a plain sync.
    int *z;
    CK(cudaMallocAsync(&z, 4096, 0));
    CK(cudaMemsetAsync(z, 0, 4096, 0));
    CK(cudaFreeAsync(z, 0));
    CK(cudaDeviceSynchronize());

    // Freed in stream order though not allocated so: a null pointer and
    // cudaMalloc's memory (cuSPARSE's solvers do both); the answers are
    // printed as the driver gives them, both ways.
    cudaError_t e = cudaFreeAsync(nullptr, s1);
    printf("free_async_null=%s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();
    void *plain = nullptr;
    CK(cudaMalloc(&plain, 1 << 20));
    e = cudaFreeAsync(plain, s1);
    printf("free_async_of_malloc=%s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();
    e = cudaStreamSynchronize(s1);
    printf("after_free_async_sync=%s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();

    CK(cudaEventDestroy(ev));
    CK(cudaEventDestroy(ev2));
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
    CK(cudaFree(dsum));
    return finish();
}
