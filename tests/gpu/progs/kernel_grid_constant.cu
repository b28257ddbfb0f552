// A 32,000+ byte kernel parameter (CUDA 12.1+, compute capability 7.0+),
// passed as a __grid_constant__ struct, launched several times with different
// contents, plus a large by-value struct without __grid_constant__.
#include "common.h"

struct Big {
    int n;
    int data[8000];
}; // 32004 bytes

struct Medium {
    double v[1000];
}; // 8000 bytes

__global__ void use_big(const __grid_constant__ Big b, long long *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 8000)
        out[i] = (long long)b.data[i] * b.n + b.data[7999 - i];
}

__global__ void use_medium(Medium m, double *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1000)
        out[i] = m.v[i] * 2.0 + m.v[(i + 1) % 1000];
}

int main(void)
{
    int major = 0;
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    if (major < 7)
        fail_now("needs compute capability 7.0 or newer");
    printf("sizeof_Big=%zu\n", sizeof(Big));

    size_t off = 0, sz = 0;
    CK(cudaFuncGetParamInfo((const void *)use_big, 0, &off, &sz));
    printf("param0 offset=%zu size=%zu\n", off, sz);
    EXPECT(sz == sizeof(Big), "param size %zu", sz);
    CK(cudaFuncGetParamInfo((const void *)use_big, 1, &off, &sz));
    printf("param1 offset=%zu size=%zu\n", off, sz);

    Big *b = (Big *)malloc(sizeof(Big));
    long long *dout, *h = (long long *)malloc(8000 * sizeof(long long));
    CK(cudaMalloc(&dout, 8000 * sizeof(long long)));
    uint64_t check = 0;
    for (int round = 0; round < 4; round++) {
        b->n = round * 1000 - 1;
        for (int i = 0; i < 8000; i++)
            b->data[i] = (i * 37 + round * 101) % 100003 - 50000;
        use_big<<<(8000 + 255) / 256, 256>>>(*b, dout);
        CKL();
        CK(cudaMemcpy(h, dout, 8000 * sizeof(long long), cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int i = 0; i < 8000; i++)
            bad += h[i] != (long long)b->data[i] * b->n + b->data[7999 - i];
        check ^= fnv1a(h, 8000 * sizeof(long long));
        printf("round %d bad=%d\n", round, bad);
        EXPECT(bad == 0, "round %d: %d wrong", round, bad);
    }
    printf("checksum=%016llx\n", (unsigned long long)check);

    // Several launches queued back to back, each with its own copy of the parameter.
    long long *douts;
    CK(cudaMalloc(&douts, 3 * 8000 * sizeof(long long)));
    for (int k = 0; k < 3; k++) {
        b->n = k + 2;
        for (int i = 0; i < 8000; i++)
            b->data[i] = i * (k + 1);
        use_big<<<32, 256>>>(*b, douts + k * 8000);
        CKL();
        memset(b, 0xff, sizeof(Big)); // the launch must have taken its copy already
    }
    long long *hs = (long long *)malloc(3 * 8000 * sizeof(long long));
    CK(cudaMemcpy(hs, douts, 3 * 8000 * sizeof(long long), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 8000; i++)
            bad += hs[k * 8000 + i] != (long long)i * (k + 1) * (k + 2) + (long long)(7999 - i) * (k + 1);
    printf("queued_bad=%d\n", bad);
    EXPECT(bad == 0, "queued launches: %d wrong", bad);

    Medium *m = (Medium *)malloc(sizeof(Medium));
    for (int i = 0; i < 1000; i++)
        m->v[i] = i * 0.5;
    double *dm, hm[1000];
    CK(cudaMalloc(&dm, sizeof hm));
    use_medium<<<4, 256>>>(*m, dm);
    CKL();
    CK(cudaMemcpy(hm, dm, sizeof hm, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += hm[i] != m->v[i] * 2.0 + m->v[(i + 1) % 1000];
    printf("medium_bad=%d\n", bad);
    EXPECT(bad == 0, "medium struct: %d wrong", bad);

    CK(cudaFree(dout));
    CK(cudaFree(douts));
    CK(cudaFree(dm));
    free(b);
    free(h);
    free(hs);
    free(m);
    return finish();
}
