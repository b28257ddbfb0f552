/* SPDX-License-Identifier: MIT */
/* proto.c - decoding and checking vcuda-mgmtd's requests (proto.h). */
#include "proto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_MAX 128

struct op_info {
	const char *name;
	bool admin;
	unsigned required, allowed;
};

#define Q (VC_MF_GPU | VC_MF_GPUS | VC_MF_MEM_QUOTA | VC_MF_PINNED_QUOTA | VC_MF_WEIGHT | VC_MF_IDLE)

static const struct op_info ops[VC_MOP_COUNT_] = {
	[VC_MOP_STATUS] = {"status", false, 0, 0},
	[VC_MOP_GPU_LIST] = {"gpu.list", false, 0, 0},
	[VC_MOP_GPU_SHOW] = {"gpu.show", false, VC_MF_GPU, VC_MF_GPU},
	[VC_MOP_GPU_DRAIN] = {"gpu.drain", true, VC_MF_GPU, VC_MF_GPU},
	[VC_MOP_GPU_UNDRAIN] = {"gpu.undrain", true, VC_MF_GPU, VC_MF_GPU},
	[VC_MOP_GPU_RESCAN] = {"gpu.rescan", true, 0, 0},
	[VC_MOP_VM_ADD] = {"vm.add", true, VC_MF_NAME, VC_MF_NAME | Q},
	[VC_MOP_VM_REMOVE] = {"vm.remove", true, VC_MF_NAME, VC_MF_NAME | VC_MF_FORCE},
	[VC_MOP_VM_LIST] = {"vm.list", false, 0, 0},
	[VC_MOP_VM_SHOW] = {"vm.show", false, VC_MF_NAME, VC_MF_NAME},
	[VC_MOP_VM_SET] = {"vm.set", true, VC_MF_NAME, VC_MF_NAME | Q},
	[VC_MOP_SESSION_LIST] = {"session.list", false, 0, VC_MF_VM},
	[VC_MOP_EVENTS] = {"events", false, 0, VC_MF_SINCE | VC_MF_LIMIT},
};

static const struct {
	const char *key;
	unsigned bit;
} fields[] = {
	{"name", VC_MF_NAME}, {"vm", VC_MF_VM}, {"gpu", VC_MF_GPU},
	{"mem_quota", VC_MF_MEM_QUOTA}, {"pinned_quota", VC_MF_PINNED_QUOTA}, {"weight", VC_MF_WEIGHT},
	{"idle_timeout", VC_MF_IDLE}, {"force", VC_MF_FORCE}, {"since", VC_MF_SINCE}, {"limit", VC_MF_LIMIT},
	{"gpus", VC_MF_GPUS},
};

const char *vc_mop_name(enum vc_mop op)
{
	return (unsigned)op < VC_MOP_COUNT_ ? ops[op].name : "?";
}

bool vc_mop_changes_state(enum vc_mop op)
{
	return (unsigned)op < VC_MOP_COUNT_ && ops[op].admin;
}

static void say(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* An integer field in [lo, hi]. */
static int get_int(json_t *v, const char *key, int64_t lo, int64_t hi, int64_t *out, char *err, size_t len)
{
	json_int_t x;

	if (!json_is_integer(v)) {
		say(err, len, "field \"%s\" must be an integer from %" PRId64 " to %" PRId64, key, lo, hi);
		return -EINVAL;
	}
	x = json_integer_value(v);
	if (x < lo || x > hi) {
		say(err, len, "field \"%s\" is %lld: it must be from %" PRId64 " to %" PRId64, key, (long long)x, lo,
		    hi);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

/* A VM name (field @key) into @out. */
static int get_name(json_t *v, const char *key, char *out, char *err, size_t len)
{
	const char *s = json_string_value(v);

	if (!s) {
		say(err, len, "field \"%s\" must be a string (a VM name)", key);
		return -EINVAL;
	}
	if (!vc_vm_name_ok(s)) {
		say(err, len, "field \"%s\": invalid VM name: use 1 to %d of A-Z a-z 0-9 . _ -, not starting with . or -",
		    key, VC_VM_NAME_MAX);
		return -EINVAL;
	}
	strcpy(out, s);
	return 0;
}

static int get_gpu(json_t *v, char *out, char *err, size_t len)
{
	const char *s = json_string_value(v);

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0 || json_integer_value(v) > 65535) {
			say(err, len, "field \"gpu\": an index must be from 0 to 65535");
			return -EINVAL;
		}
		snprintf(out, VC_UUID_MAX, "%lld", (long long)json_integer_value(v));
		return 0;
	}
	if (!s || !*s || strlen(s) >= VC_GPULIST_MAX) {
		say(err, len, "field \"gpu\" must be a GPU index or UUID, or several joined by commas (a string of "
			      "1 to %d characters)", (int)VC_GPULIST_MAX - 1);
		return -EINVAL;
	}
	for (const char *p = s; *p; p++) {
		if (*p <= 0x20 || *p > 0x7e) {
			say(err, len, "field \"gpu\" must be a GPU index or UUID (printable, no spaces)");
			return -EINVAL;
		}
	}
	strcpy(out, s);
	return 0;
}

static int get_field(struct vc_mreq *r, const char *key, unsigned bit, json_t *v, char *err, size_t len)
{
	int64_t x = 0;
	int rc = 0;

	switch (bit) {
	case VC_MF_NAME:
		return get_name(v, key, r->name, err, len);
	case VC_MF_VM:
		return get_name(v, key, r->vm, err, len);
	case VC_MF_GPU:
		return get_gpu(v, r->gpu, err, len);
	case VC_MF_MEM_QUOTA:
		/* 1 MiB at least: a quota of nothing is a mistake, not "unlimited". */
		rc = get_int(v, key, INT64_C(1) << 20, INT64_C(1) << 50, &x, err, len);
		r->mem_quota = (uint64_t)x;
		break;
	case VC_MF_GPUS:
		rc = get_int(v, key, 1, VC_VM_GPUS_MAX, &x, err, len);
		r->gpus = (uint32_t)x;
		break;
	case VC_MF_PINNED_QUOTA:
		rc = get_int(v, key, 0, INT64_C(1) << 40, &x, err, len);
		r->pinned_quota = (uint64_t)x;
		break;
	case VC_MF_WEIGHT:
		rc = get_int(v, key, 1, VC_WEIGHT_MAX, &x, err, len);
		r->weight = (uint32_t)x;
		break;
	case VC_MF_IDLE:
		rc = get_int(v, key, 0, VC_IDLE_MAX, &x, err, len);
		r->idle_timeout = (uint32_t)x;
		break;
	case VC_MF_FORCE:
		if (!json_is_boolean(v)) {
			say(err, len, "field \"force\" must be true or false");
			return -EINVAL;
		}
		r->force = json_is_true(v);
		return 0;
	case VC_MF_SINCE:
		rc = get_int(v, key, 0, INT64_MAX, &x, err, len);
		r->since = x;
		break;
	case VC_MF_LIMIT:
		rc = get_int(v, key, 1, VC_MGMT_EVENTS_MAX, &x, err, len);
		r->limit = (uint32_t)x;
		break;
	default:
		return -EINVAL;
	}
	return rc;
}

static const struct op_info *find_op(const char *name, enum vc_mop *op)
{
	for (unsigned i = 0; i < VC_MOP_COUNT_; i++) {
		if (!strcmp(ops[i].name, name)) {
			*op = (enum vc_mop)i;
			return &ops[i];
		}
	}
	return NULL;
}

int vc_mreq_parse(const char *line, size_t len, struct vc_mreq *r, const char **code, char *err,
		  size_t errlen)
{
	const struct op_info *info;
	json_error_t jerr;
	const char *key, *opname;
	json_t *root, *v, *id;
	int rc = -EINVAL;

	memset(r, 0, sizeof(*r));
	*code = VC_MERR_BAD_REQUEST;
	if (len >= VC_MGMT_LINE_MAX) {
		say(err, errlen, "request too long (the limit is %d bytes a line)", VC_MGMT_LINE_MAX - 1);
		return -EINVAL;
	}
	/* No duplicate keys (which one would count?), no NUL in strings. */
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		say(err, errlen, "malformed JSON at character %d: %s; requests are one JSON object a line, "
				 "like {\"v\":%d,\"op\":\"vm.list\"}",
		    jerr.position, jerr.text, VC_MGMT_PROTO_VERSION);
		goto out; /* jansson's text may quote the client's bytes */
	}
	if (!json_is_object(root)) {
		say(err, errlen, "a request must be a JSON object, like {\"v\":%d,\"op\":\"vm.list\"}",
		    VC_MGMT_PROTO_VERSION);
		goto out;
	}
	/* The id first, so that every later error can be matched to it. */
	id = json_object_get(root, "id");
	if (id) {
		if (json_is_integer(id) || (json_is_string(id) && json_string_length(id) <= ID_MAX)) {
			r->id = json_incref(id);
		} else {
			say(err, errlen, "field \"id\" must be an integer or a string of at most %d bytes", ID_MAX);
			goto out;
		}
	}
	v = json_object_get(root, "v");
	if (!v) {
		say(err, errlen, "missing field \"v\" (the protocol version): requests look like "
				 "{\"v\":%d,\"op\":\"vm.list\"}", VC_MGMT_PROTO_VERSION);
		goto out;
	}
	if (!json_is_integer(v) || json_integer_value(v) != VC_MGMT_PROTO_VERSION) {
		*code = VC_MERR_VERSION;
		if (json_is_integer(v))
			say(err, errlen, "protocol version %lld is not supported: this vcuda-mgmtd speaks version %d "
					 "(use a vcudactl of the same release)",
			    (long long)json_integer_value(v), VC_MGMT_PROTO_VERSION);
		else
			say(err, errlen, "field \"v\" must be the protocol version, the integer %d",
			    VC_MGMT_PROTO_VERSION);
		goto out;
	}
	v = json_object_get(root, "op");
	opname = json_string_value(v);
	if (!opname) {
		say(err, errlen, "missing or non-string field \"op\" (the operation, like \"vm.list\")");
		goto out;
	}
	info = find_op(opname, &r->op);
	if (!info) {
		char shown[40];

		*code = VC_MERR_UNKNOWN_OP;
		snprintf(shown, sizeof(shown), "%s", opname);
		vc_printable(shown);
		say(err, errlen, "unknown operation \"%s%s\" (known: status, gpu.list, gpu.show, gpu.drain, "
				 "gpu.undrain, gpu.rescan, vm.add, vm.remove, vm.list, vm.show, vm.set, "
				 "session.list, events)",
		    shown, strlen(opname) >= sizeof(shown) ? "..." : "");
		goto out;
	}
	json_object_foreach(root, key, v) {
		unsigned bit = 0;
		char shown[40];

		if (!strcmp(key, "v") || !strcmp(key, "op") || !strcmp(key, "id"))
			continue;
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (!strcmp(fields[i].key, key))
				bit = fields[i].bit;
		if (!(bit & info->allowed)) {
			snprintf(shown, sizeof(shown), "%s", key);
			vc_printable(shown);
			say(err, errlen, "field \"%s%s\" is not known to %s", shown,
			    strlen(key) >= sizeof(shown) ? "..." : "", info->name);
			goto out;
		}
		if (get_field(r, key, bit, v, err, errlen))
			goto out;
		r->has |= bit;
	}
	if ((r->has & info->required) != info->required) {
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if ((info->required & fields[i].bit) && !(r->has & fields[i].bit)) {
				say(err, errlen, "%s needs the field \"%s\"", info->name, fields[i].key);
				break;
			}
		}
		goto out;
	}
	if (r->op == VC_MOP_VM_SET && !(r->has & ~VC_MF_NAME)) {
		say(err, errlen, "vm.set needs something to set: gpu, gpus, mem_quota, pinned_quota, weight or idle_timeout");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	if (rc)
		vc_printable(err); /* it may quote the client's bytes */
	return rc;
}

void vc_mreq_fini(struct vc_mreq *r)
{
	json_decref(r->id);
	r->id = NULL;
}

json_t *vc_mrep_ok(json_t *id)
{
	json_t *o = json_pack("{s:i, s:b}", "v", VC_MGMT_PROTO_VERSION, "ok", 1);

	if (o && id)
		json_object_set(o, "id", id);
	return o;
}

json_t *vc_mrep_err(json_t *id, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	json_t *o;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o = json_pack("{s:i, s:b, s:s, s:s}", "v", VC_MGMT_PROTO_VERSION, "ok", 0, "code", code, "error", msg);
	if (o && id)
		json_object_set(o, "id", id);
	return o;
}

char *vc_json_line(const json_t *v, size_t *len)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII);
	size_t n;
	char *t;

	if (!s)
		return NULL;
	n = strlen(s);
	t = realloc(s, n + 2);
	if (!t) {
		free(s);
		return NULL;
	}
	t[n] = '\n';
	t[n + 1] = 0;
	*len = n + 1;
	return t;
}
