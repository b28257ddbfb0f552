// cudaDeviceGetAttribute over every cudaDeviceAttr value: the return code of
// each, the values of the stable ones, and agreement with cudaDeviceProp.
#include "common.h"

static int is_stable(int a)
{
    switch (a) {
    case cudaDevAttrMaxThreadsPerBlock:
    case cudaDevAttrMaxBlockDimX:
    case cudaDevAttrMaxBlockDimY:
    case cudaDevAttrMaxBlockDimZ:
    case cudaDevAttrMaxGridDimX:
    case cudaDevAttrMaxGridDimY:
    case cudaDevAttrMaxGridDimZ:
    case cudaDevAttrMaxSharedMemoryPerBlock:
    case cudaDevAttrTotalConstantMemory:
    case cudaDevAttrWarpSize:
    case cudaDevAttrMaxRegistersPerBlock:
    case cudaDevAttrComputeCapabilityMajor:
    case cudaDevAttrComputeCapabilityMinor:
    case cudaDevAttrUnifiedAddressing:
    case cudaDevAttrMaxThreadsPerMultiProcessor:
    case cudaDevAttrConcurrentKernels:
    case cudaDevAttrCooperativeLaunch:
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
    case cudaDevAttrMaxRegistersPerMultiprocessor:
    case cudaDevAttrMaxBlocksPerMultiprocessor:
    case cudaDevAttrReservedSharedMemoryPerBlock:
    case cudaDevAttrMemoryPoolsSupported:
    case cudaDevAttrClusterLaunch:
    case cudaDevAttrGlobalL1CacheSupported:
    case cudaDevAttrLocalL1CacheSupported:
    case cudaDevAttrStreamPrioritiesSupported:
    case cudaDevAttrHostRegisterSupported:
    case cudaDevAttrTextureAlignment:
    case cudaDevAttrTexturePitchAlignment:
    case cudaDevAttrSurfaceAlignment:
        return 1;
    }
    return 0;
}

int main(void)
{
    CK(cudaSetDevice(0));
    int ok = 0, invalid = 0, other = 0;
    int vals[cudaDevAttrMax];
    memset(vals, 0, sizeof vals);
    for (int a = 1; a < (int)cudaDevAttrMax; a++) {
        int v = 0x7ead;
        cudaError_t e = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)a, 0);
        vals[a] = v;
        if (e == cudaSuccess)
            ok++;
        else if (e == cudaErrorInvalidValue)
            invalid++;
        else
            other++;
        if (is_stable(a))
            printf("attr %d rc=%s value=%d\n", a, cudaGetErrorName(e), v);
        else
            printf("attr %d rc=%s\n", a, cudaGetErrorName(e));
    }
    (void)cudaGetLastError(); // the invalid ones set the last error
    printf("attrs_ok=%d attrs_invalid=%d attrs_other=%d\n", ok, invalid, other);
    EXPECT(ok >= 60, "only %d attributes succeeded", ok);

    int v = 0;
    CK_EXPECT(cudaDeviceGetAttribute(&v, cudaDevAttrMax, 0), cudaErrorInvalidValue);
    CK_EXPECT(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 99), cudaErrorInvalidDevice);
    (void)cudaGetLastError();

    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    struct { int attr; long long prop; const char *name; } cmp[] = {
        {cudaDevAttrMaxThreadsPerBlock, p.maxThreadsPerBlock, "maxThreadsPerBlock"},
        {cudaDevAttrMaxBlockDimX, p.maxThreadsDim[0], "maxThreadsDim0"},
        {cudaDevAttrMaxBlockDimY, p.maxThreadsDim[1], "maxThreadsDim1"},
        {cudaDevAttrMaxBlockDimZ, p.maxThreadsDim[2], "maxThreadsDim2"},
        {cudaDevAttrMaxGridDimX, p.maxGridSize[0], "maxGridSize0"},
        {cudaDevAttrMaxGridDimY, p.maxGridSize[1], "maxGridSize1"},
        {cudaDevAttrMaxGridDimZ, p.maxGridSize[2], "maxGridSize2"},
        {cudaDevAttrMaxSharedMemoryPerBlock, (long long)p.sharedMemPerBlock, "sharedMemPerBlock"},
        {cudaDevAttrTotalConstantMemory, (long long)p.totalConstMem, "totalConstMem"},
        {cudaDevAttrWarpSize, p.warpSize, "warpSize"},
        {cudaDevAttrMaxRegistersPerBlock, p.regsPerBlock, "regsPerBlock"},
        {cudaDevAttrMultiProcessorCount, p.multiProcessorCount, "multiProcessorCount"},
        {cudaDevAttrComputeCapabilityMajor, p.major, "major"},
        {cudaDevAttrComputeCapabilityMinor, p.minor, "minor"},
        {cudaDevAttrL2CacheSize, p.l2CacheSize, "l2CacheSize"},
        {cudaDevAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor, "maxThreadsPerMultiProcessor"},
        {cudaDevAttrGlobalMemoryBusWidth, p.memoryBusWidth, "memoryBusWidth"},
        {cudaDevAttrPciBusId, p.pciBusID, "pciBusID"},
        {cudaDevAttrPciDeviceId, p.pciDeviceID, "pciDeviceID"},
        {cudaDevAttrCooperativeLaunch, p.cooperativeLaunch, "cooperativeLaunch"},
        {cudaDevAttrMaxSharedMemoryPerBlockOptin, (long long)p.sharedMemPerBlockOptin, "sharedMemPerBlockOptin"},
        {cudaDevAttrMaxBlocksPerMultiprocessor, p.maxBlocksPerMultiProcessor, "maxBlocksPerMultiProcessor"},
        {cudaDevAttrManagedMemory, p.managedMemory, "managedMemory"},
        {cudaDevAttrConcurrentKernels, p.concurrentKernels, "concurrentKernels"},
        {cudaDevAttrUnifiedAddressing, p.unifiedAddressing, "unifiedAddressing"},
    };
    int agree = 0;
    for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++) {
        long long a = vals[cmp[i].attr];
        if (a == cmp[i].prop)
            agree++;
        else
            note_failure("attribute %d = %lld but cudaDeviceProp.%s = %lld", cmp[i].attr, a,
                         cmp[i].name, cmp[i].prop);
    }
    printf("attrs_agree_with_props=%d/%d\n", agree, (int)(sizeof cmp / sizeof cmp[0]));
    EXPECT(vals[cudaDevAttrWarpSize] == 32, "warp size");
    EXPECT(vals[cudaDevAttrComputeCapabilityMajor] >= 7, "compute capability");
    return finish();
}
