/* SPDX-License-Identifier: MIT */
/*
 * capcopy.c - pageable host memory in captured copies.
 *
 * Natively a stream capture records an asynchronous copy from or to pageable
 * memory, and the graph reads or writes that memory each time it runs
 * (cuSPARSE's and cuBLAS's results in host pointer mode are such copies).
 * Through vcuda the host cannot reach the program's pageable pages when the
 * graph runs; the arena's staged bytes are gone by then. So a captured copy
 * of pageable memory becomes two captured steps around a page-locked bounce
 * buffer of the pinned pool (registered with the host's driver, as
 * cudaMallocHost's memory is): device to host, a DMA into the bounce and then
 * a host function that copies it out to the program's memory; host to
 * device, a host function that copies the program's bytes into the bounce
 * and then a DMA from it. Host functions run here, in the guest, when the
 * stream reaches them, and hold the stream until they return (hostfn.c), so
 * the order is the native copy's.
 *
 * Memcpy nodes built by hand with pageable memory take a bounce the same
 * way (graph.c): the host runs their pair in a host node beside the copy.
 * A node's parameters read back name the program's memory, not the bounce.
 *
 * A bounce belongs to its (address, length, direction, and for a copy out
 * of the device the rows it writes, when not all): the same copy
 * captured again, in a loop or in another graph, takes the same one, and
 * copies of one stream through it stay in stream order. Bounces are kept for
 * the process's life, as graphs and executable graphs that use them can live
 * on unseen (the host functions' pairs are kept the same way, graph_host.c);
 * together they are bounded by CAPCOPY_MAX bytes, past which a captured
 * pageable copy is refused with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, as
 * before.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vc_cu_guest.h"

#define CAPCOPY_MAX (64ull << 20)
#define CAPCOPY_N 4096u

struct bounce {
	void *host;
	uint64_t n;
	int out;
	struct vc_cu_capcopy_rows rows; /* out of the device: the bytes written (width 0: all n) */
	uint64_t poff;
	uint8_t *pin;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct bounce *g_b[CAPCOPY_N];
static unsigned g_n;
static uint64_t g_bytes;

/* When the graph reaches a copy out: the bytes it wrote, bounce to program. */
static void CUDA_CB copy_out(void *arg)
{
	const struct bounce *b = arg;
	const struct vc_cu_capcopy_rows *r = &b->rows;

	if (!r->width) {
		memcpy(b->host, b->pin, b->n);
		return;
	}
	for (uint64_t z = 0; z < r->depth; z++)
		for (uint64_t y = 0; y < r->height; y++) {
			uint64_t off = r->first + z * r->plane + y * r->pitch;

			memcpy((uint8_t *)b->host + off, b->pin + off, r->width);
		}
}

/* When the graph reaches a captured copy in: the program's bytes to the bounce. */
static void CUDA_CB copy_in(void *arg)
{
	const struct bounce *b = arg;

	memcpy(b->pin, b->host, b->n);
}

CUresult vc_cu_capcopy_get(void *host, uint64_t n, int out, const struct vc_cu_capcopy_rows *rows, uint64_t *poff,
			   CUhostFn *fn, void **data)
{
	uint64_t size = (n + 4095) & ~4095ull, devptr;
	struct vc_cu_capcopy_rows all = {0};
	CUresult rc = CUDA_SUCCESS;
	struct bounce *b = NULL;

	if (!host || !n)
		return CUDA_ERROR_INVALID_VALUE;
	if (out && rows)
		all = *rows;
	pthread_mutex_lock(&g_mu);
	for (unsigned i = 0; i < g_n && !b; i++)
		if (g_b[i]->host == host && g_b[i]->n == n && g_b[i]->out == out &&
		    !memcmp(&g_b[i]->rows, &all, sizeof(all)))
			b = g_b[i];
	if (!b) {
		rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		if (g_n == CAPCOPY_N || size > CAPCOPY_MAX - g_bytes || !(b = calloc(1, sizeof(*b))))
			goto out;
		/* Registered with the host's driver as cuMemHostAlloc's memory
		 * is: a graph's copy of unregistered memory is staged when the
		 * graph is launched, before the host function that fills the
		 * bounce has run. */
		b->pin = vc_cu_pinned_alloc(size, &b->poff);
		if (!b->pin || vc_cu_pinseg_host_register(b->poff, size, &devptr)) {
			if (b->pin)
				vc_cu_pinned_free(b->poff, size);
			free(b);
			b = NULL;
			goto out;
		}
		b->host = host;
		b->n = n;
		b->out = out;
		b->rows = all;
		g_b[g_n++] = b;
		g_bytes += size;
		rc = CUDA_SUCCESS;
	}
	*poff = b->poff;
	*fn = out ? copy_out : copy_in;
	*data = b;
out:
	pthread_mutex_unlock(&g_mu);
	return rc;
}

const void *vc_cu_capcopy_behind(const void *pin)
{
	const void *host = pin;

	pthread_mutex_lock(&g_mu);
	for (unsigned i = 0; i < g_n; i++)
		if (g_b[i]->pin == pin) {
			host = g_b[i]->host;
			break;
		}
	pthread_mutex_unlock(&g_mu);
	return host;
}
