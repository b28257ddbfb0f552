/* managed_memory: cudaMallocManaged memory touched in turn by the CPU and the
 * GPU, with cudaMemPrefetchAsync both ways and cudaMemAdvise (and the range
 * attributes they leave), __managed__ variables written on both sides, and a
 * large array prefetched to the device and summed by a kernel. Everything is
 * checked against a CPU reference. The CPU touches managed memory only while
 * the device is idle (after a synchronisation), so the program is valid
 * whatever concurrentManagedAccess says (not printed: vcuda reports 0). */
#include "common.h"

__managed__ int g_counter;
__managed__ unsigned g_table[256];
__managed__ double g_wide[3000]; /* over several pages, after the others in the module's segment */

__global__ void scale_add(int *a, int n, int mul, int add)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        a[i] = a[i] * mul + add;
}

__global__ void bump(int times)
{
    atomicAdd(&g_counter, times);
    atomicAdd(&g_table[threadIdx.x], threadIdx.x);
}

__global__ void twice(void)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 3000; i += gridDim.x * blockDim.x)
        g_wide[i] *= 2.0;
}

__global__ void sum_kernel(const unsigned *a, size_t n, unsigned long long *out)
{
    unsigned long long s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += a[i];
    atomicAdd(out, s);
}

static cudaMemLocation on_device(int dev)
{
    cudaMemLocation l;
    l.type = cudaMemLocationTypeDevice;
    l.id = dev;
    return l;
}

static cudaMemLocation on_host(void)
{
    cudaMemLocation l;
    l.type = cudaMemLocationTypeHost;
    l.id = 0;
    return l;
}

static int range_attr(const void *p, size_t n, cudaMemRangeAttribute a)
{
    int v = -99;
    CK(cudaMemRangeGetAttribute(&v, sizeof(v), a, p, n));
    return v;
}

/* CPU and GPU in turn on a 4 MiB array, with prefetches and advice. */
static void take_turns(cudaStream_t s)
{
    const int n = 1 << 20;
    const size_t bytes = n * sizeof(int);
    int *a;
    int *ref = (int *)malloc(bytes);
    int attr = -1;

    CK(cudaMallocManaged(&a, bytes));
    for (int i = 0; i < n; i++)
        a[i] = ref[i] = i % 1000;
    for (int round = 0; round < 4; round++) {
        if (round == 1) {
            CK(cudaMemPrefetchAsync(a, bytes, on_device(0), 0, s));
            CK(cudaStreamSynchronize(s));
            attr = range_attr(a, bytes, cudaMemRangeAttributeLastPrefetchLocation);
            printf("last prefetch after device prefetch: %d\n", attr);
        }
        if (round == 2) {
            CK(cudaMemAdvise(a, bytes, cudaMemAdviseSetPreferredLocation, on_device(0)));
            CK(cudaMemAdvise(a, bytes, cudaMemAdviseSetAccessedBy, on_device(0)));
            printf("preferred location: %d\n", range_attr(a, bytes, cudaMemRangeAttributePreferredLocation));
        }
        scale_add<<<256, 256, 0, s>>>(a, n, 3, round);
        CKL();
        CK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++)
            ref[i] = ref[i] * 3 + round;
        for (int i = 0; i < n; i += 7) { /* the CPU's turn: reads and writes */
            a[i] += 1;
            ref[i] += 1;
        }
        if (round == 3) {
            CK(cudaMemPrefetchAsync(a, bytes, on_host(), 0, s));
            CK(cudaStreamSynchronize(s));
            printf("last prefetch after host prefetch: %d\n",
                   range_attr(a, bytes, cudaMemRangeAttributeLastPrefetchLocation));
        }
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += a[i] != ref[i];
    EXPECT(bad == 0, "take_turns: %d of %d values differ", bad, n);
    printf("turns: checksum %016llx\n", (unsigned long long)fnv1a(a, bytes));

    /* read-mostly advice, set and cleared */
    CK(cudaMemAdvise(a, bytes, cudaMemAdviseSetReadMostly, on_device(0)));
    printf("read mostly: %d\n", range_attr(a, bytes, cudaMemRangeAttributeReadMostly));
    scale_add<<<64, 256, 0, s>>>(a, 1024, 1, 0); /* a read-mostly range may still be written */
    CKL();
    CK(cudaStreamSynchronize(s));
    CK(cudaMemAdvise(a, bytes, cudaMemAdviseUnsetReadMostly, on_device(0)));
    printf("read mostly after unset: %d\n", range_attr(a, bytes, cudaMemRangeAttributeReadMostly));

    cudaPointerAttributes pa;
    CK(cudaPointerGetAttributes(&pa, a + 5));
    printf("pointer type managed: %d\n", pa.type == cudaMemoryTypeManaged);
    CK(cudaFree(a));
    free(ref);
}

/* __managed__ variables: the CPU writes, kernels add, the CPU checks. */
static void managed_variables(void)
{
    g_counter = 5;
    for (int j = 0; j < 256; j++)
        g_table[j] = j;
    bump<<<4, 256>>>(2);
    CKL();
    CK(cudaDeviceSynchronize());
    EXPECT(g_counter == 5 + 4 * 256 * 2, "counter %d after the first kernel", g_counter);
    g_counter += 1;
    bump<<<1, 256>>>(3);
    CKL();
    CK(cudaDeviceSynchronize());
    EXPECT(g_counter == 5 + 2048 + 1 + 768, "counter %d after the second kernel", g_counter);
    int bad = 0;
    for (unsigned j = 0; j < 256; j++)
        bad += g_table[j] != j + 5 * j;
    EXPECT(bad == 0, "managed table: %d entries differ", bad);
    printf("managed variables: counter %d, table[255] %u\n", g_counter, g_table[255]);
    /* a variable over several pages: every element both ways */
    for (int j = 0; j < 3000; j++)
        g_wide[j] = j + 0.5;
    twice<<<8, 128>>>();
    CKL();
    CK(cudaDeviceSynchronize());
    bad = 0;
    for (int j = 0; j < 3000; j++)
        bad += g_wide[j] != 2.0 * (j + 0.5);
    EXPECT(bad == 0, "managed wide variable: %d elements differ", bad);
    cudaPointerAttributes pa;
    CK(cudaPointerGetAttributes(&pa, g_table));
    EXPECT(pa.type == cudaMemoryTypeManaged, "g_table's memory type %d", (int)pa.type);
    printf("managed wide variable: g_wide[2999] %.1f\n", g_wide[2999]);
}

/* A 64 MiB array written by the CPU, prefetched to the device, summed there. */
static void prefetched_sum(cudaStream_t s)
{
    const size_t n = (size_t)16 << 20;
    unsigned *b;
    unsigned long long *out, want = 0;

    CK(cudaMallocManaged(&b, n * sizeof(unsigned)));
    CK(cudaMallocManaged(&out, sizeof(*out)));
    for (size_t i = 0; i < n; i++) {
        b[i] = (unsigned)((i * 2654435761ull) >> 12) & 0xffff;
        want += b[i];
    }
    *out = 0;
    CK(cudaMemPrefetchAsync(b, n * sizeof(unsigned), on_device(0), 0, s));
    CK(cudaMemPrefetchAsync(out, sizeof(*out), on_device(0), 0, s));
    sum_kernel<<<512, 256, 0, s>>>(b, n, out);
    CKL();
    CK(cudaStreamSynchronize(s));
    EXPECT(*out == want, "sum %llu, expected %llu", *out, want);
    printf("prefetched sum: %llu\n", *out);
    CK(cudaMemPrefetchAsync(b, n * sizeof(unsigned), on_host(), 0, s));
    CK(cudaStreamSynchronize(s));
    EXPECT(b[n - 1] == ((unsigned)(((n - 1) * 2654435761ull) >> 12) & 0xffff), "last element after host prefetch");
    CK(cudaFree(b));
    CK(cudaFree(out));
}

int main(void)
{
    cudaStream_t s;
    int managed = 0;

    CK(cudaSetDevice(0));
    CK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
    printf("managedMemory: %d\n", managed);
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    take_turns(s);
    managed_variables();
    prefetched_sum(s);
    CK(cudaStreamDestroy(s));
    return finish();
}
