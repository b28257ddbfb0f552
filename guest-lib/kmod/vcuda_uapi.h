/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * vcuda_uapi.h - what the guest's vcuda.ko offers user space on /dev/vcudaN.
 *
 * Each open file is one session. The guest's libcuda.so.1 opens the device,
 * asks for a session with VCUDA_IOC_OPEN, maps the session's region (offset
 * 0) and its doorbell page (offset VCUDA_MMAP_DOORBELL), and sleeps for
 * completions with VCUDA_IOC_WAIT. Closing the file (or the process ending)
 * ends the session on the host. No privilege is needed. Page-locked memory
 * is pinned in place with VCUDA_IOC_PIN where the host supports it.
 */
#ifndef _UAPI_VCUDA_H
#define _UAPI_VCUDA_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define VCUDA_UAPI_VERSION 1

/* mmap offsets: the session region (or any page range of it, at its offset
 * in the region), then the doorbell page */
#define VCUDA_MMAP_REGION 0ULL
#define VCUDA_MMAP_DOORBELL (1ULL << 40)

struct vcuda_open_args {
	__u32 version;      /* in: VCUDA_UAPI_VERSION */
	__s32 status;       /* out: 0, or a negative errno value with a message */
	__u32 slot;         /* out: the device slot (doorbell) of the session */
	__u32 session_id;   /* out: the server's number for it (logs) */
	__u64 region_size;  /* out: bytes to map at VCUDA_MMAP_REGION */
	__u32 server_gen;   /* out */
	__u32 reserved;
	char message[136];  /* out: why it failed, NUL terminated */
};

struct vcuda_wait_args {
	__u32 timeout_ms;   /* in: 0 = do not sleep */
	__u32 reserved;
};

/*
 * VCUDA_IOC_OPEN: open this file's session (once per file). Returns 0 with
 * args.status 0, or 0 with a negative args.status and a message when the
 * device or the server refused; -EBUSY when already open; -EINVAL for a
 * version this driver does not speak.
 */
#define VCUDA_IOC_OPEN _IOWR('V', 1, struct vcuda_open_args)

/*
 * VCUDA_IOC_WAIT: sleep until the device signals a completion that arrived
 * after the last VCUDA_IOC_WAIT returned (like reading an eventfd), or the
 * timeout passes. Returns 0 (woken or timed out), -EPIPE when the session is
 * lost (the server went away), -EINTR on a signal, -ENOTCONN before OPEN.
 */
#define VCUDA_IOC_WAIT _IOW('V', 2, struct vcuda_wait_args)

/* VCUDA_IOC_KICK: ring the session's doorbell (for when it is not mapped). */
#define VCUDA_IOC_KICK _IO('V', 3)

struct vcuda_pin_args {
	__u64 addr;         /* in: the first byte, page aligned */
	__u64 len;          /* in: bytes, a multiple of the page size */
	__u32 flags;        /* in: 0 */
	__u32 entry;        /* out: the pin's entry in the session's guest-pin area */
	__u64 gen;          /* out: its generation */
};

struct vcuda_unpin_args {
	__u32 entry;        /* in: as VCUDA_IOC_PIN gave them */
	__u32 reserved;     /* in: 0 */
	__u64 gen;
};

/*
 * VCUDA_IOC_PIN: pin the calling process's pages [addr, addr + len) for the
 * GPU to read and write, in place (long-term, as the native driver locks
 * page-locked memory), and describe them to the host in the session's
 * guest-pin area, which only this driver and the host see (vcuda's
 * shared/vc_gpin.h): the library then asks the host to map pin (entry, gen).
 * Returns 0; -EOPNOTSUPP when the host cannot map pins (its QEMU shares no
 * RAM, or an older server); -EINVAL; -EFAULT when a page cannot be pinned;
 * -ENOSPC when every entry is in use; -E2BIG when the pages make more than
 * VC_GPIN_RUNS_MAX runs; -ENOMEM past the guest's bound (the module's
 * pin_max_percent of RAM); -ENOTCONN before OPEN; -EPIPE when the session is
 * lost.
 */
#define VCUDA_IOC_PIN _IOWR('V', 4, struct vcuda_pin_args)

/*
 * VCUDA_IOC_UNPIN: unpin pin (entry, gen), which the host has let go.
 * Returns 0; -EBUSY while the host still maps it; -EINVAL when it is not a
 * pin of this file; -ENODEV once the device is gone (its pins then stay
 * pinned). Pins left when the file is closed are unpinned once the host has
 * ended the session.
 */
#define VCUDA_IOC_UNPIN _IOW('V', 5, struct vcuda_unpin_args)

#endif /* _UAPI_VCUDA_H */
