// Virtual memory management through the driver API, as PyTorch's expandable
// segments and JAX use it: granularity queries, a reserved range, physical
// chunks created, mapped and made accessible, a kernel writing through a
// mapping, the same physical memory mapped at a second address and read by a
// kernel there, access queries, growth chunk by chunk with kernels over the
// grown range, retained handles, refusals, and the unmap/release/free order.
#include <cuda.h>
#include <vector>
#include "common.h"

__global__ void fill(unsigned *p, size_t n, unsigned seed)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (unsigned)i * 2654435761u ^ seed;
}

__global__ void sum(const unsigned *p, size_t n, unsigned long long *out)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(out, (unsigned long long)p[i]);
}

static unsigned long long ref_sum(size_t first, size_t n, unsigned seed)
{
    unsigned long long s = 0;
    for (size_t i = first; i < first + n; i++)
        s += (unsigned)i * 2654435761u ^ seed;
    return s;
}

static void run_fill(CUdeviceptr p, size_t n, unsigned seed)
{
    fill<<<(unsigned)((n + 255) / 256), 256>>>((unsigned *)p, n, seed);
    CKL();
    CK(cudaDeviceSynchronize());
}

static unsigned long long run_sum(CUdeviceptr p, size_t n, unsigned long long *dsum)
{
    unsigned long long h = 0;
    CK(cudaMemset(dsum, 0, sizeof(*dsum)));
    sum<<<(unsigned)((n + 255) / 256), 256>>>((const unsigned *)p, n, dsum);
    CKL();
    CK(cudaMemcpy(&h, dsum, sizeof(h), cudaMemcpyDeviceToHost));
    return h;
}

int main(void)
{
    CK(cudaFree(0)); // the runtime's primary context, current
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g = 0, rec = 0;
    CKD(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CKD(cuMemGetAllocationGranularity(&rec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    printf("granularity minimum=%zu recommended=%zu\n", g, rec);
    EXPECT(g > 0 && rec % g == 0, "granularities %zu %zu", g, rec);

    unsigned long long *dsum;
    CK(cudaMalloc(&dsum, sizeof(*dsum)));
    CUmemAccessDesc rw;
    rw.location = prop.location;
    rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    // One chunk, a kernel writing through the mapping, read back.
    const size_t chunk = 2 * g, chunks = 8;
    CUdeviceptr va, va2;
    CKD(cuMemAddressReserve(&va, chunks * chunk, 0, 0, 0));
    CUmemGenericAllocationHandle h[chunks];
    CKD(cuMemCreate(&h[0], chunk, &prop, 0));
    CKD(cuMemMap(va, chunk, 0, h[0], 0));
    CKD(cuMemSetAccess(va, chunk, &rw, 1));
    unsigned long long flags = 0;
    CKD(cuMemGetAccess(&flags, &prop.location, va));
    printf("access after set: %llu\n", flags);
    size_t n = chunk / sizeof(unsigned);
    run_fill(va, n, 7);
    std::vector<unsigned> host(n);
    CKD(cuMemcpyDtoH(host.data(), va, chunk));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += host[i] != ((unsigned)i * 2654435761u ^ 7u);
    printf("write through mapping: bad=%zu checksum=%016llx\n", bad,
           (unsigned long long)fnv1a(host.data(), chunk));
    EXPECT(bad == 0, "%zu words wrong", bad);

    // The same physical memory at a second address, read by a kernel there.
    CKD(cuMemAddressReserve(&va2, chunk, 0, 0, 0));
    CKD(cuMemMap(va2, chunk, 0, h[0], 0));
    CUmemAccessDesc ro = rw;
    ro.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
    CKD(cuMemSetAccess(va2, chunk, &ro, 1));
    CKD(cuMemGetAccess(&flags, &prop.location, va2));
    printf("second mapping access: %llu\n", flags);
    unsigned long long s2 = run_sum(va2, n, dsum);
    printf("second mapping sum matches: %d\n", s2 == ref_sum(0, n, 7));
    EXPECT(s2 == ref_sum(0, n, 7), "sum through the second mapping");
    CKD(cuMemUnmap(va2, chunk));
    CKD(cuMemAddressFree(va2, chunk));

    // Growth: one chunk more at a time, a kernel over the whole grown range.
    for (size_t k = 1; k < chunks; k++) {
        CKD(cuMemCreate(&h[k], chunk, &prop, 0));
        CKD(cuMemMap(va + k * chunk, chunk, 0, h[k], 0));
        CKD(cuMemSetAccess(va + k * chunk, chunk, &rw, 1));
        size_t words = (k + 1) * n;
        run_fill(va, words, 11 + (unsigned)k);
        unsigned long long s = run_sum(va, words, dsum);
        printf("grown to %zu chunks: sum matches %d\n", k + 1, s == ref_sum(0, words, 11 + (unsigned)k));
        EXPECT(s == ref_sum(0, words, 11 + (unsigned)k), "sum over %zu chunks", k + 1);
    }
    // A copy across chunk boundaries, and a device copy between chunks.
    std::vector<unsigned> span(2 * n);
    CKD(cuMemcpyDtoH(span.data(), va + chunk / 2, 2 * chunk));
    bad = 0;
    for (size_t i = 0; i < 2 * n; i++)
        bad += span[i] != ((unsigned)(i + n / 2) * 2654435761u ^ (11u + chunks - 1));
    printf("copy across chunks: bad=%zu\n", bad);
    EXPECT(bad == 0, "%zu words wrong across chunks", bad);
    CKD(cuMemcpyDtoD(va, va + 5 * chunk, chunk));
    CKD(cuMemsetD32(va + chunk - 64, 0xdeadbeef, 32)); // across a boundary
    CKD(cuMemcpyDtoH(host.data(), va, chunk));
    printf("device copy between chunks: first=%08x tail=%08x\n", host[0], host[n - 1]);

    // The handle mapped at an address, retained (the same handle), released.
    CUmemGenericAllocationHandle r = 0;
    CKD(cuMemRetainAllocationHandle(&r, (void *)(uintptr_t)(va + 3 * chunk + 100)));
    printf("retained handle is the mapped one: %d\n", r == h[3]);
    CKD(cuMemRelease(r));
    CUmemAllocationProp got;
    CKD(cuMemGetAllocationPropertiesFromHandle(&got, h[2]));
    printf("properties: type=%d location=%d/%d\n", (int)got.type, (int)got.location.type, got.location.id);

    // Refusals.
    CUresult e1 = cuMemUnmap(va, chunk / 2);
    printf("unmap of half a mapping refused: %d\n", e1 != CUDA_SUCCESS);
    CUmemGenericAllocationHandle bogus = 0;
    CUresult e2 = cuMemRelease(bogus);
    printf("release of handle 0 refused: %d\n", e2 != CUDA_SUCCESS);
    CUresult e3 = cuMemMap(va, chunk, 0, h[1], 0);
    printf("map over a mapping refused: %d\n", e3 != CUDA_SUCCESS);

    // Release while mapped: the memory stays until unmapped.
    for (size_t k = 0; k < chunks; k++)
        CKD(cuMemRelease(h[k]));
    unsigned long long s = run_sum(va + chunk, n, dsum);
    printf("released but mapped, still readable: %d\n", s == ref_sum(n, n, 11 + (unsigned)chunks - 1));
    CKD(cuMemUnmap(va, chunks * chunk)); // every chunk in one call
    CKD(cuMemAddressFree(va, chunks * chunk));
    CK(cudaFree(dsum));
    return finish();
}
