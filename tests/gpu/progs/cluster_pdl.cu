// Thread block clusters and programmatic dependent launch: a cluster launch
// whose blocks read their neighbour's shared memory (distributed shared
// memory), cudaOccupancyMaxActiveClusters / cudaOccupancyMaxPotentialClusterSize
// for it, and a pair of kernels where the second is launched with
// programmatic stream serialization, waits with cudaGridDependencySynchronize
// and reads what the first wrote before cudaTriggerProgrammaticLaunchCompletion.
// Below compute capability 9.0 the same values come from plain launches, so
// the output is the same everywhere. Built with sm_90 too (see the Makefile).
#include <cooperative_groups.h>
#include "common.h"
namespace cg = cooperative_groups;

#define BLOCKS 8
#define THREADS 64

__global__ void neighbours(int *out, int use_cluster)
{
    __shared__ int mine[THREADS];
    mine[threadIdx.x] = (int)(blockIdx.x * 1000 + threadIdx.x);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (use_cluster) {
        cg::cluster_group cl = cg::this_cluster();
        cl.sync();
        unsigned rank = cl.block_rank();
        int *other = cl.map_shared_rank(mine, rank ^ 1u);
        int v = other[threadIdx.x];
        cl.sync();
        out[blockIdx.x * THREADS + threadIdx.x] = v;
        return;
    }
#endif
    __syncthreads();
    out[blockIdx.x * THREADS + threadIdx.x] = ((mine[threadIdx.x] / 1000) ^ 1) * 1000 + (int)threadIdx.x;
}

__global__ void producer(int *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = i * 3 + 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __syncthreads();
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}

__global__ void consumer(const int *data, int *out, int n)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = data[i] * 2;
}

int main(void)
{
    int major = 0, cluster = 0;
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CK(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, 0));
    int hopper = major >= 9 && cluster;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));

    // ---- a cluster launch with distributed shared memory
    int *d_out;
    CK(cudaMalloc(&d_out, BLOCKS * THREADS * sizeof(int)));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[2];
    cfg.gridDim = dim3(BLOCKS);
    cfg.blockDim = dim3(THREADS);
    cfg.stream = s;
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = 2;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = hopper ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, neighbours, d_out, hopper));
    CKL();
    CK(cudaStreamSynchronize(s));
    int h_out[BLOCKS * THREADS];
    CK(cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < BLOCKS; b++)
        for (int t = 0; t < THREADS; t++)
            bad += h_out[b * THREADS + t] != (b ^ 1) * 1000 + t;
    printf("cluster neighbours: %d wrong of %d\n", bad, BLOCKS * THREADS);
    if (bad)
        note_failure("cluster neighbours: %d wrong", bad);

    // ---- cluster occupancy
    int active = 1, potential = 2;
    if (hopper) {
        cfg.numAttrs = 1;
        CK(cudaOccupancyMaxActiveClusters(&active, neighbours, &cfg));
        cfg.numAttrs = 0;
        CK(cudaOccupancyMaxPotentialClusterSize(&potential, neighbours, &cfg));
    }
    printf("active clusters >= 1: %s\n", active >= 1 ? "yes" : "no");
    printf("potential cluster size >= 2: %s\n", potential >= 2 ? "yes" : "no");

    // ---- programmatic dependent launch
    const int n = 4096;
    int *d_data, *d_res;
    CK(cudaMalloc(&d_data, n * sizeof(int)));
    CK(cudaMalloc(&d_res, n * sizeof(int)));
    CK(cudaMemset(d_data, 0, n * sizeof(int)));
    producer<<<n / 256, 256, 0, s>>>(d_data, n);
    CKL();
    cudaLaunchConfig_t c2 = {};
    c2.gridDim = dim3(n / 256);
    c2.blockDim = dim3(256);
    c2.stream = s;
    at[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[1].val.programmaticStreamSerializationAllowed = 1;
    c2.attrs = &at[1];
    c2.numAttrs = hopper ? 1 : 0;
    CK(cudaLaunchKernelEx(&c2, consumer, (const int *)d_data, d_res, n));
    CKL();
    CK(cudaStreamSynchronize(s));
    int *h_res = (int *)malloc(n * sizeof(int));
    CK(cudaMemcpy(h_res, d_res, n * sizeof(int), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += h_res[i] != (i * 3 + 1) * 2;
    printf("dependent launch: %d wrong of %d\n", bad, n);
    if (bad)
        note_failure("dependent launch: %d wrong", bad);
    free(h_res);
    CK(cudaFree(d_out));
    CK(cudaFree(d_data));
    CK(cudaFree(d_res));
    CK(cudaStreamDestroy(s));
    return finish();
}
