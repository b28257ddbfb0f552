/* Shared helpers for the vcuda GPU test programs.
 *
 * Every program prints only deterministic text (values, checksums, counts,
 * booleans, error names), so that its output through vcuda can be compared
 * byte for byte with its native output, and prints "PASS NAME" or
 * "FAIL NAME: why" as its last line. TEST_NAME comes from the Makefile.
 */
#ifndef VCUDA_GPU_TEST_COMMON_H
#define VCUDA_GPU_TEST_COMMON_H

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TEST_NAME
#define TEST_NAME "unnamed"
#endif

static int g_failures = 0;
static char g_first_failure[512];

/* Ends the program at once with "FAIL NAME: why". */
static void fail_now(const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fflush(stdout);
    printf("FAIL %s: %s\n", TEST_NAME, why);
    fflush(stdout);
    exit(1);
}

/* Records a failed check; the program goes on and fails at finish(). */
static void note_failure(const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    printf("check failed: %s\n", why);
    if (g_failures++ == 0)
        snprintf(g_first_failure, sizeof g_first_failure, "%s", why);
}

/* Prints the verdict as the last line; returns the exit code for main. */
static int finish(void)
{
    fflush(stdout);
    if (g_failures) {
        printf("FAIL %s: %d check(s) failed, first: %s\n", TEST_NAME, g_failures,
               g_first_failure);
        fflush(stdout);
        return 1;
    }
    printf("PASS %s\n", TEST_NAME);
    fflush(stdout);
    return 0;
}

/* Every CUDA runtime call goes through CK; a failure ends the program. */
#define CK(call)                                                                  \
    do {                                                                          \
        cudaError_t ck_e_ = (call);                                               \
        if (ck_e_ != cudaSuccess)                                                 \
            fail_now("line %d: %s -> %s", __LINE__, #call, cudaGetErrorName(ck_e_)); \
    } while (0)

/* After every kernel launch. */
#define CKL() CK(cudaGetLastError())

/* A call that must return a given error code. */
#define CK_EXPECT(call, want)                                                     \
    do {                                                                          \
        cudaError_t ck_e_ = (call);                                               \
        if (ck_e_ != (want))                                                      \
            note_failure("line %d: %s -> %s, expected %s", __LINE__, #call,       \
                         cudaGetErrorName(ck_e_), cudaGetErrorName(want));        \
    } while (0)

#define EXPECT(cond, ...)                                                         \
    do {                                                                          \
        if (!(cond))                                                              \
            note_failure(__VA_ARGS__);                                            \
    } while (0)

#ifdef __cuda_cuda_h__ /* the driver API, for the programs that include cuda.h first */
static const char *drv_err_name(CUresult r)
{
    const char *s = NULL;
    if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s)
        return "CUDA_ERROR_<unknown>";
    return s;
}
#define CKD(call)                                                                 \
    do {                                                                          \
        CUresult ckd_r_ = (call);                                                 \
        if (ckd_r_ != CUDA_SUCCESS)                                               \
            fail_now("line %d: %s -> %s", __LINE__, #call, drv_err_name(ckd_r_)); \
    } while (0)
#define CKD_EXPECT(call, want)                                                    \
    do {                                                                          \
        CUresult ckd_r_ = (call);                                                 \
        if (ckd_r_ != (want))                                                     \
            note_failure("line %d: %s -> %s, expected %s", __LINE__, #call,       \
                         drv_err_name(ckd_r_), drv_err_name(want));               \
    } while (0)
#endif

/* FNV-1a over bytes: a deterministic checksum to print. */
static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* A deterministic byte pattern. */
static inline unsigned char pattern_byte(size_t i, unsigned seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return (unsigned char)x;
}

static void fill_pattern(void *p, size_t n, unsigned seed)
{
    unsigned char *b = (unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        b[i] = pattern_byte(i, seed);
}

#endif
