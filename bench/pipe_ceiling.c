/* SPDX-License-Identifier: MIT */
/*
 * pipe_ceiling.c - two threads, one staging buffer, the arena's pipeline with
 * nothing else: see pipe_ceiling.h.
 *
 * The counters below are private to this process (not shared memory with an
 * untrusted peer); each atomic still names the access it pairs with.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_ceiling.h"
#include "vc_copy.h"
#include "vc_shm.h"
#include "vc_time.h"

struct vc_pipe {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	uint8_t *stage;
	size_t stage_bytes;
	/* The job, written by the caller under @lock before it raises @posted. */
	uint8_t *dst;
	const uint8_t *src;
	size_t n, piece;
	unsigned inflight;
	bool to_helper, quit;
	uint64_t posted; /* jobs posted (under @lock) */
	atomic_bool ready, go;
	atomic_size_t filled, drained; /* pieces staged, pieces taken out */
};

/* Stage every piece: piece k waits until piece k - inflight was taken out. */
static void fill(struct vc_pipe *p)
{
	size_t np = (p->n + p->piece - 1) / p->piece;

	for (size_t k = 0; k < np; k++) {
		size_t off = k * p->piece, len = p->n - off < p->piece ? p->n - off : p->piece;

		/* Acquire pairs with drain()'s release of @drained: the slot's
		 * old bytes have been read before we overwrite them. */
		while (k >= p->inflight && atomic_load_explicit(&p->drained, memory_order_acquire) < k - p->inflight + 1)
			vc_cpu_relax();
		memcpy(p->stage + (k % p->inflight) * p->piece, p->src + off, len);
		/* Release pairs with drain()'s acquire of @filled. */
		atomic_store_explicit(&p->filled, k + 1, memory_order_release);
	}
}

/* Take every piece out to its place, in order. */
static void drain(struct vc_pipe *p)
{
	size_t np = (p->n + p->piece - 1) / p->piece;
	bool stream = p->n >= VC_STREAM_THRESHOLD;

	for (size_t k = 0; k < np; k++) {
		size_t off = k * p->piece, len = p->n - off < p->piece ? p->n - off : p->piece;
		const uint8_t *s = p->stage + (k % p->inflight) * p->piece;

		/* Acquire pairs with fill()'s release of @filled. */
		while (atomic_load_explicit(&p->filled, memory_order_acquire) < k + 1)
			vc_cpu_relax();
		if (stream)
			vc_copy_stream(p->dst + off, s, len);
		else
			memcpy(p->dst + off, s, len);
		/* Release pairs with fill()'s acquire of @drained. */
		atomic_store_explicit(&p->drained, k + 1, memory_order_release);
	}
}

static void *helper(void *arg)
{
	struct vc_pipe *p = arg;
	uint64_t seen = 0;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (p->posted == seen && !p->quit)
			pthread_cond_wait(&p->cv, &p->lock);
		if (p->quit) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		seen = p->posted;
		pthread_mutex_unlock(&p->lock);
		/* Release pairs with vc_pipe_copy()'s acquire: we are awake and
		 * spinning, so the timed part does not include our wake-up. */
		atomic_store_explicit(&p->ready, true, memory_order_release);
		while (!atomic_load_explicit(&p->go, memory_order_acquire))
			vc_cpu_relax();
		if (p->to_helper)
			drain(p);
		else
			fill(p);
	}
}

int vc_pipe_open(struct vc_pipe **out, size_t arena_bytes)
{
	struct vc_pipe *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return -ENOMEM;
	p->stage = aligned_alloc(4096, (arena_bytes + 4095) & ~(size_t)4095);
	if (!p->stage) {
		rc = -ENOMEM;
		goto err_free;
	}
	memset(p->stage, 0, arena_bytes); /* fault it in before anything is timed */
	p->stage_bytes = arena_bytes;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cv, NULL);
	rc = -pthread_create(&p->thread, NULL, helper, p);
	if (rc)
		goto err_sync;
	*out = p;
	return 0;

err_sync:
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->lock);
	free(p->stage);
err_free:
	free(p);
	return rc;
}

uint64_t vc_pipe_copy(struct vc_pipe *p, void *dst, const void *src, size_t n, size_t piece,
		      unsigned inflight, int to_helper)
{
	size_t np;
	uint64_t t0;

	if (!n || !piece || !inflight || piece > p->stage_bytes / inflight)
		return 0;
	np = (n + piece - 1) / piece;
	atomic_store_explicit(&p->filled, 0, memory_order_relaxed);
	atomic_store_explicit(&p->drained, 0, memory_order_relaxed);
	atomic_store_explicit(&p->ready, false, memory_order_relaxed);
	atomic_store_explicit(&p->go, false, memory_order_relaxed);
	pthread_mutex_lock(&p->lock); /* publishes the job and the resets above */
	p->dst = dst;
	p->src = src;
	p->n = n;
	p->piece = piece;
	p->inflight = inflight;
	p->to_helper = to_helper;
	p->posted++;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->lock);
	/* Acquire pairs with helper()'s release of @ready. */
	while (!atomic_load_explicit(&p->ready, memory_order_acquire))
		vc_cpu_relax();
	t0 = vc_now_ns();
	/* Release pairs with helper()'s acquire of @go. */
	atomic_store_explicit(&p->go, true, memory_order_release);
	if (to_helper) {
		fill(p);
		/* Acquire pairs with drain()'s release: every byte has landed. */
		while (atomic_load_explicit(&p->drained, memory_order_acquire) < np)
			vc_cpu_relax();
	} else {
		drain(p);
	}
	return vc_now_ns() - t0;
}

void vc_pipe_close(struct vc_pipe *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->lock);
	free(p->stage);
	free(p);
}
