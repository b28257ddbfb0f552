// Driver-API JIT linking: two PTX modules (one kernel calling an extern
// device function defined in the other, nvcc -ptx -rdc=true) linked with
// cuLinkCreate/cuLinkAddData/cuLinkComplete with info and error log buffers
// (printed only as empty/non-empty), the linked cubin loaded and launched,
// results checked against the CPU; then cuLinkAddFile and cuModuleLoad of
// files this program writes to /tmp, and a link that must fail (an undefined
// function) with a non-empty error log.
#include <cuda.h>
#include <unistd.h>
#include "common.h"
#include "jit_caller_ptx.h" // jit_caller_ptx[], NUL-terminated
#include "jit_callee_ptx.h" // jit_callee_ptx[]

static const int N = 4096;

static int run(CUmodule mod)
{
    CUfunction f;
    CKD(cuModuleGetFunction(&f, mod, "jit_apply"));
    int *h = (int *)malloc(N * sizeof(int)), *r = (int *)malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        h[i] = i - 1000;
    CUdeviceptr din, dout;
    CKD(cuMemAlloc(&din, N * sizeof(int)));
    CKD(cuMemAlloc(&dout, N * sizeof(int)));
    CKD(cuMemcpyHtoD(din, h, N * sizeof(int)));
    int n = N;
    void *args[] = {&dout, &din, &n};
    CKD(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CKD(cuCtxSynchronize());
    CKD(cuMemcpyDtoH(r, dout, N * sizeof(int)));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += r[i] != 3 * h[i] - 7 + 1;
    CKD(cuMemFree(din));
    CKD(cuMemFree(dout));
    free(h);
    free(r);
    return bad;
}

static const char *state(const char *log)
{
    return log[0] ? "non-empty" : "empty";
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f))
        fail_now("cannot write %s", path);
}

int main(void)
{
    CKD(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CKD(cuDeviceGet(&dev, 0));
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));

    static char info[8192], err[8192];
    CUjit_option o[6] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE, CU_JIT_WALL_TIME};
    void *v[6] = {info, (void *)(uintptr_t)sizeof(info), err, (void *)(uintptr_t)sizeof(err), (void *)(uintptr_t)1,
                  NULL};
    CUlinkState ls;
    CKD(cuLinkCreate(6, o, v, &ls));
    CKD(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)jit_caller_ptx, sizeof(jit_caller_ptx), "caller.ptx", 0,
                      NULL, NULL));
    CKD(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)jit_callee_ptx, sizeof(jit_callee_ptx), "callee.ptx", 0,
                      NULL, NULL));
    void *cubin;
    size_t size;
    CKD(cuLinkComplete(ls, &cubin, &size));
    printf("linked: cubin %s, info log %s, error log %s\n", size > 0 ? "non-empty" : "empty", state(info),
           state(err));
    float ms;
    memcpy(&ms, &v[5], sizeof(ms));
    printf("wall time %s\n", ms >= 0.0f ? "reported" : "negative");
    // The image stays valid until cuLinkDestroy: load it, and keep a copy for a file.
    CUmodule mod;
    CKD(cuModuleLoadData(&mod, cubin));
    int bad = run(mod);
    printf("linked kernel: %d mismatches\n", bad);
    char cubin_path[] = "/tmp/vcuda-jit-link-XXXXXX";
    int fd = mkstemp(cubin_path);
    if (fd < 0)
        fail_now("mkstemp");
    close(fd);
    write_file(cubin_path, cubin, size);
    CKD(cuModuleUnload(mod));
    CKD(cuLinkDestroy(ls));

    // cuModuleLoad of the cubin file this program wrote.
    CKD(cuModuleLoad(&mod, cubin_path));
    int bad2 = run(mod);
    printf("cuModuleLoad(cubin file): %d mismatches\n", bad2);
    CKD(cuModuleUnload(mod));
    unlink(cubin_path);
    CUresult r = cuModuleLoad(&mod, cubin_path);
    printf("cuModuleLoad(missing file): %s\n", r == CUDA_ERROR_FILE_NOT_FOUND ? "CUDA_ERROR_FILE_NOT_FOUND" : "other");

    // cuLinkAddFile: the callee as a PTX file.
    char ptx_path[] = "/tmp/vcuda-jit-ptx-XXXXXX";
    fd = mkstemp(ptx_path);
    if (fd < 0)
        fail_now("mkstemp");
    close(fd);
    write_file(ptx_path, jit_callee_ptx, sizeof(jit_callee_ptx) - 1);
    CKD(cuLinkCreate(0, NULL, NULL, &ls));
    CKD(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)jit_caller_ptx, sizeof(jit_caller_ptx), "caller.ptx", 0,
                      NULL, NULL));
    CKD(cuLinkAddFile(ls, CU_JIT_INPUT_PTX, ptx_path, 0, NULL, NULL));
    CKD(cuLinkComplete(ls, &cubin, &size));
    CKD(cuModuleLoadData(&mod, cubin));
    int bad3 = run(mod);
    printf("cuLinkAddFile: %d mismatches\n", bad3);
    CKD(cuModuleUnload(mod));
    CKD(cuLinkDestroy(ls));
    unlink(ptx_path);

    // The caller alone: jit_scale is undefined, the link fails with a log.
    memset(err, 0, sizeof(err));
    v[1] = (void *)(uintptr_t)sizeof(info);
    v[3] = (void *)(uintptr_t)sizeof(err);
    CKD(cuLinkCreate(4, o, v, &ls));
    CKD(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)jit_caller_ptx, sizeof(jit_caller_ptx), "caller.ptx", 0,
                      NULL, NULL));
    r = cuLinkComplete(ls, &cubin, &size);
    printf("unresolved link: %s, error log %s\n", r == CUDA_SUCCESS ? "succeeded" : "failed", state(err));
    CKD(cuLinkDestroy(ls));

    CKD(cuDevicePrimaryCtxRelease(dev));
    if (bad || bad2 || bad3 || r == CUDA_SUCCESS || !err[0])
        fail_now("jit link results wrong");
    printf("PASS %s\n", TEST_NAME);
    return 0;
}
