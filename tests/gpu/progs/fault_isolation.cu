// THE FAULT TEST. A kernel writes to an illegal address; the error
// (cudaErrorIllegalAddress, 700) must surface at the next synchronisation and
// stay (sticky) for later calls. Meanwhile a second process, forked before any CUDA call, does
// its own CUDA work (allocations, kernels, verification) before, during and
// after the parent's fault, and must be unaffected. It reports through a pipe;
// the parent prints the report and passes only if the child passed and the
// parent saw error 700. (Through vcuda these are two clients of one server.)
// Afterwards the parent tries cudaDeviceReset and new work, and reports what
// happened on stderr only: natively (H200, driver 580.159.04, compute mode
// Default) the reset succeeds but the next cudaMalloc returns
// cudaErrorDevicesUnavailable, even after the child has exited, so recovery
// within the faulted process is not something to judge.
#include <errno.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

__global__ void fill(int *p, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v ^ i;
}

__global__ void bad_write(int *bad, int v)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        *bad = v;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = (const char *)buf;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

// One round of child work: allocate, fill, verify, free. Returns wrong count, or -1 on a CUDA error.
static cudaError_t child_first_error = cudaSuccess;
static int child_err(cudaError_t e)
{
    if (e != cudaSuccess && child_first_error == cudaSuccess)
        child_first_error = e;
    return e != cudaSuccess;
}

static int child_round(int round)
{
    const int n = 1 << 18;
    int *d = NULL;
    if (child_err(cudaMalloc(&d, n * sizeof(int))))
        return -1;
    fill<<<n / 256, 256>>>(d, n, round * 7919);
    if (child_err(cudaGetLastError()))
        return -1;
    int *h = (int *)malloc(n * sizeof(int));
    if (child_err(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost))) {
        free(h);
        return -1;
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != ((round * 7919) ^ i);
    free(h);
    if (child_err(cudaFree(d)))
        return -1;
    return bad;
}

static void child_main(int rd, int wr)
{
    int bad = 0, cuda_errors = 0, before = 0, after = 0, got_signal = 0;
    // Before the fault: at least one round, then tell the parent we are running.
    int r = child_round(0);
    if (r < 0)
        cuda_errors++;
    else
        bad += r, before++;
    char c = 'R';
    write_all(wr, &c, 1);
    // Keep working while the parent faults, until it says it saw the fault (or 60 s pass).
    for (int round = 1; round < 100000; round++) {
        r = child_round(round);
        if (r < 0)
            cuda_errors++;
        else
            bad += r, before++;
        struct pollfd pf = {rd, POLLIN, 0};
        if (poll(&pf, 1, 0) > 0) {
            char m = 0;
            if (read(rd, &m, 1) == 1 && m == 'F')
                got_signal = 1;
            break;
        }
        if (round > 60000)
            break;
    }
    // After the fault: more rounds, including a larger allocation.
    for (int round = 0; round < 5; round++) {
        r = child_round(100000 + round);
        if (r < 0)
            cuda_errors++;
        else
            bad += r, after++;
    }
    void *big = NULL;
    if (child_err(cudaMalloc(&big, 256u << 20)) || child_err(cudaMemset(big, 1, 256u << 20)) ||
        child_err(cudaDeviceSynchronize()) || child_err(cudaFree(big)))
        cuda_errors++;
    char msg[256];
    int ok = bad == 0 && cuda_errors == 0 && got_signal && after == 5 && before >= 1;
    snprintf(msg, sizeof msg,
             "child_ok=%d child_saw_parent_signal=%d child_rounds_before_fault_ge_1=%d "
             "child_rounds_after_fault=%d child_bad=%d child_cuda_errors=%d child_first_error=%s\n",
             ok, got_signal, before >= 1, after, bad, cuda_errors, cudaGetErrorName(child_first_error));
    write_all(wr, msg, strlen(msg));
    close(wr);
    _exit(ok ? 0 : 1);
}

int main(void)
{
    int to_child[2], from_child[2];
    if (pipe(to_child) || pipe(from_child))
        fail_now("pipe");
    fflush(stdout);
    pid_t pid = fork(); // before any CUDA call
    if (pid < 0)
        fail_now("fork");
    if (pid == 0) {
        close(to_child[1]);
        close(from_child[0]);
        child_main(to_child[0], from_child[1]);
    }
    close(to_child[0]);
    close(from_child[1]);

    // Wait until the child is running CUDA work.
    struct pollfd pf = {from_child[0], POLLIN, 0};
    char c = 0;
    if (poll(&pf, 1, 60000) <= 0 || read(from_child[0], &c, 1) != 1 || c != 'R')
        note_failure("the child did not start its CUDA work");
    printf("child_started=%d\n", c == 'R');

    // The parent's own good work first.
    int *d;
    CK(cudaMalloc(&d, 1024 * sizeof(int)));
    fill<<<4, 256>>>(d, 1024, 5);
    CKL();
    CK(cudaDeviceSynchronize());

    // The fault: the launch itself succeeds, the error comes at synchronisation.
    bad_write<<<1, 32>>>((int *)(uintptr_t)0x10, 1);
    cudaError_t launch = cudaGetLastError();
    printf("launch=%s\n", cudaGetErrorName(launch));
    EXPECT(launch == cudaSuccess, "faulting launch itself failed: %s", cudaGetErrorName(launch));
    cudaError_t sync = cudaDeviceSynchronize();
    printf("sync=%s (%d)\n", cudaGetErrorName(sync), (int)sync);
    EXPECT(sync == cudaErrorIllegalAddress, "synchronisation returned %s, expected cudaErrorIllegalAddress",
           cudaGetErrorName(sync));
    // Sticky: later calls keep failing.
    cudaError_t peek = cudaPeekAtLastError();
    cudaError_t get1 = cudaGetLastError();
    cudaError_t get2 = cudaGetLastError();
    cudaError_t sync2 = cudaDeviceSynchronize();
    void *p2 = NULL;
    cudaError_t mal = cudaMalloc(&p2, 4096);
    int h[16];
    cudaError_t cpy = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    fill<<<1, 32>>>(d, 32, 1);
    cudaError_t relaunch = cudaGetLastError();
    printf("peek=%s get=%s get_again=%s sync_again=%s malloc=%s memcpy=%s relaunch=%s\n",
           cudaGetErrorName(peek), cudaGetErrorName(get1), cudaGetErrorName(get2), cudaGetErrorName(sync2),
           cudaGetErrorName(mal), cudaGetErrorName(cpy), cudaGetErrorName(relaunch));
    int sticky = peek == cudaErrorIllegalAddress && get1 == cudaErrorIllegalAddress &&
                 sync2 == cudaErrorIllegalAddress && mal == cudaErrorIllegalAddress &&
                 cpy == cudaErrorIllegalAddress;
    printf("sticky=%d\n", sticky);
    EXPECT(sticky, "the error was not sticky");

    // Tell the child the fault has happened; it goes on working, then reports.
    char f = 'F';
    if (write_all(to_child[1], &f, 1))
        note_failure("could not signal the child");

    // The child's report.
    char buf[512];
    size_t got = 0;
    for (;;) {
        struct pollfd q = {from_child[0], POLLIN, 0};
        if (poll(&q, 1, 60000) <= 0)
            break;
        ssize_t k = read(from_child[0], buf + got, sizeof buf - 1 - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    buf[got] = 0;
    int status = 0;
    waitpid(pid, &status, 0);
    printf("%s", got ? buf : "child report missing\n");
    int child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(buf, "child_ok=1") != NULL;
    printf("child_exit_ok=%d\n", child_ok);
    EXPECT(child_ok, "the child process was affected or failed");
    fflush(stdout);

    // Recovery attempt, reported on stderr only (not compared, not judged).
    {
        cudaError_t rst = cudaDeviceReset();
        int *d2 = NULL;
        cudaError_t m2 = cudaMalloc(&d2, 1024 * sizeof(int));
        cudaError_t k2 = cudaErrorUnknown;
        if (m2 == cudaSuccess) {
            fill<<<4, 256>>>(d2, 1024, 77);
            k2 = cudaDeviceSynchronize();
            cudaFree(d2);
        }
        fprintf(stderr, "recovery: reset=%s malloc=%s kernel=%s\n", cudaGetErrorName(rst),
                cudaGetErrorName(m2), cudaGetErrorName(k2));
    }
    return finish();
}
