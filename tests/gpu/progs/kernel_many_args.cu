// A kernel with 24 scalar arguments of mixed sizes (1, 2, 4 and 8 bytes,
// signed, unsigned, float, double, pointers), so that the parameter buffer has
// padding in many places.
#include "common.h"

typedef long long ll;
typedef unsigned long long ull;

__global__ void many(char a1, short a2, int a3, ll a4, unsigned char a5, double a6, float a7,
                     unsigned short a8, ull a9, char a10, int a11, double a12, short a13,
                     float a14, ll a15, unsigned a16, char a17, double a18, int a19, short a20,
                     float a21, unsigned char a22, ll a23, double *out)
{
    int t = threadIdx.x;
    double v[23] = {(double)a1,  (double)a2,  (double)a3,  (double)a4,  (double)a5,  a6,
                    (double)a7,  (double)a8,  (double)a9,  (double)a10, (double)a11, a12,
                    (double)a13, (double)a14, (double)a15, (double)a16, (double)a17, a18,
                    (double)a19, (double)a20, (double)a21, (double)a22, (double)a23};
    if (t < 23)
        out[blockIdx.x * 23 + t] = v[t];
}

int main(void)
{
    const int blocks = 3;
    double *d;
    CK(cudaMalloc(&d, blocks * 23 * sizeof(double)));
    many<<<blocks, 32>>>((char)-1, (short)-300, 70000, -5000000000ll, (unsigned char)200, 0.5, 1.25f,
                         (unsigned short)60000, 18000000000000000000ull, (char)99, -123, -1e100,
                         (short)32767, -3.5f, 1ll << 40, 4000000000u, (char)-128, 6.02214076e23,
                         2147483647, (short)-32768, 1e-3f, (unsigned char)1, -1ll, d);
    CKL();
    double h[blocks * 23];
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    const double want[23] = {-1, -300, 70000, -5000000000.0, 200, 0.5, 1.25, 60000,
                             (double)18000000000000000000ull, 99, -123, -1e100, 32767, -3.5,
                             (double)(1ll << 40), 4000000000.0, -128, 6.02214076e23,
                             2147483647, -32768, (double)1e-3f, 1, -1};
    int bad = 0;
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < 23; i++)
            if (h[b * 23 + i] != want[i]) {
                bad++;
                if (b == 0)
                    note_failure("argument %d: %.17g, expected %.17g", i + 1, h[i], want[i]);
            }
    for (int i = 0; i < 23; i++)
        printf("a%d=%.17g\n", i + 1, h[i]);
    printf("bad=%d\n", bad);
    EXPECT(bad == 0, "%d argument values wrong", bad);
    CK(cudaFree(d));
    return finish();
}
