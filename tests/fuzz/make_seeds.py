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
import sys

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
NV_DEV = "<QiI"                 # vc_nv_req_dev (vcNvmlMemory, vcNvmlProcs)
NV_VALUE = "<QiIII"             # vc_nv_req_value
PINNED_BASE = "<QQ"             # vc_cu_req_pinned_base
HOST_REGISTER = "<QQQII"        # vc_cu_req_host_register
PINSEG = "<QQQQQIIQ"            # vc_cu_req_pinseg: ctx, token, guest_addr, size, off, op, files, part
PINSEG_FULL = "<QQQQQIIQIIQ"    # the same with entry, flags (VC_CU_PINSEG_PREFAULT = 1), gen
PINSEG_OFF0 = 1 << 48           # VC_CU_PINSEG_OFF0
LIST = "<QQII"                  # vc_cu_req_list
HANDLE = "<QQ"                  # vc_cu_req_handle
CAPTURE_INFO = "<QQII"          # vc_cu_req_capture_info
POOL_ATTR = "<QQiIQ"            # vc_cu_req_pool_attr
MANAGED_ALLOC = "<QQII"         # vc_cu_req_managed_alloc
MANAGED_PTR = "<QQ"             # vc_cu_req_managed_ptr
RANGE_ATTRS = "<QQQII16i16Q"    # vc_cu_req_range_attrs
MEM_BATCH = "<QQQIIII"          # vc_cu_req_mem_batch, then ranges "<QQ" and locations "<iiQ"
VMM = "<QQQQQQII8s"             # vc_cu_req_vmm (shared/vc_cuda_vmm.h)
RES = "<iIQ48s"                 # vc_cu_res (shared/vc_cuda_green.h): type, pad, id, union
RES_GET = "<QQii"               # vc_cu_req_res_get: ctx, handle, dev, type
RES_SPLIT = "<QiIQ48sIIIIII"    # vc_cu_req_res_split: ctx, input, nb, want result, want remaining, flags, min, pad
RES_READ = "<QII"               # vc_cu_req_res_read
RES_DESC = "<QII"               # vc_cu_req_res_desc, then count resources
GREEN = "<QQiI"                 # vc_cu_req_green: ctx, handle, dev, flags
LOGS = "<QQIIIIQ"               # vc_cu_req_logs: ctx, size, op, iter, has_iter, flags, offset
VMM_CREATE = "<QQQiI32s"        # vc_cu_req_vmm_create: ctx, size, flags, option, pad, prop
IPC = "<QQQQiI64s"              # vc_cu_req_ipc
VMM_OPS = ["cuMemAddressReserve", "cuMemAddressFree", "cuMemRelease", "cuMemMap", "cuMemUnmap", "cuMemSetAccess",
           "cuMemRetainAllocationHandle", "cuMemGetAllocationPropertiesFromHandle", "cuMemPoolSetAccess",
           "cuMemPoolGetAccess", "cuIpcCloseMemHandle"]
IPC_OPS = ["cuIpcGetMemHandle", "cuIpcOpenMemHandle_v2", "cuIpcGetEventHandle", "cuIpcOpenEventHandle",
           "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle", "cuMemPoolExportToShareableHandle",
           "cuMemPoolImportFromShareableHandle", "cuMemPoolExportPointer", "cuMemPoolImportPointer"]
DEVICE_PROP = struct.pack("<IIiiQBBH4x", 1, 0, 1, 0, 0, 0, 0, 0)  # CUmemAllocationProp: pinned, device 0
MEMOP = "<QQIIII"               # vc_cu_req_memop, then struct vc_cu_memop "<IIQQ" each
MEMOP_OP = "<IIQQ"
STREAM_ATTR = "<QQII64s"        # vc_cu_req_stream_attr
TMAP = "<QIiI5i2I3i3i2i5I5III Q5Q4Q128s"  # vc_cu_req_tmap (pad, then addr aligned)
EXEC_AFFINITY = "<QiI"          # vc_cu_req_exec_affinity
# shared/vc_cuda_array.h
ARRAY_CREATE = "<QQQQIIIIII"     # vc_cu_req_array_create
ARRAY_SUB = "<QQII"             # vc_cu_req_array_sub
SIDE3D = "QQQQQQII"             # vc_cu_copy3d_side (inside MEMCPY3D)
MEMCPY3D = "<QQ" + SIDE3D + SIDE3D + "QQQQQQII"  # vc_cu_req_memcpy3d
TEXOBJ_SIZE = 8 + 144 + 104 + 112 + 8            # vc_cu_req_texobj_create
SIDE_DEVICE, SIDE_ARRAY, SIDE_STAGED = 0, 1, 2
# shared/vc_cuda_texref.h
TEXREF_ADDR = "<QQQQQQQII"      # vc_cu_req_texref_addr: ctx, texref, dptr, bytes, pitch, width, height, format, ch
TEXREF_BORDER = "<QQ4f"         # vc_cu_req_texref_border
TEXREF_PTX = b".version 8.0\n.target sm_75\n.address_size 64\n.global .texref tex_a;\n.global .surfref surf_a;\n\0"
ARR_2D, ARR_3D, ARR_MIPMAP = 0, 1, 2
# shared/vc_cuda_memmisc.h
MAPARR = "<QQII"                # vc_cu_req_maparr, then CUarrayMapInfo each
MAPINFO = "<iIQiI8IiiQQIIII"    # CUarrayMapInfo: type, resource, subresource type, level/layer/offsets/extents, ...
DECOMP = "<QQII"                # vc_cu_req_decomp, then CUmemDecompressParams each
DECOMP_ENTRY = "<QQQQQi20s"     # CUmemDecompressParams: srcNumBytes, dstNumBytes, dstActBytes, src, dst, algo
LOCPOOL = "<QQiiiI"             # vc_cu_req_locpool: ctx, pool, location type and id, allocation type, what
PTRSET = "<QQiI"                # vc_cu_req_ptrset
SIZES = {"vc_cu_req_graph_kernel": 88, "vc_cu_req_graph_memcpy": 176, "vc_cu_req_pool_create": 96,
         "vc_cu_req_ctx_affinity": 88, "vc_cu_req_atomic_caps": 216, "vc_cu_req_graph_node": 376}
# shared/vc_cuda_graph.h
GRAPH_EDGES = "<QQIIII"         # vc_cu_req_graph_edges: ctx, handle, what, want_edges, first, count
GRAPH_DEPS = "<QQIIII"          # vc_cu_req_graph_deps: ctx, graph, n, remove, has_edges, pad
GRAPH_CALL = "<QQQQQ64s"        # vc_cu_req_graph_call: ctx, a, b, v0, v1, value
NODE_BODY = 344                 # struct vc_cu_node_body
SYNC_STREAM, SYNC_EVENT, SYNC_CTX, SYNC_ALL = 0, 1, 2, 3
HTOD, DTOH, DTOD = 0, 1, 2
HOST_INLINE, HOST_ARENA = 0, 1

# Handle kinds, read from vc_cuda_wire.h's enum vc_cu_handle_kind (the
# generator numbers them in name order, so a new kind moves the others), and
# the executor's ids (host-backend/cuda/handles.c): a 2-bit tag (01), the kind
# (6 bits), a 32-bit generation, the table index (24 bits).
def wire_path():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "../../build/release/gen/vc_cuda_wire.h")
    for i, a in enumerate(sys.argv):
        if a == "--wire" and i + 1 < len(sys.argv):
            path = sys.argv[i + 1]
        elif a.startswith("--wire="):
            path = a.split("=", 1)[1]
    return path


def handle_kinds(path):
    if not os.path.exists(path):
        raise SystemExit(f"{path}: missing; run `make build/release/gen/.stamp` first")
    enum = re.search(r"enum vc_cu_handle_kind \{(.*?)\};", open(path).read(), re.S).group(1)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"VC_H_(\w+) = (\d+)", enum)}


KINDS = handle_kinds(wire_path())
H_CONTEXT, H_FUNCTION, H_MODULE, H_STREAM, H_EVENT = (KINDS[k] for k in ("CUCONTEXT", "CUFUNCTION", "CUMODULE",
                                                                          "CUSTREAM", "CUEVENT"))
H_LIBRARY, H_ARRAY, H_MIPMAP = KINDS["CULIBRARY"], KINDS["CUARRAY"], KINDS["CUMIPMAPPEDARRAY"]
H_LINK = KINDS["CULINKSTATE"]
H_GRAPH, H_GRAPHEXEC, H_GRAPHNODE = KINDS["CUGRAPH"], KINDS["CUGRAPHEXEC"], KINDS["CUGRAPHNODE"]


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


def set_kinds(path):
    """Bind the H_* kinds and the ids made of them to vc_cuda_wire.h's enum."""
    global H_CONTEXT, H_FUNCTION, H_MODULE, H_STREAM, H_EVENT, H_LIBRARY, H_LINK, CTX0, MOD1, FUNC2
    k = {m.group(1): int(m.group(2)) for m in re.finditer(r"VC_H_(\w+) = (\d+)", open(path).read())}
    H_CONTEXT, H_FUNCTION, H_MODULE = k["CUCONTEXT"], k["CUFUNCTION"], k["CUMODULE"]
    H_STREAM, H_EVENT, H_LIBRARY, H_LINK = k["CUSTREAM"], k["CUEVENT"], k["CULIBRARY"], k["CULINKSTATE"]
    CTX0, MOD1, FUNC2 = handle_id(H_CONTEXT, 0), handle_id(H_MODULE, 1), handle_id(H_FUNCTION, 2)


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

    def sync(self, kind=SYNC_CTX, handle=None, slot=3):
        handle = CTX0 if handle is None else handle
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
        # Graph calls first (their seeds were made with them), then any
        # generated query (a request of zeros only asks about nothing), then
        # any generated call (zero handles: an error in slot 3, nothing more).
        names = ["cuGraphInstantiateWithFlags", "cuGraphCreate", "cuGraphLaunch", "cuGraphUpload"]
        names += sorted(n for n in self.structs if "Get" in n and n not in names)
        names += sorted(n for n in self.structs if n not in names)
        for name in names:
            op = self.ops.get(name)
            if op is None or name not in self.structs:
                continue
            filler = (op & 0xFF) - len(rest)
            if filler >= 16 + len(pack_fields(self.structs[name], {})) and filler % 8 == 0:
                head = self.cmd(op, b"\0" * (filler - 16), REPLY, 3)
                assert len(head + rest) == op & 0xFF
                return head + rest
        raise SystemExit("no filler opcode fits the first publish; adjust make_seeds.py")


JIT = "II" + "iIQ" * 64            # struct vc_cu_jit (VC_CU_JIT_MAX options)
LINK_CREATE = "<Q" + JIT           # vc_cu_req_link_create
LINK_ADD = "<QQQiI256s" + JIT      # vc_cu_req_link_add
LINK = "<QQ"                       # vc_cu_req_link
LINK_READ = "<QQQQ"                # vc_cu_req_link_read
LOAD_JIT = "<QQII" + JIT           # vc_cu_req_load_jit


def jit(*opts):
    """A struct vc_cu_jit of (option, value) pairs."""
    vals = [0, 0] + [0] * (3 * 64)
    vals[0] = len(opts)
    for i, (o, v) in enumerate(opts):
        vals[2 + 3 * i] = o
        vals[4 + 3 * i] = v
    return vals


def manual_payload(s, name):
    """A well-formed request of zeros for a hand-written operation (its struct's size)."""
    fmt = {
        "vcDriverInfo": "<Q", "vcDeviceInfo": DEVICE_INFO, "vcImageBegin": IMAGE_BEGIN, "vcImagePut": IMAGE_PUT,
        "vcFuncParams": FUNC_PARAMS, "vcExportSlot": EXPORT_SLOT, "vcLoad": LOAD, "vcLaunch": LAUNCH,
        "vcMemAlloc": ALLOC, "vcMemFree": FREE, "vcMemcpy": MEMCPY, "vcMemset": MEMSET, "vcHostFunc": HOSTFUNC,
        "vcMemcpy2D": MEMCPY2D, "vcSync": SYNC, "vcOccupancyClusters": LAUNCH, "vcPinnedBase": PINNED_BASE,
        "vcHostRegister": HOST_REGISTER, "vcHostUnregister": HOST_REGISTER, "vcConsole": CONSOLE,
        "vcPinnedSegment": PINSEG,
        "cuModuleEnumerateFunctions": LIST, "cuLibraryEnumerateKernels": LIST, "cuGraphGetNodes": LIST,
        "cuKernelGetName": HANDLE, "cuFuncGetName": HANDLE, "cuGraphKernelNodeGetParams_v2": HANDLE,
        "cuGraphDestroy": HANDLE, "cuStreamGetCaptureInfo_v3": CAPTURE_INFO, "cuMemPoolSetAttribute": POOL_ATTR,
        "cuMemPoolGetAttribute": POOL_ATTR,
        "vcLinkCreate": LINK_CREATE, "vcLinkAdd": LINK_ADD, "vcLinkComplete": LINK, "vcLinkRead": LINK_READ,
        "vcLinkDestroy": LINK, "vcLoadJit": LOAD_JIT,
        "vcManagedAlloc": MANAGED_ALLOC, "vcManagedFree": MANAGED_PTR,
        "vcManagedQuery": MANAGED_PTR, "vcMemRangeAttrs": RANGE_ATTRS, "vcMemBatch": MEM_BATCH,
        "cuMemCreate": VMM_CREATE, "cuMemGetAllocationGranularity": VMM_CREATE,
        "vcStreamMemOp": MEMOP, "cuStreamGetAttribute": STREAM_ATTR, "cuStreamSetAttribute": STREAM_ATTR,
        "cuOccupancyMaxPotentialClusterSize": LAUNCH, "vcTensorMap": TMAP, "cuCtxGetExecAffinity": EXEC_AFFINITY,
        "vcMemcpy3D": MEMCPY3D,
        "cuArrayCreate_v2": ARRAY_CREATE, "cuArray3DCreate_v2": ARRAY_CREATE,
        "cuMipmappedArrayCreate": ARRAY_CREATE, "cuArrayGetPlane": ARRAY_SUB, "cuMipmappedArrayGetLevel": ARRAY_SUB,
        "cuArrayDestroy": HANDLE, "cuMipmappedArrayDestroy": HANDLE, "cuArrayGetSparseProperties": HANDLE,
        "cuMipmappedArrayGetSparseProperties": HANDLE, "cuTexObjectDestroy": HANDLE,
        "cuTexObjectGetResourceDesc": HANDLE, "cuTexObjectGetTextureDesc": HANDLE,
        "cuTexObjectGetResourceViewDesc": HANDLE, "cuSurfObjectDestroy": HANDLE,
        "cuSurfObjectGetResourceDesc": HANDLE,
        "vcGraphEdges": GRAPH_EDGES, "vcGraphDeps": GRAPH_DEPS,
        "cuMemMapArrayAsync": MAPARR, "cuMemBatchDecompressAsync": DECOMP, "cuPointerSetAttribute": PTRSET,
        "cuTexRefDestroy": HANDLE, "cuTexRefGetBorderColor": HANDLE, "cuTexRefGetArray": HANDLE,
        "cuTexRefGetMipmappedArray": HANDLE, "cuSurfRefGetArray": HANDLE, "cuTexRefSetAddress_v2": TEXREF_ADDR,
        "cuTexRefSetAddress2D_v3": TEXREF_ADDR, "cuTexRefSetBorderColor": TEXREF_BORDER,
        "cuDeviceGetDevResource": RES_GET, "cuCtxGetDevResource": RES_GET, "cuGreenCtxGetDevResource": RES_GET,
        "cuDevSmResourceSplitByCount": RES_SPLIT, "vcGreenSplitRead": RES_READ,
        "cuDevResourceGenerateDesc": RES_DESC, "cuGreenCtxCreate": GREEN, "cuGreenCtxDestroy": GREEN,
        "vcNvmlSystem": "<Q", "vcNvmlMemory": NV_DEV, "vcNvmlProcs": NV_DEV, "vcNvmlValue": NV_VALUE,
    }
    fmt.update({n: VMM for n in VMM_OPS})
    fmt.update({n: IPC for n in IPC_OPS})
    if name in ("cuGraphKernelNodeGetAttribute", "cuGraphKernelNodeSetAttribute", "cuGraphChildGraphNodeGetGraph",
                "cuGraphConditionalHandleCreate", "cuGraphDestroyNode", "cuGraphNodeFindInClone",
                "cuGraphInstantiateWithParams", "cuGraphExecUpdate_v2", "cuGraphDebugDotPrint",
                "cuDeviceGetGraphMemAttribute", "cuDeviceSetGraphMemAttribute", "cuUserObjectCreate",
                "cuStreamBeginCaptureToGraph", "cuStreamUpdateCaptureDependencies_v2", "cuGraphExecDestroy",
                "cuGraphNodeSetEnabled"):
        fmt[name] = GRAPH_CALL
    if name == "vcGraphNode":
        return graph_node(0, 0, 0, 5)
    sized = {"cuGraphAddKernelNode_v2": "vc_cu_req_graph_kernel", "cuGraphKernelNodeSetParams_v2":
             "vc_cu_req_graph_kernel", "cuGraphExecKernelNodeSetParams_v2": "vc_cu_req_graph_kernel",
             "cuGraphAddMemcpyNode": "vc_cu_req_graph_memcpy", "cuMemPoolCreate": "vc_cu_req_pool_create",
             "cuCtxCreate_v3": "vc_cu_req_ctx_affinity", "cuDeviceGetHostAtomicCapabilities": "vc_cu_req_atomic_caps",
             "cuDeviceGetP2PAtomicCapabilities": "vc_cu_req_atomic_caps"}
    if name.startswith("cuDevicePrimaryCtx") or name in ("cuCtxCreate_v4", "cuCtxDestroy_v2"):
        return struct.pack(CTX, CTX0, CTX0, 0, 0)
    if name == "vcMemset":
        return struct.pack(MEMSET, CTX0, 0, 0, 0, 0, 1, 0, 0, 0, 0)  # elem 1: 0 is a violation
    if name == "vcConsole":
        return struct.pack(CONSOLE, CTX0, 256, 0)
    if name == "vcLogs":
        return struct.pack(LOGS, CTX0, 0, 4, 0, 0, 0, 0)  # a fetch: op 0 is a violation
    if name in ("cuTexObjectCreate", "cuSurfObjectCreate"):
        return struct.pack("<Q", CTX0) + b"\0" * (TEXOBJ_SIZE - 8)
    if name in ("cuArrayCreate_v2", "cuArray3DCreate_v2", "cuMipmappedArrayCreate"):
        kind = {"cuArrayCreate_v2": ARR_2D, "cuArray3DCreate_v2": ARR_3D}.get(name, ARR_MIPMAP)
        return struct.pack(ARRAY_CREATE, CTX0, 8, 8, 0, 0x20, 1, 0, 1, kind, 0)
    if name in ("cuMemGetDefaultMemPool", "cuMemGetMemPool", "cuMemSetMemPool"):
        what = ["cuMemGetDefaultMemPool", "cuMemGetMemPool", "cuMemSetMemPool"].index(name)
        return struct.pack(LOCPOOL, CTX0, 0, 1, 0, 1, what)  # device 0, pinned
    if name in sized:
        return struct.pack("<Q", CTX0) + b"\0" * (SIZES[sized[name]] - 8)
    f = fmt[name]
    return struct.pack("<Q", CTX0) + b"\0" * (struct.calcsize(f) - 8)


def graph_node(action, graph, node, kind, deps=(), **body):
    """vcGraphNode: @action on a node of type @kind; memset fields by name (shared/vc_cuda_graph.h)."""
    b = bytearray(NODE_BODY)
    struct.pack_into("<iIQ", b, 0, kind, 0, body.get("kctx", 0))
    if kind == 2 and "dst" in body:  # memset: dst, pitch, width, height, value, elem
        struct.pack_into("<QQQQII", b, 16, body["dst"], body.get("pitch", 0), body["width"], 1,
                         body.get("value", 0), body.get("elem", 4))
    if kind == 1 and "src" in body:  # memcpy: two copy sides (x, y, z, addr, pitch, height, kind), extent, cookie
        for off, (addr, side_kind) in ((56, body["src"]), (112, body["cdst"])):
            struct.pack_into("<QQQQQQII", b, off, 0, 0, 0, addr, 0, 0, side_kind, 0)
        struct.pack_into("<QQQQ", b, 168, body["width"], 1, 1, body.get("cookie", 0))
    return (struct.pack("<QIIQQ", CTX0, action, len(deps), graph, node) + bytes(b)
            + b"".join(struct.pack("<Q", d) for d in deps))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--wire", default=os.path.join(here, "../../build/release/gen/vc_cuda_wire.h"))
    args = ap.parse_args()
    if not os.path.exists(args.wire):
        raise SystemExit(f"{args.wire}: missing; run `make build/release/gen/.stamp` first")
    set_kinds(args.wire)
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
         + s.gen("cuLibraryGetKernel", library=handle_id(H_LIBRARY, 1))
         + s.cmd("cuLibraryEnumerateKernels", struct.pack(LIST, CTX0, handle_id(H_LIBRARY, 1), 0, 16), REPLY, 1))
    # JIT linking: a link with both logs, a PTX input, completion, a read, a
    # destroy; then a module load with a log (CUjit_option 3..6: log buffers and sizes).
    logs = jit((3, 0), (4, 1024), (5, 0), (6, 1024), (2, 0))
    link = handle_id(H_LINK, 1)
    seed("link", s.retain()
         + s.cmd("vcLinkCreate", struct.pack(LINK_CREATE, CTX0, *logs), REPLY, 2)
         + s.cmd("vcImageBegin", struct.pack(IMAGE_BEGIN, CTX0, len(STORE_PTX)), REPLY, 2)
         + s.cmd("vcImagePut", struct.pack(IMAGE_PUT, CTX0, 1, 0, len(STORE_PTX), 0, 1, 0) + STORE_PTX)
         + s.cmd("vcLinkAdd", struct.pack(LINK_ADD, CTX0, link, 1, 1, 0, b"a.ptx", *jit()), REPLY, 2)
         + s.cmd("vcLinkComplete", struct.pack(LINK, CTX0, link), REPLY, 2)
         + s.cmd("vcLinkRead", struct.pack(LINK_READ, CTX0, link, 0, 16), REPLY, 2)
         + s.cmd("vcLinkDestroy", struct.pack(LINK, CTX0, link), REPLY, 2)
         + s.cmd("vcImageBegin", struct.pack(IMAGE_BEGIN, CTX0, len(STORE_PTX)), REPLY, 2)
         + s.cmd("vcImagePut", struct.pack(IMAGE_PUT, CTX0, 2, 0, len(STORE_PTX), 0, 1, 0) + STORE_PTX)
         + s.cmd("vcLoadJit", struct.pack(LOAD_JIT, CTX0, 2, 0, 0, *jit((3, 0), (4, 256))), REPLY, 2))
    # ---- managed memory: allocate, ask, range attributes, a batch, free ------------------
    managed = 0x7e0000000000  # the stand-in's first address (its addresses start there)
    seed("managed", s.retain()
         + s.cmd("vcManagedAlloc", struct.pack(MANAGED_ALLOC, CTX0, 8192, 1, 0), REPLY, 1)
         + s.cmd("vcManagedQuery", struct.pack(MANAGED_PTR, CTX0, managed + 64), REPLY, 2)
         + s.cmd("vcMemRangeAttrs", struct.pack(RANGE_ATTRS, CTX0, managed, 8192, 2, 0, 1, 4, *([0] * 14),
                                                4, 8, *([0] * 14)), REPLY, 2)
         + s.cmd("vcMemBatch", struct.pack(MEM_BATCH, CTX0, 0, 0, 0, 2, 1, 0)
                 + struct.pack("<QQQQ", managed, 4096, managed + 4096, 4096) + struct.pack("<iiQ", 1, 0, 0),
                 REPLY, 2)
         + s.memcpy(DTOH, src=managed, length=64, flags=REPLY, slot=3)
         + s.cmd("vcManagedFree", struct.pack(MANAGED_PTR, CTX0, managed), REPLY, 1))
    # ---- arrays, texture objects, copies with arrays and 3D boxes (array.c, copy3d.c) ----
    arr1 = handle_id(H_ARRAY, 2)  # after the context and the allocation
    side = lambda kind, addr=0, pitch=0, height=0, x=0, y=0, z=0: (addr, x, y, z, pitch, height, kind, 0)
    res = struct.pack("<iIQ", 0, 0, arr1).ljust(144, b"\0")  # CU_RESOURCE_TYPE_ARRAY
    split_seed("arrays", 65536,
               s.cmd("cuArray3DCreate_v2", struct.pack(ARRAY_CREATE, CTX0, 64, 16, 0, 0x01, 4, 0x02, 0, ARR_3D, 0),
                     REPLY, 1)
               + s.cmd("vcMemcpy3D", struct.pack(MEMCPY3D, CTX0, 0, *side(SIDE_STAGED), *side(SIDE_ARRAY, arr1),
                                                 256, 16, 1, 0, 1000, 0, 3, 0), REPLY, 2)
               + s.cmd("vcMemcpy3D", struct.pack(MEMCPY3D, CTX0, 0, *side(SIDE_STAGED), *side(SIDE_ARRAY, arr1),
                                                 256, 16, 1, 1000, 3096, 4096, 3, 1))
               + s.cmd("vcMemcpy3D", struct.pack(MEMCPY3D, CTX0, 0, *side(SIDE_ARRAY, arr1, x=4, y=1),
                                                 *side(SIDE_DEVICE, a, 300, 20), 200, 10, 1, 0, 0, 0, 2, 0), REPLY, 2)
               + s.cmd("vcMemcpy3D", struct.pack(MEMCPY3D, CTX0, 0, *side(SIDE_DEVICE, a, 300, 20, z=1),
                                                 *side(SIDE_STAGED), 300, 20, 2, 0, 12000, 0, 3, 0), REPLY, 2)
               + s.gen("cuArray3DGetDescriptor_v2", hArray=arr1)
               + s.cmd("cuTexObjectCreate", struct.pack("<Q", CTX0) + res + b"\0" * (TEXOBJ_SIZE - 8 - 144), REPLY, 1)
               + s.cmd("cuSurfObjectCreate", struct.pack("<Q", CTX0) + res + b"\0" * (TEXOBJ_SIZE - 8 - 144), REPLY, 1)
               + s.cmd("cuTexObjectGetResourceDesc", struct.pack(HANDLE, CTX0, 1), REPLY, 1)
               + s.cmd("cuTexObjectDestroy", struct.pack(HANDLE, CTX0, 1), REPLY, 1)
               + s.cmd("cuMipmappedArrayCreate", struct.pack(ARRAY_CREATE, CTX0, 64, 64, 0, 0x20, 1, 0, 3, ARR_MIPMAP,
                                                             0), REPLY, 1)
               + s.cmd("cuMipmappedArrayGetLevel", struct.pack(ARRAY_SUB, CTX0, handle_id(H_MIPMAP, 3), 1, 0), REPLY, 1)
               + s.cmd("cuArrayDestroy", struct.pack(HANDLE, CTX0, arr1), REPLY, 1)
               + s.sync())
    # ---- synchronisation, streams, events, host functions, device printf ---------------
    seed("sync", s.retain()
         + s.sync(SYNC_CTX, CTX0) + s.sync(SYNC_STREAM, 0) + s.sync(SYNC_ALL, 0)
         + s.gen("cuStreamCreate", Flags=1) + s.gen("cuEventCreate", Flags=2)
         + s.gen("cuEventRecord", hEvent=handle_id(H_EVENT, 2), hStream=handle_id(H_STREAM, 1))
         + s.sync(SYNC_EVENT, handle_id(H_EVENT, 2))
         + s.sync(SYNC_STREAM, handle_id(H_STREAM, 1)))
    # ---- virtual memory management and IPC (handle ids: kind 0x7d, gen 1, slot k) ---------
    vh = lambda k: (0x7D << 56) | (1 << 24) | k  # noqa: E731
    va = 0x7E0000000000  # the stand-in's first address; the fuzzer finds others
    acc = struct.pack("<iiI", 1, 0, 3)  # device 0, read-write
    seed("vmm", s.retain()
         + s.cmd("cuMemGetAllocationGranularity", struct.pack(VMM_CREATE, CTX0, 0, 0, 1, 0, DEVICE_PROP), REPLY, 1)
         + s.cmd("cuMemAddressReserve", struct.pack(VMM, CTX0, 0, 8 << 20, 0, 0, 0, 0, 0, b""), REPLY, 1)
         + s.cmd("cuMemCreate", struct.pack(VMM_CREATE, CTX0, 2 << 20, 0, 0, 0, DEVICE_PROP), REPLY, 1)
         + s.cmd("cuMemMap", struct.pack(VMM, CTX0, va, 2 << 20, 0, vh(0), 0, 0, 0, b""), REPLY, 1)
         + s.cmd("cuMemSetAccess", struct.pack(VMM, CTX0, va, 2 << 20, 0, 0, 0, 1, 0, b"") + acc, REPLY, 1)
         + s.memset(va + 64, 100, 0x5A, 1)
         + s.cmd("cuMemRetainAllocationHandle", struct.pack(VMM, CTX0, va + 8, 0, 0, 0, 0, 0, 0, b""), REPLY, 1)
         + s.cmd("cuMemRelease", struct.pack(VMM, CTX0, 0, 0, 0, vh(0), 0, 0, 0, b""), REPLY, 1)
         + s.cmd("cuMemUnmap", struct.pack(VMM, CTX0, va, 2 << 20, 0, 0, 0, 0, 0, b""), REPLY, 1)
         + s.cmd("cuMemRelease", struct.pack(VMM, CTX0, 0, 0, 0, vh(0), 0, 0, 0, b""), REPLY, 1)
         + s.cmd("cuMemAddressFree", struct.pack(VMM, CTX0, va, 8 << 20, 0, 0, 0, 0, 0, b""), REPLY, 1))
    # shareable handles of an allocation and a pool: a POSIX descriptor (type 1; refused where
    # no listener brokers descriptors, as under the fuzzer), FABRIC (type 8), a forged token
    seed("ipc-shareable", s.retain()
         + s.cmd("cuMemCreate", struct.pack(VMM_CREATE, CTX0, 2 << 20, 0, 0, 0, DEVICE_PROP), REPLY, 1)
         + s.cmd("cuMemExportToShareableHandle", struct.pack(IPC, CTX0, 0, vh(0), 0, 1, 0, b""), REPLY, 1)
         + s.cmd("cuMemExportToShareableHandle", struct.pack(IPC, CTX0, 0, vh(0), 0, 8, 0, b""), REPLY, 1)
         + s.cmd("cuMemImportFromShareableHandle", struct.pack(IPC, CTX0, 0, 0, 0, 1, 0, b"vcudaIPC\6"), REPLY, 1)
         + s.cmd("cuMemImportFromShareableHandle", struct.pack(IPC, CTX0, 0, 0, 0, 8, 0, b"vcudaIPC\3"), REPLY, 1)
         + s.cmd("cuMemPoolImportFromShareableHandle", struct.pack(IPC, CTX0, 0, 0, 0, 1, 0, b"vcudaIPC\7"),
                 REPLY, 1)
         + s.cmd("cuMemRelease", struct.pack(VMM, CTX0, 0, 0, 0, vh(0), 0, 0, 0, b""), REPLY, 1))
    split_seed("ipc", 4096,
               s.cmd("cuIpcGetMemHandle", struct.pack(IPC, CTX0, a, 0, 0, 0, 0, b""), REPLY, 1)
               + s.cmd("cuIpcOpenMemHandle_v2", struct.pack(IPC, CTX0, 0, 0, 1, 0, 0, b"vcudaIPC\1"), REPLY, 1)
               + s.gen("cuEventCreate", Flags=6)
               + s.cmd("cuIpcGetEventHandle", struct.pack(IPC, CTX0, 0, handle_id(H_EVENT, 1), 0, 0, 0, b""),
                       REPLY, 1)
               + s.cmd("cuIpcOpenEventHandle", struct.pack(IPC, CTX0, 0, 0, 0, 0, 0, b"vcudaIPC\2"), REPLY, 1)
               + s.free(a))
    # ---- the guest NVML: system, memory view, processes, host-NVML values ------------------
    seed("nvml", s.cmd("vcNvmlSystem", struct.pack("<Q", 0), REPLY, 1)
         + s.cmd("vcNvmlMemory", struct.pack(NV_DEV, 0, 0, 0), REPLY, 1)
         + s.cmd("vcNvmlProcs", struct.pack(NV_DEV, 0, 0, 0), REPLY, 2)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 1, 0, 0), REPLY, 1)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 18, 1, 1), REPLY, 1)
         # peer-to-peer status (VC_NV_P2P_STATUS): with itself, then with a device that is not one
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 40, 0, 0), REPLY, 1)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 40, 1, 7), REPLY, 1)
         # field values (VC_NV_FIELD): NVLink link count, link 5's state, a field that is not one
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 41, 91, 0), REPLY, 1)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 41, 165, 5), REPLY, 1)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 41, 0xFFFFFFFF, 0xFFFFFFFF), REPLY, 1)
         # NVLink links (VC_NV_NVLINK_STATE .. _REMOTE_PCI): link 0, a link past the last
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 42, 0, 0), REPLY, 1)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 44, 0, 0), REPLY, 1)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 46, 0, 0), REPLY, 1)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 46, 0xFFFFFFFF, 0), REPLY, 1)
         # monitors' values: a clock by type and id, remapped rows (four outputs), a string
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 60, 1, 0xFFFFFFFF), REPLY, 1)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 68, 0, 0), REPLY, 1)
         + s.cmd("vcNvmlValue", struct.pack(NV_VALUE, 0, 0, 69, 0, 0), REPLY, 1)
         + s.retain() + s.alloc(4096)
         + s.cmd("vcNvmlMemory", struct.pack(NV_DEV, 0, 0, 0), REPLY, 1))
    seed("hostfn_console", s.retain()
         + s.cmd("vcHostFunc", struct.pack(HOSTFUNC, CTX0, 0, 77))
         + s.cmd("vcConsole", struct.pack(CONSOLE, CTX0, 256, 0), REPLY, 1))
    # host functions named by a graph pair's cookie (as on a capturing stream) on a stream that
    # is not capturing: run once as other host functions; the second also claims a user object
    seed("hostfn_graph_cookie", s.retain()
         + s.cmd("vcHostFunc", struct.pack(HOSTFUNC, CTX0, 0, (1 << 63) | 3))
         + s.cmd("vcHostFunc", struct.pack(HOSTFUNC, CTX0, 0, (1 << 63) | (1 << 62) | 3)))
    # stream-ordered frees of a null pointer, of cuMemAlloc's memory, and of an address of nothing
    seed("free_async_forms", s.retain() + s.alloc(4096)
         + s.free(0, asynchronous=1)
         + s.free(dptr(1), asynchronous=1)
         + s.free(dptr(1, 1 << 30), asynchronous=1))
    # copies and memsets of zero bytes at a null device pointer and at an address of nothing
    # (the driver answers them: they touch no memory), blocking and asynchronous
    seed("zero_bytes", s.retain() + s.alloc(4096)
         + s.memcpy(HTOD) + s.memcpy(HTOD, dst=1 << 40, asynchronous=1)
         + s.memcpy(DTOH, flags=REPLY, slot=2) + s.memcpy(DTOD, src=1 << 40, asynchronous=1)
         + s.memset(0, 0, 7, 1) + s.memset(1 << 40, 0, 7, 4)
         + s.sync())
    # ---- stream memory operations, stream attributes, tensor maps ------------------------
    seed("memops", s.retain() + s.alloc(4096)
         + s.gen("cuStreamCreate", Flags=1) + s.gen("cuStreamCreate", Flags=1)
         + s.cmd("vcStreamMemOp", struct.pack(MEMOP, CTX0, handle_id(H_STREAM, 2), 0, 1, 0, 0)
                 + struct.pack(MEMOP_OP, 1, 0, a, 1), REPLY, 2)
         + s.cmd("vcStreamMemOp", struct.pack(MEMOP, CTX0, handle_id(H_STREAM, 3), 1, 3, 0, 0)
                 + struct.pack(MEMOP_OP, 2, 0, dptr(0, 4), 7) + struct.pack(MEMOP_OP, 6, 0, 0, 0)
                 + struct.pack(MEMOP_OP, 5, 0, a, 1), REPLY, 2)
         + s.sync(SYNC_STREAM, handle_id(H_STREAM, 2))
         + s.cmd("cuStreamSetAttribute", struct.pack(STREAM_ATTR, CTX0, handle_id(H_STREAM, 2), 1, 0,
                                                    struct.pack("<QQfii", a, 4096, 0.5, 2, 1)), REPLY, 2)
         + s.cmd("cuStreamGetAttribute", struct.pack(STREAM_ATTR, CTX0, handle_id(H_STREAM, 2), 8, 0, b""), REPLY, 2))
    # ---- sparse array mapping, decompression, pools of a location (memmisc.c) ----------
    sparse = handle_id(H_ARRAY, 2)  # after the context and the allocation
    pool = handle_id(KINDS["CUMEMORYPOOL"], 3)
    mapinfo = lambda op, mem=0, off=0: struct.pack(MAPINFO, 0, 0, sparse, 0, 0, 0, 0, 0, 0, 0, 64, 64, 1,
                                                  op, 0, mem, off, 1, 0, 0, 0)
    seed("memmisc", s.retain() + s.alloc(65536)
         + s.cmd("cuArray3DCreate_v2", struct.pack(ARRAY_CREATE, CTX0, 512, 512, 0, 0x01, 1, 0x40, 0, ARR_3D, 0),
                 REPLY, 1)
         + s.cmd("cuMemMapArrayAsync", struct.pack(MAPARR, CTX0, 0, 2, 0) + mapinfo(2) + mapinfo(1, 0x7d00000001000000),
                 REPLY, 1)
         + s.cmd("cuMemBatchDecompressAsync", struct.pack(DECOMP, CTX0, 0, 1, 0)
                 + struct.pack(DECOMP_ENTRY, 4096, 8192, a + 60000, a, a + 16384, 1, b""), REPLY, 1)
         + s.cmd("cuMemGetDefaultMemPool", struct.pack(LOCPOOL, CTX0, 0, 1, 0, 1, 0), REPLY, 1)
         + s.cmd("cuMemSetMemPool", struct.pack(LOCPOOL, CTX0, pool, 1, 0, 1, 2), REPLY, 1)
         + s.cmd("cuMemGetMemPool", struct.pack(LOCPOOL, CTX0, 0, 1, 0, 1, 1), REPLY, 1)
         + s.cmd("cuPointerSetAttribute", struct.pack(PTRSET, CTX0, a + 8, 12, 1), REPLY, 1)
         + s.cmd("cuArrayDestroy", struct.pack(HANDLE, CTX0, sparse), REPLY, 1))
    seed("tensor_map", s.retain() + s.alloc(65536)
         + s.cmd("vcTensorMap", struct.pack(TMAP, CTX0, 0, 7, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 16,
                                            0, 0, 0, 1, 1, 0, 0, 0, 0, 0, a, 64, 64, 0, 0, 0, 256, 0, 0, 0, b""),
                 REPLY, 2))
    # ---- graphs: nodes of every kind but kernels, edges, dependencies, instantiation ------
    g, n1, n2, ex = handle_id(H_GRAPH, 1), handle_id(H_GRAPHNODE, 2), handle_id(H_GRAPHNODE, 3), \
        handle_id(H_GRAPHEXEC, 4)
    split_seed("graph_nodes", 4096,
               s.cmd("vcPinnedBase", struct.pack(PINNED_BASE, CTX0, 0), REPLY, 1)  # the pool, for the bounce
               + s.gen("cuGraphCreate", flags=0)
               + s.cmd("vcGraphNode", graph_node(0, g, 0, 5), REPLY, 1)
               + s.cmd("vcGraphNode", graph_node(0, g, 0, 2, deps=[n1], dst=a, width=64, value=7), REPLY, 1)
               + s.cmd("vcGraphNode", graph_node(3, 0, n2, 2), REPLY, 1)
               # a copy out of the device into a bounce (VC_CU_MEM_BOUNCE) with its pair's graph cookie
               + s.cmd("vcGraphNode", graph_node(0, g, 0, 1, deps=[n2], src=(a, 0), cdst=(0, 2), width=64,
                                                 cookie=1 << 63 | 5), REPLY, 1)
               + s.cmd("cuGraphNodeSetEnabled", struct.pack(GRAPH_CALL, CTX0, ex, n2, 0, 0, b""), REPLY, 1)
               + s.cmd("vcGraphEdges", struct.pack(GRAPH_EDGES, CTX0, g, 0, 1, 0, 16), REPLY, 1)
               + s.cmd("vcGraphDeps", struct.pack(GRAPH_DEPS, CTX0, g, 1, 1, 0, 0) + struct.pack("<QQ", n1, n2),
                       REPLY, 1)
               + s.cmd("cuGraphInstantiateWithParams", struct.pack(GRAPH_CALL, CTX0, g, 0, 0, 0, b""), REPLY, 1)
               + s.cmd("cuGraphDebugDotPrint", struct.pack(GRAPH_CALL, CTX0, g, 0, 0, 0, b""), REPLY, 1)
               + s.cmd("cuGraphExecDestroy", struct.pack(GRAPH_CALL, CTX0, ex, 0, 0, 0, b""), REPLY, 1)
               + s.cmd("cuGraphDestroyNode", struct.pack(GRAPH_CALL, CTX0, n2, 0, 0, 0, b""), REPLY, 1)
               + s.cmd("cuGraphDestroy", struct.pack(HANDLE, CTX0, g), REPLY, 1))
    # ---- texture and surface references: a module's, a created one ----------------------
    tr, sr, tc = handle_id(KINDS["CUTEXREF"], 2), handle_id(KINDS["CUSURFREF"], 3), handle_id(KINDS["CUTEXREF"], 4)
    split_seed("texref", 65536,
               s.cmd("vcImageBegin", struct.pack(IMAGE_BEGIN, CTX0, len(TEXREF_PTX)), REPLY, 2)
               + s.cmd("vcImagePut", struct.pack(IMAGE_PUT, CTX0, 1, 0, len(TEXREF_PTX), 0, 1, 0) + TEXREF_PTX)
               + s.cmd("vcLoad", struct.pack(LOAD, CTX0, 1, 0, 0), REPLY, 2)
               + s.gen("cuModuleGetTexRef", hmod=MOD1, string=b"tex_a\0")
               + s.cmd("cuTexRefSetAddress_v2", struct.pack(TEXREF_ADDR, CTX0, tr, a, 4096, 0, 0, 0, 0, 0), REPLY, 1)
               + s.cmd("cuTexRefSetAddress2D_v3", struct.pack(TEXREF_ADDR, CTX0, tr, a, 0, 1024, 64, 16, 0x20, 1),
                       REPLY, 1)
               + s.cmd("cuTexRefSetBorderColor", struct.pack(TEXREF_BORDER, CTX0, tr, 1.0, 2.0, 3.0, 4.0), REPLY, 1)
               + s.cmd("cuTexRefGetBorderColor", struct.pack(HANDLE, CTX0, tr), REPLY, 1)
               + s.gen("cuTexRefSetFormat", hTexRef=tr, fmt=0x20, NumPackedComponents=1)
               + s.cmd("cuTexRefGetArray", struct.pack(HANDLE, CTX0, tr), REPLY, 1)
               + s.gen("cuModuleGetSurfRef", hmod=MOD1, string=b"surf_a\0")
               + s.cmd("cuSurfRefGetArray", struct.pack(HANDLE, CTX0, sr), REPLY, 1)
               + s.gen("cuTexRefCreate")
               + s.cmd("cuTexRefDestroy", struct.pack(HANDLE, CTX0, tc), REPLY, 1)
               + s.cmd("cuTexRefDestroy", struct.pack(HANDLE, CTX0, tr), REPLY, 1)
               + s.gen("cuModuleUnload", hmod=MOD1))
    # ---- green contexts and device resources, the driver's logs --------------------------
    # The stand-in's device resource is the session's first (id 1 << 10 | 1), a split's
    # groups the next ones; the descriptor is handle 1, the green context 2, its context
    # 3, its stream 4.
    sm = lambda n: struct.pack("<III", n, 8, 8)  # noqa: E731
    hd, hg = handle_id(KINDS["CUDEVRESOURCEDESC"], 1), handle_id(KINDS["CUGREENCTX"], 2)
    seed("green", s.retain()
         + s.cmd("cuDeviceGetDevResource", struct.pack(RES_GET, CTX0, 0, 0, 1), REPLY, 1)
         + s.cmd("cuDevSmResourceSplitByCount", struct.pack(RES_SPLIT, CTX0, 1, 0, 1 << 10 | 1, sm(132), 2, 1, 1,
                                                            0, 16, 0), REPLY, 1)
         + s.cmd("vcGreenSplitRead", struct.pack(RES_READ, CTX0, 1, 0), REPLY, 1)
         + s.cmd("cuDevResourceGenerateDesc", struct.pack(RES_DESC, CTX0, 1, 0)
                 + struct.pack(RES, 1, 0, 2 << 10 | 2, sm(16)), REPLY, 1)
         + s.cmd("cuGreenCtxCreate", struct.pack(GREEN, CTX0, hd, 0, 1), REPLY, 1)
         + s.cmd("cuGreenCtxGetDevResource", struct.pack(RES_GET, CTX0, hg, 0, 1), REPLY, 1)
         + s.gen("cuCtxFromGreenCtx", hCtx=hg)
         + s.gen("cuGreenCtxStreamCreate", greenCtx=hg, flags=1)
         + s.gen("cuGreenCtxGetId", greenCtx=hg)
         + s.sync(SYNC_STREAM, handle_id(H_STREAM, 4))
         + s.cmd("cuGreenCtxDestroy", struct.pack(GREEN, CTX0, hg, 0, 0), REPLY, 1))
    seed("logs", s.retain()
         + s.cmd("vcLogs", struct.pack(LOGS, CTX0, 0, 3, 0, 0, 1, 0), REPLY, 1)
         + s.gen("cuLogsCurrent", flags=0)
         + s.cmd("cuDeviceGetDevResource", struct.pack(RES_GET, CTX0, 0, 0, 0), REPLY, 1)
         + s.cmd("vcLogs", struct.pack(LOGS, CTX0, 4096, 1, 0, 1, 0, 0), REPLY, 1)
         + s.cmd("vcLogs", struct.pack(LOGS, CTX0, 0, 2, 0, 0, 0, 16), REPLY, 1)
         + s.cmd("vcLogs", struct.pack(LOGS, CTX0, 0, 4, 0, 0, 0, 0), REPLY, 1)
         + s.cmd("vcLogs", struct.pack(LOGS, CTX0, 0, 3, 0, 0, 0, 0), REPLY, 1))
    # ---- pinned segments: map (the fuzzer's session passes no descriptors), register, copy,
    # unmap, a forged offset ----------------------------------------------------------------
    seed("pinned_segment", s.retain() + s.alloc(4096)
         + s.cmd("vcPinnedSegment", struct.pack(PINSEG, CTX0, 1, 0x7F0000000000, 1 << 20, 0, 0, 0, 0), REPLY, 2)
         + s.cmd("vcPinnedSegment", struct.pack(PINSEG, CTX0, 2, 0x7F0000000000, 1 << 20, 0, 0, 3, 256 << 10),
                 REPLY, 2)
         + s.cmd("vcHostRegister", struct.pack(HOST_REGISTER, CTX0, PINSEG_OFF0, 1 << 20, 0, 0), REPLY, 2)
         + s.memcpy(0, dst=a, length=64, host=2, arena_off=PINSEG_OFF0 + 4096)
         + s.cmd("vcPinnedSegment", struct.pack(PINSEG, CTX0, 0, 0, 0, PINSEG_OFF0, 1, 0, 0), REPLY, 2)
         + s.cmd("vcPinnedSegment", struct.pack(PINSEG, CTX0, 0, 0, 0, 12345, 1, 0, 0), REPLY, 2)
         + s.cmd("vcPinnedSegment", struct.pack(PINSEG_FULL, CTX0, 3, 0x7E0000000000, 64 << 20, 0, 0, 0, 0, 0, 1, 0),
                 REPLY, 2)
         + s.cmd("vcPinnedSegment", struct.pack(PINSEG_FULL, CTX0, 4, 0x7E0000000000, 1 << 20, 0, 0, 0, 0, 0, 6, 0),
                 REPLY, 2))
    # ---- fenced commands (VC_CMD_F_FENCE = 2): a blocking page-locked copy (refused here:
    # no segment), an inline copy and a synchronisation whose fence words the host stores,
    # and a fence without a reply, which is fatal ---------------------------------------------
    seed("fenced", s.retain() + s.alloc(4096)
         + s.memcpy(0, dst=a, length=64, host=2, arena_off=PINSEG_OFF0, flags=REPLY | 2, slot=1)
         + s.memcpy(DTOH, src=a, length=64, flags=REPLY | 2, slot=3)
         + s.cmd("vcSync", struct.pack(SYNC, CTX0, CTX0, SYNC_CTX, 0), REPLY | 2, 2)
         + s.cmd("NOP", b"", 2, 1))
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
