/* SPDX-License-Identifier: MIT */
/*
 * vc_copy.h - bulk copies that do not pull their destination into the cache.
 *
 * glibc's memcpy switches to non-temporal stores only when one call is larger
 * than a threshold near the cache size; a transfer cut into 512 KiB pieces
 * never reaches it and pays a read-for-ownership per destination line. Callers
 * that know the whole transfer is large use this instead.
 */
#ifndef VC_COPY_H
#define VC_COPY_H

#include <stddef.h>

/** Transfers at least this large stream their destination. */
#define VC_STREAM_THRESHOLD (16u << 20)

/**
 * vc_copy_stream() - copy @n bytes from @src to @dst with non-temporal stores
 * (x86-64; plain memcpy elsewhere). The regions must not overlap.
 */
void vc_copy_stream(void *dst, const void *src, size_t n);

#endif /* VC_COPY_H */
