/* SPDX-License-Identifier: MIT */
/*
 * module.c - images: the guest stages a module or library image piece by
 * piece (inline or through the arena), then loads it in one call.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"

static struct vc_cu_image *image(struct vc_cu_session *x, uint64_t id)
{
	for (int i = 0; i < VC_CU_MAX_IMAGES; i++)
		if (x->img[i].buf && x->img[i].id == id)
			return &x->img[i];
	return NULL;
}

static void image_free(struct vc_cu_session *x, struct vc_cu_image *im)
{
	x->img_bytes -= im->size;
	free(im->buf);
	memset(im, 0, sizeof(*im));
}

/* Zero bytes after every staged image: the driver parses the image's own
 * headers, so a lying header should meet zeros, not the heap. */
#define IMAGE_SLACK 4096u

int vc_cu_manual_vcImageBegin(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_req_vcImageBegin rq;
	struct vc_cu_rep_vcImageBegin rp;
	struct vc_cu_image *im = NULL;

	TAKE(rq);
	if (!rq.size || rq.size > VC_CU_IMAGE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	/* Bounded host memory per session, whatever the guest asks for. */
	if (rq.size > VC_CU_IMAGE_MAX - x->img_bytes)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (int i = 0; i < VC_CU_MAX_IMAGES && !im; i++)
		if (!x->img[i].buf)
			im = &x->img[i];
	if (!im)
		return CUDA_ERROR_OUT_OF_MEMORY;
	im->buf = calloc(1, rq.size + IMAGE_SLACK);
	if (!im->buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	im->size = rq.size;
	x->img_bytes += rq.size;
	im->id = ++x->next_image;
	rp.image = im->id;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_vcImagePut(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			    struct vc_cu_out *out)
{
	struct vc_cu_req_vcImagePut rq;
	struct vc_cu_image *im;
	const void *src;

	TAKE(rq);
	im = image(x, rq.image);
	if (!im)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!(rq.len <= im->size && rq.offset <= im->size - rq.len))
		return CUDA_ERROR_INVALID_VALUE;
	if (rq.inline_data) {
		if (rq.len > len - sizeof(rq))
			return -VC_FATAL_PAYLOAD;
		src = p + sizeof(rq);
	} else {
		src = x->svc->arena(x->svc->arg, rq.arena_off, rq.len);
		if (!src)
			return -VC_FATAL_ARENA;
		out->bulk = true;
	}
	memcpy(im->buf + rq.offset, src, rq.len);
	return 0;
}

/* The architecture (major * 10 + minor) of the current context's device,
 * or 0 where the driver does not say. */
static uint32_t image_arch(struct vc_cu_session *x)
{
	CUdevice d;
	int major = 0, minor = 0;

	/* A forced JIT compiles every image's PTX: no cubin counts alone. */
	if (getenv("CUDA_FORCE_PTX_JIT") || x->drv->cuCtxGetDevice(&d) ||
	    x->drv->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) ||
	    x->drv->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) || major <= 0 ||
	    minor < 0)
		return 0;
	return (uint32_t)(major * 10 + minor);
}

void vc_cu_image_loading(struct vc_cu_session *x, const uint8_t *p, uint64_t size)
{
	if (!x->may_print && vc_cu_image_may_print(p, size, image_arch(x)))
		x->may_print = x->sync_flushes = true;
}

int vc_cu_manual_vcLoad(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_load rq;
	struct vc_cu_rep_load rp = {0};
	struct vc_cu_image *im;
	int rc;

	TAKE(rq);
	im = image(x, rq.image);
	if (!im)
		return CUDA_ERROR_INVALID_HANDLE;
	out->console = true; /* the driver flushes device printf at a module load */
	if ((rc = vc_cu_image_check(im->buf, im->size)) || (rc = vc_cu_enter(x, rq.ctx)))
		goto out;
	vc_cu_image_loading(x, im->buf, im->size);
	if (rq.kind == VC_CU_LOAD_MODULE) {
		CUmodule m = NULL;

		if ((rc = x->drv->cuModuleLoadData(&m, im->buf)) == 0)
			rc = vc_cu_publish_owned(x, VC_H_CUMODULE, m, &rp.handle);
	} else if (rq.kind == VC_CU_LOAD_LIBRARY) {
		CUlibrary l = NULL;

		/* Libraries are context-independent; they are freed with the
		 * session's last context by the driver at teardown. */
		if ((rc = x->drv->cuLibraryLoadData(&l, im->buf, NULL, NULL, 0, NULL, NULL, 0)) == 0)
			rc = vc_cu_publish(x, VC_H_CULIBRARY, l, &rp.handle);
	} else {
		rc = -VC_FATAL_PAYLOAD;
	}
out:
	image_free(x, im);
	if (rc == 0)
		REPLY(rp);
	return rc;
}
