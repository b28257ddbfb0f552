/* SPDX-License-Identifier: MIT */
/*
 * vc_fill.c - populating and filling large shared mappings on several
 * threads (vc_fill.h).
 *
 * Each thread takes one slice: it populates it (one system call that makes
 * and maps the slice's pages, instead of a fault per page) and, for a copy,
 * fills it with non-temporal stores. Slices are whole pages of at least
 * SLICE_MIN; at most VC_FILL_SLICES_MAX threads, and no more than the
 * processors online. Where a thread cannot be started, its slice is done by
 * the caller.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vc_copy.h"
#include "vc_fill.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define SLICE_MIN (16u << 20)
#define PAGE 4096u

struct slice {
	uint8_t *dst;
	const uint8_t *src; /* NULL: populate only */
	size_t len;
	int advice;         /* MADV_POPULATE_WRITE, or _READ for pages that exist */
	int rc;
	pthread_t t;
	int started;
};

static void *work(void *arg)
{
	struct slice *s = arg;

	/* Before Linux 5.14 (EINVAL) the pages are made as the copy touches
	 * them; populating alone then does nothing, which is harmless. */
	if (madvise(s->dst, s->len, s->advice) < 0 && errno != EINVAL)
		s->rc = -errno;
	if (!s->rc && s->src)
		vc_copy_stream(s->dst, s->src, s->len);
	return NULL;
}

size_t vc_fill_plan(size_t len, unsigned *n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t k = len / SLICE_MIN, per;

	if (len < VC_FILL_PARALLEL_MIN || cpus < 2)
		k = 1;
	if (k > (size_t)cpus)
		k = (size_t)cpus;
	if (k > VC_FILL_SLICES_MAX)
		k = VC_FILL_SLICES_MAX;
	if (k < 1)
		k = 1;
	per = ((len + k - 1) / k + PAGE - 1) & ~(size_t)(PAGE - 1);
	/* Rounded up to pages, fewer slices may cover it. */
	*n = per ? (unsigned)((len + per - 1) / per) : 1;
	return per;
}

static int run(void *dst, const void *src, size_t len, int advice)
{
	struct slice s[VC_FILL_SLICES_MAX];
	unsigned n;
	size_t per = vc_fill_plan(len, &n), done = 0;
	int rc = 0;

	for (unsigned i = 0; i < n; i++) {
		size_t l = i == n - 1 ? len - done : (per < len - done ? per : len - done);

		s[i] = (struct slice){.dst = (uint8_t *)dst + done, .src = src ? (const uint8_t *)src + done : NULL,
				      .len = l, .advice = advice};
		done += l;
	}
	/* Slice 0 is the caller's; the others are threads', or the caller's
	 * where one could not start. */
	for (unsigned i = 1; i < n; i++)
		s[i].started = s[i].len && pthread_create(&s[i].t, NULL, work, &s[i]) == 0;
	work(&s[0]);
	for (unsigned i = 1; i < n; i++) {
		if (s[i].started)
			pthread_join(s[i].t, NULL);
		else if (s[i].len)
			work(&s[i]);
	}
	for (unsigned i = 0; i < n; i++)
		if (s[i].rc && !rc)
			rc = s[i].rc;
	return rc;
}

int vc_fill_populate(void *addr, size_t len)
{
	return len ? run(addr, NULL, len, MADV_POPULATE_WRITE) : 0;
}

int vc_fill_map(void *addr, size_t len)
{
	return len ? run(addr, NULL, len, MADV_POPULATE_READ) : 0;
}

int vc_fill_copy(void *dst, const void *src, size_t len)
{
	return len ? run(dst, src, len, MADV_POPULATE_WRITE) : 0;
}
