// POSIX file-descriptor shareable handles between two processes, as NCCL's
// cuMem transport and PyTorch's expandable segments use them: the program
// forks before any CUDA call; the parent makes a memory pool exportable as a
// descriptor (an allocation from it, exported as pool pointer data) and a
// cuMem allocation exportable as one, fills both, and sends both
// descriptors over a unix socket (SCM_RIGHTS); the child imports the pool
// and the pointer, and the allocation (reserved, mapped, made accessible),
// checks the parent's bytes and writes its own with a kernel; the parent
// checks those. Only the parent prints.
#include <cuda.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include "common.h"

__global__ void fill(unsigned *p, size_t n, unsigned seed)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (unsigned)i * 2654435761u ^ seed;
}

static const size_t N = 1 << 20; // words in each buffer
static const unsigned POOL_SEED = 0x9001, VMM_SEED = 0x9002, CHILD = 0x0c0c;

struct shared_info {
    cudaMemPoolPtrExportData ptr;
    size_t vmm_size;
};

static int send_fds(int s, const int *fds, int n, const void *buf, size_t len)
{
    char ctl[CMSG_SPACE(2 * sizeof(int))] = {};
    struct iovec iov = {(void *)buf, len};
    struct msghdr m = {};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = CMSG_SPACE(n * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(c), fds, n * sizeof(int));
    return sendmsg(s, &m, 0) == (ssize_t)len ? 0 : -1;
}

static int recv_fds(int s, int *fds, int n, void *buf, size_t len)
{
    char ctl[CMSG_SPACE(2 * sizeof(int))];
    struct iovec iov = {buf, len};
    struct msghdr m = {};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof(ctl);
    if (recvmsg(s, &m, MSG_WAITALL) != (ssize_t)len)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(n * sizeof(int)))
        return -1;
    memcpy(fds, CMSG_DATA(c), n * sizeof(int));
    return 0;
}

static bool words_are(const unsigned *d, unsigned seed)
{
    std::vector<unsigned> h(N);
    if (cudaMemcpy(h.data(), d, N * sizeof(unsigned), cudaMemcpyDeviceToHost) != cudaSuccess)
        return false;
    for (size_t i = 0; i < N; i++)
        if (h[i] != ((unsigned)i * 2654435761u ^ seed))
            return false;
    return true;
}

// The child: exit 0 when every step worked, the step number otherwise.
static int child(int s)
{
    int fds[2];
    shared_info info;
    if (recv_fds(s, fds, 2, &info, sizeof(info)))
        return 1;
    cudaMemPool_t pool;
    if (cudaMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fds[0], cudaMemHandleTypePosixFileDescriptor,
                                             0) != cudaSuccess)
        return 2;
    close(fds[0]);
    unsigned *p = NULL;
    if (cudaMemPoolImportPointer((void **)&p, pool, &info.ptr) != cudaSuccess)
        return 3;
    if (!words_are(p, POOL_SEED))
        return 4;
    fill<<<(unsigned)((N + 255) / 256), 256>>>(p, N, POOL_SEED ^ CHILD);
    if (cudaDeviceSynchronize() != cudaSuccess || cudaFree(p) != cudaSuccess)
        return 5;
    // The cuMem allocation: imported, mapped at an address of this process.
    CUmemGenericAllocationHandle h;
    if (cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fds[1], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return 6;
    close(fds[1]);
    CUdeviceptr va;
    CUmemAccessDesc acc = {};
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = 0;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (cuMemAddressReserve(&va, info.vmm_size, 0, 0, 0) || cuMemMap(va, info.vmm_size, 0, h, 0) ||
        cuMemSetAccess(va, info.vmm_size, &acc, 1))
        return 8;
    if (!words_are((unsigned *)va, VMM_SEED))
        return 9;
    fill<<<(unsigned)((N + 255) / 256), 256>>>((unsigned *)va, N, VMM_SEED ^ CHILD);
    if (cudaDeviceSynchronize() != cudaSuccess || cuMemUnmap(va, info.vmm_size) || cuMemRelease(h) ||
        cuMemAddressFree(va, info.vmm_size))
        return 10;
    char c = 'k';
    return write(s, &c, 1) == 1 ? 0 : 11;
}

int main(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        fail_now("socketpair");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        fail_now("fork");
    if (pid == 0) {
        close(sv[0]);
        _exit(child(sv[1]));
    }
    close(sv[1]);

    // A pool whose memory may be shared as a descriptor, and an allocation of it.
    cudaMemPoolProps pp = {};
    pp.allocType = cudaMemAllocationTypePinned;
    pp.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = 0;
    cudaMemPool_t pool;
    CK(cudaMemPoolCreate(&pool, &pp));
    unsigned *d;
    CK(cudaMallocFromPoolAsync((void **)&d, N * sizeof(unsigned), pool, 0));
    fill<<<(unsigned)((N + 255) / 256), 256>>>(d, N, POOL_SEED);
    CKL();
    CK(cudaDeviceSynchronize());
    int fds[2] = {-1, -1};
    shared_info info = {};
    CK(cudaMemPoolExportToShareableHandle(&fds[0], pool, cudaMemHandleTypePosixFileDescriptor, 0));
    CK(cudaMemPoolExportPointer(&info.ptr, d));
    // A pool made without the descriptor type cannot be exported as one.
    cudaMemPoolProps plain = pp;
    plain.handleTypes = cudaMemHandleTypeNone;
    cudaMemPool_t nofd;
    CK(cudaMemPoolCreate(&nofd, &plain));
    int bad = -1;
    printf("pool without the type: export refused: %d\n",
           cudaMemPoolExportToShareableHandle(&bad, nofd, cudaMemHandleTypePosixFileDescriptor, 0) != cudaSuccess);
    cudaGetLastError();
    CK(cudaMemPoolDestroy(nofd));

    // A cuMem allocation exportable as a descriptor, filled by a kernel.
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t g = 0;
    CKD(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    info.vmm_size = (N * sizeof(unsigned) + g - 1) / g * g;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    CUmemAccessDesc acc = {};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CKD(cuMemCreate(&h, info.vmm_size, &prop, 0));
    CKD(cuMemAddressReserve(&va, info.vmm_size, 0, 0, 0));
    CKD(cuMemMap(va, info.vmm_size, 0, h, 0));
    CKD(cuMemSetAccess(va, info.vmm_size, &acc, 1));
    fill<<<(unsigned)((N + 255) / 256), 256>>>((unsigned *)va, N, VMM_SEED);
    CKL();
    CK(cudaDeviceSynchronize());
    CKD(cuMemExportToShareableHandle(&fds[1], h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    printf("descriptors exported: %d\n", fds[0] >= 0 && fds[1] >= 0);

    if (send_fds(sv[0], fds, 2, &info, sizeof(info)))
        fail_now("send the descriptors");
    close(fds[0]);
    close(fds[1]);
    char c = 0;
    if (read(sv[0], &c, 1) != 1) {
        int st = 0;
        waitpid(pid, &st, 0);
        fail_now("child failed at step %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    bool pool_ok = words_are(d, POOL_SEED ^ CHILD), vmm_ok = words_are((unsigned *)va, VMM_SEED ^ CHILD);
    printf("child's kernel seen through the pool: %d, through the cuMem allocation: %d\n", pool_ok, vmm_ok);
    EXPECT(pool_ok, "the pool allocation does not hold the child's words");
    EXPECT(vmm_ok, "the cuMem allocation does not hold the child's words");
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child exit: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed");
    CKD(cuMemUnmap(va, info.vmm_size));
    CKD(cuMemRelease(h));
    CKD(cuMemAddressFree(va, info.vmm_size));
    CK(cudaFreeAsync(d, 0));
    CK(cudaDeviceSynchronize());
    CK(cudaMemPoolDestroy(pool));
    return finish();
}
