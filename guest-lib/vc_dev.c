/* SPDX-License-Identifier: MIT */
#include "vc_dev.h"
#include "vc_place.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kmod/vcuda_uapi.h"
#include "vc_abi_hash.h"
#include "vc_layout.h"
#include "vc_time.h"

#define OPEN_WAIT_MS 10000u

/*
 * OPEN, waiting while every session slot is taken: a slot comes back only
 * once the host has reaped the session of a process that ended, which on a
 * GPU (its context torn down) can take a second or more, so a program started
 * right after another would otherwise be refused. The wait is bounded
 * (VCUDA_OPEN_WAIT_MS, default 10000; 0: do not wait) and said once.
 */
static int open_session(int fd, const char *path, struct vcuda_open_args *a)
{
	const char *env = getenv("VCUDA_OPEN_WAIT_MS");
	uint64_t limit_ms = env ? strtoull(env, NULL, 10) : OPEN_WAIT_MS, t0 = vc_now_ns();
	unsigned nap_us = 10000;
	bool said = false;

	for (;;) {
		struct vcuda_open_args r = *a;
		uint64_t waited_ms;

		if (ioctl(fd, VCUDA_IOC_OPEN, &r) < 0)
			return -errno;
		waited_ms = (vc_now_ns() - t0) / 1000000u;
		if (r.status != -EBUSY || waited_ms >= limit_ms) {
			*a = r;
			return 0;
		}
		if (!said && waited_ms >= 1000) {
			fprintf(stderr, "vcuda: %s: all sessions are in use; waiting up to %llu s for one to be freed\n",
				path, (unsigned long long)(limit_ms / 1000));
			said = true;
		}
		usleep(nap_us);
		nap_us = nap_us < 200000 ? nap_us * 2 : 200000;
	}
}

/* The region up to the pinned pool (all of it without one), over the
 * reservation; the pool's granule bits, none mapped yet. */
static int map_eager(struct vc_dev *d)
{
	const struct vc_layout *l = &d->layout;
	uint64_t n = l->pinned_size ? l->pinned_off : l->region_size;
	int rc;

	if (l->pinned_size) {
		uint64_t granules = (l->pinned_size + VC_DEV_POOL_GRANULE - 1) / VC_DEV_POOL_GRANULE;

		d->pool_mapped = calloc((granules + 63) / 64, sizeof(uint64_t));
		if (!d->pool_mapped)
			return -ENOMEM;
	}
	rc = vc_dev_map_at(d, 0, d->base, (n + 4095) & ~4095ull);
	if (rc) {
		free(d->pool_mapped);
		d->pool_mapped = NULL;
	}
	return rc;
}

int vc_dev_open(const char *path, struct vc_dev *d, char *err, size_t errlen)
{
	struct vcuda_open_args a = {.version = VCUDA_UAPI_VERSION};
	const struct vc_ctrl *ctrl;
	void *bell;
	int rc;

	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->pool_mu, NULL);
	d->base = MAP_FAILED;
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "vcuda: cannot open %s: %s%s", path, strerror(errno),
			 errno == ENOENT ? " (is vcuda.ko loaded and the virtio-vcuda device attached?)" : "");
		return rc;
	}
	if ((rc = open_session(d->fd, path, &a)) < 0) {
		snprintf(err, errlen, "vcuda: %s: cannot open a session: %s%s", path, strerror(-rc),
			 rc == -EINVAL ? " (guest library and vcuda.ko do not match)" : "");
		goto err_close;
	}
	a.message[sizeof(a.message) - 1] = 0;
	if (a.status) {
		rc = a.status < 0 ? a.status : -EPROTO;
		snprintf(err, errlen, "vcuda: %s: the host refused the session: %s", path,
			 a.message[0] ? a.message : strerror(-rc));
		goto err_close;
	}
	if (a.region_size < VC_CTRL_SIZE || a.region_size > SIZE_MAX) {
		rc = -EPROTO;
		snprintf(err, errlen, "vcuda: %s: the device gave an unusable region size", path);
		goto err_close;
	}
	d->size = (size_t)a.region_size;
	d->session_id = a.session_id;
	d->slot = a.slot;
	/* The region's addresses reserved whole, its pages mapped in parts:
	 * the control page first, for the layout, then all before the pinned
	 * pool; the pool as it is used (vc_dev_pool_map()). */
	d->base = vc_place_map(d->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (d->base == MAP_FAILED || (rc = vc_dev_map_at(d, 0, d->base, VC_CTRL_SIZE))) {
		rc = d->base == MAP_FAILED ? -errno : rc;
		snprintf(err, errlen, "vcuda: %s: cannot map the session region: %s", path, strerror(-rc));
		goto err_unmap;
	}
	/* The host wrote the header before the device answered OPEN. */
	ctrl = d->base;
	if (ctrl->magic != VC_CTRL_MAGIC || ctrl->version != VC_PROTO_VERSION || ctrl->abi_hash != VC_ABI_HASH) {
		rc = -EPROTONOSUPPORT;
		snprintf(err, errlen,
			 "vcuda: protocol mismatch: server v%u abi %016" PRIx64 ", this library v%u abi %016" PRIx64,
			 ctrl->version, ctrl->abi_hash, VC_PROTO_VERSION, (uint64_t)VC_ABI_HASH);
		goto err_unmap;
	}
	d->layout = ctrl->layout;
	if (vc_layout_check(&d->layout) || d->layout.region_size > d->size) {
		rc = -EPROTO;
		snprintf(err, errlen, "vcuda: %s: the session region's layout is unusable", path);
		goto err_unmap;
	}
	if ((rc = map_eager(d))) {
		snprintf(err, errlen, "vcuda: %s: cannot map the session region: %s", path, strerror(-rc));
		goto err_unmap;
	}
	bell = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, d->fd, (off_t)VCUDA_MMAP_DOORBELL);
	d->doorbell = bell == MAP_FAILED ? NULL : bell; /* else VCUDA_IOC_KICK */
	return 0;

err_unmap:
	if (d->base != MAP_FAILED)
		munmap(d->base, d->size);
	d->base = MAP_FAILED;
	free(d->pool_mapped);
	d->pool_mapped = NULL;
err_close:
	close(d->fd);
	d->fd = -1;
	return rc;
}

int vc_dev_kick(struct vc_dev *d)
{
	if (d->doorbell) {
		/* An MMIO store: the device's ioeventfd for this session. The
		 * ring's seq_cst tail store is ordered before it (x86 stores are
		 * not reordered with other stores, and uncached stores drain the
		 * store buffer). */
		*d->doorbell = 1;
		return 0;
	}
	return ioctl(d->fd, VCUDA_IOC_KICK) < 0 ? -errno : 0;
}

int vc_dev_wait(struct vc_dev *d, int timeout_ms)
{
	struct vcuda_wait_args w = {.timeout_ms = timeout_ms < 0 ? 0 : (uint32_t)timeout_ms};

	if (ioctl(d->fd, VCUDA_IOC_WAIT, &w) == 0)
		return 0;
	if (errno == EINTR)
		return 0; /* the caller re-checks and sleeps again */
	return errno == EPIPE || errno == ENODEV ? -EPIPE : -errno;
}

int vc_dev_map_at(struct vc_dev *d, uint64_t off, void *addr, uint64_t len)
{
	void *m = mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, d->fd,
		       (off_t)(VCUDA_MMAP_REGION + off));

	return m == MAP_FAILED ? -errno : 0;
}

int vc_dev_pool_map(struct vc_dev *d, uint64_t off, uint64_t len)
{
	const struct vc_layout *l = &d->layout;
	uint64_t g, last;
	int rc = 0;

	if (!d->pool_mapped || !len || off > l->pinned_size || len > l->pinned_size - off)
		return -EINVAL;
	last = (off + len - 1) / VC_DEV_POOL_GRANULE;
	pthread_mutex_lock(&d->pool_mu);
	for (g = off / VC_DEV_POOL_GRANULE; g <= last && !rc; g++) {
		uint64_t at = g * VC_DEV_POOL_GRANULE;
		uint64_t n = l->pinned_size - at < VC_DEV_POOL_GRANULE ? l->pinned_size - at : VC_DEV_POOL_GRANULE;

		if (d->pool_mapped[g / 64] & (1ull << (g % 64)))
			continue;
		rc = vc_dev_map_at(d, l->pinned_off + at, (uint8_t *)d->base + l->pinned_off + at, n);
		if (!rc)
			d->pool_mapped[g / 64] |= 1ull << (g % 64);
	}
	pthread_mutex_unlock(&d->pool_mu);
	return rc;
}

int vc_dev_pin(struct vc_dev *d, uint64_t addr, uint64_t len, uint32_t *entry, uint64_t *gen)
{
	struct vcuda_pin_args a = {.addr = addr, .len = len};

	if (ioctl(d->fd, VCUDA_IOC_PIN, &a) < 0)
		return errno == ENOTTY ? -EOPNOTSUPP : -errno;
	*entry = a.entry;
	*gen = a.gen;
	return 0;
}

int vc_dev_unpin(struct vc_dev *d, uint32_t entry, uint64_t gen)
{
	struct vcuda_unpin_args a = {.entry = entry, .gen = gen};

	return ioctl(d->fd, VCUDA_IOC_UNPIN, &a) < 0 ? -errno : 0;
}

void vc_dev_close(struct vc_dev *d)
{
	if (d->doorbell)
		munmap((void *)d->doorbell, 4096);
	d->doorbell = NULL;
	if (d->base && d->base != MAP_FAILED)
		munmap(d->base, d->size);
	d->base = MAP_FAILED;
	free(d->pool_mapped);
	d->pool_mapped = NULL;
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}
