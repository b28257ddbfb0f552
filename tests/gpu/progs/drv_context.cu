// Driver-API contexts: cuCtxGetCurrent before/after, the primary context,
// cuCtxCreate/cuCtxDestroy, cuCtxPushCurrent/cuCtxPopCurrent stacking, memory
// per context, a thread with no current context, and the runtime adopting a
// context made current by the driver API.
#include <cuda.h>
#include <pthread.h>
#include "common.h"

static int check_ctx_memory(unsigned v, size_t n)
{
    CUdeviceptr d = 0;
    CKD(cuMemAlloc(&d, n * 4));
    CKD(cuMemsetD32(d, v, n));
    unsigned *h = (unsigned *)malloc(n * 4);
    CKD(cuMemcpyDtoH(h, d, n * 4));
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += h[i] != v;
    free(h);
    CKD(cuMemFree(d));
    return bad;
}

static CUcontext g_shared_ctx;
static int g_thread_null_before = -1, g_thread_same_after = -1, g_thread_bad = -1;

static void *thread_main(void *arg)
{
    (void)arg;
    CUcontext c = (CUcontext)1;
    CKD(cuCtxGetCurrent(&c));
    g_thread_null_before = c == NULL;
    CKD(cuCtxSetCurrent(g_shared_ctx));
    CKD(cuCtxGetCurrent(&c));
    g_thread_same_after = c == g_shared_ctx;
    g_thread_bad = check_ctx_memory(0xabcdef01u, 1 << 16);
    CKD(cuCtxSetCurrent(NULL));
    return NULL;
}

int main(void)
{
    CKD(cuInit(0));
    int ver = 0, n = 0;
    CKD(cuDriverGetVersion(&ver));
    CKD(cuDeviceGetCount(&n));
    printf("driver_ge_13000=%d devices_ge_1=%d\n", ver >= 13000, n >= 1);
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));

    CUcontext cur = (CUcontext)1;
    CKD(cuCtxGetCurrent(&cur));
    printf("current_null_at_start=%d\n", cur == NULL);
    EXPECT(cur == NULL, "a context is current before any was made");
    CKD_EXPECT(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);

    unsigned pflags = 99;
    int active = 99;
    CKD(cuDevicePrimaryCtxGetState(dev, &pflags, &active));
    printf("primary_active_at_start=%d\n", active);

    CUcontext prim = NULL;
    CKD(cuDevicePrimaryCtxRetain(&prim, dev));
    CKD(cuDevicePrimaryCtxGetState(dev, &pflags, &active));
    printf("primary_active_after_retain=%d\n", active);
    EXPECT(active == 1, "primary not active after retain");
    CKD(cuCtxPushCurrent(prim));
    CKD(cuCtxGetCurrent(&cur));
    printf("current_is_primary=%d\n", cur == prim);
    EXPECT(cur == prim, "primary not current after push");
    CUdevice cdev = -1;
    CKD(cuCtxGetDevice(&cdev));
    printf("ctx_device=%d\n", (int)cdev);
    int bad = check_ctx_memory(0x11111111u, 1 << 20);
    printf("primary_mem_bad=%d\n", bad);
    EXPECT(bad == 0, "primary context memory");

    // A new context goes on top of the stack.
    CUcontext c1 = NULL;
    CKD(cuCtxCreate(&c1, NULL, CU_CTX_SCHED_BLOCKING_SYNC, dev));
    CKD(cuCtxGetCurrent(&cur));
    printf("created_is_current=%d created_differs_from_primary=%d\n", cur == c1, c1 != prim);
    EXPECT(cur == c1 && c1 != prim, "cuCtxCreate did not make a new current context");
    unsigned cflags = 0;
    CKD(cuCtxGetFlags(&cflags));
    printf("created_sched_flags=%u\n", cflags & CU_CTX_SCHED_MASK);
    EXPECT((cflags & CU_CTX_SCHED_MASK) == CU_CTX_SCHED_BLOCKING_SYNC, "ctx flags %u", cflags);
    unsigned api = 0;
    CKD(cuCtxGetApiVersion(c1, &api));
    printf("api_version_ge_3020=%d\n", api >= 3020);
    bad = check_ctx_memory(0x22222222u, 3 << 18);
    printf("created_mem_bad=%d\n", bad);
    EXPECT(bad == 0, "created context memory");

    // The runtime adopts the driver's current context.
    void *rt_ptr = NULL;
    CK(cudaMalloc(&rt_ptr, 4096));
    CUcontext owner = NULL;
    CKD(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)rt_ptr));
    printf("runtime_alloc_in_current_ctx=%d\n", owner == c1);
    EXPECT(owner == c1, "runtime did not use the current context");
    CK(cudaMemset(rt_ptr, 0x5a, 4096));
    unsigned char hb[4096];
    CK(cudaMemcpy(hb, rt_ptr, sizeof hb, cudaMemcpyDeviceToHost));
    int badb = 0;
    for (int i = 0; i < 4096; i++)
        badb += hb[i] != 0x5a;
    EXPECT(badb == 0, "runtime memset in adopted context");
    CK(cudaFree(rt_ptr));

    CUcontext popped = NULL;
    CKD(cuCtxPopCurrent(&popped));
    CKD(cuCtxGetCurrent(&cur));
    printf("popped_is_created=%d current_is_primary_again=%d\n", popped == c1, cur == prim);
    EXPECT(popped == c1 && cur == prim, "pop did not restore the primary context");

    // Push it back, synchronize, pop, and destroy while not current.
    CKD(cuCtxPushCurrent(c1));
    CKD(cuCtxSynchronize());
    CKD(cuCtxPopCurrent(&popped));
    EXPECT(popped == c1, "second pop");
    CKD(cuCtxDestroy(c1));
    CKD(cuCtxGetCurrent(&cur));
    printf("after_destroy_current_is_primary=%d\n", cur == prim);

    // Destroying the current context pops it.
    CUcontext c2 = NULL;
    CKD(cuCtxCreate(&c2, NULL, 0, dev));
    bad = check_ctx_memory(0x33333333u, 1000);
    EXPECT(bad == 0, "third context memory");
    CKD(cuCtxDestroy(c2));
    CKD(cuCtxGetCurrent(&cur));
    printf("destroy_current_pops_to_primary=%d\n", cur == prim);
    EXPECT(cur == prim, "destroying the current context did not pop it");

    // Several contexts alive at once.
    CUcontext many[4];
    for (int i = 0; i < 4; i++) {
        CKD(cuCtxCreate(&many[i], NULL, 0, dev));
        bad = check_ctx_memory(0x40000000u + i, 5000);
        EXPECT(bad == 0, "context %d memory", i);
        CKD(cuCtxPopCurrent(&popped));
        EXPECT(popped == many[i], "pop of context %d", i);
    }
    for (int i = 3; i >= 0; i--)
        CKD(cuCtxDestroy(many[i]));

    // Another thread starts with no current context.
    g_shared_ctx = prim;
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0)
        fail_now("pthread_create");
    pthread_join(t, NULL);
    printf("thread_null_before=%d thread_set_ok=%d thread_mem_bad=%d\n", g_thread_null_before,
           g_thread_same_after, g_thread_bad);
    EXPECT(g_thread_null_before == 1 && g_thread_same_after == 1 && g_thread_bad == 0,
           "second thread context handling");

    CKD(cuCtxPopCurrent(&popped));
    EXPECT(popped == prim, "final pop");
    CKD(cuCtxGetCurrent(&cur));
    printf("current_null_at_end=%d\n", cur == NULL);
    CKD(cuDevicePrimaryCtxRelease(dev));
    return finish();
}
