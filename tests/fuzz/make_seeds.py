#!/usr/bin/env python3
"""Write the committed seed corpus for the fuzz targets (run from this folder).

Seeds are well-formed command streams as the guest library writes them, so that
the fuzzer starts from deep inside the decoder rather than at its first check.
"""
import os
import struct

OPS = dict(NOP=1, ECHO=2, SYNC=3, MEM_ALLOC=16, MEM_FREE=17, HTOD=18, DTOH=19, DTOD=20,
           MEMSET=21, LAUNCH=22)
REPLY = 1
DPTR = 0x7F0000000000  # the CI stand-in's first device address


def cmd(op, payload=b"", flags=0, slot=0):
    size = 16 + len(payload)
    padded = (size + 7) & ~7
    return struct.pack("<IIII", OPS[op], padded, flags, slot) + payload + b"\0" * (padded - size)


def seed(name, body, opt=0):
    os.makedirs("corpus/decode", exist_ok=True)
    with open(f"corpus/decode/{name}", "wb") as f:
        f.write(bytes([opt]) + body)


alloc = cmd("MEM_ALLOC", struct.pack("<Q", 65536), REPLY, 1)
seed("nop", cmd("NOP") + cmd("NOP", b"payload!"))
seed("echo", cmd("ECHO", struct.pack("<II", 5, 0) + b"hello", REPLY, 2))
seed("alloc_copy", alloc
     + cmd("HTOD", struct.pack("<QQQII", DPTR + 8, 16, 0, 0, 0) + bytes(range(16)))
     + cmd("DTOH", struct.pack("<QQQII", DPTR, 64, 0, 0, 0), REPLY, 3)
     + cmd("DTOH", struct.pack("<QQQII", DPTR, 4096, 4096, 1, 0))
     + cmd("HTOD", struct.pack("<QQQII", DPTR + 4096, 8192, 0, 1, 0))
     + cmd("MEM_FREE", struct.pack("<Q", DPTR), REPLY, 0))
seed("memset_dtod", alloc
     + cmd("MEMSET", struct.pack("<QQII", DPTR, 100, 0xAB, 1))
     + cmd("MEMSET", struct.pack("<QQII", DPTR + 2, 100, 0xABCD, 2))
     + cmd("MEMSET", struct.pack("<QQII", DPTR + 4, 100, 0xDEADBEEF, 4))
     + cmd("DTOD", struct.pack("<QQQ", DPTR + 1024, DPTR, 512))
     + cmd("SYNC", b"", REPLY, 0))
seed("launch", cmd("LAUNCH", struct.pack("<QQIIIIIIII", 0x1234, 0, 8, 1, 1, 128, 1, 1, 0, 16)
                   + struct.pack("<QQ", DPTR, 42)) + cmd("SYNC", b"", REPLY, 1))
seed("split", alloc + cmd("NOP", b"x" * 40) + cmd("SYNC", b"", REPLY, 1), opt=2)
seed("rawtail", struct.pack("<I", 0x10000) + cmd("NOP"), opt=1)

os.makedirs("corpus/handshake", exist_ok=True)
hello = struct.pack("<IIQII16s", 0x4C454856, 1, 0, 1234, 0, b"python3")
with open("corpus/handshake/hello", "wb") as f:
    f.write(hello)
