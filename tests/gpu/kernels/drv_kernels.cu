// Kernels that the driver-API test programs load themselves, from a fatbin
// (nvcc -fatbin) or from PTX (nvcc -ptx), embedded by the Makefile with bin2c.
// Not a test program.

struct Mixed {
    char c;     // offset 0
    double d;   // offset 8
    short s;    // offset 16
    int i;      // offset 20
};              // size 24, alignment 8

__device__ int g_scale = 3;
__device__ float g_table[256];
__constant__ int c_offsets[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// out[i] = in[i] * g_scale + c_offsets[i % 16] + g_table[i % 256]
extern "C" __global__ void scale_globals(const int *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (float)(in[i] * g_scale + c_offsets[i % 16]) + g_table[i % 256];
}

// Parameter layout probe: the offsets/sizes are fixed by the ABI.
extern "C" __global__ void params_mixed(char c, double d, short s, int4 v, float *out,
                                        long long ll, Mixed m, unsigned char u8)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = (float)c;
        out[1] = (float)d;
        out[2] = (float)s;
        out[3] = (float)(v.x + v.y + v.z + v.w);
        out[4] = (float)ll;
        out[5] = (float)m.c + (float)m.d + (float)m.s + (float)m.i;
        out[6] = (float)u8;
    }
}

extern "C" __global__ void no_params(void) {}

template <typename T> __global__ void tmpl_fill(T *p, T v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v + (T)i;
}
template __global__ void tmpl_fill<int>(int *, int, int);
template __global__ void tmpl_fill<double>(double *, double, int);
