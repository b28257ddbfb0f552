// JIT link input 2 (nvcc -ptx -rdc=true): the device function jit_caller.cu calls.
extern "C" __device__ int jit_scale(int x)
{
    return 3 * x - 7;
}
