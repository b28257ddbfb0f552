/* SPDX-License-Identifier: MIT */
/*
 * ops.c - what vcuda-mgmtd does (ops.h): requests, QEMU connections, GPU
 * rescans, restoring state at start.
 *
 * The database is the truth. A request reads what it needs from it, checks,
 * then makes its change and the change's event in one transaction; only
 * after that commits does it touch processes or sockets that must agree
 * (a VM's socket is made before its row and removed if the row fails).
 */
#include "ops.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "metrics.h"
#include "place.h"
#include "servers.h"
#include "util.h"
#include "vmsock.h"

#define EVENTS_DEFAULT 50
#define PRUNE_EVERY 1000

void vc_mgmtd_event(struct vc_mgmtd *d, const char *kind, const char *vm, const char *gpu, const char *fmt, ...)
{
	char msg[VC_EVENT_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	vc_metrics_event(kind, vm);
	if (vc_db_begin(d->db) || vc_db_event_add(d->db, kind, vm, gpu, "%s", msg) || vc_db_commit(d->db)) {
		vc_db_rollback(d->db);
		vc_mlog("database: cannot log event %s (%s): %s", kind, msg, vc_db_errmsg(d->db));
		return;
	}
	if (++d->events_added % PRUNE_EVERY == 0 && d->cfg.events_keep > 0)
		(void)vc_db_event_prune(d->db, d->cfg.events_keep);
}

/* ---- what is known -------------------------------------------------------------------- */

struct view {
	struct vc_gpu *gpus;
	size_t ngpu;
	struct vc_vm *vms;
	size_t nvm;
};

static int view_load(struct vc_mgmtd *d, struct view *v)
{
	memset(v, 0, sizeof(*v));
	if (vc_db_gpu_list(d->db, &v->gpus, &v->ngpu))
		return -EIO;
	if (vc_db_vm_list(d->db, &v->vms, &v->nvm)) {
		free(v->gpus);
		v->gpus = NULL;
		return -EIO;
	}
	return 0;
}

static void view_free(struct view *v)
{
	free(v->gpus);
	free(v->vms);
}

static struct vc_gpu *view_gpu(struct view *v, const char *uuid)
{
	for (size_t i = 0; uuid && uuid[0] && i < v->ngpu; i++)
		if (!strcmp(v->gpus[i].uuid, uuid))
			return &v->gpus[i];
	return NULL;
}

/*
 * A GPU named by a client: an index (among present GPUs), a UUID, or a
 * unique prefix of one (at least 4 characters). Returns its position in
 * @v->gpus, or -1 with a sentence in @err.
 */
static int gpu_resolve(struct view *v, const char *id, char *err, size_t errlen)
{
	int found = -1, matches = 0;
	size_t n = strlen(id);
	char *end;
	long idx = strtol(id, &end, 10);

	if (*id >= '0' && *id <= '9' && !*end) {
		for (size_t i = 0; i < v->ngpu; i++)
			if (v->gpus[i].present && v->gpus[i].index == idx)
				return (int)i;
		snprintf(err, errlen, "no GPU with index %ld (see 'vcudactl gpu list')", idx);
		return -1;
	}
	for (size_t i = 0; i < v->ngpu; i++) {
		if (!strcasecmp(v->gpus[i].uuid, id))
			return (int)i;
		if (n >= 4 && !strncasecmp(v->gpus[i].uuid, id, n)) {
			found = (int)i;
			matches++;
		}
	}
	if (matches == 1)
		return found;
	if (matches > 1)
		snprintf(err, errlen, "GPU '%s' is ambiguous: %d GPUs' UUIDs start with it; give more of the UUID", id,
			 matches);
	else
		snprintf(err, errlen, "no GPU '%s' (give an index or a UUID; see 'vcudactl gpu list')", id);
	return -1;
}

static json_t *gpu_json(const struct vc_gpu *g, const struct vc_place_gpu *load)
{
	json_t *o = json_pack("{s:i, s:s, s:s, s:I, s:s, s:s, s:s, s:b, s:b}", "index", g->index, "uuid", g->uuid,
			      "name", g->name, "memory_total", (json_int_t)g->mem_total, "pci_bus_id", g->pci_bus_id,
			      "state", vc_gpu_state_name(g), "health", g->health == VC_GPU_HEALTHY ? "healthy" : "unhealthy",
			      "drained", g->drained, "present", g->present);

	if (!o)
		return NULL;
	if (g->health_reason[0])
		json_object_set_new(o, "health_reason", json_string(g->health_reason));
	json_object_set_new(o, "numa_node", g->numa_node >= 0 ? json_integer(g->numa_node) : json_null());
	if (load) {
		json_object_set_new(o, "vms", json_integer(load->nvms));
		json_object_set_new(o, "promised", json_integer((json_int_t)load->promised));
		json_object_set_new(o, "unpromised", json_integer((json_int_t)vc_place_unpromised(load)));
		json_object_set_new(o, "weight", json_integer((json_int_t)load->weight));
		if (load->whole)
			json_object_set_new(o, "whole_vm", json_string(load->whole));
	}
	return o;
}

static json_t *vm_json(struct vc_mgmtd *d, const struct vc_vm *vm, struct view *v)
{
	struct vc_gpu *g = view_gpu(v, vm->gpu);
	struct vc_server *s = vc_server_find(d, vm->name);
	char path[108];
	json_t *o = json_pack("{s:s, s:I, s:I, s:i, s:i, s:s, s:I}", "name", vm->name, "mem_quota",
			      (json_int_t)vm->mem_quota, "pinned_quota", (json_int_t)vm->pinned_quota, "weight",
			      (int)vm->weight, "idle_timeout", (int)vm->idle_timeout, "state",
			      vm->state == VC_VM_RUNNING ? "running" : "stopped", "created_ms", (json_int_t)vm->created_ms);

	if (!o)
		return NULL;
	json_object_set_new(o, "gpu", vm->gpu[0] ? json_string(vm->gpu) : json_null());
	json_object_set_new(o, "gpu_index", g ? json_integer(g->index) : json_null());
	json_object_set_new(o, "gpu_state", g ? json_string(vc_gpu_state_name(g)) : json_null());
	/* Every GPU of the VM, in its devices' order (the first is "gpu"). */
	json_t *all = json_array();

	for (unsigned k = 0; k < vm->ngpus && k < VC_VM_GPUS_MAX && vc_vm_gpu(vm, k)[0]; k++) {
		struct vc_gpu *gk = view_gpu(v, vc_vm_gpu(vm, k));

		json_array_append_new(all, json_pack("{s:s, s:o, s:o}", "uuid", vc_vm_gpu(vm, k), "index",
						     gk ? json_integer(gk->index) : json_null(), "state",
						     gk ? json_string(vc_gpu_state_name(gk)) : json_null()));
	}
	json_object_set_new(o, "gpus", all);
	json_object_set_new(o, "whole_gpus", json_boolean(vc_vm_whole(vm)));
	json_object_set_new(o, "server_pid", vm->server_pid > 0 ? json_integer(vm->server_pid) : json_null());
	json_object_set_new(o, "started_ms", vm->started_ms ? json_integer(vm->started_ms) : json_null());
	if (s)
		json_object_set_new(o, "server_state", json_string(s->state == VC_SRV_STARTING ? "starting"
								    : s->state == VC_SRV_RUNNING ? "running" : "stopping"));
	if (vc_vmsock_path(d->cfg.run_dir, vm->name, path, sizeof(path)) == 0)
		json_object_set_new(o, "socket", json_string(path));
	return o;
}

static json_t *db_error(struct vc_mgmtd *d, const struct vc_mreq *r)
{
	vc_db_rollback(d->db);
	return vc_mrep_err(r->id, VC_MERR_INTERNAL, "database error: %s (see vcuda-mgmtd's log)",
			   vc_db_errmsg(d->db));
}

static const char *who(const struct vc_peer *p, char *buf, size_t len)
{
	snprintf(buf, len, "uid %u (pid %d)", (unsigned)p->uid, (int)p->pid);
	return buf;
}

/* ---- status, GPUs ---------------------------------------------------------------------- */

static json_t *op_status(struct vc_mgmtd *d, const struct vc_mreq *r, const struct vc_peer *peer)
{
	json_t *o = vc_mrep_ok(r->id);
	char admin[160];
	unsigned nsrv = 0;

	for (struct vc_server *s = d->servers; s; s = s->next)
		nsrv++;
	json_object_set_new(o, "daemon", json_pack("{s:s, s:i, s:i, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:b, s:i, s:I}",
		"version", VC_MGMTD_VERSION, "pid", (int)getpid(), "protocol", VC_MGMT_PROTO_VERSION,
		"gpu_source", vc_gpus_kind(d->gpus), "gpu_source_detail", vc_gpus_describe(d->gpus),
		"database", d->cfg.db_path, "schema", vc_db_schema_version(d->db),
		"run_dir", d->cfg.run_dir, "admins", vc_auth_describe(&d->auth, admin, sizeof(admin)),
		"server", d->cfg.server_bin, "server_ok", d->server_ok, "servers", (int)nsrv,
		"uptime_ms", (json_int_t)(vc_now_ms() - d->started_ms)));
	if (!d->server_ok)
		json_object_set_new(json_object_get(o, "daemon"), "server_problem", json_string(d->server_problem));
	json_object_set_new(o, "you", json_pack("{s:i, s:i, s:b}", "uid", (int)peer->uid, "gid", (int)peer->gid,
						"admin", peer->admin));
	return o;
}

static json_t *op_gpu_list(struct vc_mgmtd *d, const struct vc_mreq *r)
{
	struct vc_place_gpu *load;
	struct view v;
	json_t *o, *arr;

	if (view_load(d, &v))
		return db_error(d, r);
	load = calloc(v.ngpu ? v.ngpu : 1, sizeof(*load));
	if (!load) {
		view_free(&v);
		return vc_mrep_err(r->id, VC_MERR_INTERNAL, "out of memory");
	}
	vc_place_load(v.gpus, v.ngpu, v.vms, v.nvm, NULL, load);
	o = vc_mrep_ok(r->id);
	arr = json_array();
	for (size_t i = 0; i < v.ngpu; i++) {
		json_t *g = gpu_json(&v.gpus[i], &load[i]);

		if (r->op == VC_MOP_GPU_SHOW) {
			json_t *names = json_array();

			for (size_t k = 0; k < v.nvm; k++)
				if (vc_vm_gpu_pos(&v.vms[k], v.gpus[i].uuid) >= 0)
					json_array_append_new(names, json_string(v.vms[k].name));
			json_object_set_new(g, "vm_names", names);
		}
		json_array_append_new(arr, g);
	}
	json_object_set_new(o, "gpus", arr);
	json_object_set_new(o, "source", json_string(vc_gpus_kind(d->gpus)));
	free(load);
	view_free(&v);
	return o;
}

static json_t *op_gpu_show(struct vc_mgmtd *d, const struct vc_mreq *r)
{
	char err[256];
	struct view v;
	json_t *all, *o;
	int i;

	if (view_load(d, &v))
		return db_error(d, r);
	i = gpu_resolve(&v, r->gpu, err, sizeof(err));
	view_free(&v);
	if (i < 0)
		return vc_mrep_err(r->id, VC_MERR_NOT_FOUND, "%s", err);
	all = op_gpu_list(d, r);
	o = vc_mrep_ok(r->id);
	json_object_set(o, "gpu", json_array_get(json_object_get(all, "gpus"), (size_t)i));
	json_decref(all);
	return o;
}

static json_t *op_gpu_drain(struct vc_mgmtd *d, const struct vc_mreq *r, const struct vc_peer *peer, bool drain)
{
	char err[256], w[64], names[256] = "";
	unsigned nvms = 0;
	struct view v;
	struct vc_gpu *g;
	json_t *o;
	int i;

	if (view_load(d, &v))
		return db_error(d, r);
	i = gpu_resolve(&v, r->gpu, err, sizeof(err));
	if (i < 0) {
		view_free(&v);
		return vc_mrep_err(r->id, VC_MERR_NOT_FOUND, "%s", err);
	}
	g = &v.gpus[i];
	for (size_t k = 0; k < v.nvm; k++) {
		if (vc_vm_gpu_pos(&v.vms[k], g->uuid) < 0)
			continue;
		size_t l = strlen(names);

		snprintf(names + l, sizeof(names) - l, "%s%s", nvms ? ", " : "", v.vms[k].name);
		nvms++;
	}
	o = vc_mrep_ok(r->id);
	json_object_set_new(o, "changed", json_boolean(g->drained != drain));
	if (g->drained != drain) {
		if (vc_db_begin(d->db) || vc_db_gpu_set_drained(d->db, g->uuid, drain))
			goto err_db;
		if (drain) {
			if (vc_db_event_add(d->db, "gpu.drained", NULL, g->uuid,
					    "gpu %d (%s) drained by %s: it takes no new VMs; its %u VM%s%s%s%s move on their next open",
					    g->index, g->uuid, who(peer, w, sizeof(w)), nvms, nvms == 1 ? "" : "s",
					    nvms ? " (" : "", names, nvms ? ")" : ""))
				goto err_db;
		} else if (vc_db_event_add(d->db, "gpu.undrained", NULL, g->uuid,
					   "gpu %d (%s) undrained by %s: it takes new VMs again", g->index, g->uuid,
					   who(peer, w, sizeof(w)))) {
			goto err_db;
		}
		if (vc_db_commit(d->db))
			goto err_db;
		g->drained = drain;
	}
	json_object_set_new(o, "gpu", gpu_json(g, NULL));
	view_free(&v);
	return o;

err_db:
	json_decref(o);
	view_free(&v);
	return db_error(d, r);
}

int vc_ops_rescan(struct vc_mgmtd *d, const char *by, int *changes, char *err, size_t errlen)
{
	struct vc_gpu *found = NULL;
	size_t nfound = 0;
	struct view v;
	int rc, n = 0;

	rc = vc_gpus_scan(d->gpus, &found, &nfound, err, errlen);
	if (rc)
		return rc;
	if (view_load(d, &v)) {
		free(found);
		snprintf(err, errlen, "database error: %s", vc_db_errmsg(d->db));
		return -EIO;
	}
	if (vc_db_begin(d->db))
		goto err_db;
	for (size_t i = 0; i < nfound; i++) {
		struct vc_gpu *f = &found[i], *old = view_gpu(&v, f->uuid);
		char sz[32];

		if (vc_db_gpu_put(d->db, f))
			goto err_db;
		if (!old || !old->present) {
			n++;
			if (vc_db_event_add(d->db, old ? "gpu.returned" : "gpu.added", NULL, f->uuid,
					    "gpu %d %s: %s, %s, %s, PCI %s, %s%s (%s, %s)", f->index, old ? "is back" : "found",
					    f->uuid, f->name, vc_size_format(f->mem_total, sz, sizeof(sz)),
					    f->pci_bus_id[0] ? f->pci_bus_id : "-",
					    f->health == VC_GPU_HEALTHY ? "healthy" : "unhealthy: ", f->health_reason,
					    vc_gpus_kind(d->gpus), by))
				goto err_db;
		} else if (old->health != f->health) {
			n++;
			if (vc_db_event_add(d->db, f->health == VC_GPU_HEALTHY ? "gpu.healthy" : "gpu.unhealthy", NULL,
					    f->uuid, "gpu %d (%s) is %s%s%s; %s", f->index, f->uuid,
					    f->health == VC_GPU_HEALTHY ? "healthy again" : "unhealthy: ", f->health_reason,
					    f->health == VC_GPU_HEALTHY ? "" : ": it takes no new VMs and its VMs move on their next open",
					    by))
				goto err_db;
		}
	}
	for (size_t i = 0; i < v.ngpu; i++) {
		struct vc_gpu g = v.gpus[i];
		bool seen = false;

		for (size_t k = 0; k < nfound; k++)
			seen |= !strcmp(found[k].uuid, g.uuid);
		if (seen || !g.present)
			continue;
		n++;
		g.present = false;
		g.health = VC_GPU_UNHEALTHY;
		snprintf(g.health_reason, sizeof(g.health_reason), "not found by the last rescan");
		if (vc_db_gpu_put(d->db, &g) ||
		    vc_db_event_add(d->db, "gpu.vanished", NULL, g.uuid,
				    "gpu %d (%s) is gone (%s): its VMs move on their next open", g.index, g.uuid, by))
			goto err_db;
	}
	if (vc_db_commit(d->db))
		goto err_db;
	*changes = n;
	free(found);
	view_free(&v);
	return 0;

err_db:
	snprintf(err, errlen, "database error: %s", vc_db_errmsg(d->db));
	vc_db_rollback(d->db);
	free(found);
	view_free(&v);
	return -EIO;
}

static json_t *op_gpu_rescan(struct vc_mgmtd *d, const struct vc_mreq *r, const struct vc_peer *peer)
{
	char err[512], by[80], w[64];
	int changes = 0;
	json_t *o, *list;

	snprintf(by, sizeof(by), "rescan by %s", who(peer, w, sizeof(w)));
	if (vc_ops_rescan(d, by, &changes, err, sizeof(err)))
		return vc_mrep_err(r->id, VC_MERR_UNAVAILABLE, "%s", err);
	list = op_gpu_list(d, r);
	o = vc_mrep_ok(r->id);
	json_object_set_new(o, "changes", json_integer(changes));
	json_object_set(o, "gpus", json_object_get(list, "gpus"));
	json_object_set_new(o, "source", json_string(vc_gpus_kind(d->gpus)));
	json_decref(list);
	return o;
}

/* ---- VMs -------------------------------------------------------------------------------- */

/*
 * Choose a GPU for @vm (its own promise left out): @want names one (an
 * administrator's choice, checked), or the policy picks. Returns the
 * position in @v->gpus, or -1 with *@code and a sentence in @why.
 */
static int choose_gpu(struct view *v, const struct vc_vm *vm, const char *want, const char **code, char *why,
		      size_t whylen)
{
	struct vc_place_gpu *load = calloc(v->ngpu ? v->ngpu : 1, sizeof(*load));
	char a[32], b[32];
	int i;

	if (!load) {
		*code = VC_MERR_INTERNAL;
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	vc_place_load(v->gpus, v->ngpu, v->vms, v->nvm, vm->name, load);
	if (want) {
		i = gpu_resolve(v, want, why, whylen);
		if (i < 0) {
			*code = VC_MERR_NOT_FOUND;
		} else if (!vc_gpu_eligible(&v->gpus[i])) {
			*code = VC_MERR_CONFLICT;
			snprintf(why, whylen, "gpu %d is %s%s%s: it takes no new VMs (%s, or leave out --gpu to let "
					      "the policy choose)", v->gpus[i].index, vc_gpu_state_name(&v->gpus[i]),
				 v->gpus[i].health_reason[0] ? ": " : "", v->gpus[i].health_reason,
				 v->gpus[i].drained ? "undrain it with 'vcudactl gpu undrain'" : "choose another GPU");
			i = -1;
		} else if (load[i].whole) {
			*code = VC_MERR_NO_CAPACITY;
			snprintf(why, whylen, "gpu %d is VM %s's whole (a VM of several GPUs takes them whole); "
					      "choose another GPU", v->gpus[i].index, load[i].whole);
			i = -1;
		} else if (!vc_place_fits(&load[i], vm->mem_quota)) {
			*code = VC_MERR_NO_CAPACITY;
			snprintf(why, whylen, "gpu %d has %s not promised to other VMs, less than the memory quota %s; "
					      "lower --mem-quota or choose another GPU", v->gpus[i].index,
				 vc_size_format(vc_place_unpromised(&load[i]), a, sizeof(a)),
				 vc_size_format(vm->mem_quota, b, sizeof(b)));
			i = -1;
		} else {
			snprintf(why, whylen, "chosen by an administrator");
		}
	} else {
		i = vc_place_pick(load, v->ngpu, vm->mem_quota, why, whylen);
		if (i < 0) {
			*code = VC_MERR_NO_CAPACITY;
			i = -1;
		}
	}
	free(load);
	return i;
}

/* How many GPUs @list (ids joined by commas) names. */
static unsigned list_count(const char *list)
{
	unsigned n = 1;

	for (const char *p = list; *p; p++)
		n += *p == ',';
	return n;
}

/*
 * Choose @vm->ngpus GPUs for @vm (its own promise left out) and write them
 * into @vm: @want names them (an administrator's choice: ids joined by
 * commas, as many as @vm->ngpus, each checked), or the policy picks. One GPU
 * is choose_gpu()'s; several are taken whole. Returns 0, or -1 with *@code
 * and a sentence in @why. @first: the position in @v->gpus of the first.
 */
static int choose_gpus(struct view *v, struct vc_vm *vm, const char *want, int *first, const char **code, char *why,
		       size_t whylen)
{
	struct vc_place_gpu *load;
	int pos[VC_VM_GPUS_MAX];
	unsigned n = vm->ngpus ? vm->ngpus : 1, k = 0;
	int rc = -1;

	if (want && list_count(want) != n) {
		*code = VC_MERR_BAD_REQUEST;
		snprintf(why, whylen, "--gpu names %u GPU%s and the VM has %u; name as many as --gpus says",
			 list_count(want), list_count(want) == 1 ? "" : "s", n);
		return -1;
	}
	if (n == 1) {
		int i = choose_gpu(v, vm, want, code, why, whylen);

		if (i < 0)
			return -1;
		snprintf(vm->gpu, sizeof(vm->gpu), "%s", v->gpus[i].uuid);
		*first = i;
		return 0;
	}
	load = calloc(v->ngpu ? v->ngpu : 1, sizeof(*load));
	if (!load) {
		*code = VC_MERR_INTERNAL;
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	vc_place_load(v->gpus, v->ngpu, v->vms, v->nvm, vm->name, load);
	if (!want) {
		if (vc_place_pick_whole(load, v->ngpu, n, pos, why, whylen)) {
			*code = VC_MERR_NO_CAPACITY;
			goto out;
		}
		k = n;
	}
	for (const char *p = want; p && k < n; k++) {
		char id[VC_UUID_MAX];
		size_t len = strcspn(p, ",");
		int i;

		if (len == 0 || len >= sizeof(id)) {
			*code = VC_MERR_BAD_REQUEST;
			snprintf(why, whylen, "--gpu: GPU %u of the list is %s", k + 1, len ? "too long" : "empty");
			goto out;
		}
		memcpy(id, p, len);
		id[len] = '\0';
		p += len + (p[len] == ',');
		i = gpu_resolve(v, id, why, whylen);
		if (i < 0) {
			*code = VC_MERR_NOT_FOUND;
			goto out;
		}
		for (unsigned j = 0; j < k; j++) {
			if (pos[j] == i) {
				*code = VC_MERR_BAD_REQUEST;
				snprintf(why, whylen, "--gpu names gpu %d twice", v->gpus[i].index);
				goto out;
			}
		}
		if (!vc_place_free(&load[i])) {
			*code = v->gpus[i].present && !vc_gpu_eligible(&v->gpus[i]) ? VC_MERR_CONFLICT : VC_MERR_NO_CAPACITY;
			snprintf(why, whylen, "gpu %d %s: a VM of several GPUs takes them whole; choose GPUs with no VM, "
					      "or leave out --gpu to let the policy choose", v->gpus[i].index,
				 !vc_gpu_eligible(&v->gpus[i]) ? "takes no new VMs (drained or unhealthy)"
				 : load[i].whole ? "is another VM's whole" : "has VMs");
			goto out;
		}
		pos[k] = i;
	}
	if (want)
		snprintf(why, whylen, "chosen by an administrator");
	memset(vm->more, 0, sizeof(vm->more));
	snprintf(vm->gpu, sizeof(vm->gpu), "%s", v->gpus[pos[0]].uuid);
	for (unsigned j = 1; j < n; j++)
		snprintf(vm->more[j - 1], sizeof(vm->more[0]), "%s", v->gpus[pos[j]].uuid);
	*first = pos[0];
	rc = 0;
out:
	free(load);
	return rc;
}

/* The indices of @vm's GPUs, "0,1", into @out. */
static const char *gpu_indices(struct view *v, const struct vc_vm *vm, char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (unsigned k = 0; k < vm->ngpus && k < VC_VM_GPUS_MAX && at < len; k++) {
		struct vc_gpu *g = view_gpu(v, vc_vm_gpu(vm, k));

		at += (size_t)snprintf(out + at, len - at, g ? "%s%d" : "%s?", k ? "," : "", g ? g->index : 0);
	}
	return out;
}

/* The memory of @vm's GPUs together: a VM of whole GPUs may use all of it. */
static uint64_t gpus_memory(struct view *v, const struct vc_vm *vm)
{
	uint64_t sum = 0;

	for (unsigned k = 0; k < vm->ngpus && k < VC_VM_GPUS_MAX; k++) {
		struct vc_gpu *g = view_gpu(v, vc_vm_gpu(vm, k));

		sum += g ? g->mem_total : 0;
	}
	return sum;
}

static json_t *op_vm_add(struct vc_mgmtd *d, const struct vc_mreq *r, const struct vc_peer *peer)
{
	struct vc_vm vm = {0};
	char why[512], w[64], q1[32], q2[32], serr[300], gpus[VC_GPULIST_MAX], idx[64];
	const char *code = VC_MERR_INTERNAL;
	struct view v;
	json_t *o;
	int i, rc;

	if (view_load(d, &v))
		return db_error(d, r);
	for (size_t k = 0; k < v.nvm; k++) {
		if (!strcmp(v.vms[k].name, r->name)) {
			view_free(&v);
			return vc_mrep_err(r->id, VC_MERR_EXISTS, "VM %s exists already (see 'vcudactl vm show %s'); "
				"change it with 'vcudactl vm set' or remove it first", r->name, r->name);
		}
	}
	snprintf(vm.name, sizeof(vm.name), "%s", r->name);
	vm.mem_quota = r->has & VC_MF_MEM_QUOTA ? r->mem_quota : d->cfg.def_mem_quota;
	vm.pinned_quota = r->has & VC_MF_PINNED_QUOTA ? r->pinned_quota : d->cfg.def_pinned_quota;
	vm.weight = r->has & VC_MF_WEIGHT ? r->weight : d->cfg.def_weight;
	vm.idle_timeout = r->has & VC_MF_IDLE ? r->idle_timeout : d->cfg.def_idle_timeout;
	vm.created_ms = vc_wall_ms();
	vm.ngpus = r->has & VC_MF_GPUS ? r->gpus : r->has & VC_MF_GPU ? list_count(r->gpu) : 1;
	if (vm.ngpus > VC_VM_GPUS_MAX) {
		view_free(&v);
		return vc_mrep_err(r->id, VC_MERR_BAD_REQUEST, "cannot add VM %s: --gpu names %u GPUs; a VM has at "
				   "most %u", r->name, vm.ngpus, VC_VM_GPUS_MAX);
	}
	if (choose_gpus(&v, &vm, r->has & VC_MF_GPU ? r->gpu : NULL, &i, &code, why, sizeof(why))) {
		view_free(&v);
		return vc_mrep_err(r->id, code, "cannot add VM %s: %s", r->name, why);
	}
	/* Whole GPUs: the VM may use all of their memory unless told less. */
	if (vc_vm_whole(&vm) && !(r->has & VC_MF_MEM_QUOTA))
		vm.mem_quota = gpus_memory(&v, &vm);
	vc_vm_gpu_join(&vm, gpus, sizeof(gpus));
	if ((size_t)snprintf(serr, sizeof(serr), "%s/servers/%s.admin", d->cfg.run_dir, vm.name) >= 108) {
		view_free(&v);
		return vc_mrep_err(r->id, VC_MERR_BAD_REQUEST, "cannot add VM %s: its server's socket path %s is too "
				   "long for a unix socket; use a shorter name (or --run-dir)", r->name, serr);
	}
	rc = vc_vmsock_create(d, vm.name, serr, sizeof(serr));
	if (rc) {
		view_free(&v);
		return vc_mrep_err(r->id, VC_MERR_UNAVAILABLE, "cannot add VM %s: %s", r->name, serr);
	}
	if (vc_db_begin(d->db) || vc_db_vm_insert(d->db, &vm) ||
	    vc_db_event_add(d->db, "vm.added", vm.name, gpus,
			    "VM %s added by %s on gpu%s %s (%s%s): %s; mem quota %s, pinned quota %s, weight %u, idle timeout %u s",
			    vm.name, who(peer, w, sizeof(w)), vm.ngpus > 1 ? "s" : "", gpu_indices(&v, &vm, idx, sizeof(idx)),
			    gpus, vm.ngpus > 1 ? ", whole" : "", why,
			    vc_size_format(vm.mem_quota, q1, sizeof(q1)), vc_size_format(vm.pinned_quota, q2, sizeof(q2)),
			    vm.weight, vm.idle_timeout) ||
	    vc_db_commit(d->db)) {
		vc_vmsock_destroy(d, vm.name);
		view_free(&v);
		return db_error(d, r);
	}
	o = vc_mrep_ok(r->id);
	json_object_set_new(o, "vm", vm_json(d, &vm, &v));
	json_object_set_new(o, "placement", json_string(why));
	view_free(&v);
	return o;
}

static json_t *op_vm_remove(struct vc_mgmtd *d, const struct vc_mreq *r, const struct vc_peer *peer)
{
	struct vc_server *s = vc_server_find(d, r->name);
	struct vc_vm vm;
	char w[64], gpus[VC_GPULIST_MAX];
	int rc = vc_db_vm_get(d->db, r->name, &vm);

	if (rc == -ENOENT)
		return vc_mrep_err(r->id, VC_MERR_NOT_FOUND, "no VM %s (see 'vcudactl vm list')", r->name);
	if (rc)
		return db_error(d, r);
	if (s && s->state != VC_SRV_STOPPING && !r->force)
		return vc_mrep_err(r->id, VC_MERR_CONFLICT, "VM %s is running (vcuda-server pid %d, %zu session%s): "
			"stop its QEMU first, or remove it anyway with --force (its sessions end)",
			r->name, (int)s->pid, s->nsess, s->nsess == 1 ? "" : "s");
	vc_vm_gpu_join(&vm, gpus, sizeof(gpus));
	if (vc_db_begin(d->db) || vc_db_vm_delete(d->db, r->name) ||
	    vc_db_event_add(d->db, "vm.removed", r->name, gpus, "VM %s removed by %s%s", r->name,
			    who(peer, w, sizeof(w)), s ? "; stopping its vcuda-server" : "") ||
	    vc_db_commit(d->db))
		return db_error(d, r);
	vc_vmsock_destroy(d, r->name);
	if (s) {
		s->removed = true;
		vc_server_stop(d, s, "its VM was removed");
	}
	return vc_mrep_ok(r->id);
}

static json_t *op_vm_list(struct vc_mgmtd *d, const struct vc_mreq *r)
{
	struct view v;
	json_t *o, *arr;

	if (view_load(d, &v))
		return db_error(d, r);
	o = vc_mrep_ok(r->id);
	arr = json_array();
	for (size_t i = 0; i < v.nvm; i++)
		json_array_append_new(arr, vm_json(d, &v.vms[i], &v));
	json_object_set_new(o, "vms", arr);
	view_free(&v);
	return o;
}

/* The server's own view ("status") of @s, with the VM's name on each session. */
static json_t *server_status(struct vc_server *s, char *err, size_t errlen)
{
	json_t *req = json_pack("{s:s}", "op", "status"), *rep = NULL;
	int rc;

	if (!req)
		return NULL;
	rc = vc_server_call(s, req, &rep, err, errlen);
	json_decref(req);
	return rc ? NULL : rep;
}

static json_t *op_vm_show(struct vc_mgmtd *d, const struct vc_mreq *r)
{
	struct vc_server *s = vc_server_find(d, r->name);
	struct view v;
	json_t *o, *vmj = NULL;
	char err[256];

	if (view_load(d, &v))
		return db_error(d, r);
	for (size_t i = 0; i < v.nvm; i++)
		if (!strcmp(v.vms[i].name, r->name))
			vmj = vm_json(d, &v.vms[i], &v);
	view_free(&v);
	if (!vmj)
		return vc_mrep_err(r->id, VC_MERR_NOT_FOUND, "no VM %s (see 'vcudactl vm list')", r->name);
	if (s) {
		json_t *st = server_status(s, err, sizeof(err));

		if (st) {
			json_object_del(st, "ok");
			json_object_set_new(vmj, "live", st);
		} else {
			json_object_set_new(vmj, "live_error", json_string(err));
		}
	}
	o = vc_mrep_ok(r->id);
	json_object_set_new(o, "vm", vmj);
	return o;
}

static json_t *op_vm_set(struct vc_mgmtd *d, const struct vc_mreq *r, const struct vc_peer *peer)
{
	struct vc_server *s = vc_server_find(d, r->name);
	const char *code = VC_MERR_INTERNAL;
	char why[512] = "", w[64], q1[32], q2[32], err[256], gpu_note[160] = "", gpus[VC_GPULIST_MAX];
	struct vc_vm *cur = NULL, vm;
	struct view v;
	json_t *o;

	if (view_load(d, &v))
		return db_error(d, r);
	for (size_t i = 0; i < v.nvm; i++)
		if (!strcmp(v.vms[i].name, r->name))
			cur = &v.vms[i];
	if (!cur) {
		view_free(&v);
		return vc_mrep_err(r->id, VC_MERR_NOT_FOUND, "no VM %s (see 'vcudactl vm list')", r->name);
	}
	vm = *cur;
	if (r->has & VC_MF_MEM_QUOTA)
		vm.mem_quota = r->mem_quota;
	if (r->has & VC_MF_PINNED_QUOTA)
		vm.pinned_quota = r->pinned_quota;
	if (r->has & VC_MF_WEIGHT)
		vm.weight = r->weight;
	if (r->has & VC_MF_IDLE)
		vm.idle_timeout = r->idle_timeout;
	if (r->has & (VC_MF_GPU | VC_MF_GPUS)) {
		char list[VC_GPULIST_MAX];
		int i;

		vm.ngpus = r->has & VC_MF_GPUS ? r->gpus : list_count(r->gpu);
		if (vm.ngpus > VC_VM_GPUS_MAX) {
			view_free(&v);
			return vc_mrep_err(r->id, VC_MERR_BAD_REQUEST, "cannot set VM %s: --gpu names %u GPUs; a VM has "
					   "at most %u", r->name, vm.ngpus, VC_VM_GPUS_MAX);
		}
		if (choose_gpus(&v, &vm, r->has & VC_MF_GPU ? r->gpu : NULL, &i, &code, why, sizeof(why))) {
			view_free(&v);
			return vc_mrep_err(r->id, code, "cannot set VM %s: %s", r->name, why);
		}
		/* Whole GPUs whose memory was its quota (the default): their memory now. */
		if (vc_vm_whole(&vm) && !(r->has & VC_MF_MEM_QUOTA) &&
		    (!vc_vm_whole(cur) || cur->mem_quota == gpus_memory(&v, cur)))
			vm.mem_quota = gpus_memory(&v, &vm);
		vc_vm_gpu_join(&vm, list, sizeof(list));
		if (s && strcmp(s->gpu, list))
			snprintf(gpu_note, sizeof(gpu_note), "; it moves to gpu%s %s when its QEMU reconnects",
				 vm.ngpus > 1 ? "s" : "", gpu_indices(&v, &vm, list, sizeof(list)));
	} else if ((r->has & VC_MF_MEM_QUOTA) && vm.gpu[0] && !vc_vm_whole(&vm) && vm.mem_quota > cur->mem_quota) {
		/* A larger promise must still fit on its GPU. */
		struct vc_gpu *g = view_gpu(&v, vm.gpu);

		if (g && vc_gpu_eligible(g) && choose_gpu(&v, &vm, vm.gpu, &code, why, sizeof(why)) < 0) {
			view_free(&v);
			return vc_mrep_err(r->id, code, "cannot set VM %s: %s", r->name, why);
		}
	}
	/* A running server gets the new limits first: if it refuses, nothing
	 * changes, so the database never promises what the server does not do. */
	if (s && (r->has & (VC_MF_MEM_QUOTA | VC_MF_PINNED_QUOTA | VC_MF_WEIGHT | VC_MF_IDLE))) {
		json_t *req = json_pack("{s:s}", "op", "set"), *rep = NULL;
		int rc;

		if (r->has & VC_MF_MEM_QUOTA)
			json_object_set_new(req, "mem_quota", json_integer((json_int_t)vm.mem_quota));
		if (r->has & VC_MF_PINNED_QUOTA)
			json_object_set_new(req, "pinned_quota", json_integer((json_int_t)vm.pinned_quota));
		if (r->has & VC_MF_WEIGHT)
			json_object_set_new(req, "weight", json_integer(vm.weight));
		if (r->has & VC_MF_IDLE)
			json_object_set_new(req, "idle_timeout", json_integer(vm.idle_timeout));
		rc = vc_server_call(s, req, &rep, err, sizeof(err));
		json_decref(req);
		json_decref(rep);
		if (rc) {
			view_free(&v);
			return vc_mrep_err(r->id, rc == -EAGAIN ? VC_MERR_UNAVAILABLE : VC_MERR_CONFLICT,
					   "VM %s unchanged: its running vcuda-server did not apply the change: %s", r->name, err);
		}
	}
	vc_vm_gpu_join(&vm, gpus, sizeof(gpus));
	if (vc_db_begin(d->db) || vc_db_vm_update(d->db, &vm) ||
	    vc_db_event_add(d->db, "vm.changed", vm.name, gpus,
			    "VM %s changed by %s: gpu %s, mem quota %s, pinned quota %s, weight %u, idle timeout %u s%s%s",
			    vm.name, who(peer, w, sizeof(w)), gpus[0] ? gpus : "none",
			    vc_size_format(vm.mem_quota, q1, sizeof(q1)), vc_size_format(vm.pinned_quota, q2, sizeof(q2)),
			    vm.weight, vm.idle_timeout, s ? "; applied to its running server" : "", gpu_note) ||
	    vc_db_commit(d->db)) {
		view_free(&v);
		return db_error(d, r);
	}
	o = vc_mrep_ok(r->id);
	json_object_set_new(o, "vm", vm_json(d, &vm, &v));
	json_object_set_new(o, "live", json_boolean(s != NULL));
	if (gpu_note[0])
		json_object_set_new(o, "note", json_string(gpu_note + 2));
	view_free(&v);
	return o;
}

static json_t *op_session_list(struct vc_mgmtd *d, const struct vc_mreq *r)
{
	json_t *o = vc_mrep_ok(r->id), *sessions = json_array(), *errors = json_array();
	struct vc_vm vm;

	if ((r->has & VC_MF_VM) && vc_db_vm_get(d->db, r->vm, &vm)) {
		json_decref(o);
		json_decref(sessions);
		json_decref(errors);
		return vc_mrep_err(r->id, VC_MERR_NOT_FOUND, "no VM %s (see 'vcudactl vm list')", r->vm);
	}
	for (struct vc_server *s = d->servers; s; s = s->next) {
		char err[256];
		json_t *st, *list, *e;
		size_t i;

		if (((r->has & VC_MF_VM) && strcmp(s->vm, r->vm)) || s->removed)
			continue;
		st = server_status(s, err, sizeof(err));
		if (!st) {
			json_array_append_new(errors, json_pack("{s:s, s:s}", "vm", s->vm, "error", err));
			continue;
		}
		list = json_object_get(st, "sessions");
		json_array_foreach(list, i, e) {
			if (!json_is_object(e))
				continue;
			json_t *c = json_deep_copy(e);

			json_object_set_new(c, "vm", json_string(s->vm));
			json_object_set_new(c, "gpu", json_string(s->gpu));
			json_array_append_new(sessions, c);
		}
		json_decref(st);
	}
	json_object_set_new(o, "sessions", sessions);
	json_object_set_new(o, "errors", errors);
	return o;
}

static json_t *op_events(struct vc_mgmtd *d, const struct vc_mreq *r)
{
	struct vc_event *ev;
	size_t n;
	json_t *o, *arr;

	if (vc_db_event_list(d->db, r->has & VC_MF_SINCE ? r->since : 0, r->has & VC_MF_LIMIT ? r->limit : EVENTS_DEFAULT,
			     &ev, &n))
		return db_error(d, r);
	o = vc_mrep_ok(r->id);
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:I, s:I, s:s, s:s, s:s, s:s}", "id", (json_int_t)ev[i].id,
						     "time_ms", (json_int_t)ev[i].time_ms, "kind", ev[i].kind, "vm", ev[i].vm,
						     "gpu", ev[i].gpu, "message", ev[i].message));
	json_object_set_new(o, "events", arr);
	free(ev);
	return o;
}

json_t *vc_ops_handle(struct vc_mgmtd *d, const struct vc_mreq *r, const struct vc_peer *peer)
{
	if (vc_mop_changes_state(r->op) && !peer->admin) {
		char admin[160];

		return vc_mrep_err(r->id, VC_MERR_PERMISSION, "permission denied: %s changes state, which needs %s; "
				   "you are uid %u", vc_mop_name(r->op), vc_auth_describe(&d->auth, admin, sizeof(admin)),
				   (unsigned)peer->uid);
	}
	switch (r->op) {
	case VC_MOP_STATUS: return op_status(d, r, peer);
	case VC_MOP_GPU_LIST: return op_gpu_list(d, r);
	case VC_MOP_GPU_SHOW: return op_gpu_show(d, r);
	case VC_MOP_GPU_DRAIN: return op_gpu_drain(d, r, peer, true);
	case VC_MOP_GPU_UNDRAIN: return op_gpu_drain(d, r, peer, false);
	case VC_MOP_GPU_RESCAN: return op_gpu_rescan(d, r, peer);
	case VC_MOP_VM_ADD: return op_vm_add(d, r, peer);
	case VC_MOP_VM_REMOVE: return op_vm_remove(d, r, peer);
	case VC_MOP_VM_LIST: return op_vm_list(d, r);
	case VC_MOP_VM_SHOW: return op_vm_show(d, r);
	case VC_MOP_VM_SET: return op_vm_set(d, r, peer);
	case VC_MOP_SESSION_LIST: return op_session_list(d, r);
	case VC_MOP_EVENTS: return op_events(d, r);
	default: break;
	}
	return vc_mrep_err(r->id, VC_MERR_UNKNOWN_OP, "operation not implemented");
}

/* ---- QEMU connects ------------------------------------------------------------------------ */

void vc_ops_vm_connected(struct vc_mgmtd *d, const char *name, int conn)
{
	const char *code = NULL;
	struct vc_server *s;
	struct vc_gpu *g;
	struct view v;
	struct vc_vm *vm = NULL;
	char why[512], err[512], gpus[VC_GPULIST_MAX];
	bool moving = false;

	if (view_load(d, &v)) {
		vc_vmsock_refuse(conn, -EIO, "vcuda-mgmtd: database error; see its log");
		return;
	}
	for (size_t i = 0; i < v.nvm; i++)
		if (!strcmp(v.vms[i].name, name))
			vm = &v.vms[i];
	if (!vm) {
		vc_vmsock_refuse(conn, -ENOENT, "vcuda-mgmtd: no VM %s", name);
		goto out;
	}
	/* Placed where it may run: a GPU that is drained, unhealthy or gone
	 * keeps the VMs it has only until they next open. A VM of several
	 * GPUs is placed again whole when one of them may not run it. */
	g = NULL;
	for (unsigned k = 0; k < vm->ngpus && k < VC_VM_GPUS_MAX && !moving; k++) {
		g = view_gpu(&v, vc_vm_gpu(vm, k));
		moving = !g || !vc_gpu_eligible(g);
	}
	if (moving) {
		char old[VC_GPULIST_MAX], oldidx[64], idx[64], state[VC_REASON_MAX + 48];
		bool placed = !vm->gpu[0];
		int i;

		vc_vm_gpu_join(vm, old, sizeof(old));
		gpu_indices(&v, vm, oldidx, sizeof(oldidx));
		state[0] = '\0';
		if (g && vm->ngpus > 1)
			snprintf(state, sizeof(state), "gpu %d ", g->index);
		snprintf(state + strlen(state), sizeof(state) - strlen(state), "%s%s%s", g ? vc_gpu_state_name(g) : "gone",
			 g && g->health_reason[0] ? ": " : "", g ? g->health_reason : "");
		if (choose_gpus(&v, vm, NULL, &i, &code, why, sizeof(why))) {
			vc_mgmtd_event(d, "vm.refused", vm->name, old, "QEMU's connection for %s refused: %s",
				       vm->name, why);
			vc_vmsock_refuse(conn, -ENOSPC, "vcuda-mgmtd: no GPU for %.40s; see 'vcudactl events'", vm->name);
			goto out;
		}
		vc_vm_gpu_join(vm, gpus, sizeof(gpus));
		gpu_indices(&v, vm, idx, sizeof(idx));
		if (vc_db_begin(d->db) || vc_db_vm_update(d->db, vm) ||
		    (!placed ? vc_db_event_add(d->db, "vm.moved", vm->name, gpus, "VM %s moved from gpu %s (%s, %s) to gpu %s (%s): %s",
					       vm->name, oldidx, old, state, idx, gpus, why)
			     : vc_db_event_add(d->db, "vm.placed", vm->name, gpus, "VM %s placed on gpu %s (%s): %s",
					       vm->name, idx, gpus, why)) ||
		    vc_db_commit(d->db)) {
			vc_db_rollback(d->db);
			vc_vmsock_refuse(conn, -EIO, "vcuda-mgmtd: database error; see its log");
			goto out;
		}
	}
	vc_vm_gpu_join(vm, gpus, sizeof(gpus));
	s = vc_server_find(d, vm->name);
	if (s) {
		/* One waiting connection per VM: QEMU's latest replaces an older one. */
		if (s->pending_conn >= 0)
			vc_vmsock_refuse(s->pending_conn, -ECONNABORTED, "vcuda-mgmtd: superseded by a newer connection");
		s->pending_conn = conn;
		s->adopt_at_ms = vc_now_ms();
		if (s->state != VC_SRV_STOPPING && strcmp(s->gpu, gpus))
			vc_server_stop(d, s, "its VM moves to another GPU");
		/* RUNNING: adopted from the timers, at once; STARTING: once it
		 * answers; STOPPING: a new server once it has ended. */
		goto out;
	}
	if (vc_server_start(d, vm, conn, err, sizeof(err))) {
		vc_mgmtd_event(d, "vm.refused", vm->name, gpus, "QEMU's connection for %s refused: %s", vm->name, err);
		/* the connection was closed by vc_server_start */
	}
out:
	view_free(&v);
}

/* ---- start ---------------------------------------------------------------------------------- */

int vc_ops_restore(struct vc_mgmtd *d, char *err, size_t errlen)
{
	struct vc_vm *vms;
	size_t n;

	if (vc_db_vm_list(d->db, &vms, &n)) {
		snprintf(err, errlen, "database error: %s", vc_db_errmsg(d->db));
		return -EIO;
	}
	for (size_t i = 0; i < n; i++) {
		char serr[300];
		int rc = vc_vmsock_create(d, vms[i].name, serr, sizeof(serr));

		if (rc)
			vc_mlog("vm %s: %s; its QEMU cannot connect until this is fixed", vms[i].name, serr);
		rc = vc_server_reattach(d, &vms[i]);
		if (rc && vms[i].state == VC_VM_RUNNING) {
			struct vc_vm vm = vms[i];

			vm.state = VC_VM_STOPPED;
			vm.server_pid = 0;
			if (vc_db_begin(d->db) || vc_db_vm_update(d->db, &vm) ||
			    vc_db_event_add(d->db, "server.gone", vm.name, vm.gpu, /* its first GPU */
					    "vcuda-server of %s (pid %d) did not outlive the previous vcuda-mgmtd; %s is "
					    "stopped until its QEMU reconnects", vm.name, (int)vms[i].server_pid, vm.name) ||
			    vc_db_commit(d->db))
				vc_db_rollback(d->db);
		}
	}
	free(vms);
	vc_server_stop_orphans(d);
	return 0;
}
