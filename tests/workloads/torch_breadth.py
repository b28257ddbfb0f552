"""PyTorch features beyond the training loops, one per run, each checked
against itself and compared with native by the runner:
  ipc         a CUDA tensor handed to a spawned process (CUDA IPC), which
              reads it and writes it in place
  dataloader  a DataLoader with two workers and pin_memory, its batches
              copied to the GPU asynchronously
  sdpa        flash attention, forward and backward, fp16
  bert        three fused-AdamW steps of a small BERT (transformers, random
              weights) under bf16 autocast
  linalg      SVD, eigvalsh and solve (cuSOLVER), a CSR matmul (cuSPARSE),
              an rfft2 (cuFFT)
  graphed     torch.cuda.make_graphed_callables: forward and backward
              replayed as CUDA graphs in five optimiser steps
  profiler    torch.profiler around a matmul: it must run and list the CPU
              operator (GPU activity through vcuda is not recorded:
              docs/ARCHITECTURE.md)
Usage: torch_breadth.py CASE"""
import sys

import torch

from common import Timer, fl, result, seed_all


def ipc_child(q, r):
    t = q.get()
    r.put(float(t.sum()))
    t.add_(1)
    torch.cuda.synchronize()


def case_ipc():
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    q, r = ctx.Queue(), ctx.Queue()
    t = torch.arange(1000, dtype=torch.float32, device="cuda")
    p = ctx.Process(target=ipc_child, args=(q, r))
    p.start()
    q.put(t)
    seen = r.get(timeout=120)
    p.join(120)
    after = float(t.sum())
    return dict(seen=seen, after=after, ok=p.exitcode == 0 and seen == 499500.0 and after == 500500.0)


def case_dataloader():
    from torch.utils.data import DataLoader, TensorDataset
    g = torch.Generator().manual_seed(0)
    ds = TensorDataset(torch.randn(2048, 64, generator=g), torch.randint(0, 10, (2048,), generator=g))
    tot, pinned = 0.0, True
    for x, y in DataLoader(ds, batch_size=256, num_workers=2, pin_memory=True):
        pinned = pinned and x.is_pinned()
        tot += float(x.cuda(non_blocking=True).double().sum() + y.cuda(non_blocking=True).sum())
    want = float(ds.tensors[0].double().sum() + ds.tensors[1].sum())
    return dict(total=fl(tot, 9), ok=pinned and abs(tot - want) < 1e-6 * max(1.0, abs(want)))


def case_sdpa():
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = torch.randn(4, 8, 256, 64, dtype=torch.float16).cuda().requires_grad_()
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        o = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        o.sum().backward()
    ref = F.scaled_dot_product_attention(q.float(), q.float(), q.float(), is_causal=True)
    return dict(out=fl(o.float().sum()), grad=fl(q.grad.float().abs().sum()),
                ok=float((o.float() - ref).abs().max()) < 1e-2)


def case_bert():
    from transformers import BertConfig, BertForSequenceClassification
    cfg = BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024)
    m = BertForSequenceClassification(cfg).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (8, 128)).cuda()
    lab = torch.randint(0, 2, (8,)).cuda()
    losses = []
    with Timer(torch.cuda.synchronize) as t:
        for _ in range(3):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = m(input_ids=ids, labels=lab).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(fl(loss.item()))
    return dict(losses=losses, ok=all(l == l for l in losses), ms=t.ms)


def case_linalg():
    a = torch.randn(256, 256, dtype=torch.float64).cuda()
    s = torch.linalg.svdvals(a)
    e = torch.linalg.eigvalsh(a @ a.T)
    x = torch.linalg.solve(a, torch.ones(256, 1, dtype=torch.float64).cuda())
    sp = torch.randn(512, 512).cuda().relu().to_sparse_csr()
    y = sp @ torch.ones(512, 4).cuda()
    f = torch.fft.rfft2(torch.ones(64, 64).cuda())
    resid = float((a @ x - 1).abs().max())
    return dict(svd=fl(s.sum()), eig=fl(e.max()), sparse=fl(y.sum()), fft=fl(f.abs().sum()),
                ok=resid < 1e-8 and abs(float(f.abs().sum()) - 4096.0) < 1e-3)


def case_graphed():
    m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).cuda()
    x = torch.randn(32, 64).cuda().requires_grad_()
    g = torch.cuda.make_graphed_callables(m, (x,))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    sums = []
    for _ in range(5):
        out = g(torch.randn(32, 64).cuda().requires_grad_())
        out.sum().backward()
        opt.step()
        opt.zero_grad()
        sums.append(fl(out.sum().item()))
    return dict(sums=sums, ok=all(v == v for v in sums))


def case_profiler():
    from torch.profiler import ProfilerActivity, profile
    x = torch.randn(512, 512).cuda()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        y = x @ x
        torch.cuda.synchronize()
    names = {e.key for e in p.key_averages()}
    return dict(sum=fl(y.sum().item()), ok="aten::mm" in names)


def main():
    seed_all(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    res = globals()["case_" + sys.argv[1]]()
    result(**res)


if __name__ == "__main__":
    main()
