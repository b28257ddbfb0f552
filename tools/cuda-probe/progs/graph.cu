// Stream capture into a graph, graph launch, stream-ordered allocation.
#include "probe_common.h"

__global__ void add1(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

int main()
{
    probe_mark("main-start");
    const int n = 4096;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    int *d;
    CK(cudaMallocAsync(&d, n * sizeof(int), s));
    CK(cudaMemsetAsync(d, 0, n * sizeof(int), s));
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < 3; k++)
        add1<<<n / 256, 256, 0, s>>>(d, n);
    CK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 4; r++)
        CK(cudaGraphLaunch(ge, s));
    int h[n];
    CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; i++)
        REQUIRE(h[i] == 12);
    CK(cudaFreeAsync(d, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(s));
    return probe_pass("graph");
}
