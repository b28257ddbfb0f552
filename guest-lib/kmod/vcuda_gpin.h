/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * vcuda_gpin.h - the guest-pin area: the last VC_GPIN_AREA_SIZE bytes of a
 * session's slot, shared by this driver and the session's worker on the host
 * and never mapped into a process. vcuda's shared/vc_gpin.h is the origin
 * and says how an entry lives; tools/check_copies.py keeps the two equal.
 */
#ifndef _VCUDA_GPIN_H
#define _VCUDA_GPIN_H

#include <linux/build_bug.h>
#include <linux/types.h>

#define VC_GPIN_MAGIC 0x4e495047u /* "GPIN" */
#define VC_GPIN_VERSION 1u
#define VC_GPIN_AREA_SIZE 65536u
#define VC_GPIN_ENTRIES 512u
#define VC_GPIN_HEAD_OFF 0u
#define VC_GPIN_ENTRIES_OFF 4096u
#define VC_GPIN_RELEASED_OFF 36864u /* VC_GPIN_ENTRIES_OFF + 64 * VC_GPIN_ENTRIES */
#define VC_GPIN_PAGE_RUNS 255u
#define VC_GPIN_RUNS_MAX 65536u

#define VC_GPIN_F_RAM 0x1u

#define VC_GPIN_E_WRITE 0x1u

struct vc_gpin_head {
	__u32 magic;
	__u32 version;
	__u32 entries;
	__u32 flags;
	__u64 reserved[6];
};
static_assert(sizeof(struct vc_gpin_head) == 64, "vc_gpin_head is ABI");

struct vc_gpin_entry {
	__u64 gen;
	__u64 addr;
	__u64 len;
	__u64 list;
	__u32 runs;
	__u32 flags;
	__u64 reserved[3];
};
static_assert(sizeof(struct vc_gpin_entry) == 64, "vc_gpin_entry is ABI");

struct vc_gpin_run {
	__u64 gpa;
	__u64 len;
};
static_assert(sizeof(struct vc_gpin_run) == 16, "vc_gpin_run is ABI");

struct vc_gpin_page {
	__u64 next;
	__u32 count;
	__u32 reserved;
	struct vc_gpin_run run[VC_GPIN_PAGE_RUNS];
};
static_assert(sizeof(struct vc_gpin_page) == 4096, "vc_gpin_page is ABI");
static_assert(VC_GPIN_RELEASED_OFF == VC_GPIN_ENTRIES_OFF + 64 * VC_GPIN_ENTRIES, "vc_gpin area is ABI");
static_assert(VC_GPIN_RELEASED_OFF + 8 * VC_GPIN_ENTRIES <= VC_GPIN_AREA_SIZE, "vc_gpin area is ABI");

#endif /* _VCUDA_GPIN_H */
