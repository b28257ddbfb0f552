/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vcuda_pin.h - page-locked memory in place: a session's pins of its
 * process's pages, described to the host in the slot's guest-pin area
 * (vcuda_gpin.h), unpinned when the host lets them go or once the session
 * has ended on the host.
 */
#ifndef _VCUDA_PIN_H
#define _VCUDA_PIN_H

#include <linux/bitmap.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

#include "vcuda_gpin.h"

struct vcuda_pins {
	struct mutex lock;		/* guards everything below */
	struct list_head list;		/* struct vcuda_pin, in use */
	DECLARE_BITMAP(used, VC_GPIN_ENTRIES);
	u64 gen;			/* the last generation handed out */
	void *area;			/* the guest-pin area; NULL: no pins */
};

/* Pins whose session has ended, to be unpinned off the interrupt path. */
struct vcuda_unpin;

/*
 * How long pins wait when the device answered CLOSE because the server went
 * away: its workers may still be stopping (the server's grace is 5 s, then
 * SIGKILL), and one that runs can still reach the pages.
 */
#define VCUDA_UNPIN_GRACE (10 * HZ)

/** vcuda_pinned_pages() - pages pinned in place now, all sessions together (sysfs pinned_pages). */
long vcuda_pinned_pages(void);

/** vcuda_pin_module_init() - the unpinning workqueue; 0 or -ENOMEM. */
int vcuda_pin_module_init(void);

/** vcuda_pin_module_exit() - wait for every scheduled unpin, then free the workqueue. */
void vcuda_pin_module_exit(void);

/** vcuda_pins_init() - no pins, no area. */
void vcuda_pins_init(struct vcuda_pins *p);

/**
 * vcuda_pins_attach() - map the session's guest-pin area at guest-physical
 * @phys and read the host's head: pins are offered only when the host wrote
 * one saying it can map them. May sleep.
 */
void vcuda_pins_attach(struct vcuda_pins *p, phys_addr_t phys);

/**
 * vcuda_pins_revoke() - the device is going: unmap the area, which nothing
 * touches after this returns; pins cannot be made or unpinned any more
 * (those held stay pinned when the file closes). May sleep.
 */
void vcuda_pins_revoke(struct vcuda_pins *p);

/** vcuda_pins_ioc_pin() - VCUDA_IOC_PIN (vcuda_uapi.h). */
long vcuda_pins_ioc_pin(struct vcuda_pins *p, void __user *uarg);

/** vcuda_pins_ioc_unpin() - VCUDA_IOC_UNPIN (vcuda_uapi.h). */
long vcuda_pins_ioc_unpin(struct vcuda_pins *p, void __user *uarg);

/**
 * vcuda_pins_detach() - the file is closing: unmap the area and hand its
 * pins over (NULL when there are none), to be unpinned once the host has
 * ended the session (vcuda_unpin_schedule()). May sleep.
 */
struct vcuda_unpin *vcuda_pins_detach(struct vcuda_pins *p);

/**
 * vcuda_unpin_schedule() - unpin @u's pages after @delay jiffies, on a
 * workqueue. Safe in atomic context; @u is freed there.
 */
void vcuda_unpin_schedule(struct vcuda_unpin *u, unsigned long delay);

/**
 * vcuda_unpin_leak() - the host never confirmed that the session ended (the
 * device went away): @u's pages stay pinned for good, which is safe where
 * unpinning them might not be. Safe in atomic context.
 */
void vcuda_unpin_leak(struct vcuda_unpin *u);

#endif /* _VCUDA_PIN_H */
