/* SPDX-License-Identifier: MIT */
/*
 * proto.h - vcuda-mgmtd's request protocol (docs/MGMT.md): one JSON object
 * per line, {"v":1,"op":"vm.add","name":"vm1",...}, answered by one JSON
 * object per line, {"v":1,"ok":true,...} or {"v":1,"ok":false,"code":C,
 * "error":"what went wrong and what to do"}. An optional "id" (a string or
 * an integer) is echoed in the reply.
 *
 * Requests come from any local user who can connect: everything is checked
 * here (version, operation, every field's type and range, unknown fields)
 * before the daemon acts on it.
 */
#ifndef VC_MGMT_PROTO_H
#define VC_MGMT_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define VC_MGMT_PROTO_VERSION 1
#define VC_MGMT_LINE_MAX 65536 /* a request or an admin-socket line, newline included */
#define VC_MGMT_EVENTS_MAX 1000

enum vc_mop {
	VC_MOP_STATUS,
	VC_MOP_GPU_LIST,
	VC_MOP_GPU_SHOW,
	VC_MOP_GPU_DRAIN,
	VC_MOP_GPU_UNDRAIN,
	VC_MOP_GPU_RESCAN,
	VC_MOP_VM_ADD,
	VC_MOP_VM_REMOVE,
	VC_MOP_VM_LIST,
	VC_MOP_VM_SHOW,
	VC_MOP_VM_SET,
	VC_MOP_SESSION_LIST,
	VC_MOP_EVENTS,
	VC_MOP_COUNT_
};

/* Fields a request may carry (bits of vc_mreq.has). */
enum {
	VC_MF_NAME = 1u << 0,
	VC_MF_VM = 1u << 1,
	VC_MF_GPU = 1u << 2,
	VC_MF_MEM_QUOTA = 1u << 3,
	VC_MF_PINNED_QUOTA = 1u << 4,
	VC_MF_WEIGHT = 1u << 5,
	VC_MF_IDLE = 1u << 6,
	VC_MF_FORCE = 1u << 7,
	VC_MF_SINCE = 1u << 8,
	VC_MF_LIMIT = 1u << 9,
	VC_MF_GPUS = 1u << 10,
};

struct vc_mreq {
	enum vc_mop op;
	unsigned has;                 /* VC_MF_* present */
	char name[VC_VM_NAME_MAX + 1];/* vm.*: the VM */
	char vm[VC_VM_NAME_MAX + 1];  /* session.list: only this VM */
	char gpu[VC_GPULIST_MAX];     /* an index ("1") or a UUID (or a unique prefix of one); vm.*: several, joined by commas */
	uint32_t gpus;                /* vm.*: how many GPUs the VM has */
	uint64_t mem_quota, pinned_quota;
	uint32_t weight, idle_timeout;
	bool force;
	int64_t since;
	uint32_t limit;
	json_t *id;                   /* echoed; NULL when absent (a reference we hold) */
};

/* Error codes in replies ("code"): what a client may act on. */
#define VC_MERR_BAD_REQUEST "bad-request"
#define VC_MERR_VERSION "unsupported-version"
#define VC_MERR_UNKNOWN_OP "unknown-op"
#define VC_MERR_PERMISSION "permission-denied"
#define VC_MERR_NOT_FOUND "not-found"
#define VC_MERR_EXISTS "exists"
#define VC_MERR_CONFLICT "conflict"
#define VC_MERR_NO_CAPACITY "no-capacity"
#define VC_MERR_UNAVAILABLE "unavailable"
#define VC_MERR_INTERNAL "internal"

/**
 * vc_mreq_parse() - decode and check one request line (@len bytes, without
 * its newline; need not be NUL terminated). On success fills @r (release it
 * with vc_mreq_fini()) and returns 0. On failure returns -EINVAL, sets
 * *@code to one of the VC_MERR_* codes, writes a sentence for the client in
 * @err and, when the request carried a usable "id", keeps it in @r->id (so
 * vc_mreq_fini() is needed either way).
 */
int vc_mreq_parse(const char *line, size_t len, struct vc_mreq *r, const char **code, char *err,
		  size_t errlen);

/** vc_mreq_fini() - release what vc_mreq_parse() kept. */
void vc_mreq_fini(struct vc_mreq *r);

/** vc_mop_name() - the wire name of @op ("vm.add"). */
const char *vc_mop_name(enum vc_mop op);

/** vc_mop_changes_state() - @op needs an administrator. */
bool vc_mop_changes_state(enum vc_mop op);

/** vc_mrep_ok() - {"v":1,"ok":true} with @id (may be NULL) echoed: a new reference. */
json_t *vc_mrep_ok(json_t *id);

/** vc_mrep_err() - {"v":1,"ok":false,"code":@code,"error":...} with @id echoed. */
json_t *vc_mrep_err(json_t *id, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * vc_json_line() - @v as compact JSON with a newline, in a malloc'd buffer
 * of *@len bytes (not NUL terminated for the caller's purposes); NULL when
 * out of memory.
 */
char *vc_json_line(const json_t *v, size_t *len);

#endif /* VC_MGMT_PROTO_H */
