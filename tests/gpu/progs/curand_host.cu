// cuRAND host API with fixed seeds, XORWOW and Philox: uint32 and uniform
// float output from the device generator must equal the host (CPU)
// generator's; uniform values are checked for range and mean; the first few
// values are printed (deterministic for a fixed seed).
#include <curand.h>
#include <vector>
#include "common.h"

#define CKR(call)                                                                 \
    do {                                                                          \
        curandStatus_t r_ = (call);                                               \
        if (r_ != CURAND_STATUS_SUCCESS)                                          \
            fail_now("line %d: %s -> cuRAND status %d", __LINE__, #call, (int)r_); \
    } while (0)

static void one(curandRngType_t type, const char *name)
{
    const size_t n = 1 << 20;
    curandGenerator_t g, hg;
    CKR(curandCreateGenerator(&g, type));
    CKR(curandCreateGeneratorHost(&hg, type));
    CKR(curandSetPseudoRandomGeneratorSeed(g, 20251121ull));
    CKR(curandSetPseudoRandomGeneratorSeed(hg, 20251121ull));
    unsigned *d;
    CK(cudaMalloc(&d, n * sizeof(unsigned)));
    CKR(curandGenerate(g, d, n));
    std::vector<unsigned> dv(n), hv(n);
    CK(cudaMemcpy(dv.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CKR(curandGenerate(hg, hv.data(), n));
    printf("%s first=%u,%u,%u,%u checksum=%016llx\n", name, dv[0], dv[1], dv[2], dv[3],
           (unsigned long long)fnv1a(dv.data(), n * sizeof(unsigned)));
    int same = dv == hv;
    printf("%s device_equals_host=%d\n", name, same);
    EXPECT(same, "%s: device and host generators differ", name);

    float *f;
    CK(cudaMalloc(&f, n * sizeof(float)));
    CKR(curandGenerateUniform(g, f, n));
    std::vector<float> df(n), hf(n);
    CK(cudaMemcpy(df.data(), f, n * sizeof(float), cudaMemcpyDeviceToHost));
    CKR(curandGenerateUniform(hg, hf.data(), n));
    int in_range = 1;
    double mean = 0;
    for (size_t i = 0; i < n; i++) {
        in_range &= df[i] > 0.f && df[i] <= 1.f;
        mean += df[i];
    }
    mean /= n;
    printf("%s uniform first=%.6f,%.6f in_range=%d mean_near_half=%d equals_host=%d\n", name, df[0], df[1],
           in_range, mean > 0.49 && mean < 0.51, df == hf);
    EXPECT(in_range && mean > 0.49 && mean < 0.51, "%s: uniform values off", name);
    EXPECT(df == hf, "%s: uniform device and host differ", name);
    CK(cudaFree(d));
    CK(cudaFree(f));
    CKR(curandDestroyGenerator(g));
    CKR(curandDestroyGenerator(hg));
}

int main(void)
{
    one(CURAND_RNG_PSEUDO_XORWOW, "xorwow");
    one(CURAND_RNG_PSEUDO_PHILOX4_32_10, "philox");
    return finish();
}
