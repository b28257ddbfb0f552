"""A wider PyTorch step through the interposer: cuDNN convolution + batch norm
training step, scaled-dot-product attention (fp16), torch.fft (cuFFT),
torch.linalg.cholesky (cuSOLVER), and a CUDA-graph replay. Each result is
checked against float64 on the CPU."""
import os, sys, time


def mark(what):
    p = os.environ.get("VC_PROBE_LOG")
    if p:
        with open(p, "a") as f:
            f.write(f"VCP - {os.getpid()} - - MARK {what}\n")


def rel(a, b):
    a, b = a.double().cpu(), b.double().cpu()
    return ((a - b).norm() / b.norm()).item()


mark("main-start")
t0 = time.time()
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.manual_seed(1)
ok = True
mark("phase-cudnn")
x = torch.randn(8, 3, 32, 32)
w = torch.randn(16, 3, 3, 3, requires_grad=True)
xc, wc = x.cuda(), w.detach().cuda().requires_grad_(True)
bn = torch.nn.BatchNorm2d(16).cuda()


def net(x, w, bnf):
    y = F.conv2d(x, w, padding=1)
    y = bnf(y)
    return F.max_pool2d(F.relu(y), 2).sum()


loss = net(xc, wc, bn)
loss.backward()
bn_cpu = torch.nn.BatchNorm2d(16).double()
wd = w.detach().double().requires_grad_(True)
ld = net(x.double(), wd, bn_cpu)
ld.backward()
e1 = rel(wc.grad, wd.grad)
print(f"cudnn conv+bn grad rel err {e1:.3g}, backend cudnn {torch.backends.cudnn.version()}")
ok &= e1 < 1e-3
mark("phase-sdpa")
q, k, v = (torch.randn(2, 4, 64, 32, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
o = F.scaled_dot_product_attention(q, k, v)
o.float().sum().backward()
ref = F.scaled_dot_product_attention(q.detach().double().cpu(), k.detach().double().cpu(), v.detach().double().cpu())
e2 = rel(o.detach(), ref)
print(f"sdpa fp16 rel err {e2:.3g}")
ok &= e2 < 5e-3 and bool(torch.isfinite(q.grad).all())
mark("phase-fft")
s = torch.randn(4096, dtype=torch.complex64)
e3 = rel(torch.view_as_real(torch.fft.fft(s.cuda())), torch.view_as_real(torch.fft.fft(s.to(torch.complex128))))
print(f"fft rel err {e3:.3g}")
ok &= e3 < 1e-5
mark("phase-cusolver")
a = torch.randn(64, 64, dtype=torch.float64)
a = a @ a.T + 64 * torch.eye(64, dtype=torch.float64)
e4 = rel(torch.linalg.cholesky(a.cuda()), torch.linalg.cholesky(a))
print(f"cholesky rel err {e4:.3g}")
ok &= e4 < 1e-10
mark("phase-graph")
static_in = torch.randn(1024, device="cuda")
s_ = torch.cuda.Stream()
s_.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s_):
    static_out = static_in * 2 + 1
torch.cuda.current_stream().wait_stream(s_)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    static_out = static_in * 2 + 1
new = torch.randn(1024, device="cuda")
static_in.copy_(new)
g.replay()
torch.cuda.synchronize()
e5 = rel(static_out, new.cpu().double() * 2 + 1)
print(f"graph replay rel err {e5:.3g}")
ok &= e5 < 1e-6
maps = open("/proc/self/maps").read()
interposed = os.environ.get("VC_PROBE_LIBDIR", "?") + "/libcuda.so.1" in maps
print("interposer loaded:", interposed)
mark("main-end")
ok = ok and interposed
print("PASS torch_more" if ok else "FAIL torch_more", f"({time.time() - t0:.1f}s)")
sys.exit(0 if ok else 1)
