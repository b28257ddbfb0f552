"""Every GPU the process sees, used together from one process: a tensor
copied from GPU to GPU (peer copies where the devices allow them), a kernel
on each, nn.DataParallel over all of them (its scatter, replicas and
gather), and an NCCL all-reduce across them (torch.cuda.nccl). On a machine
with one GPU it checks that one and reports devices=1.
Usage: torch_multigpu.py"""
import torch
import torch.nn as nn

from common import Timer, fl, result, seed_all


def main():
    seed_all(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    n = torch.cuda.device_count()
    ok = n >= 1
    g = torch.Generator(device="cpu").manual_seed(7)
    base = torch.randn(1 << 20, generator=g)
    peer = [[int(torch.cuda.can_device_access_peer(i, j)) if i != j else 1 for j in range(n)] for i in range(n)]
    # A round trip through every device, each adding its ordinal.
    t = base.cuda(0)
    with Timer(torch.cuda.synchronize) as hop:
        for d in list(range(1, n)) + [0]:
            t = t.to(f"cuda:{d}") + d
    want = base.clone()  # the same additions in the same order (float32: (x + 1) + 2 is not x + 3)
    for d in list(range(1, n)) + [0]:
        want = want + d
    ok = ok and torch.equal(t.cpu(), want)
    # DataParallel over all devices against the module alone.
    m = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 16)).cuda(0)
    x = torch.randn(64 * n, 256, generator=g).cuda(0)
    dp = nn.DataParallel(m, device_ids=list(range(n)))
    with torch.no_grad():
        ref = m(x)
        out = dp(x)
    # each replica runs a smaller batch, whose GEMM may round differently
    ok = ok and bool(torch.allclose(out, ref, rtol=1e-4, atol=1e-5))
    # NCCL across the devices, in this one process.
    red = None
    if n > 1:
        import torch.cuda.nccl as nccl
        parts = [torch.full((4096,), float(d + 1), device=f"cuda:{d}") for d in range(n)]
        nccl.all_reduce(parts)
        torch.cuda.synchronize()
        red = [fl(p[0].item()) for p in parts]
        ok = ok and all(v == n * (n + 1) / 2 for v in red)
    result(devices=n, peer=peer, sum=fl(t.double().sum(), 9), dp=fl(out.double().sum(), 5),
           nccl=red, ok=bool(ok), hop_ms=hop.ms)


if __name__ == "__main__":
    main()
