// cudaPointerGetAttributes on device memory (start and interior), pinned host
// memory (cudaMallocHost, cudaHostAlloc), registered malloc'd memory, pageable
// memory, a stack address, NULL, and freed memory. Prints memory types and
// device ordinals only, never addresses; checks that the host/device pointers
// reported for device memory are consistent with the queried address.
#include "common.h"

static const char *type_name(cudaMemoryType t)
{
    switch (t) {
    case cudaMemoryTypeUnregistered: return "unregistered";
    case cudaMemoryTypeHost: return "host";
    case cudaMemoryTypeDevice: return "device";
    case cudaMemoryTypeManaged: return "managed";
    }
    return "other";
}

static void show(const char *what, const void *p, cudaMemoryType want)
{
    cudaPointerAttributes a;
    memset(&a, 0x55, sizeof a);
    cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) {
        printf("%s: rc=%s\n", what, cudaGetErrorName(e));
        note_failure("%s: %s", what, cudaGetErrorName(e));
        (void)cudaGetLastError();
        return;
    }
    int dev_ok = a.type == cudaMemoryTypeUnregistered ? 1 : a.device == 0;
    int dptr_ok = 1, hptr_ok = 1;
    if (a.type == cudaMemoryTypeDevice) {
        dptr_ok = a.devicePointer == p;
        hptr_ok = a.hostPointer == NULL;
    } else if (a.type == cudaMemoryTypeHost) {
        hptr_ok = a.hostPointer == p;
        dptr_ok = a.devicePointer != NULL;
    }
    printf("%s: rc=cudaSuccess type=%s device_ok=%d devptr_ok=%d hostptr_ok=%d\n", what,
           type_name(a.type), dev_ok, dptr_ok, hptr_ok);
    EXPECT(a.type == want, "%s: type %s, expected %s", what, type_name(a.type), type_name(want));
    EXPECT(dev_ok && dptr_ok && hptr_ok, "%s: inconsistent attributes", what);
}

int main(void)
{
    char *d;
    CK(cudaMalloc(&d, 1 << 20));
    show("device", d, cudaMemoryTypeDevice);
    show("device_interior", d + 12345, cudaMemoryTypeDevice);
    show("device_last_byte", d + (1 << 20) - 1, cudaMemoryTypeDevice);

    char *ph;
    CK(cudaMallocHost(&ph, 1 << 16));
    show("mallochost", ph, cudaMemoryTypeHost);
    show("mallochost_interior", ph + 999, cudaMemoryTypeHost);
    char *pa;
    CK(cudaHostAlloc(&pa, 1 << 16, cudaHostAllocPortable));
    show("hostalloc_portable", pa, cudaMemoryTypeHost);

    char *reg = (char *)malloc(1 << 20);
    CK(cudaHostRegister(reg, 1 << 20, cudaHostRegisterDefault));
    show("registered", reg, cudaMemoryTypeHost);
    CK(cudaHostUnregister(reg));
    show("unregistered_again", reg, cudaMemoryTypeUnregistered);

    char *pageable = (char *)malloc(4096);
    show("pageable", pageable, cudaMemoryTypeUnregistered);
    int on_stack = 0;
    show("stack", &on_stack, cudaMemoryTypeUnregistered);
    cudaPointerAttributes na;
    cudaError_t ne = cudaPointerGetAttributes(&na, NULL);
    printf("null: rc=%s type=%s\n", cudaGetErrorName(ne), ne == cudaSuccess ? type_name(na.type) : "-");
    (void)cudaGetLastError();

    char *gone;
    CK(cudaMalloc(&gone, 4096));
    CK(cudaFree(gone));
    cudaPointerAttributes a;
    cudaError_t e = cudaPointerGetAttributes(&a, gone);
    printf("freed: rc=%s type=%s\n", cudaGetErrorName(e), e == cudaSuccess ? type_name(a.type) : "-");
    (void)cudaGetLastError();

    CK(cudaFree(d));
    CK(cudaFreeHost(ph));
    CK(cudaFreeHost(pa));
    free(reg);
    free(pageable);
    return finish();
}
