/* SPDX-License-Identifier: MIT */
/*
 * vc_dev.h - the guest side of a session through the virtio-vcuda device
 * (/dev/vcudaN, served by vcuda.ko): open, map the region and the doorbell,
 * kick, sleep for completions. vc_client.c runs the same ring over it as over
 * the host-local socket.
 */
#ifndef VC_DEV_H
#define VC_DEV_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vc_wire.h"

struct vc_dev {
	int fd;
	void *base;                  /* the session's region */
	size_t size;                 /* bytes reserved at base */
	volatile uint32_t *doorbell; /* mapped doorbell register, or NULL: ioctl */
	uint32_t session_id, slot;
	struct vc_layout layout;     /* read from the control page and checked */
	/* The pinned pool is mapped a granule at a time, as it is used. */
	pthread_mutex_t pool_mu;
	uint64_t *pool_mapped;       /* a bit per VC_DEV_POOL_GRANULE of the pool */
};

/* The pinned pool's mapping unit: vcuda.ko maps a range whole, a page
 * table entry per 4 KiB, so a slot of gigabytes mapped at once would cost
 * every process that much page table (8 bytes per page) and time. */
#define VC_DEV_POOL_GRANULE (64ull << 20)

/**
 * vc_dev_open() - open a session on device node @path, map its region (all
 * but the pinned pool, whose address range is reserved: vc_dev_pool_map())
 * and doorbell, and read and check its layout. On failure a message a user
 * can act on is left in @err.
 * Returns 0, or -errno (-EPROTONOSUPPORT: the server speaks another protocol).
 */
int vc_dev_open(const char *path, struct vc_dev *d, char *err, size_t errlen);

/** vc_dev_kick() - ring the session's doorbell. 0 or -errno. */
int vc_dev_kick(struct vc_dev *d);

/**
 * vc_dev_wait() - sleep until a completion interrupt newer than the last
 * wait, or @timeout_ms. Returns 0, or -EPIPE when the session is lost.
 */
int vc_dev_wait(struct vc_dev *d, int timeout_ms);

/**
 * vc_dev_map_at() - map @len bytes of the session's region from offset @off
 * at @addr (MAP_FIXED; all page-aligned), beside the whole-region mapping.
 * Returns 0 or -errno.
 */
int vc_dev_map_at(struct vc_dev *d, uint64_t off, void *addr, uint64_t len);

/**
 * vc_dev_pool_map() - make sure bytes [@off, @off + @len) of the pinned pool
 * (offsets from its start) are mapped at their place in the region, mapping
 * the granules that hold them. Returns 0, or -errno (-EINVAL: outside the
 * pool; the driver's error: the session is lost, say).
 */
int vc_dev_pool_map(struct vc_dev *d, uint64_t off, uint64_t len);

/**
 * vc_dev_pin() - VCUDA_IOC_PIN: pin [@addr, @addr + @len) in place; the pin's
 * entry and generation in *@entry and *@gen. Returns 0, -EOPNOTSUPP (also
 * from a module without the call), or the driver's -errno.
 */
int vc_dev_pin(struct vc_dev *d, uint64_t addr, uint64_t len, uint32_t *entry, uint64_t *gen);

/** vc_dev_unpin() - VCUDA_IOC_UNPIN. Returns 0 or the driver's -errno (-EBUSY: held by the host). */
int vc_dev_unpin(struct vc_dev *d, uint32_t entry, uint64_t gen);

/** vc_dev_close() - unmap and close; the driver ends the session. */
void vc_dev_close(struct vc_dev *d);

#endif /* VC_DEV_H */
