/* SPDX-License-Identifier: MIT */
/*
 * worker_vm.c - the process that serves one session slot of a VM's
 * virtio-vcuda device: it maps only that slot of the device's memory, lays
 * the session out to fit it (its last VC_GPIN_AREA_SIZE bytes aside: the
 * guest-pin area, shared/vc_gpin.h), reports to the listener (which answers QEMU) and
 * serves the ring until the listener closes the control socket, SIGTERM
 * arrives or the session goes FATAL.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "resources/acct.h"
#include "core/crash.h"
#include "core/region.h"
#include "vc_gpin.h"
#include "vc_sock.h"
#include "server/vm_link.h"
#include "server/worker_priv.h"

static void report(int ctl, const struct vc_vm_worker_args *a, int status, uint64_t used, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void report(int ctl, const struct vc_vm_worker_args *a, int status, uint64_t used, const char *fmt, ...)
{
	struct vc_vm_msg m;
	va_list ap;

	vc_vm_msg_init(&m, VC_VM_OPENED, a->slot);
	m.status = status;
	m.session_id = a->id;
	m.region_size = used;
	va_start(ap, fmt);
	vsnprintf(m.message, sizeof(m.message), fmt, ap);
	va_end(ap);
	if (vc_sock_send(ctl, &m, sizeof(m), NULL, 0))
		vc_log("vm slot %u: cannot report to the listener", a->slot);
}

int vc_worker_vm_main(const struct vc_server_config *cfg, const struct vc_vm_worker_args *a)
{
	const struct vc_executor_ops *ops;
	struct vc_session *s = NULL;
	struct vc_session_stats st;
	struct vc_layout layout;
	void *factory;
	char why[160];
	void *base, *area;
	int rc;

	vc_worker_catch_term();
	vc_crash_install(a->id);
	vc_worker_capture_stdout(a->id);
	vc_acct_client(a->pid, a->uid, a->comm);
	if (vc_worker_open_executor(cfg, &ops, &factory, why, sizeof(why))) {
		report(a->ctl_fd, a, -ENODEV, 0, "vcuda-server: %s", why);
		return 1;
	}
	/* The slot's last VC_GPIN_AREA_SIZE bytes are the guest-pin area,
	 * never part of the region that the guest process maps. */
	rc = a->slot_size > VC_GPIN_AREA_SIZE ? vc_layout_fit(&cfg->lreq, a->slot_size - VC_GPIN_AREA_SIZE, &layout)
					      : -ENOSPC;
	if (rc) {
		report(a->ctl_fd, a, -ENOSPC, 0,
		       "session slot of %" PRIu64 " MiB too small: raise the device's shm-size or lower max-sessions",
		       a->slot_size >> 20);
		return 1;
	}
	/* A slot's bytes are the previous session's: drop them (they read back
	 * as zeros) so that nothing passes from one guest process to another. */
	if (fallocate(a->mem_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a->region_off,
		      (off_t)a->slot_size) < 0) {
		rc = -errno;
		report(a->ctl_fd, a, rc, 0, "vcuda-server cannot clear the session slot: %s", strerror(-rc));
		return 1;
	}
	base = mmap(NULL, layout.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, a->mem_fd, (off_t)a->region_off);
	if (base == MAP_FAILED) {
		rc = -errno;
		report(a->ctl_fd, a, rc, 0, "vcuda-server cannot map the session slot: %s", strerror(-rc));
		return 1;
	}
	area = mmap(NULL, VC_GPIN_AREA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, a->mem_fd,
		    (off_t)(a->region_off + a->slot_size - VC_GPIN_AREA_SIZE));
	if (area == MAP_FAILED) {
		rc = -errno;
		report(a->ctl_fd, a, rc, 0, "vcuda-server cannot map the session slot: %s", strerror(-rc));
		munmap(base, layout.region_size);
		return 1;
	}
	/* Written before the report, which the guest's kernel reads the
	 * head after (the device answers OPEN only once we reported). */
	vc_gpin_host_init(area, a->nram ? VC_GPIN_F_RAM : 0);
	vc_region_prefault(base, layout.pinned_size ? layout.pinned_off : layout.region_size);
	struct vc_session_params p = {
		.base = base,
		.layout = &layout,
		.doorbell_fd = a->doorbell_fd,
		.complete_fd = a->complete_fd,
		.hangup_fd = a->ctl_fd,
		.mem_fd = a->mem_fd,
		.mem_off = a->region_off,
		.pinned_max = cfg->pinned_max,
		.gpin_area = area,
		.guest_ram = a->ram,
		.guest_ram_n = a->nram,
		.exec = ops,
		.exec_factory = factory,
		.id = a->id,
		.spin_us = cfg->spin_us,
		.verbose = cfg->verbose,
		.op_times = cfg->op_times,
	};
	rc = vc_session_create(&p, &s);
	if (rc) {
		report(a->ctl_fd, a, rc, 0, "vcuda-server cannot open a session: %s", strerror(-rc));
		munmap(area, VC_GPIN_AREA_SIZE);
		munmap(base, layout.region_size);
		return 1;
	}
	report(a->ctl_fd, a, 0, layout.region_size, "ok");
	vc_log("vm %s slot %u: session %u opened for guest pid %u uid %u (%s): %" PRIu64
	       " B used of the slot, arena %" PRIu64 " B, pinned pool %" PRIu64 " B, executor %s",
	       a->vm_name, a->slot, a->id, a->pid, a->uid, a->comm, layout.region_size, layout.arena_size,
	       layout.pinned_size, cfg->executor);

	rc = vc_worker_serve(s, a->id, a->ctl_fd);
	vc_session_get_stats(s, &st);
	if (rc == -EPROTO)
		vc_log("vm %s slot %u: session %u FATAL: %s, after %" PRIu64 " commands; resources freed",
		       a->vm_name, a->slot, a->id, vc_fatal_name(st.fatal), st.commands);
	else
		vc_log("vm %s slot %u: session %u closed after %" PRIu64 " commands, %" PRIu64
		       " of them failed asynchronously",
		       a->vm_name, a->slot, a->id, st.commands, st.async_failed);
	vc_log_op_times(s, a->id);
	vc_worker_close(s);
	vc_worker_release_stdout(a->id);
	munmap(area, VC_GPIN_AREA_SIZE);
	munmap(base, layout.region_size);
	return rc == -EPROTO ? VC_WORKER_EXIT_FATAL : rc ? 1 : 0;
}
