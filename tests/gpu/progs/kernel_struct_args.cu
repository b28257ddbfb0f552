// Structs passed by value: mixed types with alignment padding, nested structs,
// an over-aligned struct, a struct holding a device pointer, arrays in structs.
#include "common.h"

struct Inner {
    short s;   // 0
    double d;  // 8
};
struct Mixed {
    char c;        // 0
    int i;         // 4
    double d;      // 8
    char c2;       // 16
    Inner in;      // 24
    float f[3];    // 40
    long long ll;  // 56
    unsigned char tail; // 64
};
struct alignas(16) Over {
    int a;
    float4 v;
};
struct WithPtr {
    int n;
    int *out;
    unsigned short tag;
};

__global__ void take_structs(Mixed m, char gap, Over o, WithPtr w, double *res)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    res[0] = m.c;
    res[1] = m.i;
    res[2] = m.d;
    res[3] = m.c2;
    res[4] = m.in.s;
    res[5] = m.in.d;
    res[6] = m.f[0] + m.f[1] + m.f[2];
    res[7] = (double)m.ll;
    res[8] = m.tail;
    res[9] = gap;
    res[10] = o.a;
    res[11] = o.v.x + o.v.y + o.v.z + o.v.w;
    res[12] = w.n;
    res[13] = w.tag;
    for (int i = 0; i < w.n; i++)
        w.out[i] = i * i + w.tag;
    res[14] = sizeof(Mixed);
    res[15] = sizeof(Over);
}

int main(void)
{
    Mixed m;
    memset(&m, 0xcc, sizeof m); // padding garbage must not matter
    m.c = -5;
    m.i = 123456789;
    m.d = 3.141592653589793;
    m.c2 = 'z';
    m.in.s = -32000;
    m.in.d = -2.5e-300;
    m.f[0] = 1.5f;
    m.f[1] = 2.25f;
    m.f[2] = -0.125f;
    m.ll = -9000000000000000001ll;
    m.tail = 250;
    Over o;
    o.a = 42;
    o.v = make_float4(1.f, 2.f, 4.f, 8.f);
    int *dout;
    CK(cudaMalloc(&dout, 64 * sizeof(int)));
    WithPtr w = {64, dout, 65535};
    double *dres;
    CK(cudaMalloc(&dres, 16 * sizeof(double)));
    CK(cudaMemset(dres, 0, 16 * sizeof(double)));
    take_structs<<<2, 64>>>(m, (char)77, o, w, dres);
    CKL();
    double res[16];
    int out[64];
    CK(cudaMemcpy(res, dres, sizeof res, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    const double want[16] = {-5, 123456789, 3.141592653589793, 'z', -32000, -2.5e-300, 3.625,
                             (double)-9000000000000000001ll, 250, 77, 42, 15, 64, 65535,
                             (double)sizeof(Mixed), (double)sizeof(Over)};
    for (int i = 0; i < 16; i++) {
        printf("field %d = %.17g\n", i, res[i]);
        EXPECT(res[i] == want[i], "field %d: %.17g, expected %.17g", i, res[i], want[i]);
    }
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += out[i] != i * i + 65535;
    printf("ptr_writes_bad=%d\n", bad);
    EXPECT(bad == 0, "writes through the struct's pointer");
    printf("sizeof_Mixed=%zu sizeof_Over=%zu\n", sizeof(Mixed), sizeof(Over));
    CK(cudaFree(dout));
    CK(cudaFree(dres));
    return finish();
}
