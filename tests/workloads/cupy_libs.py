"""CuPy: an NVRTC RawKernel, a reduction, cuBLAS, cuFFT, cuSOLVER, cuSPARSE.
gemm_ms: the first GEMM (cuBLAS's start in it); steady_ms_per_call: the
RawKernel launched in a loop, gemm_steady_ms the GEMM in a loop
(common.steady())."""
import cupy as cp
import cupyx.scipy.sparse as sp
import numpy as np

from common import Timer, fl, result, steady


def main():
    rng = np.random.default_rng(7)
    out = {}
    k = cp.RawKernel(r'''
    extern "C" __global__ void axpy(float a, const float *x, float *y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }''', "axpy")
    x = cp.asarray(rng.standard_normal(100000, dtype=np.float32))
    y = cp.ones(100000, dtype=cp.float32)
    k((391,), (256,), (cp.float32(2.0), x, y, cp.int32(100000)))
    out["nvrtc_ok"] = bool(cp.allclose(y, 2 * x + 1))
    out["reduce"] = fl(float(cp.sum(x * x)), 6)
    a = cp.asarray(rng.standard_normal((512, 512)))
    b = cp.asarray(rng.standard_normal((512, 512)))
    with Timer(cp.cuda.Device().synchronize) as t:
        c = a @ b
    out["gemm_ok"] = bool(np.allclose(cp.asnumpy(c), cp.asnumpy(a) @ cp.asnumpy(b)))
    out["gemm_ms"] = t.ms
    sync = cp.cuda.Device().synchronize
    out["steady_ms_per_call"] = steady(lambda: k((391,), (256,), (cp.float32(0.5), x, y, cp.int32(100000))), sync)
    out["gemm_steady_ms"] = steady(lambda: a @ b, sync)
    f = cp.fft.fft2(a)
    out["fft_ok"] = bool(np.allclose(cp.asnumpy(f), np.fft.fft2(cp.asnumpy(a))))
    spd = a @ a.T + 512 * cp.eye(512)
    L = cp.linalg.cholesky(spd)
    out["chol_ok"] = bool(cp.allclose(L @ L.T, spd))
    sol = cp.linalg.solve(spd, b[:, 0])
    out["solve_ok"] = bool(cp.allclose(spd @ sol, b[:, 0]))
    m = sp.random(2000, 2000, density=0.01, format="csr", dtype=cp.float64, random_state=1)
    v = cp.asarray(rng.standard_normal(2000))
    out["spmv_ok"] = bool(np.allclose(cp.asnumpy(m @ v), m.get() @ cp.asnumpy(v)))
    out["ok"] = all(v for kk, v in out.items() if kk.endswith("_ok"))
    result(**out)


if __name__ == "__main__":
    main()
