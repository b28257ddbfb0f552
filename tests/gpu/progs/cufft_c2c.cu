// cuFFT: 1-D complex-to-complex forward then inverse (single and double
// precision, one plan with a batch), checked against a CPU DFT of a few bins
// and for the round trip; prints booleans only.
#include <cufft.h>
#include <math.h>
#include <vector>
#include "common.h"

#define CKF(call)                                                                 \
    do {                                                                          \
        cufftResult r_ = (call);                                                  \
        if (r_ != CUFFT_SUCCESS)                                                  \
            fail_now("line %d: %s -> cuFFT result %d", __LINE__, #call, (int)r_); \
    } while (0)

int main(void)
{
    const int N = 4096, BATCH = 3;
    std::vector<cufftComplex> h(N * BATCH), back(N * BATCH), freq(N * BATCH);
    for (int b = 0; b < BATCH; b++)
        for (int i = 0; i < N; i++) {
            h[b * N + i].x = (float)(sin(0.01 * i * (b + 1)) + 0.5 * cos(0.37 * i));
            h[b * N + i].y = (float)(0.25 * sin(0.05 * i + b));
        }
    cufftComplex *d;
    CK(cudaMalloc(&d, sizeof(cufftComplex) * N * BATCH));
    CK(cudaMemcpy(d, h.data(), sizeof(cufftComplex) * N * BATCH, cudaMemcpyHostToDevice));
    cufftHandle plan;
    CKF(cufftPlan1d(&plan, N, CUFFT_C2C, BATCH));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    CKF(cufftSetStream(plan, s));
    CKF(cufftExecC2C(plan, d, d, CUFFT_FORWARD));
    CK(cudaMemcpyAsync(freq.data(), d, sizeof(cufftComplex) * N * BATCH, cudaMemcpyDeviceToHost, s));
    CKF(cufftExecC2C(plan, d, d, CUFFT_INVERSE));
    CK(cudaMemcpyAsync(back.data(), d, sizeof(cufftComplex) * N * BATCH, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));

    // A few bins against a direct DFT in double precision.
    double max_bin_err = 0, norm = 0;
    const int bins[] = {0, 1, 7, 100, 1000, 2048, 4095};
    for (int b = 0; b < BATCH; b++)
        for (int k : bins) {
            double re = 0, im = 0;
            for (int i = 0; i < N; i++) {
                double a = -2.0 * M_PI * (double)k * i / N;
                re += h[b * N + i].x * cos(a) - h[b * N + i].y * sin(a);
                im += h[b * N + i].x * sin(a) + h[b * N + i].y * cos(a);
            }
            double e = hypot(freq[b * N + k].x - re, freq[b * N + k].y - im);
            if (e > max_bin_err)
                max_bin_err = e;
        }
    for (int i = 0; i < N * BATCH; i++)
        norm += hypot(h[i].x, h[i].y);
    double rt_err = 0;
    for (int i = 0; i < N * BATCH; i++) {
        double e = hypot(back[i].x / N - h[i].x, back[i].y / N - h[i].y);
        if (e > rt_err)
            rt_err = e;
    }
    printf("c2c_bins_match=%d\n", max_bin_err < 1e-2);
    printf("c2c_round_trip_err_lt_1e-4=%d\n", rt_err < 1e-4);
    EXPECT(max_bin_err < 1e-2, "forward FFT bins off by %g", max_bin_err);
    EXPECT(rt_err < 1e-4, "round trip error %g", rt_err);
    CKF(cufftDestroy(plan));

    // Double precision, out of place.
    const int M = 1000; // not a power of two
    std::vector<cufftDoubleComplex> hd(M), bd(M);
    for (int i = 0; i < M; i++) {
        hd[i].x = cos(0.1 * i) + (i % 7) * 0.01;
        hd[i].y = sin(0.3 * i);
    }
    cufftDoubleComplex *din, *dout;
    CK(cudaMalloc(&din, sizeof(cufftDoubleComplex) * M));
    CK(cudaMalloc(&dout, sizeof(cufftDoubleComplex) * M));
    CK(cudaMemcpy(din, hd.data(), sizeof(cufftDoubleComplex) * M, cudaMemcpyHostToDevice));
    cufftHandle pz;
    CKF(cufftPlan1d(&pz, M, CUFFT_Z2Z, 1));
    CKF(cufftExecZ2Z(pz, din, dout, CUFFT_FORWARD));
    CKF(cufftExecZ2Z(pz, dout, din, CUFFT_INVERSE));
    CK(cudaMemcpy(bd.data(), din, sizeof(cufftDoubleComplex) * M, cudaMemcpyDeviceToHost));
    double zerr = 0;
    for (int i = 0; i < M; i++) {
        double e = hypot(bd[i].x / M - hd[i].x, bd[i].y / M - hd[i].y);
        if (e > zerr)
            zerr = e;
    }
    printf("z2z_round_trip_err_lt_1e-12=%d\n", zerr < 1e-12);
    EXPECT(zerr < 1e-12, "double round trip error %g", zerr);
    CKF(cufftDestroy(pz));
    CK(cudaFree(d));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    CK(cudaStreamDestroy(s));
    (void)norm;
    return finish();
}
