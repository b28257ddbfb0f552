// CUDA graphs: stream capture of kernels, a memset and memcpys into a graph
// (including a fork/join across two streams through events), node count,
// instantiate, launch 10 times with verification after each, update a kernel
// node's parameters in the executable graph, and a graph built by hand with
// cudaGraphAddKernelNode/cudaGraphAddMemcpyNode1D.
#include "common.h"

__global__ void init(int *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = i; }
__global__ void addv(int *p, int n, int v) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += v; }
__global__ void mulv(int *p, int n, int v) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= v; }
__global__ void combine(const int *a, const int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a[i] - b[i];
}
__global__ void counter(int *c) { atomicAdd(c, 1); }

int main(void)
{
    const int n = 1 << 16, T = 256, B = n / T;
    int *a, *b, *out, *cnt, *h;
    CK(cudaMalloc(&a, n * sizeof(int)));
    CK(cudaMalloc(&b, n * sizeof(int)));
    CK(cudaMalloc(&out, n * sizeof(int)));
    CK(cudaMalloc(&cnt, sizeof(int)));
    CK(cudaMemset(cnt, 0, sizeof(int)));
    CK(cudaMallocHost(&h, n * sizeof(int)));
    int *src;
    CK(cudaMallocHost(&src, n * sizeof(int)));
    for (int i = 0; i < n; i++)
        src[i] = 3 * i;
    CK(cudaDeviceSynchronize());

    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

    cudaStreamCaptureStatus cs;
    CK(cudaStreamIsCapturing(s1, &cs));
    printf("capturing_before=%d\n", cs == cudaStreamCaptureStatusActive);

    CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CK(cudaStreamIsCapturing(s1, &cs));
    printf("capturing_during=%d\n", cs == cudaStreamCaptureStatusActive);
    // a = i, then a += 5, a *= 2                      (stream 1)
    // b = 3i (copied from host), b += 1               (stream 2, forked)
    // out = a - b, counter++, copy out to host         (joined)
    init<<<B, T, 0, s1>>>(a, n);
    CKL();
    CK(cudaEventRecord(fork, s1));
    CK(cudaStreamWaitEvent(s2, fork, 0));
    CK(cudaMemcpyAsync(b, src, n * sizeof(int), cudaMemcpyHostToDevice, s2));
    addv<<<B, T, 0, s2>>>(b, n, 1);
    CKL();
    CK(cudaEventRecord(join, s2));
    addv<<<B, T, 0, s1>>>(a, n, 5);
    CKL();
    mulv<<<B, T, 0, s1>>>(a, n, 2);
    CKL();
    CK(cudaStreamWaitEvent(s1, join, 0));
    CK(cudaMemsetAsync(out, 0, n * sizeof(int), s1));
    combine<<<B, T, 0, s1>>>(a, b, out, n);
    CKL();
    counter<<<1, 1, 0, s1>>>(cnt);
    CKL();
    CK(cudaMemcpyAsync(h, out, n * sizeof(int), cudaMemcpyDeviceToHost, s1));
    cudaGraph_t g;
    CK(cudaStreamEndCapture(s1, &g));
    CK(cudaStreamIsCapturing(s1, &cs));
    printf("capturing_after=%d\n", cs == cudaStreamCaptureStatusActive);

    size_t nodes = 0;
    CK(cudaGraphGetNodes(g, NULL, &nodes));
    printf("graph_nodes=%zu\n", nodes);
    EXPECT(nodes == 9, "graph has %zu nodes, expected 9", nodes);
    // Nothing ran during capture.
    int c0 = -1;
    CK(cudaMemcpy(&c0, cnt, sizeof c0, cudaMemcpyDeviceToHost));
    printf("counter_after_capture=%d\n", c0);
    EXPECT(c0 == 0, "captured work executed during capture");

    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    int bad_total = 0;
    for (int it = 0; it < 10; it++) {
        memset(h, 0, n * sizeof(int));
        for (int i = 0; i < n; i++)
            src[i] = 3 * i + it; // the graph copies from src each launch
        CK(cudaGraphLaunch(ge, s1));
        CK(cudaStreamSynchronize(s1));
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += h[i] != (i + 5) * 2 - (3 * i + it + 1);
        bad_total += bad;
    }
    int c10 = 0;
    CK(cudaMemcpy(&c10, cnt, sizeof c10, cudaMemcpyDeviceToHost));
    printf("launches=10 bad=%d counter=%d\n", bad_total, c10);
    EXPECT(bad_total == 0, "graph launches: %d wrong", bad_total);
    EXPECT(c10 == 10, "counter %d after 10 launches", c10);

    // Change the multiplier in the executable graph: find the mulv node.
    cudaGraphNode_t *all = (cudaGraphNode_t *)malloc(nodes * sizeof *all);
    CK(cudaGraphGetNodes(g, all, &nodes));
    int updated = 0;
    cudaFunction_t mulv_fn;
    CK(cudaGetFuncBySymbol(&mulv_fn, (const void *)mulv));
    for (size_t i = 0; i < nodes; i++) {
        cudaGraphNodeType t;
        CK(cudaGraphNodeGetType(all[i], &t));
        if (t != cudaGraphNodeTypeKernel)
            continue;
        cudaKernelNodeParams kp;
        CK(cudaGraphKernelNodeGetParams(all[i], &kp));
        if (kp.func != (void *)mulv && kp.func != (void *)mulv_fn)
            continue;
        int three = 3;
        void *args[] = {&a, (void *)&n, &three};
        kp.kernelParams = args;
        CK(cudaGraphExecKernelNodeSetParams(ge, all[i], &kp));
        updated++;
    }
    printf("updated_nodes=%d\n", updated);
    EXPECT(updated == 1, "found %d mulv nodes", updated);
    for (int i = 0; i < n; i++)
        src[i] = 3 * i;
    CK(cudaGraphLaunch(ge, s1));
    CK(cudaStreamSynchronize(s1));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != (i + 5) * 3 - (3 * i + 1);
    printf("after_update bad=%d first=%d,%d\n", bad, h[0], h[1]);
    EXPECT(bad == 0, "updated graph: %d wrong", bad);
    free(all);

    // A graph built by hand: memcpy H2D -> kernel -> memcpy D2H.
    cudaGraph_t mg;
    CK(cudaGraphCreate(&mg, 0));
    cudaGraphNode_t n1, n2, n3;
    CK(cudaGraphAddMemcpyNode1D(&n1, mg, NULL, 0, b, src, n * sizeof(int), cudaMemcpyHostToDevice));
    cudaKernelNodeParams kp = {};
    int seven = 7;
    void *kargs[] = {&b, (void *)&n, &seven};
    kp.func = (void *)addv;
    kp.gridDim = dim3(B);
    kp.blockDim = dim3(T);
    kp.sharedMemBytes = 0;
    kp.kernelParams = kargs;
    CK(cudaGraphAddKernelNode(&n2, mg, &n1, 1, &kp));
    CK(cudaGraphAddMemcpyNode1D(&n3, mg, &n2, 1, h, b, n * sizeof(int), cudaMemcpyDeviceToHost));
    cudaGraphExec_t mge;
    CK(cudaGraphInstantiate(&mge, mg, 0));
    for (int it = 0; it < 3; it++) {
        CK(cudaGraphLaunch(mge, s2));
        CK(cudaStreamSynchronize(s2));
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += h[i] != 3 * i + 7;
        EXPECT(bad == 0, "manual graph launch %d: %d wrong", it, bad);
    }
    printf("manual_graph bad=%d\n", bad);

    CK(cudaGraphExecDestroy(mge));
    CK(cudaGraphDestroy(mg));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(fork));
    CK(cudaEventDestroy(join));
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(out));
    CK(cudaFree(cnt));
    CK(cudaFreeHost(h));
    CK(cudaFreeHost(src));
    return finish();
}
