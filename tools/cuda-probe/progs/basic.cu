// Kernel launch with checked results, cudaMemcpy both ways, device properties.
#include "probe_common.h"

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

int main()
{
    probe_mark("main-start");
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    REQUIRE(ndev > 0);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device 0: %s cc %d.%d sms %d mem %zu\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, prop.totalGlobalMem);
    REQUIRE(prop.major >= 7 && prop.multiProcessorCount > 0);
    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    printf("driver %d runtime %d\n", drv, rt);
    probe_mark("phase-kernel");
    const int n = 1 << 20;
    float *hx = (float *)malloc(n * sizeof(float)), *hy = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        hx[i] = (float)(i % 1000) * 0.5f;
        hy[i] = (float)(i % 77) - 3.0f;
    }
    float *dx, *dy;
    CK(cudaMalloc(&dx, n * sizeof(float)));
    CK(cudaMalloc(&dy, n * sizeof(float)));
    CK(cudaMemcpy(dx, hx, n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, hy, n * sizeof(float), cudaMemcpyHostToDevice));
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.5f, dx, dy);
    CK(cudaGetLastError());
    float *out = (float *)malloc(n * sizeof(float));
    CK(cudaMemcpy(out, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        REQUIRE(out[i] == 2.5f * hx[i] + hy[i]);
    CK(cudaMemset(dy, 0, n * sizeof(float)));
    CK(cudaMemcpy(out, dy, 16, cudaMemcpyDeviceToHost));
    REQUIRE(out[0] == 0.0f && out[3] == 0.0f);
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    CK(cudaDeviceSynchronize());
    free(hx);
    free(hy);
    free(out);
    return probe_pass("basic");
}
