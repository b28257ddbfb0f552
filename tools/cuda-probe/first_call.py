"""First and second call of PyTorch operations that no earlier call needed:
the first pays the driver's lazy loading of the kernels' module (cudart
loads a fatbin's library when one of its kernels is first launched), the
second is the operation alone. Run it natively and through vcuda in the same
session to see what a lazy load costs each way (docs/PERFORMANCE.md).
Prints "name<TAB>first ms<TAB>second ms" per operation."""
import time

import torch
import torch.nn.functional as F


def main():
    dev = torch.device("cuda")
    x = torch.randn(4096, device=dev)
    torch.cuda.synchronize()
    m = x[:1024].view(32, 32)
    img = torch.randn(2, 3, 32, 32, device=dev)
    w = torch.randn(8, 3, 3, 3, device=dev)
    ops = [
        ("exp", lambda: x.exp()),
        ("cumsum", lambda: x.cumsum(0)),
        ("sort", lambda: x.sort()),
        ("topk", lambda: x.topk(5)),
        ("argmax", lambda: x.argmax()),
        ("softmax", lambda: torch.softmax(x, 0)),
        ("layer_norm", lambda: F.layer_norm(x, (4096,))),
        ("gelu", lambda: F.gelu(x)),
        ("unique", lambda: torch.unique(x)),
        ("bf16_add", lambda: x.bfloat16() + 1),
        ("fp16_matmul", lambda: m.half() @ m.half()),
        ("conv2d", lambda: F.conv2d(img, w)),
        ("max_pool", lambda: F.max_pool2d(img, 2)),
        ("index_add", lambda: torch.zeros(16, device=dev).index_add_(0, torch.arange(16, device=dev), x[:16])),
    ]
    total = 0.0
    for name, f in ops:
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        f()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        total += t1 - t0
        print(f"{name}\t{(t1 - t0) * 1e3:.2f}\t{(t2 - t1) * 1e3:.3f}")
    print(f"total_first\t{total * 1e3:.1f}\t")


if __name__ == "__main__":
    main()
