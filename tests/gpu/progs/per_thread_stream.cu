// The per-thread default stream (built with --default-stream per-thread):
// stream 0 means each host thread's own stream. Four threads each run
// kernel+copy loops on "stream 0"; one thread's default stream is held back by
// a blocked host function while another thread's default-stream work must
// still complete (it would wait forever behind a shared legacy stream); the
// explicit cudaStreamPerThread and cudaStreamLegacy handles also work.
#include <pthread.h>
#include <time.h>
#include "common.h"

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "build with --default-stream per-thread"
#endif

__global__ void affine(int *p, int n, int a, int b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * a + b;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released = 0, holder_queued = 0;

static void CUDART_CB hold(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!released)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

struct Job {
    int id;
    int bad;
};

static void *worker(void *arg)
{
    Job *j = (Job *)arg;
    const int n = 200000;
    int *d, *h;
    CK(cudaMalloc(&d, n * sizeof(int)));
    CK(cudaMallocHost(&h, n * sizeof(int)));
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < n; i++)
            h[i] = i + j->id;
        CK(cudaMemcpyAsync(d, h, n * sizeof(int), cudaMemcpyHostToDevice, 0));
        affine<<<(n + 255) / 256, 256>>>(d, n, 2, it);
        CKL();
        affine<<<(n + 255) / 256, 256, 0, cudaStreamPerThread>>>(d, n, 3, -j->id);
        CKL();
        CK(cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, 0));
        CK(cudaStreamSynchronize(0));
        for (int i = 0; i < n; i++)
            j->bad += h[i] != ((i + j->id) * 2 + it) * 3 - j->id;
    }
    CK(cudaFree(d));
    CK(cudaFreeHost(h));
    return NULL;
}

static int g_independent = -1;
static int *g_dev;

static void *holder(void *arg)
{
    (void)arg;
    CK(cudaLaunchHostFunc(0, hold, NULL)); // this thread's default stream
    affine<<<1, 32>>>(g_dev, 32, 1, 1);
    CKL();
    pthread_mutex_lock(&mu);
    holder_queued = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    CK(cudaStreamSynchronize(0)); // returns once main releases the host function
    return NULL;
}

static void *other(void *arg)
{
    (void)arg;
    affine<<<1, 32>>>(g_dev + 32, 32, 1, 5);
    CKL();
    // Poll, with a deadline, instead of synchronising: a shared stream would hang here.
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cudaError_t q = cudaStreamQuery(0);
        if (q == cudaSuccess) {
            g_independent = 1;
            break;
        }
        if (q != cudaErrorNotReady)
            fail_now("cudaStreamQuery: %s", cudaGetErrorName(q));
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 8) {
            g_independent = 0;
            break;
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return NULL;
}

int main(void)
{
    printf("per_thread_default_stream_macro=1\n");
    CK(cudaMalloc(&g_dev, 64 * sizeof(int)));
    CK(cudaMemset(g_dev, 0, 64 * sizeof(int)));
    CK(cudaDeviceSynchronize());

    pthread_t th[4];
    Job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i].id = i * 1000;
        jobs[i].bad = 0;
        if (pthread_create(&th[i], NULL, worker, &jobs[i]))
            fail_now("pthread_create");
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        printf("thread %d bad=%d\n", i, jobs[i].bad);
        EXPECT(jobs[i].bad == 0, "thread %d: %d wrong", i, jobs[i].bad);
    }

    pthread_t th_hold, th_other;
    if (pthread_create(&th_hold, NULL, holder, NULL))
        fail_now("pthread_create");
    pthread_mutex_lock(&mu);
    while (!holder_queued)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    if (pthread_create(&th_other, NULL, other, NULL))
        fail_now("pthread_create");
    pthread_join(th_other, NULL);
    pthread_mutex_lock(&mu);
    released = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(th_hold, NULL);
    printf("other_thread_not_blocked=%d\n", g_independent);
    EXPECT(g_independent == 1, "another thread's default stream was held back");

    int h[64];
    CK(cudaMemcpy(h, g_dev, sizeof h, cudaMemcpyDeviceToHost));
    printf("held_result=%d other_result=%d\n", h[0], h[32]);
    EXPECT(h[0] == 1 && h[32] == 5, "results %d/%d", h[0], h[32]);

    // The legacy stream is still reachable explicitly.
    affine<<<1, 64, 0, cudaStreamLegacy>>>(g_dev, 64, 10, 0);
    CKL();
    CK(cudaStreamSynchronize(cudaStreamLegacy));
    CK(cudaMemcpy(h, g_dev, sizeof h, cudaMemcpyDeviceToHost));
    printf("legacy_result=%d,%d\n", h[0], h[32]);
    EXPECT(h[0] == 10 && h[32] == 50, "legacy stream results %d/%d", h[0], h[32]);
    CK(cudaFree(g_dev));
    return finish();
}
