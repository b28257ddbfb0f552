// Stream capture of work that touches pageable host memory: an async copy in
// from malloc'd memory, a kernel, an async copy out to malloc'd memory (and a
// 4-byte one, as cuSPARSE's and cuBLAS's host-pointer results are), and a
// host function. The graph reads and writes the program's memory at each
// launch: the input is changed between launches and every launch's output
// and the host function's count are checked.
#include <stdlib.h>
#include "common.h"

__global__ void scale(const int *in, int *out, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * k;
}
__global__ void total(const int *p, int n, int *sum)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(sum, p[i]);
}

static void CUDART_CB count_run(void *arg) { ++*(int *)arg; }

int main(void)
{
    const int n = 1 << 18, T = 256, B = n / T;
    int *in = (int *)malloc(n * sizeof(int)), *out = (int *)malloc(n * sizeof(int));
    int *sum = (int *)malloc(sizeof(int)), runs = 0;
    int *din, *dout, *dsum;
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge;

    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dout, n * sizeof(int)));
    CK(cudaMalloc(&dsum, sizeof(int)));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemcpyAsync(din, in, n * sizeof(int), cudaMemcpyHostToDevice, s));
    scale<<<B, T, 0, s>>>(din, dout, n, 3);
    CK(cudaMemsetAsync(dsum, 0, sizeof(int), s));
    total<<<B, T, 0, s>>>(din, 1024, dsum);
    CK(cudaMemcpyAsync(out, dout, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(sum, dsum, sizeof(int), cudaMemcpyDeviceToHost, s));
    CK(cudaLaunchHostFunc(s, count_run, &runs));
    CK(cudaStreamEndCapture(s, &g));
    size_t nodes = 0;
    CK(cudaGraphGetNodes(g, NULL, &nodes));
    printf("captured=%d\n", nodes >= 7);
    EXPECT(nodes >= 7, "%zu nodes captured", nodes);
    CK(cudaGraphInstantiate(&ge, g, 0));

    int all_ok = 1;
    for (int l = 0; l < 4; l++) {
        long want_sum = 0;
        for (int i = 0; i < n; i++)
            in[i] = i % 1000 + l;
        for (int i = 0; i < 1024; i++)
            want_sum += in[i];
        memset(out, 0, n * sizeof(int));
        *sum = -1;
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        int ok = *sum == want_sum;
        for (int i = 0; i < n && ok; i++)
            ok = out[i] == in[i] * 3;
        printf("launch %d ok=%d runs=%d\n", l, ok, runs);
        EXPECT(ok, "launch %d: sum %d (want %ld) or output wrong", l, *sum, want_sum);
        all_ok &= ok;
    }
    EXPECT(runs == 4, "host function ran %d times", runs);

    // The same capture again, into a second graph, reuses the same memory.
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemcpyAsync(sum, dsum, sizeof(int), cudaMemcpyDeviceToHost, s));
    CK(cudaLaunchHostFunc(s, count_run, &runs));
    cudaGraph_t g2;
    cudaGraphExec_t ge2;
    CK(cudaStreamEndCapture(s, &g2));
    CK(cudaGraphInstantiate(&ge2, g2, 0));
    *sum = -1;
    CK(cudaGraphLaunch(ge2, s));
    CK(cudaStreamSynchronize(s));
    printf("second graph sum_ok=%d runs=%d\n", *sum != -1, runs);
    EXPECT(*sum != -1 && runs == 5, "second graph: sum %d, runs %d", *sum, runs);

    CK(cudaGraphExecDestroy(ge2));
    CK(cudaGraphDestroy(g2));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    CK(cudaFree(dsum));
    free(in);
    free(out);
    free(sum);
    (void)all_ok;
    return finish();
}
