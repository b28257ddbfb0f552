"""torch.distributed over NCCL, one process and one GPU (world size 1): the
communicator's set-up (NCCL's own device buffers, host-mapped memory for its
proxy, its kernels), then all_reduce, broadcast, all_gather and
reduce_scatter on the GPU, each checked against what it must give.
steady_ms_per_call: an all_reduce of 4 MiB in a loop (common.steady())."""
import os
import tempfile

import torch
import torch.distributed as dist

from common import fl, result, seed_all, steady


def main():
    seed_all(0)
    store_file = tempfile.NamedTemporaryFile(prefix="wl-nccl-", delete=False).name
    dist.init_process_group("nccl", init_method="file://" + store_file, rank=0, world_size=1,
                            device_id=torch.device("cuda", 0))
    try:
        g = torch.Generator(device="cpu").manual_seed(7)
        x = torch.randn(1 << 20, generator=g).cuda()
        want = x.clone()
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
        ok = torch.equal(x, want)
        b = torch.arange(4096, dtype=torch.float32, device="cuda")
        dist.broadcast(b, src=0)
        ok = ok and torch.equal(b, torch.arange(4096, dtype=torch.float32, device="cuda"))
        out = torch.empty(1 << 20, device="cuda")
        dist.all_gather_into_tensor(out, x)
        ok = ok and torch.equal(out, want)
        rs = torch.empty(1 << 20, device="cuda")
        dist.reduce_scatter_tensor(rs, x, op=dist.ReduceOp.SUM)
        ok = ok and torch.equal(rs, want)
        y = torch.ones(1 << 20, device="cuda")
        dist.all_reduce(y, op=dist.ReduceOp.MAX)
        total = fl(x.double().sum().item(), 8)
        per = steady(lambda: dist.all_reduce(y), torch.cuda.synchronize)
        ok = ok and bool((y == 1).all().item())
        result(sum=total, ok=bool(ok), steady_ms_per_call=per)
    finally:
        dist.destroy_process_group()
        if os.path.exists(store_file):  # the FileStore removes it when the group ends
            os.unlink(store_file)


if __name__ == "__main__":
    main()
