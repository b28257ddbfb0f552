/* SPDX-License-Identifier: MIT */
/*
 * cls.h - context-local storage: one value and destructor per (context, key),
 * behind export table c693336e (slots 0 put, 1 delete, 2 get).
 *
 * NVIDIA's runtime keeps its per-context state here under a key of its own
 * and asks for it on almost every runtime call (the most-called slot of all,
 * docs/cuda13-driver-surface.md), so lookups take no lock: readers follow a
 * sequence counter and retry when a writer was busy. Writers serialise on a
 * mutex. The map is a fixed array: memory stays bounded whatever the caller
 * does. Contexts are opaque guest handles; NULL is not a context here (the
 * export-table slots turn "0 = current" into a handle before calling in).
 * All functions are thread-safe. Errors are -errno.
 */
#ifndef VC_CLS_H
#define VC_CLS_H

#include <cuda.h>

/* One key per runtime instance per context is the measured use (about ten
 * runtimes in a PyTorch process), so this is generous. */
#define VC_CLS_MAX_ENTRIES 1024

/* The runtime's destructor, registered with put: (context, key, value). */
typedef void (*vc_cls_dtor)(CUcontext ctx, void *key, void *value);

/**
 * vc_cls_put() - store @value and @dtor (may be NULL) under (@ctx, @key),
 * replacing the value and destructor of an existing entry without running the
 * old destructor. Returns 0, -EINVAL for a NULL @ctx, or -ENOMEM when
 * VC_CLS_MAX_ENTRIES entries are stored already.
 */
int vc_cls_put(CUcontext ctx, void *key, void *value, vc_cls_dtor dtor);

/**
 * vc_cls_get() - the value stored under (@ctx, @key) into *@value. Takes no
 * lock. Returns 0, -EINVAL for a NULL @ctx or @value, or -ENOENT.
 */
int vc_cls_get(CUcontext ctx, const void *key, void **value);

/**
 * vc_cls_delete() - forget (@ctx, @key) without running its destructor.
 * Returns 0, -EINVAL for a NULL @ctx, or -ENOENT.
 */
int vc_cls_delete(CUcontext ctx, const void *key);

/**
 * vc_cls_ctx_destroyed() - remove every entry of @ctx and run each one's
 * destructor, outside the lock (destructors may call back into this module).
 * Returns the number of entries removed.
 */
int vc_cls_ctx_destroyed(CUcontext ctx);

/** vc_cls_count() - entries stored now (for tests and debugging). */
int vc_cls_count(void);

#endif /* VC_CLS_H */
