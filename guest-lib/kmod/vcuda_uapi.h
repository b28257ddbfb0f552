/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * vcuda_uapi.h - what the guest's vcuda.ko offers user space on /dev/vcudaN.
 *
 * Each open file is one session. The guest's libcuda.so.1 opens the device,
 * asks for a session with VCUDA_IOC_OPEN, maps the session's region (offset
 * 0) and its doorbell page (offset VCUDA_MMAP_DOORBELL), and sleeps for
 * completions with VCUDA_IOC_WAIT. Closing the file (or the process ending)
 * ends the session on the host. No privilege is needed.
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

#endif /* _UAPI_VCUDA_H */
