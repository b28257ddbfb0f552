// Several GPUs of one process, as multi-GPU programs use them: for every
// ordered pair of devices, the peer queries (cudaDeviceCanAccessPeer,
// cudaDeviceGetP2PAttribute), enabling peer access (twice: the second is
// cudaErrorPeerAccessAlreadyEnabled) and disabling it, cudaMemcpyPeer and
// cudaMemcpyPeerAsync, a kernel on one device reading and atomically adding
// into the other's memory while that device's own kernel adds too, a stream
// of one device waiting for an event of the other, and a memory pool of one
// device made accessible to the other (cudaMemPoolSetAccess). Then one host
// thread per device, each filling and summing its own device's memory at the
// same time. On one device it says so and checks that device alone.
#include <pthread.h>

#include "common.h"

#define N (1 << 20)

__global__ void fill(int *p, int n, int base)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = base + i % 1000;
}

__global__ void sum_into(const int *p, int n, unsigned long long *out)
{
    unsigned long long s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += (unsigned)p[i];
    atomicAdd(out, s);
}

__global__ void add_many(int *counter, int times)
{
    for (int i = 0; i < times; i++)
        atomicAdd_system(counter, 1);
}

static unsigned long long sum_on(int dev, const int *p, int n)
{
    unsigned long long *d, h = 0;
    CK(cudaSetDevice(dev));
    CK(cudaMalloc(&d, sizeof *d));
    CK(cudaMemset(d, 0, sizeof *d));
    sum_into<<<64, 256>>>(p, n, d);
    CKL();
    CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    return h;
}

/* Prints "a->b: what ok 1|0" and fails the program on 0. */
static void say(int a, int b, const char *what, int ok)
{
    printf("%d->%d: %s ok %d\n", a, b, what, ok);
    EXPECT(ok, "%d->%d: %s", a, b, what);
}

static unsigned long long want_sum(int base, int n)
{
    unsigned long long s = 0;
    for (int i = 0; i < n; i++)
        s += (unsigned)(base + i % 1000);
    return s;
}

static void pair(int a, int b)
{
    int can = -1, rank = -1, access = -1, atomics = -1;
    CK(cudaDeviceCanAccessPeer(&can, a, b));
    CK(cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, a, b));
    CK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b));
    CK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b));
    printf("%d->%d: can %d access %d atomics %d rank>=0 %d\n", a, b, can, access, atomics, rank >= 0);

    int *pa, *pb;
    CK(cudaSetDevice(a));
    CK(cudaMalloc(&pa, N * sizeof(int)));
    fill<<<64, 256>>>(pa, N, 7 * a + 3);
    CKL();
    CK(cudaDeviceSynchronize());
    CK(cudaSetDevice(b));
    CK(cudaMalloc(&pb, N * sizeof(int)));
    CK(cudaMemset(pb, 0, N * sizeof(int)));

    // copies between the devices, without peer access first
    CK(cudaMemcpyPeer(pb, b, pa, a, N * sizeof(int)));
    say(a, b, "memcpyPeer sum", sum_on(b, pb, N) == want_sum(7 * a + 3, N));
    cudaStream_t s;
    CK(cudaSetDevice(b));
    CK(cudaStreamCreate(&s));
    CK(cudaMemsetAsync(pb, 0, N * sizeof(int), s));
    CK(cudaMemcpyPeerAsync(pb + 1000, b, pa, a, (N - 1000) * sizeof(int), s));
    CK(cudaStreamSynchronize(s));
    say(a, b, "memcpyPeerAsync sum", sum_on(b, pb + 1000, N - 1000) == want_sum(7 * a + 3, N - 1000));

    if (can) {
        CK(cudaSetDevice(b));
        CK(cudaDeviceEnablePeerAccess(a, 0));
        CK_EXPECT(cudaDeviceEnablePeerAccess(a, 0), cudaErrorPeerAccessAlreadyEnabled);
        (void)cudaGetLastError();
        // device b reads device a's memory straight
        say(a, b, "direct read sum", sum_on(b, pa, N) == want_sum(7 * a + 3, N));
        // both devices add into a's counter at once
        int *counter;
        CK(cudaSetDevice(a));
        CK(cudaMalloc(&counter, sizeof(int)));
        CK(cudaMemset(counter, 0, sizeof(int)));
        CK(cudaDeviceSynchronize());
        add_many<<<32, 64>>>(counter, 50);
        CKL();
        CK(cudaSetDevice(b));
        add_many<<<32, 64>>>(counter, 50);
        CKL();
        CK(cudaDeviceSynchronize());
        CK(cudaSetDevice(a));
        CK(cudaDeviceSynchronize());
        int got = 0;
        CK(cudaMemcpy(&got, counter, sizeof got, cudaMemcpyDeviceToHost));
        printf("%d->%d: shared counter %d (want %d)\n", a, b, got, 2 * 32 * 64 * 50);
        EXPECT(got == 2 * 32 * 64 * 50, "counter %d", got);
        CK(cudaFree(counter));
        CK(cudaSetDevice(b));
        CK(cudaDeviceDisablePeerAccess(a));
        CK_EXPECT(cudaDeviceDisablePeerAccess(a), cudaErrorPeerAccessNotEnabled);
        (void)cudaGetLastError();
    }

    // a stream of b waits for an event of a's stream
    cudaStream_t sa;
    cudaEvent_t ev;
    CK(cudaSetDevice(a));
    CK(cudaStreamCreate(&sa));
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    fill<<<64, 256, 0, sa>>>(pa, N, 11 * a + 1);
    CKL();
    CK(cudaEventRecord(ev, sa));
    CK(cudaSetDevice(b));
    CK(cudaStreamWaitEvent(s, ev, 0));
    CK(cudaMemcpyPeerAsync(pb, b, pa, a, N * sizeof(int), s));
    CK(cudaStreamSynchronize(s));
    say(a, b, "after the other's event", sum_on(b, pb, N) == want_sum(11 * a + 1, N));

    // a's pool, made accessible to b: b's kernel fills what a allocated from it
    if (can) {
        cudaMemPool_t pool;
        cudaMemAccessDesc d;
        cudaMemLocation loc;
        cudaMemAccessFlags f = cudaMemAccessFlagsProtNone;
        CK(cudaDeviceGetDefaultMemPool(&pool, a));
        memset(&d, 0, sizeof d);
        d.location.type = cudaMemLocationTypeDevice;
        d.location.id = b;
        d.flags = cudaMemAccessFlagsProtReadWrite;
        CK(cudaMemPoolSetAccess(pool, &d, 1));
        loc = d.location;
        CK(cudaMemPoolGetAccess(&f, pool, &loc));
        int *q;
        CK(cudaSetDevice(a));
        CK(cudaMallocAsync(&q, N * sizeof(int), sa));
        CK(cudaStreamSynchronize(sa));
        CK(cudaSetDevice(b));
        fill<<<64, 256, 0, s>>>(q, N, 5);
        CKL();
        CK(cudaStreamSynchronize(s));
        say(a, b, "pool access read-write", f == cudaMemAccessFlagsProtReadWrite);
        say(a, b, "pool memory filled from the peer", sum_on(a, q, N) == want_sum(5, N));
        CK(cudaSetDevice(a));
        CK(cudaFreeAsync(q, sa));
        CK(cudaStreamSynchronize(sa));
        d.flags = cudaMemAccessFlagsProtNone;
        CK(cudaMemPoolSetAccess(pool, &d, 1));
    }
    CK(cudaEventDestroy(ev));
    CK(cudaSetDevice(a));
    CK(cudaStreamDestroy(sa));
    CK(cudaFree(pa));
    CK(cudaSetDevice(b));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(pb));
}

struct job {
    int dev;
    unsigned long long sum;
    cudaError_t err;
};

static void *per_device(void *arg)
{
    struct job *j = (struct job *)arg;
    int *p;
    unsigned long long *d, h = 0;
    j->err = cudaSetDevice(j->dev);
    for (int round = 0; round < 20 && j->err == cudaSuccess; round++) {
        if ((j->err = cudaMalloc(&p, N * sizeof(int))) || (j->err = cudaMalloc(&d, sizeof *d)))
            break;
        fill<<<64, 256>>>(p, N, j->dev + round);
        cudaMemset(d, 0, sizeof *d);
        sum_into<<<64, 256>>>(p, N, d);
        j->err = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
        j->sum += h;
        cudaFree(p);
        cudaFree(d);
    }
    return NULL;
}

int main(void)
{
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    if (n > 4)
        n = 4;
    printf("devices>=2 %d\n", n >= 2);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b)
                pair(a, b);
    struct job jobs[4];
    pthread_t t[4];
    for (int d = 0; d < n; d++) {
        jobs[d] = (struct job){d, 0, cudaSuccess};
        if (pthread_create(&t[d], NULL, per_device, &jobs[d]))
            fail_now("pthread_create");
    }
    for (int d = 0; d < n; d++) {
        unsigned long long want = 0;
        pthread_join(t[d], NULL);
        for (int round = 0; round < 20; round++)
            want += want_sum(d + round, N);
        printf("thread of device %d: %s, sums ok %d\n", d, cudaGetErrorName(jobs[d].err), jobs[d].sum == want);
        EXPECT(jobs[d].err == cudaSuccess && jobs[d].sum == want, "device %d thread", d);
    }
    return finish();
}
