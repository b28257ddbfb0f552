// CUDA IPC between two processes: the program forks before any CUDA call
// (CUDA is not usable in a child forked after its parent initialised it);
// the parent allocates, exports a memory handle and an interprocess event
// (CU_EVENT_INTERPROCESS | DISABLE_TIMING) and passes both over a pipe; the
// child opens them, writes the memory with a kernel and records the event;
// the parent waits on the event and checks the bytes. A forged memory
// handle is refused. Only the parent prints.
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

struct handles {
    cudaIpcMemHandle_t mem;
    cudaIpcEventHandle_t ev;
};

static const size_t N = 1 << 20; // words
static const unsigned SEED = 0x5eed;

static int xread(int fd, void *p, size_t n)
{
    return read(fd, p, n) == (ssize_t)n ? 0 : -1;
}

// The child: exit 0 when every step worked, the step number otherwise.
static int child(int in, int out)
{
    handles h;
    char c = 0;
    if (xread(in, &h, sizeof(h)))
        return 1;
    unsigned *p = NULL;
    if (cudaIpcOpenMemHandle((void **)&p, h.mem, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess)
        return 2;
    cudaEvent_t ev;
    if (cudaIpcOpenEventHandle(&ev, h.ev) != cudaSuccess)
        return 3;
    // A forged handle: the parent's with its bytes changed.
    cudaIpcMemHandle_t forged = h.mem;
    for (size_t i = 0; i < sizeof(forged.reserved); i++)
        forged.reserved[i] ^= (char)0x5a;
    void *q = NULL;
    c = cudaIpcOpenMemHandle(&q, forged, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess ? 'r' : 'a';
    cudaGetLastError();
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return 4;
    fill<<<(unsigned)((N + 255) / 256), 256, 0, s>>>(p, N, SEED);
    if (cudaGetLastError() != cudaSuccess || cudaEventRecord(ev, s) != cudaSuccess)
        return 5;
    if (write(out, &c, 1) != 1) // recorded: the parent may wait on it
        return 6;
    if (xread(in, &c, 1)) // the parent is done with it
        return 7;
    if (cudaStreamSynchronize(s) != cudaSuccess || cudaIpcCloseMemHandle(p) != cudaSuccess ||
        cudaEventDestroy(ev) != cudaSuccess)
        return 8;
    return 0;
}

int main(void)
{
    int p2c[2], c2p[2];
    if (pipe(p2c) || pipe(c2p))
        fail_now("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        fail_now("fork");
    if (pid == 0) {
        close(p2c[1]);
        close(c2p[0]);
        _exit(child(p2c[0], c2p[1]));
    }
    close(p2c[0]); // the child's ends: its exit is then seen as end of file
    close(c2p[1]);

    unsigned *d;
    CK(cudaMalloc(&d, N * sizeof(unsigned)));
    CK(cudaMemset(d, 0, N * sizeof(unsigned)));
    cudaEvent_t ev;
    CK(cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming));
    handles h;
    CK(cudaIpcGetMemHandle(&h.mem, d));
    CK(cudaIpcGetEventHandle(&h.ev, ev));
    // An event without the interprocess flags is refused.
    cudaEvent_t plain;
    CK(cudaEventCreate(&plain));
    cudaIpcEventHandle_t eh;
    printf("plain event export refused: %d\n", cudaIpcGetEventHandle(&eh, plain) != cudaSuccess);
    cudaGetLastError();
    CK(cudaEventDestroy(plain));
    if (write(p2c[1], &h, sizeof(h)) != (ssize_t)sizeof(h))
        fail_now("write handles");
    char c = 0;
    if (xread(c2p[0], &c, 1)) {
        int st = 0;
        waitpid(pid, &st, 0);
        fail_now("child failed at step %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    printf("forged handle refused in the child: %d\n", c == 'r');
    EXPECT(c == 'r', "a forged IPC handle was accepted");
    // Wait for the child's work through its event, from another stream.
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamWaitEvent(s, ev, 0));
    std::vector<unsigned> host(N);
    CK(cudaMemcpyAsync(host.data(), d, N * sizeof(unsigned), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaEventSynchronize(ev));
    size_t bad = 0;
    for (size_t i = 0; i < N; i++)
        bad += host[i] != ((unsigned)i * 2654435761u ^ SEED);
    printf("child's kernel seen by the parent: bad=%zu checksum=%016llx\n", bad,
           (unsigned long long)fnv1a(host.data(), N * sizeof(unsigned)));
    EXPECT(bad == 0, "%zu words wrong", bad);
    if (write(p2c[1], "d", 1) != 1)
        fail_now("write done");
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child exit: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed");
    CK(cudaStreamDestroy(s));
    CK(cudaEventDestroy(ev));
    CK(cudaFree(d));
    return finish();
}
