/* SPDX-License-Identifier: MIT */
/*
 * memmisc.h - what the rest of the executor calls in memmisc.c (sparse array
 * mapping, decompression, pools of a location, cuPointerSetAttribute): an
 * array's end and the session's.
 */
#ifndef VC_CU_MEMMISC_H
#define VC_CU_MEMMISC_H

#include <stdint.h>

#include "cuda/exec_priv.h"

/**
 * vc_cu_maparr_gone() - array or mipmapped array id @array was destroyed:
 * the allocations mapped into it are no longer held for it.
 */
void vc_cu_maparr_gone(struct vc_cu_session *x, uint64_t array);

/** vc_cu_memmisc_fini() - forget the holds (session teardown; vmm.c releases the memory). */
void vc_cu_memmisc_fini(struct vc_cu_session *x);

#endif /* VC_CU_MEMMISC_H */
