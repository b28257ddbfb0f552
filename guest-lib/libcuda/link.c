/* SPDX-License-Identifier: MIT */
/*
 * link.c - JIT linking (cuLink*), loads with JIT options (cuModuleLoadDataEx,
 * cuLibraryLoadData) and loads from files (cuModuleLoad, cuLibraryLoadFromFile,
 * cuLinkAddFile). The host driver links and compiles; the guest translates:
 *
 *  - CUjit_option arrays travel as (option, value) pairs. The log buffers
 *    are the caller's memory: the host links with buffers of its own of the
 *    same size (capped) and sends their text back, which is written into the
 *    caller's buffers, as are the output values (wall time, filled log
 *    sizes, threads per block). A link writes its logs at every step, into
 *    the buffers given at cuLinkCreate, whose arrays must stay valid for the
 *    link's life, as natively. Options whose values are arrays of the
 *    caller's pointers (symbol and kernel name lists) are not forwarded:
 *    CUDA_ERROR_NOT_SUPPORTED. Unknown options: CUDA_ERROR_INVALID_VALUE.
 *  - Files are read here, in the guest (the path is the guest's), and sent
 *    as data through the image upload path.
 *  - cuLinkComplete fetches the linked image into the guest, which keeps it
 *    until cuLinkDestroy, as the driver keeps its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vc_cu_guest.h"

#define LINK_MAGIC 0x4c4e4b31u

/* What a call's options need after it: the caller's arrays and log sizes. */
struct jit_args {
	CUjit_option *opts;
	void **vals;
	unsigned int n;
	uint64_t info_cap, err_cap; /* the caller's log buffer sizes */
};

struct vc_link {
	uint32_t magic;
	uint64_t id;
	struct jit_args jit; /* the options given at cuLinkCreate */
	void *image;         /* the linked image, once complete */
	size_t size;
	struct vc_link *next;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vc_link *g_links;

/* The live link @state, or NULL: never trust the handle as a pointer. */
static struct vc_link *link_find(CUlinkState state)
{
	struct vc_link *l;

	pthread_mutex_lock(&g_mu);
	for (l = g_links; l && l != (struct vc_link *)state; l = l->next)
		;
	pthread_mutex_unlock(&g_mu);
	return l;
}

/* ---- JIT options -------------------------------------------------------------- */

static CUresult jit_encode(CUjit_option *opts, void **vals, unsigned int n, struct vc_cu_jit *w,
			   struct jit_args *a)
{
	memset(a, 0, sizeof(*a));
	w->n = n;
	if (!n)
		return CUDA_SUCCESS;
	if (!opts || !vals)
		return CUDA_ERROR_INVALID_VALUE;
	if (n > VC_CU_JIT_MAX)
		return CUDA_ERROR_INVALID_VALUE; /* vcuda's limit: the driver has 35 kinds */
	for (unsigned int i = 0; i < n; i++) {
		int o = (int)opts[i];
		uint64_t v = (uint64_t)(uintptr_t)vals[i];

		if (o < 0 || o >= CU_JIT_NUM_OPTIONS)
			return CUDA_ERROR_INVALID_VALUE;
		if (vc_cu_jit_is_array(o))
			return CUDA_ERROR_NOT_SUPPORTED;
		if (o == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
			a->info_cap = (unsigned int)v;
		if (o == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			a->err_cap = (unsigned int)v;
		/* Buffers and outputs: the host has its own; sizes are unsigned int. */
		if (o == CU_JIT_INFO_LOG_BUFFER || o == CU_JIT_ERROR_LOG_BUFFER || o == CU_JIT_WALL_TIME)
			v = 0;
		else if (o == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES || o == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			v = (unsigned int)v;
		w->o[i].opt = o;
		w->o[i].value = v;
	}
	a->opts = opts;
	a->vals = vals;
	a->n = n;
	return CUDA_SUCCESS;
}

static void log_put(char *buf, uint64_t cap, const uint8_t *text, uint32_t len)
{
	if (!buf || !cap)
		return;
	if (len > cap - 1)
		len = (uint32_t)(cap - 1);
	memcpy(buf, text, len);
	buf[len] = '\0';
}

/* Write a reply's outputs (@data: rp->n values, then the logs) into the caller's arrays. */
static void jit_apply(const struct jit_args *a, const struct vc_cu_rep_jit *rp, const uint8_t *data,
		      size_t dlen)
{
	const uint8_t *info, *err;

	if (!a->n || rp->n != a->n || dlen < 8ull * rp->n + rp->info_len + rp->err_len)
		return;
	info = data + 8ull * rp->n;
	err = info + rp->info_len;
	for (unsigned int i = 0; i < a->n; i++) {
		uint64_t v;

		memcpy(&v, data + 8ull * i, sizeof(v));
		switch ((int)a->opts[i]) {
		case CU_JIT_INFO_LOG_BUFFER:
			log_put(a->vals[i], a->info_cap, info, rp->info_len);
			break;
		case CU_JIT_ERROR_LOG_BUFFER:
			log_put(a->vals[i], a->err_cap, err, rp->err_len);
			break;
		case CU_JIT_WALL_TIME:
			memcpy(&a->vals[i], &v, sizeof(float)); /* a float in the slot, as the driver writes it */
			break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
		case CU_JIT_THREADS_PER_BLOCK:
			a->vals[i] = (void *)(uintptr_t)(unsigned int)v;
			break;
		default:
			break;
		}
	}
}

/* A call whose reply is a struct vc_cu_rep_jit and its data; outputs applied. */
static CUresult jit_call(uint32_t op, void *rq, size_t rqlen, const struct jit_args *a,
			 struct vc_cu_rep_jit *rp)
{
	static __thread uint8_t data[VC_DEFAULT_SLOT_SIZE_MIN_DATA];
	size_t dlen = 0;
	CUresult rc;

	memset(rp, 0, sizeof(*rp));
	rc = vc_cu_call_sized(op, rq, rqlen, NULL, 0, rp, sizeof(*rp), data, sizeof(data), &dlen, 0);
	if (rc != CUDA_SUCCESS)
		return rc;
	/* The driver fills the logs on failure too (that is what they are for),
	 * so the call's own result travels in the reply. */
	jit_apply(a, rp, data, dlen);
	return (CUresult)rp->result;
}

CUresult vc_cu_load_jit(uint32_t kind, const void *img, CUjit_option *opts, void **vals, unsigned int n,
			uint64_t *handle)
{
	struct vc_cu_req_load_jit rq;
	struct vc_cu_rep_jit rp;
	struct jit_args a;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	memset(&rq, 0, sizeof(rq));
	rq.kind = kind;
	if ((rc = jit_encode(opts, vals, n, &rq.jit, &a)))
		return rc;
	if ((rc = vc_cu_image_stage(img, 0, &rq.image)))
		return rc;
	rc = jit_call(VC_CU_vcLoadJit, &rq, sizeof(rq), &a, &rp);
	if (rc == CUDA_SUCCESS)
		*handle = rp.handle;
	return rc;
}

/* ---- files, read in the guest ------------------------------------------------------ */

/* The whole of file @path, NUL-terminated (PTX is text), in *@buf (malloc). */
static CUresult read_file(const char *path, void **buf, size_t *size)
{
	struct stat st;
	size_t got = 0;
	char *b;
	int fd;

	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_FILE_NOT_FOUND;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size >= VC_CU_IMAGE_MAX) {
		close(fd);
		return CUDA_ERROR_FILE_NOT_FOUND;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!got) {
		free(b);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	b[got] = '\0';
	*buf = b;
	*size = got;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
	void *img;
	size_t n;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!module)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = read_file(fname, &img, &n)))
		return rc;
	rc = cuModuleLoadData(module, img);
	free(img);
	return rc;
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
				       void **jitOptionsValues, unsigned int numJitOptions,
				       CUlibraryOption *libraryOptions, void **libraryOptionValues,
				       unsigned int numLibraryOptions)
{
	void *img;
	size_t n;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!library)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = read_file(fileName, &img, &n)))
		return rc;
	rc = cuLibraryLoadData(library, img, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
			       libraryOptionValues, numLibraryOptions);
	free(img);
	return rc;
}

/* ---- linking ---------------------------------------------------------------------- */

CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
				 CUlinkState *stateOut)
{
	struct vc_cu_req_link_create rq;
	struct vc_cu_rep_jit rp;
	struct vc_link *l;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!stateOut)
		return CUDA_ERROR_INVALID_VALUE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&rq, 0, sizeof(rq));
	if ((rc = jit_encode(options, optionValues, numOptions, &rq.jit, &l->jit)) ||
	    (rc = jit_call(VC_CU_vcLinkCreate, &rq, sizeof(rq), &l->jit, &rp))) {
		free(l);
		return rc;
	}
	l->magic = LINK_MAGIC;
	l->id = rp.handle;
	pthread_mutex_lock(&g_mu);
	l->next = g_links;
	g_links = l;
	pthread_mutex_unlock(&g_mu);
	*stateOut = (CUlinkState)l;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
				  const char *name, unsigned int numOptions, CUjit_option *options,
				  void **optionValues)
{
	struct vc_cu_req_link_add rq;
	struct vc_cu_rep_jit rp;
	struct vc_link *l = link_find(state);
	struct jit_args a;
	CUresult rc;

	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!data || !size || (int)type < 0 || type >= CU_JIT_NUM_INPUT_TYPES)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&rq, 0, sizeof(rq));
	rq.link = l->id;
	rq.type = (int32_t)type;
	if (name) {
		size_t nl = strnlen(name, VC_CU_LINK_NAME_MAX);

		/* A longer name is cut: it only labels the input in the logs. */
		memcpy(rq.name, name, nl < VC_CU_LINK_NAME_MAX ? nl : VC_CU_LINK_NAME_MAX - 1);
	}
	/* This input's own options; the logs go where cuLinkCreate said. */
	if ((rc = jit_encode(options, optionValues, numOptions, &rq.jit, &a)))
		return rc;
	if ((rc = vc_cu_image_stage(data, size, &rq.image)))
		return rc;
	return jit_call(VC_CU_vcLinkAdd, &rq, sizeof(rq), &l->jit, &rp);
}

CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
				  unsigned int numOptions, CUjit_option *options, void **optionValues)
{
	const char *base;
	void *img;
	size_t n;
	CUresult rc;

	if (!link_find(state))
		return CUDA_ERROR_INVALID_HANDLE;
	if ((rc = read_file(path, &img, &n)))
		return rc;
	base = strrchr(path, '/');
	/* PTX is text: its NUL goes with it. */
	rc = cuLinkAddData_v2(state, type, img, type == CU_JIT_INPUT_PTX ? n + 1 : n, base ? base + 1 : path,
			      numOptions, options, optionValues);
	free(img);
	return rc;
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
	struct vc_cu_req_link rq;
	struct vc_cu_rep_jit rp;
	struct vc_link *l = link_find(state);
	uint8_t *img;
	CUresult rc;

	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!cubinOut || !sizeOut)
		return CUDA_ERROR_INVALID_VALUE;
	rq.link = l->id;
	if ((rc = jit_call(VC_CU_vcLinkComplete, &rq, sizeof(rq), &l->jit, &rp)))
		return rc;
	if (!rp.size || rp.size > VC_CU_IMAGE_MAX)
		return CUDA_ERROR_INVALID_IMAGE;
	if (!(img = malloc(rp.size)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (uint64_t off = 0; off < rp.size;) {
		struct vc_cu_req_link_read rr = {.link = l->id, .offset = off, .len = rp.size - off};
		uint64_t none;
		size_t got = 0;

		if (rr.len > VC_DEFAULT_SLOT_SIZE_MIN_DATA)
			rr.len = VC_DEFAULT_SLOT_SIZE_MIN_DATA;
		rc = vc_cu_call_sized(VC_CU_vcLinkRead, &rr, sizeof(rr), NULL, 0, &none, sizeof(none), img + off,
				      rr.len, &got, 0);
		if (rc == CUDA_SUCCESS && got != rr.len)
			rc = CUDA_ERROR_INVALID_IMAGE;
		if (rc) {
			free(img);
			return rc;
		}
		off += got;
	}
	free(l->image); /* a second completion replaces the first */
	l->image = img;
	l->size = rp.size;
	*cubinOut = img;
	*sizeOut = rp.size;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state)
{
	struct vc_cu_req_link rq;
	struct vc_link **pp, *l = NULL;
	uint64_t none;
	CUresult rc;

	pthread_mutex_lock(&g_mu);
	for (pp = &g_links; *pp; pp = &(*pp)->next)
		if (*pp == (struct vc_link *)state) {
			l = *pp;
			*pp = l->next;
			break;
		}
	pthread_mutex_unlock(&g_mu);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	rq.link = l->id;
	rc = vc_cu_call(VC_CU_vcLinkDestroy, &rq, sizeof(rq), NULL, 0, &none, sizeof(none), NULL, 0, 0);
	l->magic = 0;
	free(l->image);
	free(l);
	return rc;
}
