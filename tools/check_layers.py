#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_layers.py - host-backend's layering, checked from what was built.

    python3 tools/check_layers.py [-v] BUILD   (e.g. build/release, after make;
                                               -v lists every edge)

host-backend/ is one folder per concern (docs/ARCHITECTURE.md). This script
fails (exit 1, saying what and where) when:

  (a) two source files of host-backend call each other, directly or through a
      longer cycle. The graph comes from the built objects: `nm` on every
      BUILD/obj/host-backend/**/*.o gives each file's defined and undefined
      global symbols; file A depends on file B when A uses a symbol B defines.
      The generated decoder BUILD/obj/gen/vc_cuda_host_gen.o is counted as a
      file of cuda/ (it is linked into the server library with it), and the
      stand-in's generated tables (vc_cuda_driver_unsup_gen.o,
      vc_devprofile_gen.o, linked into the stand-in library) as files of
      standin/, so that a use of them is attributed to the folder that owns
      them;
  (b) a folder uses one it must not (FOLDER_RULES below), through a symbol or
      through an `#include "folder/..."` of a .c or .h file under host-backend/
      (include/vcuda/*.h is the public interface: allowed everywhere; shared/
      and the generated headers are outside host-backend: allowed everywhere);
  (c) headers under host-backend/ include each other in a cycle;
  (d) a hand-written .c file under host-backend/ has more than MAX_LINES lines
      (generated code lives in BUILD/gen and is not counted).

On success it prints one line:
  layers: N files, M edges, no cycles, folder rules hold

Python 3, standard library only; `nm` from binutils (or $NM).
"""

import os
import re
import subprocess
import sys

MAX_LINES = 800

# What each folder of host-backend/ may use besides itself, shared/ (the
# top-level library both sides link) and include/vcuda (the public headers).
# The server program assembles everything; the session core and the CUDA
# executor only meet through include/vcuda/executor.h (the core hands its
# services at open, the server picks the executor), and both charge the
# resources; the stand-in is a driver table and knows nothing of the rest;
# nvml/ is the host's NVML loaded at run time, asked by the executor for the
# guest's NVML and configured by the server program, and uses nothing.
FOLDER_RULES = {
    "core": {"resources"},
    "cuda": {"resources", "nvml"},
    "standin": set(),
    "resources": set(),
    "nvml": set(),
    "server": {"core", "cuda", "standin", "resources", "nvml"},
}
PUBLIC = "include"

# Generated objects and the folder whose library links them (Makefile:
# LIBSERVER, LIBSTANDIN). They are nodes of the graph like the hand-written
# files, named gen/<name>.c, and are not held to the line limit.
GENERATED = {
    "vc_cuda_host_gen": "cuda",
    "vc_cuda_driver_unsup_gen": "standin",
    "vc_devprofile_gen": "standin",
}

# Pairs of files allowed to call each other (a cycle made only of such
# edges is not reported). Considered: the generated decoder
# (gen/vc_cuda_host_gen.c) and the hand-written handlers of cuda/ -- the
# decoder calls the vc_cu_manual_* handlers and the handle table (handles.c),
# and a handler calling back into the decoder would make a cycle the
# generator forces on us. None does: vc_cu_dispatch() is called only by
# exec.c, which no handler file calls. (Operation names for logs,
# vc_cu_op_name(), are generated apart, into vc_cuda_opnames_gen.c, which is
# linked with shared/: the session core names operations without reaching
# into the executor.) So nothing is allowed; an entry here would be
# ("cuda/x.c", "gen/vc_cuda_host_gen.c"), both directions, with the reason.
ALLOWED_MUTUAL = set()

# Symbols the sanitizers and the toolchain put in every object.
IGNORED_SYMBOL = re.compile(r"^_*(asan|odr_asan|ubsan|tsan|sanitizer|sancov|gcov|llvm)")

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def fail_usage(msg):
    print("check_layers: " + msg, file=sys.stderr)
    sys.exit(2)


def folder_of(node):
    """The host-backend folder of node 'cuda/exec.c' or 'gen/vc_cuda_host_gen.c'."""
    if node.startswith("gen/"):
        return GENERATED[node[4:-2]]
    return node.split("/", 1)[0]


def nm_symbols(nm, obj):
    """(defined, undefined) global symbols of object @obj."""
    try:
        res = subprocess.run([nm, "-P", "-g", obj], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, check=False)
    except OSError as e:
        fail_usage("cannot run %s: %s" % (nm, e))
    if res.returncode != 0:
        fail_usage("%s %s failed: %s" % (nm, obj, res.stderr.strip()))
    defined, undefined = set(), set()
    for line in res.stdout.splitlines():
        f = line.split()
        if len(f) < 2 or f[0].endswith(":"):
            continue
        name, kind = f[0], f[1]
        if IGNORED_SYMBOL.match(name):
            continue
        # U: undefined; w, v: weak and undefined (a weak one with a value
        # is W or V). Everything else -g lists is defined here.
        if kind == "U" or (kind in "wv" and len(f) < 3):
            undefined.add(name)
        else:
            defined.add(name)
    return defined, undefined


def find_cycle(graph, scc):
    """One cycle through the nodes of strongly connected component @scc, as a list."""
    members = set(scc)
    start = sorted(scc)[0]
    # Breadth-first from start's successors back to start, inside the component.
    prev = {}
    queue = [n for n in sorted(graph.get(start, ())) if n in members]
    for n in queue:
        prev.setdefault(n, start)
    i = 0
    while i < len(queue):
        n = queue[i]
        i += 1
        if n == start:
            break
        for m in sorted(graph.get(n, ())):
            if m in members and m not in prev:
                prev[m] = n
                queue.append(m)
    path = [start]
    n = prev[start]
    while n != start:
        path.append(n)
        n = prev[n]
    path.append(start)
    path.reverse()
    return path


def sccs(graph):
    """Tarjan's strongly connected components with more than one node (iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def check_calls(root, build, problems, verbose):
    """The file-level call graph from the objects; returns (files, edges)."""
    hb = os.path.join(root, "host-backend")
    obj_hb = os.path.join(build, "obj", "host-backend")
    nm = os.environ.get("NM", "nm")
    if not os.path.isdir(obj_hb):
        fail_usage("%s: no objects (build it first: make VARIANT=... )" % obj_hb)

    objects = {}  # node -> object path
    for d, _, files in os.walk(hb):
        for f in files:
            if f.endswith(".c"):
                rel = os.path.relpath(os.path.join(d, f), hb)
                o = os.path.join(obj_hb, rel[:-2] + ".o")
                if not os.path.isfile(o):
                    fail_usage("%s: missing (build %s first)" % (o, build))
                objects[rel] = o
    for g in GENERATED:
        o = os.path.join(build, "obj", "gen", g + ".o")
        if not os.path.isfile(o):
            fail_usage("%s: missing (build %s first)" % (o, build))
        objects["gen/%s.c" % g] = o
    # Objects left by a source file that is gone (renamed, split) are not
    # linked any more: say so, and leave them out.
    for d, _, files in os.walk(obj_hb):
        for f in files:
            if f.endswith(".o"):
                rel = os.path.relpath(os.path.join(d, f), obj_hb)[:-2] + ".c"
                if rel not in objects:
                    print("check_layers: note: %s has no source any more: ignored" % os.path.join(d, f),
                          file=sys.stderr)

    defined, undefined, definer = {}, {}, {}
    for node, o in sorted(objects.items()):
        defined[node], undefined[node] = nm_symbols(nm, o)
        for s in defined[node]:
            definer.setdefault(s, []).append(node)

    graph = {n: set() for n in objects}
    why = {}  # (a, b) -> symbols a uses of b
    for a in sorted(objects):
        for s in sorted(undefined[a]):
            for b in definer.get(s, ()):
                if b != a:
                    graph[a].add(b)
                    why.setdefault((a, b), []).append(s)

    def label(a, b):
        syms = why.get((a, b), [])
        more = ", ..." if len(syms) > 3 else ""
        return "%s -> %s (%s%s)" % (a, b, ", ".join(syms[:3]), more)

    if verbose:
        for (a, b) in sorted(why):
            print("edge: " + label(a, b))

    # (a) cycles, less the allowed pairs.
    checked = {a: {b for b in bs if (a, b) not in ALLOWED_MUTUAL} for a, bs in graph.items()}
    for comp in sccs(checked):
        cyc = find_cycle(checked, comp)
        problems.append("call cycle among %d files (%s); one of its cycles: %s\n    %s" % (
            len(comp), ", ".join(sorted(comp)), " -> ".join(cyc),
            "\n    ".join(label(cyc[i], cyc[i + 1]) for i in range(len(cyc) - 1))))

    # (b) folder rules, by symbol.
    for (a, b) in sorted(why):
        fa, fb = folder_of(a), folder_of(b)
        if fa != fb and fb not in FOLDER_RULES[fa]:
            problems.append("folder rule: %s/ must not use %s/: %s" % (fa, fb, label(a, b)))

    return len(objects), sum(len(bs) for bs in graph.values())


def check_sources(root, problems):
    """Includes (folder rules, header cycles) and file lengths."""
    hb = os.path.join(root, "host-backend")
    incs = {}  # file (relative to host-backend) -> included host-backend files
    for d, _, files in os.walk(hb):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, hb)
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
            if f.endswith(".c") and len(lines) > MAX_LINES:
                problems.append("length: host-backend/%s has %d lines (at most %d)" % (rel, len(lines), MAX_LINES))
            incs[rel] = set()
            folder = rel.split(os.sep, 1)[0]
            for no, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                # As the compiler looks: the including file's folder, then
                # -Ihost-backend/include and -Ihost-backend (Makefile INC).
                target = None
                for base in (d, os.path.join(hb, "include"), hb):
                    cand = os.path.normpath(os.path.join(base, name))
                    if os.path.isfile(cand) and cand.startswith(hb + os.sep):
                        target = os.path.relpath(cand, hb)
                        break
                if target is None:
                    # Not a host-backend file (shared/, generated), unless it
                    # names a host-backend folder and is missing.
                    first = name.split("/", 1)[0]
                    if "/" in name and first in FOLDER_RULES:
                        target = name
                    else:
                        continue
                incs[rel].add(target)
                tf = target.split(os.sep, 1)[0].split("/", 1)[0]
                if tf != folder and tf != PUBLIC and tf not in FOLDER_RULES.get(folder, set()):
                    problems.append('folder rule: %s/ must not include %s/: host-backend/%s:%d: #include "%s"' % (
                        folder, tf, rel, no, name))
    graph = {a: {b for b in bs if b in incs} for a, bs in incs.items()}
    for comp in sccs(graph):
        problems.append("include cycle: %s" % " -> ".join(find_cycle(graph, comp)))


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    args = [a for a in args if a != "-v"]
    if len(args) != 1 or args[0].startswith("-"):
        fail_usage("usage: check_layers.py [-v] BUILD   (e.g. build/release; -v lists every edge)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.path.abspath(args[0])
    problems = []
    nfiles, nedges = check_calls(root, build, problems, verbose)
    check_sources(root, problems)
    if problems:
        for p in problems:
            print("check_layers: " + p)
        print("layers: %d files, %d edges, %d problem%s" % (nfiles, nedges, len(problems),
                                                           "" if len(problems) == 1 else "s"))
        return 1
    print("layers: %d files, %d edges, no cycles, folder rules hold" % (nfiles, nedges))
    return 0


if __name__ == "__main__":
    sys.exit(main())
