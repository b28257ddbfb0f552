/* SPDX-License-Identifier: MIT */
/*
 * handles.c - a session's handle table: the ids the guest names driver
 * objects by, the reverse map from driver object to id, the current-context
 * switch, capture and device-range checks. Every family of the executor
 * (and the generated decoders) call these; they call nothing of the
 * executor's.
 *
 * The guest is untrusted: every id it sends is looked up in this session's
 * own table (kind and generation checked), never dereferenced; every device
 * range a host-side copy touches is checked against the driver's own record
 * of which context owns it.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"
#include "cuda/vmm.h"

/*
 * Ids: a tag that is never a small integer or a plausible host pointer (the
 * top two bits 01: above every canonical user address, below every kernel
 * one), the kind (6 bits), a generation (32 bits) and the slot index (24
 * bits, the low ones: code outside this file takes `id & 0xffffff` as the
 * index). 0, 1 and 2 are never issued.
 *
 * A slot's generation counts its reuses from 1; a slot whose generation
 * reached 2^32 - 1 is retired when its handle is forgotten, never reused, so
 * an id is never issued twice in a session, however long it runs (at most
 * 2^20 slots, each reused 4 billion times).
 */
#define ID_TAG (1ull << 62)
#define ID_TAG_MASK (3ull << 62)
#define ID_KIND_SHIFT 56
#define ID_KIND_MASK 0x3fu
#define ID_GEN_SHIFT 24
#define ID_INDEX_MASK 0xffffffu

static_assert(VC_H_KIND_END_ - 1 <= ID_KIND_MASK, "handle kinds fit the id's kind field");
static_assert(VC_CU_MAX_HANDLES <= ID_INDEX_MASK + 1u, "slot indexes fit the id's index field");

static uint64_t make_id(uint32_t kind, uint32_t gen, uint32_t idx)
{
	return ID_TAG | ((uint64_t)(kind & ID_KIND_MASK) << ID_KIND_SHIFT) | ((uint64_t)gen << ID_GEN_SHIFT) | idx;
}

static uint32_t rhash(int kind, const void *real, uint32_t cap)
{
	uint64_t v = (uint64_t)(uintptr_t)real * 0x9e3779b97f4a7c15ull ^ (uint64_t)kind;

	return (uint32_t)(v >> 32) & (cap - 1);
}

static int rmap_grow(struct vc_cu_session *x)
{
	uint32_t cap = x->rcap ? x->rcap * 2 : 1024;
	uint32_t *m = calloc(cap, sizeof(*m));

	if (!m)
		return -ENOMEM;
	for (uint32_t i = 0; i < x->nh; i++) {
		struct vc_cu_handle *h = &x->h[i];
		uint32_t k;

		if (!h->live)
			continue;
		for (k = rhash(h->kind, h->real, cap); m[k]; k = (k + 1) & (cap - 1))
			;
		m[k] = i + 1;
	}
	free(x->rmap);
	x->rmap = m;
	x->rcap = cap;
	return 0;
}

/* Slot of (kind, real) in the reverse map: its entry, or the empty one. */
static uint32_t rmap_find(struct vc_cu_session *x, int kind, const void *real)
{
	uint32_t k = rhash(kind, real, x->rcap);

	while (x->rmap[k]) {
		const struct vc_cu_handle *h = &x->h[x->rmap[k] - 1];

		if (h->kind == kind && h->real == real)
			break;
		k = (k + 1) & (x->rcap - 1);
	}
	return k;
}

static void rmap_delete(struct vc_cu_session *x, uint32_t k)
{
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	uint32_t mask = x->rcap - 1, j = k;

	x->rmap[k] = 0;
	for (;;) {
		j = (j + 1) & mask;
		if (!x->rmap[j])
			return;
		const struct vc_cu_handle *h = &x->h[x->rmap[j] - 1];
		uint32_t home = rhash(h->kind, h->real, x->rcap);

		if ((j > k && (home <= k || home > j)) || (j < k && home <= k && home > j)) {
			x->rmap[k] = x->rmap[j];
			x->rmap[j] = 0;
			k = j;
		}
	}
}

int vc_cu_handles_init(struct vc_cu_session *x)
{
	return rmap_grow(x);
}

void vc_cu_handles_fini(struct vc_cu_session *x)
{
	free(x->h);
	free(x->rmap);
	free(x->streams);
}

const uint32_t *vc_cu_stream_slots(const struct vc_cu_session *x, uint32_t *n)
{
	*n = x->nstreams;
	return x->streams;
}

/* Room in the stream list for one more: 0 or CUDA_ERROR_OUT_OF_MEMORY. */
static int stream_room(struct vc_cu_session *x)
{
	if (x->nstreams == x->capstreams) {
		uint32_t cap = x->capstreams ? x->capstreams * 2 : 16;
		uint32_t *n = realloc(x->streams, cap * sizeof(*n));

		if (!n)
			return CUDA_ERROR_OUT_OF_MEMORY;
		x->streams = n;
		x->capstreams = cap;
	}
	return 0;
}

/* Slot @idx is a stream no more: unlisted (a stream's end is rare). */
static void stream_drop(struct vc_cu_session *x, uint32_t idx)
{
	for (uint32_t i = 0; i < x->nstreams; i++)
		if (x->streams[i] == idx) {
			x->streams[i] = x->streams[--x->nstreams];
			return;
		}
}

bool vc_cu_capturing(struct vc_cu_session *x, void *stream)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	return x->drv->cuStreamIsCapturing(stream, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/*
 * Work that cannot be recorded into a graph: a copy staged through the arena
 * (its bytes are gone when the graph runs) and a host function (its record
 * is freed when it has run once). On a capturing stream it is refused, as
 * natively an unsupported operation is, instead of being recorded wrongly.
 */
int vc_cu_not_capturing(struct vc_cu_session *x, void *stream)
{
	return vc_cu_capturing(x, stream) ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : 0;
}

int vc_cu_find(struct vc_cu_session *x, int kind, void *real, uint64_t *id)
{
	uint32_t k;

	if (!real || !x->rcap)
		return -ENOENT;
	k = rmap_find(x, kind, real);
	if (!x->rmap[k])
		return -ENOENT;
	*id = make_id((uint32_t)kind, x->h[x->rmap[k] - 1].gen, x->rmap[k] - 1);
	return 0;
}

/* vc_cu_publish(), and whether the id is new (*@fresh). */
static int publish(struct vc_cu_session *x, int kind, void *real, uint64_t *id, bool *fresh)
{
	struct vc_cu_handle *h;
	uint32_t idx, k;

	*fresh = false;
	if (!real) {
		*id = 0;
		return 0;
	}
	/* A worker primary context retained for green contexts (green.c),
	 * where the driver names it (cuStreamGetCtx_v2 of a green stream:
	 * natively the device's primary context), is the session's primary
	 * context of that device. */
	for (int d = 0; kind == VC_H_CUCONTEXT && d < VC_CU_MAX_DEVICES; d++)
		if (x->green_primary[d] == real && x->primary[d]) {
			*id = x->primary[d];
			return 0;
		}
	if ((x->nh + 1) * 2 > x->rcap && rmap_grow(x))
		return CUDA_ERROR_OUT_OF_MEMORY;
	k = rmap_find(x, kind, real);
	if (x->rmap[k]) {
		idx = x->rmap[k] - 1;
		h = &x->h[idx];
		if (h->owner == UINT32_MAX || h->owner == idx || (h->owner < x->nh && x->h[h->owner].live)) {
			*id = make_id((uint32_t)kind, h->gen, idx);
			return 0;
		}
		/* Left over from a dead owner (a missed sweep): the driver reused
		 * the address for a new object, which gets a new id. */
		vc_cu_forget_slot(x, idx);
	}
	/* Room in the stream list first: nothing to undo after the slot is taken. */
	if (kind == VC_H_CUSTREAM && stream_room(x))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (x->free_head) {
		idx = x->free_head - 1;
		x->free_head = x->h[idx].next_free;
	} else {
		if (x->nh == x->caph) {
			uint32_t cap = x->caph ? x->caph * 2 : 256;
			struct vc_cu_handle *nh;

			if (cap > VC_CU_MAX_HANDLES)
				return CUDA_ERROR_OUT_OF_MEMORY;
			nh = realloc(x->h, cap * sizeof(*nh));
			if (!nh)
				return CUDA_ERROR_OUT_OF_MEMORY;
			x->h = nh;
			x->caph = cap;
		}
		idx = x->nh++;
		x->h[idx].gen = 0;
	}
	h = &x->h[idx];
	h->real = real;
	h->kind = (uint16_t)kind;
	h->live = 1;
	h->gen++; /* never wraps: a slot at UINT32_MAX is retired, not freed */
	h->next_free = 0;
	h->owner = UINT32_MAX; /* none until the publisher says (a reused slot kept its last) */
	h->nchild = 0;
	h->refs = 0;
	h->busy = 1; /* a stream published may have work already (a capture's origin) */
	x->rmap[rmap_find(x, kind, real)] = idx + 1;
	if (kind == VC_H_CUSTREAM)
		x->streams[x->nstreams++] = idx; /* room was made above */
	*id = make_id((uint32_t)kind, h->gen, idx);
	*fresh = true;
	return 0;
}

int vc_cu_publish(struct vc_cu_session *x, int kind, void *real, uint64_t *id)
{
	bool fresh;

	return publish(x, kind, real, id, &fresh);
}

/* The table slot of live id @id of any kind, or NULL. */
static struct vc_cu_handle *any_slot(struct vc_cu_session *x, uint64_t id)
{
	uint32_t idx = (uint32_t)(id & ID_INDEX_MASK);
	struct vc_cu_handle *h;

	if ((id & ID_TAG_MASK) != ID_TAG || idx >= x->nh)
		return NULL;
	h = &x->h[idx];
	if (!h->live || h->kind != ((id >> ID_KIND_SHIFT) & ID_KIND_MASK) ||
	    h->gen != (uint32_t)(id >> ID_GEN_SHIFT))
		return NULL;
	/* A dependant outlives its owner only through a missed sweep (an owner
	 * written without vc_cu_set_owner()): it is dead all the same. */
	if (h->owner != UINT32_MAX && h->owner != idx && (h->owner >= x->nh || !x->h[h->owner].live))
		return NULL;
	return h;
}

void vc_cu_set_owner(struct vc_cu_session *x, uint64_t id, uint64_t owner)
{
	struct vc_cu_handle *h = any_slot(x, id), *o = owner ? any_slot(x, owner) : NULL;
	uint32_t idx, oi;

	if (!h)
		return;
	idx = (uint32_t)(h - x->h);
	oi = o ? (uint32_t)(o - x->h) : UINT32_MAX;
	if (h->owner != UINT32_MAX && h->owner != idx && h->owner < x->nh && x->h[h->owner].nchild)
		x->h[h->owner].nchild--;
	h->owner = oi;
	if (o && oi != idx)
		o->nchild++;
}

int vc_cu_publish_child(struct vc_cu_session *x, int kind, void *real, uint64_t owner, uint64_t *id)
{
	bool fresh;
	int rc = publish(x, kind, real, id, &fresh);

	/* An id the guest already holds keeps its owner (the same function
	 * reached again through another path); an unowned one gets this one. */
	if (rc == 0 && *id && (fresh || x->h[*id & ID_INDEX_MASK].owner == UINT32_MAX))
		vc_cu_set_owner(x, *id, owner);
	return rc;
}

static struct vc_cu_handle *slot(struct vc_cu_session *x, int kind, uint64_t id)
{
	struct vc_cu_handle *h = any_slot(x, id);

	return h && h->kind == kind ? h : NULL;
}

struct vc_cu_handle *vc_cu_handle_get(struct vc_cu_session *x, int kind, uint64_t id)
{
	return slot(x, kind, id);
}

uint32_t vc_cu_owner_of(struct vc_cu_session *x, uint64_t id)
{
	struct vc_cu_handle *h = any_slot(x, id);

	return h ? h->owner : UINT32_MAX;
}

int vc_cu_lookup(struct vc_cu_session *x, int kind, uint64_t id, void **real)
{
	struct vc_cu_handle *h;

	if (id == 0) {
		*real = NULL;
		return 0;
	}
	if (kind == VC_H_CUSTREAM && (id == (uint64_t)(uintptr_t)CU_STREAM_LEGACY ||
				      id == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)) {
		if (id == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)
			x->per_thread_used = true;
		*real = (void *)(uintptr_t)id;
		return 0;
	}
	h = slot(x, kind, id);
	if (!h)
		return kind == VC_H_CUCONTEXT || kind == VC_H_CUGREENCTX ? CUDA_ERROR_INVALID_CONTEXT
									  : CUDA_ERROR_INVALID_HANDLE;
	if (kind == VC_H_CUSTREAM)
		h->busy = 1;
	*real = h->real;
	return 0;
}

void *vc_cu_stream_ctx(struct vc_cu_session *x, uint64_t id)
{
	uint32_t o = vc_cu_owner_of(x, id);
	CUcontext c = NULL;

	if (o >= x->nh || !x->h[o].live)
		return NULL;
	if (x->h[o].kind == VC_H_CUCONTEXT)
		return x->h[o].real;
	/* a green context's stream: the context it converts into (green.c) */
	if (x->h[o].kind == VC_H_CUGREENCTX && x->drv->cuCtxFromGreenCtx(&c, x->h[o].real) == CUDA_SUCCESS)
		return c;
	return NULL;
}

int vc_cu_rebind(struct vc_cu_session *x, int kind, uint64_t id, void *real)
{
	struct vc_cu_handle *h = slot(x, kind, id);
	uint32_t k;

	if (!h)
		return CUDA_ERROR_INVALID_HANDLE;
	if (h->real)
		rmap_delete(x, rmap_find(x, kind, h->real));
	h->real = real;
	if (real) {
		if ((x->nh + 1) * 2 > x->rcap && rmap_grow(x))
			return CUDA_ERROR_OUT_OF_MEMORY;
		k = rmap_find(x, kind, real);
		x->rmap[k] = (uint32_t)(h - x->h) + 1;
	}
	return 0;
}

int vc_cu_lookup_func(struct vc_cu_session *x, uint64_t id, void **f, bool *is_kernel)
{
	/* CUDA 12 lets a CUkernel stand wherever a CUfunction does. */
	bool kernel = vc_cu_lookup(x, VC_H_CUFUNCTION, id, f) != 0;

	if (is_kernel)
		*is_kernel = kernel;
	return kernel ? vc_cu_lookup(x, VC_H_CUKERNEL, id, f) : 0;
}

void vc_cu_forget(struct vc_cu_session *x, int kind, uint64_t id)
{
	struct vc_cu_handle *h = slot(x, kind, id);

	if (h)
		vc_cu_forget_slot(x, (uint32_t)(h - x->h));
}

void vc_cu_forget_slot(struct vc_cu_session *x, uint32_t idx)
{
	struct vc_cu_handle *h;

	if (idx >= x->nh || !(h = &x->h[idx])->live)
		return;
	if (h->real)
		rmap_delete(x, rmap_find(x, h->kind, h->real));
	if (h->kind == VC_H_CUSTREAM)
		stream_drop(x, idx);
	h->live = 0;
	h->real = NULL;
	/* Its dependants go with it (after it is dead, so that an ownership
	 * cycle, which no correct publisher makes, still ends). */
	if (h->nchild)
		vc_cu_forget_owned(x, idx);
	if (h->owner != UINT32_MAX && h->owner != idx && h->owner < x->nh && x->h[h->owner].nchild)
		x->h[h->owner].nchild--;
	h->owner = UINT32_MAX;
	h->nchild = 0;
	if (h->gen == UINT32_MAX)
		return; /* retired: its next id would repeat an old one */
	h->next_free = x->free_head;
	x->free_head = idx + 1;
}

void vc_cu_forget_owned(struct vc_cu_session *x, uint32_t idx)
{
	/* O(table) per owner with dependants; owners without are O(1) in
	 * vc_cu_forget_slot(). Scanned fully, so that a dependant whose owner
	 * was written directly (not counted in nchild) goes too. */
	for (uint32_t i = 0; idx < x->nh && i < x->nh; i++)
		if (i != idx && x->h[i].live && x->h[i].owner == idx)
			vc_cu_forget_slot(x, i);
}

const char *vc_cu_string(const uint8_t *p, uint32_t len, uint32_t n)
{
	if (n == 0 || n > len || n > VC_CU_STR_MAX || p[n - 1] != 0 || memchr(p, 0, n) != p + n - 1)
		return NULL;
	return (const char *)p;
}

int vc_cu_enter(struct vc_cu_session *x, uint64_t id)
{
	void *ctx;
	int rc;

	if (id == x->cur_id)
		return 0;
	if ((rc = vc_cu_lookup(x, VC_H_CUCONTEXT, id, &ctx)))
		return rc;
	rc = x->drv->cuCtxSetCurrent(ctx);
	if (rc == CUDA_SUCCESS)
		x->cur_id = id;
	return rc;
}

static bool owns_context(struct vc_cu_session *x, CUcontext c)
{
	uint32_t k;

	if (!c || !x->rcap)
		return false;
	k = rmap_find(x, VC_H_CUCONTEXT, c);
	return x->rmap[k] != 0;
}

int vc_cu_check_range(struct vc_cu_session *x, uint64_t ptr, uint64_t len)
{
	CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
					CU_POINTER_ATTRIBUTE_RANGE_SIZE};
	CUcontext c = NULL;
	CUdeviceptr start = 0;
	size_t size = 0;
	void *data[3] = {&c, &start, &size};
	bool mine;

	if (vc_cu_quota_covers(x, ptr, len))
		return 0; /* inside an allocation the driver confirmed, still tracked */
	/* The driver knows which context owns an address and the extent of its
	 * allocation, for every kind of allocation (plain, pitched, module
	 * globals, pools); we only accept ranges that stay inside one of ours. */
	/* Mappings of the session's (VMM) and memory it opened (IPC) are
	 * checked against its own records (vmm.h): a range may span several
	 * mappings, and the driver may not name a context for them. */
	if (x->drv->cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)ptr) != CUDA_SUCCESS || !size)
		return vc_cu_managed_check(x, ptr, len) == 0 ? 0 : vc_cu_vmm_check_range(x, ptr, len);
	mine = owns_context(x, c);
	for (int d = 0; !mine && c && d < VC_CU_MAX_DEVICES; d++)
		mine = x->green_primary[d] == c; /* a green context's memory (green.c) */
	for (uint32_t i = 0; !mine && !c && i < x->nasync; i++)
		mine = x->async_ptr[i] == start;
	if (!mine || ptr < start || len > size || ptr - start > size - len)
		/* managed memory of ours, or mappings of ours */
		return vc_cu_managed_check(x, ptr, len) == 0 ? 0 : vc_cu_vmm_check_range(x, ptr, len);
	if (c)
		vc_cu_quota_note(x, start, size);
	return 0;
}

/*
 * Every guest thread's calls run on this one serving thread (and the
 * synchronisation helper), where the driver's per-thread capture modes
 * cannot tell guest threads apart: the host's threads run in relaxed mode
 * and the guest library applies CUDA's rule per guest thread
 * (guest-lib/libcuda/capture.c).
 */
void vc_cu_capture_relaxed(struct vc_cu_session *x)
{
	static __thread bool relaxed;
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;

	if (!relaxed && x->drv->cuThreadExchangeStreamCaptureMode(&m) == CUDA_SUCCESS)
		relaxed = true;
}
