/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - vcuda-mgmtd's counters and their Prometheus text (metrics.h;
 * names and units in docs/METRICS.md). The HTTP side is metrics_http.c.
 */
#include "metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto.h"
#include "servers.h"
#include "util.h"

enum { R_CLIENT_EXIT, R_IDLE, R_FATAL, R_CRASHED, R_STOPPED, R_STUCK, R_FAILED, R_UNKNOWN, NREASON };
static const char *const reasons[NREASON] = {"client-exit", "idle",  "fatal",  "crashed",
					     "stopped",     "stuck", "failed", "unknown"};

/* Management reply codes (proto.h), "ok" first; anything else is "other". */
static const char *const codes[] = {"ok", VC_MERR_BAD_REQUEST, VC_MERR_VERSION, VC_MERR_UNKNOWN_OP,
				    VC_MERR_PERMISSION, VC_MERR_NOT_FOUND, VC_MERR_EXISTS, VC_MERR_CONFLICT,
				    VC_MERR_NO_CAPACITY, VC_MERR_UNAVAILABLE, VC_MERR_INTERNAL, "other"};
#define NCODES (sizeof(codes) / sizeof(codes[0]))

/* Why mgmtd refused a QEMU connection, by its WELCOME status. */
static const struct {
	int status;
	const char *name;
} refusals[] = {
	{-EAGAIN, "backoff"},        /* the VM's server exited right after starting */
	{-ENOENT, "unknown-vm"},     /* removed, or the daemon is stopping */
	{-ENOSPC, "no-gpu"},         /* no GPU can take the VM */
	{-ECONNABORTED, "superseded"}, /* a newer connection came for the VM */
	{-EIO, "error"},             /* the database, or the server did not take it */
	{0, "other"},
};
#define NREFUSALS (sizeof(refusals) / sizeof(refusals[0]))

struct vm_counters {
	char vm[VC_VM_NAME_MAX + 1];
	uint64_t opened, closed[NREASON], freed, refused, starts, exits;
};

static struct {
	bool on;
	struct vm_counters *vms;
	size_t nvm, capvm;
	uint64_t requests[NCODES];
	uint64_t refused[NREFUSALS];
} g;

int vc_metrics_enable(void)
{
	g.on = true;
	return 0;
}

void vc_metrics_disable(void)
{
	free(g.vms);
	memset(&g, 0, sizeof(g));
}

/* The counters of @vm, made on first use; NULL when off, unnamed or out of memory. */
static struct vm_counters *vm_get(const char *vm)
{
	if (!g.on || !vm || !*vm)
		return NULL;
	for (size_t i = 0; i < g.nvm; i++)
		if (!strcmp(g.vms[i].vm, vm))
			return &g.vms[i];
	if (g.nvm == g.capvm) {
		size_t cap = g.capvm ? g.capvm * 2 : 16;
		struct vm_counters *n = realloc(g.vms, cap * sizeof(*n));

		if (!n)
			return NULL;
		g.vms = n;
		g.capvm = cap;
	}
	memset(&g.vms[g.nvm], 0, sizeof(g.vms[g.nvm]));
	snprintf(g.vms[g.nvm].vm, sizeof(g.vms[g.nvm].vm), "%s", vm);
	return &g.vms[g.nvm++];
}

void vc_metrics_event(const char *kind, const char *vm)
{
	struct vm_counters *c = kind ? vm_get(vm) : NULL;

	if (!c)
		return;
	if (!strcmp(kind, "session.opened"))
		c->opened++;
	else if (!strcmp(kind, "vm.refused"))
		c->refused++;
	else if (!strcmp(kind, "server.started"))
		c->starts++;
	else if (!strcmp(kind, "server.exited"))
		c->exits++;
}

void vc_metrics_session_closed(const char *vm, const char *reason, uint64_t freed)
{
	struct vm_counters *c = vm_get(vm);
	int r = R_UNKNOWN;

	if (!c)
		return;
	for (int i = 0; reason && i < R_UNKNOWN; i++)
		if (!strcmp(reasons[i], reason))
			r = i;
	c->closed[r]++;
	c->freed += freed;
}

void vc_metrics_qemu_refused(int status)
{
	size_t i;

	if (!g.on)
		return;
	for (i = 0; i < NREFUSALS - 1 && refusals[i].status != status; i++)
		;
	g.refused[i]++;
}

void vc_metrics_request(const json_t *reply)
{
	const char *code;
	size_t i;

	if (!g.on || !reply)
		return;
	code = json_is_true(json_object_get(reply, "ok")) ? "ok" : json_string_value(json_object_get(reply, "code"));
	for (i = 0; i < NCODES - 1 && (!code || strcmp(codes[i], code)); i++)
		;
	g.requests[i]++;
}

/* ---- the text ------------------------------------------------------------------------------ */

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

/* A label value: backslash, double quote and newline escaped (the format's rule). */
static const char *esc(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 3 < len; s++) {
		if (*s == '\\' || *s == '"') {
			out[o++] = '\\';
			out[o++] = *s;
		} else if (*s == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
	return out;
}

static void family(struct buf *b, const char *name, const char *type, const char *help)
{
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* What a running VM's server says now (its admin "status"). */
struct live {
	bool up;
	uint64_t mem_used, pinned_used, sessions, launches, busy_ns, refused[2];
	uint64_t dev_used[VC_VM_GPUS_MAX]; /* by the VM's GPU (its server's device ordinal) */
};

static uint64_t ju(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static void live_read(struct vc_mgmtd *d, const struct vc_vm *vm, struct live *l)
{
	struct vc_server *s = vc_server_find(d, vm->name);
	json_t *req, *rep = NULL;
	char err[256];

	memset(l, 0, sizeof(*l));
	if (!s || vm->state != VC_VM_RUNNING)
		return;
	req = json_pack("{s:s}", "op", "status");
	if (!req)
		return;
	if (vc_server_call(s, req, &rep, err, sizeof(err)) == 0) {
		l->up = true;
		l->mem_used = ju(rep, "mem_used");
		l->pinned_used = ju(rep, "pinned_used");
		l->sessions = json_array_size(json_object_get(rep, "sessions"));
		l->launches = ju(rep, "kernel_launches");
		l->busy_ns = ju(rep, "gpu_busy_ns");
		l->refused[0] = ju(rep, "mem_refused");
		l->refused[1] = ju(rep, "pinned_refused");
		for (unsigned k = 0; k < VC_VM_GPUS_MAX; k++) {
			json_t *e = json_array_get(json_object_get(rep, "mem_used_by_device"), k);

			l->dev_used[k] = json_is_integer(e) && json_integer_value(e) > 0 ? (uint64_t)json_integer_value(e) : 0;
		}
	}
	json_decref(rep);
	json_decref(req);
}

static const struct vm_counters *vm_find(const char *vm)
{
	for (size_t i = 0; i < g.nvm; i++)
		if (!strcmp(g.vms[i].vm, vm))
			return &g.vms[i];
	return NULL;
}

/* Forget the counters of VMs the database no longer has. */
static void vm_prune(const struct vc_vm *vms, size_t nvm)
{
	for (size_t i = 0; i < g.nvm;) {
		bool known = false;

		for (size_t k = 0; k < nvm && !known; k++)
			known = !strcmp(vms[k].name, g.vms[i].vm);
		if (known)
			i++;
		else
			g.vms[i] = g.vms[--g.nvm];
	}
}

static void daemon_part(struct vc_mgmtd *d, struct buf *b)
{
	char e1[256];

	family(b, "vcuda_mgmtd_info", "gauge", "vcuda-mgmtd's version and where its GPUs come from (always 1).");
	put(b, "vcuda_mgmtd_info{version=\"%s\",gpu_source=\"%s\"} 1\n", VC_MGMTD_VERSION,
	    esc(vc_gpus_kind(d->gpus), e1, sizeof(e1)));
	family(b, "vcuda_mgmtd_start_time_seconds", "gauge", "When vcuda-mgmtd started, in seconds since the epoch.");
	put(b, "vcuda_mgmtd_start_time_seconds %.3f\n",
	    (double)(vc_wall_ms() - (vc_now_ms() - d->started_ms)) / 1000.0);
	family(b, "vcuda_mgmt_requests_total", "counter",
	       "Management requests answered, by reply code (ok, or the refusal's code).");
	for (size_t i = 0; i < NCODES; i++)
		put(b, "vcuda_mgmt_requests_total{code=\"%s\"} %" PRIu64 "\n", codes[i], g.requests[i]);
	family(b, "vcuda_qemu_connections_refused_total", "counter",
	       "QEMU connections vcuda-mgmtd refused (a WELCOME frame saying why), by reason.");
	for (size_t i = 0; i < NREFUSALS; i++)
		put(b, "vcuda_qemu_connections_refused_total{reason=\"%s\"} %" PRIu64 "\n", refusals[i].name,
		    g.refused[i]);
}

static void gpu_part(struct buf *b, const struct vc_gpu *gpus, size_t ngpu, const struct vc_vm *vms,
		     const struct live *lv, size_t nvm)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{"vcuda_gpu_present", "1 if the GPU was seen at the last scan."},
		{"vcuda_gpu_healthy", "1 if the GPU is present and NVML (or the inventory) calls it healthy."},
		{"vcuda_gpu_drained", "1 if an administrator drained the GPU (it takes no new VMs)."},
		{"vcuda_gpu_memory_total_bytes", "The GPU's memory, in bytes."},
		{"vcuda_gpu_memory_quota_bytes", "Device memory promised to the VMs placed on the GPU (sum of their quotas; "
		 "all of it for a VM that has it whole), in bytes."},
		{"vcuda_gpu_memory_used_bytes", "Device memory the running VMs on the GPU hold, as their servers count it, in bytes."},
		{"vcuda_gpu_vms", "VMs placed on the GPU."},
		{"vcuda_gpu_sessions", "Open sessions (guest processes) on the GPU."},
	};
	char e1[VC_UUID_MAX * 2 + 4], e2[VC_GPU_NAME_MAX * 2 + 4], e3[VC_BUSID_MAX * 2 + 4];

	family(b, "vcuda_gpu_info", "gauge", "A GPU vcuda-mgmtd knows: its index, name and PCI bus id (always 1).");
	for (size_t i = 0; i < ngpu; i++)
		put(b, "vcuda_gpu_info{gpu=\"%s\",index=\"%d\",name=\"%s\",pci_bus_id=\"%s\"} 1\n",
		    esc(gpus[i].uuid, e1, sizeof(e1)), gpus[i].index, esc(gpus[i].name, e2, sizeof(e2)),
		    esc(gpus[i].pci_bus_id, e3, sizeof(e3)));
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		family(b, fam[f].name, "gauge", fam[f].help);
		for (size_t i = 0; i < ngpu; i++) {
			const struct vc_gpu *gp = &gpus[i];
			uint64_t v = 0;

			for (size_t k = 0; k < nvm; k++) {
				int pos = vc_vm_gpu_pos(&vms[k], gp->uuid);
				uint64_t held;

				if (pos < 0)
					continue;
				/* A VM of whole GPUs holds what its server counts on that device. */
				held = vc_vm_whole(&vms[k]) ? lv[k].dev_used[pos] : lv[k].mem_used;
				v += f == 4 ? vc_vm_promise(&vms[k], gp) : f == 5 ? held : f == 6 ? 1 : f == 7 ? lv[k].sessions : 0;
			}
			if (f == 0)
				v = gp->present;
			else if (f == 1)
				v = gp->present && gp->health == VC_GPU_HEALTHY;
			else if (f == 2)
				v = gp->drained;
			else if (f == 3)
				v = gp->mem_total;
			put(b, "%s{gpu=\"%s\"} %" PRIu64 "\n", fam[f].name, esc(gp->uuid, e1, sizeof(e1)), v);
		}
	}
}

/* A gauge per VM, from the database or its server's status. */
static void vm_gauges(struct buf *b, const struct vc_vm *vms, const struct live *lv, size_t nvm)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{"vcuda_vm_running", "1 while the VM's vcuda-server runs."},
		{"vcuda_vm_server_up", "1 if the VM's vcuda-server answered this scrape's status request."},
		{"vcuda_vm_memory_quota_bytes", "The VM's device memory quota, in bytes."},
		{"vcuda_vm_memory_used_bytes", "Device memory the VM's sessions hold, in bytes (0 when not running)."},
		{"vcuda_vm_pinned_quota_bytes", "The VM's pinned host memory quota, in bytes."},
		{"vcuda_vm_pinned_used_bytes", "Pinned host memory the VM's sessions hold, in bytes (0 when not running)."},
		{"vcuda_vm_weight", "The VM's compute weight (1..10000; 100 is the default)."},
		{"vcuda_vm_idle_timeout_seconds", "Sessions idle this long are reclaimed (0: never)."},
		{"vcuda_vm_sessions", "Open sessions (guest processes) of the VM."},
	};

	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		family(b, fam[f].name, "gauge", fam[f].help);
		for (size_t k = 0; k < nvm; k++) {
			const struct vc_vm *v = &vms[k];
			uint64_t x[] = {v->state == VC_VM_RUNNING, lv[k].up, v->mem_quota, lv[k].mem_used, v->pinned_quota,
					lv[k].pinned_used, v->weight, v->idle_timeout, lv[k].sessions};

			put(b, "%s{vm=\"%s\"} %" PRIu64 "\n", fam[f].name, v->name, x[f]);
		}
	}
}

static void vm_part(struct buf *b, const struct vc_vm *vms, const struct live *lv, size_t nvm)
{
	static const struct vm_counters zero;
	char e1[VC_GPULIST_MAX * 2 + 4], list[VC_GPULIST_MAX];

	family(b, "vcuda_vm_info", "gauge", "A VM vcuda-mgmtd knows, and the GPU it is placed on (always 1; a VM of "
	       "several GPUs: their UUIDs joined by commas).");
	for (size_t k = 0; k < nvm; k++) {
		vc_vm_gpu_join(&vms[k], list, sizeof(list));
		put(b, "vcuda_vm_info{vm=\"%s\",gpu=\"%s\"} 1\n", vms[k].name, esc(list, e1, sizeof(e1)));
	}
	vm_gauges(b, vms, lv, nvm);
	/* From the server, since it started: only for VMs whose server answered. */
	family(b, "vcuda_vm_kernel_launches_total", "counter",
	       "Kernel launches the driver accepted for the VM, since its vcuda-server started.");
	for (size_t k = 0; k < nvm; k++)
		if (lv[k].up)
			put(b, "vcuda_vm_kernel_launches_total{vm=\"%s\"} %" PRIu64 "\n", vms[k].name, lv[k].launches);
	family(b, "vcuda_vm_gpu_contended_seconds_total", "counter",
	       "Seconds the VM had GPU work in flight while another VM on its GPU competed (what weights share), "
	       "since its vcuda-server started.");
	for (size_t k = 0; k < nvm; k++)
		if (lv[k].up)
			put(b, "vcuda_vm_gpu_contended_seconds_total{vm=\"%s\"} %.9f\n", vms[k].name,
			    (double)lv[k].busy_ns / 1e9);
	family(b, "vcuda_vm_quota_refusals_total", "counter",
	       "Allocations refused with CUDA_ERROR_OUT_OF_MEMORY past the VM's quota, by resource, since its "
	       "vcuda-server started.");
	for (size_t k = 0; k < nvm; k++)
		for (int r = 0; lv[k].up && r < 2; r++)
			put(b, "vcuda_vm_quota_refusals_total{vm=\"%s\",resource=\"%s\"} %" PRIu64 "\n", vms[k].name,
			    r ? "pinned" : "memory", lv[k].refused[r]);
	/* Seen by this daemon, since it started. */
	static const struct {
		const char *name, *help;
	} fam[] = {
		{"vcuda_vm_sessions_opened_total", "Sessions of the VM that opened."},
		{"vcuda_vm_reclaimed_bytes_total", "Device memory freed by the VM's sessions that ended, in bytes."},
		{"vcuda_vm_connections_refused_total", "QEMU connections of the VM that were refused (vm.refused events)."},
		{"vcuda_vm_server_starts_total", "vcuda-server processes started for the VM."},
		{"vcuda_vm_server_exits_total", "vcuda-server processes of the VM that ended."},
	};
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		family(b, fam[f].name, "counter", fam[f].help);
		for (size_t k = 0; k < nvm; k++) {
			const struct vm_counters *c = vm_find(vms[k].name);

			if (!c)
				c = &zero;
			uint64_t x[] = {c->opened, c->freed, c->refused, c->starts, c->exits};

			put(b, "%s{vm=\"%s\"} %" PRIu64 "\n", fam[f].name, vms[k].name, x[f]);
		}
	}
	family(b, "vcuda_vm_sessions_closed_total", "counter",
	       "Sessions of the VM that ended, by reason (idle and client-exit are reclaims).");
	for (size_t k = 0; k < nvm; k++) {
		const struct vm_counters *c = vm_find(vms[k].name);

		for (int r = 0; r < NREASON; r++)
			put(b, "vcuda_vm_sessions_closed_total{vm=\"%s\",reason=\"%s\"} %" PRIu64 "\n", vms[k].name,
			    reasons[r], c ? c->closed[r] : 0);
	}
}

char *vc_metrics_render(struct vc_mgmtd *d, size_t *len)
{
	struct vc_gpu *gpus = NULL;
	struct vc_vm *vms = NULL;
	struct live *lv = NULL;
	size_t ngpu = 0, nvm = 0;
	struct buf b = {0};
	bool dbok;

	dbok = vc_db_gpu_list(d->db, &gpus, &ngpu) == 0 && vc_db_vm_list(d->db, &vms, &nvm) == 0;
	if (!dbok) {
		ngpu = nvm = 0;
		vc_mlog("metrics: cannot read the database: %s", vc_db_errmsg(d->db));
	}
	lv = calloc(nvm ? nvm : 1, sizeof(*lv));
	if (!lv)
		goto out;
	for (size_t k = 0; k < nvm; k++)
		live_read(d, &vms[k], &lv[k]);
	if (dbok)
		vm_prune(vms, nvm);
	daemon_part(d, &b);
	family(&b, "vcuda_mgmtd_database_ok", "gauge", "1 if this scrape could read the database.");
	put(&b, "vcuda_mgmtd_database_ok %d\n", dbok);
	gpu_part(&b, gpus, ngpu, vms, lv, nvm);
	vm_part(&b, vms, lv, nvm);
out:
	free(gpus);
	free(vms);
	free(lv);
	if (!lv || b.oom) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

int vc_metrics_parse_listen(const char *s, void *sa, unsigned *salen)
{
	struct sockaddr_in *a4 = sa;
	struct sockaddr_in6 *a6 = sa;
	char host[64];
	const char *port = s, *colon;
	unsigned long p;
	char *end;

	memset(sa, 0, sizeof(struct sockaddr_storage));
	host[0] = 0;
	if (*s == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = 0;
		port = close + 2;
	} else if ((colon = strrchr(s, ':'))) {
		if ((size_t)(colon - s) >= sizeof(host))
			return -EINVAL;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = 0;
		port = colon + 1;
	}
	errno = 0;
	p = strtoul(port, &end, 10);
	if (errno || end == port || *end || *port == '-' || *port == '+' || p == 0 || p > 65535)
		return -EINVAL;
	if (*s == '[') {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			return -EINVAL;
		*salen = sizeof(*a6);
		return 0;
	}
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)p);
	if (!host[0] || !strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return -EINVAL;
	*salen = sizeof(*a4);
	return 0;
}
