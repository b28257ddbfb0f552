/* SPDX-License-Identifier: MIT */
/*
 * fuzz_guestmem.c - libFuzzer target for the worker's reader of a guest's
 * pins (host-backend/core/guestmem.c): the entry a guest's kernel publishes
 * in the guest-pin area and the run list it writes into guest RAM
 * (shared/vc_gpin.h), both guest-controlled.
 *
 * Input: its first 64 bytes are entry 0 of the area, the rest the guest's
 * RAM from its first byte (where a list at guest-physical 0 lies). The RAM is
 * a memfd of 256 KiB presented as two ranges with a hole between them:
 * guest-physical [0, 128K) and [1M, 1M + 128K). Whatever the bytes, a take
 * either fails or yields pieces inside the file, in whole pages, as long as
 * the pin together; a pin taken is held (a second take fails) until let go,
 * and never taken again after.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/guestmem.h"
#include "vc_gpin.h"

#define RAM (256u << 10)
#define HALF (128u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static uint8_t *area;
	static const uint8_t zero[RAM];
	struct vc_guest_ram ram[2];
	struct vc_gpin_entry e;
	struct vc_guestmem *g;
	struct vc_guest_piece *v = NULL;
	uint64_t total = 0;
	uint32_t n = 0;
	int rc;

	if (size < sizeof(e))
		return 0;
	if (fd < 0) {
		fd = memfd_create("fuzz-guestmem", MFD_CLOEXEC);
		area = aligned_alloc(4096, VC_GPIN_AREA_SIZE);
		if (fd < 0 || !area || ftruncate(fd, RAM) < 0)
			abort();
	}
	memset(area, 0, VC_GPIN_AREA_SIZE);
	if (pwrite(fd, zero, RAM, 0) != RAM)
		abort();
	if (size > sizeof(e) &&
	    pwrite(fd, data + sizeof(e), size - sizeof(e) < RAM ? size - sizeof(e) : RAM, 0) < 0)
		abort();
	memcpy(&e, data, sizeof(e));
	memcpy(area + VC_GPIN_ENTRIES_OFF, &e, sizeof(e));
	ram[0] = (struct vc_guest_ram){.gpa = 0, .size = HALF, .fd = fd, .fd_off = 0};
	ram[1] = (struct vc_guest_ram){.gpa = 1u << 20, .size = HALF, .fd = fd, .fd_off = HALF};
	if (vc_guestmem_create(ram, 2, area, &g))
		abort();
	rc = vc_guestmem_take(g, 0, e.gen, e.addr, e.len, &v, &n);
	if (rc == 0) {
		if (!n || n > e.runs + 16)
			abort();
		for (uint32_t i = 0; i < n; i++) {
			if (v[i].fd != fd || !v[i].len || (v[i].off | v[i].len) % 4096 || v[i].off > RAM ||
			    v[i].len > RAM - v[i].off)
				abort();
			total += v[i].len;
		}
		if (total != e.len || e.len % 4096)
			abort();
		free(v);
		v = NULL;
		if (vc_guestmem_take(g, 0, e.gen, e.addr, e.len, &v, &n) == 0) /* held */
			abort();
		if (vc_guestmem_release(g, 0, e.gen, false) == 0 || vc_guestmem_release(g, 0, e.gen, true) ||
		    *(uint64_t *)(area + VC_GPIN_RELEASED_OFF) != e.gen)
			abort();
		if (vc_guestmem_take(g, 0, e.gen, e.addr, e.len, &v, &n) == 0) /* let go */
			abort();
	} else if (v) {
		abort();
	}
	vc_guestmem_destroy(g);
	return 0;
}
