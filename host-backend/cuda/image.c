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
 *
 * Whether an image may print (vc_cu_image_may_print()) is read from the same
 * structure: code that calls printf or assert names vprintf or __assertfail
 * (a cubin's string table, PTX's text); an entry compressed with zstd is
 * read decompressed (unzstd.c), and one compressed otherwise, or of a kind
 * not known here, is taken to print.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/exec_priv.h"
#include "cuda/unzstd.h"

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

/* Walk the entries of the fatbin at @p, each size claim checked (for
 * vc_cu_image_may_print() again: no trust), calling @fn on each until one
 * answers true. Returns true where one did or the fatbin is malformed, else
 * false. */
static bool each_entry(const uint8_t *p, uint64_t size, bool (*fn)(const uint8_t *e, const struct fatbin_entry *fe,
								   uint32_t arch),
		       uint32_t arch)
{
	struct fatbin_header h;
	uint64_t off, end;

	if (size < sizeof(h))
		return true;
	memcpy(&h, p, sizeof(h));
	if (h.header_size < sizeof(h) || !within(h.header_size, h.fat_size, size))
		return true;
	end = h.header_size + h.fat_size;
	for (off = h.header_size; end - off >= sizeof(struct fatbin_entry);) {
		struct fatbin_entry e;

		memcpy(&e, p + off, sizeof(e));
		if (e.header_size < sizeof(e) || !within(off, e.header_size, end) ||
		    !within(off + e.header_size, e.size, end))
			return true;
		if (fn(p + off, &e, arch))
			return true;
		off += e.header_size + e.size;
	}
	return false;
}

static bool never(const uint8_t *e, const struct fatbin_entry *fe, uint32_t arch)
{
	(void)e;
	(void)fe;
	(void)arch;
	return false;
}

/* The header's claim, then each entry's header and payload: entries tile
 * the payload. */
static int check_fatbin(const uint8_t *p, uint64_t size)
{
	return each_entry(p, size, never, 0) ? CUDA_ERROR_INVALID_IMAGE : 0;
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

/* The names that code writing to the device's printf buffer calls. */
static bool names_output(const uint8_t *p, uint64_t n)
{
	static const char *const names[] = {"vprintf", "__assertfail"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (memmem(p, n, names[i], strlen(names[i])))
			return true;
	return false;
}

/* Text (PTX) by its first bytes: printable ASCII and white space up to a
 * NUL or 64 bytes. Compressed bytes fail this at once. */
static bool looks_like_text(const uint8_t *p, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n && i < 64 && p[i]; i++)
		if (!((p[i] >= 0x20 && p[i] < 0x7f) || p[i] == '\n' || p[i] == '\t' || p[i] == '\r'))
			return false;
	return i > 0;
}

/* Code that can be read as it is: an ELF or PTX. */
static bool readable(const uint8_t *p, uint64_t n)
{
	return (n >= SELFMAG && !memcmp(p, ELFMAG, SELFMAG)) || looks_like_text(p, n);
}

/* One piece of code: an ELF or PTX is read, compressed with zstd (as nvcc
 * 13 writes fatbin entries) read once decompressed, anything else may
 * print. */
static bool code_may_print(const uint8_t *p, uint64_t n)
{
	uint8_t *d;
	uint64_t dn;
	bool r;

	if (readable(p, n))
		return names_output(p, n);
	if (!vc_cu_is_zstd(p, n) || vc_cu_unzstd(p, n, &d, &dn))
		return true;
	/* Once: a frame inside the frame (not readable) is not opened again. */
	r = !readable(d, dn) || names_output(d, dn);
	free(d);
	return r;
}

/* The architecture of the fatbin entry at @e (major * 10 + minor, at
 * byte 28 of its header), or 0 where its header is too short to say. */
static uint32_t entry_arch(const uint8_t *e, uint32_t header_size)
{
	uint32_t arch;

	if (header_size < 32)
		return 0;
	memcpy(&arch, e + 28, sizeof(arch));
	return arch;
}

/* A cubin for exactly @arch: the entry the driver loads on such a device. */
static bool is_exact_cubin(const uint8_t *e, const struct fatbin_entry *fe, uint32_t arch)
{
	return fe->kind == 2 && arch && entry_arch(e, fe->header_size) == arch;
}

/* Where an exact cubin exists (@arch non-zero), only those; else every
 * entry, PTX included, since the driver may compile it. */
static bool entry_may_print(const uint8_t *e, const struct fatbin_entry *fe, uint32_t arch)
{
	if (arch && !is_exact_cubin(e, fe, arch))
		return false;
	return fe->size && code_may_print(e + fe->header_size, fe->size);
}

bool vc_cu_image_may_print(const uint8_t *p, uint64_t size, uint32_t arch)
{
	uint32_t magic;

	if (!p || size < sizeof(magic))
		return true;
	memcpy(&magic, p, sizeof(magic));
	if (magic != FATBIN_MAGIC)
		return code_may_print(p, size);
	/* With a cubin for the device's own architecture the driver loads
	 * that (not the PTX beside it, which nvcc compresses): only those
	 * count. A malformed fatbin answers true either way. */
	if (arch && each_entry(p, size, is_exact_cubin, arch))
		return each_entry(p, size, entry_may_print, arch);
	return each_entry(p, size, entry_may_print, 0);
}
