"""torch.compile of a small model (Inductor, Triton kernels) in the default
and "reduce-overhead" (CUDA graphs) modes. Usage: torch_compile.py {default|reduce-overhead}
ms_per_call: the three calls after the warm-up; steady_ms_per_call: a loop
of calls on one input (common.steady())."""
import sys

import torch
import torch.nn as nn

from common import Timer, fl, result, seed_all, steady


def main():
    mode = sys.argv[1]
    seed_all(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    m = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256), nn.LayerNorm(256)).cuda()
    cm = torch.compile(m, mode=None if mode == "default" else mode)
    g = torch.Generator(device="cpu").manual_seed(3)
    xs = [torch.randn(64, 256, generator=g).cuda() for _ in range(6)]
    with torch.no_grad():
        ref = [m(x) for x in xs]
        outs = [cm(x).clone() for x in xs[:3]]          # compile and warm up
        with Timer(torch.cuda.synchronize) as t:
            outs += [cm(x).clone() for x in xs[3:]]
        per_call = steady(lambda: cm(xs[0]), torch.cuda.synchronize)
    err = max((a - b).abs().max().item() for a, b in zip(ref, outs))
    result(sums=[fl(o.double().sum().item(), 5) for o in outs], max_err_vs_eager=fl(err, 2),
           ok=err < 1e-3, ms_per_call=t.ms / 3,
           steady_ms_per_call=per_call)


if __name__ == "__main__":
    main()
