/* SPDX-License-Identifier: MIT */
/*
 * exptab_nvvm.c - the driver's compile-cache table that NVRTC asks for
 * (da9151d3): a size word of 56 and 6 slots, as measured on driver 580
 * (docs/cuda13-driver-surface.md, "da9151d3"). NVRTC describes each step it
 * is about to run (NVVM to PTX, kind 2; ptxas to ELF, kind 1) with the
 * input and options, looks the result up, and on a miss runs the step and
 * stores what it made. Without the table NVRTC runs NVVM and ptxas on every
 * compilation: PyTorch's runtime-compiled kernels cost 4-9 times the time
 * they cost natively, where the driver's cache answers. The cache is
 * jitcache.c's, in the guest.
 *
 *   1 create(&h, kind, input, input_len, options, "HOST64", build_date, arch, flags)
 *   2 destroy(h)
 *   3 lookup(h, 0, &data, &len32): 0 and a buffer the caller hands to slot 6,
 *     or CUDA_ERROR_NOT_FOUND
 *   4 store(h, 0, data, len)
 *   5 never seen called: CUDA_ERROR_NOT_SUPPORTED
 *   6 release(data, ...): frees a buffer slot 3 returned
 * With CUDA_CACHE_DISABLE=1, create answers CUDA_ERROR_NOT_INITIALIZED, as
 * the driver does, and NVRTC compiles without a cache.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exptab.h"
#include "jitcache.h"

typedef void (*vc_slot_fn)(void);

#define STR_MAX 65536u /* options and version strings longer than this are not cached */

struct nvvm_handle {
	struct nvvm_handle *next;
	unsigned char *key;
	size_t key_len;
};

struct nvvm_buf {
	struct nvvm_buf *next;
	void *data;
};

/* Live handles and buffers lent by slot 3: a pointer not on these lists is
 * refused, never dereferenced or freed. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nvvm_handle *g_handles;
static struct nvvm_buf *g_bufs;

static size_t bounded_len(const char *s)
{
	return s ? strnlen(s, STR_MAX + 1) : 0;
}

static unsigned char *put(unsigned char *p, const void *src, size_t n)
{
	if (n)
		memcpy(p, src, n);
	return p + n;
}

/* The key: every argument of create, lengths first, so that no two
 * argument lists serialise alike. */
static CUresult create(void **out, int kind, const void *input, size_t input_len, const char *options,
		       const char *host, const char *date, int arch, int flags)
{
	size_t lo = bounded_len(options), lh = bounded_len(host), ld = bounded_len(date);
	int32_t hdr[3] = {kind, arch, flags};
	uint64_t lens[4] = {input_len, lo, lh, ld};
	struct nvvm_handle *h;
	unsigned char *p;

	if (!out || (!input && input_len))
		return CUDA_ERROR_INVALID_VALUE;
	*out = NULL;
	if (!vc_jitcache_enabled())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (input_len > VC_JITCACHE_ITEM_MAX || lo > STR_MAX || lh > STR_MAX || ld > STR_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->key_len = sizeof(hdr) + sizeof(lens) + input_len + lo + lh + ld;
	h->key = malloc(h->key_len);
	if (!h->key) {
		free(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	p = put(h->key, hdr, sizeof(hdr));
	p = put(p, lens, sizeof(lens));
	p = put(p, input, input_len);
	p = put(p, options, lo);
	p = put(p, host, lh);
	put(p, date, ld);
	pthread_mutex_lock(&g_mu);
	h->next = g_handles;
	g_handles = h;
	pthread_mutex_unlock(&g_mu);
	*out = h;
	return CUDA_SUCCESS;
}

/* Called with g_mu held. */
static struct nvvm_handle *find(const void *p)
{
	for (struct nvvm_handle *h = g_handles; h; h = h->next)
		if (h == p)
			return h;
	return NULL;
}

static CUresult destroy(void *handle)
{
	struct nvvm_handle **pp, *h = NULL;

	pthread_mutex_lock(&g_mu);
	for (pp = &g_handles; *pp; pp = &(*pp)->next) {
		if (*pp == handle) {
			h = *pp;
			*pp = h->next;
			break;
		}
	}
	pthread_mutex_unlock(&g_mu);
	if (!h)
		return CUDA_ERROR_INVALID_HANDLE;
	free(h->key);
	free(h);
	return CUDA_SUCCESS;
}

/* The key is copied out under the lock, so that a destroy racing the lookup
 * cannot free it underneath. */
static CUresult key_of(void *handle, unsigned char **key, size_t *len)
{
	struct nvvm_handle *h;
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&g_mu);
	h = find(handle);
	if (!h) {
		rc = CUDA_ERROR_INVALID_HANDLE;
	} else if (!(*key = malloc(h->key_len ? h->key_len : 1))) {
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		memcpy(*key, h->key, h->key_len);
		*len = h->key_len;
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

static CUresult lookup(void *handle, int which, void **data, uint32_t *len)
{
	unsigned char *key;
	size_t key_len, n = 0;
	struct nvvm_buf *b;
	void *d = NULL;
	CUresult rc;
	int r;

	if (!data || !len)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = key_of(handle, &key, &key_len)))
		return rc;
	/* Only part 0 was ever seen; another is not cached. */
	r = which ? -ENOENT : vc_jitcache_lookup(key, key_len, &d, &n);
	free(key);
	if (r == -ENOMEM)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (r || n > UINT32_MAX) {
		free(d);
		return CUDA_ERROR_NOT_FOUND;
	}
	b = malloc(sizeof(*b));
	if (!b) {
		free(d);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	b->data = d;
	pthread_mutex_lock(&g_mu);
	b->next = g_bufs;
	g_bufs = b;
	pthread_mutex_unlock(&g_mu);
	*data = d;
	*len = (uint32_t)n;
	return CUDA_SUCCESS;
}

static CUresult store(void *handle, int which, const void *data, size_t len)
{
	unsigned char *key;
	size_t key_len;
	CUresult rc;
	int r;

	if (!data && len)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = key_of(handle, &key, &key_len)))
		return rc;
	r = which ? 0 : vc_jitcache_store(key, key_len, data, len);
	free(key);
	return r == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : r ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult release(void *data)
{
	struct nvvm_buf **pp, *b = NULL;

	pthread_mutex_lock(&g_mu);
	for (pp = &g_bufs; *pp; pp = &(*pp)->next) {
		if ((*pp)->data == data) {
			b = *pp;
			*pp = b->next;
			break;
		}
	}
	pthread_mutex_unlock(&g_mu);
	if (!b)
		return CUDA_ERROR_INVALID_VALUE;
	free(b->data);
	free(b);
	return CUDA_SUCCESS;
}

static CUresult slot5_unsupported(void)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

#define SLOT(fn) ((vc_slot_fn)(fn))

static const vc_slot_fn t_da9151d3[] = {
	(vc_slot_fn)(uintptr_t)56,
	SLOT(create), SLOT(destroy), SLOT(lookup), SLOT(store), SLOT(slot5_unsupported), SLOT(release),
};
_Static_assert(sizeof(t_da9151d3) == 56, "da9151d3 is 56 bytes, as measured");

const void *vc_exptab_nvvm_table(void)
{
	return t_da9151d3;
}
