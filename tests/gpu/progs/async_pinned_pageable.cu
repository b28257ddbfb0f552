// cudaMemcpyAsync from/to pinned and pageable memory, with the documented
// semantics: a pageable host-to-device copy has taken its bytes when the call
// returns (the source may be reused at once); a pageable device-to-host copy
// has completed when the call returns; a pinned copy completes in stream order
// and is visible after synchronisation. Several streams, kernels in between.
#include "common.h"

__global__ void transform(const int *in, int *out, size_t n, int k)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * k + (int)(i & 0xffff);
}

int main(void)
{
    const size_t n = 4u << 20;
    const size_t bytes = n * sizeof(int);
    int *pageable = (int *)malloc(bytes), *pageable_out = (int *)malloc(bytes);
    int *pinned, *pinned_out;
    CK(cudaMallocHost(&pinned, bytes));
    CK(cudaMallocHost(&pinned_out, bytes));
    int *d_in, *d_out;
    CK(cudaMalloc(&d_in, bytes));
    CK(cudaMalloc(&d_out, bytes));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // 1. Pageable H2D: overwrite the source right after the call.
    for (size_t i = 0; i < n; i++)
        pageable[i] = (int)(i % 1000);
    CK(cudaMemcpyAsync(d_in, pageable, bytes, cudaMemcpyHostToDevice, s));
    for (size_t i = 0; i < n; i++)
        pageable[i] = -1;
    transform<<<(unsigned)(n / 256), 256, 0, s>>>(d_in, d_out, n, 2);
    CKL();
    // 2. Pageable D2H: complete when the call returns (no synchronisation before checking).
    CK(cudaMemcpyAsync(pageable_out, d_out, bytes, cudaMemcpyDeviceToHost, s));
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += pageable_out[i] != (int)(i % 1000) * 2 + (int)(i & 0xffff);
    printf("pageable_h2d_source_reusable_and_d2h_complete bad=%d\n", bad);
    EXPECT(bad == 0, "pageable async copies: %d wrong", bad);
    CK(cudaStreamSynchronize(s));

    // 3. Pinned, fully asynchronous: result checked after synchronising.
    for (size_t i = 0; i < n; i++)
        pinned[i] = (int)(i % 777) - 300;
    CK(cudaMemcpyAsync(d_in, pinned, bytes, cudaMemcpyHostToDevice, s));
    transform<<<(unsigned)(n / 256), 256, 0, s>>>(d_in, d_out, n, -3);
    CKL();
    CK(cudaMemcpyAsync(pinned_out, d_out, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += pinned_out[i] != ((int)(i % 777) - 300) * -3 + (int)(i & 0xffff);
    printf("pinned bad=%d\n", bad);
    EXPECT(bad == 0, "pinned async copies: %d wrong", bad);

    // 4. Chunks on 4 streams, pinned and pageable alternating, one sync at the end.
    const int S = 4;
    cudaStream_t ss[S];
    for (int k = 0; k < S; k++)
        CK(cudaStreamCreate(&ss[k]));
    for (size_t i = 0; i < n; i++) {
        pinned[i] = (int)(i * 3 % 10007);
        pageable[i] = (int)(i * 3 % 10007);
    }
    const size_t chunk = n / 16;
    for (int c = 0; c < 16; c++) {
        cudaStream_t st = ss[c % S];
        size_t off = c * chunk;
        const int *src = (c & 1) ? pageable + off : pinned + off;
        int *dst = (c & 1) ? pageable_out + off : pinned_out + off;
        CK(cudaMemcpyAsync(d_in + off, src, chunk * sizeof(int), cudaMemcpyHostToDevice, st));
        transform<<<(unsigned)(chunk / 256), 256, 0, st>>>(d_in + off, d_out + off, chunk, 5);
        CKL();
        CK(cudaMemcpyAsync(dst, d_out + off, chunk * sizeof(int), cudaMemcpyDeviceToHost, st));
    }
    CK(cudaDeviceSynchronize());
    bad = 0;
    uint64_t h = 1469598103934665603ull;
    for (int c = 0; c < 16; c++) {
        const int *out = (c & 1) ? pageable_out : pinned_out;
        for (size_t j = 0; j < chunk; j++) {
            size_t i = c * chunk + j;
            int want = (int)(i * 3 % 10007) * 5 + (int)(j & 0xffff);
            bad += out[i] != want;
            h = (h ^ (uint32_t)out[i]) * 1099511628211ull;
        }
    }
    printf("multi_stream bad=%d checksum=%016llx\n", bad, (unsigned long long)h);
    EXPECT(bad == 0, "multi-stream chunks: %d wrong", bad);

    for (int k = 0; k < S; k++)
        CK(cudaStreamDestroy(ss[k]));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    CK(cudaFreeHost(pinned));
    CK(cudaFreeHost(pinned_out));
    free(pageable);
    free(pageable_out);
    return finish();
}
