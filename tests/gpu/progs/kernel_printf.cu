// printf from kernels. The program captures its own stdout (dup2 onto a
// temporary file) around the launches, checks the captured text against the
// expected text, and then prints it. Only one thread per block prints, and the
// lines from different blocks are sorted, so the output is deterministic.
// The output must be there when a device, a stream or an event
// synchronisation returns (vcuda's server answers a finished stream without
// the driver's synchronisation only where no code may print).
#include <unistd.h>
#include <string>
#include <vector>
#include <algorithm>
#include "common.h"

__global__ void one_printer(int a, double d, const char *unused)
{
    (void)unused;
    if (threadIdx.x == 5 && blockIdx.x == 0) {
        printf("kernel says: int=%d neg=%d hex=%x\n", a, -a, 0xbeef);
        printf("kernel says: double=%.6f sci=%.3e\n", d, d * 1e10);
        printf("kernel says: char=%c str=%s ll=%lld\n", 'Q', "literal", -1234567890123ll);
    }
}

__global__ void per_block(void)
{
    if (threadIdx.x == 0)
        printf("block %03d of %d: %d\n", (int)blockIdx.x, (int)gridDim.x, (int)(blockIdx.x * blockIdx.x));
}

static std::string capture_begin_end(int begin, int *saved, FILE **tf)
{
    fflush(stdout);
    if (begin) {
        *tf = tmpfile();
        if (!*tf)
            fail_now("tmpfile");
        *saved = dup(1);
        if (*saved < 0 || dup2(fileno(*tf), 1) < 0)
            fail_now("dup2");
        return "";
    }
    if (dup2(*saved, 1) < 0)
        fail_now("dup2 back");
    close(*saved);
    std::string s;
    rewind(*tf);
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, *tf)) > 0)
        s.append(buf, k);
    fclose(*tf);
    return s;
}

int main(void)
{
    size_t fifo = 0;
    CK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 4 << 20));
    CK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
    printf("printf_fifo_ge_4MiB=%d\n", fifo >= (4u << 20));

    int saved = -1;
    FILE *tf = NULL;
    capture_begin_end(1, &saved, &tf);
    one_printer<<<2, 64>>>(4242, 2.718281828459045, NULL);
    cudaError_t e1 = cudaGetLastError();
    cudaError_t e2 = cudaDeviceSynchronize();
    std::string got = capture_begin_end(0, &saved, &tf);
    CK(e1);
    CK(e2);

    char want[1024];
    snprintf(want, sizeof want,
             "kernel says: int=%d neg=%d hex=%x\n"
             "kernel says: double=%.6f sci=%.3e\n"
             "kernel says: char=%c str=%s ll=%lld\n",
             4242, -4242, 0xbeef, 2.718281828459045, 2.718281828459045 * 1e10, 'Q', "literal",
             -1234567890123ll);
    printf("--- captured from one thread ---\n%s--- end ---\n", got.c_str());
    EXPECT(got == want, "device printf text differs from the expected text");

    capture_begin_end(1, &saved, &tf);
    per_block<<<40, 32>>>();
    e1 = cudaGetLastError();
    e2 = cudaDeviceSynchronize();
    got = capture_begin_end(0, &saved, &tf);
    CK(e1);
    CK(e2);
    std::vector<std::string> lines;
    size_t pos = 0;
    while (pos < got.size()) {
        size_t nl = got.find('\n', pos);
        if (nl == std::string::npos)
            nl = got.size();
        lines.push_back(got.substr(pos, nl - pos));
        pos = nl + 1;
    }
    std::sort(lines.begin(), lines.end());
    int bad = lines.size() != 40;
    printf("--- captured from 40 blocks, sorted ---\n");
    for (size_t i = 0; i < lines.size(); i++) {
        char w[128];
        snprintf(w, sizeof w, "block %03d of %d: %d", (int)i, 40, (int)(i * i));
        bad += lines[i] != w;
        printf("%s\n", lines[i].c_str());
    }
    printf("--- end ---\nlines=%zu bad=%d\n", lines.size(), bad);
    EXPECT(bad == 0, "per-block printf lines wrong");

    // A stream's synchronisation, then an event's, flush it too.
    cudaStream_t s;
    cudaEvent_t ev;
    CK(cudaStreamCreate(&s));
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    for (int k = 0; k < 2; k++) {
        capture_begin_end(1, &saved, &tf);
        one_printer<<<1, 64, 0, s>>>(7 + k, 0.5 * (k + 1), NULL);
        e1 = cudaGetLastError();
        if (k == 0) {
            e2 = cudaStreamSynchronize(s);
        } else {
            e2 = cudaEventRecord(ev, s);
            if (e2 == cudaSuccess)
                e2 = cudaEventSynchronize(ev);
        }
        got = capture_begin_end(0, &saved, &tf);
        CK(e1);
        CK(e2);
        snprintf(want, sizeof want,
                 "kernel says: int=%d neg=%d hex=%x\n"
                 "kernel says: double=%.6f sci=%.3e\n"
                 "kernel says: char=%c str=%s ll=%lld\n",
                 7 + k, -(7 + k), 0xbeef, 0.5 * (k + 1), 0.5 * (k + 1) * 1e10, 'Q', "literal", -1234567890123ll);
        printf("--- captured at %s synchronisation ---\n%s--- end ---\n", k ? "an event's" : "a stream's",
               got.c_str());
        EXPECT(got == want, "device printf not flushed by the stream's or event's synchronisation");
    }
    CK(cudaEventDestroy(ev));
    CK(cudaStreamDestroy(s));
    return finish();
}
