// Atomics on global and shared memory: atomicAdd (int, unsigned long long,
// float on exactly representable values, double), atomicSub, atomicMin/Max,
// atomicAnd/Or/Xor, atomicExch, atomicCAS (a CAS-built lock-free counter),
// atomicInc with wrap-around, and a shared-memory histogram.
#include "common.h"

struct Results {
    int add_i;
    unsigned long long add_ull;
    float add_f;
    double add_d;
    int sub_i;
    int min_i;
    int max_i;
    unsigned and_u;
    unsigned or_u;
    unsigned xor_u;
    unsigned inc_u;
    int cas_counter;
    int exch_count;
};

__global__ void hammer(Results *r, int *exch_slot, int *exch_seen)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&r->add_i, tid % 7);
    atomicAdd(&r->add_ull, (unsigned long long)tid * 1000000007ull);
    atomicAdd(&r->add_f, 0.5f); // exact: partial sums stay small integers / 2
    atomicAdd(&r->add_d, 0.25);
    atomicSub(&r->sub_i, tid % 3);
    atomicMin(&r->min_i, (tid * 7919) % 100003 - 50000);
    atomicMax(&r->max_i, (tid * 7919) % 100003 - 50000);
    atomicAnd(&r->and_u, ~(1u << (tid % 32)) | (tid % 64 < 32 ? 0u : 0xffffffffu));
    atomicOr(&r->or_u, 1u << (tid % 29));
    atomicXor(&r->xor_u, (unsigned)tid);
    atomicInc(&r->inc_u, 999u); // wraps to 0 after 999
    int old, assumed;
    old = r->cas_counter;
    do {
        assumed = old;
        old = atomicCAS(&r->cas_counter, assumed, assumed + 2);
    } while (old != assumed);
    // Every thread swaps its id in; each value is seen exactly once overall.
    int prev = atomicExch(exch_slot, tid);
    atomicAdd(&exch_seen[prev + 1], 1);
}

__global__ void histogram(const unsigned char *in, int n, unsigned *hist)
{
    __shared__ unsigned local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        local[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[in[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        atomicAdd(&hist[i], local[i]);
}

int main(void)
{
    const int blocks = 256, threads = 256, T = blocks * threads;
    Results init = {};
    init.min_i = 1 << 30;
    init.max_i = -(1 << 30);
    init.and_u = 0xffffffffu;
    init.sub_i = 1000000;
    Results *dr;
    int *slot, *seen;
    CK(cudaMalloc(&dr, sizeof(Results)));
    CK(cudaMalloc(&slot, sizeof(int)));
    CK(cudaMalloc(&seen, (T + 1) * sizeof(int)));
    CK(cudaMemcpy(dr, &init, sizeof init, cudaMemcpyHostToDevice));
    int minus1 = -1;
    CK(cudaMemcpy(slot, &minus1, sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemset(seen, 0, (T + 1) * sizeof(int)));
    hammer<<<blocks, threads>>>(dr, slot, seen);
    CKL();
    Results r;
    CK(cudaMemcpy(&r, dr, sizeof r, cudaMemcpyDeviceToHost));

    Results w = init;
    for (int tid = 0; tid < T; tid++) {
        w.add_i += tid % 7;
        w.add_ull += (unsigned long long)tid * 1000000007ull;
        w.sub_i -= tid % 3;
        int v = (tid * 7919) % 100003 - 50000;
        w.min_i = v < w.min_i ? v : w.min_i;
        w.max_i = v > w.max_i ? v : w.max_i;
        w.and_u &= ~(1u << (tid % 32)) | (tid % 64 < 32 ? 0u : 0xffffffffu);
        w.or_u |= 1u << (tid % 29);
        w.xor_u ^= (unsigned)tid;
        w.inc_u = w.inc_u >= 999u ? 0 : w.inc_u + 1;
        w.cas_counter += 2;
    }
    w.add_f = 0.5f * T;
    w.add_d = 0.25 * T;
    printf("add_i=%d add_ull=%llu add_f=%.1f add_d=%.2f sub_i=%d\n", r.add_i, r.add_ull, r.add_f,
           r.add_d, r.sub_i);
    printf("min=%d max=%d and=%08x or=%08x xor=%08x inc=%u cas=%d\n", r.min_i, r.max_i, r.and_u,
           r.or_u, r.xor_u, r.inc_u, r.cas_counter);
    EXPECT(r.add_i == w.add_i, "atomicAdd int %d vs %d", r.add_i, w.add_i);
    EXPECT(r.add_ull == w.add_ull, "atomicAdd ull");
    EXPECT(r.add_f == w.add_f, "atomicAdd float %.1f vs %.1f", r.add_f, w.add_f);
    EXPECT(r.add_d == w.add_d, "atomicAdd double");
    EXPECT(r.sub_i == w.sub_i, "atomicSub");
    EXPECT(r.min_i == w.min_i && r.max_i == w.max_i, "atomicMin/Max");
    EXPECT(r.and_u == w.and_u && r.or_u == w.or_u && r.xor_u == w.xor_u, "atomicAnd/Or/Xor");
    EXPECT(r.inc_u == w.inc_u, "atomicInc %u vs %u", r.inc_u, w.inc_u);
    EXPECT(r.cas_counter == w.cas_counter, "atomicCAS loop %d vs %d", r.cas_counter, w.cas_counter);

    int *hseen = (int *)malloc((T + 1) * sizeof(int));
    int last = 0;
    CK(cudaMemcpy(hseen, seen, (T + 1) * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&last, slot, sizeof(int), cudaMemcpyDeviceToHost));
    // Each of -1..T-1 is returned once, except the final occupant (never returned).
    int bad = 0;
    for (int v = -1; v < T; v++) {
        int want = v == last ? 0 : 1;
        bad += hseen[v + 1] != want;
    }
    printf("exch_bad=%d\n", bad);
    EXPECT(bad == 0, "atomicExch chain: %d wrong", bad);

    const int n = 1 << 22;
    unsigned char *h = (unsigned char *)malloc(n);
    fill_pattern(h, n, 99);
    unsigned want_hist[256] = {0}, got_hist[256];
    for (int i = 0; i < n; i++)
        want_hist[h[i]]++;
    unsigned char *din;
    unsigned *dh;
    CK(cudaMalloc(&din, n));
    CK(cudaMalloc(&dh, sizeof got_hist));
    CK(cudaMemcpy(din, h, n, cudaMemcpyHostToDevice));
    CK(cudaMemset(dh, 0, sizeof got_hist));
    histogram<<<120, 512>>>(din, n, dh);
    CKL();
    CK(cudaMemcpy(got_hist, dh, sizeof got_hist, cudaMemcpyDeviceToHost));
    bad = memcmp(got_hist, want_hist, sizeof want_hist) != 0;
    printf("histogram_ok=%d checksum=%016llx\n", !bad, (unsigned long long)fnv1a(got_hist, sizeof got_hist));
    EXPECT(!bad, "shared-memory histogram");
    CK(cudaFree(dr));
    CK(cudaFree(slot));
    CK(cudaFree(seen));
    CK(cudaFree(din));
    CK(cudaFree(dh));
    free(h);
    free(hseen);
    return finish();
}
