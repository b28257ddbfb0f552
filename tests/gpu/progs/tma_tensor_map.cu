// A tensor map (cuTensorMapEncodeTiled, driver API) over a 2D float matrix,
// and a kernel that copies one 32x32 tile of it into shared memory with the
// copy engine (cp.async.bulk.tensor, completing on an mbarrier), then writes
// it out; checked against the CPU. The map is passed by value as a
// __grid_constant__ parameter. cuTensorMapReplaceAddress moves the map to a
// second matrix. Below compute capability 9.0 (no TMA) the tile comes from a
// plain copy, so the output is the same everywhere. Built for sm_90a too.
#include <cuda.h>
#include "common.h"

#define W 128
#define H 96
#define T 32

__global__ void tile_copy(const __grid_constant__ CUtensorMap tm, float *out, int x0, int y0)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ alignas(128) float tile[T * T];
    __shared__ alignas(8) unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned t = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(T * T * 4) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];" ::"r"(t),
                     "l"(reinterpret_cast<unsigned long long>(&tm)), "r"(x0), "r"(y0), "r"(b)
                     : "memory");
    }
    asm volatile("{\n\t.reg .pred p;\n"
                 "WAIT_%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n\t"
                 "@!p bra WAIT_%=;\n}" ::"r"(b)
                 : "memory");
    for (int i = threadIdx.x; i < T * T; i += blockDim.x)
        out[i] = tile[i];
#else
    (void)tm, (void)out, (void)x0, (void)y0;
#endif
}

static int check_tile(const float *got, const float *m, int x0, int y0, const char *what)
{
    int bad = 0;
    for (int y = 0; y < T; y++)
        for (int x = 0; x < T; x++)
            bad += got[y * T + x] != m[(y0 + y) * W + x0 + x];
    printf("%s: %d wrong of %d\n", what, bad, T * T);
    if (bad)
        note_failure("%s: %d wrong", what, bad);
    return bad;
}

int main(void)
{
    int major = 0;
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    static float m1[W * H], m2[W * H], got[T * T];
    for (int i = 0; i < W * H; i++) {
        m1[i] = (float)(i % 997) * 0.5f;
        m2[i] = (float)(i % 991) * -0.25f;
    }
    float *d1, *d2, *dout;
    CK(cudaMalloc(&d1, sizeof m1));
    CK(cudaMalloc(&d2, sizeof m2));
    CK(cudaMalloc(&dout, sizeof got));
    CK(cudaMemcpy(d1, m1, sizeof m1, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d2, m2, sizeof m2, cudaMemcpyHostToDevice));

    CUtensorMap tm;
    cuuint64_t dims[2] = {W, H}, strides[1] = {W * sizeof(float)};
    cuuint32_t box[2] = {T, T}, es[2] = {1, 1};
    CKD(cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d1, dims, strides, box, es,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    const int x0 = 64, y0 = 32;
    for (int pass = 0; pass < 2; pass++) {
        const float *m = pass ? m2 : m1;
        if (major >= 9) {
            tile_copy<<<1, 128>>>(tm, dout, x0, y0);
            CKL();
            CK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
        } else {
            CK(cudaMemcpy2D(got, T * sizeof(float), (pass ? d2 : d1) + y0 * W + x0, W * sizeof(float),
                            T * sizeof(float), T, cudaMemcpyDeviceToHost));
        }
        check_tile(got, m, x0, y0, pass ? "tile after address replaced" : "tile");
        if (!pass)
            CKD(cuTensorMapReplaceAddress(&tm, d2));
    }
    CK(cudaFree(d1));
    CK(cudaFree(d2));
    CK(cudaFree(dout));
    return finish();
}
