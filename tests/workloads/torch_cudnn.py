"""cuDNN convolution forward and backward (fp32 and fp16), checked against
the same computation on the CPU in float64."""
import torch
import torch.nn.functional as F

from common import fl, result, seed_all


def main():
    seed_all(0)
    torch.backends.cudnn.allow_tf32 = False
    g = torch.Generator(device="cpu").manual_seed(8)
    x = torch.randn(8, 16, 32, 32, generator=g)
    w = torch.randn(32, 16, 3, 3, generator=g) * 0.1
    out = {}
    for dt, tol in ((torch.float32, 1e-3), (torch.float16, 5e-2)):
        xd = x.cuda().to(dt).requires_grad_()
        wd = w.cuda().to(dt).requires_grad_()
        y = F.conv2d(xd, wd, padding=1)
        y.square().sum().backward()
        xr = x.double().requires_grad_()
        wr = w.double().requires_grad_()
        yr = F.conv2d(xr, wr, padding=1)
        yr.square().sum().backward()
        rel = lambda a, b: ((a.double().cpu() - b).abs().max() / b.abs().max()).item()
        errs = [rel(y, yr), rel(xd.grad, xr.grad), rel(wd.grad, wr.grad)]
        name = str(dt).split(".")[-1]
        out[name + "_ok"] = max(errs) < tol
        out[name + "_sum"] = fl(y.double().sum().item(), 4)
    out["ok"] = all(v for k, v in out.items() if k.endswith("_ok"))
    result(**out)


if __name__ == "__main__":
    main()
