"""PyTorch training: an MLP or a torchvision CNN on random data, several
optimiser steps in fp32 or under fp16/bf16 autocast (fp16 with a GradScaler).
Usage: torch_train.py {mlp|cnn} {fp32|fp16|bf16} [steps]
Steps: 8 (one warm-up, seven timed), or $WL_TRAIN_STEPS. The first timed
steps still load kernels the warm-up did not need (the optimiser's momentum
path, cuDNN's); `make bench` times 40 to see the steady state. Each step ends
in reading its loss (a synchronisation), so each is timed too: ms_per_step is
the timed steps' mean, median_step_ms their median, which a step that loads a
kernel or meets a busy machine moves less."""
import statistics
import sys
import time

import torch
import torch.nn as nn

from common import Timer, arg, fl, result, seed_all


def model_for(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(),
                             nn.LayerNorm(1024), nn.Linear(1024, 10)), (256, 512)
    import torchvision
    return torchvision.models.resnet18(num_classes=10), (32, 3, 64, 64)


def main():
    kind, prec = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else int(arg("train_steps", "8"))
    seed_all(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    model, shape = model_for(kind)
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator(device="cpu").manual_seed(1)
    xs = [torch.randn(*shape, generator=g) for _ in range(steps)]
    ys = [torch.randint(0, 10, (shape[0],), generator=g) for _ in range(steps)]
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(prec)
    scaler = torch.amp.GradScaler("cuda", enabled=(prec == "fp16"))
    lossf = nn.CrossEntropyLoss()
    losses = []

    def step(i):
        x, y = xs[i].to(dev, non_blocking=True), ys[i].to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = lossf(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    losses.append(fl(step(0).item()))      # warm-up (libraries load, kernels pick)
    each = []
    with Timer(torch.cuda.synchronize) as t:
        for i in range(1, steps):
            t0 = time.perf_counter()
            losses.append(step(i).item())
            each.append((time.perf_counter() - t0) * 1e3)
    result(losses=[fl(v) for v in losses], ms_per_step=t.ms / max(1, steps - 1),
           median_step_ms=statistics.median(each) if each else 0.0)


if __name__ == "__main__":
    main()
