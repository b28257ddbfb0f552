// Cooperative launch with a grid-wide barrier.
#include "probe_common.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void twophase(int *buf, int n, int *sum)
{
    cg::grid_group g = cg::this_grid();
    for (int i = g.thread_rank(); i < n; i += g.size())
        buf[i] = i;
    g.sync();
    // after the barrier every thread sees all writes: each checks its mirror element
    for (int i = g.thread_rank(); i < n; i += g.size())
        if (buf[n - 1 - i] == n - 1 - i)
            atomicAdd(sum, 1);
}

int main()
{
    probe_mark("main-start");
    int dev = 0, coopOK = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&coopOK, cudaDevAttrCooperativeLaunch, dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    REQUIRE(coopOK);
    int perSM = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, twophase, 256, 0));
    REQUIRE(perSM > 0);
    int blocks = sms * (perSM < 2 ? perSM : 2);
    const int n = 1 << 20;
    int *buf, *sum;
    CK(cudaMalloc(&buf, n * sizeof(int)));
    CK(cudaMalloc(&sum, sizeof(int)));
    CK(cudaMemset(sum, 0, sizeof(int)));
    int nn = n;
    void *args[] = {&buf, &nn, &sum};
    CK(cudaLaunchCooperativeKernel((void *)twophase, blocks, 256, args, 0, 0));
    CK(cudaDeviceSynchronize());
    int h = 0;
    CK(cudaMemcpy(&h, sum, sizeof h, cudaMemcpyDeviceToHost));
    printf("blocks %d, matches %d of %d\n", blocks, h, n);
    REQUIRE(h == n);
    // the same through cudaLaunchKernelEx with the cooperative attribute
    CK(cudaMemset(sum, 0, sizeof(int)));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(256);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeCooperative;
    at[0].val.cooperative = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, twophase, buf, nn, sum));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&h, sum, sizeof h, cudaMemcpyDeviceToHost));
    REQUIRE(h == n);
    CK(cudaFree(buf));
    CK(cudaFree(sum));
    return probe_pass("coop");
}
