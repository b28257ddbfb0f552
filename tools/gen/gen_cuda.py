#!/usr/bin/env python3
"""Generate vcuda's CUDA driver API layer from tools/gen/cuda_api.py.

  gen_cuda.py --cuda-include DIR --out DIR

reads the preprocessed cuda.h (prototypes and typedefs), the stub library's
exported symbol list (tools/gen/libcuda.symbols), the measured
cuGetProcAddress map (tools/gen/procaddr.tsv) and the API description, and
writes into DIR:

  vc_cuda_wire.h        opcodes and request/reply structs (part of the ABI)
  vc_cuda_guest_gen.c   guest stubs for the generated functions
  vc_cuda_exports_gen.c per-thread-stream variants and the cuGetProcAddress table
  vc_cuda_unsup_gen.c   every other exported symbol (CUDA_ERROR_NOT_SUPPORTED)
  vc_cuda_manual_gen.h  the hand-written host handlers the dispatch expects
  vc_cuda_driver_gen.h  the host's table of real driver entry points
  vc_cuda_host_gen.c    host decoders: copy, validate, look up handles, call

Every generated function is readable C; hand-written code covers what is
special (launch, copies, modules, contexts, host memory, export tables).
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cuda_api  # noqa: E402

OP_BASE = 0x1000

SCALARS = {
    "int": ("int32_t", 4), "unsigned int": ("uint32_t", 4), "unsigned": ("uint32_t", 4),
    "size_t": ("uint64_t", 8), "unsigned long long": ("uint64_t", 8), "long long": ("int64_t", 8),
    "float": ("float", 4), "double": ("double", 8), "char": ("int8_t", 1),
    "unsigned char": ("uint8_t", 1), "short": ("int16_t", 2), "unsigned short": ("uint16_t", 2),
    "cuuint32_t": ("uint32_t", 4), "cuuint64_t": ("uint64_t", 8), "uint32_t": ("uint32_t", 4),
    "uint64_t": ("uint64_t", 8), "int32_t": ("int32_t", 4), "int64_t": ("int64_t", 8),
    "long unsigned int": ("uint64_t", 8), "unsigned long": ("uint64_t", 8),
    "long int": ("int64_t", 8), "long": ("int64_t", 8),
}

# Handle kinds that hand-written code uses besides those in generated calls.
EXTRA_HANDLES = ["CUcontext", "CUmodule", "CUlibrary", "CUkernel", "CUfunction", "CUstream",
                 "CUevent", "CUmemoryPool", "CUgraph", "CUgraphExec", "CUgraphNode",
                 "CUlinkState",  # the host's link records (link.c)
                 "VcOpaque"]  # driver objects from export tables, never shown to the guest


class Types:
    def __init__(self, text):
        self.alias = {}
        self.handles = set()
        self.enums = set()
        self.structs = {}
        for m in re.finditer(r"typedef\s+struct\s+\w+\s*\*\s*(\w+)\s*;", text):
            self.handles.add(m.group(1))
        for m in re.finditer(r"typedef\s+enum\s*\w*\s*\{[^}]*\}\s*(\w+)\s*;", text):
            self.enums.add(m.group(1))
        for m in re.finditer(r"typedef\s+enum\s+\w+\s+(\w+)\s*;", text):
            self.enums.add(m.group(1))
        for m in re.finditer(r"typedef\s+struct\s*\w*\s*\{([^{}]*)\}\s*(\w+)\s*;", text):
            self.structs[m.group(2)] = "*" not in m.group(1) and "(" not in m.group(1)
        for m in re.finditer(r"typedef\s+([\w ]+?)\s+(\w+)\s*;", text):
            base, name = m.group(1).strip(), m.group(2)
            if base.startswith(("struct", "enum")):
                continue
            self.alias[name] = base
        # struct aliases: typedef CUuuid_st CUuuid; typedef struct CUuuid_st CUuuid;
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s+(\w+)\s*;", text):
            if m.group(1) in self.structs:
                self.structs[m.group(2)] = self.structs[m.group(1)]

    def resolve(self, t):
        seen = 0
        while t in self.alias and seen < 20:
            t = self.alias[t]
            seen += 1
        return t

    def kind(self, t):
        """'scalar', 'handle', 'enum', 'struct' or None, and the wire type."""
        t = t.replace("const ", "").strip()
        if t in SCALARS:
            return "scalar", SCALARS[t][0]
        if t in self.handles:
            return "handle", "uint64_t"
        r = self.resolve(t)
        if r in self.handles:
            return "handle", "uint64_t"
        if t in self.enums or r in self.enums:
            return "enum", "int32_t"
        if r in SCALARS:
            return "scalar", SCALARS[r][0]
        if t in self.structs or r in self.structs:
            return ("struct", None) if self.structs.get(t, self.structs.get(r)) else (None, None)
        return None, None


def parse_protos(text):
    protos = {}
    for m in re.finditer(r"CUresult\s+(cu\w+)\s*\(([^;{]*?)\)\s*;", text, re.S):
        name, args = m.group(1), " ".join(m.group(2).split())
        params = []
        if args and args != "void":
            for a in args.split(","):
                a = a.strip()
                pm = re.match(r"(.*?)(\w+)\s*(\[\s*\d*\s*\])?$", a)
                ptype, pname = pm.group(1).strip(), pm.group(2)
                if pm.group(3):
                    ptype += " *"
                params.append((ptype, pname))
        protos.setdefault(name, params)
    return protos


class Param:
    def __init__(self, ptype, name, types, spec):
        self.ptype, self.name = ptype, name
        self.c_type = ptype
        base = ptype.replace("*", "").strip()
        self.ptr = ptype.count("*")
        self.const = base.startswith("const ")
        base = base.replace("const ", "").strip()
        self.base = base
        self.kind, self.wire = types.kind(base)
        self.nullable = name in spec.get("nullable", [])
        self.buf = spec.get("buf", {}).get(name)
        if self.ptr == 0:
            self.dir = "in"
        elif self.ptr == 1 and base == "char" and self.const:
            self.dir = "str"
        elif self.ptr == 1 and base == "char" and self.buf:
            self.dir = "buf"
        elif self.ptr == 1 and not self.const and self.kind in ("scalar", "handle", "enum", "struct"):
            self.dir = "out"
        elif self.ptr == 1 and self.const and self.kind == "struct":
            self.dir = "sin"
        else:
            self.dir = None
        if self.kind is None and self.dir not in ("str", "buf"):
            self.dir = None
        self.is_stream = base == "CUstream"


def field(p, out):
    """Wire field declarations for a parameter (in request or reply)."""
    if p.kind == "struct":
        return ["uint8_t %s[sizeof(%s)];" % (p.name, p.base)]
    return ["%s %s;" % (p.wire, p.name)]


def build(args):
    inc = args.cuda_include
    # cudaProfiler.h holds the profiler's driver entry points (it includes cuda.h).
    pp = subprocess.run(["cc", "-E", "-P", "-D__CUDA_API_VERSION_INTERNAL", "-I", inc,
                         "-include", os.path.join(inc, "cudaProfiler.h"),
                         os.path.join(inc, "cuda.h")], capture_output=True, text=True, check=True).stdout
    types = Types(pp)
    protos = parse_protos(pp)
    symbols = [s.strip() for s in open(os.path.join(HERE, "libcuda.symbols")) if s.strip() and not s.startswith("#")]
    procmap = []
    for line in open(os.path.join(HERE, "procaddr.tsv")):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        procmap.append((f[0], int(f[1]), int(f[2]), f[3]))

    funcs = []
    seen = set()
    for spec in cuda_api.FUNCS:
        if spec["symbol"] in seen:
            sys.exit("gen_cuda: %s is described twice in cuda_api.py" % spec["symbol"])
        seen.add(spec["symbol"])
    for i, spec in enumerate(cuda_api.FUNCS):
        sym = spec["symbol"]
        if spec.get("refused") and not spec.get("local"):
            # Answered by a generated stub with its error code (no prototype needed).
            if "err" not in spec:
                sys.exit("gen_cuda: %s: refused without err=" % sym)
            funcs.append(dict(spec, params=[], op=OP_BASE + i, generated=False, remote=False))
            continue
        if spec.get("virtual"):
            funcs.append(dict(spec, params=[], op=OP_BASE + i, generated=False, remote=True))
            continue
        if sym not in protos:
            sys.exit("gen_cuda: %s: no prototype in cuda.h" % sym)
        params = [Param(t, n, types, spec) for t, n in protos[sym]]
        generated = not spec.get("local") and not spec.get("manual")
        if generated:
            for p in params:
                if p.dir is None:
                    sys.exit("gen_cuda: %s: cannot generate parameter '%s %s'; mark it manual" % (sym, p.ptype, p.name))
                if p.dir == "buf" and not any(q.name == p.buf for q in params):
                    sys.exit("gen_cuda: %s: buffer %s names no length parameter %s" % (sym, p.name, p.buf))
        funcs.append(dict(spec, params=params, op=OP_BASE + i, generated=generated,
                          remote=not spec.get("local")))
    return types, protos, symbols, procmap, funcs


def emit_wire(funcs):
    o = ["/* generated by tools/gen/gen_cuda.py from tools/gen/cuda_api.py: do not edit */",
         "#ifndef VC_CUDA_WIRE_H", "#define VC_CUDA_WIRE_H", "", "#include <assert.h>",
         "#include <stdint.h>", "#include <cuda.h>", "",
         "#define VC_CU_OP_BASE 0x%x" % OP_BASE, "#define VC_CU_STR_MAX 4096u",
         "/* A reply: its struct in the first VC_CU_REP_MAX bytes, data after. */",
         "#define VC_CU_REP_MAX 256u", "",
         "/* Every request starts with the guest thread's current context id. */",
         "struct vc_cu_prefix {", "\tuint64_t ctx;", "};", "", "enum vc_cu_op {"]
    for f in funcs:
        if f["remote"]:
            o.append("\tVC_CU_%s = 0x%x," % (f["symbol"], f["op"]))
    o += ["\tVC_CU_OP_END_ = 0x%x" % (OP_BASE + len(funcs)), "};", "",
          "/** vc_cu_op_name() - the name of CUDA operation @op, \"?\" when unknown (for logs). */",
          "const char *vc_cu_op_name(uint32_t op);", ""]
    for f in funcs:
        if not f["generated"]:
            continue
        s = f["symbol"]
        req = ["uint64_t cur_ctx; /* struct vc_cu_prefix */"]
        rep = []
        for p in f["params"]:
            if p.dir == "in" or p.dir == "sin":
                req += field(p, False)
            elif p.dir == "str":
                req.append("uint32_t %s_len; /* bytes of %s (NUL included) after the struct */" % (p.name, p.name))
            elif p.dir == "buf":
                pass
            elif p.dir == "out":
                rep += field(p, True)
                if p.nullable:
                    req.append("uint8_t want_%s;" % p.name)
        o.append("struct vc_cu_req_%s {" % s)
        o += ["\t" + x for x in req]
        o.append("} __attribute__((aligned(8)));")
        o.append("struct vc_cu_rep_%s {" % s)
        o += ["\t" + x for x in (rep or ["uint64_t none_;"])]
        o.append("} __attribute__((aligned(8)));")
        o.append("static_assert(sizeof(struct vc_cu_rep_%s) <= VC_CU_REP_MAX, \"reply fits\");" % s)
        o.append("")
    # Only what the host looks up: guest-local functions' handles never travel.
    kinds = sorted({p.base for f in funcs if f["remote"] for p in f["params"] if p.kind == "handle"}
                   | set(EXTRA_HANDLES))
    o.append("/* Kinds of handle the host keeps a table of. */")
    o.append("enum vc_cu_handle_kind {")
    for i, k in enumerate(kinds):
        o.append("\tVC_H_%s = %d," % (k.upper(), i + 1))
    o.append("\tVC_H_KIND_END_")
    o.append("};")
    o.append("")
    o += ["#endif /* VC_CUDA_WIRE_H */", ""]
    return "\n".join(o)


def proto(f, name=None):
    args = ", ".join("%s %s" % (p.ptype if "*" in p.ptype else p.ptype, p.name) for p in f["params"]) or "void"
    args = args.replace("* ", "*").replace(" *", " *")
    return "CUresult CUDAAPI %s(%s)" % (name or f["symbol"], args)


def emit_guest(funcs):
    o = ["/* generated by tools/gen/gen_cuda.py: guest stubs; do not edit */",
         "#include <string.h>", "", '#include "vc_cuda_wire.h"', '#include "vc_cu_guest.h"', ""]
    for f in funcs:
        if not f["generated"]:
            continue
        s, ps = f["symbol"], f["params"]
        if f.get("wrap"):
            # Hand-written code exports the symbol and calls this stub.
            o.append(proto(f, "vc_gen_" + s) + ";")
            o.append(proto(f, "vc_gen_" + s))
        else:
            o.append(proto(f))
        o.append("{")
        o.append("\tstruct vc_cu_req_%s rq;" % s)
        o.append("\tstruct vc_cu_rep_%s rp;" % s)
        strs = [p for p in ps if p.dir == "str"]
        bufs = [p for p in ps if p.dir == "buf"]
        if f["mode"] != cuda_api.ASYNC:
            o.append("\tCUresult rc;")
        if strs:
            o.append("\tsize_t %s;" % ", ".join("n_" + p.name for p in strs))
        o.append("")
        o.append("\tmemset(&rq, 0, sizeof(rq));")
        for p in ps:
            if p.dir == "out" and not p.nullable:
                o.append("\tif (!%s)\n\t\treturn CUDA_ERROR_INVALID_VALUE;" % p.name)
            if p.dir in ("str",):
                o.append("\tif (!%s)\n\t\treturn CUDA_ERROR_INVALID_VALUE;" % p.name)
                o.append("\tn_%s = strnlen(%s, VC_CU_STR_MAX) + 1;" % (p.name, p.name))
                o.append("\tif (n_%s > VC_CU_STR_MAX)\n\t\treturn CUDA_ERROR_INVALID_VALUE;" % p.name)
                o.append("\trq.%s_len = (uint32_t)n_%s;" % (p.name, p.name))
            if p.dir == "buf":
                o.append("\tif (!%s || %s <= 0)\n\t\treturn CUDA_ERROR_INVALID_VALUE;" % (p.name, p.buf))
            if p.dir == "in":
                if p.is_stream:
                    o.append("\trq.%s = vc_cu_stream_id(%s);" % (p.name, p.name))
                elif p.kind == "handle":
                    o.append("\trq.%s = (uint64_t)(uintptr_t)%s;" % (p.name, p.name))
                elif p.kind == "struct":
                    o.append("\tmemcpy(rq.%s, &%s, sizeof(rq.%s));" % (p.name, p.name, p.name))
                else:
                    o.append("\trq.%s = (%s)%s;" % (p.name, p.wire, p.name))
            if p.dir == "sin":
                o.append("\tif (!%s)\n\t\treturn CUDA_ERROR_INVALID_VALUE;" % p.name)
                o.append("\tmemcpy(rq.%s, %s, sizeof(rq.%s));" % (p.name, p.name, p.name))
            if p.dir == "out" and p.nullable:
                o.append("\trq.want_%s = %s != NULL;" % (p.name, p.name))
        data = "NULL, 0"
        if strs:
            if len(strs) > 1:
                sys.exit("gen_cuda: %s: more than one string parameter" % s)
            data = "%s, n_%s" % (strs[0].name, strs[0].name)
        outbuf = "NULL, 0"
        if bufs:
            outbuf = "%s, (size_t)%s" % (bufs[0].name, bufs[0].buf)
        if f["mode"] == cuda_api.ASYNC:
            o.append("\t(void)rp;")
            o.append("\treturn vc_cu_submit(VC_CU_%s, &rq, sizeof(rq), %s);" % (s, data))
        else:
            o.append("\trc = vc_cu_call(VC_CU_%s, &rq, sizeof(rq), %s, &rp, sizeof(rp), %s, %d);"
                     % (s, data, outbuf, 1 if f.get("syncs") else 0))
            o.append("\tif (rc != CUDA_SUCCESS)\n\t\treturn rc;")
            for p in ps:
                if p.dir != "out":
                    continue
                guard = "if (%s)\n\t\t" % p.name if p.nullable else ""
                if p.kind == "handle":
                    o.append("\t%s*%s = (%s)(uintptr_t)rp.%s;" % (guard, p.name, p.base, p.name))
                elif p.kind == "struct":
                    o.append("\t%smemcpy(%s, rp.%s, sizeof(rp.%s));" % (guard, p.name, p.name, p.name))
                else:
                    o.append("\t%s*%s = (%s)rp.%s;" % (guard, p.name, p.base, p.name))
            if f.get("after"):
                o.append("\t%s();" % f["after"])
            if f.get("post"):
                o.append("\treturn %s(%s);" % (f["post"][0], ", ".join(f["post"][1])))
            else:
                o.append("\treturn CUDA_SUCCESS;")
        o.append("}")
        o.append("")
    return "\n".join(o)


def emit_driver(funcs, protos, extra):
    names = []
    for f in funcs:
        if f["remote"] and not f.get("virtual"):
            names.append(f["symbol"])
    for e in extra:
        if e not in names:
            names.append(e)
    o = ["/* generated by tools/gen/gen_cuda.py: the host's real driver entry points */",
         "#ifndef VC_CUDA_DRIVER_GEN_H", "#define VC_CUDA_DRIVER_GEN_H", "",
         "#include <string.h>", "", "#include <cuda.h>", "", "struct vc_cuda_driver {"]
    for n in names:
        if n not in protos:
            sys.exit("gen_cuda: driver entry %s: no prototype" % n)
        args = ", ".join(t for t, _ in protos[n]) or "void"
        o.append("\tCUresult (*%s)(%s);" % (n, args))
    o += ["};", "",
          "/* Resolve every entry with @sym (dlsym-like); the name of the first",
          " * missing one in *@missing. Returns 0 or -1. */",
          "static inline int vc_cuda_driver_resolve(struct vc_cuda_driver *d,",
          "\t\t\t\t\t void *(*sym)(void *h, const char *name), void *h,",
          "\t\t\t\t\t const char **missing)",
          "{",
          "\tvoid *f;",
          ""]
    for n in names:
        o.append('\tif (!(f = sym(h, "%s"))) {\n\t\t*missing = "%s";\n\t\treturn -1;\n\t}' % (n, n))
        o.append("\tmemcpy(&d->%s, &f, sizeof(f));" % n)
    o += ["\treturn 0;", "}", "", "#endif", ""]
    return "\n".join(o), names


def host_arg(p):
    if p.dir == "in":
        if p.kind == "handle":
            return "h_%s" % p.name
        if p.kind == "struct":
            return "v_%s" % p.name
        return "(%s)rq.%s" % (p.base, p.name)
    if p.dir == "sin":
        return "&v_%s" % p.name
    if p.dir == "str":
        return "s_%s" % p.name
    if p.dir == "buf":
        return "(char *)out_data"
    if p.dir == "out":
        ref = "&o_%s" % p.name
        return "rq.want_%s ? %s : NULL" % (p.name, ref) if p.nullable else ref
    raise AssertionError


def hook_arg(ps, a):
    """An argument of a host_pre/host_post hook: an output parameter by
    address, an input parameter by its wire value, anything else verbatim
    (a constant)."""
    p = next((q for q in ps if q.name == a), None)
    if p is None:
        return a
    if p.dir == "out":
        return "&o_" + a
    if p.dir == "in" and p.kind != "struct":
        return "rq." + a
    sys.exit("gen_cuda: hook argument %s: only outputs and scalar or handle inputs" % a)


def emit_opnames(funcs):
    """Every CUDA operation's name: wire knowledge, linked with shared/."""
    o = ["/* generated by tools/gen/gen_cuda.py from tools/gen/cuda_api.py: do not edit */",
         "#include <stdint.h>", "", '#include "vc_cuda_wire.h"', ""]
    o.append("const char *vc_cu_op_name(uint32_t op)")
    o.append("{")
    o.append("\tswitch (op) {")
    for f in funcs:
        if f["remote"]:
            o.append('\tcase VC_CU_%s:\n\t\treturn "%s";' % (f["symbol"], f["symbol"]))
    o.append('\tdefault:\n\t\treturn "?";')
    o.append("\t}")
    o.append("}")
    o.append("")
    return "\n".join(o)


def emit_host(funcs):
    o = ["/* generated by tools/gen/gen_cuda.py: host decoders; do not edit */",
         "#include <errno.h>", "#include <string.h>", "", '#include "vc_cuda_wire.h"',
         '#include "cuda/exec_priv.h"', '#include "vcuda/server.h"', ""]
    for f in funcs:
        if not f["generated"]:
            continue
        s, ps = f["symbol"], f["params"]
        o.append("static int d_%s(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)" % s)
        o.append("{")
        o.append("\tstruct vc_cu_req_%s rq;" % s)
        o.append("\tstruct vc_cu_rep_%s rp;" % s)
        o.append("\tCUresult rc;")
        for p in ps:
            if p.dir == "in" and p.kind == "handle":
                o.append("\t%s h_%s;" % (p.base, p.name))
            if p.dir in ("in", "sin") and p.kind == "struct":
                o.append("\t%s v_%s;" % (p.base, p.name))
            if p.dir == "str":
                o.append("\tconst char *s_%s;" % p.name)
            if p.dir == "out":
                o.append("\t%s o_%s;" % (p.base, p.name))
        if any(p.dir == "buf" for p in ps):
            o.append("\tuint8_t *out_data;")
        o.append("")
        o.append("\tif (len < sizeof(rq))\n\t\treturn -VC_FATAL_PAYLOAD;")
        o.append("\tmemcpy(&rq, p, sizeof(rq));")
        o.append("\tmemset(&rp, 0, sizeof(rp));")
        for p in ps:
            if p.dir == "out":
                o.append("\tmemset(&o_%s, 0, sizeof(o_%s));" % (p.name, p.name))
        if not f.get("ctx_free"):
            o.append("\tif ((rc = vc_cu_enter(x, rq.cur_ctx)))\n\t\treturn rc;")
        for p in ps:
            if p.dir == "in" and p.kind == "handle" and p.base == "CUfunction":
                o.append("\tif ((rc = vc_cu_lookup_func(x, rq.%s, (void **)&h_%s, NULL)))\n\t\treturn rc;" % (p.name, p.name))
            elif p.dir == "in" and p.kind == "handle":
                kind = "VC_H_" + p.base.upper()
                o.append("\tif ((rc = vc_cu_lookup(x, %s, rq.%s, (void **)&h_%s)))\n\t\treturn rc;" % (kind, p.name, p.name))
            if p.dir in ("in", "sin") and p.kind == "struct":
                o.append("\tmemcpy(&v_%s, rq.%s, sizeof(v_%s));" % (p.name, p.name, p.name))
            if p.dir == "str":
                o.append("\tif (!(s_%s = vc_cu_string(p + sizeof(rq), len - (uint32_t)sizeof(rq), rq.%s_len)))"
                         "\n\t\treturn -VC_FATAL_PAYLOAD;" % (p.name, p.name))
            if p.dir == "buf":
                o.append("\tif (rq.%s <= 0 || (uint64_t)rq.%s > out->data_cap)\n\t\treturn CUDA_ERROR_INVALID_VALUE;"
                         % (next(q for q in ps if q.name == p.buf).name, p.buf))
                o.append("\tout_data = out->data;")
        call = "x->drv->%s(%s)" % (s, ", ".join(host_arg(p) for p in ps))
        if f.get("host_pre"):
            hp, hargs = f["host_pre"]
            o.append("\tif ((rc = %s(x, %s)))\n\t\treturn rc;" % (hp, ", ".join(hook_arg(ps, a) for a in hargs)))
        o.append("\trc = %s;" % call)
        o.append("\tif (rc != CUDA_SUCCESS)\n\t\treturn rc;")
        if f.get("host_post"):
            hp, hargs = f["host_post"]
            o.append("\tif ((rc = %s(x, %s)))\n\t\treturn rc;" % (hp, ", ".join(hook_arg(ps, a) for a in hargs)))
        for p in ps:
            if p.dir != "out":
                continue
            if p.kind == "handle":
                kind = "VC_H_" + p.base.upper()
                owner = f.get("owner")
                if owner == "ctx":
                    pub = "vc_cu_publish_owned(x, %s, o_%s, &rp.%s)" % (kind, p.name, p.name)
                elif owner:
                    if not any(q.name == owner and q.dir == "in" and q.kind == "handle" for q in ps):
                        sys.exit("gen_cuda: %s: owner %s is no handle parameter" % (s, owner))
                    pub = "vc_cu_publish_child(x, %s, o_%s, rq.%s, &rp.%s)" % (kind, p.name, owner, p.name)
                else:
                    pub = "vc_cu_publish(x, %s, o_%s, &rp.%s)" % (kind, p.name, p.name)
                o.append("\tif ((rc = %s))\n\t\treturn rc;" % pub)
            elif p.kind == "struct":
                o.append("\tmemcpy(rp.%s, &o_%s, sizeof(rp.%s));" % (p.name, p.name, p.name))
            else:
                o.append("\trp.%s = (%s)o_%s;" % (p.name, p.wire, p.name))
        if f.get("destroys"):
            d = next(q for q in ps if q.name == f["destroys"])
            o.append("\tvc_cu_forget(x, VC_H_%s, rq.%s);" % (d.base.upper(), d.name))
        for p in ps:
            if p.dir == "buf":
                # the string with its terminator, as the driver wrote it
                # (a truncated one without, where the driver left none)
                o.append("\tout->data_len = (uint32_t)strnlen((char *)out_data, (size_t)rq.%s);" % p.buf)
                o.append("\tif (out->data_len < (uint32_t)rq.%s)" % p.buf)
                o.append("\t\tout->data_len++;")
        o.append("\tmemcpy(out->rep, &rp, sizeof(rp));")
        o.append("\tout->rep_len = sizeof(rp);")
        o.append("\treturn CUDA_SUCCESS;")
        o.append("}")
        o.append("")
    o.append("int vc_cu_dispatch(struct vc_cu_session *x, uint32_t op, const uint8_t *p, uint32_t len, struct vc_cu_out *out)")
    o.append("{")
    o.append("\tswitch (op) {")
    for f in funcs:
        if not f["remote"]:
            continue
        if f["generated"]:
            o.append("\tcase VC_CU_%s:\n\t\treturn d_%s(x, p, len, out);" % (f["symbol"], f["symbol"]))
        else:
            o.append("\tcase VC_CU_%s:\n\t\treturn vc_cu_manual_%s(x, p, len, out);" % (f["symbol"], f["symbol"]))
    o.append("\tdefault:\n\t\treturn -VC_FATAL_OP;")
    o.append("\t}")
    o.append("}")
    o.append("")
    return "\n".join(o)


def emit_manual_decls(funcs):
    o = ["/* generated by tools/gen/gen_cuda.py: hand-written host handlers it expects */",
         "#ifndef VC_CUDA_MANUAL_GEN_H", "#define VC_CUDA_MANUAL_GEN_H", ""]
    for f in funcs:
        if f["remote"] and not f["generated"]:
            o.append("int vc_cu_manual_%s(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out);"
                     % f["symbol"])
    o += ["", "#endif", ""]
    return "\n".join(o)


def refused_funcs(funcs):
    """The entries answered by a generated refusal stub: {symbol: spec}."""
    return {f["symbol"]: f for f in funcs if f.get("refused") and not f.get("local")}


def refused_variant(sym, refused):
    """The refused entry that exported symbol @sym is a per-thread variant of, or None."""
    m = re.match(r"(cu\w+?)_(ptsz|ptds)$", sym)
    return refused.get(m.group(1)) if m else None


def classify(funcs, symbols, protos):
    """How each exported symbol is served: {symbol: (disposition, detail)}, with
    disposition one of generated, manual, local, virtual, ptds (detail: the base
    function), alias (detail: the function), refused (detail: the entry), or
    unsupported (the NOT_SUPPORTED catch-all). The one rule for the stubs
    (emit_exports) and the coverage report (gen_coverage.py)."""
    refused = refused_funcs(funcs)
    implemented = {f["symbol"] for f in funcs if f["symbol"] not in refused}
    byname = {f["symbol"]: f for f in funcs}
    out = {}
    for f in funcs:
        if f["symbol"] in refused:
            out[f["symbol"]] = ("refused", f)
        elif f.get("virtual"):
            out[f["symbol"]] = ("virtual", None)
        elif f["generated"]:
            out[f["symbol"]] = ("generated", None)
        elif f.get("manual"):
            out[f["symbol"]] = ("manual", None)
        else:
            out[f["symbol"]] = ("local", None)
    for sym in symbols:
        m = re.match(r"(cu\w+?)_(ptsz|ptds)$", sym)
        if sym in out or not m:
            continue
        # A variant cuda.h declares no prototype for (cuMemMapArrayAsync_ptsz)
        # takes its base's: the per-thread forms differ only in the stream.
        if m.group(1) in implemented and (sym in protos or m.group(1) in protos):
            out[sym] = ("ptds", byname[m.group(1)])
        elif refused_variant(sym, refused):
            out[sym] = ("refused", refused_variant(sym, refused))
    # Older or newer variants with the very same prototype (cuEventDestroy and
    # cuEventDestroy_v2, cuDevicePrimaryCtxRelease and _v2, ...) are the same
    # function: the runtime asks for whichever its version knows.
    bysig = {}
    for f in funcs:
        if f["symbol"] in protos and f["symbol"] in implemented:
            base = re.sub(r"_v\d+$", "", f["symbol"])
            bysig[(base, tuple(t for t, _ in protos[f["symbol"]]))] = f
    for sym in symbols:
        if sym in out or sym not in protos:
            continue
        f = bysig.get((re.sub(r"_v\d+$", "", sym), tuple(t for t, _ in protos[sym])))
        if f:
            out[sym] = ("alias", f)
    for sym in symbols:
        out.setdefault(sym, ("unsupported", None))
    return out


def error_codes(inc):
    """CUresult names to their values, from cuda.h's enum."""
    text = open(os.path.join(inc, "cuda.h")).read()
    body = re.search(r"typedef enum cudaError_enum \{(.*?)\} CUresult;", text, re.S).group(1)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(CUDA_\w+)\s*=\s*(\d+)", body)}


def emit_exports(funcs, symbols, procmap, protos, codes=None):
    """Per-thread-stream variants, unsupported and refused entry points, the procaddr table."""
    disp = classify(funcs, symbols, protos)
    refused = refused_funcs(funcs)
    implemented = {f["symbol"] for f in funcs if f["symbol"] not in refused}
    o = ["/* generated by tools/gen/gen_cuda.py: per-thread default stream variants",
         " * and the cuGetProcAddress table measured from the real driver; do not edit */",
         "#include <stddef.h>", "", '#include "vc_cuda_wire.h"', '#include "vc_cu_guest.h"', ""]
    ptds = []
    for sym in symbols:
        if disp[sym][0] != "ptds":
            continue
        base = disp[sym][1]
        sp = [p for p in base["params"] if p.is_stream]
        o.append(proto(base, sym))
        o.append("{")
        if sp:
            o.append("\t/* The calling thread's default stream, as the _ptsz/_ptds variants mean. */")
            o.append("\tif (!%s)\n\t\t%s = CU_STREAM_PER_THREAD;" % (sp[0].name, sp[0].name))
        o.append("\treturn %s(%s);" % (base["symbol"], ", ".join(p.name for p in base["params"])))
        o.append("}")
        o.append("")
        ptds.append(sym)
    aliases = []
    for sym in symbols:
        if disp[sym][0] != "alias":
            continue
        f = disp[sym][1]
        o.append(proto(f, sym))
        o.append("{")
        o.append("\treturn %s(%s);" % (f["symbol"], ", ".join(p.name for p in f["params"])))
        o.append("}")
        o.append("")
        aliases.append(sym)
    done = implemented | set(ptds) | set(aliases)
    unsupported = [s for s in symbols if disp[s][0] == "unsupported"]
    refusals = [s for s in symbols if disp[s][0] == "refused"]
    refusals += [s for s in refused if s not in symbols]
    exported = set(symbols) | done | set(refusals)
    # Addresses by assembler name, so that no C prototype can conflict.
    table = [(n, v, fl, sym) for n, v, fl, sym in sorted(procmap) if sym != "-" and sym in exported]
    used = sorted({t[3] for t in table})
    for i, sym in enumerate(used):
        o.append('extern const char vca_%d[] __asm__("%s");' % (i, sym))
    idx = {sym: i for i, sym in enumerate(used)}
    o.append("")
    o.append("const struct vc_procaddr_entry vc_procaddr_table[] = {")
    for n, v, fl, sym in table:
        o.append('\t{"%s", %d, %d, vca_%d},' % (n, v, fl, idx[sym]))
    o.append("};")
    o.append("const size_t vc_procaddr_count = %d;" % len(table))
    o.append("")
    u = ["/* generated by tools/gen/gen_cuda.py: driver entry points vcuda does not",
         " * implement. Exported so that programs that link or dlsym them load; each",
         " * answers CUDA_ERROR_NOT_SUPPORTED and names itself once when VCUDA_DEBUG",
         " * is set. No cuda.h here: the real prototypes do not matter to a function",
         " * that ignores its arguments. */",
         "int vc_cu_unsupported(const char *name);", ""]
    for s in unsupported:
        u.append("int %s(void);" % s)
        u.append('int %s(void) { return vc_cu_unsupported("%s"); }' % (s, s))
    u += ["", "/* Refused on purpose (tools/gen/cuda_api.py says why): the driver's own",
          " * error code, and the reason named once when VCUDA_DEBUG is set. */",
          "int vc_cu_refused(const char *name, const char *reason, int err);", ""]
    for s in refusals:
        f = disp[s][1] if s in disp else refused[s]
        if f["err"] not in (codes or {}):
            sys.exit("gen_cuda: %s: unknown error code %s" % (s, f["err"]))
        u.append("int %s(void);" % s)
        u.append('int %s(void) { return vc_cu_refused("%s", "%s", %d); } /* %s */'
                 % (s, s, f["refused"].replace("\\", "\\\\").replace('"', '\\"'), codes[f["err"]], f["err"]))
    u.append("")
    return "\n".join(o), "\n".join(u)


def emit_driver_unsup(names, protos):
    """Typed stand-ins answering CUDA_ERROR_NOT_SUPPORTED for every driver entry
    (the CI stand-in driver starts from these and overrides what it fakes)."""
    o = ["/* generated by tools/gen/gen_cuda.py: every driver entry answering",
         " * CUDA_ERROR_NOT_SUPPORTED, for the CI stand-in driver; do not edit */",
         '#include "vc_cuda_driver_gen.h"', '#include "standin/standin.h"', ""]
    for n in names:
        ps = protos[n]
        args = ", ".join("%s a%d" % (t, i) for i, (t, _) in enumerate(ps)) or "void"
        o.append("static CUresult ns_%s(%s)" % (n, args))
        o.append("{")
        for i in range(len(ps)):
            o.append("\t(void)a%d;" % i)
        o.append("\treturn CUDA_ERROR_NOT_SUPPORTED;")
        o.append("}")
        o.append("")
    o.append("void vc_cuda_driver_fill_unsupported(struct vc_cuda_driver *d)")
    o.append("{")
    for n in names:
        o.append("\td->%s = ns_%s;" % (n, n))
    o.append("}")
    o.append("")
    return "\n".join(o)


def emit_devprofile(path):
    """The recorded device profile (tests/data) as a C table."""
    attrs, facts = {}, {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        k, v = line.rstrip("\n").split("\t", 1)
        if k.startswith("attr."):
            if not v.startswith("error"):
                attrs[int(k[5:])] = int(v)
        else:
            facts[k] = v
    o = ["/* generated by tools/gen/gen_cuda.py from %s */" % os.path.relpath(path, os.path.dirname(HERE) + "/.."),
         '#include "standin/standin.h"', "",
         'const char vc_standin_device_name[] = "%s";' % facts["name"].replace('"', ""),
         "const unsigned long long vc_standin_device_total_mem = %sull;" % facts["total_mem"],
         "const int vc_standin_driver_version = %s;" % facts["driver_version"],
         "const int vc_standin_attrs[%d] = {" % (max(attrs) + 1)]
    for a in sorted(attrs):
        o.append("\t[%d] = %d," % (a, attrs[a]))
    o += ["};", "const int vc_standin_nattrs = %d;" % (max(attrs) + 1), ""]
    return "\n".join(o)


def emit_errors(inc):
    """CUresult names and descriptions: names from cuda.h's enum; descriptions
    from tools/gen/errors.tsv (measured from the real driver) when it has them,
    else from the enum's doc comment."""
    text = open(os.path.join(inc, "cuda.h")).read()
    body = re.search(r"typedef enum cudaError_enum \{(.*?)\} CUresult;", text, re.S).group(1)
    measured = {}
    path = os.path.join(HERE, "errors.tsv")
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("#") or not line.strip():
                continue
            code, name, desc = line.rstrip("\n").split("\t")
            measured[int(code)] = (name, desc)
    entries = []
    for m in re.finditer(r"/\*\*(.*?)\*/\s*(CUDA_\w+)\s*=\s*(\d+)", body, re.S):
        doc = " ".join(m.group(1).replace("*", " ").split())
        first = re.split(r"(?<=[.])\s", doc)[0].rstrip(".")
        code = int(m.group(3))
        name, desc = measured.get(code, (m.group(2), first))
        entries.append((code, name, desc))
    o = ["/* generated by tools/gen/gen_cuda.py from cuda.h (and tools/gen/errors.tsv) */",
         "#include <stddef.h>", "", '#include "vc_cu_guest.h"', "",
         "const struct vc_cu_errstr vc_cu_errors[] = {"]
    for code, name, desc in sorted(entries):
        o.append('\t{%d, "%s", "%s"},' % (code, name, desc.replace("\\", "\\\\").replace('"', '\\"')))
    o += ["};", "const size_t vc_cu_nerrors = %d;" % len(entries), ""]
    return "\n".join(o)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    ap.add_argument("--out", required=True)
    ap.add_argument("--driver-extra", default=os.path.join(HERE, "driver_extra.txt"))
    ap.add_argument("--devprofile", default=os.path.join(HERE, "..", "..", "tests", "data", "devprofile-h200.tsv"))
    a = ap.parse_args()
    types, protos, symbols, procmap, funcs = build(a)
    extra = [l.strip() for l in open(a.driver_extra) if l.strip() and not l.startswith("#")]
    os.makedirs(a.out, exist_ok=True)
    drv, drv_names = emit_driver(funcs, protos, extra)
    exports, unsup = emit_exports(funcs, symbols, procmap, protos, error_codes(a.cuda_include))
    outs = {
        "vc_cuda_wire.h": emit_wire(funcs),
        "vc_cuda_guest_gen.c": emit_guest(funcs),
        "vc_cuda_exports_gen.c": exports,
        "vc_cuda_unsup_gen.c": unsup,
        "vc_cuda_driver_gen.h": drv,
        "vc_cuda_host_gen.c": emit_host(funcs),
        "vc_cuda_opnames_gen.c": emit_opnames(funcs),
        "vc_cuda_manual_gen.h": emit_manual_decls(funcs),
        "vc_cuda_errors_gen.c": emit_errors(a.cuda_include),
        "vc_cuda_driver_unsup_gen.c": emit_driver_unsup(drv_names, protos),
        "vc_devprofile_gen.c": emit_devprofile(a.devprofile),
    }
    for name, text in outs.items():
        path = os.path.join(a.out, name)
        if os.path.exists(path) and open(path).read() == text:
            continue
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
