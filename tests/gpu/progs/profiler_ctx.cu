// The profiler's start and stop, context limits (printf FIFO, malloc heap,
// stack) set and read back, events recorded and waited on for a whole
// context (cuCtxRecordEvent, cuCtxWaitEvent), and the potential block size
// asked of the driver (cuOccupancyMaxPotentialBlockSize, with and without a
// dynamic shared memory callback) against the runtime's own search
// (cudaOccupancyMaxPotentialBlockSize, ...VariableSMem).
#include <cuda.h>
#include <cuda_profiler_api.h>
#include "common.h"

__global__ void work(float *p, int n)
{
    extern __shared__ float s[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? p[i] : 0.f;
    __syncthreads();
    if (i < n)
        p[i] = s[threadIdx.x] * 2.f + 1.f;
}

static size_t smem_for(int block)
{
    return (size_t)block * sizeof(float);
}

struct smem_functor {
    __host__ __device__ size_t operator()(int block) const { return (size_t)block * sizeof(float); }
};

int main(void)
{
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    CK(cudaProfilerStart());
    CK(cudaProfilerStop());
    CK(cudaProfilerStop()); // stopping twice is no error
    printf("profiler start/stop: ok\n");

    // Limits: what is set is what the context reports (at least).
    struct {
        cudaLimit l;
        size_t v;
        const char *name;
    } lims[] = {{cudaLimitPrintfFifoSize, 4u << 20, "printf fifo"},
                {cudaLimitMallocHeapSize, 32u << 20, "malloc heap"},
                {cudaLimitStackSize, 4096, "stack"}};
    for (auto &L : lims) {
        size_t got = 0;
        CK(cudaDeviceSetLimit(L.l, L.v));
        CK(cudaDeviceGetLimit(&got, L.l));
        printf("%s limit read back >= set: %s\n", L.name, got >= L.v ? "yes" : "no");
        if (got < L.v)
            note_failure("%s limit %zu < %zu", L.name, got, L.v);
    }

    // Context events: record the context's work, wait for it from another stream.
    CUcontext ctx;
    CKD(cuCtxGetCurrent(&ctx));
    const int n = 1 << 16;
    float *d;
    CK(cudaMalloc(&d, n * sizeof(float)));
    CK(cudaMemset(d, 0, n * sizeof(float)));
    cudaEvent_t ev;
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    work<<<n / 256, 256, 256 * sizeof(float)>>>(d, n);
    CKL();
    CKD(cuCtxRecordEvent(ctx, (CUevent)ev));
    CKD(cuCtxWaitEvent(ctx, (CUevent)ev));
    CK(cudaEventSynchronize(ev));
    float h[4];
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    printf("after context event: %.1f %.1f\n", h[0], h[3]);
    if (h[0] != 1.f || h[3] != 1.f)
        note_failure("work result %f", h[0]);

    // Potential block size: the driver's (computed in the guest through
    // vcuda) and the runtime's agree.
    CUfunction f;
    CK(cudaGetFuncBySymbol((cudaFunction_t *)&f, (const void *)work));
    int dg = 0, db = 0, rg = 0, rb = 0;
    CKD(cuOccupancyMaxPotentialBlockSize(&dg, &db, f, NULL, 1024, 0));
    CK(cudaOccupancyMaxPotentialBlockSize(&rg, &rb, work, 1024, 0));
    printf("fixed smem: driver and runtime agree: %s\n", dg == rg && db == rb ? "yes" : "no");
    if (dg != rg || db != rb)
        note_failure("fixed smem: driver %d/%d runtime %d/%d", dg, db, rg, rb);
    CKD(cuOccupancyMaxPotentialBlockSize(&dg, &db, f, smem_for, 0, 512));
    CK(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&rg, &rb, work, smem_functor(), 512));
    printf("callback smem: driver and runtime agree: %s, block <= 512: %s\n", dg == rg && db == rb ? "yes" : "no",
           db <= 512 ? "yes" : "no");
    if (dg != rg || db != rb)
        note_failure("callback smem: driver %d/%d runtime %d/%d", dg, db, rg, rb);
    CK(cudaEventDestroy(ev));
    CK(cudaFree(d));
    return finish();
}
