/* SPDX-License-Identifier: MIT */
/*
 * vc_gpin.h - page-locked memory of a VM's guest process, in place: the
 * guest-pin area that the guest's vcuda.ko and the session's worker share.
 *
 * In a VM, cuMemHostRegister and page-locked allocations beyond the
 * session's pinned pool stay in the guest process's own pages. vcuda.ko pins
 * them (pin_user_pages, FOLL_LONGTERM) and lists their guest-physical runs;
 * the worker, which holds the guest's RAM (the memfds of QEMU's memory
 * backends, passed on the VM link as VC_VM_MEM frames: vc_vm.h), maps the
 * same pages at the process's address and registers them with its driver.
 * Copies from and to them are DMA, and no byte is copied to get there.
 *
 * The list must not come from the process: one that named guest-physical
 * pages of its choosing could reach any memory of its guest through the
 * GPU. So it goes through the last VC_GPIN_AREA_SIZE bytes of the session's
 * slot, which the host leaves out of the session region (worker_vm.c fits
 * the layout before it) and which vcuda.ko never maps into a process: only
 * the guest's kernel and the worker see them. A process names a pin by its
 * entry and generation alone; the kernel wrote what the entry says.
 *
 * The area (offsets from its start, in the session's slot):
 *   VC_GPIN_HEAD_OFF      struct vc_gpin_head                 host, at open
 *   VC_GPIN_ENTRIES_OFF   struct vc_gpin_entry[VC_GPIN_ENTRIES]  guest kernel
 *   VC_GPIN_RELEASED_OFF  uint64_t released[VC_GPIN_ENTRIES]    host
 *
 * An entry's life; gen is the kernel's number for one use of an entry, never
 * 0 and never used twice in a session:
 *  - the kernel pins the pages, writes their runs into pages of its own
 *    (struct vc_gpin_page, chained), fills the entry and publishes its gen
 *    last (release); the process asks the worker to map (entry, gen) at its
 *    address (vcPinnedSegment, VC_CU_PINSEG_MAP_GUEST);
 *  - the worker loads gen (acquire), copies the entry and the list out of
 *    guest memory, checks them against the guest's RAM and maps them. It
 *    maps an (entry, gen) at most once and never after letting it go; when
 *    it lets go (the segment unmapped, or a MAP naming it that failed while
 *    no mapping of it lives) it stores gen into released[entry] (release);
 *  - the kernel unpins the pages when released[entry] equals gen (acquire),
 *    or once the session has ended on the host (the device answered CLOSE,
 *    which it does only after the session's worker is gone).
 *
 * Both sides are little-endian x86-64 (vc_wire.h); the kernel's copy of
 * these definitions is guest-lib/kmod/vcuda_gpin.h (tools/check_copies.py
 * compares them).
 */
#ifndef VC_GPIN_H
#define VC_GPIN_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define VC_GPIN_MAGIC 0x4e495047u /* "GPIN" */
#define VC_GPIN_VERSION 1u
#define VC_GPIN_AREA_SIZE 65536u
#define VC_GPIN_ENTRIES 512u
#define VC_GPIN_HEAD_OFF 0u
#define VC_GPIN_ENTRIES_OFF 4096u
#define VC_GPIN_RELEASED_OFF 36864u /* VC_GPIN_ENTRIES_OFF + 64 * VC_GPIN_ENTRIES */
#define VC_GPIN_PAGE_RUNS 255u
/* The most runs one pin may have: the worker maps each run apart. */
#define VC_GPIN_RUNS_MAX 65536u

/* vc_gpin_head.flags */
#define VC_GPIN_F_RAM 0x1u /* the worker holds the guest's RAM: pins can be mapped */

/* vc_gpin_entry.flags */
#define VC_GPIN_E_WRITE 0x1u /* pinned for writing (the device may write them) */

struct vc_gpin_head {
	uint32_t magic;    /* VC_GPIN_MAGIC */
	uint32_t version;  /* VC_GPIN_VERSION */
	uint32_t entries;  /* VC_GPIN_ENTRIES */
	uint32_t flags;    /* VC_GPIN_F_* */
	uint64_t reserved[6];
};
static_assert(sizeof(struct vc_gpin_head) == 64, "vc_gpin_head is ABI");

struct vc_gpin_entry {
	uint64_t gen;      /* published last; 0: not in use */
	uint64_t addr;     /* the process's address of the first page */
	uint64_t len;      /* bytes, a multiple of 4096 */
	uint64_t list;     /* guest-physical address of the first vc_gpin_page */
	uint32_t runs;     /* runs in the list, 1..VC_GPIN_RUNS_MAX */
	uint32_t flags;    /* VC_GPIN_E_* */
	uint64_t reserved[3];
};
static_assert(sizeof(struct vc_gpin_entry) == 64, "vc_gpin_entry is ABI");

struct vc_gpin_run {
	uint64_t gpa;      /* guest-physical, 4096-aligned */
	uint64_t len;      /* bytes, a multiple of 4096 */
};
static_assert(sizeof(struct vc_gpin_run) == 16, "vc_gpin_run is ABI");

/* A page of a pin's run list, in guest memory the kernel owns. */
struct vc_gpin_page {
	uint64_t next;     /* guest-physical address of the next page; 0: the last */
	uint32_t count;    /* runs in this page, 1..VC_GPIN_PAGE_RUNS */
	uint32_t reserved;
	struct vc_gpin_run run[VC_GPIN_PAGE_RUNS];
};
static_assert(sizeof(struct vc_gpin_page) == 4096, "vc_gpin_page is ABI");
static_assert(VC_GPIN_RELEASED_OFF == VC_GPIN_ENTRIES_OFF + 64 * VC_GPIN_ENTRIES, "vc_gpin area is ABI");
static_assert(VC_GPIN_RELEASED_OFF + 8 * VC_GPIN_ENTRIES <= VC_GPIN_AREA_SIZE, "vc_gpin area is ABI");

#ifndef __KERNEL__
/**
 * vc_gpin_host_init() - write the head of a new session's area at @area
 * (its VC_GPIN_AREA_SIZE bytes zero, as the worker found its slot); @flags
 * VC_GPIN_F_RAM when pins can be mapped.
 */
void vc_gpin_host_init(void *area, uint32_t flags);

/**
 * vc_gpin_host_entry() - a copy of entry @i (below VC_GPIN_ENTRIES) in *@out,
 * its gen loaded first, with acquire: the rest is what the kernel wrote
 * before it published that gen. The caller checks every field.
 */
void vc_gpin_host_entry(const void *area, uint32_t i, struct vc_gpin_entry *out);

/** vc_gpin_host_release() - tell the kernel that entry @i's pin @gen is let go. */
void vc_gpin_host_release(void *area, uint32_t i, uint64_t gen);
#endif

#endif /* VC_GPIN_H */
