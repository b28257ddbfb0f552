// Green contexts and the driver's error log: the device's SM resource split
// by count (two groups and the rest), a descriptor of one group, a green
// context over it, its resources and its context; a stream on it running a
// kernel (the store kernel's PTX, tests/lib/vt_kernels.h) while the green
// context's context is current, synchronised while the primary context is;
// events recorded in the green context and waited for by a primary-context
// stream, and the other way round, checked by the order of a copy and a
// later store. Then the error log: an invalid call, a dump to memory that
// holds its entry, two dumps to one file (appended or not), a callback.
// Prints SM counts: they are the driver's answers both natively and through
// vcuda.
#include <cuda.h>
#include "common.h"
#include "../../lib/vt_kernels.h"

#include <sys/stat.h>
#include <unistd.h>

#define N 256

static int g_cb_calls;

static void log_cb(void *data, CUlogLevel level, char *message, size_t length)
{
    (void)data;
    (void)level;
    (void)message;
    (void)length;
    g_cb_calls++;
}

static void store(CUfunction f, CUstream s, CUdeviceptr p, unsigned v)
{
    void *args[] = {&p, &v};
    CKD(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

int main(void)
{
    CKD(cuInit(0));
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));
    CUcontext pctx;
    CKD(cuDevicePrimaryCtxRetain(&pctx, dev));
    CKD(cuCtxSetCurrent(pctx));
    int sms = 0;
    CKD(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));

    // --- resources: the device's, a split, a descriptor ---
    CUdevResource res, grp[2], rem, r;
    CKD(cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM));
    printf("device SM resource: type %d, %u SMs (attribute agrees: %s), min partition %u, alignment %u\n",
           (int)res.type, res.sm.smCount, (int)res.sm.smCount == sms ? "yes" : "no", res.sm.minSmPartitionSize,
           res.sm.smCoscheduledAlignment);
    unsigned min = res.sm.minSmPartitionSize ? res.sm.minSmPartitionSize : 8;
    unsigned nb = 0;
    CKD(cuDevSmResourceSplitByCount(NULL, &nb, &res, NULL, 0, min));
    printf("groups of at least %u SMs possible: %u\n", min, nb);
    nb = 2;
    CKD(cuDevSmResourceSplitByCount(grp, &nb, &res, &rem, 0, min + 1));
    printf("split for %u SMs: %u groups of %u and %u SMs, %u remaining\n", min + 1, nb, grp[0].sm.smCount,
           nb > 1 ? grp[1].sm.smCount : 0, rem.sm.smCount);
    EXPECT(nb == 2, "two groups: %u", nb);
    EXPECT(grp[0].sm.smCount >= min + 1, "group of %u SMs", grp[0].sm.smCount);
    EXPECT(grp[0].sm.smCount + grp[1].sm.smCount + rem.sm.smCount == res.sm.smCount, "SMs add up");
    CKD_EXPECT(cuDeviceGetDevResource(dev, &r, CU_DEV_RESOURCE_TYPE_INVALID), CUDA_ERROR_INVALID_RESOURCE_TYPE);
    CUdevResourceDesc desc;
    CKD(cuDevResourceGenerateDesc(&desc, grp, 1));

    // --- a green context, its resources, its context, a stream ---
    CUgreenCtx g;
    CKD(cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CKD(cuGreenCtxGetDevResource(g, &r, CU_DEV_RESOURCE_TYPE_SM));
    printf("green context SMs: %u (the group's: %s)\n", r.sm.smCount,
           r.sm.smCount == grp[0].sm.smCount ? "yes" : "no");
    CUcontext gc, gc2;
    CKD(cuCtxFromGreenCtx(&gc, g));
    CKD(cuCtxFromGreenCtx(&gc2, g));
    printf("the same context twice: %s; not the primary context: %s\n", gc == gc2 ? "yes" : "no",
           gc != pctx ? "yes" : "no");
    CKD(cuCtxGetDevResource(gc, &r, CU_DEV_RESOURCE_TYPE_SM));
    printf("its context's SMs: %u\n", r.sm.smCount);
    unsigned long long gid = 0;
    CKD(cuGreenCtxGetId(g, &gid));
    printf("green context id nonzero: %s\n", gid ? "yes" : "no");
    CUstream gs;
    CKD_EXPECT(cuGreenCtxStreamCreate(&gs, g, CU_STREAM_DEFAULT, 0), CUDA_ERROR_INVALID_VALUE);
    CKD(cuGreenCtxStreamCreate(&gs, g, CU_STREAM_NON_BLOCKING, 0));
    CUgreenCtx sg = NULL;
    CUcontext sc = NULL;
    CKD(cuStreamGetGreenCtx(gs, &sg));
    CKD(cuStreamGetCtx(gs, &sc));
    printf("stream's green context: %s, its context: %s\n", sg == g ? "yes" : "no", sc == gc ? "yes" : "no");
    // cuStreamGetCtx_v2 of a green stream: the documentation says p_ctx is
    // the device's primary context, p_green_ctx the green context
    CUcontext sc2 = NULL;
    CUgreenCtx sg2 = NULL;
    CKD(cuStreamGetCtx_v2(gs, &sc2, &sg2));
    printf("v2: green context: %s; context: green's %s, primary %s\n", sg2 == g ? "yes" : "no",
           sc2 == gc ? "yes" : "no", sc2 == pctx ? "yes" : "no");

    // --- a kernel on the green stream, its context current ---
    CKD(cuCtxSetCurrent(gc));
    CUmodule mod;
    CUfunction f;
    CKD(cuModuleLoadData(&mod, vt_store_ptx));
    CKD(cuModuleGetFunction(&f, mod, VT_STORE_KERNEL));
    CUdeviceptr d;
    CKD(cuMemAlloc(&d, N * 4));
    CKD(cuMemsetD32Async(d, 0, N, gs));
    for (unsigned i = 0; i < N; i++)
        store(f, gs, d + 4 * i, i * 3 + 1);
    CUevent ev_green;
    CKD(cuEventCreate(&ev_green, CU_EVENT_DISABLE_TIMING));
    CKD(cuGreenCtxRecordEvent(g, ev_green));

    // --- the primary context waits for it, copies, and the green context waits for that ---
    CKD(cuCtxSetCurrent(pctx));
    CUstream ps;
    CKD(cuStreamCreate(&ps, CU_STREAM_NON_BLOCKING));
    CUdeviceptr d2;
    CKD(cuMemAlloc(&d2, N * 4));
    CKD(cuStreamWaitEvent(ps, ev_green, 0));
    CKD(cuMemcpyDtoDAsync(d2, d, N * 4, ps));
    CUevent ev_primary;
    CKD(cuEventCreate(&ev_primary, CU_EVENT_DISABLE_TIMING));
    CKD(cuEventRecord(ev_primary, ps));
    CKD(cuGreenCtxWaitEvent(g, ev_primary));
    store(f, gs, d, 12345); // after the copy: the copy saw 1
    CKD(cuStreamSynchronize(gs)); // the primary context is current
    CKD(cuStreamSynchronize(ps));
    unsigned h[N], h2[N];
    CKD(cuMemcpyDtoH(h2, d2, N * 4));
    CKD(cuMemcpyDtoH(h, d, N * 4));
    int bad = 0;
    for (unsigned i = 0; i < N; i++)
        bad += h2[i] != i * 3 + 1 || h[i] != (i ? i * 3 + 1 : 12345u);
    printf("green kernel results: %d wrong; copy ordered after them: %s; later store after the copy: %s\n", bad,
           h2[0] == 1 ? "yes" : "no", h[0] == 12345u ? "yes" : "no");
    EXPECT(bad == 0, "%d wrong results", bad);

    // --- teardown of the green context ---
    CKD(cuEventDestroy(ev_primary));
    CKD(cuStreamDestroy(ps));
    CKD(cuMemFree(d2));
    CKD(cuCtxSetCurrent(gc));
    CKD(cuMemFree(d));
    CKD(cuModuleUnload(mod));
    CKD(cuEventDestroy(ev_green));
    CKD(cuCtxSetCurrent(pctx));
    CKD(cuStreamDestroy(gs));
    CKD(cuGreenCtxDestroy(g));
    printf("green context destroyed\n");

    // --- the driver's error log ---
    CUlogIterator it = 0;
    CKD(cuLogsCurrent(&it, 0));
    printf("cuLogsCurrent with flags 1: %s\n", drv_err_name(cuLogsCurrent(&it, 1)));
    CKD_EXPECT(cuDeviceGetDevResource(dev, &r, CU_DEV_RESOURCE_TYPE_INVALID), CUDA_ERROR_INVALID_RESOURCE_TYPE);
    static char buf[32768];
    size_t size = sizeof buf;
    CKD(cuLogsDumpToMemory(&it, buf, &size, 0));
    printf("log entry after an invalid call: %s; names the call: %s\n", size > 0 ? "yes" : "no",
           strstr(buf, "cuDeviceGetDevResource") ? "yes" : "no");
    EXPECT(size > 0, "no log entry");
    size = sizeof buf;
    CKD(cuLogsDumpToMemory(&it, buf, &size, 0));
    printf("nothing new since: %s\n", size == 0 ? "yes" : "no");
    char path[] = "/tmp/vcuda-green-logs-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        fail_now("mkstemp");
    close(fd);
    CKD(cuLogsDumpToFile(NULL, path, 0));
    long s1 = file_size(path);
    CKD(cuLogsDumpToFile(NULL, path, 0));
    long s2 = file_size(path);
    printf("dump to file: written: %s; a second dump appends: %s\n", s1 > 0 ? "yes" : "no",
           s1 > 0 && s2 >= 2 * s1 ? "yes" : "no");
    unlink(path);
    CUlogsCallbackHandle cb;
    CKD(cuLogsRegisterCallback(log_cb, NULL, &cb));
    CKD_EXPECT(cuDeviceGetDevResource(dev, &r, CU_DEV_RESOURCE_TYPE_INVALID), CUDA_ERROR_INVALID_RESOURCE_TYPE);
    printf("callback called during the failing call: %s\n", g_cb_calls > 0 ? "yes" : "no");
    CKD(cuLogsUnregisterCallback(cb));
    g_cb_calls = 0;
    CKD_EXPECT(cuDeviceGetDevResource(dev, &r, CU_DEV_RESOURCE_TYPE_INVALID), CUDA_ERROR_INVALID_RESOURCE_TYPE);
    printf("after unregistering: %d calls\n", g_cb_calls);

    CKD(cuDevicePrimaryCtxRelease(dev));
    return finish();
}
