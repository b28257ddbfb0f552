"""What Hopper-class GPUs give frameworks beyond plain kernels, one per run,
each checked against a reference computed in the same process and compared
with native by the runner:
  fp8         torch._scaled_mm of float8_e4m3fn matrices (cuBLASLt's FP8 GEMM)
  tma         Triton kernels moving tiles through the tensor memory
              accelerator: a descriptor encoded on the host
              (cuTensorMapEncodeTiled) and one made on the device in a
              scratch buffer Triton asks the program for
  autotune    torch.compile(mode="max-autotune-no-cudagraphs"): Inductor
              benchmarks its Triton GEMM templates against cuBLAS in the
              process and keeps the fastest (caches off, so both runs tune)
  flex        flex_attention compiled, causal block mask, forward and backward
  cudnn-sdpa  scaled_dot_product_attention on cuDNN's fused attention,
              forward and backward, fp16
Usage: torch_hopper.py CASE"""
import sys

import torch
import torch.nn.functional as F

from common import Timer, fl, result, seed_all


def host_randn(*shape, seed=1):
    g = torch.Generator(device="cpu").manual_seed(seed)
    return torch.randn(*shape, generator=g)


def case_fp8():
    a = (host_randn(256, 512, seed=1) * 0.5).cuda().to(torch.float8_e4m3fn)
    b = (host_randn(384, 512, seed=2) * 0.5).cuda().to(torch.float8_e4m3fn)
    sa = torch.tensor(0.5, device="cuda")
    sb = torch.tensor(2.0, device="cuda")
    out = torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    with Timer(torch.cuda.synchronize) as t:
        for _ in range(10):
            out = torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    ref = a.float() @ b.float().t()
    err = float(((out.float() - ref).abs() / (ref.abs() + 1.0)).max())
    return dict(sum=fl(out.double().sum()), abs=fl(out.double().abs().sum()), ok=err < 2e-2,
                ms_per_call=t.ms / 10)


def case_tma():
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor

    @triton.jit
    def scale_tiles(src, dst, BM: tl.constexpr, BN: tl.constexpr):
        m = tl.program_id(0) * BM
        n = tl.program_id(1) * BN
        dst.store([m, n], src.load([m, n]) * 2.0)

    @triton.jit
    def shift_tiles(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        dst = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        m = tl.program_id(0) * BM
        n = tl.program_id(1) * BN
        dst.store([m, n], src.load([m, n]) + 1.0)

    # Device-made descriptors live in scratch memory the program supplies.
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    x = host_randn(512, 256, seed=3).cuda()
    y = torch.empty_like(x)
    z = torch.empty_like(x)
    bm, bn = 64, 64
    grid = (x.shape[0] // bm, x.shape[1] // bn)
    scale_tiles[grid](TensorDescriptor.from_tensor(x, [bm, bn]), TensorDescriptor.from_tensor(y, [bm, bn]),
                      BM=bm, BN=bn)
    shift_tiles[grid](y, z, x.shape[0], x.shape[1], BM=bm, BN=bn)
    torch.cuda.synchronize()
    ok = torch.equal(y, x * 2.0) and torch.equal(z, x * 2.0 + 1.0)
    return dict(sum=fl(z.double().sum(), 9), ok=bool(ok))


def case_autotune():
    import torch._inductor.config as icfg
    icfg.force_disable_caches = True
    a = host_randn(512, 512, seed=4).cuda().half()
    b = host_randn(512, 512, seed=5).cuda().half()

    def f(a, b):
        return torch.relu(a @ b) * 0.5

    cf = torch.compile(f, mode="max-autotune-no-cudagraphs")
    with Timer(torch.cuda.synchronize) as t:
        out = cf(a, b)
    ref = f(a.float(), b.float())
    err = float(((out.float() - ref).abs() / (ref.abs() + 1.0)).max())
    # The kernel kept depends on timings, so the sum is compared within the
    # runner's tolerance; the check against fp32 is the strict part.
    return dict(sum=fl(out.double().sum(), 4), ok=err < 1e-2, compile_ms=t.ms)


def case_flex():
    import torch._inductor.config as icfg
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    icfg.force_disable_caches = True

    def causal(b, h, q, kv):
        return q >= kv

    bm = create_block_mask(causal, B=None, H=None, Q_LEN=256, KV_LEN=256, device="cuda")
    fa = torch.compile(flex_attention)
    q, k, v = (host_randn(2, 4, 256, 64, seed=s).cuda().half().requires_grad_() for s in (6, 7, 8))
    with Timer(torch.cuda.synchronize) as t:
        o = fa(q, k, v, block_mask=bm)
        o.float().sum().backward()
    qf, kf, vf = (x.detach().float().requires_grad_() for x in (q, k, v))
    ref = F.scaled_dot_product_attention(qf, kf, vf, is_causal=True)
    ref.sum().backward()
    err = float((o.float() - ref).abs().max())
    gerr = float((q.grad.float() - qf.grad).abs().max())
    return dict(out=fl(o.float().sum(), 3), grad=fl(q.grad.float().abs().sum(), 3),
                ok=err < 1e-2 and gerr < 5e-2, compile_ms=t.ms)


def case_cudnn_sdpa():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = host_randn(4, 8, 256, 64, seed=9).cuda().half().requires_grad_()
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        o = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        o.float().sum().backward()
    ref = F.scaled_dot_product_attention(q.float(), q.float(), q.float(), is_causal=True)
    return dict(out=fl(o.float().sum()), grad=fl(q.grad.float().abs().sum()),
                ok=float((o.float() - ref).abs().max()) < 1e-2)


def main():
    seed_all(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    res = globals()["case_" + sys.argv[1].replace("-", "_")]()
    result(**res)


if __name__ == "__main__":
    main()
