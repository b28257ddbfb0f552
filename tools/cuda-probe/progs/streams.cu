// Streams, events (timing), cudaMallocHost, cudaMemcpyAsync, cudaLaunchHostFunc.
#include "probe_common.h"

__global__ void scale(float *p, int n, float f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= f;
}

static volatile int host_calls;
static void CUDART_CB on_host(void *arg)
{
    int *tag = (int *)arg;
    host_calls += *tag;
}

int main()
{
    probe_mark("main-start");
    const int n = 1 << 18, ns = 3;
    float *h;
    CK(cudaMallocHost(&h, ns * n * sizeof(float)));
    for (int i = 0; i < ns * n; i++)
        h[i] = (float)(i % 1013);
    float *d;
    CK(cudaMalloc(&d, ns * n * sizeof(float)));
    cudaStream_t s[ns];
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int k = 0; k < ns; k++)
        CK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
    static int tags[ns] = {1, 10, 100};
    CK(cudaEventRecord(e0, s[0]));
    for (int k = 0; k < ns; k++) {
        float *hp = h + k * n, *dp = d + k * n;
        CK(cudaMemcpyAsync(dp, hp, n * sizeof(float), cudaMemcpyHostToDevice, s[k]));
        scale<<<(n + 255) / 256, 256, 0, s[k]>>>(dp, n, (float)(k + 2));
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(hp, dp, n * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
        CK(cudaLaunchHostFunc(s[k], on_host, &tags[k]));
    }
    cudaEvent_t join;
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    for (int k = 1; k < ns; k++) {
        CK(cudaEventRecord(join, s[k]));
        CK(cudaStreamWaitEvent(s[0], join, 0));
    }
    CK(cudaEventRecord(e1, s[0]));
    CK(cudaEventSynchronize(e1));
    for (int k = 0; k < ns; k++)
        CK(cudaStreamSynchronize(s[k]));
    float ms = -1;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("elapsed %.3f ms, host calls %d\n", ms, host_calls);
    REQUIRE(ms >= 0.0f);
    REQUIRE(host_calls == 111);
    CK(cudaStreamQuery(s[0]));
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < n; i++)
            REQUIRE(h[k * n + i] == (float)((k * n + i) % 1013) * (float)(k + 2));
    for (int k = 0; k < ns; k++)
        CK(cudaStreamDestroy(s[k]));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaEventDestroy(join));
    CK(cudaFreeHost(h));
    CK(cudaFree(d));
    return probe_pass("streams");
}
