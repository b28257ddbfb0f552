"""PyTorch symmetric memory across processes, one per GPU (what torchtitan's
async tensor parallelism and vLLM's all-reduce build on): each rank
allocates a buffer with torch.distributed._symmetric_memory.empty, the
ranks rendezvous (each maps every peer's buffer: cuMem allocations shared
as POSIX descriptors, and multicast objects where the GPUs have them), then
each rank reads its peer's buffer straight, runs the one-shot and two-shot
all-reduce kernels on it, and a fused all-gather + matmul; every result is
checked against NCCL's. On a machine with one GPU it says so and passes.
ms_per_call: rank 0's one-shot all-reduce of 1 MiB, median.
Usage: torch_symm_mem.py"""
import statistics
import sys
import time

import torch
import torch.distributed as dist

from common import arg, fl, result, spawn_ranks


def rank_main(rank, world, store, q):
    out = {"rank": rank}
    try:
        import torch.distributed._symmetric_memory as symm_mem
        group = dist.group.WORLD
        name = group.group_name
        if hasattr(symm_mem, "enable_symm_mem_for_group"):
            symm_mem.enable_symm_mem_for_group(name)
        n = 1 << 18  # 1 MiB of float32
        t = symm_mem.empty(n, device="cuda", dtype=torch.float32)
        hdl = symm_mem.rendezvous(t, group=group)
        out["multicast"] = bool(getattr(hdl, "multicast_ptr", 0))
        # every rank writes its own buffer; a peer's is read straight
        t.copy_(torch.arange(n, device="cuda", dtype=torch.float32) * (rank + 1))
        hdl.barrier()
        peer = (rank + 1) % world
        pb = hdl.get_buffer(peer, (n,), torch.float32)
        want = torch.arange(n, device="cuda", dtype=torch.float32) * (peer + 1)
        out["peer_read"] = bool(torch.equal(pb.clone(), want))
        hdl.barrier()
        # all-reduces by the symmetric-memory kernels, against NCCL's
        ref = t.clone()
        dist.all_reduce(ref)
        got = {}
        for op in ("one_shot_all_reduce", "two_shot_all_reduce_"):
            f = getattr(torch.ops.symm_mem, op, None)
            if f is None:
                continue
            t.copy_(torch.arange(n, device="cuda", dtype=torch.float32) * (rank + 1))
            r = f(t, "sum", name)
            got[op] = bool(torch.allclose(r if r is not None else t, ref))
        out["allreduce"] = got
        # the one-shot all-reduce in a loop: what a decode step's TP reduce costs
        t.copy_(torch.ones(n, device="cuda"))
        times = []
        for i in range(int(arg("calls", "50")) + 5):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            torch.ops.symm_mem.one_shot_all_reduce(t, "sum", name)
            torch.cuda.synchronize()
            if i >= 5:
                times.append((time.perf_counter() - t0) * 1e6)
        out["us"] = statistics.median(times)
        # a fused all-gather + matmul over the group (async tensor parallelism)
        fused = getattr(torch.ops.symm_mem, "fused_all_gather_matmul", None)
        if fused is not None:
            g = torch.Generator(device="cpu").manual_seed(7 + rank)
            a = torch.randn(64, 128, generator=g).cuda()
            b = torch.randn(128, 32, generator=torch.Generator(device="cpu").manual_seed(11)).cuda()
            ag, mm = fused(a, [b], gather_dim=0, group_name=name)
            full = [torch.empty_like(a) for _ in range(world)]
            dist.all_gather(full, a)
            full = torch.cat(full)
            out["fused_ag_mm"] = bool(torch.allclose(ag, full) and torch.allclose(mm[0], full @ b, atol=1e-3))
            out["mm_sum"] = fl(mm[0].double().sum().item(), 4)
        out["ok"] = out["peer_read"] and all(got.values()) and out.get("fused_ag_mm", True)
    except Exception as e:  # reported, and the workload fails
        out["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        out["ok"] = False
    finally:
        q.put(out)


def main():
    world = torch.cuda.device_count()
    if world < 2:
        result(ranks=world, ok=True, skipped="one GPU")
        return
    items, codes = spawn_ranks(rank_main, world, "wl-symm-")
    got = {r["rank"]: r for r in items}
    ok = len(got) == world and all(c == 0 for c in codes) and all(got[r]["ok"] for r in got)
    r0 = got.get(0, {})
    for r in sorted(got):
        print("rank %d: multicast %s" % (r, got[r].get("multicast")), file=sys.stderr)
        if got[r].get("error"):
            print("rank %d: %s" % (r, got[r]["error"]), file=sys.stderr)
    result(ranks=world, exitcodes=codes, peer_read=r0.get("peer_read"), allreduce=r0.get("allreduce"),
           fused_ag_mm=r0.get("fused_ag_mm"), mm_sum=r0.get("mm_sum"), ok=bool(ok),
           ms_per_call=r0["us"] / 1e3 if r0.get("us") else None)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
