/* SPDX-License-Identifier: MIT */
/*
 * fatbin.c - fat binaries trimmed to the session's devices (fatbin.h).
 *
 * A fat binary is a 16-byte header (magic, version, header size, size of
 * what follows) and entries laid end to end, each a header of its own
 * (kind: 1 PTX, 2 cubin; its header's size; its payload's size; the
 * architecture, major * 10 + minor, at byte 28) and its payload, compressed
 * or not (copied as it is either way). Every size is the image's own claim
 * and checked before use: an entry that does not fit, a header too short to
 * hold the architecture, or entries that do not end exactly where the header
 * says the image ends, and the image is staged as it came.
 */
#include <stdlib.h>
#include <string.h>

#include "fatbin.h"

#define FILE_HEADER 16u
#define ENTRY_MIN 32u /* an entry's header, up to and with its architecture */

enum { KIND_PTX = 1, KIND_ELF = 2 };

struct entry {
	uint16_t kind;
	uint32_t header;
	uint64_t payload;
	uint32_t arch;
};

/* The entry at @p, with @left bytes of the image from it on. 0 or -1. */
static int entry_at(const uint8_t *p, uint64_t left, struct entry *e)
{
	if (left < ENTRY_MIN)
		return -1;
	memcpy(&e->kind, p, sizeof(e->kind));
	memcpy(&e->header, p + 4, sizeof(e->header));
	memcpy(&e->payload, p + 8, sizeof(e->payload));
	memcpy(&e->arch, p + 28, sizeof(e->arch));
	if (e->header < ENTRY_MIN || e->header > left || e->payload > left - e->header)
		return -1;
	return 0;
}

/* Whether a device of the session can run entry @e: 1 yes, 0 no, -1 an
 * entry of another kind (kept, but no code of its own to run). */
static int runs(const struct entry *e, uint32_t majors, unsigned max_arch)
{
	if (e->kind == KIND_ELF)
		return e->arch / 10 < 32 && (majors >> (e->arch / 10) & 1);
	if (e->kind == KIND_PTX)
		return e->arch <= max_arch;
	return -1;
}

void *vc_cu_fatbin_trim(const void *img, uint64_t size, uint32_t majors, unsigned max_arch, uint64_t *out_size)
{
	const uint8_t *b = img;
	uint64_t fat_size, kept = 0, at;
	uint32_t magic;
	uint16_t hsize;
	unsigned usable = 0, dropped = 0;
	struct entry e;
	uint8_t *out, *w;

	if (!img || size < FILE_HEADER)
		return NULL;
	memcpy(&magic, b, sizeof(magic));
	memcpy(&hsize, b + 6, sizeof(hsize));
	memcpy(&fat_size, b + 8, sizeof(fat_size));
	if (magic != VC_CU_FATBIN_MAGIC || hsize < FILE_HEADER || hsize > size || fat_size != size - hsize)
		return NULL;
	for (at = hsize; at < size; at += e.header + e.payload) {
		int r;

		if (entry_at(b + at, size - at, &e))
			return NULL;
		r = runs(&e, majors, max_arch);
		if (r == 0) {
			dropped++;
			continue;
		}
		usable += r == 1;
		kept += e.header + e.payload;
	}
	if (!dropped || !usable)
		return NULL;
	out = malloc(hsize + kept);
	if (!out)
		return NULL;
	memcpy(out, b, hsize);
	memcpy(out + 8, &kept, sizeof(kept));
	w = out + hsize;
	for (at = hsize; at < size; at += e.header + e.payload) {
		entry_at(b + at, size - at, &e); /* checked above */
		if (runs(&e, majors, max_arch) == 0)
			continue;
		memcpy(w, b + at, e.header + e.payload);
		w += e.header + e.payload;
	}
	*out_size = hsize + kept;
	return out;
}
