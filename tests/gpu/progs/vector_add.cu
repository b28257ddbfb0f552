// The simplest path: cudaMalloc, cudaMemcpy, a <<<>>> launch, cudaMemcpy back.
#include "common.h"

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main(void)
{
    const int sizes[] = {1, 31, 1000, 1 << 20, (1 << 22) + 17};
    for (int si = 0; si < 5; si++) {
        int n = sizes[si];
        size_t bytes = (size_t)n * sizeof(float);
        float *ha = (float *)malloc(bytes), *hb = (float *)malloc(bytes), *hc = (float *)malloc(bytes);
        for (int i = 0; i < n; i++) {
            ha[i] = (float)(i % 4096) * 0.25f;
            hb[i] = (float)((i * 7) % 1000) - 500.0f;
        }
        float *da, *db, *dc;
        CK(cudaMalloc(&da, bytes));
        CK(cudaMalloc(&db, bytes));
        CK(cudaMalloc(&dc, bytes));
        CK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));
        vadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
        CKL();
        CK(cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost));
        int bad = 0;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            bad += hc[i] != ha[i] + hb[i];
            sum += hc[i];
        }
        printf("n=%d bad=%d sum=%.2f\n", n, bad, sum);
        EXPECT(bad == 0, "n=%d: %d wrong", n, bad);
        CK(cudaFree(da));
        CK(cudaFree(db));
        CK(cudaFree(dc));
        free(ha);
        free(hb);
        free(hc);
    }
    return finish();
}
