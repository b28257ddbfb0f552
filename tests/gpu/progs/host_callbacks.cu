// Host callbacks in stream order: cudaLaunchHostFunc and cudaStreamAddCallback.
// A callback sees data produced by earlier kernels/copies (via pinned memory),
// writes pinned memory that a later copy+kernel consume, callbacks run in
// order, and a status argument of cudaSuccess reaches cudaStreamAddCallback's
// callback. The sequence of events is logged and printed.
#include <string>
#include "common.h"

__global__ void k_fill(int *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        d[i] = i + 1;
}
__global__ void k_plus(const int *in, int *out, int n, int add)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] + add;
}

static const int N = 1 << 16;
static int *A, *B, *C; // pinned
static std::string g_log;
static int g_order[200], g_norder = 0;

static long long sum(const int *p) { long long s = 0; for (int i = 0; i < N; i++) s += p[i]; return s; }

static void CUDART_CB cb1(void *arg)
{
    (void)arg;
    char line[128];
    snprintf(line, sizeof line, "cb1 sees kernel1 sum=%lld\n", sum(A));
    g_log += line;
    for (int i = 0; i < N; i++)
        B[i] = A[i] * 2;
    g_log += "cb1 wrote B\n";
}

static void CUDART_CB cb2(cudaStream_t s, cudaError_t status, void *arg)
{
    (void)s;
    char line[128];
    snprintf(line, sizeof line, "cb2 status=%s tag=%d\n", cudaGetErrorName(status), *(int *)arg);
    g_log += line;
}

static void CUDART_CB cb3(void *arg)
{
    (void)arg;
    char line[128];
    snprintf(line, sizeof line, "cb3 sees kernel2 sum=%lld\n", sum(C));
    g_log += line;
}

static void CUDART_CB order_cb(void *arg) { g_order[g_norder++] = (int)(intptr_t)arg; }
static void CUDART_CB order_cb2(cudaStream_t s, cudaError_t st, void *arg)
{
    (void)s;
    (void)st;
    g_order[g_norder++] = (int)(intptr_t)arg;
}

int main(void)
{
    CK(cudaMallocHost(&A, N * sizeof(int)));
    CK(cudaMallocHost(&B, N * sizeof(int)));
    CK(cudaMallocHost(&C, N * sizeof(int)));
    memset(A, 0, N * sizeof(int));
    memset(B, 0, N * sizeof(int));
    memset(C, 0, N * sizeof(int));
    int *d1, *d2, *d3;
    CK(cudaMalloc(&d1, N * sizeof(int)));
    CK(cudaMalloc(&d2, N * sizeof(int)));
    CK(cudaMalloc(&d3, N * sizeof(int)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int tag = 77;

    g_log += "main enqueue\n";
    k_fill<<<N / 256, 256, 0, s>>>(d1, N);
    CKL();
    CK(cudaMemcpyAsync(A, d1, N * sizeof(int), cudaMemcpyDeviceToHost, s));
    CK(cudaLaunchHostFunc(s, cb1, NULL));
    CK(cudaMemcpyAsync(d2, B, N * sizeof(int), cudaMemcpyHostToDevice, s));
    k_plus<<<N / 256, 256, 0, s>>>(d2, d3, N, 1);
    CKL();
    CK(cudaStreamAddCallback(s, cb2, &tag, 0));
    CK(cudaMemcpyAsync(C, d3, N * sizeof(int), cudaMemcpyDeviceToHost, s));
    CK(cudaLaunchHostFunc(s, cb3, NULL));
    CK(cudaStreamSynchronize(s));
    g_log += "main synchronized\n";
    printf("%s", g_log.c_str());

    long long sa = sum(A), sc = sum(C);
    long long want_a = (long long)N * (N + 1) / 2;
    long long want_c = 2 * want_a + N;
    EXPECT(sa == want_a, "A sum %lld", sa);
    EXPECT(sc == want_c, "C sum %lld, expected %lld", sc, want_c);
    const char *want_log =
        "main enqueue\n"
        "cb1 sees kernel1 sum=2147516416\n"
        "cb1 wrote B\n"
        "cb2 status=cudaSuccess tag=77\n"
        "cb3 sees kernel2 sum=4295098368\n"
        "main synchronized\n";
    EXPECT(g_log == want_log, "callback log differs from the expected sequence");

    // 100 callbacks, alternating both APIs, with kernels in between: strict order.
    for (int i = 0; i < 100; i++) {
        if (i % 10 == 0) {
            k_plus<<<N / 256, 256, 0, s>>>(d3, d3, N, 1);
            CKL();
        }
        if (i % 2)
            CK(cudaStreamAddCallback(s, order_cb2, (void *)(intptr_t)i, 0));
        else
            CK(cudaLaunchHostFunc(s, order_cb, (void *)(intptr_t)i));
    }
    CK(cudaStreamSynchronize(s));
    int in_order = g_norder == 100;
    for (int i = 0; i < g_norder; i++)
        in_order &= g_order[i] == i;
    printf("ordered_callbacks=%d in_order=%d\n", g_norder, in_order);
    EXPECT(in_order, "callbacks out of order");

    // Callbacks on the legacy default stream.
    g_norder = 0;
    CK(cudaLaunchHostFunc(0, order_cb, (void *)(intptr_t)5));
    CK(cudaStreamAddCallback(0, order_cb2, (void *)(intptr_t)6, 0));
    CK(cudaDeviceSynchronize());
    printf("default_stream_callbacks=%d,%d\n", g_order[0], g_order[1]);
    EXPECT(g_norder == 2 && g_order[0] == 5 && g_order[1] == 6, "default-stream callbacks");

    CK(cudaStreamDestroy(s));
    CK(cudaFree(d1));
    CK(cudaFree(d2));
    CK(cudaFree(d3));
    CK(cudaFreeHost(A));
    CK(cudaFreeHost(B));
    CK(cudaFreeHost(C));
    return finish();
}
