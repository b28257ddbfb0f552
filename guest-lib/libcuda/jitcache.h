/* SPDX-License-Identifier: MIT */
/*
 * jitcache.h - the compute cache of this process and its user: compiled
 * code (NVVM's PTX, ptxas's ELF) keyed by everything that went into it.
 *
 * The driver keeps such a cache for NVRTC (export table da9151d3,
 * exptab_nvvm.c): NVRTC asks it before running NVVM and ptxas, and stores
 * what they made. A guest has no driver, so the guest library keeps the
 * cache itself, in the guest: no tenant can read or plant another's code,
 * and no round trip is needed. Like the driver's, it honours
 * CUDA_CACHE_DISABLE (1: no cache), CUDA_CACHE_PATH (default
 * $HOME/.nv/ComputeCache; entries go in its vcuda-nvrtc folder, a format of
 * vcuda's own) and CUDA_CACHE_MAXSIZE (bytes, default 256 MiB, at most
 * 4 GiB; 0: nothing is stored). Entries also stay in memory (32 MiB at
 * most), so a process with no usable folder still reuses its own work.
 *
 * An entry holds its whole key: a lookup compares it byte for byte, and
 * checks the data's hash, so a collision or a damaged file is a miss.
 * Files are written whole and renamed into place, so that processes that
 * share the folder see an entry completely or not at all.
 */
#ifndef VC_JITCACHE_H
#define VC_JITCACHE_H

#include <stddef.h>

/* A key or a value past this many bytes is never cached. */
#define VC_JITCACHE_ITEM_MAX (256u << 20)

/** vc_jitcache_enabled() - false when CUDA_CACHE_DISABLE=1 (read once). */
int vc_jitcache_enabled(void);

/**
 * vc_jitcache_lookup() - the value stored under @key: 0 and a malloc'd copy
 * in *@data (free it) of *@len bytes; -ENOENT when there is none (or the
 * cache is disabled), -ENOMEM.
 */
int vc_jitcache_lookup(const void *key, size_t key_len, void **data, size_t *len);

/**
 * vc_jitcache_store() - keep @len bytes of @data under @key, in memory and,
 * where the folder allows, on disk (oldest files go first past the size
 * limit). Returns 0, -EINVAL for a NULL or oversized item, -ENOMEM; a
 * folder that cannot be written is not an error (the entry stays in memory).
 */
int vc_jitcache_store(const void *key, size_t key_len, const void *data, size_t len);

/** vc_jitcache_dir() - the folder entries go to, or NULL when there is none (tests, logs). */
const char *vc_jitcache_dir(void);

/** vc_jitcache_reset() - forget the settings and the memory layer (tests: re-read the environment). */
void vc_jitcache_reset(void);

#endif /* VC_JITCACHE_H */
