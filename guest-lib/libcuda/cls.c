/* SPDX-License-Identifier: MIT */
/*
 * cls.c - context-local storage as an open-addressing map (linear probing,
 * backward-shift deletion, so no tombstones lengthen the probes of the hot
 * lookup) read under a sequence lock.
 *
 * The sequence lock follows Boehm, "Can seqlocks get along with programming
 * language memory models?" (MSPC 2012): every field a reader touches is an
 * atomic accessed relaxed; the writer makes the counter odd, issues a release
 * fence, writes, and publishes the even counter with a release store; the
 * reader loads the counter with acquire, reads, issues an acquire fence and
 * reloads the counter. A reader that saw any write of a busy writer then sees
 * a changed counter and retries.
 */
#include "cls.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() ((void)0)
#endif

#define NBUCKETS (2 * VC_CLS_MAX_ENTRIES) /* load <= 1/2: short probes */
#define MASK (NBUCKETS - 1)
#define DTOR_BATCH 32

_Static_assert((NBUCKETS & MASK) == 0, "NBUCKETS must be a power of two");

struct bucket {
	_Atomic uintptr_t ctx; /* 0: empty (contexts are never NULL here) */
	_Atomic uintptr_t key;
	_Atomic uintptr_t value;
	vc_cls_dtor dtor;      /* writers only, under wlock */
};

static struct bucket buckets[NBUCKETS];
static atomic_uint seq;
static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
static int count; /* under wlock */

static size_t home_of(uintptr_t ctx, uintptr_t key)
{
	uint64_t h = (uint64_t)ctx * 0x9e3779b97f4a7c15ull ^ (uint64_t)key * 0xc2b2ae3d27d4eb4full;

	h ^= h >> 31;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h & MASK;
}

static uintptr_t ld(_Atomic uintptr_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static void st(_Atomic uintptr_t *p, uintptr_t v)
{
	atomic_store_explicit(p, v, memory_order_relaxed);
}

static void write_begin(void)
{
	unsigned s = atomic_load_explicit(&seq, memory_order_relaxed);

	atomic_store_explicit(&seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void write_end(void)
{
	unsigned s = atomic_load_explicit(&seq, memory_order_relaxed);

	atomic_store_explicit(&seq, s + 1, memory_order_release);
}

/* Index of (ctx, key), or -1. Writers only (under wlock). */
static long find(uintptr_t ctx, uintptr_t key)
{
	size_t i = home_of(ctx, key);

	for (size_t n = 0; n < NBUCKETS; n++, i = (i + 1) & MASK) {
		uintptr_t c = ld(&buckets[i].ctx);

		if (!c)
			return -1;
		if (c == ctx && ld(&buckets[i].key) == key)
			return (long)i;
	}
	return -1;
}

/* Backward-shift deletion of bucket i; inside a write section. */
static void erase(size_t i)
{
	size_t j = i;

	for (;;) {
		j = (j + 1) & MASK;
		uintptr_t c = ld(&buckets[j].ctx);

		if (!c)
			break;
		size_t k = home_of(c, ld(&buckets[j].key));
		/* An entry whose home lies cyclically in (i, j] must stay. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		st(&buckets[i].key, ld(&buckets[j].key));
		st(&buckets[i].value, ld(&buckets[j].value));
		buckets[i].dtor = buckets[j].dtor;
		st(&buckets[i].ctx, c);
		i = j;
	}
	st(&buckets[i].ctx, 0);
	st(&buckets[i].key, 0);
	st(&buckets[i].value, 0);
	buckets[i].dtor = NULL;
	count--;
}

int vc_cls_put(CUcontext ctx, void *key, void *value, vc_cls_dtor dtor)
{
	uintptr_t c = (uintptr_t)ctx, k = (uintptr_t)key;
	int rc = 0;
	long at;

	if (!ctx)
		return -EINVAL;
	pthread_mutex_lock(&wlock);
	at = find(c, k);
	if (at < 0 && count >= VC_CLS_MAX_ENTRIES) {
		rc = -ENOMEM;
		goto out;
	}
	write_begin();
	if (at >= 0) {
		st(&buckets[at].value, (uintptr_t)value);
		buckets[at].dtor = dtor;
	} else {
		size_t i = home_of(c, k);

		while (ld(&buckets[i].ctx)) /* terminates: count < NBUCKETS */
			i = (i + 1) & MASK;
		st(&buckets[i].key, k);
		st(&buckets[i].value, (uintptr_t)value);
		buckets[i].dtor = dtor;
		st(&buckets[i].ctx, c);
		count++;
	}
	write_end();
out:
	pthread_mutex_unlock(&wlock);
	return rc;
}

int vc_cls_get(CUcontext ctx, const void *key, void **value)
{
	uintptr_t c = (uintptr_t)ctx, k = (uintptr_t)key;

	if (!ctx || !value)
		return -EINVAL;
	for (;;) {
		unsigned s0 = atomic_load_explicit(&seq, memory_order_acquire);
		uintptr_t v = 0;
		int found = 0;
		size_t i = home_of(c, k);

		if (s0 & 1) {
			cpu_relax(); /* a writer is busy; writes are short */
			continue;
		}
		/* Bounded: a torn view may lack the empty bucket that ends a probe. */
		for (size_t n = 0; n < NBUCKETS; n++, i = (i + 1) & MASK) {
			uintptr_t bc = ld(&buckets[i].ctx);

			if (!bc)
				break;
			if (bc == c && ld(&buckets[i].key) == k) {
				v = ld(&buckets[i].value);
				found = 1;
				break;
			}
		}
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&seq, memory_order_relaxed) != s0)
			continue;
		if (!found)
			return -ENOENT;
		*value = (void *)v;
		return 0;
	}
}

int vc_cls_delete(CUcontext ctx, const void *key)
{
	long at;

	if (!ctx)
		return -EINVAL;
	pthread_mutex_lock(&wlock);
	at = find((uintptr_t)ctx, (uintptr_t)key);
	if (at >= 0) {
		write_begin();
		erase((size_t)at);
		write_end();
	}
	pthread_mutex_unlock(&wlock);
	return at >= 0 ? 0 : -ENOENT;
}

int vc_cls_ctx_destroyed(CUcontext ctx)
{
	struct { void *key, *value; vc_cls_dtor dtor; } batch[DTOR_BATCH];
	uintptr_t c = (uintptr_t)ctx;
	int total = 0;

	if (!ctx)
		return 0;
	/* Rounds are bounded so that a destructor that puts into the dying
	 * context again cannot keep this loop alive. */
	for (int round = 0; round <= VC_CLS_MAX_ENTRIES / DTOR_BATCH; round++) {
		int n = 0;

		pthread_mutex_lock(&wlock);
		write_begin();
		for (size_t i = 0; i < NBUCKETS && n < DTOR_BATCH;) {
			if (ld(&buckets[i].ctx) != c) {
				i++;
				continue;
			}
			batch[n].key = (void *)ld(&buckets[i].key);
			batch[n].value = (void *)ld(&buckets[i].value);
			batch[n].dtor = buckets[i].dtor;
			n++;
			erase(i); /* may shift another entry into i: look again */
		}
		write_end();
		pthread_mutex_unlock(&wlock);
		if (!n)
			break;
		for (int i = 0; i < n; i++)
			if (batch[i].dtor)
				batch[i].dtor(ctx, batch[i].key, batch[i].value);
		total += n;
	}
	return total;
}

int vc_cls_count(void)
{
	int n;

	pthread_mutex_lock(&wlock);
	n = count;
	pthread_mutex_unlock(&wlock);
	return n;
}
