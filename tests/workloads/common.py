"""Helpers shared by the workloads: each workload is a small program that
prints one line `RESULT <json>` with what it computed (losses, tokens,
checksums) and how long its timed part took; tests/workloads/run.py runs
each natively and through vcuda in the same run and compares."""
import json
import os
import statistics
import sys
import time


def seed_all(seed=0):
    import random
    random.seed(seed)
    try:
        import numpy as np
        np.random.seed(seed)
    except ImportError:
        pass
    try:
        import torch
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
    except ImportError:
        pass


class Timer:
    """Wall time of a section, in ms, after a device synchronisation."""

    def __init__(self, sync=None):
        self.sync = sync or (lambda: None)

    def __enter__(self):
        self.sync()
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *a):
        self.sync()
        self.ms = (time.perf_counter() - self.t0) * 1e3


def steady(call, sync, blocks=5):
    """Steady-state time of @call in ms: @blocks blocks of $WL_CALLS calls
    (default 50) after one untimed block, each block ended by @sync (a
    device synchronisation: the calls' work is in the time, as a loop of
    them would wait for it); the median block's time per call. What a
    program calling it in a loop sees, once its first calls (compiles,
    library loads, first launches) are behind it."""
    n = max(1, int(arg("calls", "50")))
    per = []
    for b in range(blocks + 1):
        sync()
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        sync()
        if b:
            per.append((time.perf_counter() - t0) * 1e3 / n)
    return statistics.median(per)


def result(**kw):
    """Print the workload's result line (the runner reads the last one)."""
    sys.stdout.flush()
    print("RESULT " + json.dumps(kw, sort_keys=True))
    sys.stdout.flush()


def fl(x, nd=6):
    """A float rounded for printing; comparisons use the runner's tolerance."""
    return float("%.*g" % (nd, float(x)))


def arg(name, default=None):
    return os.environ.get("WL_" + name.upper(), default)


def _rank_entry(rank_main, limit, rank, world, store, q):
    """One rank: its GPU, NCCL's process group over the file store (made
    eagerly, for that GPU), rank_main, and the group destroyed after it,
    whatever rank_main did. A rank that outlives @limit seconds prints every
    thread's stack to stderr and exits, so that a hang says where it is."""
    import faulthandler

    import torch
    import torch.distributed as dist

    faulthandler.dump_traceback_later(limit, exit=True)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + store, rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    try:
        rank_main(rank, world, store, q)
    finally:
        dist.destroy_process_group()


def spawn_ranks(rank_main, world, prefix):
    """Run rank_main(rank, world, store, queue) in @world spawned processes,
    as torchrun starts them (each process its own CUDA context and, through
    vcuda, its own session), each with its GPU and NCCL's process group
    ready (_rank_entry), with a file store for their rendezvous. Returns
    what the ranks put on the queue and their exit codes."""
    import tempfile

    import torch.multiprocessing as mp

    store = tempfile.NamedTemporaryFile(prefix=prefix, delete=False).name
    os.unlink(store)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    limit = float(arg("rank_timeout", "120"))
    procs = [ctx.Process(target=_rank_entry, args=(rank_main, limit, r, world, store, q)) for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=limit + 10)
    got = []
    while not q.empty():
        got.append(q.get())
    if os.path.exists(store):
        os.unlink(store)
    return got, [p.exitcode for p in procs]
