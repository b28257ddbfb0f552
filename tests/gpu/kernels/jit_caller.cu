// JIT link input 1 (nvcc -ptx -rdc=true): a kernel calling jit_scale(),
// defined in the other input (jit_callee.cu); linked by tests/gpu/progs/jit_link.cu.
extern "C" __device__ int jit_scale(int x);

extern "C" __global__ void jit_apply(int *out, const int *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = jit_scale(in[i]) + 1;
}
