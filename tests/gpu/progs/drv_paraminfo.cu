// Kernel parameter layout: cuFuncGetParamInfo / cuKernelGetParamInfo /
// cudaFuncGetParamInfo looped until CUDA_ERROR_INVALID_VALUE, on kernels of a
// loaded fatbin and on this program's own kernels (via cudaGetFuncBySymbol),
// checked against the host compiler's layout of the same parameter list.
#include <cuda.h>
#include <stddef.h>
#include "common.h"
#include "drv_kernels_fatbin.h"

struct Mixed {
    char c;
    double d;
    short s;
    int i;
};

// Host mirror of params_mixed's parameter list (kernel params follow the
// alignment of each type, like a struct).
struct MixedParams {
    char c;
    double d;
    short s;
    int4 v;
    float *out;
    long long ll;
    Mixed m;
    unsigned char u8;
};

struct Odd {
    char a[3];
};
struct alignas(16) Wide {
    double x, y;
    int z;
};
__global__ void local_kernel(int a, Odd o, double b, char c, Wide w, float4 f, void *p,
                             unsigned short us)
{
    if (p)
        *(int *)p = a + o.a[0] + (int)b + c + w.z + (int)f.x + us;
}
struct LocalParams {
    int a;
    Odd o;
    double b;
    char c;
    Wide w;
    float4 f;
    void *p;
    unsigned short us;
};

static int loop_func(CUfunction f, const char *name, const size_t *off_want,
                     const size_t *size_want, size_t nwant)
{
    size_t i = 0, off, sz;
    CUresult r;
    int bad = 0;
    while ((r = cuFuncGetParamInfo(f, i, &off, &sz)) == CUDA_SUCCESS) {
        printf("%s param %zu offset=%zu size=%zu\n", name, i, off, sz);
        if (i >= nwant || off != off_want[i] || sz != size_want[i])
            bad++;
        i++;
    }
    printf("%s params=%zu end=%s\n", name, i, drv_err_name(r));
    if (i != nwant || r != CUDA_ERROR_INVALID_VALUE)
        bad++;
    return bad;
}

int main(void)
{
    CK(cudaSetDevice(0));
    CK(cudaFree(0)); // make the primary context current for the driver API
    CKD(cuInit(0));

    CUmodule mod;
    CKD(cuModuleLoadData(&mod, drv_kernels_fatbin));

    const size_t mixed_off[] = {offsetof(MixedParams, c), offsetof(MixedParams, d),
                                offsetof(MixedParams, s), offsetof(MixedParams, v),
                                offsetof(MixedParams, out), offsetof(MixedParams, ll),
                                offsetof(MixedParams, m), offsetof(MixedParams, u8)};
    const size_t mixed_size[] = {1, 8, 2, 16, 8, 8, sizeof(Mixed), 1};
    CUfunction f;
    CKD(cuModuleGetFunction(&f, mod, "params_mixed"));
    int bad = loop_func(f, "params_mixed", mixed_off, mixed_size, 8);
    EXPECT(bad == 0, "params_mixed layout");

    const size_t axpy_off[] = {0, 8, 16, 24}, axpy_size[] = {4, 8, 8, 4};
    CKD(cuModuleGetFunction(&f, mod, "axpy"));
    bad = loop_func(f, "axpy", axpy_off, axpy_size, 4);
    EXPECT(bad == 0, "axpy layout");

    CKD(cuModuleGetFunction(&f, mod, "no_params"));
    bad = loop_func(f, "no_params", NULL, NULL, 0);
    EXPECT(bad == 0, "no_params layout");

    // This program's own kernel, through the runtime's handle.
    const size_t local_off[] = {offsetof(LocalParams, a), offsetof(LocalParams, o),
                                offsetof(LocalParams, b), offsetof(LocalParams, c),
                                offsetof(LocalParams, w), offsetof(LocalParams, f),
                                offsetof(LocalParams, p), offsetof(LocalParams, us)};
    const size_t local_size[] = {4, 3, 8, 1, sizeof(Wide), 16, 8, 2};
    cudaFunction_t rf;
    CK(cudaGetFuncBySymbol(&rf, (const void *)local_kernel));
    bad = loop_func((CUfunction)rf, "local_kernel", local_off, local_size, 8);
    EXPECT(bad == 0, "local_kernel layout");

    // The runtime's own query agrees.
    size_t i = 0, off, sz;
    int agree = 1;
    cudaError_t e;
    while ((e = cudaFuncGetParamInfo((const void *)local_kernel, i, &off, &sz)) == cudaSuccess) {
        if (i >= 8 || off != local_off[i] || sz != local_size[i])
            agree = 0;
        i++;
    }
    (void)cudaGetLastError();
    printf("runtime_param_info params=%zu agree=%d end=%s\n", i, agree, cudaGetErrorName(e));
    EXPECT(i == 8 && agree, "cudaFuncGetParamInfo disagrees");

    // And the kernel really takes these arguments.
    int *d;
    CK(cudaMalloc(&d, 4));
    Odd o = {{1, 2, 3}};
    Wide w = {1.0, 2.0, 30};
    local_kernel<<<1, 1>>>(100, o, 5.0, 7, w, make_float4(9.f, 0.f, 0.f, 0.f), d, 1000);
    CKL();
    int got = 0;
    CK(cudaMemcpy(&got, d, 4, cudaMemcpyDeviceToHost));
    printf("local_kernel_result=%d\n", got);
    EXPECT(got == 100 + 1 + 5 + 7 + 30 + 9 + 1000, "local_kernel result %d", got);
    CK(cudaFree(d));
    CKD(cuModuleUnload(mod));
    return finish();
}
