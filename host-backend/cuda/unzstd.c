/* SPDX-License-Identifier: MIT */
/*
 * unzstd.c - zstd frames decompressed (unzstd.h). libzstd is loaded with
 * dlopen on first use, so that the server does not need it: without it a
 * compressed entry is simply not read (its caller assumes the worst).
 * zstd's decoder checks its input; the output is bounded by the frame's own
 * content size, which must be stated and under VC_UNZSTD_MAX, and the
 * decoder never writes past the capacity it is given.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cuda/unzstd.h"

static struct {
	pthread_once_t once;
	unsigned long long (*content_size)(const void *, size_t);
	size_t (*frame_size)(const void *, size_t);
	size_t (*decompress)(void *, size_t, const void *, size_t);
	unsigned (*is_error)(size_t);
} z = {.once = PTHREAD_ONCE_INIT};

static void load(void)
{
	void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&z.content_size = dlsym(h, "ZSTD_getFrameContentSize");
	*(void **)&z.frame_size = dlsym(h, "ZSTD_findFrameCompressedSize");
	*(void **)&z.decompress = dlsym(h, "ZSTD_decompress");
	*(void **)&z.is_error = dlsym(h, "ZSTD_isError");
	if (!z.content_size || !z.frame_size || !z.decompress || !z.is_error)
		z.decompress = NULL; /* one missing: none used (the handle stays) */
}

bool vc_cu_is_zstd(const uint8_t *p, uint64_t n)
{
	static const uint8_t magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

	return n >= sizeof(magic) && !memcmp(p, magic, sizeof(magic));
}

int vc_cu_unzstd(const uint8_t *p, uint64_t n, uint8_t **out, uint64_t *outlen)
{
	unsigned long long want;
	size_t frame, got;
	uint8_t *buf;

	pthread_once(&z.once, load);
	if (!z.decompress)
		return -ENOSYS;
	if (!vc_cu_is_zstd(p, n))
		return -EINVAL;
	frame = z.frame_size(p, (size_t)n);
	if (z.is_error(frame) || frame > n)
		return -EINVAL;
	want = z.content_size(p, frame);
	if (want == ZSTD_CONTENTSIZE_UNKNOWN || want == ZSTD_CONTENTSIZE_ERROR)
		return -EINVAL;
	if (want > VC_UNZSTD_MAX)
		return -E2BIG;
	buf = malloc(want ? (size_t)want : 1);
	if (!buf)
		return -ENOMEM;
	got = z.decompress(buf, (size_t)want, p, frame);
	if (z.is_error(got) || got != want) {
		free(buf);
		return -EINVAL;
	}
	*out = buf;
	*outlen = got;
	return 0;
}
