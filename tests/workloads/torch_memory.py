"""PyTorch memory paths. Usage: torch_memory.py {expandable|pinned|meminfo}
  expandable  a training step with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
              (set by the runner), growing and freeing tensors
  pinned      pin_memory() of 2 GiB and non_blocking copies both ways (GB/s)
  meminfo     torch.cuda.mem_get_info and memory stats (under a server quota,
              the runner compares with the quota)"""
import os
import sys

import torch
import torch.nn as nn

from common import Timer, fl, result, seed_all


def expandable():
    seed_all(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    m = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    g = torch.Generator(device="cpu").manual_seed(6)
    losses = []
    keep = []
    for i in range(6):
        x = torch.randn(512 * (i + 1), 1024, generator=g).cuda()
        loss = m(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(fl(loss.item()))
        keep.append(torch.empty(64 << 20, dtype=torch.uint8, device="cuda"))   # 64 MiB each
    del keep
    torch.cuda.empty_cache()
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    result(losses=losses, conf=conf)


def pinned():
    n = int(os.environ.get("WL_PINNED_MB", "2048")) << 20
    with Timer() as ta:
        h = torch.empty(n, dtype=torch.uint8).pin_memory()
    h[:: 4096] = 7
    d = torch.empty(n, dtype=torch.uint8, device="cuda")
    s = torch.cuda.Stream()
    rates = {}
    for name, fn in (("h2d", lambda: d.copy_(h, non_blocking=True)),
                     ("d2h", lambda: h.copy_(d, non_blocking=True))):
        with torch.cuda.stream(s):
            fn()
        s.synchronize()
        with Timer(s.synchronize) as t:
            with torch.cuda.stream(s):
                for _ in range(3):
                    fn()
        rates[name + "_GBps"] = fl(3 * n / (t.ms / 1e3) / 1e9, 3)
    ok = bool(h.is_pinned()) and int(d[:: 4096].sum().item()) == 7 * (n // 4096)
    result(ok=ok, pin_ms=fl(ta.ms, 3), **rates)


def meminfo():
    free, total = torch.cuda.mem_get_info()
    x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    free2, total2 = torch.cuda.mem_get_info()
    st = torch.cuda.memory_stats()
    result(total=total, drop_mib=round((free - free2) / 2**20), same_total=total == total2,
           allocated=st["allocated_bytes.all.current"], x=x.numel())


if __name__ == "__main__":
    {"expandable": expandable, "pinned": pinned, "meminfo": meminfo}[sys.argv[1]]()
