/* SPDX-License-Identifier: MIT */
/*
 * module.c - loading modules and libraries. The driver API passes images as
 * bare pointers; the guest works out each image's size from its format
 * (fatbin wrapper, fatbin, ELF cubin, PTX text), stages the bytes on the host
 * (inline when small, through the arena otherwise) and loads them there. The
 * host loads the same bytes: the driver accepts raw fatbins, including
 * compressed PTX it JIT-compiles. A fatbin goes without the code none of the
 * session's devices can run (fatbin.c; VCUDA_FATBIN_TRIM=0 sends it whole).
 */
#include <elf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fatbin.h"
#include "vc_client.h"
#include "vc_cu_guest.h"

#define FATBINC_MAGIC 0x466243b1u /* __fatBinC_Wrapper_t */
#define FATBIN_MAGIC VC_CU_FATBIN_MAGIC
#define INLINE_IMAGE_MAX (32u << 10)

struct fatbinc_wrapper {
	int magic;
	int version;
	const void *data; /* the fatbin */
	void *filename_or_fatbins;
};

struct fatbin_header {
	uint32_t magic;
	uint16_t version;
	uint16_t header_size;
	uint64_t fat_size; /* bytes after the header */
};

/* The image at @img: where its bytes start and how many there are. */
static CUresult image_extent(const void *img, const void **start, uint64_t *size)
{
	uint32_t magic;

	if (!img)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&magic, img, sizeof(magic));
	if (magic == FATBINC_MAGIC) {
		const struct fatbinc_wrapper *w = img;

		/* The wrapper holds a pointer: send what it points to. */
		return image_extent(w->data, start, size);
	}
	if (magic == FATBIN_MAGIC) {
		struct fatbin_header h;

		memcpy(&h, img, sizeof(h));
		/* fat_size is the image's own claim: no wrap-around to a small size */
		if (h.header_size < sizeof(h) || h.fat_size > VC_CU_IMAGE_MAX - h.header_size)
			return CUDA_ERROR_INVALID_IMAGE;
		*start = img;
		*size = (uint64_t)h.header_size + h.fat_size;
		return CUDA_SUCCESS;
	}
	if (!memcmp(img, ELFMAG, SELFMAG)) {
		Elf64_Ehdr e;
		uint64_t end;

		memcpy(&e, img, sizeof(e));
		if (e.e_ident[EI_CLASS] != ELFCLASS64)
			return CUDA_ERROR_INVALID_IMAGE;
		/* Each claim is checked before it is added or read: offsets and
		 * sizes are the image's own, and no sum may wrap. (The tables
		 * are 16-bit counts of 16-bit sizes: at most 4 GiB each.) */
		if (e.e_shoff > VC_CU_IMAGE_MAX || e.e_phoff > VC_CU_IMAGE_MAX)
			return CUDA_ERROR_INVALID_IMAGE;
		/* Section headers come last in cubins; take the farthest extent. */
		end = e.e_shoff + (uint64_t)e.e_shnum * e.e_shentsize;
		if (e.e_phoff + (uint64_t)e.e_phnum * e.e_phentsize > end)
			end = e.e_phoff + (uint64_t)e.e_phnum * e.e_phentsize;
		if (end > VC_CU_IMAGE_MAX || (e.e_shnum && e.e_shentsize < sizeof(Elf64_Shdr)))
			return CUDA_ERROR_INVALID_IMAGE;
		for (unsigned i = 0; i < e.e_shnum; i++) {
			Elf64_Shdr sh;

			memcpy(&sh, (const uint8_t *)img + e.e_shoff + (uint64_t)i * e.e_shentsize, sizeof(sh));
			if (sh.sh_type == SHT_NOBITS)
				continue;
			if (sh.sh_offset > VC_CU_IMAGE_MAX || sh.sh_size > VC_CU_IMAGE_MAX - sh.sh_offset)
				return CUDA_ERROR_INVALID_IMAGE;
			if (sh.sh_offset + sh.sh_size > end)
				end = sh.sh_offset + sh.sh_size;
		}
		*start = img;
		*size = end;
		return end > VC_CU_IMAGE_MAX ? CUDA_ERROR_INVALID_IMAGE : CUDA_SUCCESS;
	}
	/* PTX (or anything else the driver may read as text): NUL-terminated. */
	*start = img;
	*size = strnlen(img, VC_CU_IMAGE_MAX) + 1;
	return *size > VC_CU_IMAGE_MAX ? CUDA_ERROR_INVALID_IMAGE : CUDA_SUCCESS;
}

struct put_arg {
	uint64_t image;
	uint64_t ctx;
};

static int emit_piece(struct vc_client *c, void *arg, uint64_t off, uint64_t n, uint64_t aoff,
		      uint64_t *seq)
{
	const struct put_arg *a = arg;
	struct vc_cu_req_vcImagePut rq = {.ctx = a->ctx, .image = a->image, .offset = off, .len = n,
					  .arena_off = aoff};

	return vc_client_submit(c, VC_CU_vcImagePut, &rq, sizeof(rq), NULL, 0, 0, seq);
}

static int g_trim = 1;
static pthread_once_t g_trim_once = PTHREAD_ONCE_INIT;

static void trim_setting(void)
{
	const char *v = getenv("VCUDA_FATBIN_TRIM");

	g_trim = !(v && !strcmp(v, "0"));
}

/* A copy of fatbin @img (@size bytes) for the session's devices, or NULL
 * to send it whole (fatbin.h). */
static void *trimmed(const void *img, uint64_t size, uint64_t *tsize)
{
	struct vc_cu_state *st = vc_cu_state();
	uint32_t majors = 0;
	unsigned max_arch = 0;

	pthread_once(&g_trim_once, trim_setting);
	if (!g_trim || !st)
		return NULL;
	for (int d = 0; d < st->device_count; d++) {
		const struct vc_cu_device_info *i = &st->dev[d].info;
		int ma, mi;

		if (i->attr_count <= CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
			return NULL;
		ma = i->attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
		mi = i->attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
		if (ma < 1 || ma > 31 || mi < 0 || mi > 9)
			return NULL; /* an architecture this does not know: all of it */
		majors |= 1u << ma;
		if ((unsigned)(ma * 10 + mi) > max_arch)
			max_arch = (unsigned)(ma * 10 + mi);
	}
	return vc_cu_fatbin_trim(img, size, majors, max_arch, tsize);
}

/* Stage the image on the host; its id in *@image. */
static CUresult upload(const void *img, uint64_t *image)
{
	const void *start;
	uint64_t size, tsize = 0;
	uint32_t magic;
	void *t = NULL;
	CUresult rc;

	if ((rc = image_extent(img, &start, &size)))
		return rc;
	if (size >= sizeof(magic)) {
		memcpy(&magic, start, sizeof(magic));
		if (magic == FATBIN_MAGIC)
			t = trimmed(start, size, &tsize);
	}
	rc = vc_cu_image_stage(t ? t : start, t ? tsize : size, image);
	free(t);
	return rc;
}

CUresult vc_cu_image_stage(const void *img, uint64_t size, uint64_t *image)
{
	struct vc_cu_req_vcImageBegin bq;
	struct vc_cu_rep_vcImageBegin bp;
	const void *start = img;
	CUresult rc;

	if (!size && (rc = image_extent(img, &start, &size)))
		return rc;
	if (size > VC_CU_IMAGE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	bq.size = size;
	if ((rc = vc_cu_call(VC_CU_vcImageBegin, &bq, sizeof(bq), NULL, 0, &bp, sizeof(bp), NULL, 0, 0)))
		return rc;
	*image = bp.image;
	if (size <= INLINE_IMAGE_MAX) {
		struct vc_cu_req_vcImagePut pq = {.image = bp.image, .len = size, .inline_data = 1};

		return vc_cu_submit(VC_CU_vcImagePut, &pq, sizeof(pq), start, size);
	}
	struct put_arg a = {.image = bp.image, .ctx = vc_cu_current()};
	int r = vc_client_put(vc_cu_state()->client, start, size, emit_piece, &a, VC_CLIENT_PUT_ASYNC);

	return r < 0 ? vc_cu_error(r) : (CUresult)r;
}

static CUresult load(const void *img, uint32_t kind, uint64_t *handle)
{
	struct vc_cu_req_load rq = {.kind = kind};
	struct vc_cu_rep_load rp;
	CUresult rc;

	if (!vc_cu_state())
		return CUDA_ERROR_NOT_INITIALIZED;
	if ((rc = upload(img, &rq.image)))
		return rc;
	/* The load follows the pieces in the ring, so it sees the whole image. */
	rc = vc_cu_call(VC_CU_vcLoad, &rq, sizeof(rq), NULL, 0, &rp, sizeof(rp), NULL, 0, 0);
	if (rc == CUDA_SUCCESS)
		*handle = rp.handle;
	return rc;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	uint64_t h;
	CUresult rc;

	if (!module)
		return CUDA_ERROR_INVALID_VALUE;
	rc = load(image, VC_CU_LOAD_MODULE, &h);
	if (rc == CUDA_SUCCESS)
		*module = (CUmodule)(uintptr_t)h;
	return rc;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
				    CUjit_option *options, void **optionValues)
{
	/* JIT options (log buffers, optimisation level...) travel with the load (link.c). */
	if (numOptions && module) {
		uint64_t h;
		CUresult rc = vc_cu_load_jit(VC_CU_LOAD_MODULE, image, options, optionValues, numOptions, &h);

		if (rc == CUDA_SUCCESS)
			*module = (CUmodule)(uintptr_t)h;
		return rc;
	}
	return cuModuleLoadData(module, image);
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	return cuModuleLoadData(module, fatCubin);
}

CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
				   void **jitOptionsValues, unsigned int numJitOptions,
				   CUlibraryOption *libraryOptions, void **libraryOptionValues,
				   unsigned int numLibraryOptions)
{
	uint64_t h;
	CUresult rc;

	(void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
	if (!library)
		return CUDA_ERROR_INVALID_VALUE;
	if (numJitOptions) /* JIT options travel with the load (link.c) */
		rc = vc_cu_load_jit(VC_CU_LOAD_LIBRARY, code, jitOptions, jitOptionsValues, numJitOptions, &h);
	else
		rc = load(code, VC_CU_LOAD_LIBRARY, &h);
	if (rc == CUDA_SUCCESS)
		*library = (CUlibrary)(uintptr_t)h;
	return rc;
}
