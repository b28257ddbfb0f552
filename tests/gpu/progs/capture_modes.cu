// capture_modes: stream capture and cudaThreadExchangeStreamCaptureMode.
// CUDA's rule for potentially unsafe calls (cudaMalloc, cudaFree,
// cudaDeviceSynchronize) during a capture, by the capturing thread and by
// another thread, in global, thread-local and relaxed modes; what happens to
// the capture (invalidated or not); a capture made with a relaxed exchange
// around an allocation (what PyTorch's allocator and cuBLAS do) replayed and
// checked. Prints the error names, which must be the same through vcuda.
#include <thread>

#include "common.h"

__global__ void add_one(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

static const char *name(cudaError_t e)
{
    return cudaGetErrorName(e);
}

// Begin a capture on s in mode m, run body, end it; print what each gave.
template <class F>
static void captured(const char *what, cudaStream_t s, cudaStreamCaptureMode m, F body)
{
    cudaGraph_t g = nullptr;
    CK(cudaStreamBeginCapture(s, m));
    cudaError_t inner = body();
    cudaError_t end = cudaStreamEndCapture(s, &g);
    printf("%s: inner %s, end %s, graph %s\n", what, name(inner), name(end), g ? "yes" : "no");
    if (g)
        CK(cudaGraphDestroy(g));
    cudaGetLastError();
}

int main()
{
    const int n = 4096;
    int *d = nullptr, *h = nullptr;
    cudaStream_t s;
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&d, n * sizeof(int)));
    CK(cudaMemset(d, 0, n * sizeof(int)));
    h = (int *)malloc(n * sizeof(int));

    // the mode a thread starts with, and exchanges
    cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
    CK(cudaThreadExchangeStreamCaptureMode(&m));
    printf("initial mode %d\n", (int)m);
    CK(cudaThreadExchangeStreamCaptureMode(&m));
    printf("after swap back %d\n", (int)m);
    m = (cudaStreamCaptureMode)7;
    printf("bad mode: %s\n", name(cudaThreadExchangeStreamCaptureMode(&m)));

    // the capturing thread allocates, in each capture mode
    const cudaStreamCaptureMode modes[] = {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
                                           cudaStreamCaptureModeRelaxed};
    const char *mname[] = {"global", "thread-local", "relaxed"};
    for (int k = 0; k < 3; k++) {
        char what[64];
        snprintf(what, sizeof what, "own malloc in %s capture", mname[k]);
        captured(what, s, modes[k], [&] {
            void *p = nullptr;
            cudaError_t e = cudaMalloc(&p, 1 << 20);
            if (e == cudaSuccess)
                cudaFree(p);
            return e;
        });
    }
    // ... with a relaxed exchange around it (PyTorch's allocator, cuBLAS)
    captured("own malloc relaxed by exchange in global capture", s, cudaStreamCaptureModeGlobal, [&] {
        cudaStreamCaptureMode mm = cudaStreamCaptureModeRelaxed;
        void *p = nullptr;
        CK(cudaThreadExchangeStreamCaptureMode(&mm));
        cudaError_t e = cudaMalloc(&p, 1 << 20);
        if (e == cudaSuccess)
            e = cudaFree(p);
        CK(cudaThreadExchangeStreamCaptureMode(&mm));
        add_one<<<n / 256, 256, 0, s>>>(d, n);
        return e;
    });
    // another thread allocates while this one captures
    for (int k = 0; k < 3; k++) {
        for (int tm = 0; tm < 3; tm++) {
            char what[96];
            snprintf(what, sizeof what, "other thread (%s mode) malloc in %s capture", mname[tm], mname[k]);
            captured(what, s, modes[k], [&] {
                cudaError_t e = cudaSuccess;
                std::thread t([&] {
                    cudaStreamCaptureMode mm = modes[tm];
                    void *p = nullptr;
                    cudaThreadExchangeStreamCaptureMode(&mm);
                    e = cudaMalloc(&p, 1 << 20);
                    if (e == cudaSuccess)
                        cudaFree(p);
                });
                t.join();
                return e;
            });
        }
    }
    // device synchronisation inside a global capture
    captured("device synchronize in global capture", s, cudaStreamCaptureModeGlobal,
             [&] { return cudaDeviceSynchronize(); });

    // a capture made with the exchange, replayed: the kernel really ran
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    {
        cudaStreamCaptureMode mm = cudaStreamCaptureModeRelaxed;
        void *p = nullptr;
        CK(cudaThreadExchangeStreamCaptureMode(&mm));
        CK(cudaMalloc(&p, 4096));
        CK(cudaFree(p));
        CK(cudaThreadExchangeStreamCaptureMode(&mm));
    }
    add_one<<<n / 256, 256, 0, s>>>(d, n);
    add_one<<<n / 256, 256, 0, s>>>(d, n);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaMemsetAsync(d, 0, n * sizeof(int), s));
    for (int i = 0; i < 5; i++)
        CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != 10;
    EXPECT(bad == 0, "replayed graph: %d of %d wrong", bad, n);
    printf("replay: %d wrong\n", bad);
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaFree(d));
    CK(cudaStreamDestroy(s));
    free(h);
    return finish();
}
