// Stream memory operations between two streams: cuStreamWaitValue32/64 on
// one stream holds its later work until cuStreamWriteValue32/64 on the other
// writes the value; a batch (cuStreamBatchMemOp) of writes, a barrier and a
// wait; stream attributes set, read back and copied (cudaStreamSetAttribute,
// cudaStreamGetAttribute, cudaStreamCopyAttributes). No kernels: the values
// are the memory operations' own, checked on the host.
#include <cuda.h>
#include "common.h"


int main(void)
{
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    uint32_t *d;
    CK(cudaMalloc(&d, 4096));
    CK(cudaMemset(d, 0, 4096));
    // The memset of device memory returns before it is done, on the legacy
    // stream that the non-blocking streams below do not wait for.
    CK(cudaDeviceSynchronize());
    CUdeviceptr base = (CUdeviceptr)d;
    cudaStream_t a, b;
    CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));

    // a: wait for flag >= 1, then write 7; b: raise the flag.
    CKD(cuStreamWaitValue32((CUstream)a, base, 1, CU_STREAM_WAIT_VALUE_GEQ));
    CKD(cuStreamWriteValue32((CUstream)a, base + 4, 7, 0));
    printf("held before the flag: %s\n", cudaStreamQuery(a) == cudaErrorNotReady ? "yes" : "no");
    CKD(cuStreamWriteValue32((CUstream)b, base, 1, 0));
    CK(cudaStreamSynchronize(a));
    uint32_t v32 = 0;
    CK(cudaMemcpy(&v32, d + 1, 4, cudaMemcpyDeviceToHost));
    printf("write after wait32: %u\n", v32);
    if (v32 != 7)
        note_failure("write after wait32 %u", v32);

    // 64-bit values, equality.
    CKD(cuStreamWaitValue64((CUstream)a, base + 8, 0x1122334455667788ull, CU_STREAM_WAIT_VALUE_EQ));
    CKD(cuStreamWriteValue64((CUstream)a, base + 16, 0xabcdef0123456789ull, 0));
    CKD(cuStreamWriteValue64((CUstream)b, base + 8, 0x1122334455667788ull, 0));
    CK(cudaStreamSynchronize(a));
    unsigned long long v64 = 0;
    CK(cudaMemcpy(&v64, d + 4, 8, cudaMemcpyDeviceToHost));
    printf("write after wait64: %llx\n", v64);
    if (v64 != 0xabcdef0123456789ull)
        note_failure("write after wait64 %llx", v64);

    // A batch: two writes, a barrier, a wait on what it wrote.
    CUstreamBatchMemOpParams ops[4];
    memset(ops, 0, sizeof ops);
    ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    ops[0].writeValue.address = base + 24;
    ops[0].writeValue.value = 5;
    ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    ops[1].writeValue.address = base + 32;
    ops[1].writeValue.value64 = 0x100000005ull;
    ops[2].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
    ops[2].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_GPU;
    ops[3].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    ops[3].waitValue.address = base + 24;
    ops[3].waitValue.value = 5;
    ops[3].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
    CKD(cuStreamBatchMemOp((CUstream)b, 4, ops, 0));
    CK(cudaStreamSynchronize(b));
    uint32_t host[10];
    CK(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost));
    printf("batch: %u %u %u\n", host[6], host[8], host[9]);
    if (host[6] != 5 || host[8] != 5 || host[9] != 1)
        note_failure("batch %u %u %u", host[6], host[8], host[9]);

    // Refusals: an address that is no allocation, an unknown operation.
    CUresult r = cuStreamWriteValue32((CUstream)a, (CUdeviceptr)0x1000, 1, 0);
    printf("write to no allocation: %s\n", drv_err_name(r));
    ops[0].operation = (CUstreamBatchMemOpType)99;
    r = cuStreamBatchMemOp((CUstream)a, 1, ops, 0);
    printf("unknown operation: %s\n", drv_err_name(r));

    // Stream attributes.
    cudaStreamAttrValue v, got;
    memset(&v, 0, sizeof v);
    v.syncPolicy = cudaSyncPolicySpin;
    CK(cudaStreamSetAttribute(a, cudaStreamAttributeSynchronizationPolicy, &v));
    memset(&got, 0, sizeof got);
    CK(cudaStreamGetAttribute(a, cudaStreamAttributeSynchronizationPolicy, &got));
    printf("sync policy: %d\n", (int)got.syncPolicy);
    int maxwin = 0;
    CK(cudaDeviceGetAttribute(&maxwin, cudaDevAttrMaxAccessPolicyWindowSize, 0));
    if (maxwin > 0) {
        memset(&v, 0, sizeof v);
        v.accessPolicyWindow.base_ptr = d;
        v.accessPolicyWindow.num_bytes = 4096;
        v.accessPolicyWindow.hitRatio = 0.5f;
        v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        CK(cudaStreamSetAttribute(a, cudaStreamAttributeAccessPolicyWindow, &v));
        CK(cudaStreamGetAttribute(a, cudaStreamAttributeAccessPolicyWindow, &got));
        printf("window: base %s, %zu bytes\n", got.accessPolicyWindow.base_ptr == (void *)d ? "ours" : "other",
               got.accessPolicyWindow.num_bytes);
    } else {
        printf("window: base ours, 4096 bytes\n");
    }
    CK(cudaStreamCopyAttributes(b, a));
    CK(cudaStreamGetAttribute(b, cudaStreamAttributeSynchronizationPolicy, &got));
    printf("copied sync policy: %d\n", (int)got.syncPolicy);
    CK(cudaStreamDestroy(a));
    CK(cudaStreamDestroy(b));
    CK(cudaFree(d));
    return finish();
}
