// Events: cudaEventCreate, cudaEventCreateWithFlags (DisableTiming,
// BlockingSync), cudaEventRecord on several streams, cudaEventSynchronize,
// cudaEventQuery (success on a never-recorded event, NotReady on an event
// behind a held stream, success after completion), cudaEventElapsedTime
// (prints only that it is positive), and the errors for timing a
// DisableTiming event or an event never recorded.
#include <pthread.h>
#include "common.h"

__global__ void spin(long long cycles, int *out)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    if (threadIdx.x == 0 && blockIdx.x == 0)
        *out += 1;
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

int main(void)
{
    int *d;
    CK(cudaMalloc(&d, sizeof(int)));
    CK(cudaMemset(d, 0, sizeof(int)));
    cudaEvent_t start, stop, notime, blocking, never;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    CK(cudaEventCreateWithFlags(&notime, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&blocking, cudaEventBlockingSync | cudaEventDisableTiming));
    CK(cudaEventCreate(&never));

    cudaError_t q = cudaEventQuery(never);
    printf("query_never_recorded=%s\n", cudaGetErrorName(q));
    EXPECT(q == cudaSuccess, "query of a never-recorded event: %s", cudaGetErrorName(q));

    // Timing on the legacy stream.
    CK(cudaEventRecord(start, 0));
    spin<<<1, 32>>>(10000000ll, d);
    CKL();
    CK(cudaEventRecord(stop, 0));
    CK(cudaEventSynchronize(stop));
    float ms = -1.f;
    CK(cudaEventElapsedTime(&ms, start, stop));
    printf("elapsed_positive=%d\n", ms > 0.f);
    EXPECT(ms > 0.f, "elapsed time not positive");
    CK(cudaEventQuery(stop));

    // Timing on a created stream, with an event recorded on another stream too.
    cudaStream_t s1, s2;
    CK(cudaStreamCreate(&s1));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CK(cudaEventRecord(start, s1));
    spin<<<2, 64, 0, s1>>>(5000000ll, d);
    CKL();
    CK(cudaEventRecord(notime, s1));
    CK(cudaStreamWaitEvent(s2, notime, 0));
    spin<<<1, 32, 0, s2>>>(1000ll, d);
    CKL();
    CK(cudaEventRecord(blocking, s2));
    CK(cudaEventRecord(stop, s1));
    CK(cudaEventSynchronize(blocking));
    CK(cudaEventSynchronize(stop));
    CK(cudaEventElapsedTime(&ms, start, stop));
    printf("stream_elapsed_positive=%d\n", ms > 0.f);
    EXPECT(ms > 0.f, "elapsed time on a stream not positive");
    int v = 0;
    CK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
    printf("spin_count=%d\n", v);
    EXPECT(v == 3, "spin count %d", v);

    // Elapsed time with a DisableTiming event, and with an event never recorded.
    cudaError_t e1 = cudaEventElapsedTime(&ms, start, notime);
    printf("elapsed_disable_timing=%s\n", cudaGetErrorName(e1));
    EXPECT(e1 == cudaErrorInvalidResourceHandle, "elapsed with DisableTiming: %s", cudaGetErrorName(e1));
    (void)cudaGetLastError();
    cudaError_t e2 = cudaEventElapsedTime(&ms, start, never);
    printf("elapsed_never_recorded=%s\n", cudaGetErrorName(e2));
    EXPECT(e2 != cudaSuccess, "elapsed with an unrecorded event succeeded");
    (void)cudaGetLastError();

    // NotReady, deterministically: the event sits behind a blocked host function.
    CK(cudaLaunchHostFunc(s2, hold, NULL));
    CK(cudaEventRecord(notime, s2));
    cudaError_t q1 = cudaEventQuery(notime);
    printf("query_while_held=%s\n", cudaGetErrorName(q1));
    EXPECT(q1 == cudaErrorNotReady, "event query while held: %s", cudaGetErrorName(q1));
    pthread_mutex_lock(&mu);
    released = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    CK(cudaEventSynchronize(notime));
    cudaError_t q2 = cudaEventQuery(notime);
    printf("query_after_sync=%s\n", cudaGetErrorName(q2));
    EXPECT(q2 == cudaSuccess, "event query after sync: %s", cudaGetErrorName(q2));

    // Re-recording an event moves it; many events in a row.
    cudaEvent_t evs[32];
    for (int i = 0; i < 32; i++) {
        CK(cudaEventCreateWithFlags(&evs[i], i % 2 ? cudaEventDisableTiming : cudaEventDefault));
        spin<<<1, 32, 0, s1>>>(1000ll, d);
        CKL();
        CK(cudaEventRecord(evs[i], s1));
    }
    CK(cudaEventSynchronize(evs[31]));
    int all_done = 1;
    for (int i = 0; i < 32; i++)
        all_done &= cudaEventQuery(evs[i]) == cudaSuccess;
    printf("chain_all_done=%d\n", all_done);
    EXPECT(all_done, "earlier events not complete after the last one");
    float ms2 = -1;
    CK(cudaEventElapsedTime(&ms2, evs[0], evs[30]));
    printf("chain_elapsed_nonnegative=%d\n", ms2 >= 0.f);
    for (int i = 0; i < 32; i++)
        CK(cudaEventDestroy(evs[i]));

    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    CK(cudaEventDestroy(notime));
    CK(cudaEventDestroy(blocking));
    CK(cudaEventDestroy(never));
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
    CK(cudaFree(d));
    return finish();
}
