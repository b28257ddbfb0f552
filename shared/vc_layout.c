/* SPDX-License-Identifier: MIT */
#include "vc_layout.h"

#include <errno.h>

#define PAGE 4096u

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Range check in the overflow-safe form: len <= size && off <= size - len. */
static int in_range(uint64_t off, uint64_t len, uint64_t size)
{
	return len <= size && off <= size - len;
}

int vc_layout_check(const struct vc_layout *l)
{
	if (l->ctrl_off != 0 || l->ctrl_size != VC_CTRL_SIZE)
		return -EINVAL;
	if (!is_pow2(l->ring_size) || l->ring_size < VC_RING_MIN || l->ring_size > VC_RING_MAX)
		return -EINVAL;
	if (l->slot_count < 1 || l->slot_count > VC_SLOTS_MAX)
		return -EINVAL;
	if (l->slot_size < VC_SLOT_MIN || l->slot_size > VC_SLOT_MAX || l->slot_size % VC_CMD_ALIGN)
		return -EINVAL;
	if (l->chunk_size < VC_CHUNK_MIN || l->chunk_size > VC_CHUNK_MAX || l->chunk_size % PAGE)
		return -EINVAL;
	if (l->arena_size > VC_ARENA_MAX || l->arena_size % l->chunk_size)
		return -EINVAL;
	/* Parts in order, page aligned, each inside the region, none overlapping. */
	if (l->ring_off % PAGE || l->slots_off % PAGE || l->arena_off % PAGE)
		return -EINVAL;
	if (l->ring_off < l->ctrl_size)
		return -EINVAL;
	if (l->slots_off < (uint64_t)l->ring_off + l->ring_size)
		return -EINVAL;
	if (l->arena_off < (uint64_t)l->slots_off + (uint64_t)l->slot_count * l->slot_size)
		return -EINVAL;
	if (!in_range(l->arena_off, l->arena_size, l->region_size))
		return -EINVAL;
	if (l->pinned_size > VC_PINNED_MAX || l->pinned_size % VC_PINNED_ALIGN || l->pinned_off % VC_PINNED_ALIGN)
		return -EINVAL;
	if (l->pinned_size && (l->pinned_off < l->arena_off + l->arena_size ||
			       !in_range(l->pinned_off, l->pinned_size, l->region_size)))
		return -EINVAL;
	return 0;
}

int vc_layout_compute(const struct vc_layout_req *req, struct vc_layout *out)
{
	struct vc_layout l = {0};
	uint64_t off;

	l.ring_size = req->ring_size ? req->ring_size : VC_DEFAULT_RING_SIZE;
	l.slot_count = req->slot_count ? req->slot_count : VC_DEFAULT_SLOT_COUNT;
	l.slot_size = req->slot_size ? req->slot_size : VC_DEFAULT_SLOT_SIZE;
	l.chunk_size = req->chunk_size ? req->chunk_size : VC_DEFAULT_CHUNK_SIZE;
	l.arena_size = req->arena_size ? req->arena_size : VC_DEFAULT_ARENA_SIZE;

	l.ctrl_off = 0;
	l.ctrl_size = VC_CTRL_SIZE;
	l.ring_off = VC_CTRL_SIZE;
	off = align_up((uint64_t)l.ring_off + l.ring_size, PAGE);
	if (off > UINT32_MAX)
		return -EINVAL;
	l.slots_off = (uint32_t)off;
	off = align_up(off + (uint64_t)l.slot_count * l.slot_size, PAGE);
	l.arena_off = off;
	l.pinned_size = req->pinned_size;
	l.pinned_off = l.pinned_size ? align_up(off + l.arena_size, VC_PINNED_ALIGN) : 0;
	l.region_size = l.pinned_size ? l.pinned_off + l.pinned_size : align_up(off + l.arena_size, PAGE);
	if (vc_layout_check(&l))
		return -EINVAL;
	*out = l;
	return 0;
}

int vc_layout_fit(const struct vc_layout_req *req, uint64_t max_size, struct vc_layout *out)
{
	struct vc_layout_req r = *req;
	struct vc_layout l;
	uint64_t chunk, used;

	if (max_size % 4096)
		return -EINVAL;
	r.pinned_size = 0;
	if (vc_layout_compute(&r, &l))
		return -EINVAL;
	chunk = l.chunk_size;
	if (l.region_size > max_size) {
		/* Too small for the whole arena: it gets half of the room left
		 * after the ring and reply slots, and the pinned pool the other
		 * half (both matter for copy speed); whole chunks, at least
		 * VC_LAYOUT_MIN_CHUNKS of them. */
		uint64_t room = l.arena_off < max_size ? max_size - l.arena_off : 0;

		r.arena_size = room / 2 / chunk * chunk;
		if (r.arena_size < (uint64_t)VC_LAYOUT_MIN_CHUNKS * chunk)
			r.arena_size = (uint64_t)VC_LAYOUT_MIN_CHUNKS * chunk;
		if (r.arena_size > room)
			return -ENOSPC;
		if (vc_layout_compute(&r, &l))
			return -EINVAL;
	}
	used = align_up(l.region_size, VC_PINNED_ALIGN);
	if (used < max_size && max_size - used >= VC_PINNED_ALIGN) {
		r.pinned_size = (max_size - used) / VC_PINNED_ALIGN * VC_PINNED_ALIGN;
		if (r.pinned_size > VC_PINNED_MAX)
			r.pinned_size = VC_PINNED_MAX;
		if (vc_layout_compute(&r, &l))
			return -EINVAL;
	}
	if (l.region_size > max_size)
		return -ENOSPC;
	*out = l;
	return 0;
}
