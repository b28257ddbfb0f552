// Warp-level primitives: __shfl_sync (broadcast, rotate), __shfl_up_sync,
// __shfl_down_sync (reduction), __shfl_xor_sync (butterfly), __ballot_sync,
// __any_sync/__all_sync, __activemask under divergence, __popc, and partial
// masks (width 16).
#include "common.h"

__global__ void warp_ops(const int *in, int *out)
{
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = in[gid];
    int *o = out + gid * 8;
    o[0] = __shfl_sync(0xffffffffu, v, 7);                 // broadcast lane 7
    o[1] = __shfl_sync(0xffffffffu, v, (lane + 1) & 31);   // rotate
    o[2] = __shfl_up_sync(0xffffffffu, v, 3);              // lanes < 3 keep own
    int s = v;                                             // reduction
    for (int d = 16; d > 0; d >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, d);
    o[3] = __shfl_sync(0xffffffffu, s, 0);
    int x = v;                                             // butterfly max
    for (int d = 1; d < 32; d <<= 1) {
        int y = __shfl_xor_sync(0xffffffffu, x, d);
        x = y > x ? y : x;
    }
    o[4] = x;
    unsigned b = __ballot_sync(0xffffffffu, v & 1);
    o[5] = (int)b;
    o[6] = __popc(b) + 100 * (__any_sync(0xffffffffu, v > 900) != 0) + 1000 * (__all_sync(0xffffffffu, v >= 0) != 0);
    o[7] = __shfl_sync(0xffffffffu, v, 3, 16);              // width 16: lane 3 of each half
}

__global__ void divergent_mask(unsigned *out)
{
    int lane = threadIdx.x & 31;
    if (lane % 3 == 0)
        out[blockIdx.x * blockDim.x + threadIdx.x] = __activemask();
    else
        out[blockIdx.x * blockDim.x + threadIdx.x] = 0;
}

int main(void)
{
    const int blocks = 8, threads = 128, n = blocks * threads;
    int *h = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        h[i] = (i * 7919 + 13) % 1000;
    int *din, *dout;
    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dout, n * 8 * sizeof(int)));
    CK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    warp_ops<<<blocks, threads>>>(din, dout);
    CKL();
    int *r = (int *)malloc(n * 8 * sizeof(int));
    CK(cudaMemcpy(r, dout, n * 8 * sizeof(int), cudaMemcpyDeviceToHost));

    int bad[8] = {0};
    for (int w0 = 0; w0 < n; w0 += 32) {
        const int *v = h + w0;
        int sum = 0, mx = 0, any = 0, all = 1;
        unsigned ballot = 0;
        for (int l = 0; l < 32; l++) {
            sum += v[l];
            mx = v[l] > mx ? v[l] : mx;
            ballot |= (unsigned)(v[l] & 1) << l;
            any |= v[l] > 900;
            all &= v[l] >= 0;
        }
        for (int l = 0; l < 32; l++) {
            const int *o = r + (w0 + l) * 8;
            bad[0] += o[0] != v[7];
            bad[1] += o[1] != v[(l + 1) & 31];
            bad[2] += o[2] != (l < 3 ? v[l] : v[l - 3]);
            bad[3] += o[3] != sum;
            bad[4] += o[4] != mx;
            bad[5] += (unsigned)o[5] != ballot;
            bad[6] += o[6] != __builtin_popcount(ballot) + 100 * any + 1000 * all;
            bad[7] += o[7] != v[(l & 16) + 3];
        }
    }
    const char *names[8] = {"broadcast", "rotate", "shfl_up", "reduce", "butterfly_max", "ballot", "vote", "width16"};
    for (int i = 0; i < 8; i++) {
        printf("%s bad=%d\n", names[i], bad[i]);
        EXPECT(bad[i] == 0, "%s: %d wrong", names[i], bad[i]);
    }
    printf("warp0 sum=%d max=%d ballot=%08x\n", r[3], r[4], (unsigned)r[5]);

    unsigned *dm, *hm = (unsigned *)malloc(n * sizeof(unsigned));
    CK(cudaMalloc(&dm, n * sizeof(unsigned)));
    divergent_mask<<<blocks, threads>>>(dm);
    CKL();
    CK(cudaMemcpy(hm, dm, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    unsigned want = 0;
    for (int l = 0; l < 32; l += 3)
        want |= 1u << l;
    int mbad = 0;
    for (int i = 0; i < n; i++) {
        int l = i & 31;
        // __activemask may report a superset only if threads reconverged; on
        // every current architecture the divergent branch reports exactly these lanes.
        if (l % 3 == 0)
            mbad += (hm[i] & want) != want;
        else
            mbad += hm[i] != 0;
    }
    printf("activemask_bad=%d\n", mbad);
    EXPECT(mbad == 0, "__activemask: %d wrong", mbad);
    CK(cudaFree(din));
    CK(cudaFree(dout));
    CK(cudaFree(dm));
    free(h);
    free(r);
    free(hm);
    return finish();
}
