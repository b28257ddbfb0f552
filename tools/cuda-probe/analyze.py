#!/usr/bin/env python3
"""Summarise cuda-probe logs (log-A.txt, log-B.txt from run-on-gpu.sh) as
Markdown: export tables and the slots each library called, cuGetProcAddress
requests, directly called exports, dlsym lookups, environment variables,
events before main, error returns.

usage: analyze.py LOGDIR > analysis.md
"""
import collections, os, re, sys

LIBCLS = ["rt-static", "rt-shared", "cuBLAS", "cuFFT", "PyTorch"]
NOT_DRIVER = ("cudnn", "cublas", "cufft", "curand", "cusparse", "cusolver", "cupti", "cuda")
ABBR = {"rt-static": "S", "rt-shared": "D", "cuBLAS": "B", "cuFFT": "F", "PyTorch": "T"}


def parse(path):
    """Returns (events, summaries, procs): events in file order as (pid, proc, kind, text);
    summaries: pid -> list of lines of the last summary."""
    events, summ, cur, procs = [], {}, {}, {}
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if not line.startswith("VCP "):
                continue
            p = line.split(" ", 6)
            if len(p) < 6:
                continue
            proc, pid = p[1], p[2]
            if p[3] == "-":  # MARK / ENV / DLSYM lines: VCP - pid - - KIND rest
                rest = line.split(" ", 5)[5]
                kind, _, text = rest.partition(" ")
            else:
                procs[pid] = proc
                rest = p[5] + (" " + p[6] if len(p) > 6 else "")
                kind, _, text = rest.partition(" ")
            if kind == "SUMMARY-BEGIN":
                cur[pid] = []
                continue
            if kind == "SUMMARY-END":
                summ[pid] = cur.pop(pid, [])
                continue
            if pid in cur:
                cur[pid].append((kind, text))
                continue
            events.append((pid, proc, kind, text))
    return events, summ, procs


def kv(text):
    return dict(re.findall(r"(\w+)=(\S*)", text))


def libclass(proc, caller):
    if proc == "drvapi":
        return None
    if proc == "python3":
        return "PyTorch"
    if caller == proc or caller.startswith("<main"):
        return "rt-static"
    if caller.startswith("libcudart.so"):
        return "rt-shared"
    if caller.startswith("libcublas"):
        return "cuBLAS"
    if caller.startswith("libcufft"):
        return "cuFFT"
    return "other:" + caller


def callers(s):
    out = []
    for c in s.split(","):
        if ":" in c:
            o, n = c.rsplit(":", 1)
            out.append((o, int(n)))
    return out


def main():
    d = sys.argv[1]
    A = parse(os.path.join(d, "log-A.txt"))
    B = parse(os.path.join(d, "log-B.txt")) if os.path.exists(os.path.join(d, "log-B.txt")) else ([], {}, {})
    events, summ, procs = A
    w = print

    # ---------------- tables
    tinfo, layout, slots, data = {}, {}, collections.defaultdict(dict), collections.defaultdict(dict)
    treq = collections.defaultdict(lambda: collections.defaultdict(set))
    for pid, proc, kind, text in events:
        k = kv(text)
        if kind == "ETBL" and "uuid" in k:
            u = k["uuid"]
            tinfo.setdefault(u, k)
            c = libclass(proc, k.get("caller", "?"))
            if c:
                treq[u][c].add(proc if c != "PyTorch" else "python3:" + k.get("caller", "?"))
        elif kind == "ETBL-LAYOUT":
            u, lay = text.split()
            layout.setdefault(u.split("=")[1], lay)
        elif kind == "ETBL-SLOT":
            slots[k["uuid"]].setdefault(int(k["slot"]), k["in"])
        elif kind == "ETBL-DATA":
            data[k["uuid"]].setdefault(int(k["slot"]), k["value"])
    # slot calls from the summaries
    calls = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    progs = collections.defaultdict(lambda: collections.defaultdict(set))
    direct = collections.defaultdict(collections.Counter)
    direct_objs = collections.defaultdict(set)
    proc_calls = collections.defaultdict(collections.Counter)
    writes = []
    for pid, lines in summ.items():
        proc = procs.get(pid, "?")
        for kind, text in lines:
            if kind == "S-CALLS":
                k = kv(text)
                cl = callers(k.get("callers", ""))
                if "table" in k:
                    for o, n in cl:
                        c = libclass(proc, o)
                        if c:
                            calls[(k["table"], int(k["slot"]))][c][o] += n
                            progs[(k["table"], int(k["slot"]))][c].add(proc)
                elif "direct" in k:
                    for o, n in cl:
                        c = libclass(proc, o)
                        if c:
                            direct[k["direct"]][c] += n
                            direct_objs[k["direct"]].add(o if proc != "python3" else "python3:" + o)
                elif "proc" in k:
                    for o, n in cl:
                        c = libclass(proc, o)
                        if c:
                            proc_calls[k["proc"]][c] += n
            elif kind.startswith("S-TABLE-"):
                writes.append((proc, kind, text))

    w("## Export tables (pass A, tail-jump mode)\n")
    order = sorted(tinfo, key=lambda u: u)
    for u in order:
        k = tinfo[u]
        req = "; ".join(f"{c}: {', '.join(sorted(v))}" for c, v in sorted(treq[u].items()))
        w(f"### `{u}`\n")
        w(f"- size word: {k.get('sizeword')} (declared qwords {k.get('declared_qwords')}), "
          f"layout of the qwords copied (d=data, c=code, 0=NULL): `{layout.get(u, '?')}`")
        w(f"- requested by: {req}")
        if data.get(u):
            w("- data qwords: " + ", ".join(f"[{s}]={v}" for s, v in sorted(data[u].items())))
        w("")
        w("| slot | driver function | " + " | ".join(LIBCLS) + " | callers |")
        w("|---|---|" + "---|" * len(LIBCLS) + "---|")
        u8 = u[:8]
        nd = int(k.get("declared_qwords", "0")) or int(k.get("leading_code", "0"))
        for s in sorted(slots.get(u, {})):
            cs = calls.get((u8, s), {})
            if not cs and s >= nd:
                continue
            row = []
            for c in LIBCLS:
                n = sum(cs.get(c, {}).values()) if c in cs else 0
                np_ = len(progs[(u8, s)].get(c, ()))
                row.append(f"{n} ({np_}p)" if n else "")
            objs = sorted({o for c in cs for o in cs[c]})
            beyond = " (past size)" if s >= nd else ""
            w(f"| {s}{beyond} | {slots[u][s]} | " + " | ".join(row) + " | " + ", ".join(objs) + " |")
        w("")

    # ---------------- GPA
    gpa = collections.defaultdict(lambda: {"vf": set(), "cls": set(), "called": 0, "status": set()})
    for pid, lines in summ.items():
        proc = procs.get(pid, "?")
        for kind, text in lines:
            if kind != "S-GPA":
                continue
            k = kv(text)
            c = libclass(proc, k.get("caller", "?"))
            if not c:
                continue
            g = gpa[k["sym"]]
            g["vf"].add((int(k["ver"]), int(k["flags"])))
            g["cls"].add(c)
            g["status"].add(k["status"])
            g["called"] += int(k.get("calls_of_target", "0"))
    w("## cuGetProcAddress requests (pass A)\n")
    w(f"{len(gpa)} distinct names requested.\n")
    byclass = collections.Counter()
    for s, g in gpa.items():
        for c in g["cls"]:
            byclass[c] += 1
    w("Names per library: " + ", ".join(f"{c} {n}" for c, n in sorted(byclass.items())) + "\n")
    vfs = collections.Counter(vf for g in gpa.values() for vf in g["vf"])
    w("(cudaVersion, flags) pairs used: " + ", ".join(f"{v}/{f}: {n}" for (v, f), n in sorted(vfs.items())) + "\n")
    notfound = sorted(s for s, g in gpa.items() if g["status"] - {"0"})
    w("Not found / not sufficient (status != 0): " + (", ".join(f"`{s or '(empty name)'}`" for s in notfound) or "none") + "\n")
    w("Full list: `name cudaVersion/flags[,...] [requesters] calls=N`; requesters S = static runtime,"
      " D = libcudart.so.13, B = cuBLAS's runtime, F = cuFFT, T = any library in the PyTorch process;"
      " calls = calls through the handed pointer, summed over all programs (pointers shared by several"
      " names count for each):\n")
    w("```")
    for s in sorted(gpa):
        g = gpa[s]
        vf = ",".join(f"{v}/{f}" for v, f in sorted(g["vf"]))
        cl = "".join(ABBR[c] for c in LIBCLS if c in g["cls"])
        st = "" if g["status"] == {"0"} else " status=" + ",".join(sorted(g["status"]))
        w(f"{s or '(empty name)'} {vf} [{cl}] calls={g['called']}{st}")
    w("```\n")

    # ---------------- direct exports called
    w("## Exported symbols called directly (not through cuGetProcAddress)\n")
    w("| symbol | " + " | ".join(LIBCLS) + " | objects |")
    w("|---|" + "---|" * len(LIBCLS) + "---|")
    own = collections.defaultdict(collections.Counter)
    for pid, proc, kind, text in events:
        if kind == "CALL" and text.startswith("direct="):
            k = kv(text)
            c = libclass(proc, k.get("caller", "?"))
            if c:
                own[k["direct"]][c] += 1
                direct_objs[k["direct"]].add(k.get("caller", "?") if proc != "python3" else "python3:" + k.get("caller", "?"))
    for pid, proc, kind, text in events:
        if kind == "GPA1" or kind == "GPA2" or kind == "ETBL":
            k = kv(text)
            c = libclass(proc, k.get("caller", "?"))
            name = {"GPA1": "cuGetProcAddress", "GPA2": "cuGetProcAddress_v2", "ETBL": "cuGetExportTable"}[kind]
            if c:
                own[name][c] += 0  # presence only (counted in their own sections)
                direct_objs[name].add(k.get("caller", "?") if proc != "python3" else "python3:" + k.get("caller", "?"))
    names = sorted(set(direct) | set(own))
    for s in names:
        row = []
        for c in LIBCLS:
            n = direct[s].get(c, 0) + own[s].get(c, 0)
            row.append(str(n) if n else ("x" if c in own[s] else ""))
        w(f"| {s} | " + " | ".join(row) + " | " + ", ".join(sorted(direct_objs[s])) + " |")
    w("\n(x: called; counts for cuGetProcAddress/cuGetExportTable are in their sections; the C-implemented"
      " cuInit and cuDriverGetVersion are counted once per (process, caller)).\n")

    # ---------------- before main
    w("## Events before main (pass A)\n")
    started, before = set(), collections.defaultdict(collections.Counter)
    for pid, proc, kind, text in events:
        if kind == "MARK" and text.startswith("main-start"):
            started.add(pid)
            continue
        if pid not in started and proc not in ("-", "drvapi", "python3") and kind not in ("START", "REAL"):
            before[proc][kind] += 1
    if before:
        for p, c in sorted(before.items()):
            w(f"- {p}: " + ", ".join(f"{k} x{n}" for k, n in sorted(c.items())))
    else:
        w("- none: in every C program the first driver call came after main started (lazy runtime init).")
    w("")

    # ---------------- table writes / changes
    w("## Tables written by callers / changed by the driver after hand-out\n")
    if writes:
        for proc, kind, text in writes[:40]:
            w(f"- {proc}: {kind} {text}")
    else:
        w("- none observed")
    w("")

    # ---------------- pass B: dlsym, env, error returns, IC
    ev_b, summ_b, procs_b = B
    w("## dlsym lookups of cu* names (pass B)\n")
    ds = collections.defaultdict(set)
    for pid, proc, kind, text in ev_b:
        if kind == "DLSYM":
            k = kv(text)
            if k["name"].startswith(NOT_DRIVER) or ".probe/" in k.get("caller", ""):
                continue  # other libraries' own names; the interposer resolving the real driver
            who = procs_b.get(pid, "?") + ":" + k.get("caller", "?")
            ds[(k["name"], k.get("found"), k.get("handle"))].add(who)
    if ds:
        for (n, f, h), who in sorted(ds.items()):
            w(f"- `{n}` found={f} handle={h}: {', '.join(sorted(who))}")
    else:
        w("- none")
    w("")
    w("## Environment variables read (pass B; CUDA-related callers)\n")
    envs = collections.defaultdict(set)
    skip = re.compile(r"^(libc\.so|libpython|python3|libgomp|libstdc\+\+|libtorch_cpu|libz|ld-linux|<main>)")
    for pid, proc, kind, text in ev_b:
        if kind == "ENV":
            k = kv(text)
            c = k.get("caller", "?")
            if skip.match(os.path.basename(c)):
                continue
            if k["name"].startswith("VC_"):
                continue
            envs[os.path.basename(c) if not c.startswith("/usr/local/nvidia") else "REAL libcuda"].add(
                k["name"] + ("*" if k.get("set") == "1" else ""))
    for c in sorted(envs):
        w(f"- {c}: " + ", ".join(sorted(envs[c])))
    w("\n(* = set in the environment at the time)\n")
    w("## Error returns seen in call-through mode (pass B; first two per entry)\n")
    errs = collections.Counter()
    for pid, lines in summ_b.items():
        proc = procs_b.get(pid, "?")
        for kind, text in lines:
            if kind == "S-CALLS":
                k = kv(text)
                if int(k.get("nonzero_ret", "0")):
                    lab = k.get("table", "") and f"table {k['table']} slot {k['slot']}" or k.get("proc") or k.get("direct")
                    errs[(lab, proc)] += int(k["nonzero_ret"])
    agg = collections.defaultdict(list)
    for (lab, proc), n in errs.items():
        agg[lab].append(f"{proc}:{n}")
    for lab in sorted(agg):
        w(f"- {lab}: " + ", ".join(sorted(agg[lab])))
    w("\n(nonzero low 32 bits of rax; meaningless for functions returning void or pointers)\n")
    w("## Integrity check (d4082055 slot 1)\n")
    ic = collections.Counter()
    for pid, proc, kind, text in events + ev_b:
        if kind == "IC-VERIFY":
            k = kv(text)
            ic[(k.get("match"), k.get("tid"), k.get("dv"), k.get("version"))] += 1
    for (m, t, dv, v), n in sorted(ic.items()):
        w(f"- version {v}: match={m} tid={t} driver_version={dv}: {n} calls")
    w("")


if __name__ == "__main__":
    main()
