/* SPDX-License-Identifier: MIT */
/*
 * image.c - an image's own size claims, checked against the bytes staged
 * before the driver sees it. The driver parses fatbins and ELF cubins by
 * their headers and PTX up to its NUL; a guest that stages fewer bytes than
 * its headers claim would have the driver read past the staged buffer. So
 * every claim is checked here, in the form `len <= size && off <= size -
 * len`: a fatbin's header and each entry's header and payload, an ELF's
 * header, program and section header tables, and every section and segment
 * with bytes in the file; PTX must end with a NUL within the staged bytes.
 * A __fatBinC_Wrapper_t holds a pointer into the guest's memory and is
 * never an image on the host. Anything else is refused with
 * CUDA_ERROR_INVALID_IMAGE, as the driver refuses an image it cannot read.
 */
#include <elf.h>
#include <string.h>

#include "cuda/exec_priv.h"

#define FATBINC_MAGIC 0x466243b1u /* __fatBinC_Wrapper_t: a pointer, not bytes */
#define FATBIN_MAGIC 0xba55ed50u

/* The fatbin header (16 bytes) and the part of an entry's header every
 * version has: kind, version, header size, payload size. */
struct fatbin_header {
	uint32_t magic;
	uint16_t version;
	uint16_t header_size;
	uint64_t fat_size;
};

struct fatbin_entry {
	uint16_t kind;
	uint16_t version;
	uint32_t header_size;
	uint64_t size;
};

static bool within(uint64_t off, uint64_t len, uint64_t size)
{
	return len <= size && off <= size - len;
}

static int check_fatbin(const uint8_t *p, uint64_t size)
{
	struct fatbin_header h;
	uint64_t off, end;

	if (size < sizeof(h))
		return CUDA_ERROR_INVALID_IMAGE;
	memcpy(&h, p, sizeof(h));
	if (h.header_size < sizeof(h) || !within(h.header_size, h.fat_size, size))
		return CUDA_ERROR_INVALID_IMAGE;
	end = h.header_size + h.fat_size;
	/* Entries tile the payload: each a header and its bytes. */
	for (off = h.header_size; end - off >= sizeof(struct fatbin_entry);) {
		struct fatbin_entry e;

		memcpy(&e, p + off, sizeof(e));
		if (e.header_size < sizeof(e) || !within(off, e.header_size, end) ||
		    !within(off + e.header_size, e.size, end))
			return CUDA_ERROR_INVALID_IMAGE;
		off += e.header_size + e.size;
	}
	return 0;
}

/* A table of @n entries of @entsize bytes (at least @min) at @off. */
static bool table_ok(uint64_t off, uint64_t n, uint64_t entsize, uint64_t min, uint64_t size)
{
	if (n == 0)
		return true;
	if (entsize < min || n > size / entsize)
		return false;
	return within(off, n * entsize, size);
}

static int check_elf(const uint8_t *p, uint64_t size)
{
	Elf64_Ehdr e;
	uint64_t shnum;

	if (size < sizeof(e))
		return CUDA_ERROR_INVALID_IMAGE;
	memcpy(&e, p, sizeof(e));
	if (e.e_ident[EI_CLASS] != ELFCLASS64 || e.e_ehsize < sizeof(e))
		return CUDA_ERROR_INVALID_IMAGE;
	if (!table_ok(e.e_phoff, e.e_phnum, e.e_phentsize, sizeof(Elf64_Phdr), size))
		return CUDA_ERROR_INVALID_IMAGE;
	shnum = e.e_shnum;
	if (shnum == 0 && e.e_shoff) {
		/* Extended numbering: the count is section 0's sh_size. */
		Elf64_Shdr s0;

		if (!table_ok(e.e_shoff, 1, e.e_shentsize, sizeof(Elf64_Shdr), size))
			return CUDA_ERROR_INVALID_IMAGE;
		memcpy(&s0, p + e.e_shoff, sizeof(s0));
		shnum = s0.sh_size;
	}
	if (!table_ok(e.e_shoff, shnum, e.e_shentsize, sizeof(Elf64_Shdr), size))
		return CUDA_ERROR_INVALID_IMAGE;
	if (e.e_shstrndx != SHN_UNDEF && e.e_shstrndx != SHN_XINDEX && e.e_shstrndx >= shnum)
		return CUDA_ERROR_INVALID_IMAGE;
	for (uint64_t i = 0; i < e.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, p + e.e_phoff + i * e.e_phentsize, sizeof(ph));
		if (!within(ph.p_offset, ph.p_filesz, size))
			return CUDA_ERROR_INVALID_IMAGE;
	}
	for (uint64_t i = 0; i < shnum; i++) {
		Elf64_Shdr sh;

		memcpy(&sh, p + e.e_shoff + i * e.e_shentsize, sizeof(sh));
		if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL && !within(sh.sh_offset, sh.sh_size, size))
			return CUDA_ERROR_INVALID_IMAGE;
	}
	return 0;
}

int vc_cu_image_check(const uint8_t *p, uint64_t size)
{
	uint32_t magic;

	if (size < sizeof(magic))
		return p && size && memchr(p, 0, size) ? 0 : CUDA_ERROR_INVALID_IMAGE;
	memcpy(&magic, p, sizeof(magic));
	if (magic == FATBINC_MAGIC)
		return CUDA_ERROR_INVALID_IMAGE;
	if (magic == FATBIN_MAGIC)
		return check_fatbin(p, size);
	if (!memcmp(p, ELFMAG, SELFMAG))
		return check_elf(p, size);
	/* PTX, or anything else the driver reads as text: up to its NUL. */
	return memchr(p, 0, size) ? 0 : CUDA_ERROR_INVALID_IMAGE;
}
