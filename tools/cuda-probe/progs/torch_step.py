"""A tiny PyTorch CUDA training step (matmul + relu + backward + SGD update),
checked against float64 on the CPU, and a check of which libcuda.so.1 got
loaded (/proc/self/maps). Run by run-on-gpu.sh through the interposer."""
import os, sys, time


def mark(what):
    p = os.environ.get("VC_PROBE_LOG")
    if p:
        with open(p, "a") as f:
            f.write(f"VCP - {os.getpid()} - - MARK {what}\n")


mark("main-start")
t0 = time.time()
import torch  # noqa: E402

mark("torch-imported")
torch.manual_seed(0)
x = torch.randn(256, 512, device="cuda")
w = torch.randn(512, 128, device="cuda", requires_grad=True)
mark("phase-forward")
y = torch.relu(x @ w)
loss = (y * y).mean()
mark("phase-backward")
loss.backward()
with torch.no_grad():
    w2 = w - 0.01 * w.grad
torch.cuda.synchronize()
mark("phase-check")
xd, wd = x.double().cpu(), w.detach().double().cpu().requires_grad_(True)
yd = torch.relu(xd @ wd)
ld = (yd * yd).mean()
ld.backward()
rel_l = abs(loss.item() - ld.item()) / abs(ld.item())
rel_g = ((w.grad.double().cpu() - wd.grad).norm() / wd.grad.norm()).item()
print(f"torch {torch.__version__} cuda {torch.version.cuda} dev {torch.cuda.get_device_name(0)}")
print(f"loss rel err {rel_l:.3g}, grad rel err {rel_g:.3g}, w2 finite {bool(torch.isfinite(w2).all())}")
# TF32 may be on for matmul by default settings of the build: allow 1e-2
ok = rel_l < 1e-2 and rel_g < 1e-2 and bool(torch.isfinite(w2).all())
maps = open("/proc/self/maps").read().splitlines()
cuda_libs = sorted({l.split()[-1] for l in maps if "libcuda.so" in l})
print("libcuda mappings:", cuda_libs)
want = os.environ.get("VC_PROBE_LIBDIR", "")
interposed = any(want and p.startswith(want) for p in cuda_libs)
print("interposer loaded:", interposed)
mark("main-end")
print("PASS torch" if ok and interposed else "FAIL torch", f"({time.time() - t0:.1f}s)")
sys.exit(0 if ok and interposed else 1)
