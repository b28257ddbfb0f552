/* SPDX-License-Identifier: MIT */
/*
 * unzstd.h - zstd frames of a guest's image (a fatbin entry nvcc
 * compressed) decompressed for reading, through libzstd loaded at run time.
 */
#ifndef VC_CUDA_UNZSTD_H
#define VC_CUDA_UNZSTD_H

#include <stdbool.h>
#include <stdint.h>

/** The most bytes a frame may decompress to here; larger ones are not read. */
#define VC_UNZSTD_MAX (64ull << 20)

/** vc_cu_is_zstd() - do the @n bytes at @p begin with a zstd frame's magic? */
bool vc_cu_is_zstd(const uint8_t *p, uint64_t n);

/**
 * vc_cu_unzstd() - decompress the one zstd frame at the start of the @n
 * bytes at @p (bytes after it are ignored: entries are padded) into a new
 * buffer, *@out (@*outlen bytes, free() it). The frame must state its
 * content size, at most VC_UNZSTD_MAX. Returns 0, -ENOSYS (no libzstd on
 * this host), -EINVAL (not a whole frame), -E2BIG or -ENOMEM.
 */
int vc_cu_unzstd(const uint8_t *p, uint64_t n, uint8_t **out, uint64_t *outlen);

#endif /* VC_CUDA_UNZSTD_H */
