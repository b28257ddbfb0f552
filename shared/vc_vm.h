/* SPDX-License-Identifier: MIT */
/*
 * vc_vm.h - the link between QEMU's virtio-vcuda-pci device and the VM's
 * vcuda-server: fixed-size frames over a unix stream socket (QEMU's
 * -chardev socket, served by vcuda-server --vm-socket).
 *
 * QEMU's copy of these definitions is in include/hw/virtio/virtio-vcuda.h
 * (qemu-patches/); the two must stay identical, which tools/check_copies.py
 * (a make check step) verifies. docs/VM.md explains the
 * exchange:
 *
 *   QEMU -> server  HELLO  + [memfd of the sessions region]   once per connection
 *   QEMU -> server  MEM    + [memfd of guest RAM]             one per RAM range, right
 *                                                              after HELLO (none when
 *                                                              the RAM is not shareable)
 *   server -> QEMU  WELCOME (status, message)
 *   QEMU -> server  OPEN   + [doorbell eventfd, completion eventfd]
 *   server -> QEMU  OPENED (status, session id, bytes used, message)
 *   QEMU -> server  CLOSE
 *   server -> QEMU  CLOSED                                     once the session's
 *                                                              process is gone
 *   server -> QEMU  LOST   (the session's process ended by itself)
 *
 * Replies carry the slot they answer; OPENED may arrive out of order.
 */
#ifndef VC_VM_H
#define VC_VM_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define VC_VM_MAGIC 0x4d564356u /* "VCVM" */
#define VC_VM_VERSION 2u /* 2: MEM frames, mem_off */
#define VC_VM_MAX_SESSIONS 256u
#define VC_VM_FRAME 256u
#define VC_VM_MEM_MAX 16u /* RAM ranges a VM may announce */

enum vc_vm_type {
	VC_VM_HELLO = 1,   /* QEMU: region_size = memfd size, max_sessions, name; fd: memfd */
	VC_VM_WELCOME = 2, /* server: status, message */
	VC_VM_OPEN = 3,    /* QEMU: slot, region_off, region_size, pid, uid, comm; fds: doorbell, completion */
	VC_VM_OPENED = 4,  /* server: slot, status, session_id, region_size used, message */
	VC_VM_CLOSE = 5,   /* QEMU: slot */
	VC_VM_CLOSED = 6,  /* server: slot */
	VC_VM_LOST = 7,    /* server: slot, status (reason), message */
	VC_VM_MEM = 8,     /* QEMU: slot = range index, region_off = guest-physical start,
			    * region_size = bytes, mem_off = where they start in the fd;
			    * fd: the RAM's memfd (vc_gpin.h says what it is for) */
};

struct vc_vm_msg {
	uint32_t magic;
	uint32_t type;        /* enum vc_vm_type */
	uint32_t version;     /* VC_VM_VERSION */
	uint32_t slot;
	uint64_t region_off;
	uint64_t region_size;
	uint32_t max_sessions;
	uint32_t pid;
	uint32_t uid;
	int32_t status;       /* 0 or -errno */
	uint32_t session_id;
	uint32_t reserved;
	char comm[16];
	char name[64];        /* HELLO: the VM's name, for logs and management */
	uint64_t mem_off;     /* MEM: offset in the fd of region_off's first byte */
	char message[112];    /* NUL terminated */
};
static_assert(sizeof(struct vc_vm_msg) == VC_VM_FRAME, "vc_vm_msg is ABI");
static_assert(offsetof(struct vc_vm_msg, comm) == 56, "vc_vm_msg is ABI");
static_assert(offsetof(struct vc_vm_msg, mem_off) == 136, "vc_vm_msg is ABI");
static_assert(offsetof(struct vc_vm_msg, message) == 144, "vc_vm_msg is ABI");

/**
 * vc_vm_msg_decode() - check a frame received from the peer: magic, version,
 * a known @type in @allowed (a bit per enum vc_vm_type), slot below
 * VC_VM_MAX_SESSIONS; strings NUL terminated in the copy. @raw is copied
 * first, so it may be shared or hostile.
 * Returns 0, or -EPROTO with a reason in @why.
 */
int vc_vm_msg_decode(const void *raw, struct vc_vm_msg *out, uint32_t allowed, char *why, size_t whylen);

/** vc_vm_msg_init() - a frame of @type with magic and version filled in. */
void vc_vm_msg_init(struct vc_vm_msg *m, uint32_t type, uint32_t slot);

/** vc_vm_send() - write one frame with @nfds descriptors (blocking). 0 or -errno. */
int vc_vm_send(int sock, const struct vc_vm_msg *m, const int *fds, int nfds);

/* Frames arriving on a stream socket, possibly in pieces. */
struct vc_vm_rx {
	uint8_t buf[VC_VM_FRAME];
	size_t have;
	int fds[4];
	int nfds;
};

/** vc_vm_rx_init() - an empty receive buffer. */
void vc_vm_rx_init(struct vc_vm_rx *rx);

/**
 * vc_vm_rx_read() - read what is available without blocking. Returns 1 when
 * a whole frame is in @rx->buf (its descriptors in @rx->fds; the caller takes
 * them and calls vc_vm_rx_init() before the next read), 0 when more is
 * needed, -ECONNRESET when the peer closed, -EPROTO when descriptors came
 * with a frame other than the first piece or too many came, or -errno.
 */
int vc_vm_rx_read(int sock, struct vc_vm_rx *rx);

/** vc_vm_rx_drop() - close descriptors still held by @rx and empty it. */
void vc_vm_rx_drop(struct vc_vm_rx *rx);

#endif /* VC_VM_H */
