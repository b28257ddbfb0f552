// cuFFT 1-D complex-to-complex forward FFT checked against a direct DFT.
#include "probe_common.h"
#include <cufft.h>
#include <math.h>

int main()
{
    probe_mark("main-start");
    const int n = 1000; // not a power of two on purpose
    cufftComplex *h = (cufftComplex *)malloc(n * sizeof(cufftComplex));
    srand(3);
    for (int i = 0; i < n; i++) {
        h[i].x = (float)rand() / RAND_MAX - 0.5f;
        h[i].y = (float)rand() / RAND_MAX - 0.5f;
    }
    cufftComplex *d;
    CK(cudaMalloc(&d, n * sizeof(cufftComplex)));
    CK(cudaMemcpy(d, h, n * sizeof(cufftComplex), cudaMemcpyHostToDevice));
    probe_mark("phase-plan");
    cufftHandle plan;
    cufftResult r = cufftPlan1d(&plan, n, CUFFT_C2C, 1);
    REQUIRE(r == CUFFT_SUCCESS);
    probe_mark("phase-exec");
    r = cufftExecC2C(plan, d, d, CUFFT_FORWARD);
    REQUIRE(r == CUFFT_SUCCESS);
    CK(cudaDeviceSynchronize());
    cufftComplex *o = (cufftComplex *)malloc(n * sizeof(cufftComplex));
    CK(cudaMemcpy(o, d, n * sizeof(cufftComplex), cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (int k = 0; k < n; k++) {
        double re = 0, im = 0;
        for (int j = 0; j < n; j++) {
            double a = -2.0 * M_PI * (double)j * k / n;
            re += h[j].x * cos(a) - h[j].y * sin(a);
            im += h[j].x * sin(a) + h[j].y * cos(a);
        }
        num += (o[k].x - re) * (o[k].x - re) + (o[k].y - im) * (o[k].y - im);
        den += re * re + im * im;
    }
    double rel = sqrt(num / den);
    printf("fft rel err %.3g\n", rel);
    REQUIRE(rel < 1e-5);
    probe_mark("phase-destroy");
    REQUIRE(cufftDestroy(plan) == CUFFT_SUCCESS);
    CK(cudaFree(d));
    return probe_pass("cufft");
}
