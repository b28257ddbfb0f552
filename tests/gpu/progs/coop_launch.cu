// Cooperative launch: cudaLaunchCooperativeKernel with grid-wide
// synchronisation (cooperative_groups::this_grid().sync()), grid sized from the
// occupancy calculator, a multi-phase computation that is wrong without the
// grid barrier; and the refusal of a grid too large to be co-resident.
#include <cooperative_groups.h>
#include "common.h"
namespace cg = cooperative_groups;

// Phase 1: a[i] = i. Phase 2: b[i] = a[n-1-i] + a[(i+1)%n] (reads other
// blocks' results). Phase 3: block sums into partial[], then block 0 adds them.
__global__ void phases(int *a, int *b, long long *partial, long long *total, int n)
{
    cg::grid_group g = cg::this_grid();
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    for (int i = tid; i < n; i += stride)
        a[i] = i;
    g.sync();
    for (int i = tid; i < n; i += stride)
        b[i] = a[n - 1 - i] + a[(i + 1) % n];
    g.sync();
    if (threadIdx.x == 0) {
        long long s = 0;
        for (int i = blockIdx.x; i < n; i += gridDim.x)
            s += b[i];
        partial[blockIdx.x] = s;
    }
    g.sync();
    if (tid == 0) {
        long long s = 0;
        for (int i = 0; i < (int)gridDim.x; i++)
            s += partial[i];
        *total = s;
    }
}

int main(void)
{
    int coop = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    printf("cooperative_launch_supported=%d\n", coop);
    if (!coop)
        fail_now("device lacks cooperative launch");

    const int threads = 256;
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, phases, threads, 0));
    printf("per_sm_ge_1=%d\n", per_sm >= 1);
    int blocks = per_sm * sms;
    const int n = 1 << 20;
    int *a, *b;
    long long *partial, *total;
    CK(cudaMalloc(&a, n * sizeof(int)));
    CK(cudaMalloc(&b, n * sizeof(int)));
    CK(cudaMalloc(&partial, blocks * sizeof(long long)));
    CK(cudaMalloc(&total, sizeof(long long)));

    long long want = 0;
    for (int i = 0; i < n; i++)
        want += (long long)(n - 1 - i) + (i + 1) % n;

    for (int rep = 0; rep < 3; rep++) {
        int nn = n;
        int grid = rep == 0 ? blocks : (rep == 1 ? sms : 1); // full, one per SM, single block
        CK(cudaMemset(a, 0xff, n * sizeof(int)));
        CK(cudaMemset(b, 0xff, n * sizeof(int)));
        void *args[] = {&a, &b, &partial, &total, &nn};
        CK(cudaLaunchCooperativeKernel((const void *)phases, dim3(grid), dim3(threads), args, 0, 0));
        CKL();
        CK(cudaDeviceSynchronize());
        long long got = 0;
        CK(cudaMemcpy(&got, total, sizeof got, cudaMemcpyDeviceToHost));
        int *hb = (int *)malloc(n * sizeof(int));
        CK(cudaMemcpy(hb, b, n * sizeof(int), cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += hb[i] != (n - 1 - i) + (i + 1) % n;
        free(hb);
        printf("rep %d total=%lld bad=%d\n", rep, got, bad);
        EXPECT(got == want && bad == 0, "rep %d: total %lld (want %lld), %d wrong", rep, got, want, bad);
    }

    // A grid larger than can be co-resident is refused.
    int nn = n;
    void *args[] = {&a, &b, &partial, &total, &nn};
    cudaError_t e = cudaLaunchCooperativeKernel((const void *)phases, dim3(blocks * 4 + 1),
                                                dim3(threads), args, 0, 0);
    printf("too_large_grid=%s\n", cudaGetErrorName(e));
    EXPECT(e == cudaErrorCooperativeLaunchTooLarge, "too-large cooperative grid: %s", cudaGetErrorName(e));
    (void)cudaGetLastError();
    CK(cudaDeviceSynchronize());
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(partial));
    CK(cudaFree(total));
    return finish();
}
