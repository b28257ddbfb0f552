/* Shared helpers of the cuda-probe test programs: checked CUDA calls and log
 * marks. A mark is a line appended to $VC_PROBE_LOG so that the interposer's
 * events can be placed before/after main and attributed to program phases. */
#pragma once
#include <cuda_runtime.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void probe_mark(const char *what)
{
    const char *p = getenv("VC_PROBE_LOG");
    if (!p || !*p)
        return;
    int fd = open(p, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return;
    char buf[256];
    int n = snprintf(buf, sizeof buf, "VCP - %d - - MARK %s\n", (int)getpid(), what);
    if (write(fd, buf, (size_t)n) < 0) {
    }
    close(fd);
}

#define CK(call)                                                                                    \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "FAIL %s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #call,               \
                    cudaGetErrorString(e_), (int)e_);                                               \
            probe_mark("fail");                                                                     \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

#define REQUIRE(cond)                                                                               \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            fprintf(stderr, "FAIL %s:%d %s\n", __FILE__, __LINE__, #cond);                        \
            probe_mark("fail");                                                                     \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

static inline int probe_pass(const char *name)
{
    probe_mark("main-end");
    printf("PASS %s\n", name);
    return 0;
}
