// Primary context life cycle through the runtime: cudaSetDeviceFlags before
// init, cudaSetDevice, cudaDeviceSynchronize, limits, cudaDeviceReset and
// reuse of the device afterwards (new allocations, kernels, module reload).
#include "common.h"

__global__ void fill(int *p, int n, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = base + i * 3;
}

__device__ int dev_counter;
__global__ void bump(void) { atomicAdd(&dev_counter, 1); }

static int round_trip(int base, int n)
{
    int *d = NULL;
    CK(cudaMalloc(&d, n * sizeof(int)));
    fill<<<(n + 255) / 256, 256>>>(d, n, base);
    CKL();
    CK(cudaDeviceSynchronize());
    int *h = (int *)malloc(n * sizeof(int));
    CK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != base + i * 3;
    free(h);
    CK(cudaFree(d));
    return bad;
}

int main(void)
{
    CK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    CK(cudaSetDevice(0));
    unsigned flags = 0;
    CK(cudaGetDeviceFlags(&flags));
    printf("sched_flags=%u\n", flags & cudaDeviceScheduleMask);
    EXPECT((flags & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync,
           "schedule flags %u", flags);

    int bad = round_trip(7, 100000);
    printf("round1_bad=%d\n", bad);
    EXPECT(bad == 0, "round 1: %d wrong", bad);

    size_t lim = 0;
    CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16u << 20));
    CK(cudaDeviceGetLimit(&lim, cudaLimitMallocHeapSize));
    printf("heap_limit_ge_16MiB=%d\n", lim >= (16u << 20));
    EXPECT(lim >= (16u << 20), "heap limit %zu", lim);
    CK(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
    CK(cudaDeviceGetLimit(&lim, cudaLimitStackSize));
    printf("stack_limit_ge_4096=%d\n", lim >= 4096);
    EXPECT(lim >= 4096, "stack limit %zu", lim);

    int zero = 0, one = 0;
    CK(cudaMemcpyToSymbol(dev_counter, &zero, sizeof zero));
    for (int i = 0; i < 10; i++) {
        bump<<<4, 32>>>();
        CKL();
    }
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpyFromSymbol(&one, dev_counter, sizeof one));
    printf("counter_before_reset=%d\n", one);
    EXPECT(one == 1280, "counter %d", one);

    // Leave work and memory behind, then reset.
    int *stale = NULL;
    CK(cudaMalloc(&stale, 1 << 20));
    bump<<<1, 1>>>();
    CKL();
    CK(cudaDeviceReset());

    // After the reset: fresh flags, fresh module state, memory gone.
    CK(cudaGetDeviceFlags(&flags));
    printf("sched_flags_after_reset=%u\n", flags & cudaDeviceScheduleMask);
    CK(cudaMemcpyFromSymbol(&one, dev_counter, sizeof one));
    printf("counter_after_reset=%d\n", one);
    EXPECT(one == 0, "__device__ variable kept its value across reset: %d", one);

    int dev = -1;
    CK(cudaGetDevice(&dev));
    printf("device_after_reset=%d\n", dev);
    bad = round_trip(1000, 1 << 20);
    printf("round2_bad=%d\n", bad);
    EXPECT(bad == 0, "round 2: %d wrong", bad);

    // Reset twice in a row, then synchronize (which re-creates the context).
    CK(cudaDeviceReset());
    CK(cudaDeviceReset());
    CK(cudaDeviceSynchronize());
    bad = round_trip(-5, 4096);
    printf("round3_bad=%d\n", bad);
    EXPECT(bad == 0, "round 3: %d wrong", bad);

    size_t fr = 0, tot = 0;
    CK(cudaMemGetInfo(&fr, &tot));
    printf("meminfo_ok=%d\n", fr <= tot && fr > 0);
    CK(cudaDeviceReset());
    return finish();
}
