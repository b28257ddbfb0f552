// Device count, properties (stable fields), driver/runtime versions, memory info.
#include "common.h"

int main(void)
{
    int n = -1;
    CK(cudaGetDeviceCount(&n));
    printf("device_count_ge_1=%d\n", n >= 1);
    if (n < 1)
        fail_now("no device");

    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    printf("driver_version_ge_13000=%d\n", drv >= 13000);
    printf("runtime_version_ge_13000=%d\n", rt >= 13000);
    printf("driver_ge_runtime=%d\n", drv >= rt);
    EXPECT(drv >= 13000 && rt >= 13000, "versions %d/%d below 13000", drv, rt);
    EXPECT(drv >= rt, "driver %d older than runtime %d", drv, rt);

    cudaDeviceProp p;
    memset(&p, 0, sizeof p);
    CK(cudaGetDeviceProperties(&p, 0));
    printf("major=%d minor=%d\n", p.major, p.minor);
    printf("warpSize=%d\n", p.warpSize);
    printf("maxThreadsPerBlock=%d\n", p.maxThreadsPerBlock);
    printf("maxThreadsDim=%d,%d,%d\n", p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
    printf("maxGridSize=%d,%d,%d\n", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
    printf("sharedMemPerBlock=%zu\n", p.sharedMemPerBlock);
    printf("regsPerBlock=%d\n", p.regsPerBlock);
    printf("multiProcessorCount_gt_0=%d\n", p.multiProcessorCount > 0);
    printf("totalGlobalMem_gt_1GiB=%d\n", p.totalGlobalMem > (1ull << 30));
    printf("name_nonempty=%d\n", p.name[0] != 0);
    printf("unifiedAddressing=%d\n", p.unifiedAddressing);
    printf("concurrentKernels=%d\n", p.concurrentKernels);
    EXPECT(p.major >= 7, "compute capability %d.%d below 7.0", p.major, p.minor);
    EXPECT(p.warpSize == 32, "warpSize %d", p.warpSize);
    EXPECT(p.maxThreadsPerBlock == 1024, "maxThreadsPerBlock %d", p.maxThreadsPerBlock);
    EXPECT(p.multiProcessorCount > 0, "no multiprocessors");
    EXPECT(p.totalGlobalMem > (1ull << 30), "totalGlobalMem too small");
    EXPECT(p.unifiedAddressing == 1, "no unified addressing");

    // The properties agree with the attributes.
    int v = 0;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
    EXPECT(v == p.multiProcessorCount, "SM count attr %d vs prop %d", v, p.multiProcessorCount);
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0));
    EXPECT(v == p.major, "major attr %d vs prop %d", v, p.major);

    int dev = -1;
    CK(cudaGetDevice(&dev));
    printf("current_device=%d\n", dev);

    size_t freeb = 0, total = 0;
    CK(cudaMemGetInfo(&freeb, &total));
    printf("mem_free_le_total=%d\n", freeb <= total);
    printf("mem_total_gt_1GiB=%d\n", total > (1ull << 30));
    printf("mem_free_gt_0=%d\n", freeb > 0);
    EXPECT(freeb <= total && freeb > 0, "cudaMemGetInfo free/total inconsistent");
    EXPECT(total <= p.totalGlobalMem, "cudaMemGetInfo total above totalGlobalMem");

    // Out-of-range device ordinal.
    CK_EXPECT(cudaGetDeviceProperties(&p, n), cudaErrorInvalidDevice);
    printf("bad_ordinal=%s\n", cudaGetErrorName(cudaGetDeviceProperties(&p, n + 7)));
    printf("last_error_after_bad_ordinal=%s\n", cudaGetErrorName(cudaGetLastError()));
    printf("last_error_cleared=%s\n", cudaGetErrorName(cudaGetLastError()));
    return finish();
}
