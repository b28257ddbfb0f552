/* SPDX-License-Identifier: MIT */
/*
 * vmm.h - a session's virtual memory management and IPC state (vmm.c,
 * ipc.c), and the hooks the rest of the executor calls: device-range checks
 * (handles.c), frees (memory.c) and teardown (exec.c).
 *
 * Allocation handles (CUmemGenericAllocationHandle) are ids of a table of
 * the session's own: the guest never holds the driver's value, and a forged
 * or foreign id is CUDA_ERROR_INVALID_VALUE, as the driver answers an
 * unknown handle. The session records its reserved ranges and mappings,
 * so that only its own ranges are mapped, unmapped and freed, copies
 * through mappings are accepted, and everything goes at close.
 */
#ifndef VC_CU_VMM_H
#define VC_CU_VMM_H

#include <stdint.h>

#include "cuda/exec_priv.h"

/* A physical allocation (cuMemCreate or an import) and who holds it. */
struct vc_cu_vobj {
	uint64_t real;    /* the driver's handle; 0: free slot */
	uint64_t size;
	uint64_t charged; /* bytes counted against the quota (0: imported) */
	int32_t dev;      /* the device its memory is on, counted there (-1: host memory, imported) */
	uint32_t gen;
	uint32_t refs;    /* the guest's references: cuMemCreate, each retain */
	uint32_t maps;    /* live mappings of it */
	uint32_t next_free;
};

struct vc_cu_vrange {
	uint64_t va, size;
	uint64_t aux; /* mappings: the slot of their allocation; opened memory: its real context */
};

struct vc_cu_vmm {
	struct vc_cu_vobj *obj;
	uint32_t nobj, capobj, free_head;
	struct vc_cu_vrange *map;  /* mappings, sorted by va */
	uint32_t nmap, capmap;
	struct vc_cu_vrange *resv; /* reserved ranges */
	uint32_t nresv, capresv;
	struct vc_cu_vrange *opened; /* IPC memory opened, and pool pointers imported */
	uint32_t nopened, capopened;
	uint32_t nexported;        /* IPC entries this session made (ipc.c) */
};

/**
 * vc_cu_vmm_state() - the session's state, made at first use; NULL when
 * memory runs out.
 */
struct vc_cu_vmm *vc_cu_vmm_state(struct vc_cu_session *x);

/**
 * vc_cu_vmm_check_range() - is [@ptr, @ptr + @len) covered by contiguous
 * mappings of the session, or inside IPC memory it opened? 0 or
 * CUDA_ERROR_INVALID_VALUE.
 */
int vc_cu_vmm_check_range(struct vc_cu_session *x, uint64_t ptr, uint64_t len);

/** vc_cu_vmm_map_after() - index of the first mapping of @v with va > @p (vmm_range.c). */
uint32_t vc_cu_vmm_map_after(const struct vc_cu_vmm *v, uint64_t p);

/**
 * vc_cu_vmm_covered() - whether mappings [*@first, *@end) of @v tile
 * [@p, @p + @len), each starting where the last ended; with @exact the
 * first must start at @p and the last end at @p + @len (vmm_range.c).
 */
bool vc_cu_vmm_covered(const struct vc_cu_vmm *v, uint64_t p, uint64_t len, bool exact, uint32_t *first,
		       uint32_t *end);

/** vc_cu_vmm_fini() - unmap, release and free what the session still holds (close). */
void vc_cu_vmm_fini(struct vc_cu_session *x);

/**
 * vc_cu_vmm_range_add() - remember [@va, @va + @size) with @aux at the end of
 * list @l (grown as needed). 0 or -ENOMEM.
 */
int vc_cu_vmm_range_add(struct vc_cu_vrange **l, uint32_t *n, uint32_t *cap, uint64_t va, uint64_t size,
			uint64_t aux);

/** vc_cu_ipc_freed() - allocation @dptr was freed: its IPC entries go (ipc.c). */
void vc_cu_ipc_freed(struct vc_cu_session *x, uint64_t dptr);

/** vc_cu_ipc_fini() - close IPC memory the session opened and drop its entries (ipc.c). */
void vc_cu_ipc_fini(struct vc_cu_session *x);

/** vc_cu_vmm_import() - a handle id for imported driver handle @real (not charged). */
int vc_cu_vmm_import(struct vc_cu_session *x, uint64_t real, uint64_t *id);

/** vc_cu_vmm_real() - the driver handle behind id @id: 0 or CUDA_ERROR_INVALID_VALUE. */
int vc_cu_vmm_real(struct vc_cu_session *x, uint64_t id, uint64_t *real);

/**
 * vc_cu_vmm_info() - the driver handle, size and table slot of live handle
 * id @id (memmisc.c maps it into arrays): 0 or CUDA_ERROR_INVALID_VALUE.
 */
int vc_cu_vmm_info(struct vc_cu_session *x, uint64_t id, uint64_t *real, uint64_t *size, uint32_t *slot);

/**
 * vc_cu_vmm_pin() - with @pin, the allocation in @slot is mapped into an
 * array: its memory (and charge) stays while the array holds it, as a
 * mapping's does; without, one such hold ends.
 */
void vc_cu_vmm_pin(struct vc_cu_session *x, uint32_t slot, bool pin);

#endif /* VC_CU_VMM_H */
