#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_copies.py - the hand-kept copies of vcuda's VM ABI agree with their origins.

    python3 tools/check_copies.py [-v]      (from anywhere; -v lists every item)

Two interfaces of the VM path are defined in vcuda and copied by hand into
the QEMU patches (qemu-patches/), which must stay plain patch files, and a
third into the guest driver, which is built against a kernel's headers alone:

  shared/vc_vm.h                  the link between QEMU's virtio-vcuda device
                                  and vcuda-server (frames, their type enum);
      copied into QEMU's include/hw/virtio/virtio-vcuda.h, next to QEMU's own
      definitions: only the names of vc_vm.h's namespace (VC_VM_*, vc_vm_*)
      are compared there.
  guest-lib/kmod/virtio_vcuda.h   the device as the guest driver sees it
                                  (config space, control queue, events);
      copied verbatim into QEMU's include/standard-headers/linux/virtio_vcuda.h,
      and its device id into include/standard-headers/linux/virtio_ids.h.
  shared/vc_gpin.h                the guest-pin area that vcuda.ko and the
                                  session's worker share;
      copied into guest-lib/kmod/vcuda_gpin.h with the kernel's types.

A copy inside the patch series is rebuilt by applying, in order, every hunk
of qemu-patches/*.patch that touches its path (a file that the series only
modifies contributes the lines its hunks show).

From each side the script takes the definitions, with comments and layout
normalised away:
  - object-like #define constants (include guards aside), by value: numbers
    and constant expressions are evaluated, so 0x10u and 16 agree;
  - enums: each enumerator's value;
  - structs: field names, types, order and array sizes; the kernel and user
    space spellings of a type are one (__le32, __u32, u32, uint32_t, ...;
    __be* stays apart);
  - compile-time layout checks: static_assert(X == N) and
    QEMU_BUILD_BUG_ON(X != N) / BUILD_BUG_ON(X != N) are the same check.
An item of the compared namespace that is on one side only is a mismatch too,
except those listed in ORIGIN_ONLY (with the reason they are not copied).
SAME_VALUE lists constants that restate one of another name (the guest
driver's limit of session slots is the link's).

It prints each mismatch (copy, item, what differs) and exits 1, or prints one
line saying what it compared and exits 0. Python 3, standard library only.
"""

import ast
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PATCHES = "qemu-patches/*.patch"

VC_VM_NAMES = re.compile(r"(^|[^A-Za-z0-9_])(VC_VM_|vc_vm_)")

# (origin, copy: path inside the patch series, which names are compared)
COPIES = [
    ("shared/vc_vm.h", "include/hw/virtio/virtio-vcuda.h", lambda name: bool(VC_VM_NAMES.search(name))),
    ("guest-lib/kmod/virtio_vcuda.h", "include/standard-headers/linux/virtio_vcuda.h", lambda name: True),
    ("guest-lib/kmod/virtio_vcuda.h", "include/standard-headers/linux/virtio_ids.h",
     lambda name: name == "define VIRTIO_ID_VCUDA"),
    # A copy in the tree itself ("file:" path): the guest-pin area, which
    # vcuda.ko shares with the session's worker (kernel types there).
    ("shared/vc_gpin.h", "file:guest-lib/kmod/vcuda_gpin.h", lambda name: True),
]

# Constants that restate another's value under a name of their own:
# ((origin, name), (copy, name), what the value is).
SAME_VALUE = [
    (("shared/vc_vm.h", "VC_VM_MAX_SESSIONS"), ("guest-lib/kmod/vcuda_main.c", "VCUDA_MAX_SESSIONS"),
     "the most session slots a device may have"),
]

# Definitions of an origin that are not part of the copied interface.
ORIGIN_ONLY = {
    ("shared/vc_vm.h", "struct vc_vm_rx"): "vcuda-server's receive buffer, not on the wire",
}

# One spelling per C type: kernel, user space and QEMU names of the same thing.
TYPE_NAMES = {
    "u8": ["uint8_t", "__u8", "u8", "unsigned char"],
    "s8": ["int8_t", "__s8", "s8", "signed char"],
    "u16": ["uint16_t", "__u16", "u16", "__le16", "unsigned short", "unsigned short int"],
    "s16": ["int16_t", "__s16", "s16", "short", "short int", "signed short"],
    "u32": ["uint32_t", "__u32", "u32", "__le32", "unsigned", "unsigned int"],
    "s32": ["int32_t", "__s32", "s32", "int", "signed", "signed int"],
    "u64": ["uint64_t", "__u64", "u64", "__le64", "unsigned long long", "unsigned long long int"],
    "s64": ["int64_t", "__s64", "s64", "long long", "long long int", "signed long long"],
    "be16": ["__be16"],
    "be32": ["__be32"],
    "be64": ["__be64"],
}
CANON_TYPE = {spelling: canon for canon, names in TYPE_NAMES.items() for spelling in names}

ASSERTS = {"static_assert": "==", "_Static_assert": "==", "QEMU_BUILD_BUG_ON": "!=", "BUILD_BUG_ON": "!="}


class Source:
    """Lines of one side, each with where it came from (file, line) for messages."""

    def __init__(self, name, lines):
        self.name = name
        self.lines = lines  # [(text, file, lineno)]

    def where(self, index):
        if 0 <= index < len(self.lines):
            _, f, n = self.lines[index]
            return f"{f}:{n}"
        return self.name


def read_file(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return Source(rel, [(t, rel, i + 1) for i, t in enumerate(f.read().split("\n"))])


def patch_diffs(path):
    """Yield (target, is_new, hunks) per file diff of one patch file; a hunk
    is (old_start, [(op, text, patch_lineno)])."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"diff --git a/(\S+) b/(\S+)$", lines[i])
        if not m:
            i += 1
            continue
        target, is_new, hunks = m.group(2), False, []
        i += 1
        while i < len(lines) and not lines[i].startswith(("diff --git ", "@@ ")):
            is_new = is_new or lines[i].startswith("new file mode")
            i += 1
        while i < len(lines) and lines[i].startswith("@@ "):
            h = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", lines[i])
            if not h:
                raise SystemExit(f"{path}:{i + 1}: cannot read this hunk header")
            old_left = int(h.group(2) if h.group(2) is not None else 1)
            new_left = int(h.group(4) if h.group(4) is not None else 1)
            body = []
            i += 1
            while (old_left or new_left) and i < len(lines):
                line = lines[i]
                op, text = (line[:1] or " "), line[1:]
                if op == "\\":  # "\ No newline at end of file"
                    i += 1
                    continue
                if op not in " +-":
                    raise SystemExit(f"{path}:{i + 1}: hunk ends early")
                body.append((op, text, i + 1))
                old_left -= op in " -"
                new_left -= op in " +"
                i += 1
            hunks.append((int(h.group(1)), body))
        yield target, is_new, hunks


def read_from_patches(target):
    """The copy at @target as the patch series leaves it: a Source, or None
    when no patch touches it."""
    content = None  # [(text, file, lineno)] for a file the series creates
    fragments = []  # post-image lines of hunks, for a file it only modifies
    touched = False
    for patch in sorted(glob.glob(os.path.join(ROOT, PATCHES))):
        rel = os.path.relpath(patch, ROOT)
        for path, is_new, hunks in patch_diffs(rel):
            if path != target:
                continue
            touched = True
            if is_new:
                content = [(t, rel, n) for h in hunks for op, t, n in h[1] if op == "+"]
            elif content is not None:
                content = apply_hunks(content, hunks, rel, target)
            else:
                fragments += [(t, rel, n) for h in hunks for op, t, n in h[1] if op in " +"]
    if not touched:
        return None
    return Source(f"qemu-patches: {target}", content if content is not None else fragments)


def apply_hunks(content, hunks, patch, target):
    out, pos = [], 0
    for old_start, body in hunks:
        start = max(old_start - 1, 0)
        out += content[pos:start]
        pos = start
        for op, text, n in body:
            if op in " -":
                if pos >= len(content) or content[pos][0] != text:
                    raise SystemExit(f"{patch}:{n}: this hunk does not apply to {target} as the "
                                     "earlier patches leave it")
                if op == " ":
                    out.append(content[pos])
                pos += 1
            else:
                out.append((text, patch, n))
    return out + content[pos:]


# ---- C definitions -------------------------------------------------------------------------

TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<number>(?:0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct><<|>>|==|!=|<=|>=|&&|\|\||->|\#\#|[-+*/%&|^~!<>=?:;,.()\[\]{}\#])
""", re.X | re.S)


def tokenize(text):
    """[(kind, text, line_index)], comments and whitespace dropped."""
    out, pos, line = [], 0, 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            out.append(("other", text[pos], line))
            pos += 1
            continue
        kind = m.lastgroup
        if kind not in ("ws", "nl", "comment"):
            out.append((kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    return out


def strip_comments(text):
    """@text with each comment replaced by its newlines (line numbers stay)."""
    out, pos = [], 0
    for m in TOKEN.finditer(text):
        if m.start() != pos:  # an unknown character: keep it
            out.append(text[pos:m.start()])
        out.append("\n" * m.group().count("\n") if m.lastgroup == "comment" else m.group())
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def number_value(text):
    return int(text.rstrip("uUlL"), 0)


def norm_tokens(tokens):
    """A whitespace- and comment-free spelling of an expression."""
    parts = []
    for kind, t, _ in tokens:
        if kind == "number":
            t = str(number_value(t))
        if parts and re.match(r"\w", t) and re.search(r"\w$", parts[-1]):
            parts.append(" ")
        parts.append(t)
    return "".join(parts)


def evaluate(tokens, consts, depth=0):
    """The integer value of a constant expression, or None."""
    if depth > 16 or not tokens:
        return None
    expr = []
    for kind, t, _ in tokens:
        if kind == "number":
            expr.append(str(number_value(t)))
        elif kind == "ident":
            if t not in consts:
                return None
            v = evaluate(consts[t], consts, depth + 1) if isinstance(consts[t], list) else consts[t]
            if v is None:
                return None
            expr.append(f"({v})")
        elif kind == "punct" and t in ("+", "-", "*", "/", "%", "<<", ">>", "|", "&", "^", "~", "(", ")"):
            expr.append("//" if t == "/" else t)
        else:
            return None
    try:
        tree = ast.parse(" ".join(expr), mode="eval")
    except SyntaxError:
        return None
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub, ast.Mult,
               ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift, ast.BitOr, ast.BitAnd, ast.BitXor,
               ast.Invert, ast.USub, ast.UAdd)
    if not all(isinstance(n, allowed) for n in ast.walk(tree)):
        return None
    try:
        return eval(compile(tree, "<expr>", "eval"), {"__builtins__": {}})  # only arithmetic, checked above
    except (ArithmeticError, ValueError):
        return None


class Item:
    def __init__(self, name, line, value, shown=None):
        self.name = name   # "define X", "enum x", "struct x", "assert sizeof(struct x)"
        self.line = line   # line index in its Source
        self.value = value  # comparable
        self.shown = shown
        self.field_lines = {}  # struct: field name -> line index


def split_top(tokens, sep):
    parts, cur, depth = [], [], 0
    for tok in tokens:
        if tok[1] in "([{":
            depth += 1
        elif tok[1] in ")]}":
            depth -= 1
        if depth == 0 and tok[1] == sep:
            parts.append(cur)
            cur = []
        else:
            cur.append(tok)
    if cur:
        parts.append(cur)
    return parts


def matching(tokens, i):
    """Index of the bracket closing tokens[i]."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j][1] in "([{":
            depth += 1
        elif tokens[j][1] in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def canon_type(tokens):
    words = [t for _, t, _ in tokens if t not in ("const", "volatile")]
    spelled = " ".join(words)
    return CANON_TYPE.get(spelled, spelled)


def parse_fields(body, consts):
    """[(name, type, dims)] of a struct body, dims evaluated where possible,
    and {name: line index}."""
    fields, lines = [], {}
    for decl in split_top(body, ";"):
        if not decl:
            continue
        if any(t[1] == "{" for t in decl):  # a nested struct or union: compared as written
            fields.append(("<nested>", norm_tokens(decl), ()))
            lines["<nested>"] = decl[0][2]
            continue
        declarators = split_top(decl, ",")
        first = declarators[0]
        # the type: everything before the first declarator's name
        k = len(first)
        while k > 0 and first[k - 1][1] == "]":
            k = max(idx for idx in range(k) if first[idx][1] == "[")
        name_at = k - 1
        ptr = 0
        base = first[:name_at]
        while base and base[-1][1] == "*":
            base, ptr = base[:-1], ptr + 1
        type_ = canon_type(base)
        for n, d in enumerate(declarators):
            if n == 0:
                name_tok, rest, stars = first[name_at], first[name_at + 1:], ptr
            else:
                stars = 0
                while d and d[0][1] == "*":
                    d, stars = d[1:], stars + 1
                name_tok, rest = d[0], d[1:]
            dims = []
            j = 0
            while j < len(rest):
                if rest[j][1] == "[":
                    e = matching(rest, j)
                    inner = rest[j + 1:e]
                    v = evaluate(inner, consts)
                    dims.append(v if v is not None else norm_tokens(inner))
                    j = e + 1
                else:
                    dims.append(norm_tokens(rest[j:]))
                    break
            fields.append((name_tok[1], type_ + "*" * stars, tuple(dims)))
            lines[name_tok[1]] = name_tok[2]
    return fields, lines


def definitions(src):
    """The Items of one side, by name."""
    items = {}
    consts = {}
    lines = strip_comments("\n".join(t for t, _, _ in src.lines)).split("\n")
    code = [""] * len(lines)  # the lines outside preprocessor directives
    i = 0
    while i < len(lines):
        text, first = lines[i], i
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1] + " " + lines[i]
        i += 1
        if re.match(r"\s*#", text):
            d = re.match(r"\s*#\s*define\s+(\w+)(\()?", text)
            if d:
                name = d.group(1)
                rest = tokenize(text[d.end(1):])
                if d.group(2):  # function-like: "(" right after the name
                    end = matching(rest, 0)
                    params, rest = norm_tokens(rest[:end + 1]), rest[end + 1:]
                    items["define " + name] = Item("define " + name, first, ("macro", params, norm_tokens(rest)),
                                                   f"{name}{params} {norm_tokens(rest)}")
                elif rest:
                    consts[name] = [(k, t, first) for k, t, _ in rest]
                    items["define " + name] = Item("define " + name, first, None)
            continue
        code[first] = text

    toks = tokenize("\n".join(code))

    # enumerators first: they are constants of the expressions below
    for n, tok in enumerate(toks):
        if tok[1] == "enum" and n + 2 < len(toks) and toks[n + 1][0] == "ident" and toks[n + 2][1] == "{":
            end = matching(toks, n + 2)
            values, nxt = [], 0
            for entry in split_top(toks[n + 3:end], ","):
                if not entry:
                    continue
                name = entry[0][1]
                if len(entry) > 2 and entry[1][1] == "=":
                    v = evaluate(entry[2:], consts)
                    nxt = v if v is not None else norm_tokens(entry[2:])
                values.append((name, nxt))
                consts[name] = nxt if isinstance(nxt, int) else None
                nxt = nxt + 1 if isinstance(nxt, int) else f"{nxt}+1"
            items["enum " + toks[n + 1][1]] = Item("enum " + toks[n + 1][1], tok[2], tuple(values))

    for item in items.values():
        if item.name.startswith("define ") and item.value is None:
            name = item.name[len("define "):]
            v = evaluate(consts[name], consts)
            item.value = v if v is not None else ("expr", norm_tokens(consts[name]))
            item.shown = str(v) if v is not None else norm_tokens(consts[name])

    for n, tok in enumerate(toks):
        if tok[1] == "struct" and n + 2 < len(toks) and toks[n + 1][0] == "ident" and toks[n + 2][1] == "{":
            end = matching(toks, n + 2)
            fields, lines = parse_fields(toks[n + 3:end], consts)
            item = Item("struct " + toks[n + 1][1], tok[2], tuple(fields))
            item.field_lines = lines
            items[item.name] = item
        if tok[1] in ASSERTS and n + 1 < len(toks) and toks[n + 1][1] == "(":
            end = matching(toks, n + 1)
            expr = split_top(toks[n + 2:end], ",")[0]
            cmp = [k for k, t in enumerate(expr) if t[1] == ASSERTS[tok[1]]]
            if len(cmp) == 1:
                lhs, rhs = expr[:cmp[0]], expr[cmp[0] + 1:]
                v = evaluate(rhs, consts)
                name = "assert " + norm_tokens(lhs)
                items[name] = Item(name, tok[2], v if v is not None else norm_tokens(rhs))
            else:
                name = "assert " + norm_tokens(expr)
                items[name] = Item(name, tok[2], tok[1])
    return items


# ---- comparison ----------------------------------------------------------------------------

def show(v):
    return str(v) if not isinstance(v, tuple) or v[:1] != ("expr",) else v[1]


def field_text(f):
    name, type_, dims = f
    return f"{type_} {name}" + "".join(f"[{d}]" for d in dims)


def compare(origin_name, o, c):
    """Mismatches between origin item @o and copy item @c: [(line index in
    the copy, text)]."""
    out = []
    at = c.field_lines.get
    kind = o.name.split(" ", 1)[0]
    if o.value == c.value:
        return out
    if kind == "struct":
        of, cf = list(o.value), list(c.value)
        onames, cnames = [f[0] for f in of], [f[0] for f in cf]
        for f in of:
            if f[0] not in cnames:
                out.append((c.line, f"field '{field_text(f)}' is missing"))
        for f in cf:
            if f[0] not in onames:
                out.append((at(f[0], c.line), f"field '{field_text(f)}' is not in {origin_name}"))
        common_o = [f for f in of if f[0] in cnames]
        common_c = [f for f in cf if f[0] in onames]
        if [f[0] for f in common_o] != [f[0] for f in common_c]:
            out.append((c.line, f"field order differs: {', '.join(f[0] for f in common_c)} "
                                f"(in {origin_name}: {', '.join(f[0] for f in common_o)})"))
        by_name = {f[0]: f for f in cf}
        for f in common_o:
            g = by_name[f[0]]
            if f[1] != g[1]:
                out.append((at(f[0], c.line), f"field {f[0]}: type {g[1]} (in {origin_name}: {f[1]})"))
            if f[2] != g[2]:
                out.append((at(f[0], c.line), f"field {f[0]}: array size {list(g[2])} "
                                                f"(in {origin_name}: {list(f[2])})"))
    elif kind == "enum":
        ov, cv = dict(o.value), dict(c.value)
        for k, v in o.value:
            if k not in cv:
                out.append((c.line, f"{k} is missing"))
            elif cv[k] != v:
                out.append((c.line, f"{k} = {cv[k]} (in {origin_name}: {v})"))
        for k, v in c.value:
            if k not in ov:
                out.append((c.line, f"{k} = {v} is not in {origin_name}"))
    else:
        out.append((c.line, f"value {c.shown or show(c.value)} (in {origin_name}: {o.shown or show(o.value)})"))
    return out or [(c.line, f"differs from {origin_name}")]


def main():
    verbose = "-v" in sys.argv[1:]
    problems, summary = [], []
    for origin_rel, target, selected in COPIES:
        origin = read_file(origin_rel)
        copy = read_file(target[5:]) if target.startswith("file:") else read_from_patches(target)
        if copy is None:
            problems.append(f"{PATCHES}: no patch holds {target}, the copy of {origin_rel}")
            continue
        oi = {k: v for k, v in definitions(origin).items() if selected(k)}
        ci = {k: v for k, v in definitions(copy).items() if selected(k)}
        counts = {}
        for name, o in oi.items():
            if name not in ci:
                if (origin_rel, name) not in ORIGIN_ONLY:
                    problems.append(f"{copy.name}: {name}: missing (defined at {origin.where(o.line)})")
                continue
            c = ci[name]
            for line, p in compare(origin_rel, o, c):
                problems.append(f"{copy.where(line)}: {name}: {p}")
            kind = name.split(" ", 1)[0]
            counts[kind] = counts.get(kind, 0) + 1
            if verbose:
                print(f"  {target}: {name} ({origin.where(o.line)} / {copy.where(c.line)})")
        for name, c in ci.items():
            if name not in oi:
                problems.append(f"{copy.where(c.line)}: {name}: not in {origin_rel}")
        parts = [f"{n} {k}{'s' if n > 1 else ''}" for k, n in sorted(counts.items())]
        summary.append(f"{origin_rel} -> {target} ({', '.join(parts)})")
    for (orel, oname), (crel, cname), what in SAME_VALUE:
        o = definitions(read_file(orel)).get("define " + oname)
        c = definitions(read_file(crel)).get("define " + cname)
        if o is None or c is None:
            problems.append(f"{orel if o is None else crel}: {oname if o is None else cname}: missing ({what})")
        elif o.value != c.value:
            problems.append(f"{crel}:{c.line + 1}: define {cname}: value {c.shown or show(c.value)} "
                            f"(in {orel}, {oname}: {o.shown or show(o.value)}; {what})")
        else:
            summary.append(f"{crel} {cname} = {orel} {oname}")
    if problems:
        for p in problems:
            print(p)
        print(f"check_copies: {len(problems)} mismatch{'es' if len(problems) > 1 else ''} between the VM "
              "ABI's definitions (shared/vc_vm.h, guest-lib/kmod/virtio_vcuda.h, shared/vc_gpin.h) and their "
              "hand-kept copies")
        return 1
    print("check_copies: the copies agree: " + "; ".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
