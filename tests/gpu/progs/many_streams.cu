// Many streams in flight: 64 streams, each with its own H2D copy, a chain of
// kernels and a D2H copy, all queued before one cudaDeviceSynchronize; then
// 256 streams created and destroyed in a loop with a small job each.
#include "common.h"

__global__ void poly(int *p, int n, int s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * 5 + s;
}

int main(void)
{
    const int S = 64, n = 32768, chain = 6;
    cudaStream_t st[S];
    int *d, *h;
    CK(cudaMalloc(&d, (size_t)S * n * sizeof(int)));
    CK(cudaMallocHost(&h, (size_t)S * n * sizeof(int)));
    for (int s = 0; s < S; s++)
        for (int i = 0; i < n; i++)
            h[(size_t)s * n + i] = (i + s) % 97;
    for (int s = 0; s < S; s++) {
        CK(cudaStreamCreateWithFlags(&st[s], s % 2 ? cudaStreamNonBlocking : cudaStreamDefault));
        int *ds = d + (size_t)s * n, *hs = h + (size_t)s * n;
        CK(cudaMemcpyAsync(ds, hs, n * sizeof(int), cudaMemcpyHostToDevice, st[s]));
        for (int k = 0; k < chain; k++) {
            poly<<<n / 256, 256, 0, st[s]>>>(ds, n, s + k);
            CKL();
        }
        CK(cudaMemcpyAsync(hs, ds, n * sizeof(int), cudaMemcpyDeviceToHost, st[s]));
    }
    CK(cudaDeviceSynchronize());
    int bad = 0;
    uint64_t sum = 0;
    for (int s = 0; s < S; s++) {
        CK(cudaStreamQuery(st[s]));
        for (int i = 0; i < n; i++) {
            int v = (i + s) % 97;
            for (int k = 0; k < chain; k++)
                v = v * 5 + s + k;
            bad += h[(size_t)s * n + i] != v;
            sum += (uint32_t)h[(size_t)s * n + i];
        }
        CK(cudaStreamDestroy(st[s]));
    }
    printf("streams=%d bad=%d sum=%llu\n", S, bad, (unsigned long long)sum);
    EXPECT(bad == 0, "%d wrong", bad);

    // Create/destroy churn.
    int churn_bad = 0;
    for (int r = 0; r < 256; r++) {
        cudaStream_t s;
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CK(cudaMemsetAsync(d, 0, 1024 * sizeof(int), s));
        poly<<<4, 256, 0, s>>>(d, 1024, r);
        CKL();
        int v = -1;
        CK(cudaMemcpyAsync(&v, d + 1023, sizeof v, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        churn_bad += v != r;
        CK(cudaStreamDestroy(s));
    }
    printf("churn=256 bad=%d\n", churn_bad);
    EXPECT(churn_bad == 0, "stream churn: %d wrong", churn_bad);
    CK(cudaFree(d));
    CK(cudaFreeHost(h));
    return finish();
}
