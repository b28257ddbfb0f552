/* SPDX-License-Identifier: MIT */
/*
 * exptab.h - the private export tables that cuGetExportTable hands to
 * NVIDIA's runtime and libraries.
 *
 * Offered (docs/cuda13-driver-surface.md has the measurements): f8cff951,
 * 6bd5fb6c, a094798c, 42d85a81, c693336e, 263e8860, d4082055 (every runtime
 * instance), 21318c60 (cuBLAS, cuBLASLt, cuFFT) and 6e163fbe (cuFFT), each
 * with the driver's size word, slot count and NULL slots, and 1734dc26
 * (the cluster prototype table, asked for by cuBLASLt's half-precision
 * GEMMs: exptab_cluster.c) and da9151d3 (the compile cache NVRTC asks for:
 * exptab_nvvm.c, answered from the guest's own cache). Not offered:
 * 69a28e9f (NVIDIA's NVML asks for it; a guest runs vcuda's NVML, which does not).
 * Slots never seen called answer CUDA_ERROR_NOT_SUPPORTED and, with
 * VCUDA_DEBUG set, say so once on stderr.
 *
 * The tables are static: their addresses are fixed for the life of the
 * process, as the integrity check (d4082055 slot 1) requires, and they answer
 * before vc_exptab_init() and after the library's own teardown.
 */
#ifndef VC_EXPTAB_H
#define VC_EXPTAB_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* Bytes of each TPC map (1734dc26 slot 4) at most: VC_CU_TPC_MAP_MAX. */
#define VC_EXPTAB_TPC_MAP_MAX 4096u

/* ctx_query's table argument: the UUID's first four bytes, read big-endian. */
#define VC_EXPTAB_CTXQ_TABLE 0x21318c60u

/*
 * What the rest of the guest library supplies. Every callback may be NULL:
 * the slots that need it then fail (CUDA_ERROR_NOT_INITIALIZED), and a NULL
 * current_ctx means that no thread has a current context.
 */
struct vc_exptab_ops {
	/* Host facts, fetched once at cuInit and cached by the caller; the
	 * integrity check asks for them on each call. */
	int (*device_count)(void); /* >= 0, or -errno */
	int (*device_ident)(int ordinal, uint8_t uuid[16], int *pci_domain, int *pci_bus,
			    int *pci_device); /* 0 or -errno */
	int (*driver_version)(void); /* what cuDriverGetVersion answers */

	/* The calling thread's current context (a guest handle), or NULL. */
	CUcontext (*current_ctx)(void);

	/* 6bd5fb6c slot 2: the primary context of @dev, the same handle that
	 * cuDevicePrimaryCtxRetain returns later. Must not retain it. The
	 * answer may be cached per device. */
	CUresult (*primary_ctx)(CUcontext *out, CUdevice dev);

	/*
	 * 21318c60 slots 4, 39 and 51 (table is VC_EXPTAB_CTXQ_TABLE), on @ctx
	 * exactly as the caller passed it (never seen NULL). Meanings unknown;
	 * the host asks its own driver the same slot:
	 *   4: @arg 0; *@out gets the u64 the driver writes (1 on an H200).
	 *      The caller's third argument (a guest pointer for cuBLASLt,
	 *      0x48c8 for cuFFT) is not forwarded: the driver answered the same
	 *      with it 0. Cacheable per context.
	 *  51: @arg the caller's second argument (seen 0); *@out gets an opaque
	 *      host object pointer, returned to the caller as a handle.
	 *  39: @arg that handle; *@out gets an int (7 on an H200).
	 */
	CUresult (*ctx_query)(uint32_t table, uint32_t slot, CUcontext ctx, uint64_t arg,
			      uint64_t *out);

	/*
	 * 1734dc26 (the cluster prototype table) slot @slot, asked of the host's
	 * table: @target is a function handle or a device ordinal, @a, @b, @c
	 * the slot's other integer arguments; *@value gets the answer, packed
	 * as struct vc_cu_rep_vcExportSlot says, and up to @cap bytes of data
	 * go into @data (their length in *@len).
	 */
	CUresult (*cluster_slot)(uint32_t slot, uint64_t target, int32_t a, uint64_t b, uint32_t c,
				 uint64_t *value, void *data, size_t cap, size_t *len);

	/* 6e163fbe slot 7: the functions of module @mod, up to @max of them into
	 * @fns; how many it has in *@n (more than @max when they did not fit). */
	CUresult (*module_functions)(CUmodule mod, CUfunction *fns, unsigned int max, unsigned int *n);
};

/**
 * vc_exptab_init() - install the callbacks. @ops, and the callbacks, must stay
 * usable for the life of the process: the runtime calls c693336e slot 1 at
 * exit, after the library's own teardown. Meant to be called once (at load or
 * at cuInit); a later call replaces the callbacks atomically.
 */
void vc_exptab_init(const struct vc_exptab_ops *ops);

/**
 * vc_exptab_get() - the answer of cuGetExportTable: the table for @id into
 * *@table. Returns CUDA_SUCCESS, or CUDA_ERROR_INVALID_VALUE (and *@table
 * NULL) for a NULL argument or an id not offered.
 */
CUresult vc_exptab_get(const void **table, const CUuuid *id);

/**
 * vc_exptab_ctx_destroyed() - @ctx is gone (cuCtxDestroy, or a primary
 * context released for the last time or reset): run the context-local
 * storage destructors registered for it and drop its entries. Call it
 * without holding locks the destructors (runtime code) might need.
 */
void vc_exptab_ctx_destroyed(CUcontext ctx);

/** vc_exptab_ops_current() - the callbacks installed, or NULL (for the tables' files). */
const struct vc_exptab_ops *vc_exptab_ops_current(void);

/** vc_exptab_cluster_table() - the 1734dc26 table (exptab_cluster.c). */
const void *vc_exptab_cluster_table(void);

/** vc_exptab_nvvm_table() - the da9151d3 table (exptab_nvvm.c). */
const void *vc_exptab_nvvm_table(void);

#endif /* VC_EXPTAB_H */
