/* SPDX-License-Identifier: MIT */
/*
 * vm_ram.h - a VM's RAM as its QEMU announced it (VC_VM_MEM frames, right
 * after HELLO): the memfds of its memory backends and where each range lies,
 * which the sessions' workers map to reach pages their guest process pinned
 * in place (shared/vc_gpin.h). Listener only.
 */
#ifndef VC_VM_RAM_H
#define VC_VM_RAM_H

#include <stddef.h>
#include <stdint.h>

#include "vc_vm.h"
#include "vcuda/server.h"

struct vc_vm_ram {
	struct vc_guest_ram r[VC_VM_MEM_MAX]; /* their descriptors are ours */
	uint32_t n;
};

/**
 * vc_vm_ram_add() - the range of MEM frame @m, with its descriptor @fd,
 * which is taken in every case. Returns 0 when it was added, 1 when it
 * cannot serve and was left out (a file that cannot be sealed against
 * shrinking: QEMU's RAM is then not a memfd), or -EPROTO for a frame no
 * QEMU sends (a range that vc_guest_ram_check() refuses beside the others,
 * one past its file, too many ranges); @why says which.
 */
int vc_vm_ram_add(struct vc_vm_ram *t, const struct vc_vm_msg *m, int fd, char *why, size_t whylen);

/** vc_vm_ram_clear() - close every range's descriptor; none is left. */
void vc_vm_ram_clear(struct vc_vm_ram *t);

#endif /* VC_VM_RAM_H */
