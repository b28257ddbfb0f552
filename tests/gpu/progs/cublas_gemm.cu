// cuBLAS: SGEMM and DGEMM (column-major, with transposes, alpha/beta) against a
// CPU reference in double precision, a stream set on the handle, and
// cublasSaxpy/cublasSdot; prints whether the max relative error is below 1e-4.
#include <cublas_v2.h>
#include <math.h>
#include <vector>
#include "common.h"

#define CKB(call)                                                                 \
    do {                                                                          \
        cublasStatus_t st_ = (call);                                              \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                         \
            fail_now("line %d: %s -> cuBLAS status %d", __LINE__, #call, (int)st_); \
    } while (0)

template <typename T>
static double ref_gemm_err(bool ta, bool tb, int m, int n, int k, T alpha, const std::vector<T> &A, int lda,
                           const std::vector<T> &B, int ldb, T beta, const std::vector<T> &C0,
                           const std::vector<T> &C, int ldc)
{
    double max_rel = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0, mag = 0;
            for (int p = 0; p < k; p++) {
                double a = ta ? A[p + (size_t)i * lda] : A[i + (size_t)p * lda];
                double b = tb ? B[j + (size_t)p * ldb] : B[p + (size_t)j * ldb];
                s += a * b;
                mag += fabs(a * b);
            }
            double want = alpha * s + beta * (double)C0[i + (size_t)j * ldc];
            double scale = fabs(alpha) * mag + fabs(beta * (double)C0[i + (size_t)j * ldc]) + 1e-30;
            double rel = fabs((double)C[i + (size_t)j * ldc] - want) / scale;
            if (rel > max_rel)
                max_rel = rel;
        }
    return max_rel;
}

static float rnd(unsigned &s) { s = s * 1664525u + 1013904223u; return (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f; }

int main(void)
{
    cublasHandle_t hnd;
    CKB(cublasCreate(&hnd));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CKB(cublasSetStream(hnd, st));
    // Full-precision FP32 (no TF32) so that 1e-4 is a fair bound.
    CKB(cublasSetMathMode(hnd, CUBLAS_PEDANTIC_MATH));
    int ver = 0;
    CKB(cublasGetVersion(hnd, &ver));
    printf("cublas_version_positive=%d\n", ver > 0);

    const int M = 257, N = 130, K = 301;
    unsigned seed = 12345;
    struct Case { bool ta, tb; float alpha, beta; } cases[] = {
        {false, false, 1.0f, 0.0f}, {true, false, 0.5f, 1.0f}, {false, true, -1.5f, 0.25f}, {true, true, 2.0f, -1.0f}};
    for (int ci = 0; ci < 4; ci++) {
        Case c = cases[ci];
        int lda = c.ta ? K : M, ldb = c.tb ? N : K, ldc = M;
        int acols = c.ta ? M : K, bcols = c.tb ? K : N;
        // single
        std::vector<float> A((size_t)lda * acols), B((size_t)ldb * bcols), C((size_t)ldc * N), C0;
        for (auto &x : A) x = rnd(seed);
        for (auto &x : B) x = rnd(seed);
        for (auto &x : C) x = rnd(seed);
        C0 = C;
        float *dA, *dB, *dC;
        CK(cudaMalloc(&dA, A.size() * 4));
        CK(cudaMalloc(&dB, B.size() * 4));
        CK(cudaMalloc(&dC, C.size() * 4));
        CKB(cublasSetMatrixAsync(lda, acols, 4, A.data(), lda, dA, lda, st));
        CKB(cublasSetMatrixAsync(ldb, bcols, 4, B.data(), ldb, dB, ldb, st));
        CKB(cublasSetMatrixAsync(ldc, N, 4, C.data(), ldc, dC, ldc, st));
        CKB(cublasSgemm(hnd, c.ta ? CUBLAS_OP_T : CUBLAS_OP_N, c.tb ? CUBLAS_OP_T : CUBLAS_OP_N, M, N, K,
                        &c.alpha, dA, lda, dB, ldb, &c.beta, dC, ldc));
        CKB(cublasGetMatrixAsync(ldc, N, 4, dC, ldc, C.data(), ldc, st));
        CK(cudaStreamSynchronize(st));
        double es = ref_gemm_err<float>(c.ta, c.tb, M, N, K, c.alpha, A, lda, B, ldb, c.beta, C0, C, ldc);
        // double
        std::vector<double> Ad(A.begin(), A.end()), Bd(B.begin(), B.end()), Cd(C0.begin(), C0.end()), Cd0 = Cd;
        double *eA, *eB, *eC;
        double al = c.alpha, be = c.beta;
        CK(cudaMalloc(&eA, Ad.size() * 8));
        CK(cudaMalloc(&eB, Bd.size() * 8));
        CK(cudaMalloc(&eC, Cd.size() * 8));
        CK(cudaMemcpy(eA, Ad.data(), Ad.size() * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(eB, Bd.data(), Bd.size() * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(eC, Cd.data(), Cd.size() * 8, cudaMemcpyHostToDevice));
        CKB(cublasDgemm(hnd, c.ta ? CUBLAS_OP_T : CUBLAS_OP_N, c.tb ? CUBLAS_OP_T : CUBLAS_OP_N, M, N, K, &al,
                        eA, lda, eB, ldb, &be, eC, ldc));
        CK(cudaStreamSynchronize(st));
        CK(cudaMemcpy(Cd.data(), eC, Cd.size() * 8, cudaMemcpyDeviceToHost));
        double ed = ref_gemm_err<double>(c.ta, c.tb, M, N, K, al, Ad, lda, Bd, ldb, be, Cd0, Cd, ldc);
        printf("case %d ta=%d tb=%d sgemm_rel_err_lt_1e-4=%d dgemm_rel_err_lt_1e-10=%d\n", ci, c.ta, c.tb,
               es < 1e-4, ed < 1e-10);
        EXPECT(es < 1e-4, "sgemm case %d: relative error %g", ci, es);
        EXPECT(ed < 1e-10, "dgemm case %d: relative error %g", ci, ed);
        CK(cudaFree(dA));
        CK(cudaFree(dB));
        CK(cudaFree(dC));
        CK(cudaFree(eA));
        CK(cudaFree(eB));
        CK(cudaFree(eC));
    }

    // Level 1: saxpy and sdot on exactly representable values.
    const int n = 10000;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 16);
        y[i] = 1.0f;
    }
    float *dx, *dy;
    CK(cudaMalloc(&dx, n * 4));
    CK(cudaMalloc(&dy, n * 4));
    CKB(cublasSetVector(n, 4, x.data(), 1, dx, 1));
    CKB(cublasSetVector(n, 4, y.data(), 1, dy, 1));
    float two = 2.0f, dot = 0;
    CKB(cublasSaxpy(hnd, n, &two, dx, 1, dy, 1));
    CKB(cublasSdot(hnd, n, dx, 1, dy, 1, &dot));
    CK(cudaStreamSynchronize(st));
    double want = 0;
    for (int i = 0; i < n; i++)
        want += (double)x[i] * (2.0 * x[i] + 1.0);
    printf("sdot=%.1f\n", dot);
    EXPECT(fabs(dot - want) <= 1e-6 * want, "sdot %f, expected %f", dot, want);
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    CKB(cublasDestroy(hnd));
    CK(cudaStreamDestroy(st));
    return finish();
}
