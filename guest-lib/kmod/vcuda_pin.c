// SPDX-License-Identifier: GPL-2.0
/*
 * vcuda_pin.c - page-locked memory in place (vcuda_pin.h).
 *
 * cuMemHostRegister, and page-locked allocations that the session's pool
 * cannot hold, keep the process's own pages. This driver pins them long-term
 * for writing (as the native driver locks page-locked memory), writes the
 * guest-physical runs they make into pages of its own, and publishes the pin
 * in an entry of the slot's guest-pin area (vcuda_gpin.h), where the host's
 * worker reads it, maps the same pages of the guest's RAM and registers them
 * with its GPU driver. The area is never mapped into a process, and a
 * process names a pin only by entry and generation: what the host maps is
 * what this driver pinned for that process, never pages the process chose.
 *
 * Pages are unpinned only when nothing on the host can reach them any more:
 * when the host has written the pin's generation into released[entry]
 * (VCUDA_IOC_UNPIN), or once the session has ended on the host (the device
 * answered CLOSE, which it does after the session's worker is gone; when it
 * answered because the server went away, the worker may still be stopping,
 * and the pages wait VCUDA_UNPIN_GRACE first).
 *
 * The pages pinned by all sessions together are bounded (pin_max_percent of
 * the guest's RAM), so that no user can lock the guest's memory away.
 */
#include <linux/atomic.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "vcuda_pin.h"
#include "vcuda_uapi.h"

/* A pin is at most this large (1 TiB of 4 KiB pages). */
#define VCUDA_PIN_MAX_PAGES (1UL << 28)
/* pin_user_pages_fast() takes an int: pin in batches. */
#define VCUDA_PIN_BATCH (1UL << 18)

static unsigned int pin_max_percent = 50;
module_param(pin_max_percent, uint, 0644);
MODULE_PARM_DESC(pin_max_percent,
		 "percent of RAM that page-locked memory pinned in place may take, all processes together (default 50)");

static atomic_long_t vcuda_pinned = ATOMIC_LONG_INIT(0);

/* Scheduled unpins run here; the module's exit waits for them. */
static struct workqueue_struct *vcuda_unpin_wq;
static atomic_t vcuda_unpins_pending = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(vcuda_unpins_wq);

struct vcuda_pin {
	struct list_head node;
	u32 entry;
	u64 gen;
	struct page **pages;
	unsigned long npages;
	struct page **lists;		/* the run list's pages */
	unsigned int nlists;
};

struct vcuda_unpin {
	struct list_head pins;
	struct delayed_work work;
};

void vcuda_pins_init(struct vcuda_pins *p)
{
	mutex_init(&p->lock);
	INIT_LIST_HEAD(&p->list);
	bitmap_zero(p->used, VC_GPIN_ENTRIES);
	p->gen = 0;
	p->area = NULL;
}

static struct vc_gpin_entry *entry_at(void *area, u32 i)
{
	return (struct vc_gpin_entry *)((u8 *)area + VC_GPIN_ENTRIES_OFF) + i;
}

static u64 *released_at(void *area, u32 i)
{
	return (u64 *)((u8 *)area + VC_GPIN_RELEASED_OFF) + i;
}

void vcuda_pins_attach(struct vcuda_pins *p, phys_addr_t phys)
{
	struct vc_gpin_head *h;
	void *area;

	/* The sessions BAR is the host's RAM: cached, as user mappings are. */
	area = memremap(phys, VC_GPIN_AREA_SIZE, MEMREMAP_WB);
	if (!area)
		return;
	h = area;
	/* The worker stores the magic last, with release, before it reports
	 * the session open (vc_gpin_host_init()); this acquire pairs with it. */
	if (smp_load_acquire(&h->magic) != VC_GPIN_MAGIC || READ_ONCE(h->version) != VC_GPIN_VERSION ||
	    READ_ONCE(h->entries) != VC_GPIN_ENTRIES || !(READ_ONCE(h->flags) & VC_GPIN_F_RAM)) {
		memunmap(area);
		return;
	}
	mutex_lock(&p->lock);
	p->area = area;
	mutex_unlock(&p->lock);
}

void vcuda_pins_revoke(struct vcuda_pins *p)
{
	mutex_lock(&p->lock);
	if (p->area)
		memunmap(p->area);
	p->area = NULL;
	mutex_unlock(&p->lock);
}

static void vcuda_pin_free(struct vcuda_pin *pin)
{
	unsigned int i;

	if (pin->pages) {
		unpin_user_pages_dirty_lock(pin->pages, pin->npages, true);
		atomic_long_sub(pin->npages, &vcuda_pinned);
		kvfree(pin->pages);
	}
	for (i = 0; pin->lists && i < pin->nlists; i++)
		if (pin->lists[i])
			__free_page(pin->lists[i]);
	kfree(pin->lists);
	kfree(pin);
}

/* Runs of physically contiguous pages, in the order of the addresses. */
static unsigned long count_runs(struct page **pages, unsigned long n)
{
	unsigned long i, runs = 1;

	for (i = 1; i < n; i++)
		if (page_to_phys(pages[i]) != page_to_phys(pages[i - 1]) + PAGE_SIZE)
			runs++;
	return runs;
}

/* The run list of @pin, in pages of its own, chained by guest-physical address. */
static int write_runs(struct vcuda_pin *pin, unsigned long runs)
{
	struct vc_gpin_page *pg = NULL;
	unsigned long i;
	unsigned int k;

	pin->nlists = DIV_ROUND_UP(runs, VC_GPIN_PAGE_RUNS);
	pin->lists = kcalloc(pin->nlists, sizeof(*pin->lists), GFP_KERNEL);
	if (!pin->lists)
		return -ENOMEM;
	for (k = 0; k < pin->nlists; k++) {
		pin->lists[k] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pin->lists[k])
			return -ENOMEM;
	}
	for (k = 0; k < pin->nlists; k++) {
		pg = page_address(pin->lists[k]);
		pg->next = k + 1 < pin->nlists ? page_to_phys(pin->lists[k + 1]) : 0;
	}
	k = 0;
	pg = page_address(pin->lists[0]);
	for (i = 0; i < pin->npages; i++) {
		phys_addr_t pa = page_to_phys(pin->pages[i]);
		struct vc_gpin_run *last = pg->count ? &pg->run[pg->count - 1] : NULL;

		if (last && last->gpa + last->len == pa) {
			last->len += PAGE_SIZE;
			continue;
		}
		if (pg->count == VC_GPIN_PAGE_RUNS)
			pg = page_address(pin->lists[++k]);
		pg->run[pg->count].gpa = pa;
		pg->run[pg->count].len = PAGE_SIZE;
		pg->count++;
	}
	return 0;
}

/* The pin in @p's area, with @p->lock held. */
static void vcuda_pin_publish(struct vcuda_pins *p, struct vcuda_pin *pin, u64 addr, unsigned long runs)
{
	struct vc_gpin_entry *e = entry_at(p->area, pin->entry);

	WRITE_ONCE(e->addr, addr);
	WRITE_ONCE(e->len, (u64)pin->npages << PAGE_SHIFT);
	WRITE_ONCE(e->list, page_to_phys(pin->lists[0]));
	WRITE_ONCE(e->runs, (u32)runs);
	WRITE_ONCE(e->flags, VC_GPIN_E_WRITE);
	/* Last, with release: the run list and the fields above are written
	 * before the host can see this generation (vc_gpin_host_entry()'s
	 * acquire load of gen pairs with it). */
	smp_store_release(&e->gen, pin->gen);
}

long vcuda_pins_ioc_pin(struct vcuda_pins *p, void __user *uarg)
{
	unsigned long limit = totalram_pages() / 100 * min(pin_max_percent, 100U);
	struct vcuda_pin_args a;
	struct vcuda_pin *pin;
	unsigned long runs;
	long ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || !a.len || !PAGE_ALIGNED(a.addr) || !PAGE_ALIGNED(a.len) || a.addr + a.len < a.addr ||
	    a.len >> PAGE_SHIFT > VCUDA_PIN_MAX_PAGES)
		return -EINVAL;
	if (!READ_ONCE(p->area))
		return -EOPNOTSUPP;

	pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	if (!pin)
		return -ENOMEM;
	pin->pages = kvmalloc_array(a.len >> PAGE_SHIFT, sizeof(*pin->pages), GFP_KERNEL);
	if (!pin->pages) {
		kfree(pin);
		return -ENOMEM;
	}
	if (atomic_long_add_return(a.len >> PAGE_SHIFT, &vcuda_pinned) > limit) {
		atomic_long_sub(a.len >> PAGE_SHIFT, &vcuda_pinned);
		kvfree(pin->pages);
		kfree(pin);
		return -ENOMEM;
	}
	while (pin->npages < a.len >> PAGE_SHIFT) {
		unsigned long n = min((a.len >> PAGE_SHIFT) - pin->npages, VCUDA_PIN_BATCH);

		ret = pin_user_pages_fast(a.addr + (pin->npages << PAGE_SHIFT), (int)n, FOLL_WRITE | FOLL_LONGTERM,
					  pin->pages + pin->npages);
		if (ret <= 0) {
			ret = ret ? ret : -EFAULT;
			goto err;
		}
		pin->npages += ret;
	}
	runs = count_runs(pin->pages, pin->npages);
	if (runs > VC_GPIN_RUNS_MAX) {
		ret = -E2BIG;
		goto err;
	}
	ret = write_runs(pin, runs);
	if (ret)
		goto err;

	mutex_lock(&p->lock);
	pin->entry = find_first_zero_bit(p->used, VC_GPIN_ENTRIES);
	if (!p->area || pin->entry >= VC_GPIN_ENTRIES) {
		mutex_unlock(&p->lock);
		ret = p->area ? -ENOSPC : -EOPNOTSUPP;
		goto err;
	}
	__set_bit(pin->entry, p->used);
	pin->gen = ++p->gen;
	list_add_tail(&pin->node, &p->list);
	vcuda_pin_publish(p, pin, a.addr, runs);
	mutex_unlock(&p->lock);

	a.entry = pin->entry;
	a.gen = pin->gen;
	/* The pin stays either way: closing the file unpins it. */
	return copy_to_user(uarg, &a, sizeof(a)) ? -EFAULT : 0;

err:
	/* Only the pages pinned so far are unpinned; the rest of the bound goes. */
	atomic_long_sub((a.len >> PAGE_SHIFT) - pin->npages, &vcuda_pinned);
	vcuda_pin_free(pin);
	return ret;
}

long vcuda_pins_ioc_unpin(struct vcuda_pins *p, void __user *uarg)
{
	struct vcuda_unpin_args a;
	struct vcuda_pin *pin;
	bool found = false;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.reserved || a.entry >= VC_GPIN_ENTRIES || !a.gen)
		return -EINVAL;
	mutex_lock(&p->lock);
	list_for_each_entry(pin, &p->list, node) {
		if (pin->entry == a.entry && pin->gen == a.gen) {
			found = true;
			break;
		}
	}
	if (!found || !p->area) {
		mutex_unlock(&p->lock);
		return found ? -ENODEV : -EINVAL;
	}
	/* The host stores the generation it let go with release after its
	 * last use of the pages (vc_gpin_host_release()); this acquire pairs
	 * with it. */
	if (smp_load_acquire(released_at(p->area, a.entry)) != a.gen) {
		mutex_unlock(&p->lock);
		return -EBUSY;
	}
	WRITE_ONCE(entry_at(p->area, a.entry)->gen, 0);
	list_del(&pin->node);
	__clear_bit(pin->entry, p->used);
	mutex_unlock(&p->lock);
	vcuda_pin_free(pin);
	return 0;
}

struct vcuda_unpin *vcuda_pins_detach(struct vcuda_pins *p)
{
	struct vcuda_unpin *u = NULL;

	mutex_lock(&p->lock);
	if (!list_empty(&p->list)) {
		/* A lost bookkeeping record would keep pages pinned: retry. */
		u = kzalloc(sizeof(*u), GFP_KERNEL | __GFP_NOFAIL);
		INIT_LIST_HEAD(&u->pins);
		list_splice_init(&p->list, &u->pins);
	}
	if (p->area)
		memunmap(p->area);
	p->area = NULL;
	mutex_unlock(&p->lock);
	mutex_destroy(&p->lock);
	return u;
}

static void vcuda_unpin_work(struct work_struct *work)
{
	struct vcuda_unpin *u = container_of(to_delayed_work(work), struct vcuda_unpin, work);
	struct vcuda_pin *pin, *tmp;

	list_for_each_entry_safe(pin, tmp, &u->pins, node) {
		list_del(&pin->node);
		vcuda_pin_free(pin);
	}
	kfree(u);
	if (atomic_dec_and_test(&vcuda_unpins_pending))
		wake_up(&vcuda_unpins_wq);
}

void vcuda_unpin_schedule(struct vcuda_unpin *u, unsigned long delay)
{
	atomic_inc(&vcuda_unpins_pending);
	INIT_DELAYED_WORK(&u->work, vcuda_unpin_work);
	queue_delayed_work(vcuda_unpin_wq, &u->work, delay);
}

long vcuda_pinned_pages(void)
{
	return atomic_long_read(&vcuda_pinned);
}

int vcuda_pin_module_init(void)
{
	vcuda_unpin_wq = alloc_workqueue("vcuda_unpin", 0, 0);
	return vcuda_unpin_wq ? 0 : -ENOMEM;
}

void vcuda_pin_module_exit(void)
{
	/* Delayed ones included: a pin waits its grace out, never less. */
	wait_event(vcuda_unpins_wq, !atomic_read(&vcuda_unpins_pending));
	destroy_workqueue(vcuda_unpin_wq);
}

void vcuda_unpin_leak(struct vcuda_unpin *u)
{
	struct vcuda_pin *pin;
	unsigned long n = 0;

	list_for_each_entry(pin, &u->pins, node)
		n += pin->npages;
	pr_warn("vcuda: %lu pages stay pinned: the device went away before the host confirmed their session ended\n",
		n);
}
