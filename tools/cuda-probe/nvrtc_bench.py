#!/usr/bin/env python3
"""nvrtc_bench.py - a research probe (not part of vcuda): times NVRTC
compilations of one kernel source in a process that has (or has not) loaded
a libcuda.so.1 and called cuInit, to see whether the driver library in the
process changes what NVRTC costs.

    nvrtc_bench.py MODE [N]
MODE: bare (no libcuda), load (dlopen libcuda.so.1, no cuInit), init
(cuInit + a context); the libcuda found is whatever LD_LIBRARY_PATH gives.
Prints one line: mode, median and min wall ms, median thread-CPU ms.
"""
import ctypes, glob, os, resource, sys, time, statistics

SRC = rb'''
#include <cuda_fp16.h>
template <typename T> struct Add { __device__ T operator()(T a, T b) const { return a + b; } };
template <typename T, typename Op>
__global__ void k(const T *a, const T *b, T *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = Op()(a[i], b[i]);
}
template __global__ void k<float, Add<float>>(const float *, const float *, float *, int);
template __global__ void k<__half, Add<__half>>(const __half *, const __half *, __half *, int);
'''

def find_nvrtc():
    cands = []
    for root in sys.path:
        cands += glob.glob(os.path.join(root, "nvidia", "*", "lib", "libnvrtc.so*"))
    cands += glob.glob("/usr/local/cuda/lib64/libnvrtc.so*")
    cands = [c for c in cands if "builtins" not in c and "alt" not in c]
    if not cands:
        raise SystemExit("no libnvrtc")
    return sorted(cands)[-1]

def main():
    mode = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    if mode in ("load", "init"):
        cu = ctypes.CDLL("libcuda.so.1")
        if mode == "init":
            assert cu.cuInit(0) == 0
            dev = ctypes.c_int()
            ctx = ctypes.c_void_p()
            assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
            assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
            assert cu.cuCtxSetCurrent(ctx) == 0
    path = find_nvrtc()
    nv = ctypes.CDLL(path)
    inc = glob.glob(os.path.join(os.path.dirname(os.path.dirname(path)), "include"))
    opts = [b"--gpu-architecture=sm_90", b"-std=c++17"] + [b"-I" + i.encode() for i in inc] + \
           [b"-I/usr/local/cuda/include"]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    walls, cpus, users, syss, flts = [], [], [], [], []
    for i in range(n):
        prog = ctypes.c_void_p()
        assert nv.nvrtcCreateProgram(ctypes.byref(prog), SRC, b"k.cu", 0, None, None) == 0
        r0 = resource.getrusage(resource.RUSAGE_THREAD)
        w0, c0 = time.monotonic(), time.thread_time()
        rc = nv.nvrtcCompileProgram(prog, len(opts), arr)
        walls.append((time.monotonic() - w0) * 1e3)
        cpus.append((time.thread_time() - c0) * 1e3)
        r1 = resource.getrusage(resource.RUSAGE_THREAD)
        users.append((r1.ru_utime - r0.ru_utime) * 1e3)
        syss.append((r1.ru_stime - r0.ru_stime) * 1e3)
        flts.append(r1.ru_minflt - r0.ru_minflt)
        if rc != 0:
            sz = ctypes.c_size_t()
            nv.nvrtcGetProgramLogSize(prog, ctypes.byref(sz))
            buf = ctypes.create_string_buffer(sz.value)
            nv.nvrtcGetProgramLog(prog, buf)
            raise SystemExit("compile failed %d: %s" % (rc, buf.value.decode()[:400]))
        nv.nvrtcDestroyProgram(ctypes.byref(prog))
    print("nvrtc_bench mode=%s lib=%s n=%d median_ms=%.1f min_ms=%.1f first_ms=%.1f median_cpu_ms=%.1f user_ms=%.1f sys_ms=%.1f minflt=%d" %
          (mode, os.path.basename(path), n, statistics.median(walls[1:]), min(walls), walls[0],
           statistics.median(cpus[1:]), statistics.median(users[1:]), statistics.median(syss[1:]),
           statistics.median(flts[1:])))

main()
