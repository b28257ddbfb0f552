// Streams: cudaStreamCreate, WithFlags(NonBlocking), WithPriority over the
// range from cudaDeviceGetStreamPriorityRange, cudaStreamGetFlags/GetPriority,
// cudaStreamQuery reporting cudaErrorNotReady while a stream is held back by a
// host function that waits for the main thread (deterministic), and
// cudaSuccess after cudaStreamSynchronize; work on each kind of stream is verified.
#include <pthread.h>
#include "common.h"

__global__ void add_k(int *p, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += k;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released = 0;

static void CUDART_CB hold(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!released)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static int run_on(cudaStream_t s, int *d, int *h, int n, int k)
{
    for (int i = 0; i < n; i++)
        h[i] = i;
    CK(cudaMemcpyAsync(d, h, n * sizeof(int), cudaMemcpyHostToDevice, s));
    for (int r = 0; r < 10; r++) {
        add_k<<<(n + 255) / 256, 256, 0, s>>>(d, n, k);
        CKL();
    }
    CK(cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != i + 10 * k;
    return bad;
}

int main(void)
{
    int least = 0, greatest = 0;
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    printf("priority_range_ordered=%d has_priorities=%d\n", greatest <= least, greatest < least);

    const int n = 1 << 18;
    int *d, *h;
    CK(cudaMalloc(&d, n * sizeof(int)));
    CK(cudaMallocHost(&h, n * sizeof(int)));

    cudaStream_t plain, nonblock, prio_hi, prio_lo;
    CK(cudaStreamCreate(&plain));
    CK(cudaStreamCreateWithFlags(&nonblock, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithPriority(&prio_hi, cudaStreamNonBlocking, greatest));
    CK(cudaStreamCreateWithPriority(&prio_lo, cudaStreamDefault, least));
    unsigned f;
    int p;
    CK(cudaStreamGetFlags(plain, &f));
    printf("plain flags=%u\n", f);
    CK(cudaStreamGetFlags(nonblock, &f));
    printf("nonblocking flags=%u\n", f);
    EXPECT(f == cudaStreamNonBlocking, "non-blocking flag lost");
    CK(cudaStreamGetPriority(prio_hi, &p));
    printf("prio_hi_is_greatest=%d\n", p == greatest);
    EXPECT(p == greatest, "priority %d, expected %d", p, greatest);
    CK(cudaStreamGetPriority(prio_lo, &p));
    printf("prio_lo_is_least=%d\n", p == least);
    EXPECT(p == least, "priority %d, expected %d", p, least);
    CK(cudaStreamGetPriority(plain, &p));
    printf("plain_priority_is_least=%d\n", p == least);

    cudaStream_t all[5] = {plain, nonblock, prio_hi, prio_lo, 0};
    const char *names[5] = {"plain", "nonblocking", "prio_hi", "prio_lo", "legacy_default"};
    for (int i = 0; i < 5; i++) {
        int bad = run_on(all[i], d, h, n, i + 1);
        printf("%s bad=%d\n", names[i], bad);
        EXPECT(bad == 0, "%s stream: %d wrong", names[i], bad);
    }

    // A stream held back by a host function: NotReady until released.
    CK(cudaStreamQuery(nonblock)); // idle: success
    CK(cudaLaunchHostFunc(nonblock, hold, NULL));
    add_k<<<(n + 255) / 256, 256, 0, nonblock>>>(d, n, 1000);
    CKL();
    cudaError_t q1 = cudaStreamQuery(nonblock);
    printf("query_while_held=%s\n", cudaGetErrorName(q1));
    EXPECT(q1 == cudaErrorNotReady, "query while held: %s", cudaGetErrorName(q1));
    // NotReady is not an error that sticks.
    cudaError_t le = cudaGetLastError();
    printf("last_error_after_notready=%s\n", cudaGetErrorName(le));
    // Other streams are not held back.
    int bad = run_on(prio_hi, d + n / 2, h, n / 4, 3);
    EXPECT(bad == 0, "independent stream while another is held");
    pthread_mutex_lock(&mu);
    released = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    CK(cudaStreamSynchronize(nonblock));
    cudaError_t q2 = cudaStreamQuery(nonblock);
    printf("query_after_sync=%s\n", cudaGetErrorName(q2));
    EXPECT(q2 == cudaSuccess, "query after sync: %s", cudaGetErrorName(q2));

    // Destroying a stream with queued work is fine; the work completes.
    cudaStream_t tmp;
    CK(cudaStreamCreate(&tmp));
    CK(cudaMemsetAsync(d, 0, n * sizeof(int), tmp));
    add_k<<<(n + 255) / 256, 256, 0, tmp>>>(d, n, 9);
    CKL();
    CK(cudaStreamDestroy(tmp));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != 9;
    printf("destroyed_stream_work_done bad=%d\n", bad);
    EXPECT(bad == 0, "work queued before cudaStreamDestroy: %d wrong", bad);

    for (int i = 0; i < 4; i++)
        CK(cudaStreamDestroy(all[i]));
    CK(cudaFree(d));
    CK(cudaFreeHost(h));
    return finish();
}
