// CUDA graphs with every node kind built by hand: memset, kernel, host,
// event record and wait, child graph, memory allocation and free, memcpy,
// conditional IF (default value) and WHILE (set from the device), empty.
// Instantiated and launched, the result checked against a CPU reference;
// then changed node by node in the executable graph (kernel and memset
// parameters, host function, a node disabled), updated as a whole with
// cudaGraphExecUpdate (and a refused update), relaunched and checked after
// each step. Plus a clone with cudaGraphNodeFindInClone, the edges, capture
// into an existing graph (cudaStreamBeginCaptureToGraph) and
// cudaGraphDebugDotPrint to a file the program reads back.
#include "common.h"

#include <unistd.h>

__global__ void addv(int *p, int n, int v) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += v; }
__global__ void mulv(int *p, int n, int v) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= v; }

// One WHILE iteration: +1 everywhere; one thread counts and decides whether to go on.
__global__ void while_body(int *p, int n, int *iters, int want, cudaGraphConditionalHandle h)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
    if (i == 0) {
        int c = ++*iters;
        cudaGraphSetConditional(h, c < want ? 1 : 0);
    }
}

static int g_host_a, g_host_b;
static void CUDART_CB host_a(void *p) { g_host_a += *(int *)p; }
static void CUDART_CB host_b(void *p) { g_host_b += *(int *)p; }

static const int N = 4096, T = 256, WHILE_ITERS = 3;

// What one launch leaves in the output: memset value m, kernel +k (unless disabled),
// child *3, copy +1, IF +100, WHILE +WHILE_ITERS.
static int expected(int m, int k, bool k_on) { return ((m + (k_on ? k : 0)) * 3 + 1) + 100 + WHILE_ITERS; }

static cudaKernelNodeParams kparams(void *fn, void **args)
{
    cudaKernelNodeParams p;
    memset(&p, 0, sizeof(p));
    p.func = fn;
    p.gridDim = dim3(N / T);
    p.blockDim = dim3(T);
    p.kernelParams = args;
    return p;
}

static cudaMemsetParams msparams(void *dst, unsigned v)
{
    cudaMemsetParams m;
    memset(&m, 0, sizeof(m));
    m.dst = dst;
    m.value = v;
    m.elementSize = 4;
    m.width = N;
    m.height = 1;
    return m;
}

static void check_out(const int *h, int want, const char *what)
{
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += h[i] != want;
    EXPECT(bad == 0, "%s: %d of %d wrong (first %d, want %d)", what, bad, N, h[0], want);
    printf("%s: out[*] = %d %s\n", what, h[0], bad ? "MISMATCH" : "ok");
}

int main(void)
{
    int *a, *b, *iters, *h;
    CK(cudaMalloc(&a, N * sizeof(int)));
    CK(cudaMalloc(&b, N * sizeof(int)));
    CK(cudaMalloc(&iters, sizeof(int)));
    CK(cudaMallocHost(&h, N * sizeof(int)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t ev;
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    int n = N, k = 5, three = 3, one = 1, hundred = 100;

    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    // memset -> kernel +k -> host -> event record -> event wait -> child (*3)
    cudaGraphNode_t n_ms, n_k, n_host, n_rec, n_wait, n_child, n_alloc, n_cp1, n_add1, n_cp2, n_free, n_ms_it,
        n_if, n_while, n_empty, n_d2h;
    cudaMemsetParams mp = msparams(a, 2);
    CK(cudaGraphAddMemsetNode(&n_ms, g, NULL, 0, &mp));
    void *kargs[] = {&a, &n, &k};
    cudaKernelNodeParams kp = kparams((void *)addv, kargs);
    CK(cudaGraphAddKernelNode(&n_k, g, &n_ms, 1, &kp));
    cudaHostNodeParams hp = {host_a, &one};
    CK(cudaGraphAddHostNode(&n_host, g, &n_k, 1, &hp));
    CK(cudaGraphAddEventRecordNode(&n_rec, g, &n_host, 1, ev));
    CK(cudaGraphAddEventWaitNode(&n_wait, g, &n_rec, 1, ev));
    cudaGraph_t child;
    CK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t cn;
    void *margs[] = {&a, &n, &three};
    cudaKernelNodeParams mk = kparams((void *)mulv, margs);
    CK(cudaGraphAddKernelNode(&cn, child, NULL, 0, &mk));
    CK(cudaGraphAddChildGraphNode(&n_child, g, &n_wait, 1, child));
    CK(cudaGraphDestroy(child));
    // a scratch buffer the graph allocates: a -> tmp, +1, tmp -> b, freed
    cudaMemAllocNodeParams ap;
    memset(&ap, 0, sizeof(ap));
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = N * sizeof(int);
    CK(cudaGraphAddMemAllocNode(&n_alloc, g, NULL, 0, &ap));
    int *tmp = (int *)ap.dptr;
    cudaGraphNode_t d2[2] = {n_child, n_alloc};
    CK(cudaGraphAddMemcpyNode1D(&n_cp1, g, d2, 2, tmp, a, N * sizeof(int), cudaMemcpyDeviceToDevice));
    void *aargs[] = {&tmp, &n, &one};
    cudaKernelNodeParams ak = kparams((void *)addv, aargs);
    CK(cudaGraphAddKernelNode(&n_add1, g, &n_cp1, 1, &ak));
    CK(cudaGraphAddMemcpyNode1D(&n_cp2, g, &n_add1, 1, b, tmp, N * sizeof(int), cudaMemcpyDeviceToDevice));
    CK(cudaGraphAddMemFreeNode(&n_free, g, &n_cp2, 1, tmp));
    // IF with a default of 1: b += 100
    cudaGraphConditionalHandle hif, hwhile;
    CK(cudaGraphConditionalHandleCreate(&hif, g, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams cp = {}; // value-initialised (its union has no default constructor)
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = hif;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
    CK(cudaGraphAddNode(&n_if, g, &n_cp2, NULL, 1, &cp));
    cudaGraph_t if_body = cp.conditional.phGraph_out[0];
    void *iargs[] = {&b, &n, &hundred};
    cudaKernelNodeParams ik = kparams((void *)addv, iargs);
    cudaGraphNode_t bn;
    CK(cudaGraphAddKernelNode(&bn, if_body, NULL, 0, &ik));
    // WHILE: b += 1, WHILE_ITERS times, the count reset by a memset first
    cudaMemsetParams mi = msparams(iters, 0);
    mi.width = 1;
    CK(cudaGraphAddMemsetNode(&n_ms_it, g, &n_if, 1, &mi));
    CK(cudaGraphConditionalHandleCreate(&hwhile, g, 1, cudaGraphCondAssignDefault));
    cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = hwhile;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cp.conditional.size = 1;
    CK(cudaGraphAddNode(&n_while, g, &n_ms_it, NULL, 1, &cp));
    int want_iters = WHILE_ITERS;
    void *wargs[] = {&b, &n, &iters, &want_iters, &hwhile};
    cudaKernelNodeParams wk = kparams((void *)while_body, wargs);
    CK(cudaGraphAddKernelNode(&bn, cp.conditional.phGraph_out[0], NULL, 0, &wk));
    cudaGraphNode_t join[2] = {n_while, n_free};
    CK(cudaGraphAddEmptyNode(&n_empty, g, join, 2));
    CK(cudaGraphAddMemcpyNode1D(&n_d2h, g, &n_empty, 1, h, b, N * sizeof(int), cudaMemcpyDeviceToHost));

    size_t nodes = 0, edges = 0, roots = 0;
    CK(cudaGraphGetNodes(g, NULL, &nodes));
    CK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
    CK(cudaGraphGetRootNodes(g, NULL, &roots));
    printf("graph: %zu nodes, %zu edges, %zu roots\n", nodes, edges, roots);
    cudaGraphNode_t deps[4];
    size_t nd = 4;
    CK(cudaGraphNodeGetDependencies(n_cp1, deps, NULL, &nd));
    EXPECT(nd == 2 && deps[0] == n_child && deps[1] == n_alloc, "dependencies of the first copy");
    cudaGraphNodeType t;
    CK(cudaGraphNodeGetType(n_while, &t));
    EXPECT(t == cudaGraphNodeTypeConditional, "conditional node type %d", (int)t);
    cudaMemAllocNodeParams got_ap;
    CK(cudaGraphMemAllocNodeGetParams(n_alloc, &got_ap));
    EXPECT(got_ap.bytesize == ap.bytesize && got_ap.dptr == ap.dptr, "alloc node params read back");

    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int it = 0; it < 2; it++) {
        memset(h, 0, N * sizeof(int));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        check_out(h, expected(2, 5, true), it ? "launch 2" : "launch 1");
    }
    EXPECT(g_host_a == 2, "host node ran %d times", g_host_a);

    // node by node in the executable graph: kernel +6, memset 3, another host function
    k = 6;
    kp = kparams((void *)addv, kargs);
    CK(cudaGraphExecKernelNodeSetParams(ge, n_k, &kp));
    mp = msparams(a, 3);
    CK(cudaGraphExecMemsetNodeSetParams(ge, n_ms, &mp));
    hp.fn = host_b;
    CK(cudaGraphExecHostNodeSetParams(ge, n_host, &hp));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    check_out(h, expected(3, 6, true), "exec set params");
    EXPECT(g_host_a == 2 && g_host_b == 1, "host functions after exec set: %d %d", g_host_a, g_host_b);
    // the graph itself kept its parameters
    cudaMemsetParams got_mp;
    CK(cudaGraphMemsetNodeGetParams(n_ms, &got_mp));
    EXPECT(got_mp.value == 2, "graph memset value %u", got_mp.value);
    // a disabled node
    CK(cudaGraphNodeSetEnabled(ge, n_k, 0));
    unsigned on = 1;
    CK(cudaGraphNodeGetEnabled(ge, n_k, &on));
    EXPECT(on == 0, "kernel node still enabled");
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    check_out(h, expected(3, 6, false), "kernel node disabled");
    CK(cudaGraphNodeSetEnabled(ge, n_k, 1));

    // the graph changed, the executable graph updated as a whole
    k = 10;
    kp = kparams((void *)addv, kargs);
    CK(cudaGraphKernelNodeSetParams(n_k, &kp));
    mp = msparams(a, 4);
    CK(cudaGraphMemsetNodeSetParams(n_ms, &mp));
    hp.fn = host_a;
    CK(cudaGraphHostNodeSetParams(n_host, &hp));
    cudaGraphExecUpdateResultInfo info;
    CK(cudaGraphExecUpdate(ge, g, &info));
    EXPECT(info.result == cudaGraphExecUpdateSuccess, "update result %d", (int)info.result);
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    check_out(h, expected(4, 10, true), "exec update");
    EXPECT(g_host_a == 3 && g_host_b == 2, "host functions after update: %d %d", g_host_a, g_host_b);
    // a graph of another shape is refused
    cudaGraph_t other;
    CK(cudaGraphCreate(&other, 0));
    cudaGraphNode_t e1;
    CK(cudaGraphAddEmptyNode(&e1, other, NULL, 0));
    CK_EXPECT(cudaGraphExecUpdate(ge, other, &info), cudaErrorGraphExecUpdateFailure);
    printf("update with another shape: result %d\n", (int)info.result);
    CK(cudaGraphDestroy(other));

    // a clone, and its nodes found from the original's
    // (a graph with memory or conditional nodes cannot be cloned: the driver
    // says cudaErrorNotSupported, as printed)
    cudaGraph_t clone = nullptr;
    cudaError_t ce = cudaGraphClone(&clone, g);
    printf("clone: %s\n", cudaGetErrorName(ce));
    cudaGetLastError();
    size_t cnodes = 0;
    if (ce == cudaSuccess) {

    cudaGraphNode_t in_clone;
    CK(cudaGraphNodeFindInClone(&in_clone, n_k, clone));
    EXPECT(in_clone != n_k, "the clone's node is the original's");
    CK(cudaGraphNodeGetType(in_clone, &t));
    EXPECT(t == cudaGraphNodeTypeKernel, "the clone's node type %d", (int)t);
    CK(cudaGraphGetNodes(clone, NULL, &cnodes));
    EXPECT(cnodes == nodes, "clone has %zu nodes", cnodes);
    CK(cudaGraphDestroy(clone));
    }

    // the dot print, written to a file and read back
    char path[] = "/tmp/graph_nodes_dot_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp");
    close(fd);
    CK(cudaGraphDebugDotPrint(g, path, 0));
    FILE *f = fopen(path, "r");
    char head[64] = {0};
    size_t got = f ? fread(head, 1, sizeof(head) - 1, f) : 0;
    if (f)
        fclose(f);
    unlink(path);
    EXPECT(got > 0 && strstr(head, "digraph") != NULL, "dot file does not start a digraph");
    printf("dot print: %s\n", got && strstr(head, "digraph") ? "digraph" : "missing");

    // capture into an existing graph, after a memset node already in it
    cudaGraph_t g2;
    CK(cudaGraphCreate(&g2, 0));
    cudaGraphNode_t m2;
    mp = msparams(b, 0);
    CK(cudaGraphAddMemsetNode(&m2, g2, NULL, 0, &mp));
    CK(cudaStreamBeginCaptureToGraph(s, g2, &m2, NULL, 1, cudaStreamCaptureModeGlobal));
    addv<<<N / T, T, 0, s>>>(b, N, 7);
    CKL();
    mulv<<<N / T, T, 0, s>>>(b, N, 2);
    CKL();
    cudaGraph_t g2_out;
    CK(cudaStreamEndCapture(s, &g2_out));
    EXPECT(g2_out == g2, "capture ended in another graph");
    CK(cudaGraphGetNodes(g2, NULL, &cnodes));
    printf("captured into an existing graph: %zu nodes\n", cnodes);
    cudaGraphExec_t ge2;
    CK(cudaGraphInstantiate(&ge2, g2, 0));
    CK(cudaGraphLaunch(ge2, s));
    CK(cudaMemcpyAsync(h, b, N * sizeof(int), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += h[i] != 14;
    EXPECT(bad == 0, "captured graph result: %d wrong", bad);
    printf("captured graph: out[*] = %d %s\n", h[0], bad ? "MISMATCH" : "ok");

    CK(cudaGraphExecDestroy(ge2));
    CK(cudaGraphDestroy(g2));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaDeviceGraphMemTrim(0));
    CK(cudaEventDestroy(ev));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(iters));
    CK(cudaFreeHost(h));
    return finish();
}
