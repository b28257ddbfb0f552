/* SPDX-License-Identifier: MIT */
/* vm_ram.c - a VM's RAM, as its QEMU announced it (vm_ram.h). */
#include "server/vm_ram.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/guestmem.h"

static int malformed(int fd, char *why, size_t whylen, const char *what)
{
	close(fd);
	snprintf(why, whylen, "MEM: %s", what);
	return -EPROTO;
}

int vc_vm_ram_add(struct vc_vm_ram *t, const struct vc_vm_msg *m, int fd, char *why, size_t whylen)
{
	struct vc_guest_ram r = {.gpa = m->region_off, .size = m->region_size, .fd = fd, .fd_off = m->mem_off};
	struct stat st;
	int seals;

	/* The table with this range added, as a session will check it. */
	if (t->n == VC_VM_MEM_MAX)
		return malformed(fd, why, whylen, "too many ranges");
	t->r[t->n] = r;
	if (vc_guest_ram_check(t->r, t->n + 1))
		return malformed(fd, why, whylen, "a range that is not whole pages, wraps or overlaps another");
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < r.fd_off + r.size)
		return malformed(fd, why, whylen, "not a file that holds the range");
	/* Sealed against shrinking, so that no mapping of it can ever fault
	 * (we seal it where its owner let us). */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (!(seals & F_SEAL_SHRINK) && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)) {
		close(fd);
		snprintf(why, whylen, "not a memfd sealed against shrinking (QEMU: -object memory-backend-memfd)");
		return 1;
	}
	t->n++;
	return 0;
}

void vc_vm_ram_clear(struct vc_vm_ram *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		close(t->r[i].fd);
	t->n = 0;
}
