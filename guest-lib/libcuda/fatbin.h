/* SPDX-License-Identifier: MIT */
/*
 * fatbin.h - fat binaries trimmed to the session's devices before they are
 * staged on the host.
 *
 * A framework's fat binaries carry device code for every architecture it
 * was built for: PyTorch 2.11's libtorch_cuda.so holds 298 MB of them, of
 * which 51 MB is sm_90 code (cuBLASLt 217 MB and 40 MB, cuDNN's engines
 * 170 MB and 22 MB). The driver reads a fat binary in place; vcuda has to
 * copy each one the program loads to the host, where the driver keeps only
 * what one of the devices can run. That is a cubin of the device's own
 * major architecture (SASS runs on devices of its major version and a minor
 * one at least its own) or PTX of an architecture no newer than the device,
 * to be compiled there. Everything else is dropped before the copy.
 */
#ifndef VC_CU_FATBIN_H
#define VC_CU_FATBIN_H

#include <stdint.h>

/** The magic word that starts a fat binary. */
#define VC_CU_FATBIN_MAGIC 0xBA55ED50u

/**
 * vc_cu_fatbin_trim() - a copy of the fat binary @img (@size bytes: its
 * header and entries) without the entries no device can use: cubins of a
 * major architecture that is not set in @majors (bit m for major version
 * m), and PTX newer than @max_arch (the newest device's major * 10 +
 * minor). Entries of other kinds are kept, and the order is kept.
 *
 * Returns the copy (malloc'd; its size in *@out_size), or NULL when there is
 * nothing to drop, when nothing usable would be left (so that the driver
 * answers the original as natively: no binary for the GPU), when the image
 * is not a well-formed fat binary of exactly @size bytes, or when memory is
 * short. On NULL the caller stages the original unchanged.
 */
void *vc_cu_fatbin_trim(const void *img, uint64_t size, uint32_t majors, unsigned max_arch, uint64_t *out_size);

#endif /* VC_CU_FATBIN_H */
