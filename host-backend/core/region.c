/* SPDX-License-Identifier: MIT */
#include "core/region.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

int vc_region_create(const struct vc_layout *layout, const char *name, struct vc_region *r)
{
	int rc;

	r->base = MAP_FAILED;
	r->size = layout->region_size;
	r->doorbell_fd = r->complete_fd = -1;
	r->mem_fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->mem_fd < 0)
		return -errno;
	if (ftruncate(r->mem_fd, (off_t)r->size) < 0)
		goto err_errno;
	/* The client must not be able to shrink the file under our mapping
	 * (SIGBUS in the server). */
	if (fcntl(r->mem_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto err_errno;
	r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->mem_fd, 0);
	if (r->base == MAP_FAILED)
		goto err_errno;
	/* Fault in the control page, ring, slots and arena now; the pinned pool
	 * stays sparse until the guest allocates from it. */
	vc_region_prefault(r->base, layout->pinned_size ? layout->pinned_off : r->size);
	r->doorbell_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->doorbell_fd < 0)
		goto err_errno;
	r->complete_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->complete_fd < 0)
		goto err_errno;
	return 0;

err_errno:
	rc = -errno;
	vc_region_destroy(r);
	return rc;
}

void vc_region_prefault(void *base, size_t len)
{
	volatile uint8_t *p = base;

	if (madvise(base, len, MADV_POPULATE_WRITE) == 0)
		return;
	for (size_t i = 0; i < len; i += 4096) /* kernels before 5.14 */
		p[i] = p[i];
}

void vc_region_destroy(struct vc_region *r)
{
	if (r->base && r->base != MAP_FAILED)
		munmap(r->base, r->size);
	r->base = NULL;
	if (r->mem_fd >= 0)
		close(r->mem_fd);
	if (r->doorbell_fd >= 0)
		close(r->doorbell_fd);
	if (r->complete_fd >= 0)
		close(r->complete_fd);
	r->mem_fd = r->doorbell_fd = r->complete_fd = -1;
}
