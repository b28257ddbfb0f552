// cudaLaunchKernelEx / cudaLaunchKernelExC with launch attributes: a priority
// attribute, and on compute capability 9.0+ a cluster dimension with
// distributed shared memory (the kernel reads its cluster neighbour's shared
// memory). Devices below 9.0 take a path computing the same values without
// clusters, so the printed output is the same on every device.
// Built with an extra sm_90/compute_90 target (see the Makefile).
#include <cooperative_groups.h>
#include "common.h"
namespace cg = cooperative_groups;

__global__ void neighbour(int *out, int use_cluster)
{
    __shared__ int mine;
    if (threadIdx.x == 0)
        mine = blockIdx.x * 10;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (use_cluster) {
        cg::cluster_group cl = cg::this_cluster();
        cl.sync();
        unsigned rank = cl.block_rank();
        int *other = cl.map_shared_rank(&mine, rank ^ 1u);
        int v = *other;
        cl.sync();
        if (threadIdx.x == 0)
            out[blockIdx.x] = v + (int)rank;
        return;
    }
#endif
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = ((mine / 10) ^ 1) * 10 + (int)(blockIdx.x & 1u);
}

__global__ void scale(const float *in, float *out, float k, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * k;
}

int main(void)
{
    int major = 0, cluster = 0;
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CK(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, 0));
    int use_cluster = major >= 9 && cluster;

    int lo = 0, hi = 0;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // 1. Plain cudaLaunchKernelEx (template form) with a priority attribute.
    const int n = 100000;
    float *din, *dout;
    CK(cudaMalloc(&din, n * sizeof(float)));
    CK(cudaMalloc(&dout, n * sizeof(float)));
    float *h = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++)
        h[i] = (float)(i % 333);
    CK(cudaMemcpy(din, h, n * sizeof(float), cudaMemcpyHostToDevice));
    cudaLaunchAttribute attr[2];
    attr[0].id = cudaLaunchAttributePriority;
    attr[0].val.priority = hi;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((n + 255) / 256);
    cfg.blockDim = dim3(256);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, scale, (const float *)din, dout, 3.0f, n));
    CKL();
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(h, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != (float)(i % 333) * 3.0f;
    printf("priority_launch_bad=%d\n", bad);
    EXPECT(bad == 0, "priority launch: %d wrong", bad);

    // 2. The C form with an argument array and no attributes.
    float k = -0.5f;
    int nn = n;
    void *args[] = {&din, &dout, &k, &nn};
    cfg.numAttrs = 0;
    cfg.attrs = NULL;
    CK(cudaLaunchKernelExC(&cfg, (const void *)scale, args));
    CKL();
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(h, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != (float)(i % 333) * -0.5f;
    printf("exc_launch_bad=%d\n", bad);
    EXPECT(bad == 0, "cudaLaunchKernelExC: %d wrong", bad);

    // 3. Clusters of 2 blocks (or the equivalent without clusters).
    const int blocks = 64;
    int *dn;
    CK(cudaMalloc(&dn, blocks * sizeof(int)));
    CK(cudaMemset(dn, 0, blocks * sizeof(int)));
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(128);
    if (use_cluster) {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = 2;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        attr[1].id = cudaLaunchAttributePriority;
        attr[1].val.priority = lo;
        cfg.attrs = attr;
        cfg.numAttrs = 2;
        int nclusters = 0;
        CK(cudaOccupancyMaxActiveClusters(&nclusters, neighbour, &cfg));
        EXPECT(nclusters >= 1, "max active clusters %d", nclusters);
    } else {
        cfg.attrs = NULL;
        cfg.numAttrs = 0;
    }
    CK(cudaLaunchKernelEx(&cfg, neighbour, dn, use_cluster));
    CKL();
    CK(cudaStreamSynchronize(s));
    int hn[blocks];
    CK(cudaMemcpy(hn, dn, sizeof hn, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int b = 0; b < blocks; b++)
        bad += hn[b] != (b ^ 1) * 10 + (b & 1);
    printf("cluster_result_bad=%d first=%d,%d,%d,%d\n", bad, hn[0], hn[1], hn[2], hn[3]);
    EXPECT(bad == 0, "cluster neighbour exchange: %d wrong", bad);

    CK(cudaStreamDestroy(s));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    CK(cudaFree(dn));
    free(h);
    return finish();
}
