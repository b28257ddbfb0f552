"""torch.distributed across processes, one per GPU, as torchrun starts them:
DistributedDataParallel training of a small MLP over NCCL (each rank its own
process and GPU, NCCL's transports between processes: P2P through CUDA IPC
or cuMem shareable handles, or shared memory), then an all_reduce,
broadcast and all_gather checked against what they must give, and an
all_reduce captured in a CUDA graph and replayed three times. Every rank
must end with the same weights. On a machine with one GPU it runs one rank.
ms_per_step: the median training step of rank 0.
Usage: torch_ddp.py"""
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

from common import arg, fl, result, seed_all, spawn_ranks


def rank_main(rank, world, store, q):
    seed_all(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10)).cuda()
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    g = torch.Generator(device="cpu").manual_seed(100 + rank)
    steps = int(arg("train_steps", "20"))
    losses, times = [], []
    for _ in range(steps):
        x = torch.randn(128, 512, generator=g).cuda()
        y = torch.randint(0, 10, (128,), generator=g).cuda()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
        losses.append(loss.item())
    # Every rank must hold the same weights after the same averaged steps.
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    ref = flat.clone()
    dist.broadcast(ref, src=0)
    same = bool(torch.equal(flat, ref))
    v = torch.full((1 << 20,), float(rank + 1), device="cuda")
    dist.all_reduce(v)
    ok = bool((v == world * (world + 1) / 2).all().item())
    parts = [torch.empty(4096, device="cuda") for _ in range(world)]
    dist.all_gather(parts, torch.full((4096,), float(rank), device="cuda"))
    ok = ok and all(bool((p == r).all().item()) for r, p in enumerate(parts))
    # An all_reduce captured in a CUDA graph and replayed, as tensor-
    # parallel inference (vLLM's decode graphs) runs its collectives.
    gv = torch.full((1 << 16,), float(rank + 1), device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        dist.all_reduce(gv)  # NCCL's first use of the stream, outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dist.all_reduce(gv)
    graph_ok = True
    for k in range(3):
        gv.fill_(float(rank + 1 + k))
        graph.replay()
        torch.cuda.synchronize()
        graph_ok = graph_ok and bool((gv == sum(r + 1 + k for r in range(world))).all().item())
    ok = ok and graph_ok
    # The graph holds NCCL's captured kernels: it must go before the
    # communicator, or ncclCommDestroy waits for ever (pytorch#115388).
    graph.reset()
    del graph
    torch.cuda.synchronize()
    q.put((rank, [fl(l) for l in losses], fl(flat.double().sum().item(), 9), same, ok,
           statistics.median(times[len(times) // 4:])))


def main():
    world = torch.cuda.device_count()
    items, codes = spawn_ranks(rank_main, world, "wl-ddp-")
    got = {r[0]: r for r in items}
    ok = len(got) == world and all(c == 0 for c in codes) and all(got[r][3] and got[r][4] for r in got)
    r0 = got.get(0)
    result(ranks=world, exitcodes=codes, losses=r0[1] if r0 else None,
           weights=r0[2] if r0 else None, ok=bool(ok), ms_per_step=r0[5] if r0 else None)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
