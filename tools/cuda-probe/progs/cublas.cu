// cuBLAS sgemm checked against a CPU product.
#include "probe_common.h"
#include <cublas_v2.h>
#include <math.h>

#define CB(call)                                                                                    \
    do {                                                                                            \
        cublasStatus_t s_ = (call);                                                                 \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                          \
            fprintf(stderr, "FAIL %s:%d %s -> cublas status %d\n", __FILE__, __LINE__, #call,     \
                    (int)s_);                                                                       \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

int main()
{
    probe_mark("main-start");
    const int m = 96, k = 64, n = 80;
    float *A = (float *)malloc(m * k * 4), *B = (float *)malloc(k * n * 4), *C = (float *)malloc(m * n * 4);
    srand(7);
    for (int i = 0; i < m * k; i++)
        A[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int i = 0; i < k * n; i++)
        B[i] = (float)rand() / RAND_MAX - 0.5f;
    float *dA, *dB, *dC;
    CK(cudaMalloc(&dA, m * k * 4));
    CK(cudaMalloc(&dB, k * n * 4));
    CK(cudaMalloc(&dC, m * n * 4));
    CK(cudaMemcpy(dA, A, m * k * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B, k * n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dC, 0xff, m * n * 4)); // poison
    probe_mark("phase-cublasCreate");
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH)); // true fp32
    probe_mark("phase-sgemm");
    float alpha = 1.0f, beta = 0.0f;
    // column-major: C(m x n) = A(m x k) * B(k x n)
    CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m, dB, k, &beta, dC, m));
    CK(cudaMemcpy(C, dC, m * n * 4, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double r = 0;
            for (int p = 0; p < k; p++)
                r += (double)A[i + p * m] * B[p + j * k];
            double d = C[i + j * m] - r;
            num += d * d;
            den += r * r;
        }
    double rel = sqrt(num / den);
    printf("sgemm rel err %.3g\n", rel);
    REQUIRE(rel < 1e-5);
    probe_mark("phase-cublasDestroy");
    CB(cublasDestroy(h));
    CK(cudaFree(dA));
    CK(cudaFree(dB));
    CK(cudaFree(dC));
    return probe_pass("cublas");
}
