// Context-independent loading: cuLibraryLoadData on an embedded fatbin,
// kernel enumeration and names, cuLibraryGetKernel + cuKernelGetFunction +
// cuLaunchKernel, cuLibraryGetGlobal, cuLibraryGetModule, and the runtime's
// cudaLibraryLoadData + cudaLibraryGetKernel + cudaLaunchKernel.
#include <cuda.h>
#include <string>
#include <vector>
#include <algorithm>
#include "common.h"
#include "drv_kernels_fatbin.h"

int main(void)
{
    CKD(cuInit(0));
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));

    // A library can be loaded before any context exists.
    CUlibrary lib;
    CKD(cuLibraryLoadData(&lib, drv_kernels_fatbin, NULL, NULL, 0, NULL, NULL, 0));
    unsigned count = 0;
    CKD(cuLibraryGetKernelCount(&count, lib));
    printf("kernel_count=%u\n", count);
    EXPECT(count == 6, "kernel count %u", count);
    std::vector<CUkernel> ks(count);
    CKD(cuLibraryEnumerateKernels(ks.data(), count, lib));
    std::vector<std::string> names;
    for (unsigned i = 0; i < count; i++) {
        const char *nm = NULL;
        CKD(cuKernelGetName(&nm, ks[i]));
        names.push_back(nm ? nm : "(null)");
    }
    std::sort(names.begin(), names.end());
    for (auto &s : names)
        printf("kernel %s\n", s.c_str());

    CUkernel kaxpy;
    CKD(cuLibraryGetKernel(&kaxpy, lib, "axpy"));
    CUkernel kmissing;
    CKD_EXPECT(cuLibraryGetKernel(&kmissing, lib, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);

    CUcontext ctx;
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));
    CUfunction faxpy;
    CKD(cuKernelGetFunction(&faxpy, kaxpy));

    // Parameter layout through the kernel handle.
    size_t off = 0, sz = 0, np = 0;
    while (cuKernelGetParamInfo(kaxpy, np, &off, &sz) == CUDA_SUCCESS) {
        printf("axpy param %zu offset=%zu size=%zu\n", np, off, sz);
        np++;
    }
    EXPECT(np == 4, "axpy has %zu params", np);

    const int n = 65536;
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; i++) {
        hx[i] = (float)(i & 1023);
        hy[i] = 1.0f;
    }
    CUdeviceptr dx, dy;
    CKD(cuMemAlloc(&dx, n * 4));
    CKD(cuMemAlloc(&dy, n * 4));
    CKD(cuMemcpyHtoD(dx, hx.data(), n * 4));
    CKD(cuMemcpyHtoD(dy, hy.data(), n * 4));
    float a = 4.0f;
    int nn = n;
    void *args[] = {&a, &dx, &dy, &nn};
    CKD(cuLaunchKernel(faxpy, n / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CKD(cuCtxSynchronize());
    CKD(cuMemcpyDtoH(hy.data(), dy, n * 4));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += hy[i] != 4.0f * (float)(i & 1023) + 1.0f;
    printf("library_axpy_bad=%d\n", bad);
    EXPECT(bad == 0, "library axpy: %d wrong", bad);

    // Globals through the library and through its module agree.
    CUdeviceptr gl = 0, gm = 0;
    size_t gls = 0, gms = 0;
    CKD(cuLibraryGetGlobal(&gl, &gls, lib, "g_scale"));
    CUmodule mod;
    CKD(cuLibraryGetModule(&mod, lib));
    CKD(cuModuleGetGlobal(&gm, &gms, mod, "g_scale"));
    printf("library_global_size=%zu same_address_as_module=%d\n", gls, gl == gm);
    EXPECT(gls == 4 && gl == gm, "library/module globals differ");
    int scale = 0;
    CKD(cuMemcpyDtoH(&scale, gl, 4));
    printf("g_scale=%d\n", scale);
    EXPECT(scale == 3, "g_scale %d", scale);

    // The same kernel again through the runtime's library API.
    cudaLibrary_t rlib;
    CK(cudaLibraryLoadData(&rlib, drv_kernels_fatbin, NULL, NULL, 0, NULL, NULL, 0));
    cudaKernel_t rk;
    CK(cudaLibraryGetKernel(&rk, rlib, "axpy"));
    unsigned rcount = 0;
    CK(cudaLibraryGetKernelCount(&rcount, rlib));
    printf("runtime_kernel_count=%u\n", rcount);
    float a2 = -2.0f;
    float *px = (float *)dx, *py = (float *)dy;
    void *rargs[] = {&a2, &px, &py, &nn};
    CK(cudaLaunchKernel((const void *)rk, dim3(n / 128), dim3(128), rargs, 0, 0));
    CKL();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hy.data(), py, n * 4, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < n; i++) {
        float y1 = 4.0f * (float)(i & 1023) + 1.0f;
        bad += hy[i] != -2.0f * (float)(i & 1023) + y1;
    }
    printf("runtime_library_axpy_bad=%d\n", bad);
    EXPECT(bad == 0, "runtime library axpy: %d wrong", bad);
    CK(cudaLibraryUnload(rlib));

    CKD(cuMemFree(dx));
    CKD(cuMemFree(dy));
    CKD(cuLibraryUnload(lib));
    CKD(cuDevicePrimaryCtxRelease(dev));
    return finish();
}
