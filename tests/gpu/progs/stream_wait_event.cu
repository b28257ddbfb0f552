// cudaStreamWaitEvent between streams: a producer stream runs a slow kernel
// and then writes a buffer; a consumer stream (non-blocking, so nothing else
// orders it) waits on the producer's event and reads the buffer. Without the
// wait the consumer would read stale data. Then a ping-pong chain where each
// of two streams waits for the other's event before adding to a shared value.
#include "common.h"

__global__ void slow_then_write(int *buf, int n, int v, long long spin_cycles)
{
    if (threadIdx.x == 0) {
        long long t0 = clock64();
        while (clock64() - t0 < spin_cycles) {
        }
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        buf[i] = v + i;
}

__global__ void consume(const int *buf, int *out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = buf[i] * 2;
}

__global__ void step(int *x, int mul, int add)
{
    *x = *x * mul + add;
}

int main(void)
{
    cudaStream_t prod, cons;
    CK(cudaStreamCreateWithFlags(&prod, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&cons, cudaStreamNonBlocking));
    cudaEvent_t ready, consumed;
    CK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));

    const int n = 1 << 20, rounds = 8;
    int *buf, *out, *h;
    CK(cudaMalloc(&buf, n * sizeof(int)));
    CK(cudaMalloc(&out, rounds * (size_t)n * sizeof(int)));
    CK(cudaMemset(buf, 0, n * sizeof(int)));
    CK(cudaDeviceSynchronize());
    CK(cudaMallocHost(&h, rounds * (size_t)n * sizeof(int)));

    for (int r = 0; r < rounds; r++) {
        // The producer must not overwrite buf before the previous round was consumed.
        if (r > 0)
            CK(cudaStreamWaitEvent(prod, consumed, 0));
        slow_then_write<<<64, 256, 0, prod>>>(buf, n, r * 100000, 20000000ll);
        CKL();
        CK(cudaEventRecord(ready, prod));
        CK(cudaStreamWaitEvent(cons, ready, 0));
        consume<<<64, 256, 0, cons>>>(buf, out + (size_t)r * n, n);
        CKL();
        CK(cudaEventRecord(consumed, cons));
    }
    CK(cudaMemcpyAsync(h, out, rounds * (size_t)n * sizeof(int), cudaMemcpyDeviceToHost, cons));
    CK(cudaStreamSynchronize(cons));
    int bad = 0;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < n; i++)
            bad += h[(size_t)r * n + i] != (r * 100000 + i) * 2;
    printf("producer_consumer rounds=%d bad=%d\n", rounds, bad);
    EXPECT(bad == 0, "consumer saw stale data: %d wrong", bad);

    // Ping-pong: x = ((x*2+1)*3+2)*2+1 ... in strict alternation.
    int *x;
    CK(cudaMalloc(&x, sizeof(int)));
    CK(cudaMemsetAsync(x, 0, sizeof(int), prod));
    cudaEvent_t ea, eb;
    CK(cudaEventCreateWithFlags(&ea, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&eb, cudaEventDisableTiming));
    for (int k = 0; k < 20; k++) {
        cudaStream_t s = (k & 1) ? cons : prod;
        cudaEvent_t wait_on = (k & 1) ? ea : eb, signal = (k & 1) ? eb : ea;
        if (k > 0)
            CK(cudaStreamWaitEvent(s, wait_on, 0));
        int mul = (k & 1) ? 3 : 2, add = k % 5;
        slow_then_write<<<1, 32, 0, s>>>(out, 32, 0, k % 3 == 0 ? 2000000ll : 0ll);
        CKL();
        step<<<1, 1, 0, s>>>(x, mul, add);
        CKL();
        CK(cudaEventRecord(signal, s));
    }
    int got = 0;
    CK(cudaStreamWaitEvent(prod, eb, 0));
    CK(cudaMemcpyAsync(&got, x, sizeof got, cudaMemcpyDeviceToHost, prod));
    CK(cudaStreamSynchronize(prod));
    int w = 0;
    for (int k = 0; k < 20; k++)
        w = (int)((unsigned)w * (unsigned)((k & 1) ? 3 : 2) + (unsigned)(k % 5));
    printf("ping_pong=%d\n", got);
    EXPECT(got == w, "ping-pong chain %d, expected %d", got, w);

    CK(cudaEventDestroy(ready));
    CK(cudaEventDestroy(consumed));
    CK(cudaEventDestroy(ea));
    CK(cudaEventDestroy(eb));
    CK(cudaStreamDestroy(prod));
    CK(cudaStreamDestroy(cons));
    CK(cudaFree(buf));
    CK(cudaFree(out));
    CK(cudaFree(x));
    CK(cudaFreeHost(h));
    return finish();
}
