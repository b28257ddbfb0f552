// __device__ and __constant__ variables: cudaMemcpyToSymbol/FromSymbol,
// cudaGetSymbolAddress, cudaGetSymbolSize, cudaFuncGetAttributes.
#include "probe_common.h"

__constant__ float coef[16];
__device__ int counter;
__device__ float table[256];

__global__ void use(float *out)
{
    int i = threadIdx.x;
    out[i] = table[i] * coef[i % 16];
    atomicAdd(&counter, 1);
}

int main()
{
    probe_mark("main-start");
    float c[16], t[256];
    for (int i = 0; i < 16; i++)
        c[i] = (float)(i + 1);
    for (int i = 0; i < 256; i++)
        t[i] = (float)i * 0.25f;
    CK(cudaMemcpyToSymbol(coef, c, sizeof c));
    CK(cudaMemcpyToSymbol(table, t, sizeof t));
    int zero = 5;
    CK(cudaMemcpyToSymbol(counter, &zero, sizeof zero));
    void *addr = NULL;
    size_t sz = 0;
    CK(cudaGetSymbolAddress(&addr, table));
    CK(cudaGetSymbolSize(&sz, table));
    REQUIRE(addr != NULL && sz == sizeof t);
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, use));
    printf("use(): regs %d maxthreads %d\n", fa.numRegs, fa.maxThreadsPerBlock);
    float *d;
    CK(cudaMalloc(&d, 256 * sizeof(float)));
    use<<<1, 256>>>(d);
    CK(cudaGetLastError());
    float out[256];
    CK(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 256; i++)
        REQUIRE(out[i] == t[i] * c[i % 16]);
    int cnt = 0;
    CK(cudaMemcpyFromSymbol(&cnt, counter, sizeof cnt));
    REQUIRE(cnt == 5 + 256);
    float back[256];
    CK(cudaMemcpy(back, addr, sizeof back, cudaMemcpyDeviceToHost));
    REQUIRE(back[100] == 25.0f);
    CK(cudaFree(d));
    return probe_pass("symbols");
}
