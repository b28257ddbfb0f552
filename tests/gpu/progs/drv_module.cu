// Driver-API modules: cuModuleLoadData on an embedded fatbin (nvcc -fatbin)
// and cuModuleLoadDataEx on embedded PTX (JIT), cuModuleGetFunction,
// cuModuleGetGlobal, cuLaunchKernel with kernelParams and with the `extra`
// argument buffer, function enumeration, cuModuleUnload.
#include <cuda.h>
#include "common.h"
#include "drv_kernels_fatbin.h" // drv_kernels_fatbin[], from the Makefile
#include "drv_kernels_ptx.h"    // drv_kernels_ptx[], NUL-terminated

static int run_axpy(CUmodule mod, int n, float a)
{
    CUfunction f;
    CKD(cuModuleGetFunction(&f, mod, "axpy"));
    float *hx = (float *)malloc(n * 4), *hy = (float *)malloc(n * 4);
    for (int i = 0; i < n; i++) {
        hx[i] = (float)(i % 1000);
        hy[i] = (float)(i % 7);
    }
    CUdeviceptr dx, dy;
    CKD(cuMemAlloc(&dx, n * 4));
    CKD(cuMemAlloc(&dy, n * 4));
    CKD(cuMemcpyHtoD(dx, hx, n * 4));
    CKD(cuMemcpyHtoD(dy, hy, n * 4));
    void *args[] = {&a, &dx, &dy, &n};
    CKD(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CKD(cuCtxSynchronize());
    CKD(cuMemcpyDtoH(hy, dy, n * 4));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += hy[i] != a * (float)(i % 1000) + (float)(i % 7);
    CKD(cuMemFree(dx));
    CKD(cuMemFree(dy));
    free(hx);
    free(hy);
    return bad;
}

int main(void)
{
    CKD(cuInit(0));
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));

    // --- fatbin ---
    CUmodule mod;
    CKD(cuModuleLoadData(&mod, drv_kernels_fatbin));
    unsigned nfunc = 0;
    CKD(cuModuleGetFunctionCount(&nfunc, mod));
    printf("fatbin_function_count=%u\n", nfunc);
    EXPECT(nfunc == 6, "function count %u", nfunc);

    CUfunction missing;
    CKD_EXPECT(cuModuleGetFunction(&missing, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);

    int bad = run_axpy(mod, 100000, 2.5f);
    printf("fatbin_axpy_bad=%d\n", bad);
    EXPECT(bad == 0, "fatbin axpy: %d wrong", bad);

    // Globals: read the initialized value, then write new ones.
    CUdeviceptr g_scale, g_table, c_off;
    size_t sz_scale = 0, sz_table = 0, sz_off = 0;
    CKD(cuModuleGetGlobal(&g_scale, &sz_scale, mod, "g_scale"));
    CKD(cuModuleGetGlobal(&g_table, &sz_table, mod, "g_table"));
    CKD(cuModuleGetGlobal(&c_off, &sz_off, mod, "c_offsets"));
    printf("global_sizes=%zu,%zu,%zu\n", sz_scale, sz_table, sz_off);
    EXPECT(sz_scale == 4 && sz_table == 1024 && sz_off == 64, "global sizes");
    CUdeviceptr dummy;
    size_t dsz;
    CKD_EXPECT(cuModuleGetGlobal(&dummy, &dsz, mod, "no_such_global"), CUDA_ERROR_NOT_FOUND);
    int scale = 0;
    CKD(cuMemcpyDtoH(&scale, g_scale, 4));
    printf("g_scale_initial=%d\n", scale);
    EXPECT(scale == 3, "g_scale initial %d", scale);
    int offs[16];
    CKD(cuMemcpyDtoH(offs, c_off, sizeof offs));
    EXPECT(offs[15] == 15 && offs[3] == 3, "constant initializer");
    scale = 7;
    CKD(cuMemcpyHtoD(g_scale, &scale, 4));
    float table[256];
    for (int i = 0; i < 256; i++)
        table[i] = 0.5f * i;
    CKD(cuMemcpyHtoD(g_table, table, sizeof table));
    for (int i = 0; i < 16; i++)
        offs[i] = 100 * i;
    CKD(cuMemcpyHtoD(c_off, offs, sizeof offs));

    // Launch with the `extra` buffer instead of kernelParams.
    CUfunction fsg;
    CKD(cuModuleGetFunction(&fsg, mod, "scale_globals"));
    const int n = 5000;
    int *hin = (int *)malloc(n * 4);
    float *hout = (float *)malloc(n * 4);
    for (int i = 0; i < n; i++)
        hin[i] = i - 2500;
    CUdeviceptr din, dout;
    CKD(cuMemAlloc(&din, n * 4));
    CKD(cuMemAlloc(&dout, n * 4));
    CKD(cuMemcpyHtoD(din, hin, n * 4));
    // Copies from pageable memory return once staged; the legacy stream still
    // carries them, and s (non-blocking) does not wait for it.
    CKD(cuCtxSynchronize());
    struct {
        CUdeviceptr in;
        CUdeviceptr out;
        int n;
    } pbuf = {din, dout, n};
    // The buffer size must be the kernel's parameter size (20 here: the struct's
    // tail padding is not part of it), taken from the last parameter.
    size_t last_off = 0, last_size = 0;
    CKD(cuFuncGetParamInfo(fsg, 2, &last_off, &last_size));
    size_t pbuf_size = last_off + last_size;
    printf("param_buffer_size=%zu\n", pbuf_size);
    EXPECT(pbuf_size == 20, "scale_globals parameter size %zu", pbuf_size);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pbuf, CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &pbuf_size, CU_LAUNCH_PARAM_END};
    CUstream s;
    CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CKD(cuLaunchKernel(fsg, (n + 127) / 128, 1, 1, 128, 1, 1, 0, s, NULL, extra));
    CKD(cuStreamSynchronize(s));
    CKD(cuMemcpyDtoH(hout, dout, n * 4));
    bad = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        float want = (float)(hin[i] * 7 + 100 * (i % 16)) + 0.5f * (i % 256);
        bad += hout[i] != want;
        sum += hout[i];
    }
    printf("extra_launch_bad=%d sum=%.1f\n", bad, sum);
    EXPECT(bad == 0, "scale_globals: %d wrong", bad);

    // A larger buffer is refused at the launch, the struct's own (24, with
    // its tail padding) included; a smaller one launches (driver 580). The
    // codes are printed, so that vcuda's must be the same, and nothing is
    // left to the next synchronisation. The launches write nothing (n = 0).
    struct {
        CUdeviceptr in;
        CUdeviceptr out;
        int n;
    } none = {din, dout, 0};
    size_t sizes[] = {sizeof(none), pbuf_size + 4, pbuf_size - 4};
    for (size_t w : sizes) {
        void *x[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &none, CU_LAUNCH_PARAM_BUFFER_SIZE, &w, CU_LAUNCH_PARAM_END};
        CUresult wr = cuLaunchKernel(fsg, 1, 1, 1, 32, 1, 1, 0, s, NULL, x);
        printf("extra_size_%zu=%d\n", w, (int)wr);
        EXPECT((wr == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) == (w > pbuf_size),
               "a %zu-byte buffer for %zu bytes of parameters: %d", w, pbuf_size, (int)wr);
    }
    CKD(cuStreamSynchronize(s));

    int maxthr = 0;
    CKD(cuFuncGetAttribute(&maxthr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fsg));
    printf("func_max_threads_gt_0=%d\n", maxthr > 0);
    CKD(cuStreamDestroy(s));
    CKD(cuMemFree(din));
    CKD(cuMemFree(dout));
    free(hin);
    free(hout);
    CKD(cuModuleUnload(mod));

    // --- PTX, JIT-compiled by the driver, with an error log buffer ---
    char log[4096] = "";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof log};
    CUmodule pmod;
    CKD(cuModuleLoadDataEx(&pmod, drv_kernels_ptx, 2, opts, vals));
    bad = run_axpy(pmod, 4099, -1.5f);
    printf("ptx_axpy_bad=%d\n", bad);
    EXPECT(bad == 0, "PTX axpy: %d wrong", bad);
    CUdeviceptr pg;
    size_t pgs;
    CKD(cuModuleGetGlobal(&pg, &pgs, pmod, "g_scale"));
    int pscale = 0;
    CKD(cuMemcpyDtoH(&pscale, pg, 4));
    printf("ptx_g_scale=%d\n", pscale);
    EXPECT(pscale == 3, "PTX module global %d (modules must not share globals)", pscale);
    CKD(cuModuleUnload(pmod));

    // Invalid image.
    static const char junk[64] = "this is not a CUDA module image";
    CUmodule jm;
    CUresult r = cuModuleLoadData(&jm, junk);
    printf("junk_image_rejected=%d\n", r != CUDA_SUCCESS);
    EXPECT(r != CUDA_SUCCESS, "junk image accepted");

    CKD(cuDevicePrimaryCtxRelease(dev));
    return finish();
}
