// Memcpy nodes built by hand on the program's pageable memory: a graph
// copies a malloc'd input in (1D, and 2D rows with gaps between them), sums
// it on the device, copies the sum into a stack variable and reads that in a
// host node right after, as cuda-samples' manual graphs do, and copies the
// rows back out into a pitched buffer from an offset; one copy comes
// through cudaGraphAddNode. The graph, a clone of it and a disabled copy are
// launched with the input changed between launches; every result is checked
// against the CPU, and the graph's nodes, edges and copy parameters are
// printed as the program sees them.
#include <stdlib.h>
#include <string.h>
#include "common.h"

__global__ void reduce(const int *in, int n, const int *rows, int rn, unsigned long long *sum)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(sum, (unsigned long long)in[i]);
    if (i < rn)
        atomicAdd(sum, (unsigned long long)rows[i]);
}

struct seen {
    unsigned long long *result; // the stack variable the copy writes
    unsigned long long got;     // what the host node read there
    int runs;
};

static void CUDART_CB look(void *arg)
{
    struct seen *s = (struct seen *)arg;
    s->got = *s->result;
    *s->result = 0; // as the samples' callback resets it
    s->runs++;
}

int main(void)
{
    const int n = 1 << 16, T = 256, W = 48, H = 8, P = 64; // 2D: 8 rows of 48 ints, pitch 64 ints
    int *in = (int *)malloc(n * sizeof(int)), *rows = (int *)malloc(H * P * sizeof(int));
    unsigned long long result = 0;
    struct seen sn = {&result, 0, 0};
    int *din, *drows;
    unsigned long long *dsum;
    cudaStream_t s;
    cudaGraph_t g, gc;
    cudaGraphExec_t ge, gce;
    cudaGraphNode_t n_in, n_rows, n_zero, n_k, n_out, n_host;

    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&drows, W * H * sizeof(int)));
    CK(cudaMalloc(&dsum, sizeof(*dsum)));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaGraphCreate(&g, 0));

    CK(cudaGraphAddMemcpyNode1D(&n_in, g, NULL, 0, din, in, n * sizeof(int), cudaMemcpyHostToDevice));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(rows, P * sizeof(int), W, H);
    p.dstPtr = make_cudaPitchedPtr(drows, W * sizeof(int), W, H);
    p.extent = make_cudaExtent(W * sizeof(int), H, 1);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaGraphAddMemcpyNode(&n_rows, g, NULL, 0, &p));
    cudaMemsetParams mp = {};
    mp.dst = dsum;
    mp.value = 0;
    mp.elementSize = 4;
    mp.width = 2;
    mp.height = 1;
    CK(cudaGraphAddMemsetNode(&n_zero, g, NULL, 0, &mp));
    cudaGraphNode_t deps[3] = {n_in, n_rows, n_zero};
    cudaKernelNodeParams kp = {};
    int nn = n, rn = W * H;
    void *args[] = {&din, &nn, &drows, &rn, &dsum};
    kp.func = (void *)reduce;
    kp.gridDim = dim3(n / T);
    kp.blockDim = dim3(T);
    kp.kernelParams = args;
    CK(cudaGraphAddKernelNode(&n_k, g, deps, 3, &kp));
    // the copy out through cudaGraphAddNode, into a stack variable
    cudaGraphNodeParams np = {};
    np.type = cudaGraphNodeTypeMemcpy;
    np.memcpy.copyParams.srcPtr = make_cudaPitchedPtr(dsum, sizeof(result), 1, 1);
    np.memcpy.copyParams.dstPtr = make_cudaPitchedPtr(&result, sizeof(result), 1, 1);
    np.memcpy.copyParams.extent = make_cudaExtent(sizeof(result), 1, 1);
    np.memcpy.copyParams.kind = cudaMemcpyDeviceToHost;
    CK(cudaGraphAddNode(&n_out, g, &n_k, NULL, 1, &np));
    cudaHostNodeParams hp = {look, &sn};
    CK(cudaGraphAddHostNode(&n_host, g, &n_out, 1, &hp));
    // the rows back out into a pitched malloc'd buffer, from column 4 of row
    // 1 on: the bytes between the rows are never written
    int *back = (int *)malloc((H + 1) * P * sizeof(int));
    cudaMemcpy3DParms pb = {};
    pb.srcPtr = make_cudaPitchedPtr(drows, W * sizeof(int), W, H);
    pb.dstPtr = make_cudaPitchedPtr(back, P * sizeof(int), P, H + 1);
    pb.dstPos = make_cudaPos(4 * sizeof(int), 1, 0);
    pb.extent = make_cudaExtent(W * sizeof(int), H, 1);
    pb.kind = cudaMemcpyDeviceToHost;
    cudaGraphNode_t n_back;
    CK(cudaGraphAddMemcpyNode(&n_back, g, &n_rows, 1, &pb));

    size_t count = 0, edges = 0, roots = 0;
    CK(cudaGraphGetNodes(g, NULL, &count));
    CK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
    CK(cudaGraphGetRootNodes(g, NULL, &roots));
    printf("nodes=%zu edges=%zu roots=%zu\n", count, edges, roots);
    cudaGraphNode_t after[4];
    size_t na = 4;
    CK(cudaGraphNodeGetDependentNodes(n_out, after, NULL, &na));
    printf("after the copy out: %zu node(s), the host node: %d\n", na, na == 1 && after[0] == n_host);
    cudaMemcpy3DParms got = {};
    CK(cudaGraphMemcpyNodeGetParams(n_out, &got));
    printf("copy out names the stack variable: %d\n", got.dstPtr.ptr == &result);
    CK(cudaGraphMemcpyNodeGetParams(n_rows, &got));
    printf("copy in names the rows: %d, pitch %zu\n", got.srcPtr.ptr == rows, got.srcPtr.pitch);
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphClone(&gc, g));
    CK(cudaGraphInstantiate(&gce, gc, 0));

    int ok = 1, back_ok = 1;
    for (int l = 0; l < 6; l++) {
        unsigned long long want = 0;
        for (int i = 0; i < n; i++) {
            in[i] = (i * 7 + l) % 1000;
            want += in[i];
        }
        for (int r = 0; r < H; r++)
            for (int c = 0; c < P; c++) {
                rows[r * P + c] = c < W ? r * 100 + c + l : -1000000; // gaps are never read
                if (c < W)
                    want += rows[r * P + c];
            }
        int disabled = l == 4;
        if (disabled)
            CK(cudaGraphNodeSetEnabled(ge, n_out, 0));
        if (l == 5)
            CK(cudaGraphNodeSetEnabled(ge, n_out, 1));
        result = 12345;
        for (int i = 0; i < (H + 1) * P; i++)
            back[i] = -7;
        CK(cudaGraphLaunch(l % 2 ? gce : ge, s));
        CK(cudaStreamSynchronize(s));
        for (int i = 0; i < (H + 1) * P; i++) {
            int r = i / P - 1, c = i % P - 4;
            int want = r >= 0 && c >= 0 && c < W ? rows[r * P + c] : -7;
            if (back[i] != want)
                back_ok = 0;
        }
        unsigned long long expect = disabled ? 12345 : want;
        printf("launch %d (%s%s): host node saw %s, variable %llu\n", l, l % 2 ? "clone" : "graph",
               disabled ? ", copy out disabled" : "", sn.got == expect ? "the sum" : "something else", result);
        if (sn.got != expect || result != 0)
            ok = 0;
    }
    printf("host node runs=%d, rows back with gaps kept: %d\n", sn.runs, back_ok);
    EXPECT(ok && sn.runs == 6, "results differ from the CPU's");
    EXPECT(back_ok, "the rows copied back differ, or a gap between them was written");

    CK(cudaGraphExecDestroy(gce));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(gc));
    CK(cudaGraphDestroy(g));
    CK(cudaFree(din));
    CK(cudaFree(drows));
    CK(cudaFree(dsum));
    CK(cudaStreamDestroy(s));
    free(in);
    free(rows);
    free(back);
    return finish();
}
