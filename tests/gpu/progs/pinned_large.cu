// Page-locked memory larger than vcuda's pinned pool (256 MiB by default):
// cudaMallocHost of 1 GiB, its flags, copies through its first, middle and
// last 64 MiB both ways (async on a stream, as PyTorch's non_blocking copies),
// a kernel reading and writing it through its mapped device pointer
// (zero-copy), cudaHostAlloc with the Mapped and Portable flags at 512 MiB,
// cudaHostRegister of a 384 MiB mmap'd range used the same ways, and the
// memory freed and allocated again. Every result is checked against a CPU
// reference; at most 1 GiB + 64 MiB is held at once.
#include <sys/mman.h>
#include "common.h"

__global__ void add_index(uint32_t *p, size_t n, uint32_t k)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += (uint32_t)i + k;
}

static void fill(uint32_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint32_t)(i * 2654435761u) ^ seed;
}

// Bad words of p[0..n) against fill(seed) then add_index(k).
static size_t bad_after(const uint32_t *p, size_t n, uint32_t seed, uint32_t k)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (((uint32_t)(i * 2654435761u) ^ seed) + (uint32_t)i + k);
    return bad;
}

// Copies through three 64 MiB pieces of [h, h + bytes): to the device, a
// kernel, back into another piece; async on @s.
static void pieces(uint8_t *h, size_t bytes, cudaStream_t s, const char *what)
{
    const size_t piece = 64u << 20, words = piece / 4;
    uint32_t *d;
    CK(cudaMalloc(&d, piece));
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t *src = (uint32_t *)(h + (k == 0 ? 0 : k == 1 ? bytes / 2 : bytes - piece));
        uint32_t *dst = (uint32_t *)(h + (k == 2 ? 0 : bytes - piece));
        fill(src, words, 0x1000 + k);
        CK(cudaMemcpyAsync(d, src, piece, cudaMemcpyHostToDevice, s));
        add_index<<<(unsigned)((words + 255) / 256), 256, 0, s>>>(d, words, k);
        CKL();
        CK(cudaMemcpyAsync(dst, d, piece, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        size_t bad = bad_after(dst, words, 0x1000 + k, k);
        printf("%s piece %u bad=%zu\n", what, k, bad);
        EXPECT(bad == 0, "%s piece %u: %zu wrong words", what, k, bad);
    }
    CK(cudaFree(d));
}

// A kernel on the mapped device pointer of the last 16 MiB of [h, h + bytes).
static void zero_copy(uint8_t *h, size_t bytes, const char *what)
{
    const size_t words = (16u << 20) / 4;
    uint32_t *tail = (uint32_t *)(h + bytes) - words, *dp = NULL;
    fill(tail, words, 0x77);
    CK(cudaHostGetDevicePointer((void **)&dp, tail, 0));
    add_index<<<(unsigned)((words + 255) / 256), 256>>>(dp, words, 9);
    CKL();
    CK(cudaDeviceSynchronize());
    size_t bad = bad_after(tail, words, 0x77, 9);
    printf("%s zero_copy bad=%zu\n", what, bad);
    EXPECT(bad == 0, "%s zero-copy kernel: %zu wrong words", what, bad);
}

int main(void)
{
    cudaStream_t s;
    unsigned fl = 0;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // 1 GiB from cudaMallocHost.
    const size_t g = 1u << 30;
    uint8_t *a = NULL;
    CK(cudaMallocHost((void **)&a, g));
    CK(cudaHostGetFlags(&fl, a));
    printf("mallochost_1g flags_mapped=%d\n", (fl & cudaHostAllocMapped) != 0);
    cudaPointerAttributes at;
    CK(cudaPointerGetAttributes(&at, a + g - 1));
    printf("mallochost_1g type=%d\n", (int)at.type);
    EXPECT(at.type == cudaMemoryTypeHost, "type %d", (int)at.type);
    pieces(a, g, s, "mallochost_1g");
    zero_copy(a, g, "mallochost_1g");
    CK(cudaFreeHost(a));

    // 512 MiB with explicit flags, then 1 GiB again (the first was released).
    uint8_t *b = NULL;
    CK(cudaHostAlloc((void **)&b, 512u << 20, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostGetFlags(&fl, b));
    printf("hostalloc_512m mapped=%d portable=%d\n", (fl & cudaHostAllocMapped) != 0,
           (fl & cudaHostAllocPortable) != 0);
    pieces(b, 512u << 20, s, "hostalloc_512m");
    zero_copy(b, 512u << 20, "hostalloc_512m");
    CK(cudaFreeHost(b));
    CK(cudaMallocHost((void **)&a, g));
    pieces(a, g, s, "mallochost_1g_again");
    CK(cudaFreeHost(a));

    // 384 MiB of mmap'd memory, registered (mapped).
    const size_t r = 384u << 20;
    uint8_t *m = (uint8_t *)mmap(NULL, r, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        fail_now("mmap");
    memset(m, 0x11, r);
    CK(cudaHostRegister(m, r, cudaHostRegisterMapped));
    printf("register_384m first=%d\n", m[0]);
    pieces(m, r, s, "register_384m");
    zero_copy(m, r, "register_384m");
    CK(cudaHostUnregister(m));
    // Ordinary memory again, with its bytes (the last kernel's words).
    size_t bad = bad_after((uint32_t *)(m + r) - (16u << 20) / 4, (16u << 20) / 4, 0x77, 9);
    printf("register_384m after_unregister bad=%zu\n", bad);
    EXPECT(bad == 0, "registered memory lost its bytes at unregister: %zu", bad);
    munmap(m, r);

    CK(cudaStreamDestroy(s));
    return finish();
}
