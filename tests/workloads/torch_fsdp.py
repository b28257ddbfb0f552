"""torch.distributed's sharded training across processes, one per GPU, as
torchrun starts them: FSDP2 (fully_shard, parameters sharded as DTensors,
all_gather before each layer and reduce_scatter of its gradients, on
FSDP's own streams and events), bf16 compute with fp32 gradients reduced,
AdamW; then tensor parallelism of an MLP (parallelize_module: column- and
row-wise sharded Linear layers, an all_reduce in the forward), checked
against the same MLP run whole on every rank. Every rank must end with the
same full parameters. On a machine with one GPU it runs one rank.
ms_per_step: the median FSDP step of rank 0.
Usage: torch_fsdp.py"""
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

from common import arg, fl, result, seed_all, spawn_ranks


def rank_main(rank, world, store, q):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    torch.backends.cuda.matmul.allow_tf32 = False
    mesh = init_device_mesh("cuda", (world,))
    seed_all(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(512, 512), nn.GELU()) for _ in range(4)],
                          nn.Linear(512, 16)).cuda()
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model:
        fully_shard(layer, mesh=mesh, mp_policy=mp)
    fully_shard(model, mesh=mesh, mp_policy=mp)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator(device="cpu").manual_seed(100 + rank)
    steps = int(arg("train_steps", "20"))
    losses, times = [], []
    for _ in range(steps):
        x = torch.randn(64, 512, generator=g).cuda()
        y = torch.randint(0, 16, (64,), generator=g).cuda()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
        losses.append(loss.item())
    # The full parameters, gathered: the same on every rank.
    flat = torch.cat([p.full_tensor().detach().float().reshape(-1) for p in model.parameters()])
    ref = flat.clone()
    dist.broadcast(ref, src=0)
    same = bool(torch.equal(flat, ref))
    # Tensor parallelism: the MLP sharded across the ranks gives what
    # the whole MLP gives on each (the same weights and input everywhere).
    seed_all(1)
    whole = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 256)).cuda()
    tp = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 256)).cuda()
    tp.load_state_dict(whole.state_dict())
    parallelize_module(tp, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    xin = torch.randn(32, 256, generator=torch.Generator(device="cpu").manual_seed(7)).cuda()
    want = whole(xin)
    got = tp(xin)
    tp_err = (got - want).abs().max().item()
    ok = same and tp_err < 1e-4
    q.put((rank, [fl(l) for l in losses], fl(flat.double().sum().item(), 9), ok,
           statistics.median(times[len(times) // 4:]), tp_err))


def main():
    world = torch.cuda.device_count()
    items, codes = spawn_ranks(rank_main, world, "wl-fsdp-")
    got = {r[0]: r for r in items}
    ok = len(got) == world and all(c == 0 for c in codes) and all(got[r][3] for r in got)
    r0 = got.get(0)
    if r0:
        print("rank 0: tensor-parallel MLP off the whole one by %.3g" % r0[5], file=sys.stderr)
    result(ranks=world, exitcodes=codes, losses=r0[1] if r0 else None, weights=r0[2] if r0 else None,
           ok=bool(ok), ms_per_step=r0[4] if r0 else None)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
