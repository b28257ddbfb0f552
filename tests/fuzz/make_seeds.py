#!/usr/bin/env python3
"""Write the committed seed corpus for the fuzz targets (run from this folder).

    python3 make_seeds.py [--wire ../../build/release/gen/vc_cuda_wire.h]

Seeds are well-formed command streams as the guest library writes them
(guest-lib/libcuda: ctx.c, memory.c, module.c, launch.c, stream.c), so that the
fuzzer starts from deep inside the decoder and the CUDA executor rather than
at their first checks: a family of seeds per kind of operation, and one seed
per CUDA opcode of the generated vc_cuda_wire.h (the build writes it: `make
build/release/gen/.stamp`) with a well-formed request of zeros.

fuzz_decode's input: byte 0 holds options (bit 0: a raw tail follows; bit 1:
two publishes, split at the first data byte, which is the low byte of the
first command's opcode; bit 2: in the second publish, words DPTR_MARK | k << 32
| off become the k-th allocation the first publish got, plus off). Device
addresses are the CI stand-in's, new for every run, so seeds that copy or
launch allocate in a first publish and use placeholders in the second; the
first publish starts with a harmless command whose opcode's low byte is the
first publish's length.
"""
import argparse
import os
import re
import shutil
import struct

NOP, ECHO = 1, 2
REPLY = 1
DPTR_MARK = 0x0DD0000000000000

# Hand-written request structs (shared/vc_cuda_manual.h), as struct formats.
CTX = "<QQiI"                   # vc_cu_req_ctx: ctx, target, dev, flags
ALLOC = "<QIIQQQIIQQ"           # vc_cu_req_alloc
FREE = "<QQQII"                 # vc_cu_req_free
MEMCPY = "<QIIQQQQQII"          # vc_cu_req_memcpy
MEMCPY2D = "<QQQQQQQQII"        # vc_cu_req_memcpy2d
MEMSET = "<QQQQIIIIQQ"          # vc_cu_req_memset
SYNC = "<QQII"                  # vc_cu_req_sync
IMAGE_BEGIN = "<QQ"             # vc_cu_req_vcImageBegin
IMAGE_PUT = "<QQQQQII"          # vc_cu_req_vcImagePut
LOAD = "<QQII"                  # vc_cu_req_load
FUNC_PARAMS = "<QQ"             # vc_cu_req_vcFuncParams
LAUNCH = "<QQQ3I3IIIII"         # vc_cu_req_launch
HOSTFUNC = "<QQQ"               # vc_cu_req_hostfunc
CONSOLE = "<QII"                # vc_cu_req_vcConsole
EXPORT_SLOT = "<QIIQQiI"        # vc_cu_req_vcExportSlot
DEVICE_INFO = "<QiI"            # vc_cu_req_vcDeviceInfo
PINNED_BASE = "<QQ"             # vc_cu_req_pinned_base
HOST_REGISTER = "<QQQII"        # vc_cu_req_host_register
LIST = "<QQII"                  # vc_cu_req_list
HANDLE = "<QQ"                  # vc_cu_req_handle
CAPTURE_INFO = "<QQII"          # vc_cu_req_capture_info
POOL_ATTR = "<QQiIQ"            # vc_cu_req_pool_attr
SIZES = {"vc_cu_req_graph_kernel": 88, "vc_cu_req_graph_memcpy": 168, "vc_cu_req_pool_create": 96}
SYNC_STREAM, SYNC_EVENT, SYNC_CTX, SYNC_ALL = 0, 1, 2, 3
HTOD, DTOH, DTOD = 0, 1, 2
HOST_INLINE, HOST_ARENA = 0, 1

# Handle kinds (vc_cuda_wire.h's enum vc_cu_handle_kind) and the executor's
# ids (host-backend/cuda/handles.c): a 2-bit tag (01), the kind (6 bits), a
# 32-bit generation, the table index (24 bits).
H_CONTEXT, H_FUNCTION, H_MODULE, H_STREAM, H_EVENT = 1, 3, 10, 11, 2


def handle_id(kind, idx, gen=1):
    return (1 << 62) | (kind << 56) | (gen << 24) | idx


CTX0 = handle_id(H_CONTEXT, 0)  # the first handle a session issues: its primary context
MOD1 = handle_id(H_MODULE, 1)   # a module loaded right after it
FUNC2 = handle_id(H_FUNCTION, 2)  # and its first function


def dptr(k, off=0):
    """A placeholder for the k-th allocation of the first publish, plus off."""
    return DPTR_MARK | (k << 32) | off


STORE_PTX = (
    b".version 8.0\n.target sm_75\n.address_size 64\n\n"
    b".visible .entry vc_standin_store(\n\t.param .u64 vc_standin_store_param_0,\n"
    b"\t.param .u32 vc_standin_store_param_1\n)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\n"
    b"\tld.param.u64 %rd1, [vc_standin_store_param_0];\n\tld.param.u32 %r1, [vc_standin_store_param_1];\n"
    b"\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n\0")
STORE_NAME = b"vc_standin_store\0"


def parse_wire(path):
    """Opcodes and generated request structs (field formats) of vc_cuda_wire.h."""
    text = open(path).read()
    enum = re.search(r"enum vc_cu_op \{(.*?)\};", text, re.S).group(1)
    ops = {m.group(1): int(m.group(2), 16) for m in re.finditer(r"VC_CU_(\w+) = (0x[0-9a-f]+)", enum)
           if m.group(1) != "OP_END_"}
    ctypes = {"uint64_t": "Q", "int32_t": "i", "uint32_t": "I", "uint8_t": "B", "float": "f"}
    structs = {}
    for m in re.finditer(r"struct vc_cu_req_(\w+) \{(.*?)\} __attribute__", text, re.S):
        fields = re.findall(r"^\s*(\w+) (\w+);", m.group(2), re.M)
        structs[m.group(1)] = [(name, ctypes[t]) for t, name in fields]
    return ops, structs


def pack_fields(fields, values):
    """A generated request: C layout (natural alignment, 8-byte aligned struct)."""
    out = b""
    for name, f in fields:
        size = struct.calcsize(f)
        out += b"\0" * (-len(out) % size)
        out += struct.pack("<" + f, values.get(name, 0))
    return out + b"\0" * (-len(out) % 8)


class Seeds:
    def __init__(self, wire):
        self.ops, self.structs = parse_wire(wire)

    def op(self, name):
        return NOP if name == "NOP" else ECHO if name == "ECHO" else self.ops[name]

    def cmd(self, op, payload=b"", flags=0, slot=0):
        op = self.op(op) if isinstance(op, str) else op
        size = 16 + len(payload)
        padded = (size + 7) & ~7
        return struct.pack("<IIII", op, padded, flags, slot) + payload + b"\0" * (padded - size)

    def gen(self, name, flags=REPLY, slot=1, string=STORE_NAME, **values):
        """A generated operation's request; a string field gets @string."""
        fields = self.structs[name]
        names = [n for n, _ in fields]
        values.setdefault("cur_ctx", CTX0)
        tail = b""
        for n in names:
            if n.endswith("_len"):
                values.setdefault(n, len(string))
                tail = string
        return self.cmd(name, pack_fields(fields, values) + tail, flags, slot)

    # ---- the guest library's requests ----------------------------------------------
    def retain(self, slot=0):
        return self.cmd("cuDevicePrimaryCtxRetain", struct.pack(CTX, 0, 0, 0, 0), REPLY, slot)

    def alloc(self, size, slot=1):
        return self.cmd("vcMemAlloc", struct.pack(ALLOC, CTX0, 0, 0, size, 0, 0, 0, 0, 0, 0), REPLY, slot)

    def free(self, d, flags=REPLY, slot=2, asynchronous=0):
        return self.cmd("vcMemFree", struct.pack(FREE, CTX0, d, 0, asynchronous, 0), flags, slot)

    def memcpy(self, direction, dst=0, src=0, length=0, host=HOST_INLINE, arena_off=0, asynchronous=0,
               data=b"", flags=0, slot=0):
        rq = struct.pack(MEMCPY, CTX0, direction, 0, dst, src, length, 0, arena_off, host, asynchronous)
        return self.cmd("vcMemcpy", rq + data, flags, slot)

    def memset(self, d, count, value, elem, pitch=0, height=0):
        return self.cmd("vcMemset", struct.pack(MEMSET, CTX0, d, count, 0, value, elem, 1, 0, pitch, height))

    def sync(self, kind=SYNC_CTX, handle=CTX0, slot=3):
        return self.cmd("vcSync", struct.pack(SYNC, CTX0, handle, kind, 0), REPLY, slot)

    def load_store_kernel(self):
        """vcImageBegin (image 1), the PTX inline, vcLoad (module MOD1), its function (FUNC2)."""
        return (self.cmd("vcImageBegin", struct.pack(IMAGE_BEGIN, CTX0, len(STORE_PTX)), REPLY, 2)
                + self.cmd("vcImagePut", struct.pack(IMAGE_PUT, CTX0, 1, 0, len(STORE_PTX), 0, 1, 0) + STORE_PTX)
                + self.cmd("vcLoad", struct.pack(LOAD, CTX0, 1, 0, 0), REPLY, 2)
                + self.gen("cuModuleGetFunction", hmod=MOD1, slot=2))

    def launch(self, func, params, grid=(1, 1, 1), block=(1, 1, 1)):
        rq = struct.pack(LAUNCH, CTX0, func, 0, *grid, *block, 0, 0, 0, len(params))
        return self.cmd("vcLaunch", rq + params)

    def store(self, d, value):
        return self.launch(FUNC2, struct.pack("<QI", d, value))

    def first_publish(self, size):
        """Retain, allocate @size bytes (placeholder dptr(0)), behind a harmless
        command (a request of zeros, answered in slot 3 so that its error is
        not the sticky one) whose opcode's low byte is
        the publish's length: the split point of fuzz_decode's option 2. The
        opcodes end below 0x100, so one allocation is all that fits."""
        rest = self.retain() + self.alloc(size, slot=1)
        for name in ("cuGraphInstantiateWithFlags", "cuGraphCreate", "cuGraphLaunch", "cuGraphUpload"):
            op = self.ops.get(name)
            if op is None or name not in self.structs:
                continue
            filler = (op & 0xFF) - len(rest)
            if filler >= 16 + len(pack_fields(self.structs[name], {})) and filler % 8 == 0:
                head = self.cmd(op, b"\0" * (filler - 16), REPLY, 3)
                assert len(head + rest) == op & 0xFF
                return head + rest
        raise SystemExit("no filler opcode fits the first publish; adjust make_seeds.py")


def manual_payload(s, name):
    """A well-formed request of zeros for a hand-written operation (its struct's size)."""
    fmt = {
        "vcDriverInfo": "<Q", "vcDeviceInfo": DEVICE_INFO, "vcImageBegin": IMAGE_BEGIN, "vcImagePut": IMAGE_PUT,
        "vcFuncParams": FUNC_PARAMS, "vcExportSlot": EXPORT_SLOT, "vcLoad": LOAD, "vcLaunch": LAUNCH,
        "vcMemAlloc": ALLOC, "vcMemFree": FREE, "vcMemcpy": MEMCPY, "vcMemset": MEMSET, "vcHostFunc": HOSTFUNC,
        "vcMemcpy2D": MEMCPY2D, "vcSync": SYNC, "vcOccupancyClusters": LAUNCH, "vcPinnedBase": PINNED_BASE,
        "vcHostRegister": HOST_REGISTER, "vcHostUnregister": HOST_REGISTER, "vcConsole": CONSOLE,
        "cuModuleEnumerateFunctions": LIST, "cuLibraryEnumerateKernels": LIST, "cuGraphGetNodes": LIST,
        "cuKernelGetName": HANDLE, "cuFuncGetName": HANDLE, "cuGraphKernelNodeGetParams_v2": HANDLE,
        "cuGraphDestroy": HANDLE, "cuStreamGetCaptureInfo_v3": CAPTURE_INFO, "cuMemPoolSetAttribute": POOL_ATTR,
        "cuMemPoolGetAttribute": POOL_ATTR,
    }
    sized = {"cuGraphAddKernelNode_v2": "vc_cu_req_graph_kernel", "cuGraphKernelNodeSetParams_v2":
             "vc_cu_req_graph_kernel", "cuGraphExecKernelNodeSetParams_v2": "vc_cu_req_graph_kernel",
             "cuGraphAddMemcpyNode": "vc_cu_req_graph_memcpy", "cuMemPoolCreate": "vc_cu_req_pool_create"}
    if name.startswith("cuDevicePrimaryCtx") or name in ("cuCtxCreate_v4", "cuCtxDestroy_v2"):
        return struct.pack(CTX, CTX0, CTX0, 0, 0)
    if name == "vcMemset":
        return struct.pack(MEMSET, CTX0, 0, 0, 0, 0, 1, 0, 0, 0, 0)  # elem 1: 0 is a violation
    if name == "vcConsole":
        return struct.pack(CONSOLE, CTX0, 256, 0)
    if name in sized:
        return struct.pack("<Q", CTX0) + b"\0" * (SIZES[sized[name]] - 8)
    f = fmt[name]
    return struct.pack("<Q", CTX0) + b"\0" * (struct.calcsize(f) - 8)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--wire", default=os.path.join(here, "../../build/release/gen/vc_cuda_wire.h"))
    args = ap.parse_args()
    if not os.path.exists(args.wire):
        raise SystemExit(f"{args.wire}: missing; run `make build/release/gen/.stamp` first")
    s = Seeds(args.wire)
    out = os.path.join(here, "corpus/decode")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    names = set()

    def seed(name, body, opt=0):
        assert name not in names, name
        names.add(name)
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([opt]) + body)

    def split_seed(name, size, second):
        first = s.first_publish(size)
        assert first[0] == len(first) and len(first) + len(second) > first[0]
        seed(name, first + second, opt=2 | 4)

    a = dptr(0)
    # ---- the transport's own operations ----------------------------------------------
    seed("nop", s.cmd("NOP") + s.cmd("NOP", b"payload!"))
    seed("echo", s.cmd("ECHO", struct.pack("<II", 5, 0) + b"hello", REPLY, 2))
    # ---- contexts ---------------------------------------------------------------------
    seed("ctx", s.retain()
         + s.cmd("cuDevicePrimaryCtxGetState", struct.pack(CTX, CTX0, 0, 0, 0), REPLY, 1)
         + s.cmd("cuDevicePrimaryCtxSetFlags_v2", struct.pack(CTX, CTX0, 0, 0, 4), REPLY, 1)
         + s.cmd("cuCtxCreate_v4", struct.pack(CTX, CTX0, 0, 0, 0), REPLY, 2)
         + s.cmd("cuCtxDestroy_v2", struct.pack(CTX, CTX0, handle_id(H_CONTEXT, 1), 0, 0), REPLY, 2)
         + s.gen("cuCtxGetApiVersion", ctx=CTX0)
         + s.cmd("cuDevicePrimaryCtxRelease_v2", struct.pack(CTX, CTX0, 0, 0, 0), REPLY, 1)
         + s.cmd("cuDevicePrimaryCtxReset_v2", struct.pack(CTX, CTX0, 0, 0, 0), REPLY, 1))
    # ---- memory -----------------------------------------------------------------------
    split_seed("alloc_free", 65536,
               s.free(dptr(0, 16)) + s.free(a) + s.free(a)
               + s.cmd("vcMemAlloc", struct.pack(ALLOC, CTX0, 1, 0, 0, 256, 4, 4, 0, 0, 0), REPLY, 1)
               + s.cmd("vcMemAlloc", struct.pack(ALLOC, CTX0, 2, 0, 4096, 0, 0, 0, 0, 0, 0), REPLY, 1)
               + s.cmd("cuMemGetInfo_v2", struct.pack("<Q", CTX0), REPLY, 2))
    # ---- copies: inline and through the arena, both directions -----------------------
    split_seed("alloc_copy", 65536,
               s.memcpy(HTOD, dst=dptr(0, 8), length=16, asynchronous=1, data=bytes(range(16)))
               + s.memcpy(DTOH, src=a, length=64, flags=REPLY, slot=3)
               + s.memcpy(HTOD, dst=dptr(0, 512), length=24, data=bytes(range(24)), flags=REPLY, slot=2)
               + s.memcpy(DTOH, src=dptr(0, 4096), length=4096, host=HOST_ARENA, arena_off=4096)
               + s.memcpy(HTOD, dst=dptr(0, 8192), length=8192, host=HOST_ARENA, arena_off=0, asynchronous=1)
               + s.memcpy(DTOH, src=dptr(0, 8192), length=8192, host=HOST_ARENA, arena_off=8192, flags=REPLY,
                          slot=3)
               + s.sync())
    split_seed("copy_inline", 4096,
               s.memcpy(HTOD, dst=a, length=100, data=bytes(range(100)), flags=REPLY, slot=2)
               + s.memcpy(DTOH, src=dptr(0, 4), length=96, flags=REPLY, slot=3))
    split_seed("copy_arena", 65536,
               s.memcpy(HTOD, dst=a, length=16384, host=HOST_ARENA, arena_off=0)
               + s.memcpy(DTOH, src=a, length=16384, host=HOST_ARENA, arena_off=0, flags=REPLY, slot=2))
    # ---- memsets and device copies ------------------------------------------------------
    split_seed("memset_dtod", 65536,
               s.memset(a, 100, 0xAB, 1) + s.memset(dptr(0, 2), 100, 0xABCD, 2)
               + s.memset(dptr(0, 4), 100, 0xDEADBEEF, 4) + s.memset(dptr(0, 4096), 16, 0x5A, 1, 64, 8)
               + s.memcpy(DTOD, dst=dptr(0, 32768), src=a, length=512, asynchronous=1)
               + s.cmd("vcMemcpy2D", struct.pack(MEMCPY2D, CTX0, dptr(0, 8192), 128, a, 64, 64, 8, 0, 1, 0))
               + s.sync())
    # ---- modules and launches -----------------------------------------------------------
    split_seed("launch", 4096,
               s.load_store_kernel()
               + s.cmd("vcFuncParams", struct.pack(FUNC_PARAMS, CTX0, FUNC2), REPLY, 2)
               + s.store(a, 42) + s.store(dptr(0, 4), 43)
               + s.launch(FUNC2, struct.pack("<QI", dptr(0, 8), 44), grid=(8, 1, 1), block=(128, 1, 1))
               + s.sync() + s.memcpy(DTOH, src=a, length=16, flags=REPLY, slot=2))
    # An image larger than the arena's chunk, staged in pieces through it.
    image = STORE_PTX.ljust(6000, b" ")
    seed("module_arena", s.retain()
         + s.cmd("vcImageBegin", struct.pack(IMAGE_BEGIN, CTX0, len(image)), REPLY, 2)
         + s.cmd("vcImagePut", struct.pack(IMAGE_PUT, CTX0, 1, 0, 4096, 0, 0, 0))
         + s.cmd("vcImagePut", struct.pack(IMAGE_PUT, CTX0, 1, 4096, len(image) - 4096, 4096, 0, 0))
         + s.cmd("vcLoad", struct.pack(LOAD, CTX0, 1, 0, 0), REPLY, 2)
         + s.gen("cuModuleGetFunctionCount", mod=MOD1)
         + s.gen("cuModuleUnload", hmod=MOD1))
    seed("library", s.retain()
         + s.cmd("vcImageBegin", struct.pack(IMAGE_BEGIN, CTX0, len(STORE_PTX)), REPLY, 2)
         + s.cmd("vcImagePut", struct.pack(IMAGE_PUT, CTX0, 1, 0, len(STORE_PTX), 0, 1, 0) + STORE_PTX)
         + s.cmd("vcLoad", struct.pack(LOAD, CTX0, 1, 1, 0), REPLY, 2)
         + s.gen("cuLibraryGetKernel", library=handle_id(8, 1))
         + s.cmd("cuLibraryEnumerateKernels", struct.pack(LIST, CTX0, handle_id(8, 1), 0, 16), REPLY, 1))
    # ---- synchronisation, streams, events, host functions, device printf ---------------
    seed("sync", s.retain()
         + s.sync(SYNC_CTX, CTX0) + s.sync(SYNC_STREAM, 0) + s.sync(SYNC_ALL, 0)
         + s.gen("cuStreamCreate", Flags=1) + s.gen("cuEventCreate", Flags=2)
         + s.gen("cuEventRecord", hEvent=handle_id(H_EVENT, 2), hStream=handle_id(H_STREAM, 1))
         + s.sync(SYNC_EVENT, handle_id(H_EVENT, 2))
         + s.sync(SYNC_STREAM, handle_id(H_STREAM, 1)))
    seed("hostfn_console", s.retain()
         + s.cmd("vcHostFunc", struct.pack(HOSTFUNC, CTX0, 0, 77))
         + s.cmd("vcConsole", struct.pack(CONSOLE, CTX0, 256, 0), REPLY, 1))
    # ---- the transport's corner cases -----------------------------------------------------
    # A command cut by the split: the first publish ends 2 bytes into the allocation.
    body = s.retain() + s.alloc(4096) + s.cmd("NOP", b"x" * 40) + s.sync()
    assert body[0] == 0x2A and body[0] > 40
    seed("split", body, opt=2)
    seed("rawtail", struct.pack("<I", 0x10000) + s.cmd("NOP"), opt=1)
    # ---- one seed per CUDA opcode: a request of zeros, after the context is retained --------
    for name, op in sorted(s.ops.items(), key=lambda kv: kv[1]):
        if name in s.structs:
            body = s.gen(name)
        else:
            body = s.cmd(name, manual_payload(s, name), REPLY, 1)
        seed(f"op_{op:04x}_{name}", s.retain() + body)

    hs = os.path.join(here, "corpus/handshake")
    os.makedirs(hs, exist_ok=True)
    hello = struct.pack("<IIQII16s", 0x4C454856, 1, 0, 1234, 0, b"python3")
    with open(os.path.join(hs, "hello"), "wb") as f:
        f.write(hello)
    print(f"{len(names)} decode seeds in {out}")


if __name__ == "__main__":
    main()
