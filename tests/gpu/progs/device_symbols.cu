// __device__ and __constant__ variables: static initializers, cudaMemcpyToSymbol
// / FromSymbol with offsets (sync and async), cudaGetSymbolAddress and
// cudaGetSymbolSize, kernels reading constants and writing device globals, and
// plain cudaMemcpy through the symbol's address.
#include "common.h"

__device__ int d_counter = 17;
__device__ float d_array[1024];
__device__ long long d_init[4] = {1, -2, 3000000000ll, -4};
__constant__ float c_coef[64];
__constant__ int c_init[8] = {8, 7, 6, 5, 4, 3, 2, 1};

struct Params {
    int scale;
    double bias;
};
__constant__ Params c_params;

__global__ void apply(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = d_array[i % 1024] * c_coef[i % 64] * c_params.scale + (float)c_params.bias + c_init[i % 8];
    if (i == 0)
        atomicAdd(&d_counter, 1000);
}

__global__ void write_globals(void)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1024)
        d_array[i] = -(float)i;
    if (i < 4)
        d_init[i] *= 10;
}

int main(void)
{
    // Static initializers are visible.
    int counter = 0;
    CK(cudaMemcpyFromSymbol(&counter, d_counter, sizeof counter));
    long long init[4];
    CK(cudaMemcpyFromSymbol(init, d_init, sizeof init));
    int cinit[8];
    CK(cudaMemcpyFromSymbol(cinit, c_init, sizeof cinit));
    printf("d_counter=%d d_init=%lld,%lld,%lld,%lld c_init[0]=%d c_init[7]=%d\n", counter, init[0],
           init[1], init[2], init[3], cinit[0], cinit[7]);
    EXPECT(counter == 17 && init[2] == 3000000000ll && cinit[0] == 8 && cinit[7] == 1,
           "static initializers");

    size_t sz = 0;
    CK(cudaGetSymbolSize(&sz, d_array));
    printf("size_d_array=%zu\n", sz);
    EXPECT(sz == 4096, "d_array size %zu", sz);
    CK(cudaGetSymbolSize(&sz, c_params));
    printf("size_c_params=%zu\n", sz);
    EXPECT(sz == sizeof(Params), "c_params size");

    float arr[1024], coef[64];
    for (int i = 0; i < 1024; i++)
        arr[i] = (float)(i % 50);
    for (int i = 0; i < 64; i++)
        coef[i] = 0.5f * (i % 4);
    CK(cudaMemcpyToSymbol(d_array, arr, sizeof arr));
    // Constants in two pieces, the second with an offset.
    CK(cudaMemcpyToSymbol(c_coef, coef, 32 * sizeof(float)));
    CK(cudaMemcpyToSymbol(c_coef, coef + 32, 32 * sizeof(float), 32 * sizeof(float)));
    Params p = {3, 0.5};
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    CK(cudaMemcpyToSymbolAsync(c_params, &p, sizeof p, 0, cudaMemcpyHostToDevice, s));
    CK(cudaStreamSynchronize(s));

    const int n = 10000;
    float *dout, *h = (float *)malloc(n * sizeof(float));
    CK(cudaMalloc(&dout, n * sizeof(float)));
    apply<<<(n + 255) / 256, 256>>>(dout, n);
    CKL();
    CK(cudaMemcpy(h, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float want = arr[i % 1024] * coef[i % 64] * 3 + 0.5f + cinit[i % 8];
        bad += h[i] != want;
    }
    printf("apply_bad=%d\n", bad);
    EXPECT(bad == 0, "kernel reading symbols: %d wrong", bad);
    CK(cudaMemcpyFromSymbol(&counter, d_counter, sizeof counter));
    printf("d_counter_after=%d\n", counter);
    EXPECT(counter == 1017, "d_counter %d", counter);

    // Symbol addresses work with ordinary copies and kernels' writes show.
    write_globals<<<4, 256>>>();
    CKL();
    float *arr_addr = NULL;
    CK(cudaGetSymbolAddress((void **)&arr_addr, d_array));
    float back[1024];
    CK(cudaMemcpy(back, arr_addr, sizeof back, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < 1024; i++)
        bad += back[i] != -(float)i;
    printf("through_address_bad=%d\n", bad);
    EXPECT(bad == 0, "reading d_array through its address");
    float part[10];
    CK(cudaMemcpyFromSymbolAsync(part, d_array, sizeof part, 100 * sizeof(float), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    printf("offset_read=%.1f,%.1f\n", part[0], part[9]);
    EXPECT(part[0] == -100.f && part[9] == -109.f, "offset read");
    CK(cudaMemcpyFromSymbol(init, d_init, sizeof init));
    printf("d_init_after=%lld,%lld,%lld,%lld\n", init[0], init[1], init[2], init[3]);
    EXPECT(init[2] == 30000000000ll, "d_init after kernel");

    // Device-to-device into a symbol, from a symbol's address.
    float *tmp;
    CK(cudaMalloc(&tmp, sizeof arr));
    CK(cudaMemcpy(tmp, arr, sizeof arr, cudaMemcpyHostToDevice));
    CK(cudaMemcpyToSymbol(d_array, tmp, sizeof arr, 0, cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy(back, arr_addr, sizeof back, cudaMemcpyDeviceToHost));
    EXPECT(memcmp(back, arr, sizeof arr) == 0, "device-to-device copy into a symbol");
    void *caddr = NULL;
    CK(cudaGetSymbolAddress(&caddr, c_coef));
    float cback[64];
    CK(cudaMemcpy(cback, caddr, sizeof cback, cudaMemcpyDeviceToHost));
    EXPECT(memcmp(cback, coef, sizeof coef) == 0, "reading __constant__ through its address");
    printf("constant_through_address_ok=%d\n", memcmp(cback, coef, sizeof coef) == 0);

    // Out-of-range copies are refused.
    cudaError_t e = cudaMemcpyToSymbol(c_coef, coef, sizeof coef, 4);
    printf("out_of_range=%s\n", cudaGetErrorName(e));
    EXPECT(e == cudaErrorInvalidValue, "out-of-range symbol copy: %s", cudaGetErrorName(e));
    (void)cudaGetLastError();

    CK(cudaStreamDestroy(s));
    CK(cudaFree(dout));
    CK(cudaFree(tmp));
    free(h);
    return finish();
}
