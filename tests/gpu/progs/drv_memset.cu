// Driver-API memsets: cuMemsetD8/D16/D32 and their Async forms on a stream,
// cuMemsetD2D8/16/32, odd counts and offsets, checked byte for byte; memsets
// and copies of zero bytes at a null device pointer (numba's empty arrays),
// whose answers, at the call and at the next synchronisation, are printed.
#include <cuda.h>
#include <vector>
#include "common.h"

static std::vector<unsigned char> ref;

static void ref_fill(size_t off, size_t count, size_t elem, uint32_t v)
{
    for (size_t i = 0; i < count; i++)
        for (size_t b = 0; b < elem; b++)
            ref[off + i * elem + b] = (unsigned char)(v >> (8 * b));
}

static int compare(CUdeviceptr d, size_t n, const char *what)
{
    std::vector<unsigned char> h(n);
    CKD(cuMemcpyDtoH(h.data(), d, n));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += h[i] != ref[i];
    printf("%s bad=%zu checksum=%016llx\n", what, bad, (unsigned long long)fnv1a(h.data(), n));
    EXPECT(bad == 0, "%s: %zu bytes wrong", what, bad);
    return (int)bad;
}

int main(void)
{
    CKD(cuInit(0));
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));

    const size_t n = (8u << 20) + 4096;
    ref.assign(n, 0);
    CUdeviceptr d;
    CKD(cuMemAlloc(&d, n));
    CKD(cuMemsetD8(d, 0, n));
    compare(d, n, "zero");

    CKD(cuMemsetD8(d + 1, 0xa5, 12345));
    ref_fill(1, 12345, 1, 0xa5);
    CKD(cuMemsetD16(d + 20000, 0xbeef, 54321));
    ref_fill(20000, 54321, 2, 0xbeef);
    CKD(cuMemsetD32(d + 200000, 0xdeadbeefu, 1000003));
    ref_fill(200000, 1000003, 4, 0xdeadbeefu);
    compare(d, n, "sync");

    CUstream s;
    CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CKD(cuMemsetD8Async(d + 7, 0x3c, 999, s));
    ref_fill(7, 999, 1, 0x3c);
    CKD(cuMemsetD16Async(d + 4100002, 0x1234, 77777, s));
    ref_fill(4100002, 77777, 2, 0x1234);
    CKD(cuMemsetD32Async(d + 6000000, 0x0badf00du, 500001, s));
    ref_fill(6000000, 500001, 4, 0x0badf00du);
    CKD(cuMemsetD32Async(d + n - 4, 0xffffffffu, 1, s));
    ref_fill(n - 4, 1, 4, 0xffffffffu);
    CKD(cuStreamSynchronize(s));
    compare(d, n, "async");

    // 2-D: a 100-row window of a pitched region, three element widths.
    const size_t pitch = 4096, rows = 100;
    CKD(cuMemsetD8(d, 0, n));
    ref.assign(n, 0);
    CKD(cuMemsetD2D8(d + 3, pitch, 0x77, 1001, rows));
    for (size_t r = 0; r < rows; r++)
        ref_fill(3 + r * pitch, 1001, 1, 0x77);
    CKD(cuMemsetD2D16(d + rows * pitch + 2, pitch, 0xcafe, 900, rows));
    for (size_t r = 0; r < rows; r++)
        ref_fill(rows * pitch + 2 + r * pitch, 900, 2, 0xcafe);
    // Memsets of device memory return before they are done, on the legacy
    // stream, which s (non-blocking) does not wait for.
    CKD(cuCtxSynchronize());
    CKD(cuMemsetD2D32Async(d + 2 * rows * pitch + 8, pitch, 0x01020304u, 1000, rows, s));
    for (size_t r = 0; r < rows; r++)
        ref_fill(2 * rows * pitch + 8 + r * pitch, 1000, 4, 0x01020304u);
    CKD(cuStreamSynchronize(s));
    compare(d, n, "2d");

    // Misaligned 16/32-bit memsets: whatever the driver says must come through.
    CUresult r16 = cuMemsetD16(d + 1, 0, 10);
    CUresult r32 = cuMemsetD32(d + 2, 0, 10);
    printf("misaligned_d16=%s misaligned_d32=%s\n", drv_err_name(r16), drv_err_name(r32));
    CKD(cuCtxSynchronize());

    // Zero bytes at a null device pointer: nothing is touched.
    unsigned char zb[8] = {0};
    CUresult z[8] = {cuMemcpyHtoD(0, zb, 0), cuMemcpyDtoH(zb, 0, 0), cuMemcpyDtoD(0, 0, 0), cuMemsetD8(0, 0, 0),
                     cuMemcpyHtoDAsync(0, zb, 0, s), cuMemcpyDtoHAsync(zb, 0, 0, s), cuMemsetD32Async(0, 0, 0, s),
                     cuMemcpyDtoD(d, 0, 0)};
    printf("zero_bytes htod=%s dtoh=%s dtod=%s memset=%s htod_async=%s dtoh_async=%s memset_async=%s dtod_to_mine=%s\n",
           drv_err_name(z[0]), drv_err_name(z[1]), drv_err_name(z[2]), drv_err_name(z[3]), drv_err_name(z[4]),
           drv_err_name(z[5]), drv_err_name(z[6]), drv_err_name(z[7]));
    int zbad = 0;
    for (int i = 0; i < 8; i++)
        zbad += z[i] != CUDA_SUCCESS; // driver 580 on an H200: all succeed
    EXPECT(zbad == 0, "%d zero-byte operations refused", zbad);
    CUresult zs = cuStreamSynchronize(s), zc = cuCtxSynchronize();
    printf("zero_bytes stream_sync=%s ctx_sync=%s\n", drv_err_name(zs), drv_err_name(zc));
    EXPECT(zs == CUDA_SUCCESS && zc == CUDA_SUCCESS, "zero-byte operations left an error behind");

    CKD(cuStreamDestroy(s));
    CKD(cuMemFree(d));
    CKD(cuDevicePrimaryCtxRelease(dev));
    return finish();
}
