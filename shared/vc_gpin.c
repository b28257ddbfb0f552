/* SPDX-License-Identifier: MIT */
/*
 * vc_gpin.c - the worker's accesses to the guest-pin area (vc_gpin.h): the
 * only code of the host that touches it.
 */
#include "vc_gpin.h"

#include <string.h>

#include "vc_shm.h"

static struct vc_gpin_entry *entry_at(const void *area, uint32_t i)
{
	return (struct vc_gpin_entry *)((uint8_t *)(uintptr_t)area + VC_GPIN_ENTRIES_OFF) + i;
}

static uint64_t *released_at(void *area, uint32_t i)
{
	return (uint64_t *)((uint8_t *)area + VC_GPIN_RELEASED_OFF) + i;
}

void vc_gpin_host_init(void *area, uint32_t flags)
{
	struct vc_gpin_head *h = area;

	h->version = VC_GPIN_VERSION;
	h->entries = VC_GPIN_ENTRIES;
	h->flags = flags;
	/* The guest's kernel reads the head once the device has answered
	 * OPEN, which the worker's report precedes: the magic last, so that a
	 * head with the magic is whole (pairs with vcuda.ko's READ_ONCE of
	 * the magic, then of the rest, at VCUDA_IOC_OPEN). */
	vc_shm_store32(&h->magic, VC_GPIN_MAGIC, VC_RELEASE);
}

void vc_gpin_host_entry(const void *area, uint32_t i, struct vc_gpin_entry *out)
{
	const struct vc_gpin_entry *e = entry_at(area, i);

	/* vcuda.ko stores gen last with release (smp_store_release in
	 * vcuda_pin_publish()); this acquire pairs with it, so the fields
	 * copied after it are the ones written for that gen. */
	out->gen = vc_shm_load64(&e->gen, VC_ACQUIRE);
	out->addr = vc_shm_load64(&e->addr, VC_RELAXED);
	out->len = vc_shm_load64(&e->len, VC_RELAXED);
	out->list = vc_shm_load64(&e->list, VC_RELAXED);
	out->runs = vc_shm_load32(&e->runs, VC_RELAXED);
	out->flags = vc_shm_load32(&e->flags, VC_RELAXED);
	memset(out->reserved, 0, sizeof(out->reserved));
}

void vc_gpin_host_release(void *area, uint32_t i, uint64_t gen)
{
	/* Release: every use of the pages (the mapping, the driver's
	 * registration) ended before this store; vcuda.ko's acquire load of
	 * released[i] in VCUDA_IOC_UNPIN pairs with it before it unpins. */
	vc_shm_store64(released_at(area, i), gen, VC_RELEASE);
}
