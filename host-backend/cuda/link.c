/* SPDX-License-Identifier: MIT */
/*
 * link.c - JIT linking and loads with JIT options. The guest stages each
 * input like a module image (vcImageBegin/vcImagePut) and sends its
 * CUjit_option array as (option, value) pairs; here they become the
 * driver's arrays, with log buffers of our own (as large as the guest's,
 * at most VC_CU_JIT_LOG_MAX) whose text goes back in the reply, with every
 * option's value after the call. A link is a record of ours in the handle
 * table (VC_H_CULINKSTATE): the driver's link state, the arrays and buffers
 * given at its creation (the driver writes into them until it is
 * destroyed), and the linked image, read out by the guest piece by piece.
 *
 * Inputs are checked before the driver parses them: their own size fields
 * must lie within the bytes staged (fatbin header, ELF header and tables,
 * an archive's magic), and PTX is text (the staged copy has zeros after it).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"

#define MAX_LINKS 16 /* live links per session: each holds host memory */

/* One call's options, as the driver takes them. */
struct jitbuf {
	uint32_t n;
	CUjit_option opt[VC_CU_JIT_MAX];
	void *val[VC_CU_JIT_MAX];
	char *info, *err;
	uint32_t info_cap, err_cap;
};

struct link {
	CUlinkState real;
	struct jitbuf jit;
	void *image; /* the driver's, until cuLinkDestroy */
	size_t size;
};

static void jit_free(struct jitbuf *b)
{
	free(b->info);
	free(b->err);
	memset(b, 0, sizeof(*b));
}

/* The guest's option array in @b: 0, a CUDA error, or -VC_FATAL_PAYLOAD. */
static int jit_take(const struct vc_cu_jit *w, struct jitbuf *b)
{
	memset(b, 0, sizeof(*b));
	if (w->n > VC_CU_JIT_MAX)
		return -VC_FATAL_PAYLOAD;
	for (uint32_t i = 0; i < w->n; i++) {
		int o = w->o[i].opt;

		if (o < 0 || o >= CU_JIT_NUM_OPTIONS || vc_cu_jit_is_array(o))
			return CUDA_ERROR_INVALID_VALUE;
		if (o == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
			b->info_cap = w->o[i].value < VC_CU_JIT_LOG_MAX ? (uint32_t)w->o[i].value : VC_CU_JIT_LOG_MAX;
		if (o == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			b->err_cap = w->o[i].value < VC_CU_JIT_LOG_MAX ? (uint32_t)w->o[i].value : VC_CU_JIT_LOG_MAX;
	}
	b->n = w->n;
	for (uint32_t i = 0; i < w->n; i++) {
		int o = w->o[i].opt;

		b->opt[i] = (CUjit_option)o;
		switch (o) {
		case CU_JIT_INFO_LOG_BUFFER:
			/* one buffer however often the option is repeated: every
			 * copy of it names the same, never a freed one */
			if (!b->info && !(b->info = calloc(1, b->info_cap + 1u)))
				return CUDA_ERROR_OUT_OF_MEMORY;
			b->val[i] = b->info;
			break;
		case CU_JIT_ERROR_LOG_BUFFER:
			if (!b->err && !(b->err = calloc(1, b->err_cap + 1u)))
				return CUDA_ERROR_OUT_OF_MEMORY;
			b->val[i] = b->err;
			break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
			b->val[i] = (void *)(uintptr_t)b->info_cap;
			break;
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			b->val[i] = (void *)(uintptr_t)b->err_cap;
			break;
		case CU_JIT_WALL_TIME:
			b->val[i] = NULL; /* the driver writes a float here */
			break;
		default:
			b->val[i] = (void *)(uintptr_t)w->o[i].value;
			break;
		}
	}
	return 0;
}

/* The reply of a call with options @b and CUresult @result: every option's
 * value (never our pointers), then the logs, as much as the data holds. */
static int jit_reply(const struct jitbuf *b, int result, uint64_t handle, uint64_t size, struct vc_cu_out *out)
{
	struct vc_cu_rep_jit rp = {.handle = handle, .size = size, .n = b->n, .result = result};
	uint32_t room, len;

	if (!out->data || out->data_cap < 8u * b->n)
		return -VC_FATAL_PAYLOAD; /* a synchronous call always has the minimum */
	for (uint32_t i = 0; i < b->n; i++) {
		uint64_t v = 0;

		if (b->opt[i] != CU_JIT_INFO_LOG_BUFFER && b->opt[i] != CU_JIT_ERROR_LOG_BUFFER)
			v = (uint64_t)(uintptr_t)b->val[i];
		memcpy(out->data + 8u * i, &v, sizeof(v));
	}
	room = out->data_cap - 8u * b->n;
	len = b->info ? (uint32_t)strnlen(b->info, b->info_cap) : 0;
	rp.info_len = len < room / 2 ? len : room / 2;
	if (rp.info_len)
		memcpy(out->data + 8u * b->n, b->info, rp.info_len);
	len = b->err ? (uint32_t)strnlen(b->err, b->err_cap) : 0;
	rp.err_len = len < room - rp.info_len ? len : room - rp.info_len;
	if (rp.err_len)
		memcpy(out->data + 8u * b->n + rp.info_len, b->err, rp.err_len);
	out->data_len = 8u * b->n + rp.info_len + rp.err_len;
	REPLY(rp);
	return 0;
}

/* ---- staged inputs ------------------------------------------------------------- */

static struct vc_cu_image *image_find(struct vc_cu_session *x, uint64_t id)
{
	for (int i = 0; i < VC_CU_MAX_IMAGES; i++)
		if (x->img[i].buf && x->img[i].id == id)
			return &x->img[i];
	return NULL;
}

static void image_drop(struct vc_cu_session *x, struct vc_cu_image *im)
{
	x->img_bytes -= im->size;
	free(im->buf);
	memset(im, 0, sizeof(*im));
}

/* Does input @im of @type claim no more than the bytes staged? */
static int input_ok(const struct vc_cu_image *im, int type)
{
	const uint8_t *p = im->buf;
	uint64_t n = im->size;

	switch (type) {
	case CU_JIT_INPUT_CUBIN:
	case CU_JIT_INPUT_OBJECT: {
		Elf64_Ehdr e;

		if (n < sizeof(e) || memcmp(p, ELFMAG, SELFMAG))
			return 0;
		memcpy(&e, p, sizeof(e));
		if (e.e_ident[EI_CLASS] != ELFCLASS64 || e.e_shentsize < sizeof(Elf64_Shdr))
			return 0;
		if (e.e_shoff > n || (uint64_t)e.e_shnum * e.e_shentsize > n - e.e_shoff)
			return 0;
		for (unsigned i = 0; i < e.e_shnum; i++) {
			Elf64_Shdr sh;

			memcpy(&sh, p + e.e_shoff + (uint64_t)i * e.e_shentsize, sizeof(sh));
			if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > n || sh.sh_size > n - sh.sh_offset))
				return 0;
		}
		return 1;
	}
	case CU_JIT_INPUT_FATBINARY: {
		uint32_t magic;
		uint16_t hsize;
		uint64_t fsize;

		if (n < 16)
			return 0;
		memcpy(&magic, p, 4);
		memcpy(&hsize, p + 6, 2);
		memcpy(&fsize, p + 8, 8);
		return magic == 0xba55ed50u && hsize >= 16 && hsize <= n && fsize <= n - hsize;
	}
	case CU_JIT_INPUT_LIBRARY:
		return n >= 8 && !memcmp(p, "!<arch>\n", 8);
	case CU_JIT_INPUT_PTX:
	case CU_JIT_INPUT_NVVM:
		return 1; /* text, or NVVM IR the driver reads within the size given */
	default:
		return 0;
	}
}

/* ---- links ------------------------------------------------------------------------- */

static int live_links(struct vc_cu_session *x)
{
	int n = 0;

	for (uint32_t i = 0; i < x->nh; i++)
		n += x->h[i].live && x->h[i].kind == VC_H_CULINKSTATE;
	return n;
}

static void link_free(struct vc_cu_session *x, struct link *l)
{
	if (l->real)
		x->drv->cuLinkDestroy(l->real);
	jit_free(&l->jit);
	free(l);
}

static int link_get(struct vc_cu_session *x, uint64_t id, struct link **l)
{
	return vc_cu_lookup(x, VC_H_CULINKSTATE, id, (void **)l) || !*l ? CUDA_ERROR_INVALID_HANDLE : 0;
}

int vc_cu_manual_vcLinkCreate(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_link_create rq;
	struct link *l;
	uint64_t id = 0;
	int rc, r;

	TAKE(rq);
	if (!(l = calloc(1, sizeof(*l))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((rc = jit_take(&rq.jit, &l->jit)) < 0) {
		link_free(x, l);
		return rc;
	}
	if (rc == 0)
		rc = vc_cu_enter(x, rq.ctx);
	if (rc == 0 && live_links(x) >= MAX_LINKS)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == 0)
		rc = x->drv->cuLinkCreate_v2(l->jit.n, l->jit.opt, l->jit.val, &l->real);
	if (rc == 0 && (rc = vc_cu_publish(x, VC_H_CULINKSTATE, l, &id)) != 0)
		id = 0;
	r = jit_reply(&l->jit, rc, id, 0, out);
	if (id && r < 0)
		vc_cu_forget(x, VC_H_CULINKSTATE, id);
	if (!id || r < 0)
		link_free(x, l);
	return r;
}

int vc_cu_manual_vcLinkAdd(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_link_add rq;
	struct vc_cu_image *im;
	struct jitbuf in;
	struct link *l;
	int rc;

	TAKE(rq);
	if (rq.jit.n > VC_CU_JIT_MAX || !memchr(rq.name, 0, sizeof(rq.name)))
		return -VC_FATAL_PAYLOAD;
	im = image_find(x, rq.image);
	if (!im)
		return CUDA_ERROR_INVALID_HANDLE;
	/* The input is consumed whatever happens, as by a load. */
	if ((rc = link_get(x, rq.link, &l))) {
		image_drop(x, im);
		return rc;
	}
	if ((rc = jit_take(&rq.jit, &in)) < 0)
		goto out;
	if (rc == 0 && (rq.type < 0 || rq.type >= CU_JIT_NUM_INPUT_TYPES || !input_ok(im, rq.type)))
		rc = rq.type == CU_JIT_INPUT_CUBIN || rq.type == CU_JIT_INPUT_FATBINARY ? CUDA_ERROR_INVALID_IMAGE
										  : CUDA_ERROR_INVALID_VALUE;
	if (rc == 0 && (rc = vc_cu_enter(x, rq.ctx)) == 0)
		rc = x->drv->cuLinkAddData_v2(l->real, (CUjitInputType)rq.type, im->buf, im->size,
					      rq.name[0] ? rq.name : NULL, in.n, in.opt, in.val);
	/* The logs are the link's, wherever this input's options point. */
	rc = jit_reply(&l->jit, rc, rq.link, 0, out);
out:
	jit_free(&in);
	image_drop(x, im);
	return rc;
}

int vc_cu_manual_vcLinkComplete(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				struct vc_cu_out *out)
{
	struct vc_cu_req_link rq;
	struct link *l;
	void *img = NULL;
	size_t size = 0;
	int rc;

	TAKE(rq);
	if ((rc = link_get(x, rq.link, &l)))
		return rc;
	if ((rc = vc_cu_enter(x, rq.ctx)) == 0 && (rc = x->drv->cuLinkComplete(l->real, &img, &size)) == 0) {
		if (!img || !size || size > VC_CU_IMAGE_MAX)
			rc = CUDA_ERROR_INVALID_IMAGE;
		l->image = rc ? NULL : img;
		l->size = rc ? 0 : size;
	}
	return jit_reply(&l->jit, rc, rq.link, rc ? 0 : size, out);
}

int vc_cu_manual_vcLinkRead(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_link_read rq;
	struct link *l;
	int rc;

	TAKE(rq);
	if ((rc = link_get(x, rq.link, &l)))
		return rc;
	if (!l->image)
		return CUDA_ERROR_INVALID_VALUE; /* not complete */
	if (!(rq.len <= l->size && rq.offset <= l->size - rq.len) || !out->data || rq.len > out->data_cap)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(out->data, (const uint8_t *)l->image + rq.offset, rq.len);
	out->data_len = (uint32_t)rq.len;
	return 0;
}

int vc_cu_manual_vcLinkDestroy(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_link rq;
	struct link *l;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = link_get(x, rq.link, &l)))
		return rc;
	rc = x->drv->cuLinkDestroy(l->real);
	l->real = NULL;
	link_free(x, l);
	vc_cu_forget(x, VC_H_CULINKSTATE, rq.link);
	return rc;
}

int vc_cu_manual_vcLoadJit(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_req_load_jit rq;
	struct vc_cu_image *im;
	struct jitbuf b;
	uint64_t id = 0;
	int rc;

	TAKE(rq);
	if (rq.jit.n > VC_CU_JIT_MAX || (rq.kind != VC_CU_LOAD_MODULE && rq.kind != VC_CU_LOAD_LIBRARY))
		return -VC_FATAL_PAYLOAD;
	im = image_find(x, rq.image);
	if (!im)
		return CUDA_ERROR_INVALID_HANDLE;
	out->console = true; /* a module load flushes device printf */
	if ((rc = jit_take(&rq.jit, &b)) < 0)
		goto out;
	/* the image's own size fields against the bytes staged, as vcLoad does */
	if (rc == 0)
		rc = vc_cu_image_check(im->buf, im->size);
	if (rc == 0 && (rc = vc_cu_enter(x, rq.ctx)) == 0) {
		vc_cu_image_loading(x, im->buf, im->size);
		if (rq.kind == VC_CU_LOAD_MODULE) {
			CUmodule m = NULL;

			if ((rc = x->drv->cuModuleLoadDataEx(&m, im->buf, b.n, b.opt, b.val)) == 0)
				rc = vc_cu_publish_owned(x, VC_H_CUMODULE, m, &id);
		} else {
			CUlibrary lib = NULL;

			if ((rc = x->drv->cuLibraryLoadData(&lib, im->buf, b.opt, b.val, b.n, NULL, NULL, 0)) == 0)
				rc = vc_cu_publish(x, VC_H_CULIBRARY, lib, &id);
		}
	}
	rc = jit_reply(&b, rc, id, 0, out);
out:
	jit_free(&b);
	image_drop(x, im);
	return rc;
}

void vc_cu_link_fini(struct vc_cu_session *x)
{
	for (uint32_t i = 0; i < x->nh; i++)
		if (x->h[i].live && x->h[i].kind == VC_H_CULINKSTATE && x->h[i].real) {
			link_free(x, x->h[i].real);
			x->h[i].real = NULL;
		}
}
