/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * virtio_vcuda.h - the virtio-vcuda device interface (driver <-> device).
 *
 * This is the guest's view of virtio-vcuda-pci. The same definitions are in
 * QEMU's include/standard-headers/linux/virtio_vcuda.h (qemu-patches/); the
 * two must stay identical (tools/check_copies.py, a make check step,
 * compares them). docs/VM.md explains the device.
 *
 * The device (virtio 1.x, modern only) has:
 *  - virtqueue 0, the control queue: the driver adds one request (device
 *    readable) and one response (device writable) buffer per command;
 *  - virtqueue 1, the event queue: the driver adds empty buffers of
 *    sizeof(struct virtio_vcuda_event); the device fills one per event;
 *  - shared memory region VIRTIO_VCUDA_SHM_SESSIONS: max_sessions slots of
 *    slot_size bytes, slot i at offset i * slot_size; the ring, reply slots,
 *    staging arena and pinned pool of session i live in slot i
 *    (shared/vc_wire.h describes their layout);
 *  - shared memory region VIRTIO_VCUDA_SHM_DOORBELLS: one doorbell per slot,
 *    doorbell_stride bytes apart; a 32-bit write of any value to doorbell i
 *    wakes the server thread of session i;
 *  - the configuration-change interrupt, raised whenever the server
 *    completes work that a sleeping guest thread waits for (and when the
 *    configuration changes): the driver wakes its sleeping sessions.
 */
#ifndef _LINUX_VIRTIO_VCUDA_H
#define _LINUX_VIRTIO_VCUDA_H

#include <linux/types.h>

/* Not (yet) assigned by the virtio TC: the last id that still has a PCI
 * device id (0x1040 + 63 = 0x107f). */
#define VIRTIO_ID_VCUDA 63

#define VIRTIO_VCUDA_SHM_SESSIONS 0
#define VIRTIO_VCUDA_SHM_DOORBELLS 1

#define VIRTIO_VCUDA_VQ_CTRL 0
#define VIRTIO_VCUDA_VQ_EVENT 1

/* virtio_vcuda_config.server_state */
#define VIRTIO_VCUDA_SERVER_DOWN 0
#define VIRTIO_VCUDA_SERVER_UP 1

struct virtio_vcuda_config {
	__le32 max_sessions;    /* session slots and doorbells */
	__le32 server_state;    /* VIRTIO_VCUDA_SERVER_* */
	__le64 slot_size;       /* bytes per slot in the sessions region */
	__le32 server_gen;      /* incremented on every connection to a server */
	__le32 doorbell_stride; /* bytes between doorbells (4096) */
};

/* virtio_vcuda_ctrl_req.type */
#define VIRTIO_VCUDA_CTRL_OPEN 1  /* open a session in slot; the slot is free */
#define VIRTIO_VCUDA_CTRL_CLOSE 2 /* end the session in slot and free the slot */

struct virtio_vcuda_ctrl_req {
	__le32 type;
	__le32 slot;
	__le32 pid;      /* OPEN: the guest process, for logs and management */
	__le32 uid;      /* OPEN: its user */
	__u8 comm[16];   /* OPEN: its name, NUL padded */
	__u8 reserved[32];
};

struct virtio_vcuda_ctrl_resp {
	__le32 status;      /* 0, or a negative errno value */
	__le32 slot;
	__le32 session_id;  /* the server's number for the session (logs) */
	__le32 server_gen;  /* the server connection that serves it */
	__le64 region_size; /* OPEN: bytes of the slot the session uses */
	__u8 message[136];  /* NUL-terminated reason when status is not 0 */
};

/* virtio_vcuda_event.type */
#define VIRTIO_VCUDA_EVENT_SESSION_LOST 1 /* the session in slot ended on the host */

/* virtio_vcuda_event.reason */
#define VIRTIO_VCUDA_LOST_SERVER_GONE 1   /* the connection to the server broke */
#define VIRTIO_VCUDA_LOST_WORKER_DIED 2   /* the session's server process ended */

struct virtio_vcuda_event {
	__le32 type;
	__le32 slot;
	__le32 reason;
	__le32 reserved;
};

#endif /* _LINUX_VIRTIO_VCUDA_H */
