// Template kernels: type parameters, non-type (block size) parameters, functor
// parameters, a block reduction templated on its size, and a variadic kernel.
#include "common.h"

template <typename T, typename Op> __global__ void transform(const T *in, T *out, int n, Op op)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = op(in[i], (T)i);
}

struct AddOp {
    template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct MulAddOp {
    int k;
    template <typename T> __device__ T operator()(T a, T b) const { return a * (T)k - b; }
};

template <int BLOCK, typename T> __global__ void block_sum(const T *in, T *out, int n)
{
    __shared__ T s[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : (T)0;
    __syncthreads();
    for (int w = BLOCK / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = s[0];
}

template <typename... Ts> __device__ long long sum_all(Ts... xs) { return (0 + ... + (long long)xs); }
template <typename... Ts> __global__ void variadic(long long *out, Ts... xs) { *out = sum_all(xs...); }

template <typename T> static int run_transform(const char *tname, int n)
{
    T *h = (T *)malloc(n * sizeof(T)), *r = (T *)malloc(n * sizeof(T));
    for (int i = 0; i < n; i++)
        h[i] = (T)(i % 100);
    T *din, *dout;
    CK(cudaMalloc(&din, n * sizeof(T)));
    CK(cudaMalloc(&dout, n * sizeof(T)));
    CK(cudaMemcpy(din, h, n * sizeof(T), cudaMemcpyHostToDevice));
    transform<<<(n + 127) / 128, 128>>>(din, dout, n, AddOp());
    CKL();
    CK(cudaMemcpy(r, dout, n * sizeof(T), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += r[i] != (T)(i % 100) + (T)i;
    MulAddOp op = {3};
    transform<<<(n + 127) / 128, 128>>>(din, dout, n, op);
    CKL();
    CK(cudaMemcpy(r, dout, n * sizeof(T), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        bad += r[i] != (T)(i % 100) * (T)3 - (T)i;
    printf("transform<%s> bad=%d\n", tname, bad);
    EXPECT(bad == 0, "transform<%s>: %d wrong", tname, bad);
    CK(cudaFree(din));
    CK(cudaFree(dout));
    free(h);
    free(r);
    return bad;
}

template <int BLOCK> static void run_sum(int n)
{
    int *h = (int *)malloc(n * sizeof(int));
    long long want = 0;
    for (int i = 0; i < n; i++) {
        h[i] = (i * 13) % 1000 - 500;
        want += h[i];
    }
    int nb = (n + BLOCK - 1) / BLOCK;
    int *din, *dpart, *part = (int *)malloc(nb * sizeof(int));
    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dpart, nb * sizeof(int)));
    CK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    block_sum<BLOCK, int><<<nb, BLOCK>>>(din, dpart, n);
    CKL();
    CK(cudaMemcpy(part, dpart, nb * sizeof(int), cudaMemcpyDeviceToHost));
    long long got = 0;
    for (int i = 0; i < nb; i++)
        got += part[i];
    printf("block_sum<%d> n=%d sum=%lld\n", BLOCK, n, got);
    EXPECT(got == want, "block_sum<%d>: %lld, expected %lld", BLOCK, got, want);
    CK(cudaFree(din));
    CK(cudaFree(dpart));
    free(h);
    free(part);
}

int main(void)
{
    run_transform<int>("int", 10007);
    run_transform<float>("float", 10007);
    run_transform<double>("double", 10007);
    run_transform<long long>("long long", 333);
    run_sum<64>(100000);
    run_sum<256>(100000);
    run_sum<1024>(1 << 20);

    long long *d, got = 0;
    CK(cudaMalloc(&d, sizeof *d));
    variadic<<<1, 1>>>(d, (char)1, (short)20, 300, 4000ll, (unsigned char)50);
    CKL();
    CK(cudaMemcpy(&got, d, sizeof got, cudaMemcpyDeviceToHost));
    printf("variadic=%lld\n", got);
    EXPECT(got == 4371, "variadic %lld", got);
    CK(cudaFree(d));
    return finish();
}
