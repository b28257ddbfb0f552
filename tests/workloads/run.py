#!/usr/bin/env python3
"""make test-workloads: real frameworks through vcuda, compared with native.

Each workload (a program in this folder, written for vcuda's tests) runs twice
in the same run on the GPU machine: natively (the machine's NVIDIA driver) and
through vcuda (the guest libcuda.so.1 first on the library path, a
vcuda-server on the real GPU). Its result line must say the same both ways:
exactly for the keys listed as exact, within a stated relative tolerance for
the others, and `ok` (a check the workload makes against a reference) must be
true both ways. Timings (keys ending in _ms, ms, _GBps, tokens_per_s) are
reported, not compared.

  tests/workloads/run.py [--only a,b] [--mode both|native|vcuda] [--repeat N]
                         [--vcuda-build build/release] [--python PY] [--out DIR]
  tests/workloads/run.py --mode guest --expect-dir DIR [--only a,b]

--repeat N (or $WL_REPEAT) runs both modes N times, alternating which goes
first, checks every round's pair, and shows each mode's median and the range
of the rounds' ratios: on a machine whose speed moves by a third between
runs, one run of each says little.

--mode guest runs inside the test VM (tests/vm/framework-run.sh): each
workload once, as the environment is (the guest libcuda.so.1 and the VM's
device), compared with the native run's log DIR/NAME.native.log from the host.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TIMING = ("_ms", "ms", "_GBps", "tokens_per_s", "ms_per_step", "ms_per_call", "ms_per_grad",
          "ms_per_launch", "pin_ms")
QUOTA = 8 << 30

# name, argv, extra env, tolerance for non-exact floats (relative), server
WORKLOADS = [
    ("mlp-fp32", ["torch_train.py", "mlp", "fp32"], {}, 0, "main"),
    ("mlp-fp16", ["torch_train.py", "mlp", "fp16"], {}, 0, "main"),
    ("mlp-bf16", ["torch_train.py", "mlp", "bf16"], {}, 0, "main"),
    ("cnn-fp32", ["torch_train.py", "cnn", "fp32"], {}, 0, "main"),
    ("cnn-fp16", ["torch_train.py", "cnn", "fp16"], {}, 0, "main"),
    ("cnn-bf16", ["torch_train.py", "cnn", "bf16"], {}, 0, "main"),
    ("gpt2-fp16", ["torch_infer.py", "gpt2", "fp16"], {}, 0, "main"),
    ("llama-bf16", ["torch_infer.py", "llama", "bf16"], {}, 0, "main"),
    ("compile-default", ["torch_compile.py", "default"], {}, 1e-5, "main"),
    ("compile-reduce-overhead", ["torch_compile.py", "reduce-overhead"], {}, 1e-5, "main"),
    ("cuda-graph", ["torch_graph.py"], {}, 0, "main"),
    ("triton-softmax", ["triton_kernel.py"], {}, 0, "main"),
    ("expandable-segments", ["torch_memory.py", "expandable"],
     {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, 0, "main"),
    ("pin-memory-2g", ["torch_memory.py", "pinned"], {}, 0, "main"),
    ("mem-get-info-quota", ["torch_memory.py", "meminfo"], {}, 0, "quota"),
    ("cudnn-conv", ["torch_cudnn.py"], {}, 0, "main"),
    ("jax-jit", ["jax_net.py"], {}, 1e-5, "main"),
    ("cupy-libs", ["cupy_libs.py"], {}, 1e-6, "main"),
    ("nccl-1rank", ["torch_nccl.py"], {}, 0, "main"),
    ("cuda-ipc", ["torch_breadth.py", "ipc"], {}, 0, "main"),
    # the same with expandable segments: PyTorch shares them as cuMem POSIX descriptors
    ("cuda-ipc-expandable", ["torch_breadth.py", "ipc"], {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
     0, "main"),
    ("dataloader-pin", ["torch_breadth.py", "dataloader"], {}, 0, "main"),
    ("sdpa-flash", ["torch_breadth.py", "sdpa"], {}, 1e-3, "main"),
    ("bert-train", ["torch_breadth.py", "bert"], {}, 1e-3, "main"),
    ("linalg-libs", ["torch_breadth.py", "linalg"], {}, 0, "main"),
    ("graphed-callables", ["torch_breadth.py", "graphed"], {}, 0, "main"),
    ("profiler-cpu", ["torch_breadth.py", "profiler"], {}, 0, "main"),
    ("fp8-gemm", ["torch_hopper.py", "fp8"], {}, 0, "main"),
    ("triton-tma", ["torch_hopper.py", "tma"], {}, 0, "main"),
    ("compile-max-autotune", ["torch_hopper.py", "autotune"], {}, 1e-2, "main"),
    ("flex-attention", ["torch_hopper.py", "flex"], {}, 1e-3, "main"),
    ("sdpa-cudnn", ["torch_hopper.py", "cudnn-sdpa"], {}, 1e-3, "main"),
    ("jax-pallas", ["jax_pallas.py"], {}, 1e-5, "main"),
    ("multi-gpu", ["torch_multigpu.py"], {}, 1e-5, "main"),
    ("jax-multi-gpu", ["jax_multigpu.py"], {}, 1e-4, "main"),
    ("ddp", ["torch_ddp.py"], {}, 1e-5, "main"),
    ("ddp-legacy-ipc", ["torch_ddp.py"], {"NCCL_CUMEM_ENABLE": "0"}, 1e-5, "main"),
    ("ddp-shm", ["torch_ddp.py"], {"NCCL_P2P_DISABLE": "1"}, 1e-5, "main"),  # NCCL's shared-memory transport
    ("symm-mem", ["torch_symm_mem.py"], {}, 1e-5, "main"),
    ("fsdp", ["torch_fsdp.py"], {}, 1e-4, "main"),
]


def is_timing(k):
    return k.endswith(TIMING)


def parse(out):
    res = None
    for line in out.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
    return res


def close(a, b, tol):
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            return all(close(x, y, tol) for x, y in zip(a, b))
        return a == b
    if tol == 0:
        return a == b
    return abs(a - b) <= tol * max(abs(a), abs(b), 1e-30)


def compare(name, nat, vc, tol):
    """Why vcuda's result differs from native's, or None."""
    if nat is None or vc is None:
        return "no result" + (" natively" if nat is None else " through vcuda")
    for k in sorted(set(nat) | set(vc)):
        if is_timing(k):
            continue
        if k == "total" and name == "mem-get-info-quota":
            if vc.get(k) != QUOTA:
                return "total %s through vcuda, quota %d" % (vc.get(k), QUOTA)
            continue
        if not close(nat.get(k), vc.get(k), tol):
            return "%s: native %s, vcuda %s" % (k, json.dumps(nat.get(k))[:80], json.dumps(vc.get(k))[:80])
    if nat.get("ok") is False:
        return "its own check fails natively"
    if vc.get("ok") is False:
        return "its own check fails through vcuda"
    return None


def start_server(bin_, sock, log, extra):
    p = subprocess.Popen([bin_, "--socket", sock, "--executor", "cuda"] + extra,
                         stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        if os.path.exists(sock):
            return p
        if p.poll() is not None:
            break
        time.sleep(0.05)
    raise SystemExit("vcuda-server did not start (see its log)")


# The one figure a workload is shown by (timing_of) and compared by (ratio_of):
# its time per unit, lower is better, or its rate, higher is better.
HEADLINE_TIMES = ("steady_ms_per_call", "median_step_ms", "ms_per_step", "ms_per_call", "ms_per_grad", "ms_per_launch", "ms", "gemm_ms")
HEADLINE_RATES = ("tokens_per_s", "h2d_GBps")
# Shown after the headline ratio: decode's first pass (torch_infer.py).
SECOND_RATES = ("first_tokens_per_s",)


def second_ratio(nat, vc):
    """The first decode pass's ratio, as " first pass N%", or ""."""
    v = ratio_value(nat, vc, times=(), rates=SECOND_RATES)
    return "" if v is None else " first pass %.0f%%" % v


def timing_of(res):
    if not res:
        return "-"
    for k in HEADLINE_TIMES:
        if k in res:
            return "%.3f ms" % res[k]
    if "tokens_per_s" in res:
        return "%.0f tok/s" % res["tokens_per_s"]
    if "h2d_GBps" in res:
        return "%.1f/%.1f GB/s" % (res["h2d_GBps"], res["d2h_GBps"])
    return "-"


def ratio_value(nat, vc, times=HEADLINE_TIMES, rates=HEADLINE_RATES):
    """vcuda's speed against native's, in percent, as make bench prints it:
    native time / vcuda time, or vcuda rate / native rate (100 = parity,
    higher is better), from the first of @times, else of @rates, both have;
    None when there is no common figure."""
    if not nat or not vc:
        return None
    for k in times:
        if k in nat and k in vc and vc[k] > 0:
            return 100.0 * nat[k] / vc[k]
    for k in rates:
        if k in nat and k in vc and nat[k] > 0:
            return 100.0 * vc[k] / nat[k]
    return None


def ratio_of(nat, vc):
    v = ratio_value(nat, vc)
    return "" if v is None else "%.0f%%" % v


def summary(res):
    if not res:
        return "-"
    keys = [k for k in sorted(res) if not is_timing(k)]
    s = ", ".join("%s=%s" % (k, json.dumps(res[k])) for k in keys)
    return s if len(s) <= 60 else s[:57] + "..."


def check(name, native_log, vcuda_log):
    """--check: compare one run's log with a native one by NAME's rules (the
    soak's check of each framework run); 0 when they agree."""
    tol = next((w[3] for w in WORKLOADS if w[0] == name), None)
    if tol is None:
        print("unknown workload %s" % name)
        return 2
    with open(native_log) as f:
        nat = parse(f.read())
    with open(vcuda_log) as f:
        vc = parse(f.read())
    why = compare(name, nat, vc, tol)
    if why:
        print(why)
        return 1
    return 0


def run_one(a, vb, servers, name, argv, env_extra, srv, mode, k, out):
    """One run of a workload in one mode (round @k): its parsed result (None
    when it failed), exit status, seconds and output, its log written."""
    env = dict(os.environ, PYTHONPATH=HERE, **env_extra)
    if mode == "vcuda" and a.mode != "guest":
        env["LD_LIBRARY_PATH"] = os.path.join(vb, "guest") + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env["VCUDA_SOCKET"] = servers[srv][1]
        env.setdefault("VCUDA_DEBUG", "1")
    t0 = time.time()
    try:
        p = subprocess.run([a.python] + [os.path.join(HERE, argv[0])] + argv[1:], env=env, cwd=HERE,
                           capture_output=True, text=True, timeout=a.timeout)
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        text, rc = "%s%s\nTIMEOUT after %ds" % (e.stdout or "", e.stderr or "", a.timeout), 124
    log = "%s.%s.log" % (name, mode) if not k else "%s.%s.%d.log" % (name, mode, k + 1)
    with open(os.path.join(out, log), "w") as f:
        f.write(text)
    r = parse(text) if rc == 0 else None
    return (r, rc, time.time() - t0, text)


def median_of(results):
    """The rounds' results as one: each headline figure's median (the
    other keys from the first round)."""
    merged = dict(results[0])
    for k in HEADLINE_TIMES + HEADLINE_RATES + SECOND_RATES:
        v = [r[k] for r in results if r and k in r]
        if v:
            merged[k] = statistics.median(v)
    return merged


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--check":
        sys.exit(check(*sys.argv[2:]))
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--mode", default="both", choices=["both", "native", "vcuda", "guest"])
    ap.add_argument("--expect-dir", default=None)
    ap.add_argument("--vcuda-build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--python", default=os.environ.get("WL_PYTHON", "/opt/torch/.venv/bin/python3"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("WL_REPEAT", "1")),
                    help="rounds of both modes, alternating which goes first; the figures "
                         "are the rounds' medians (both modes only)")
    a = ap.parse_args()
    rounds = max(1, a.repeat) if a.mode == "both" else 1
    only = set(filter(None, a.only.split(",")))
    out = a.out or tempfile.mkdtemp(prefix="vcuda-workloads.")
    os.makedirs(out, exist_ok=True)
    vb = os.path.abspath(a.vcuda_build)
    tmp = tempfile.mkdtemp(prefix="vcwl.")
    servers, logs = {}, []
    if a.mode == "guest" and not a.expect_dir:
        raise SystemExit("--mode guest needs --expect-dir")
    if a.mode in ("both", "vcuda"):
        for name, extra in (("main", []), ("quota", ["--mem-quota", str(QUOTA)])):
            log = open(os.path.join(out, "server-%s.log" % name), "w")
            logs.append(log)
            sock = os.path.join(tmp, name + ".sock")
            servers[name] = (start_server(os.path.join(vb, "bin", "vcuda-server"), sock, log, extra), sock)
    rows, fails = [], 0
    try:
        for name, argv, env_extra, tol, srv in WORKLOADS:
            if only and name not in only:
                continue
            res = {}
            if a.mode == "guest":
                if srv != "main":
                    continue  # the VM's server has no quota of its own here
                try:
                    with open(os.path.join(a.expect_dir, "%s.native.log" % name)) as f:
                        res["native"] = (parse(f.read()), 0, 0.0, "")
                except OSError:
                    res["native"] = (None, 1, 0.0, "no native log")
            modes = [m for m in ("native", "vcuda")
                     if a.mode in ("both", m) or (a.mode == "guest" and m == "vcuda")]
            runs = {m: [] for m in modes}
            for k in range(rounds):
                # Alternating which goes first, so that neither mode always
                # meets the machine as the other left it.
                for mode in (modes if k % 2 == 0 else modes[::-1]):
                    runs[mode].append(run_one(a, vb, servers, name, argv, env_extra, srv, mode, k, out))
            for mode in modes:
                res[mode] = runs[mode][0]
            nat = res.get("native", (None,))[0]
            vc = res.get("vcuda", (None,))[0]
            if a.mode in ("both", "guest"):
                why = compare(name, nat, vc, tol)
                for k in range(1, rounds):
                    if why:
                        break
                    why = compare(name, runs["native"][k][0], runs["vcuda"][k][0], tol)
                    if why:  # that round's pair is the one shown
                        res = {m: runs[m][k] for m in modes}
                        why = "round %d: %s" % (k + 1, why)
            else:
                (r, rc, _, _), = res.values()
                why = None if r is not None and r.get("ok") is not False else "rc %d" % rc
            spread = ""
            if rounds > 1 and not why:
                nat = median_of([r for r, _, _, _ in runs["native"]])
                vc = median_of([r for r, _, _, _ in runs["vcuda"]])
                each = [ratio_value(n, v) for (n, _, _, _), (v, _, _, _) in zip(runs["native"], runs["vcuda"])]
                each = [x for x in each if x is not None]
                if each:
                    spread = " (rounds %.0f-%.0f%%)" % (min(each), max(each))
            if why:
                fails += 1
                for mode, (r, rc, _, text) in res.items():
                    if r is None:
                        tail = [l for l in text.splitlines() if l.strip()][-3:]
                        why += "\n      %s rc=%d: %s" % (mode, rc, " | ".join(tail)[:300])
            rows.append((name, "PASS" if not why else "FAIL", summary(nat), summary(vc),
                         timing_of(nat), timing_of(vc), why))
            print("%-26s %s  native %-14s vcuda %-14s %5s%s%s%s" % (name, rows[-1][1], timing_of(nat), timing_of(vc),
                                                                      ratio_of(nat, vc), spread, second_ratio(nat, vc),
                                                                      "" if not why else "\n    " + why), flush=True)
    finally:
        for p, _ in servers.values():
            p.terminate()
            p.wait()
        for log in logs:
            log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("| workload | result | native | vcuda | native time | vcuda time |\n|---|---|---|---|---|---|\n")
        for r in rows:
            f.write("| %s | %s | %s | %s | %s | %s |\n" % r[:6])
    print("%d passed, %d failed (logs and table.md in %s)" % (len(rows) - fails, fails, out))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
