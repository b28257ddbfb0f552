// First-version driver entry points that CUDA 13 headers #define away (to
// _v2) but the driver still exports, declared here by symbol: v1 array
// creation and descriptors (32-bit sizes), the 1D array copies with 32-bit
// offsets (HtoA, AtoH, AtoA and their async forms, DtoA/AtoD where a device
// address fits 32 bits), v1 3D copies (CUDA_MEMCPY3D_v1), the v1 memory
// operations' per-thread forms (served only where
// CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 says so), the pools of a
// location (cuMemGetDefaultMemPool, cuMemGetMemPool, cuMemSetMemPool),
// cuPointerSetAttribute (SYNC_MEMOPS) and cuMemBatchDecompressAsync's answer.
#include <cuda.h>
#include "common.h"

typedef unsigned int devptr_v1;
struct desc_v1 {
    unsigned int Width, Height;
    CUarray_format Format;
    unsigned int NumChannels;
};
struct desc3d_v1 {
    unsigned int Width, Height, Depth;
    CUarray_format Format;
    unsigned int NumChannels, Flags;
};
struct copy3d_v1 {
    unsigned int srcXInBytes, srcY, srcZ, srcLOD;
    CUmemorytype srcMemoryType;
    const void *srcHost;
    devptr_v1 srcDevice;
    CUarray srcArray;
    void *reserved0;
    unsigned int srcPitch, srcHeight;
    unsigned int dstXInBytes, dstY, dstZ, dstLOD;
    CUmemorytype dstMemoryType;
    void *dstHost;
    devptr_v1 dstDevice;
    CUarray dstArray;
    void *reserved1;
    unsigned int dstPitch, dstHeight;
    unsigned int WidthInBytes, Height, Depth;
};

extern "C" {
CUresult v1_ArrayCreate(CUarray *, const desc_v1 *) __asm__("cuArrayCreate");
CUresult v1_CtxCreate(CUcontext *, unsigned int, CUdevice) __asm__("cuCtxCreate");
CUresult v1_ArrayGetDescriptor(desc_v1 *, CUarray) __asm__("cuArrayGetDescriptor");
CUresult v1_Array3DCreate(CUarray *, const desc3d_v1 *) __asm__("cuArray3DCreate");
CUresult v1_Array3DGetDescriptor(desc3d_v1 *, CUarray) __asm__("cuArray3DGetDescriptor");
CUresult v1_MemcpyHtoA(CUarray, unsigned int, const void *, unsigned int) __asm__("cuMemcpyHtoA");
CUresult v1_MemcpyAtoH(void *, CUarray, unsigned int, unsigned int) __asm__("cuMemcpyAtoH");
CUresult v1_MemcpyHtoAAsync(CUarray, unsigned int, const void *, unsigned int, CUstream) __asm__("cuMemcpyHtoAAsync");
CUresult v1_MemcpyAtoHAsync(void *, CUarray, unsigned int, unsigned int, CUstream) __asm__("cuMemcpyAtoHAsync");
CUresult v1_MemcpyAtoA(CUarray, unsigned int, CUarray, unsigned int, unsigned int) __asm__("cuMemcpyAtoA");
CUresult v1_MemcpyAtoD(devptr_v1, CUarray, unsigned int, unsigned int) __asm__("cuMemcpyAtoD");
CUresult v1_MemcpyDtoA(CUarray, unsigned int, devptr_v1, unsigned int) __asm__("cuMemcpyDtoA");
CUresult v1_Memcpy3D(const copy3d_v1 *) __asm__("cuMemcpy3D");
CUresult v1_Memcpy3DAsync(const copy3d_v1 *, CUstream) __asm__("cuMemcpy3DAsync");
CUresult v1_MemAlloc(devptr_v1 *, unsigned int) __asm__("cuMemAlloc");
CUresult v1_MemFree(devptr_v1) __asm__("cuMemFree");
CUresult v1_WriteValue32_ptsz(CUstream, CUdeviceptr, cuuint32_t, unsigned int) __asm__("cuStreamWriteValue32_ptsz");
CUresult v1_WaitValue32_ptsz(CUstream, CUdeviceptr, cuuint32_t, unsigned int) __asm__("cuStreamWaitValue32_ptsz");
CUresult v1_WriteValue64_ptsz(CUstream, CUdeviceptr, cuuint64_t, unsigned int) __asm__("cuStreamWriteValue64_ptsz");
CUresult v1_WaitValue64_ptsz(CUstream, CUdeviceptr, cuuint64_t, unsigned int) __asm__("cuStreamWaitValue64_ptsz");
CUresult v1_BatchMemOp_ptsz(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int)
    __asm__("cuStreamBatchMemOp_ptsz");
}

enum { N1 = 6000, W = 40, H = 12, D = 5 };

static void arrays_and_copies(void)
{
    desc_v1 d1 = {N1, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1}, g1;
    desc3d_v1 d3 = {W, H, D, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0}, g3;
    static unsigned char src[N1], dst[N1];
    CUarray a, b, c;
    CUstream s;

    fill_pattern(src, sizeof src, 3);
    // First-version calls in the runtime's context (API version 3020+): the
    // driver refuses them; in a context of the first-version cuCtxCreate
    // they run.
    printf("v1 call in the runtime's context: %s\n", drv_err_name(v1_ArrayCreate(&a, &d1)));
    CUcontext prim, v1c;
    CKD(cuCtxGetCurrent(&prim));
    CUresult cr = v1_CtxCreate(&v1c, 0, 0);
    printf("first-version context: %s\n", drv_err_name(cr));
    if (cr != CUDA_SUCCESS) // the H100's driver makes none (CUDA_ERROR_OUT_OF_MEMORY)
        return;
    CKD(v1_ArrayCreate(&a, &d1));
    CKD(v1_ArrayCreate(&b, &d1));
    CKD(v1_ArrayGetDescriptor(&g1, a));
    printf("v1 array: %ux%u format %d channels %u\n", g1.Width, g1.Height, (int)g1.Format, g1.NumChannels);
    CKD(v1_Array3DCreate(&c, &d3));
    CKD(v1_Array3DGetDescriptor(&g3, c));
    printf("v1 3D array: %ux%ux%u flags %u\n", g3.Width, g3.Height, g3.Depth, g3.Flags);
    CKD_EXPECT(v1_ArrayCreate(&a, NULL), CUDA_ERROR_INVALID_VALUE);

    // HtoA -> AtoA (offset) -> AtoH
    CKD(v1_MemcpyHtoA(a, 0, src, N1));
    CKD(v1_MemcpyAtoA(b, 100, a, 0, N1 - 100));
    memset(dst, 0, sizeof dst);
    CKD(v1_MemcpyAtoH(dst, b, 100, N1 - 100));
    printf("v1 HtoA/AtoA/AtoH: %s\n", memcmp(dst, src, N1 - 100) ? "differ" : "match");
    EXPECT(!memcmp(dst, src, N1 - 100), "v1 HtoA/AtoA/AtoH data");
    CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    memset(dst, 0, sizeof dst);
    CKD(v1_MemcpyHtoAAsync(b, 0, src + 1, N1 - 1, s));
    CKD(v1_MemcpyAtoHAsync(dst, b, 0, N1 - 1, s));
    CKD(cuStreamSynchronize(s));
    printf("v1 async HtoA/AtoH: %s\n", memcmp(dst, src + 1, N1 - 1) ? "differ" : "match");
    EXPECT(!memcmp(dst, src + 1, N1 - 1), "v1 async data");
    CKD_EXPECT(v1_MemcpyHtoA(a, 1, src, N1), CUDA_ERROR_INVALID_VALUE); // past the array's end

    // DtoA/AtoD need a device address that fits 32 bits: a v1 allocation
    // when the driver can make one there; the line printed is the same.
    devptr_v1 low = 0;
    CUresult rc = v1_MemAlloc(&low, N1);
    if (rc == CUDA_SUCCESS) {
        CKD(v1_MemcpyAtoD(low, a, 0, N1));
        CKD(v1_MemcpyDtoA(b, 0, low, N1));
        memset(dst, 0, sizeof dst);
        CKD(v1_MemcpyAtoH(dst, b, 0, N1));
        EXPECT(!memcmp(dst, src, N1), "v1 AtoD/DtoA data");
        CKD(v1_MemFree(low));
    }
    fprintf(stderr, "legacy_v1: v1 cuMemAlloc -> %s\n", drv_err_name(rc));
    printf("v1 DtoA/AtoD: checked\n");

    // v1 3D copies: host -> 3D array, then a box with offsets back
    copy3d_v1 cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_HOST;
    cp.srcHost = src;
    cp.srcPitch = W;
    cp.srcHeight = H;
    cp.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    cp.dstArray = c;
    cp.WidthInBytes = W;
    cp.Height = H;
    cp.Depth = D;
    CKD(v1_Memcpy3D(&cp));
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    cp.srcArray = c;
    cp.srcXInBytes = 3;
    cp.srcY = 2;
    cp.srcZ = 1;
    cp.dstMemoryType = CU_MEMORYTYPE_HOST;
    cp.dstHost = dst;
    cp.dstPitch = W;
    cp.dstHeight = H;
    cp.WidthInBytes = W - 3;
    cp.Height = H - 2;
    cp.Depth = D - 1;
    memset(dst, 0, sizeof dst);
    CKD(v1_Memcpy3DAsync(&cp, s));
    CKD(cuStreamSynchronize(s));
    int bad = 0;
    for (int z = 0; z < D - 1; z++)
        for (int y = 0; y < H - 2; y++)
            bad += memcmp(dst + (size_t)(z * H + y) * W, src + (size_t)((z + 1) * H + y + 2) * W + 3, W - 3) != 0;
    printf("v1 3D copies: %s, checksum %016llx\n", bad ? "differ" : "match",
           (unsigned long long)fnv1a(dst, (size_t)W * H * (D - 1)));
    EXPECT(!bad, "v1 3D copy rows differ: %d", bad);
    CKD_EXPECT(v1_Memcpy3D(NULL), CUDA_ERROR_INVALID_VALUE);
    CKD(cuStreamDestroy(s));
    CKD(cuArrayDestroy(a));
    CKD(cuArrayDestroy(b));
    CKD(cuArrayDestroy(c));
    CKD(cuCtxDestroy(v1c));
    CKD(cuCtxSetCurrent(prim));
}

static void memops_v1(void)
{
    int v1 = 0, v1_64 = 0;
    CUdeviceptr d;
    CKD(cuDeviceGetAttribute(&v1, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, 0));
    CKD(cuDeviceGetAttribute(&v1_64, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1, 0));
    printf("v1 memops: %s, 64-bit %s\n", v1 ? "served" : "not served", v1_64 ? "served" : "not served");
    CKD(cuMemAlloc(&d, 64));
    CKD(cuMemsetD8(d, 0, 64));
    CUstreamBatchMemOpParams ops[2];
    memset(ops, 0, sizeof ops);
    ops[0].operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    ops[0].writeValue.address = d + 4;
    ops[0].writeValue.value = 0x33;
    ops[1].operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    ops[1].writeValue.address = d + 24;
    ops[1].writeValue.value = 0x55;
    if (!v1) {
        CKD_EXPECT(v1_WriteValue32_ptsz(NULL, d, 0x11, 0), CUDA_ERROR_NOT_SUPPORTED);
        CKD_EXPECT(v1_WaitValue32_ptsz(NULL, d, 0, CU_STREAM_WAIT_VALUE_GEQ), CUDA_ERROR_NOT_SUPPORTED);
        CKD_EXPECT(v1_BatchMemOp_ptsz(NULL, 2, ops, 0), CUDA_ERROR_NOT_SUPPORTED);
    } else {
        uint32_t w[8] = {0};
        CKD(v1_WriteValue32_ptsz(NULL, d, 0x11, 0));
        CKD(v1_WaitValue32_ptsz(NULL, d, 0x11, CU_STREAM_WAIT_VALUE_EQ));
        CKD(v1_BatchMemOp_ptsz(NULL, 2, ops, 0));
        if (v1_64) {
            CKD(v1_WriteValue64_ptsz(NULL, d + 8, 0x2200000022ull, 0));
            CKD(v1_WaitValue64_ptsz(NULL, d + 8, 0x2200000022ull, CU_STREAM_WAIT_VALUE_GEQ));
        }
        CKD(cuStreamSynchronize(CU_STREAM_PER_THREAD));
        CKD(cuMemcpyDtoH(w, d, sizeof w));
        printf("v1 memops wrote: %x %x %x %x\n", w[0], w[1], w[6], v1_64 ? w[2] : 0x22);
        EXPECT(w[0] == 0x11 && w[1] == 0x33 && w[6] == 0x55 && (!v1_64 || w[2] == 0x22), "v1 memops values");
    }
    CKD(cuMemFree(d));
}

static void pools_of_a_location(void)
{
    CUmemLocation loc;
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = 0;
    CUmemoryPool def, dev_def, cur, pool;
    CKD(cuMemGetDefaultMemPool(&def, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    CKD(cuDeviceGetDefaultMemPool(&dev_def, 0));
    CKD(cuMemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    printf("default pool is the device's: %s, current: %s\n", def == dev_def ? "yes" : "no",
           cur == def ? "default" : "other");
    EXPECT(def == dev_def && cur == def, "default pools");
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location = loc;
    CKD(cuMemPoolCreate(&pool, &props));
    CKD(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, pool));
    CKD(cuMemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    CUmemoryPool devcur;
    CKD(cuDeviceGetMemPool(&devcur, 0));
    printf("set pool is current: %s, for the device: %s\n", cur == pool ? "yes" : "no", devcur == pool ? "yes" : "no");
    EXPECT(cur == pool && devcur == pool, "set pool");
    // an allocation from the current pool, used and freed in stream order
    CUdeviceptr p;
    CUstream s;
    unsigned char back[256];
    CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CKD(cuMemAllocAsync(&p, 1 << 20, s));
    CKD(cuMemsetD8Async(p, 0x5a, 1 << 20, s));
    CKD(cuMemcpyDtoHAsync(back, p + 1000, sizeof back, s));
    CKD(cuMemFreeAsync(p, s));
    CKD(cuStreamSynchronize(s));
    printf("allocation from the current pool: %02x\n", back[17]);
    EXPECT(back[0] == 0x5a && back[255] == 0x5a, "pool allocation bytes");
    CKD(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, def));
    CKD(cuMemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    printf("restored: %s\n", cur == def ? "default" : "other");
    EXPECT(cur == def, "restored default");
    CUmemLocation none;
    none.type = CU_MEM_LOCATION_TYPE_NONE;
    none.id = 0;
    CKD_EXPECT(cuMemGetMemPool(&cur, &none, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_ERROR_INVALID_VALUE);
    CKD_EXPECT(cuMemGetDefaultMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_INVALID), CUDA_ERROR_INVALID_VALUE);
    CKD(cuStreamDestroy(s));
    CKD(cuMemPoolDestroy(pool));
}

static void pointer_set_attribute(void)
{
    CUdeviceptr d;
    unsigned int one = 1, zero = 0;
    CKD(cuMemAlloc(&d, 4096));
    CKD(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
    CKD(cuPointerSetAttribute(&zero, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d + 64));
    printf("SYNC_MEMOPS set: ok\n");
    printf("another attribute: %s\n", drv_err_name(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_CONTEXT, d)));
    CKD(cuMemFree(d));
    printf("freed memory: %s\n", drv_err_name(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d)));
}

static void decompress(void)
{
    int algos = 0;
    CKD(cuDeviceGetAttribute(&algos, CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK, 0));
    printf("decompression algorithms: %x\n", algos);
    if (algos)
        return; // a GPU with an engine: not this program's concern
    CUdeviceptr d;
    CKD(cuMemAlloc(&d, 1 << 16));
    CKD(cuMemsetD8(d, 0, 1 << 16));
    CUmemDecompressParams p;
    memset(&p, 0, sizeof p);
    p.src = (const void *)(uintptr_t)d;
    p.srcNumBytes = 4096;
    p.dst = (void *)(uintptr_t)(d + 8192);
    p.dstNumBytes = 8192;
    p.dstActBytes = (cuuint32_t *)(uintptr_t)(d + 60000);
    p.algo = CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE;
    size_t idx = 12345;
    CUresult rc = cuMemBatchDecompressAsync(&p, 1, 0, &idx, NULL);
    printf("decompression without an engine: %s, index %s\n", drv_err_name(rc),
           idx == (size_t)-1 ? "none" : idx == 12345 ? "untouched" : idx == 0 ? "0" : "other");
    EXPECT(rc != CUDA_SUCCESS, "decompression without an engine succeeded");
    CKD(cuStreamSynchronize(NULL));
    CKD(cuMemFree(d));
}

int main(void)
{
    CK(cudaSetDevice(0));
    CK(cudaFree(0)); // the primary context, current
    arrays_and_copies();
    memops_v1();
    pools_of_a_location();
    pointer_set_attribute();
    decompress();
    return finish();
}
