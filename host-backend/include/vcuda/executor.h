/* SPDX-License-Identifier: MIT */
/*
 * vcuda/executor.h - what a session hands its executor and what it asks of it.
 *
 * The session (host-backend/core) owns the ring: it fetches, validates and
 * decodes commands, and calls the executor once per CUDA operation with the
 * request bytes already copied out of shared memory. The executor carries the
 * operation out and writes its results into a struct vc_cu_out. Whatever the
 * executor needs of the session later, off the serving thread (late replies
 * of synchronisations, the host-callback queue, the device-printf total, the
 * staging arena and the pinned pool), it reaches through the narrow set of
 * session services given to it at open. It never sees the ring itself.
 *
 * Results are CUDA driver error codes (CUresult values: 0 success, 2 out of
 * memory, ...), or -enum vc_fatal for a protocol violation that ends the
 * session.
 */
#ifndef VCUDA_EXECUTOR_H
#define VCUDA_EXECUTOR_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Where a CUDA operation's results go. A reply slot holds the operation's
 * reply struct in its first VC_CU_REP_MAX bytes and bulk data after them.
 * Asynchronous operations have no slot: rep points at scratch memory and data
 * is NULL.
 */
struct vc_cu_out {
	uint8_t *rep;      /* VC_CU_REP_MAX bytes */
	uint32_t rep_len;
	uint8_t *data;     /* reply data area, NULL when asynchronous */
	uint32_t data_cap;
	uint32_t data_len;
	bool bulk;         /* it moved arena data: publish progress right after it */
	bool console;      /* it may have flushed device printf: collect before the reply */
	bool has_slot;     /* a synchronous command: slot and seq below */
	bool fence;        /* the guest sent it fenced (VC_CMD_F_FENCE): slot has a fence word */
	bool fence_queued; /* the executor: the device writes the fence word once the work is done */
	uint32_t linger_us; /* the executor: the guest's next command likely comes when work
			     * it waits for without our reply ends, about this many us from
			     * now: the serving thread spins until then rather than sleeps */
	uint32_t slot;
	uint64_t seq;
};

/* An executor's answer meaning "the reply will be written later" (through
 * vc_session_services.reply, with the slot and seq of the vc_cu_out). */
#define VC_CU_DEFERRED 0x7fff0001

/* A piece of a guest's RAM file: what the guest_pin service hands out. */
struct vc_guest_piece {
	int fd;       /* the session's descriptor: map it, do not close it */
	uint64_t off; /* where the piece starts in the file, page aligned */
	uint64_t len; /* bytes, a multiple of 4096 */
};

/*
 * The session's services, valid from open until close returns. Every
 * function may be called from any thread of the executor's; none blocks.
 */
struct vc_session_services {
	void *arg; /* first argument of every function below */
	/** arena() - host address of [@off, @off + @len) of the staging arena, or NULL. */
	void *(*arena)(void *arg, uint64_t off, uint64_t len);
	/**
	 * reply() - answer synchronous command @seq in reply slot @slot with
	 * @status and no data, after the executor answered VC_CU_DEFERRED; the
	 * guest is woken if it sleeps.
	 */
	void (*reply)(void *arg, uint32_t slot, uint64_t seq, int32_t status);
	/**
	 * cb_push() - queue host callback @cookie for the guest (waking it if
	 * it sleeps); its place in the queue in *@index. Returns 0, or -EAGAIN
	 * while the guest's queue is full.
	 */
	int (*cb_push)(void *arg, uint64_t cookie, uint32_t *index);
	/** cb_done() - how many queued host callbacks the guest reports run. */
	uint32_t (*cb_done)(void *arg);
	/** console() - publish the bytes of device printf captured so far. */
	void (*console)(void *arg, uint64_t total);
	/**
	 * take_fd() - the descriptor the client passed on its socket under
	 * @token (the memfd of a pinned segment), now the caller's to close.
	 * Serving thread only. Returns it, -ENOENT, or -EOPNOTSUPP when the
	 * session has no such socket (a VM, a test).
	 */
	int (*take_fd)(void *arg, uint64_t token);
	/**
	 * guest_pin() - in a VM: the pieces of the guest's RAM behind pin
	 * (@entry, @gen) that the guest's kernel published for the guest
	 * process's [@addr, @addr + @len) (shared/vc_gpin.h), in order, in
	 * *@pieces (malloc'd, the caller frees it) and *@n. The pin is held
	 * until guest_unpin(). Serving thread only. Returns 0, -EOPNOTSUPP (no
	 * guest RAM: host-local, or QEMU shares none), -EBUSY (held already),
	 * -EINVAL (no such pin), -E2BIG (too many runs) or -ENOMEM.
	 */
	int (*guest_pin)(void *arg, uint32_t entry, uint64_t gen, uint64_t addr, uint64_t len,
			 struct vc_guest_piece **pieces, uint32_t *n);
	/**
	 * guest_unpin() - let pin (@entry, @gen) go, so that the guest's
	 * kernel may unpin its pages: with @held, one that guest_pin() gave,
	 * whose mapping is gone; else one that a failed request named, let go
	 * unless it is held (a mapping of it lives on), and never to be taken
	 * after. Serving thread only. Returns 0, -EOPNOTSUPP or -EINVAL.
	 */
	int (*guest_unpin)(void *arg, uint32_t entry, uint64_t gen, bool held);
	/** pinned - the region's pinned pool: the session's own mapping of it,
	 * and where it lies in the memfd (@fd -1: no memfd to map it again). */
	struct {
		uint8_t *base;
		uint64_t size;
		int fd;
		uint64_t fd_off;
		uint64_t seg_max; /* bytes of segments (take_fd, guest_pin) mapped at once; 0: none */
	} pinned;
	/** arena_file - where the staging arena lies in the region's memfd, so
	 * that the executor can map it a second time and register that mapping
	 * with its driver (@fd -1: no memfd to map it again). */
	struct {
		int fd;
		uint64_t fd_off;
		uint64_t size;
	} arena_file;
	/** fence_file - the page of the region's memfd that holds the reply
	 * slots' fence words (vc_ctrl.fence), for the executor to map again,
	 * register and have its driver write: the word of slot k at @word_off
	 * + 4 k (@fd -1: none). The executor never reads them. */
	struct {
		int fd;
		uint64_t fd_off;
		uint32_t word_off;
	} fence_file;
};

struct vc_executor_ops {
	const char *name;
	/**
	 * open() - make the per-session context from @factory, keeping @svc
	 * until close. Returns 0 or -errno.
	 */
	int (*open)(void *factory, const struct vc_session_services *svc, void **ctx);
	/** close() - free everything the session still holds; @svc is not used after it. */
	void (*close)(void *ctx);
	/**
	 * call() - CUDA operation @op (the VC_CU_* range, vc_cuda_wire.h) with
	 * its request bytes @req (private memory); results into @out. Returns a
	 * CUDA result, VC_CU_DEFERRED, or -enum vc_fatal.
	 */
	int (*call)(void *ctx, uint32_t op, const uint8_t *req, uint32_t len, struct vc_cu_out *out);
	/** busy() - work in flight that the guest waits for (may be NULL). Any thread. */
	bool (*busy)(void *ctx);
};

#endif /* VCUDA_EXECUTOR_H */
