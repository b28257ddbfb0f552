// On every device (one is enough; two or more is the point): memory of each
// kind made while that device is current, and what cudaPointerGetAttributes
// and cuPointerGetAttribute say of it from another device's context: the
// device it was allocated on (cudaMalloc, cudaMallocAsync, cudaMallocHost,
// cudaHostAlloc, cudaMallocManaged, cuMemCreate + cuMemMap with the memory
// on that device, mapped from device 0's context too). PyTorch places a
// tensor made from a bare pointer (torch.from_blob, symmetric memory) on the
// device these answer. Prints ordinals and types, never addresses.
#include <cuda.h>

#include "common.h"

// @strict: the ordinal must be @made_on (device memory); host memory's is printed only
static void show(const char *what, int made_on, const void *p, int strict)
{
    cudaPointerAttributes a;
    int ord = -7;
    memset(&a, 0x55, sizeof a);
    CK(cudaPointerGetAttributes(&a, p));
    CKD(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)p));
    printf("dev %d %s: type %d runtime device %d driver ordinal %d\n", made_on, what, (int)a.type, a.device, ord);
    EXPECT(!strict || a.device == made_on, "%s made on %d: runtime says device %d", what, made_on, a.device);
    EXPECT(!strict || ord == made_on, "%s made on %d: driver says ordinal %d", what, made_on, ord);
}

int main(void)
{
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    printf("devices>=2 %d\n", n >= 2);
    for (int d = 0; d < n && d < 4; d++) {
        void *dm, *am, *hm, *ha, *mm;
        cudaStream_t s;
        CK(cudaSetDevice(d));
        CK(cudaStreamCreate(&s));
        CK(cudaMalloc(&dm, 1 << 20));
        CK(cudaMallocAsync(&am, 1 << 20, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaMallocHost(&hm, 1 << 16));
        CK(cudaHostAlloc(&ha, 1 << 16, cudaHostAllocPortable));
        CK(cudaMallocManaged(&mm, 1 << 16));

        // VMM memory on device d
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = d;
        size_t g = 0;
        CKD(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        CUmemGenericAllocationHandle h;
        CUdeviceptr va;
        CKD(cuMemCreate(&h, g, &prop, 0));
        // mapped while device 0 is current: the ordinal is the memory's device
        CK(cudaSetDevice(0));
        CKD(cuMemAddressReserve(&va, g, 0, 0, 0));
        CKD(cuMemMap(va, g, 0, h, 0));
        CUmemAccessDesc acc;
        acc.location = prop.location;
        acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CKD(cuMemSetAccess(va, g, &acc, 1));
        CK(cudaSetDevice(n - 1 - d)); // asked from another device's context where there is one

        show("cudaMalloc", d, dm, 1);
        show("cudaMallocAsync", d, am, 1);
        show("cudaMallocHost", d, hm, 0);
        show("cudaHostAlloc portable", d, ha, 0);
        show("cuMemCreate+cuMemMap", d, (void *)(uintptr_t)va, 1);
        {
            cudaPointerAttributes a;
            CK(cudaPointerGetAttributes(&a, mm));
            printf("dev %d cudaMallocManaged: type %d\n", d, (int)a.type);
        }

        CK(cudaSetDevice(d));
        CKD(cuMemUnmap(va, g));
        CKD(cuMemAddressFree(va, g));
        CKD(cuMemRelease(h));
        CK(cudaFree(mm));
        CK(cudaFreeHost(ha));
        CK(cudaFreeHost(hm));
        CK(cudaFreeAsync(am, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaFree(dm));
        CK(cudaStreamDestroy(s));
    }
    return finish();
}
