/* SPDX-License-Identifier: MIT */
/*
 * vc_shm.h - the one way vcuda touches shared-memory control words.
 *
 * Every load, store and read-modify-write of a field that another process (or a
 * guest VM) can see goes through these helpers, each with an explicit memory
 * order. Callers comment each use with the access on the other side it pairs
 * with, e.g. "guest stores tail with release; this acquire pairs with it".
 *
 * They are thin wrappers over the GCC/Clang __atomic builtins, which work on
 * plain (non-_Atomic) fields so that the wire structs keep a fixed, pinned
 * layout, and which ThreadSanitizer understands.
 *
 * The two "store, then load the other side's word" handshakes (doorbell/IDLE
 * and completion/waiters) use a seq_cst store or RMW followed by a seq_cst
 * load on each side rather than stand-alone fences: all four accesses fall in
 * C11's single total order, so at least one side sees the other's store; it
 * costs one locked instruction on x86, and ThreadSanitizer models it, which it
 * does not for atomic_thread_fence.
 */
#ifndef VC_SHM_H
#define VC_SHM_H

#include <stdbool.h>
#include <stdint.h>

#define VC_RELAXED __ATOMIC_RELAXED
#define VC_ACQUIRE __ATOMIC_ACQUIRE
#define VC_RELEASE __ATOMIC_RELEASE
#define VC_ACQ_REL __ATOMIC_ACQ_REL
#define VC_SEQ_CST __ATOMIC_SEQ_CST

/** vc_shm_load32() - load a shared 32-bit word with memory order @mo. */
static inline uint32_t vc_shm_load32(const uint32_t *p, int mo)
{
	return __atomic_load_n(p, mo);
}

/** vc_shm_store32() - store a shared 32-bit word with memory order @mo. */
static inline void vc_shm_store32(uint32_t *p, uint32_t v, int mo)
{
	__atomic_store_n(p, v, mo);
}

/** vc_shm_load64() - load a shared 64-bit word with memory order @mo. */
static inline uint64_t vc_shm_load64(const uint64_t *p, int mo)
{
	return __atomic_load_n(p, mo);
}

/** vc_shm_store64() - store a shared 64-bit word with memory order @mo. */
static inline void vc_shm_store64(uint64_t *p, uint64_t v, int mo)
{
	__atomic_store_n(p, v, mo);
}

/** vc_shm_loadi32() - load a shared signed 32-bit word (a pid) with memory order @mo. */
static inline int32_t vc_shm_loadi32(const int32_t *p, int mo)
{
	return __atomic_load_n(p, mo);
}

/** vc_shm_storei32() - store a shared signed 32-bit word (a pid) with memory order @mo. */
static inline void vc_shm_storei32(int32_t *p, int32_t v, int mo)
{
	__atomic_store_n(p, v, mo);
}

/** vc_shm_or32() - atomically OR @v into a shared word; returns the old value. */
static inline uint32_t vc_shm_or32(uint32_t *p, uint32_t v, int mo)
{
	return __atomic_fetch_or(p, v, mo);
}

/** vc_shm_and32() - atomically AND @v into a shared word; returns the old value. */
static inline uint32_t vc_shm_and32(uint32_t *p, uint32_t v, int mo)
{
	return __atomic_fetch_and(p, v, mo);
}

/** vc_shm_add32() - atomically add @v to a shared word; returns the old value. */
static inline uint32_t vc_shm_add32(uint32_t *p, uint32_t v, int mo)
{
	return __atomic_fetch_add(p, v, mo);
}

/** vc_shm_sub32() - atomically subtract @v from a shared word; returns the old value. */
static inline uint32_t vc_shm_sub32(uint32_t *p, uint32_t v, int mo)
{
	return __atomic_fetch_sub(p, v, mo);
}

/** vc_shm_add64() - atomically add @v to a shared 64-bit word; returns the old value. */
static inline uint64_t vc_shm_add64(uint64_t *p, uint64_t v, int mo)
{
	return __atomic_fetch_add(p, v, mo);
}

/** vc_shm_sub64() - atomically subtract @v from a shared 64-bit word; returns the old value. */
static inline uint64_t vc_shm_sub64(uint64_t *p, uint64_t v, int mo)
{
	return __atomic_fetch_sub(p, v, mo);
}

/** vc_shm_xchg64() - atomically replace a shared 64-bit word with @v; returns the old value. */
static inline uint64_t vc_shm_xchg64(uint64_t *p, uint64_t v, int mo)
{
	return __atomic_exchange_n(p, v, mo);
}

/**
 * vc_shm_cas64() - if the shared 64-bit word holds *@expected, replace it with
 * @desired (memory order @mo) and return true; else load it into *@expected
 * (memory order @mo_fail) and return false. Strong: fails only on a real
 * difference.
 */
static inline bool vc_shm_cas64(uint64_t *p, uint64_t *expected, uint64_t desired, int mo, int mo_fail)
{
	return __atomic_compare_exchange_n(p, expected, desired, false, mo, mo_fail);
}

/** vc_cpu_relax() - spin-loop hint. */
static inline void vc_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif /* VC_SHM_H */
