// Multi-threaded host: 4 threads, each with its own stream, device and pinned
// buffers, run 50 iterations of copy-in, kernels, copy-out and verification at
// the same time; all bump one shared device counter; a fifth phase has the
// threads synchronise on each other's events.
#include <thread>
#include <vector>
#include <atomic>
#include "common.h"

__global__ void work(const int *in, int *out, int n, int k, unsigned long long *shared_counter)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * k + (i % 13);
    if (i == 0)
        atomicAdd(shared_counter, 1ull);
}

static unsigned long long *g_counter;
static cudaEvent_t g_events[4];
static std::atomic<int> g_recorded{0};

static void thread_main(int id, int *bad_out)
{
    CK(cudaSetDevice(0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int n = 100000 + id * 1000;
    int *din, *dout, *hin, *hout;
    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dout, n * sizeof(int)));
    CK(cudaMallocHost(&hin, n * sizeof(int)));
    CK(cudaMallocHost(&hout, n * sizeof(int)));
    int bad = 0;
    for (int it = 0; it < 50; it++) {
        for (int i = 0; i < n; i++)
            hin[i] = i + id * 7 + it;
        CK(cudaMemcpyAsync(din, hin, n * sizeof(int), cudaMemcpyHostToDevice, s));
        work<<<(n + 255) / 256, 256, 0, s>>>(din, dout, n, id + 2, g_counter);
        CKL();
        CK(cudaMemcpyAsync(hout, dout, n * sizeof(int), cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++)
            bad += hout[i] != (i + id * 7 + it) * (id + 2) + (i % 13);
    }
    // Phase 2: record an event, wait for every other thread's event on this stream.
    work<<<1, 32, 0, s>>>(din, dout, 32, 1, g_counter);
    CKL();
    CK(cudaEventRecord(g_events[id], s));
    g_recorded++;
    while (g_recorded.load() < 4)
        std::this_thread::yield();
    for (int j = 0; j < 4; j++)
        if (j != id)
            CK(cudaStreamWaitEvent(s, g_events[j], 0));
    CK(cudaStreamSynchronize(s));
    for (int j = 0; j < 4; j++)
        CK(cudaEventQuery(g_events[j]));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    CK(cudaFreeHost(hin));
    CK(cudaFreeHost(hout));
    CK(cudaStreamDestroy(s));
    *bad_out = bad;
}

int main(void)
{
    CK(cudaMalloc(&g_counter, sizeof *g_counter));
    CK(cudaMemset(g_counter, 0, sizeof *g_counter));
    for (int i = 0; i < 4; i++)
        CK(cudaEventCreateWithFlags(&g_events[i], cudaEventDisableTiming));
    CK(cudaDeviceSynchronize());
    int bad[4] = {-1, -1, -1, -1};
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; i++)
        ts.emplace_back(thread_main, i, &bad[i]);
    for (auto &t : ts)
        t.join();
    for (int i = 0; i < 4; i++) {
        printf("thread %d bad=%d\n", i, bad[i]);
        EXPECT(bad[i] == 0, "thread %d: %d wrong", i, bad[i]);
    }
    unsigned long long c = 0;
    CK(cudaMemcpy(&c, g_counter, sizeof c, cudaMemcpyDeviceToHost));
    printf("shared_counter=%llu\n", c);
    EXPECT(c == 4 * 51, "shared counter %llu, expected 204", c);
    for (int i = 0; i < 4; i++)
        CK(cudaEventDestroy(g_events[i]));
    CK(cudaFree(g_counter));
    return finish();
}
