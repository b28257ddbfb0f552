// SPDX-License-Identifier: GPL-2.0
/*
 * vcuda_main.c - guest driver for virtio-vcuda-pci (docs/VM.md).
 *
 * Each device becomes /dev/vcudaN; each open file is one session in one
 * slot of the device. The data path (ring, replies, bulk data) never enters
 * this driver: user space maps its slot of the sessions region and its
 * doorbell page, and sleeps here only for completion interrupts.
 *
 * Lifetimes:
 *  - struct vcuda_dev is refcounted (kref): the bound device holds one
 *    reference, every open file another, so a file that outlives the
 *    device's removal is still safe to use (it gets -EPIPE/-ENODEV);
 *  - a slot is busy from OPEN until the device answers its CLOSE (or the
 *    OPEN fails): the server never sees a slot reused while its previous
 *    session's worker may still run;
 *  - control requests are refcounted (one reference for the queue, one for
 *    a task that waits for the answer), so a killed waiter leaves the
 *    request valid for the device, and an OPEN that succeeds after its
 *    waiter gave up is closed again by the completion handler.
 *
 * Locking:
 *  - vd->lock (spinlock, taken from interrupts) guards both virtqueues, the
 *    slot bitmap and table, the list of open sessions, the close backlog,
 *    the per-request state and vd->gone;
 *  - vd->rwsem keeps the doorbell mapping and the sessions BAR alive for
 *    VCUDA_IOC_KICK and mmap: remove sets gone under it (write) before it
 *    tears them down;
 *  - vd->files_lock (mutex) guards the list of all open files, which remove
 *    walks to zap user mappings;
 *  - s->open_lock serialises VCUDA_IOC_OPEN on one file.
 */
#include <linux/bitmap.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>
#include <linux/version.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "vcuda_pin.h"
#include "vcuda_uapi.h"
#include "virtio_vcuda.h"

/* The device promises 1..256 (docs/VM.md); more would only cost memory. */
#define VCUDA_MAX_SESSIONS 256
/* Event buffers beyond one per slot, so that re-posting can lag a little. */
#define VCUDA_SPARE_EVENTS 8
/*
 * The configuration interrupt fires for every completion; the server state
 * it may also announce is read at most this often (each read of the config
 * space traps to QEMU).
 */
#define VCUDA_CONFIG_DELAY (HZ / 10)

struct vcuda_dev {
	struct kref ref;
	struct virtio_device *vdev;	/* valid while !gone */
	struct virtqueue *ctrl_vq;
	struct virtqueue *event_vq;

	spinlock_t lock;
	bool gone;			/* removed: nothing new starts */
	unsigned long *busy;		/* slots from OPEN until CLOSE answered */
	struct vcuda_session **slot_sess; /* session of each reserved slot */
	struct list_head open_sessions;	/* sessions woken by interrupts */
	struct list_head backlog;	/* CLOSEs that did not fit the queue */

	struct rw_semaphore rwsem;
	void __iomem *doorbells;

	struct mutex files_lock;
	struct list_head files;

	u32 max_sessions;
	u32 doorbell_stride;
	u64 slot_size;
	phys_addr_t shm_addr;		/* sessions region (BAR 2) */
	phys_addr_t db_addr;		/* doorbells region (BAR 0) */

	u32 server_state;		/* last read by config_work */
	u32 server_gen;
	struct delayed_work config_work;

	struct virtio_vcuda_event *events;
	unsigned int nr_events;

	int index;
	char name[16];
	struct miscdevice misc;
};

struct vcuda_session {
	struct vcuda_dev *dev;
	struct address_space *mapping;	/* zapped when the device goes */
	struct list_head file_node;	/* dev->files */
	struct list_head open_node;	/* dev->open_sessions, once opened */
	struct mutex open_lock;
	wait_queue_head_t wq;
	atomic_t pending;		/* a completion interrupt since last WAIT */
	bool lost;			/* the host ended the session */
	bool opened;			/* slot, region_size, server_gen valid */
	u32 slot;
	u32 server_gen;
	u64 region_size;
	struct vcuda_pins pins;		/* page-locked memory in place */
};

struct vcuda_req {
	refcount_t ref;
	struct completion done;
	struct list_head backlog;
	u32 type;			/* our copy: the device may see req */
	u32 slot;
	bool waiting;			/* OPEN: a task sleeps on done */
	bool answered;
	int error;			/* -ENODEV: the device went away */
	struct vcuda_unpin *unpin;	/* CLOSE: the session's pins, unpinned once answered */
	unsigned int resp_len;
	struct virtio_vcuda_ctrl_req req;
	struct virtio_vcuda_ctrl_resp resp ____cacheline_aligned;
};

static DEFINE_IDA(vcuda_ida);

static void vcuda_dev_free(struct kref *ref)
{
	struct vcuda_dev *vd = container_of(ref, struct vcuda_dev, ref);

	kfree(vd->events);
	kfree(vd->slot_sess);
	bitmap_free(vd->busy);
	kfree(vd);
}

static void vcuda_req_put(struct vcuda_req *r)
{
	if (refcount_dec_and_test(&r->ref)) {
		/* A CLOSE never answered: the host may still reach the pages. */
		if (r->unpin)
			vcuda_unpin_leak(r->unpin);
		kfree(r);
	}
}

static struct vcuda_req *vcuda_req_alloc(u32 type, gfp_t gfp)
{
	struct vcuda_req *r = kzalloc(sizeof(*r), gfp);

	if (!r)
		return NULL;
	refcount_set(&r->ref, 1);
	init_completion(&r->done);
	INIT_LIST_HEAD(&r->backlog);
	r->type = type;
	r->req.type = cpu_to_le32(type);
	return r;
}

/* The session ended on the host (or the device went away). */
static void vcuda_session_lost(struct vcuda_session *s)
{
	WRITE_ONCE(s->lost, true);
	wake_up_all(&s->wq);
}

/* Called with vd->lock held. */
static void vcuda_slot_free(struct vcuda_dev *vd, u32 slot)
{
	__clear_bit(slot, vd->busy);
}

/*
 * Add a request and its response buffer to the control queue. Called with
 * vd->lock held; the queue owns one reference of r from here until the
 * answer is taken or the device is removed.
 */
static int vcuda_ctrl_queue(struct vcuda_dev *vd, struct vcuda_req *r)
{
	struct scatterlist out, in, *sgs[2];
	int err;

	sg_init_one(&out, &r->req, sizeof(r->req));
	sg_init_one(&in, &r->resp, sizeof(r->resp));
	sgs[0] = &out;
	sgs[1] = &in;
	r->answered = false;
	r->resp_len = 0;
	err = virtqueue_add_sgs(vd->ctrl_vq, sgs, 1, 1, r, GFP_ATOMIC);
	if (err)
		return err;
	virtqueue_kick(vd->ctrl_vq);
	return 0;
}

/*
 * Send CLOSE for r->slot, reusing r (its reference passes to the queue).
 * A full queue defers it to the backlog, flushed as answers free entries;
 * a broken queue will never answer, so the slot is freed at once.
 * Called with vd->lock held.
 */
static void vcuda_send_close(struct vcuda_dev *vd, struct vcuda_req *r)
{
	int err = -ENOSPC;

	memset(&r->req, 0, sizeof(r->req));
	r->type = VIRTIO_VCUDA_CTRL_CLOSE;
	r->req.type = cpu_to_le32(VIRTIO_VCUDA_CTRL_CLOSE);
	r->req.slot = cpu_to_le32(r->slot);
	r->waiting = false;

	/* Keep CLOSEs in order behind those already waiting for room. */
	if (list_empty(&vd->backlog))
		err = vcuda_ctrl_queue(vd, r);
	if (err == -ENOSPC) {
		list_add_tail(&r->backlog, &vd->backlog);
		return;
	}
	if (err) {
		vcuda_slot_free(vd, r->slot);
		vcuda_req_put(r);
	}
}

static void vcuda_backlog_flush(struct vcuda_dev *vd)
{
	struct vcuda_req *r, *tmp;
	int err;

	list_for_each_entry_safe(r, tmp, &vd->backlog, backlog) {
		err = vcuda_ctrl_queue(vd, r);
		if (err == -ENOSPC)
			break;
		list_del_init(&r->backlog);
		if (err) {
			vcuda_slot_free(vd, r->slot);
			vcuda_req_put(r);
		}
	}
}

/* The device answered OPEN with a clean refusal: nothing to close. */
static bool vcuda_open_refused(const struct vcuda_req *r)
{
	return r->resp_len >= sizeof(r->resp) && r->resp.status != 0;
}

/*
 * An OPEN whose answer does not become a session: close the slot unless
 * the device clearly refused (an unreadable answer may have opened it; a
 * CLOSE of a free slot only earns an error answer). Consumes a reference.
 * Called with vd->lock held.
 */
static void vcuda_open_undo(struct vcuda_dev *vd, struct vcuda_req *r)
{
	if (vd->gone || vcuda_open_refused(r)) {
		vcuda_slot_free(vd, r->slot);
		vcuda_req_put(r);
		return;
	}
	vcuda_send_close(vd, r);
}

/* An answer taken from the control queue, with the queue's reference. */
static void vcuda_ctrl_answer(struct vcuda_dev *vd, struct vcuda_req *r,
			      unsigned int len)
{
	r->answered = true;
	r->resp_len = min_t(unsigned int, len, sizeof(r->resp));

	if (r->type == VIRTIO_VCUDA_CTRL_CLOSE) {
		bool clean = r->resp_len >= sizeof(r->resp) && !r->resp.status;

		if (!clean)
			dev_warn_ratelimited(&vd->vdev->dev,
					     "CLOSE of slot %u: status %d, %u bytes\n",
					     r->slot, (s32)le32_to_cpu(r->resp.status),
					     len);
		/*
		 * A clean answer comes once the session's worker is gone; any
		 * other (the server went away) while it may still be stopping.
		 */
		if (r->unpin) {
			vcuda_unpin_schedule(r->unpin, clean ? 0 : VCUDA_UNPIN_GRACE);
			r->unpin = NULL;
		}
		/* Answered either way: the device no longer uses the slot. */
		vcuda_slot_free(vd, r->slot);
		vcuda_req_put(r);
		return;
	}
	if (r->waiting) {
		complete(&r->done);
		vcuda_req_put(r);
		return;
	}
	/* Its waiter was killed: the slot goes back. */
	vcuda_open_undo(vd, r);
}

static void vcuda_ctrl_done(struct virtqueue *vq)
{
	struct vcuda_dev *vd = vq->vdev->priv;
	struct vcuda_req *r;
	unsigned long flags;
	unsigned int len;

	spin_lock_irqsave(&vd->lock, flags);
	do {
		virtqueue_disable_cb(vq);
		while ((r = virtqueue_get_buf(vq, &len)))
			vcuda_ctrl_answer(vd, r, len);
		if (unlikely(virtqueue_is_broken(vq)))
			break;
	} while (!virtqueue_enable_cb(vq));
	vcuda_backlog_flush(vd);
	spin_unlock_irqrestore(&vd->lock, flags);
}

static int vcuda_post_event(struct vcuda_dev *vd, struct virtio_vcuda_event *ev)
{
	struct scatterlist sg;

	sg_init_one(&sg, ev, sizeof(*ev));
	return virtqueue_add_inbuf(vd->event_vq, &sg, 1, ev, GFP_ATOMIC);
}

/* Called with vd->lock held. */
static void vcuda_event(struct vcuda_dev *vd, const struct virtio_vcuda_event *buf,
			unsigned int len)
{
	struct virtio_vcuda_event ev;
	struct vcuda_session *s;
	u32 type, slot;

	if (len < sizeof(ev)) {
		dev_warn_ratelimited(&vd->vdev->dev, "short event (%u bytes)\n", len);
		return;
	}
	/* Read the device's bytes once, then only our copy. */
	memcpy(&ev, buf, sizeof(ev));
	type = le32_to_cpu(ev.type);
	slot = le32_to_cpu(ev.slot);
	if (type != VIRTIO_VCUDA_EVENT_SESSION_LOST || slot >= vd->max_sessions) {
		dev_warn_ratelimited(&vd->vdev->dev, "bad event: type %u slot %u\n",
				     type, slot);
		return;
	}
	s = vd->slot_sess[slot];
	if (s)
		vcuda_session_lost(s);
}

static void vcuda_event_done(struct virtqueue *vq)
{
	struct vcuda_dev *vd = vq->vdev->priv;
	struct virtio_vcuda_event *ev;
	unsigned long flags;
	unsigned int len;
	bool posted = false;

	spin_lock_irqsave(&vd->lock, flags);
	do {
		virtqueue_disable_cb(vq);
		while ((ev = virtqueue_get_buf(vq, &len))) {
			vcuda_event(vd, ev, len);
			if (vcuda_post_event(vd, ev))
				dev_warn_ratelimited(&vd->vdev->dev,
						     "cannot re-post an event buffer\n");
			else
				posted = true;
		}
		if (unlikely(virtqueue_is_broken(vq)))
			break;
	} while (!virtqueue_enable_cb(vq));
	if (posted)
		virtqueue_kick(vq);
	spin_unlock_irqrestore(&vd->lock, flags);
}

/*
 * The configuration interrupt: the server signals completions through it.
 * On 6.1 it arrives in hard-IRQ context, so only wake here; the config
 * space is read by config_work.
 */
static void vcuda_config_changed(struct virtio_device *vdev)
{
	struct vcuda_dev *vd = vdev->priv;
	struct vcuda_session *s;
	unsigned long flags;

	spin_lock_irqsave(&vd->lock, flags);
	list_for_each_entry(s, &vd->open_sessions, open_node) {
		/* Pairs with atomic_xchg() in vcuda_ioc_wait(). */
		atomic_set(&s->pending, 1);
		wake_up(&s->wq);
	}
	if (!vd->gone)
		schedule_delayed_work(&vd->config_work, VCUDA_CONFIG_DELAY);
	spin_unlock_irqrestore(&vd->lock, flags);
}

static void vcuda_config_work(struct work_struct *work)
{
	struct vcuda_dev *vd = container_of(to_delayed_work(work),
					    struct vcuda_dev, config_work);
	struct vcuda_session *s;
	u32 state, gen;

	virtio_cread_le(vd->vdev, struct virtio_vcuda_config, server_state, &state);
	virtio_cread_le(vd->vdev, struct virtio_vcuda_config, server_gen, &gen);
	if (state != vd->server_state || gen != vd->server_gen)
		dev_info(&vd->vdev->dev, "server %s (generation %u)\n",
			 state == VIRTIO_VCUDA_SERVER_UP ? "up" : "down", gen);
	WRITE_ONCE(vd->server_state, state);
	WRITE_ONCE(vd->server_gen, gen);

	if (state == VIRTIO_VCUDA_SERVER_UP)
		return;
	/*
	 * The device sends SESSION_LOST for each session when the server goes;
	 * this only backs it up. Sessions of a later generation (opened after
	 * the server came back, after these values were read) are not touched.
	 */
	spin_lock_irq(&vd->lock);
	list_for_each_entry(s, &vd->open_sessions, open_node)
		if (s->server_gen == gen && !s->lost)
			vcuda_session_lost(s);
	spin_unlock_irq(&vd->lock);
}

/* VCUDA_IOC_OPEN, with s->open_lock held. */
static long vcuda_do_open(struct vcuda_session *s, struct vcuda_open_args *args)
{
	struct vcuda_dev *vd = s->dev;
	char comm[TASK_COMM_LEN];
	struct vcuda_req *r;
	s32 status;
	u64 size;
	u32 slot;
	int err;

	BUILD_BUG_ON(sizeof(r->req.comm) != TASK_COMM_LEN);
	BUILD_BUG_ON(sizeof(args->message) > sizeof(r->resp.message));

	r = vcuda_req_alloc(VIRTIO_VCUDA_CTRL_OPEN, GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->waiting = true;
	r->req.pid = cpu_to_le32(task_tgid_nr(current));
	r->req.uid = cpu_to_le32(from_kuid(&init_user_ns, current_uid()));
	get_task_comm(comm, current);
	memcpy(r->req.comm, comm, sizeof(r->req.comm));

	spin_lock_irq(&vd->lock);
	if (vd->gone) {
		spin_unlock_irq(&vd->lock);
		vcuda_req_put(r);
		return -ENODEV;
	}
	slot = find_first_zero_bit(vd->busy, vd->max_sessions);
	if (slot >= vd->max_sessions) {
		spin_unlock_irq(&vd->lock);
		vcuda_req_put(r);
		args->status = -EBUSY;
		snprintf(args->message, sizeof(args->message),
			 "all %u sessions of %s are in use", vd->max_sessions,
			 vd->name);
		return 0;
	}
	__set_bit(slot, vd->busy);
	vd->slot_sess[slot] = s;
	r->slot = slot;
	r->req.slot = cpu_to_le32(slot);
	refcount_inc(&r->ref);		/* the queue's */
	err = vcuda_ctrl_queue(vd, r);
	if (err) {
		vcuda_slot_free(vd, slot);
		vd->slot_sess[slot] = NULL;
		spin_unlock_irq(&vd->lock);
		refcount_dec(&r->ref);
		vcuda_req_put(r);
		return err == -ENOSPC ? -EAGAIN : -EIO;
	}
	spin_unlock_irq(&vd->lock);

	if (wait_for_completion_killable(&r->done)) {
		spin_lock_irq(&vd->lock);
		if (!r->answered) {
			/* The answer will close or free the slot. */
			r->waiting = false;
			vd->slot_sess[slot] = NULL;
			WRITE_ONCE(s->lost, false);
			spin_unlock_irq(&vd->lock);
			vcuda_req_put(r);
			return -EINTR;
		}
		/* Answered meanwhile: go on as if the wait had ended. */
		spin_unlock_irq(&vd->lock);
	}

	spin_lock_irq(&vd->lock);
	if (r->error || vd->gone) {
		/* remove() forgets the slots; only drop ours. */
		vd->slot_sess[slot] = NULL;
		spin_unlock_irq(&vd->lock);
		vcuda_req_put(r);
		return -ENODEV;
	}

	status = -EIO;
	size = le64_to_cpu(r->resp.region_size);
	if (r->resp_len < sizeof(r->resp)) {
		snprintf(args->message, sizeof(args->message),
			 "short answer from the device (%u bytes)", r->resp_len);
	} else if ((s32)le32_to_cpu(r->resp.status) != 0) {
		status = le32_to_cpu(r->resp.status);
		if (status > 0 || status < -MAX_ERRNO)
			status = -EIO;
		strscpy(args->message, (const char *)r->resp.message,
			sizeof(args->message));
	} else if (le32_to_cpu(r->resp.slot) != slot) {
		snprintf(args->message, sizeof(args->message),
			 "device answered for slot %u, not %u",
			 le32_to_cpu(r->resp.slot), slot);
	} else if (!size || size > vd->slot_size) {
		snprintf(args->message, sizeof(args->message),
			 "device gave a region of %llu bytes in a slot of %llu",
			 size, vd->slot_size);
	} else {
		status = 0;
		strscpy(args->message, (const char *)r->resp.message,
			sizeof(args->message));
	}

	args->status = status;
	if (status) {
		vd->slot_sess[slot] = NULL;
		WRITE_ONCE(s->lost, false);
		vcuda_open_undo(vd, r);	/* takes our reference */
		spin_unlock_irq(&vd->lock);
		return 0;
	}

	s->slot = slot;
	s->region_size = size;
	s->server_gen = le32_to_cpu(r->resp.server_gen);
	list_add_tail(&s->open_node, &vd->open_sessions);
	/* Pairs with smp_load_acquire() in mmap and the ioctls. */
	smp_store_release(&s->opened, true);
	spin_unlock_irq(&vd->lock);

	args->slot = slot;
	args->session_id = le32_to_cpu(r->resp.session_id);
	args->region_size = size;
	args->server_gen = s->server_gen;
	vcuda_req_put(r);

	/* The slot's tail, past what the process may map, is the guest-pin
	 * area (vcuda_gpin.h): offered when the host wrote its head there. */
	down_read(&vd->rwsem);
	if (!vd->gone && vd->slot_size > VC_GPIN_AREA_SIZE && size <= vd->slot_size - VC_GPIN_AREA_SIZE)
		vcuda_pins_attach(&s->pins, vd->shm_addr + (u64)slot * vd->slot_size + vd->slot_size -
					    VC_GPIN_AREA_SIZE);
	up_read(&vd->rwsem);
	return 0;
}

static long vcuda_ioc_open(struct vcuda_session *s, void __user *uarg)
{
	struct vcuda_open_args args;
	long ret;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.version != VCUDA_UAPI_VERSION)
		return -EINVAL;

	if (mutex_lock_killable(&s->open_lock))
		return -EINTR;
	if (s->opened) {
		ret = -EBUSY;
		goto out;
	}
	memset(&args, 0, sizeof(args));
	args.version = VCUDA_UAPI_VERSION;
	ret = vcuda_do_open(s, &args);
	if (!ret && copy_to_user(uarg, &args, sizeof(args)))
		ret = -EFAULT;	/* an opened session stays: release closes it */
out:
	mutex_unlock(&s->open_lock);
	return ret;
}

/* Eventfd semantics: any interrupt since the last WAIT returned counts. */
static long vcuda_ioc_wait(struct vcuda_session *s, void __user *uarg)
{
	struct vcuda_wait_args args;
	long left;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.reserved)
		return -EINVAL;
	if (!smp_load_acquire(&s->opened))
		return -ENOTCONN;

	if (args.timeout_ms) {
		left = wait_event_interruptible_timeout(s->wq,
				atomic_read(&s->pending) || READ_ONCE(s->lost),
				msecs_to_jiffies(args.timeout_ms));
		if (left < 0)
			return -EINTR;
	}
	if (READ_ONCE(s->lost))
		return -EPIPE;
	atomic_xchg(&s->pending, 0);
	return 0;
}

static long vcuda_ioc_kick(struct vcuda_session *s)
{
	struct vcuda_dev *vd = s->dev;
	long ret = -EPIPE;

	if (!smp_load_acquire(&s->opened))
		return -ENOTCONN;
	if (READ_ONCE(s->lost))
		return -EPIPE;

	down_read(&vd->rwsem);
	if (!vd->gone) {
		iowrite32(1, vd->doorbells + (size_t)s->slot * vd->doorbell_stride);
		ret = 0;
	}
	up_read(&vd->rwsem);
	return ret;
}

/*
 * VCUDA_IOC_PIN and VCUDA_IOC_UNPIN touch the guest-pin area, which lies in
 * the sessions BAR; remove() revokes it (vcuda_pins_revoke()) before the BAR
 * may be reused. No device lock is held here: pinning takes the process's
 * mmap lock, which mmap() holds while it takes vd->rwsem.
 */
static long vcuda_ioc_pins(struct vcuda_session *s, unsigned int cmd, void __user *uarg)
{
	if (!smp_load_acquire(&s->opened))
		return -ENOTCONN;
	if (cmd == VCUDA_IOC_PIN && READ_ONCE(s->lost))
		return -EPIPE;
	return cmd == VCUDA_IOC_PIN ? vcuda_pins_ioc_pin(&s->pins, uarg) : vcuda_pins_ioc_unpin(&s->pins, uarg);
}

static long vcuda_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct vcuda_session *s = file->private_data;

	switch (cmd) {
	case VCUDA_IOC_OPEN:
		return vcuda_ioc_open(s, (void __user *)arg);
	case VCUDA_IOC_WAIT:
		return vcuda_ioc_wait(s, (void __user *)arg);
	case VCUDA_IOC_KICK:
		return vcuda_ioc_kick(s);
	case VCUDA_IOC_PIN:
	case VCUDA_IOC_UNPIN:
		return vcuda_ioc_pins(s, cmd, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

/* Mappings are made whole at mmap; a fault means they were zapped. */
static vm_fault_t vcuda_vm_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct vcuda_vm_ops = {
	.fault = vcuda_vm_fault,
};

static int vcuda_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct vcuda_session *s = file->private_data;
	struct vcuda_dev *vd = s->dev;
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	phys_addr_t phys;
	pgprot_t prot;
	int err;

	if (!smp_load_acquire(&s->opened))
		return -ENOTCONN;
	if (READ_ONCE(s->lost))
		return -EPIPE;
	/* A private copy of device memory makes no sense. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	if (off < VCUDA_MMAP_DOORBELL) {
		/* The region, or any page range of it (the library maps
		 * pinned-pool pages a second time at registered memory). */
		if (off > PAGE_ALIGN(s->region_size) - VCUDA_MMAP_REGION ||
		    len > PAGE_ALIGN(s->region_size) - (off - VCUDA_MMAP_REGION))
			return -EINVAL;
		phys = vd->shm_addr + (u64)s->slot * vd->slot_size + (off - VCUDA_MMAP_REGION);
		/*
		 * The sessions BAR is host RAM: keep the shared mapping's
		 * default write-back type. Nothing else maps this BAR in the
		 * guest (the driver never ioremaps it), so PAT reserves WB
		 * for it rather than falling back to a conflicting UC-.
		 */
		prot = vma->vm_page_prot;
	} else if (off == VCUDA_MMAP_DOORBELL) {
		if (len != PAGE_SIZE)
			return -EINVAL;
		/* The stride is a page multiple: the page holds one doorbell. */
		phys = vd->db_addr + (u64)s->slot * vd->doorbell_stride;
		prot = pgprot_noncached(vma->vm_page_prot);
	} else {
		return -EINVAL;
	}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
#else
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
#endif
	vma->vm_ops = &vcuda_vm_ops;
	vma->vm_page_prot = prot;

	down_read(&vd->rwsem);
	if (vd->gone)
		err = -EPIPE;
	else
		err = io_remap_pfn_range(vma, vma->vm_start, PHYS_PFN(phys), len,
					 prot);
	up_read(&vd->rwsem);
	return err;
}

static int vcuda_open(struct inode *inode, struct file *file)
{
	/* misc_open() holds misc_mtx: remove() cannot finish meanwhile. */
	struct vcuda_dev *vd = container_of(file->private_data,
					    struct vcuda_dev, misc);
	struct vcuda_session *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->dev = vd;
	s->mapping = file->f_mapping;
	vcuda_pins_init(&s->pins);
	INIT_LIST_HEAD(&s->open_node);
	mutex_init(&s->open_lock);
	init_waitqueue_head(&s->wq);
	atomic_set(&s->pending, 0);

	kref_get(&vd->ref);
	mutex_lock(&vd->files_lock);
	list_add_tail(&s->file_node, &vd->files);
	mutex_unlock(&vd->files_lock);
	file->private_data = s;
	return nonseekable_open(inode, file);
}

static int vcuda_release(struct inode *inode, struct file *file)
{
	struct vcuda_session *s = file->private_data;
	struct vcuda_dev *vd = s->dev;
	struct vcuda_unpin *unpin;
	struct vcuda_req *r = NULL;

	mutex_lock(&vd->files_lock);
	list_del(&s->file_node);
	mutex_unlock(&vd->files_lock);

	/* Pins are unpinned once the device answers the CLOSE. */
	unpin = vcuda_pins_detach(&s->pins);
	/* Small, and a lost CLOSE would leak the slot for good. */
	if (s->opened) {
		r = vcuda_req_alloc(VIRTIO_VCUDA_CTRL_CLOSE,
				    GFP_KERNEL | __GFP_NOFAIL);
		r->unpin = unpin;
		unpin = NULL;
	}

	spin_lock_irq(&vd->lock);
	if (s->opened) {
		list_del(&s->open_node);
		vd->slot_sess[s->slot] = NULL;
		if (!vd->gone) {
			/* The slot stays busy until the device answers. */
			r->slot = s->slot;
			vcuda_send_close(vd, r);
			r = NULL;
		}
	}
	spin_unlock_irq(&vd->lock);

	if (unpin)
		vcuda_unpin_leak(unpin);
	if (r)
		vcuda_req_put(r);	/* not sent: its pins stay pinned */
	mutex_destroy(&s->open_lock);
	kfree(s);
	kref_put(&vd->ref, vcuda_dev_free);
	return 0;
}

static const struct file_operations vcuda_fops = {
	.owner = THIS_MODULE,
	.open = vcuda_open,
	.release = vcuda_release,
	.unlocked_ioctl = vcuda_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = vcuda_mmap,
	.llseek = noop_llseek,
};

static struct vcuda_dev *vcuda_from_misc(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct vcuda_dev, misc);
}

static ssize_t max_sessions_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", vcuda_from_misc(dev)->max_sessions);
}
static DEVICE_ATTR_RO(max_sessions);

static ssize_t slot_size_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", vcuda_from_misc(dev)->slot_size);
}
static DEVICE_ATTR_RO(slot_size);

static ssize_t server_state_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(vcuda_from_misc(dev)->server_state));
}
static DEVICE_ATTR_RO(server_state);

static ssize_t server_gen_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(vcuda_from_misc(dev)->server_gen));
}
static DEVICE_ATTR_RO(server_gen);

static ssize_t slots_busy_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct vcuda_dev *vd = vcuda_from_misc(dev);
	unsigned int n;

	spin_lock_irq(&vd->lock);
	n = bitmap_weight(vd->busy, vd->max_sessions);
	spin_unlock_irq(&vd->lock);
	return sysfs_emit(buf, "%u\n", n);
}
static DEVICE_ATTR_RO(slots_busy);

/* Module-wide: pages pinned in place for all sessions of every device. */
static ssize_t pinned_pages_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n", vcuda_pinned_pages());
}
static DEVICE_ATTR_RO(pinned_pages);

static struct attribute *vcuda_attrs[] = {
	&dev_attr_max_sessions.attr,
	&dev_attr_slot_size.attr,
	&dev_attr_server_state.attr,
	&dev_attr_server_gen.attr,
	&dev_attr_slots_busy.attr,
	&dev_attr_pinned_pages.attr,
	NULL,
};
ATTRIBUTE_GROUPS(vcuda);

static int vcuda_find_vqs(struct vcuda_dev *vd)
{
	struct virtqueue *vqs[2];
	int err;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	struct virtqueue_info info[2] = {
		[VIRTIO_VCUDA_VQ_CTRL] = { "ctrl", vcuda_ctrl_done },
		[VIRTIO_VCUDA_VQ_EVENT] = { "event", vcuda_event_done },
	};

	err = virtio_find_vqs(vd->vdev, 2, vqs, info, NULL);
#else
	vq_callback_t *callbacks[2] = {
		[VIRTIO_VCUDA_VQ_CTRL] = vcuda_ctrl_done,
		[VIRTIO_VCUDA_VQ_EVENT] = vcuda_event_done,
	};
	static const char * const names[2] = {
		[VIRTIO_VCUDA_VQ_CTRL] = "ctrl",
		[VIRTIO_VCUDA_VQ_EVENT] = "event",
	};

	err = virtio_find_vqs(vd->vdev, 2, vqs, callbacks, names, NULL);
#endif
	if (err)
		return err;
	vd->ctrl_vq = vqs[VIRTIO_VCUDA_VQ_CTRL];
	vd->event_vq = vqs[VIRTIO_VCUDA_VQ_EVENT];
	return 0;
}

/* Read and check the config space and both shared memory regions. */
static int vcuda_read_config(struct vcuda_dev *vd)
{
	struct virtio_device *vdev = vd->vdev;
	struct virtio_shm_region shm, db;
	u64 need;

	virtio_cread_le(vdev, struct virtio_vcuda_config, max_sessions,
			&vd->max_sessions);
	virtio_cread_le(vdev, struct virtio_vcuda_config, slot_size,
			&vd->slot_size);
	virtio_cread_le(vdev, struct virtio_vcuda_config, doorbell_stride,
			&vd->doorbell_stride);
	virtio_cread_le(vdev, struct virtio_vcuda_config, server_state,
			&vd->server_state);
	virtio_cread_le(vdev, struct virtio_vcuda_config, server_gen,
			&vd->server_gen);

	if (!vd->max_sessions || vd->max_sessions > VCUDA_MAX_SESSIONS) {
		dev_err(&vdev->dev, "max_sessions %u not in 1..%u\n",
			vd->max_sessions, VCUDA_MAX_SESSIONS);
		return -EINVAL;
	}
	/* User space maps whole pages: a page must hold one slot's bytes only. */
	if (!vd->slot_size || !PAGE_ALIGNED(vd->slot_size)) {
		dev_err(&vdev->dev, "slot_size %llu is not a page multiple\n",
			vd->slot_size);
		return -EINVAL;
	}
	if (!vd->doorbell_stride || !PAGE_ALIGNED(vd->doorbell_stride)) {
		dev_err(&vdev->dev, "doorbell_stride %u is not a page multiple\n",
			vd->doorbell_stride);
		return -EINVAL;
	}

	if (!virtio_get_shm_region(vdev, &shm, VIRTIO_VCUDA_SHM_SESSIONS) ||
	    !virtio_get_shm_region(vdev, &db, VIRTIO_VCUDA_SHM_DOORBELLS)) {
		dev_err(&vdev->dev, "shared memory regions missing\n");
		return -EINVAL;
	}
	if (check_mul_overflow((u64)vd->max_sessions, vd->slot_size, &need) ||
	    need > shm.len || !PAGE_ALIGNED(shm.addr)) {
		dev_err(&vdev->dev, "sessions region (%llu bytes at %#llx) cannot hold %u slots of %llu\n",
			shm.len, shm.addr, vd->max_sessions, vd->slot_size);
		return -EINVAL;
	}
	need = (u64)vd->max_sessions * vd->doorbell_stride;
	if (need > db.len || !PAGE_ALIGNED(db.addr)) {
		dev_err(&vdev->dev, "doorbell region (%llu bytes at %#llx) cannot hold %u doorbells %u apart\n",
			db.len, db.addr, vd->max_sessions, vd->doorbell_stride);
		return -EINVAL;
	}
	vd->shm_addr = shm.addr;
	vd->db_addr = db.addr;
	return 0;
}

static int vcuda_probe(struct virtio_device *vdev)
{
	struct vcuda_dev *vd;
	unsigned int i;
	int err;

	if (!vdev->config->get) {
		dev_err(&vdev->dev, "config space not accessible\n");
		return -EINVAL;
	}

	vd = kzalloc(sizeof(*vd), GFP_KERNEL);
	if (!vd)
		return -ENOMEM;
	kref_init(&vd->ref);
	vd->vdev = vdev;
	spin_lock_init(&vd->lock);
	init_rwsem(&vd->rwsem);
	mutex_init(&vd->files_lock);
	INIT_LIST_HEAD(&vd->open_sessions);
	INIT_LIST_HEAD(&vd->backlog);
	INIT_LIST_HEAD(&vd->files);
	INIT_DELAYED_WORK(&vd->config_work, vcuda_config_work);
	vdev->priv = vd;

	err = vcuda_read_config(vd);
	if (err)
		goto err_free;

	err = -ENOMEM;
	vd->busy = bitmap_zalloc(vd->max_sessions, GFP_KERNEL);
	vd->slot_sess = kcalloc(vd->max_sessions, sizeof(*vd->slot_sess),
				GFP_KERNEL);
	if (!vd->busy || !vd->slot_sess)
		goto err_free;

	err = vcuda_find_vqs(vd);
	if (err) {
		dev_err(&vdev->dev, "cannot set up virtqueues: %d\n", err);
		goto err_free;
	}

	/* A slot's doorbell is where the stride puts it; the rest is unused. */
	vd->doorbells = ioremap(vd->db_addr,
				(size_t)vd->max_sessions * vd->doorbell_stride);
	if (!vd->doorbells) {
		err = -ENOMEM;
		goto err_vqs;
	}

	/* One per slot can be outstanding, plus a few; never past the ring. */
	vd->nr_events = min_t(unsigned int,
			      vd->max_sessions + VCUDA_SPARE_EVENTS,
			      virtqueue_get_vring_size(vd->event_vq));
	vd->events = kcalloc(vd->nr_events, sizeof(*vd->events), GFP_KERNEL);
	if (!vd->events) {
		err = -ENOMEM;
		goto err_unmap;
	}

	err = ida_alloc(&vcuda_ida, GFP_KERNEL);
	if (err < 0)
		goto err_unmap;
	vd->index = err;
	snprintf(vd->name, sizeof(vd->name), "vcuda%d", vd->index);
	vd->misc.minor = MISC_DYNAMIC_MINOR;
	vd->misc.name = vd->name;
	vd->misc.fops = &vcuda_fops;
	vd->misc.parent = &vdev->dev;
	vd->misc.groups = vcuda_groups;
	vd->misc.mode = 0666;	/* no privilege needed (docs/VM.md) */

	virtio_device_ready(vdev);

	spin_lock_irq(&vd->lock);
	for (i = 0; i < vd->nr_events; i++) {
		err = vcuda_post_event(vd, &vd->events[i]);
		if (err)
			break;
	}
	if (!err)
		virtqueue_kick(vd->event_vq);
	spin_unlock_irq(&vd->lock);
	if (err) {
		dev_err(&vdev->dev, "cannot post event buffers: %d\n", err);
		goto err_reset;
	}

	/* Last: once the node exists, sessions may open. */
	err = misc_register(&vd->misc);
	if (err) {
		dev_err(&vdev->dev, "cannot register %s: %d\n", vd->name, err);
		goto err_reset;
	}

	dev_info(&vdev->dev, "%s: %u sessions of %llu MiB, server %s (generation %u)\n",
		 vd->name, vd->max_sessions, vd->slot_size >> 20,
		 vd->server_state == VIRTIO_VCUDA_SERVER_UP ? "up" : "down",
		 vd->server_gen);
	return 0;

err_reset:
	virtio_reset_device(vdev);
	while (virtqueue_detach_unused_buf(vd->event_vq))
		;
	ida_free(&vcuda_ida, vd->index);
err_unmap:
	iounmap(vd->doorbells);
err_vqs:
	vdev->config->del_vqs(vdev);
err_free:
	vdev->priv = NULL;
	kref_put(&vd->ref, vcuda_dev_free);
	return err;
}

/* Fail a request the device will never answer (called with vd->lock held). */
static void vcuda_req_abort(struct vcuda_req *r)
{
	r->answered = true;
	r->error = -ENODEV;
	if (r->type == VIRTIO_VCUDA_CTRL_OPEN && r->waiting)
		complete(&r->done);
	vcuda_req_put(r);
}

static void vcuda_remove(struct virtio_device *vdev)
{
	struct vcuda_dev *vd = vdev->priv;
	struct vcuda_session *s;
	struct vcuda_req *r, *tmp;

	/* No new OPEN, mapping or kick from here; sleepers see -EPIPE. */
	down_write(&vd->rwsem);
	spin_lock_irq(&vd->lock);
	vd->gone = true;
	list_for_each_entry(s, &vd->open_sessions, open_node)
		vcuda_session_lost(s);
	spin_unlock_irq(&vd->lock);
	up_write(&vd->rwsem);

	misc_deregister(&vd->misc);

	/*
	 * The BARs may be given to another device once this one is gone:
	 * take them out of every process that still maps them. A later
	 * access faults (SIGBUS).
	 */
	mutex_lock(&vd->files_lock);
	list_for_each_entry(s, &vd->files, file_node) {
		unmap_mapping_range(s->mapping, 0, 0, 1);
		/* Its pins stay pinned: the host never confirms their end now. */
		vcuda_pins_revoke(&s->pins);
	}
	mutex_unlock(&vd->files_lock);

	/* Stops the device and waits for running interrupt handlers. */
	virtio_reset_device(vdev);
	cancel_delayed_work_sync(&vd->config_work);

	spin_lock_irq(&vd->lock);
	while ((r = virtqueue_detach_unused_buf(vd->ctrl_vq)))
		vcuda_req_abort(r);
	list_for_each_entry_safe(r, tmp, &vd->backlog, backlog) {
		list_del_init(&r->backlog);
		vcuda_req_put(r);
	}
	while (virtqueue_detach_unused_buf(vd->event_vq))
		;
	spin_unlock_irq(&vd->lock);

	vdev->config->del_vqs(vdev);
	iounmap(vd->doorbells);
	ida_free(&vcuda_ida, vd->index);
	vdev->priv = NULL;
	kref_put(&vd->ref, vcuda_dev_free);
}

static const struct virtio_device_id vcuda_id_table[] = {
	{ VIRTIO_ID_VCUDA, VIRTIO_DEV_ANY_ID },
	{ 0 },
};
MODULE_DEVICE_TABLE(virtio, vcuda_id_table);

static struct virtio_driver vcuda_driver = {
	.driver.name = KBUILD_MODNAME,
	.driver.owner = THIS_MODULE,
	.id_table = vcuda_id_table,
	.probe = vcuda_probe,
	.remove = vcuda_remove,
	.config_changed = vcuda_config_changed,
};
static int __init vcuda_init(void)
{
	int err = vcuda_pin_module_init();

	if (err)
		return err;
	err = register_virtio_driver(&vcuda_driver);
	if (err)
		vcuda_pin_module_exit();
	return err;
}

static void __exit vcuda_exit(void)
{
	unregister_virtio_driver(&vcuda_driver);
	vcuda_pin_module_exit();
}

module_init(vcuda_init);
module_exit(vcuda_exit);

MODULE_DESCRIPTION("vcuda: CUDA API remoting over virtio (guest driver)");
MODULE_LICENSE("GPL");
