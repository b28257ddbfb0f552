// NVIDIA's libraries over the guest libcuda.so.1, as far as the CI stand-in
// goes: every cuBLAS, cuFFT and cuRAND call must succeed (kernels are not
// run by the stand-in, so results are not checked here; the GPU suite's
// cublas_gemm, cufft_c2c and curand_host check them on a GPU). Prints one
// line per step and "PASS libs_smoke" at the end.
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cufft.h>
#include <curand.h>
#include <cuda_runtime.h>

static int failures;

#define STEP(name, expr, ok)                                                   \
    do {                                                                       \
        long long r_ = (long long)(expr);                                      \
        printf("%-40s %s\n", name, r_ == (ok) ? "ok" : "FAILED");             \
        if (r_ != (ok)) {                                                      \
            fprintf(stderr, "%s: status %lld\n", name, r_);                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

int main(void)
{
    const int n = 256;
    float *a, *b, *c, alpha = 1.0f, beta = 0.0f;
    double *da, *db, *dc, dalpha = 1.0, dbeta = 0.0;
    cufftComplex *sig;
    cublasHandle_t h;
    cufftHandle plan;
    curandGenerator_t gen;
    cudaStream_t s;

    STEP("cudaStreamCreate", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    STEP("cudaMalloc", cudaMalloc(&a, 3 * n * n * sizeof(float)), cudaSuccess);
    b = a + n * n;
    c = b + n * n;
    STEP("cudaMalloc (double)", cudaMalloc(&da, 3 * n * n * sizeof(double)), cudaSuccess);
    db = da + n * n;
    dc = db + n * n;

    STEP("cublasCreate", cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    STEP("cublasSetStream", cublasSetStream(h, s), CUBLAS_STATUS_SUCCESS);
    STEP("cublasSgemm", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, a, n, b, n, &beta, c, n),
         CUBLAS_STATUS_SUCCESS);
    STEP("cublasDgemm", cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &dalpha, da, n, db, n, &dbeta, dc, n),
         CUBLAS_STATUS_SUCCESS);
    STEP("cudaStreamSynchronize (cuBLAS)", cudaStreamSynchronize(s), cudaSuccess);
    STEP("cublasDestroy", cublasDestroy(h), CUBLAS_STATUS_SUCCESS);

    STEP("cudaMalloc (signal)", cudaMalloc(&sig, 64 * 1024 * sizeof(cufftComplex)), cudaSuccess);
    STEP("cufftPlan1d", cufftPlan1d(&plan, 1024, CUFFT_C2C, 64), CUFFT_SUCCESS);
    STEP("cufftSetStream", cufftSetStream(plan, s), CUFFT_SUCCESS);
    STEP("cufftExecC2C forward", cufftExecC2C(plan, sig, sig, CUFFT_FORWARD), CUFFT_SUCCESS);
    STEP("cufftExecC2C inverse", cufftExecC2C(plan, sig, sig, CUFFT_INVERSE), CUFFT_SUCCESS);
    STEP("cudaStreamSynchronize (cuFFT)", cudaStreamSynchronize(s), cudaSuccess);
    STEP("cufftDestroy", cufftDestroy(plan), CUFFT_SUCCESS);

    STEP("curandCreateGenerator", curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10),
         CURAND_STATUS_SUCCESS);
    STEP("curandSetStream", curandSetStream(gen, s), CURAND_STATUS_SUCCESS);
    STEP("curandGenerateUniform", curandGenerateUniform(gen, a, n * n), CURAND_STATUS_SUCCESS);
    STEP("cudaStreamSynchronize (cuRAND)", cudaStreamSynchronize(s), cudaSuccess);
    STEP("curandDestroyGenerator", curandDestroyGenerator(gen), CURAND_STATUS_SUCCESS);

    STEP("cudaFree", cudaFree(a), cudaSuccess);
    STEP("cudaFree (double)", cudaFree(da), cudaSuccess);
    STEP("cudaFree (signal)", cudaFree(sig), cudaSuccess);
    STEP("cudaStreamDestroy", cudaStreamDestroy(s), cudaSuccess);
    if (failures) {
        printf("FAIL libs_smoke: %d step(s) failed\n", failures);
        return 1;
    }
    printf("PASS libs_smoke\n");
    return 0;
}
