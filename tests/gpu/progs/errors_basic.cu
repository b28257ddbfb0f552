// Error reporting without faults: cudaGetErrorName/cudaGetErrorString for a
// set of codes (deterministic strings), an invalid launch configuration
// (too many threads per block) reported at once by cudaPeekAtLastError and
// cudaGetLastError, cleared by cudaGetLastError and not sticky; other bad
// shapes (block z, empty grid, grid y, shared memory); a block larger than the
// kernel's __launch_bounds__ (its answer printed: the CI stand-in knows no
// launch bounds); invalid arguments to API calls; the device staying usable
// afterwards.
// Note: CUDA 13.0 with driver 580 reports these launch-shape errors as
// cudaErrorInvalidValue (older releases: cudaErrorInvalidConfiguration); the
// program accepts either, and the exact name it prints is what vcuda must match.
#include "common.h"

__global__ void ok_kernel(int *p) { p[threadIdx.x] = threadIdx.x; }
__global__ void __launch_bounds__(128) bounded_kernel(int *p) { p[threadIdx.x] = -(int)threadIdx.x; }

static int bad_shape(cudaError_t e) { return e == cudaErrorInvalidConfiguration || e == cudaErrorInvalidValue; }

int main(void)
{
    const cudaError_t codes[] = {cudaSuccess, cudaErrorInvalidValue, cudaErrorMemoryAllocation,
                                 cudaErrorInitializationError, cudaErrorInvalidConfiguration,
                                 cudaErrorInvalidDevicePointer, cudaErrorInvalidMemcpyDirection,
                                 cudaErrorInvalidDevice, cudaErrorInvalidResourceHandle,
                                 cudaErrorNotReady, cudaErrorIllegalAddress, cudaErrorLaunchFailure,
                                 cudaErrorLaunchOutOfResources, cudaErrorNoDevice,
                                 cudaErrorCooperativeLaunchTooLarge, cudaErrorNotSupported,
                                 cudaErrorUnknown, (cudaError_t)9999};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        printf("code %d: %s | %s\n", (int)codes[i], cudaGetErrorName(codes[i]), cudaGetErrorString(codes[i]));
    EXPECT(strcmp(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress") == 0, "error name");

    int *d;
    CK(cudaMalloc(&d, 2048 * sizeof(int)));
    printf("initial_last_error=%s\n", cudaGetErrorName(cudaGetLastError()));

    // Too many threads per block.
    ok_kernel<<<1, 2048>>>(d);
    cudaError_t peek = cudaPeekAtLastError();
    cudaError_t peek2 = cudaPeekAtLastError();
    cudaError_t last = cudaGetLastError();
    cudaError_t after = cudaGetLastError();
    printf("too_many_threads peek=%s peek_again=%s get=%s get_again=%s\n", cudaGetErrorName(peek),
           cudaGetErrorName(peek2), cudaGetErrorName(last), cudaGetErrorName(after));
    EXPECT(bad_shape(peek) && peek2 == peek && last == peek && after == cudaSuccess,
           "invalid configuration not reported as expected");
    cudaError_t sync = cudaDeviceSynchronize();
    printf("sync_after_bad_config=%s\n", cudaGetErrorName(sync));
    EXPECT(sync == cudaSuccess, "a configuration error became sticky");

    // Block dimension z over its limit, and a zero-sized grid.
    ok_kernel<<<1, dim3(1, 1, 128)>>>(d);
    cudaError_t ez = cudaGetLastError();
    printf("block_z_128=%s\n", cudaGetErrorName(ez));
    EXPECT(bad_shape(ez), "block z 128: %s", cudaGetErrorName(ez));
    ok_kernel<<<0, 32>>>(d);
    cudaError_t e0 = cudaGetLastError();
    printf("grid_zero=%s\n", cudaGetErrorName(e0));
    EXPECT(bad_shape(e0), "zero grid: %s", cudaGetErrorName(e0));
    ok_kernel<<<dim3(1, 70000), 32>>>(d);
    cudaError_t ey = cudaGetLastError();
    printf("grid_y_70000=%s\n", cudaGetErrorName(ey));
    EXPECT(bad_shape(ey), "grid y 70000: %s", cudaGetErrorName(ey));
    ok_kernel<<<1, 32, 1 << 30>>>(d);
    cudaError_t es = cudaGetLastError();
    printf("shared_1GiB=%s\n", cudaGetErrorName(es));
    EXPECT(es != cudaSuccess, "1 GiB of shared memory accepted");

    // More threads than the kernel's launch bounds allow: natively refused
    // at the launch, not at the next synchronisation.
    bounded_kernel<<<1, 256>>>(d);
    cudaError_t eb = cudaGetLastError();
    cudaError_t eb_sync = cudaDeviceSynchronize();
    printf("launch_bounds_256_of_128=%s sync_after=%s\n", cudaGetErrorName(eb), cudaGetErrorName(eb_sync));
    EXPECT(eb_sync == cudaSuccess, "a launch-bounds error surfaced at the synchronisation: %s",
           cudaGetErrorName(eb_sync));
    bounded_kernel<<<1, 128>>>(d);
    CKL();

    // A correct launch right after works.
    ok_kernel<<<1, 1024>>>(d);
    CKL();
    CK(cudaDeviceSynchronize());
    int h[1024];
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < 1024; i++)
        bad += h[i] != i;
    printf("good_launch_after_errors bad=%d\n", bad);
    EXPECT(bad == 0, "kernel after errors: %d wrong", bad);

    // API argument errors (immediate, not sticky).
    cudaError_t e1 = cudaMemcpy(h, d, sizeof h, (cudaMemcpyKind)42);
    printf("bad_memcpy_kind=%s\n", cudaGetErrorName(e1));
    EXPECT(e1 == cudaErrorInvalidMemcpyDirection, "memcpy kind 42: %s", cudaGetErrorName(e1));
    cudaError_t e2 = cudaSetDevice(1000);
    printf("set_device_1000=%s\n", cudaGetErrorName(e2));
    EXPECT(e2 == cudaErrorInvalidDevice, "cudaSetDevice(1000): %s", cudaGetErrorName(e2));
    cudaError_t e3 = cudaMemset(d, 0, 1ull << 40);
    printf("memset_too_long=%s\n", cudaGetErrorName(e3));
    EXPECT(e3 != cudaSuccess, "memset past the allocation accepted");
    cudaError_t e4 = cudaStreamSynchronize((cudaStream_t)0);
    printf("sync_default_stream=%s\n", cudaGetErrorName(e4));
    printf("last_error_now=%s\n", cudaGetErrorName(cudaGetLastError()));
    printf("last_error_cleared=%s\n", cudaGetErrorName(cudaGetLastError()));
    CK(cudaDeviceSynchronize());
    CK(cudaFree(d));
    return finish();
}
