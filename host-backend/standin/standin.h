/* SPDX-License-Identifier: MIT */
/*
 * standin.h - the CI STAND-IN FOR THE CUDA DRIVER: a driver table whose
 * device is host RAM. Device queries answer from a real H200's recorded
 * profile (tests/data/devprofile-h200.tsv); contexts, modules, streams and
 * events are bookkeeping; copies and memsets move real bytes; launches are
 * checked for shape and counted, never run. For machines without a GPU (CI);
 * vcuda-server uses it only with --executor ci-standin.
 */
#ifndef VC_CU_STANDIN_H
#define VC_CU_STANDIN_H

#include <stdint.h>

#include "vc_cuda_driver_gen.h"

/*
 * Device printf, as a TEST DOUBLE: a function named VC_STANDIN_PRINTF_NAME
 * (from any module or library) takes one int parameter n. Each launch queues
 * n lines of VC_STANDIN_PRINTF_LINE, with the line's index from 0 and n, in
 * the stand-in's printf FIFO; the next synchronisation (context, stream or
 * event synchronise, blocking copy, context destroy, module or library
 * unload) writes them to stdout, in launch order, as the real driver writes a
 * kernel's printf output. A process prints at most VC_STANDIN_PRINTF_LINES
 * lines in its life (a worker serves one session), so that a fuzzer that
 * finds the name cannot flood its output; launches past that print less.
 */
#define VC_STANDIN_PRINTF_NAME "vc_standin_printf"
#define VC_STANDIN_PRINTF_LINE "vc_standin_printf: line %d of %d\n"
#define VC_STANDIN_PRINTF_LINES (1 << 20)

struct vc_standin_config {
	uint64_t mem_limit; /* bytes of "device" memory per process (a worker serves one session); 0 = 1 GiB */
};

/*
 * A kernel with known semantics, as a TEST DOUBLE: a function named
 * VC_STANDIN_STORE_NAME takes (CUdeviceptr dst, unsigned int value) and
 * stores the 4 bytes of value at dst when it runs, in stream order, as the
 * PTX kernel of the same name in tests/lib does on a GPU. So tests that
 * launch it check launch parameters end to end, on a GPU and over the
 * stand-in alike. A dst outside the stand-in's memory is
 * CUDA_ERROR_ILLEGAL_ADDRESS, where a GPU would fault.
 */
#define VC_STANDIN_STORE_NAME "vc_standin_store"

/* The stand-in's JIT linker is a test double (link.c): it concatenates its
 * inputs and writes known log lines; an input containing this text fails
 * with CUDA_ERROR_INVALID_PTX and a line in the error log. */
#define VC_STANDIN_LINK_REFUSE "vc_standin_link_refuse"

/**
 * vc_cuda_driver_standin() - the process's stand-in driver (created once, with
 * the first call's @mem_limit; 0 = 1 GiB), a factory for vc_exec_cuda_ops.
 */
const struct vc_cuda_driver *vc_cuda_driver_standin(uint64_t mem_limit);

/** vc_cuda_driver_standin_launches() - kernel launches the stand-in has recorded. */
uint64_t vc_cuda_driver_standin_launches(void);

/**
 * vc_cuda_driver_standin_stats() - launches recorded, and bytes and
 * allocations of "device" memory held now (every context of the process).
 */
void vc_cuda_driver_standin_stats(uint64_t *launches, uint64_t *bytes_in_use, uint64_t *allocs);

/**
 * vc_cuda_driver_standin_pointer_queries() - cuPointerGetAttributes calls
 * made so far (every context of the process): whether the server asked the
 * driver about a range or answered from what it knew.
 */
uint64_t vc_cuda_driver_standin_pointer_queries(void);

/**
 * vc_cuda_driver_standin_decompress() - for unit tests: from now on the
 * stand-in's device reports decompression engines (@mask, the attribute
 * CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK; the recorded H200 has
 * none, 0), so that the server's checks of a batch's entries are reached.
 */
void vc_cuda_driver_standin_decompress(int mask);

/** vc_cuda_driver_fill_unsupported() - every entry answering CUDA_ERROR_NOT_SUPPORTED (generated). */
void vc_cuda_driver_fill_unsupported(struct vc_cuda_driver *d);

/* TPCs in the stand-in's TPC maps (export table 1734dc26 slot 4): what an
 * H200's 132 SMs make, two per TPC. */
#define VC_STANDIN_TPCS 66

/* The recorded device profile (generated from tests/data). */
extern const char vc_standin_device_name[];
extern const unsigned long long vc_standin_device_total_mem;
extern const int vc_standin_driver_version;
extern const int vc_standin_attrs[];
extern const int vc_standin_nattrs;

#endif /* VC_CU_STANDIN_H */
