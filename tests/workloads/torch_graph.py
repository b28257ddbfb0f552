"""torch.cuda.graph capture and replay of a model with Linear layers (cuBLAS
inside the capture), replayed on new inputs copied into the static input. ms: the five checked
replays with their copies and eager comparisons; steady_ms_per_call: replays
alone in a loop (common.steady())."""
import torch
import torch.nn as nn

from common import Timer, fl, result, seed_all, steady


def main():
    seed_all(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    m = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 256)).cuda()
    static_x = torch.zeros(128, 256, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            m(static_x)                          # warm-up on a side stream, as documented
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_y = m(static_x)
    g = torch.Generator(device="cpu").manual_seed(4)
    sums, errs = [], []
    with Timer(torch.cuda.synchronize) as t:
        for _ in range(5):
            x = torch.randn(128, 256, generator=g).cuda()
            static_x.copy_(x)
            graph.replay()
            with torch.no_grad():
                errs.append((static_y - m(x)).abs().max().item())
            sums.append(fl(static_y.double().sum().item(), 5))
    per_replay = steady(graph.replay, torch.cuda.synchronize)
    result(sums=sums, ok=max(errs) < 1e-4, ms=t.ms, steady_ms_per_call=per_replay)


if __name__ == "__main__":
    main()
