/* SPDX-License-Identifier: MIT */
/*
 * vc_cuda_green.h - wire structs of green contexts, device resources and the
 * driver's error logs. Both sides are hand-written (guest-lib/libcuda/green.c
 * and logs.c, host-backend/cuda/green.c and logs.c); opcodes come from the
 * generated vc_cuda_wire.h. Part of the ABI: the build hashes this file into
 * VC_ABI_HASH.
 *
 * A CUdevResource's public part (type and union) travels as the driver wrote
 * it; its internal part never does. The host keeps each resource it handed
 * out in a table of the session's and puts the entry's id where the driver
 * keeps its internal bytes; a resource coming back is that entry, looked up
 * by id, so a guest can never hand the driver internal bytes of its own.
 * CUgreenCtx and CUdevResourceDesc are ids of the session's handle table.
 */
#ifndef VC_CUDA_GREEN_H
#define VC_CUDA_GREEN_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "vc_cuda_wire.h"

/* A resource's public union, as cuda.h lays it out (RESOURCE_ABI_EXTERNAL_BYTES). */
#define VC_CU_RES_UNION 48u
static_assert(sizeof(CUdevResource) == 4 + 92 + VC_CU_RES_UNION, "CUdevResource is the 13.0 layout");
static_assert(offsetof(CUdevResource, sm) == 96, "the union follows the internal bytes");

/* Groups one split makes at most here (a GPU has fewer SMs than this). */
#define VC_CU_SPLIT_MAX 256u
/* Resources one cuDevResourceGenerateDesc carries at most (fits the smallest ring). */
#define VC_CU_RES_DESC_MAX 48u
/* Bytes of driver log one dump asks the driver for at most (it keeps 25600). */
#define VC_CU_LOGS_MAX 65536u

/* A resource on the wire: its type, the host's entry id, its public union. */
struct vc_cu_res {
	int32_t type;
	uint32_t pad;
	uint64_t id;
	uint8_t u[VC_CU_RES_UNION];
};
static_assert(sizeof(struct vc_cu_res) == 64, "a resource travels as 64 bytes");

/*
 * cuDeviceGetDevResource (dev), cuCtxGetDevResource (handle: a context id),
 * cuGreenCtxGetDevResource (handle: a green context id).
 */
struct vc_cu_req_res_get {
	uint64_t ctx;
	uint64_t handle;
	int32_t dev;
	int32_t type;
};
struct vc_cu_rep_res_get {
	struct vc_cu_res res;
};

/*
 * cuDevSmResourceSplitByCount: the input resource and the arguments. The
 * reply says how many groups the driver made and, in its data, the first of
 * them (then the remaining resource when asked for); the rest come with
 * vcGreenSplitRead, which reads the host's copy of the last split from an
 * index on.
 */
struct vc_cu_req_res_split {
	uint64_t ctx;
	struct vc_cu_res input;
	uint32_t nb_groups;      /* the caller's *nbGroups (with a result array) */
	uint32_t want_result;    /* 0: only count the groups */
	uint32_t want_remaining;
	uint32_t flags;
	uint32_t min_count;
	uint32_t pad;
};
struct vc_cu_rep_res_split {
	uint32_t nb_groups; /* *nbGroups after the call */
	uint32_t total;     /* resources kept: the groups, then the remaining one if asked */
};
struct vc_cu_req_res_read {
	uint64_t ctx;
	uint32_t first; /* index of the first resource wanted */
	uint32_t pad;
};

/* cuDevResourceGenerateDesc: count resources (struct vc_cu_res) follow. */
struct vc_cu_req_res_desc {
	uint64_t ctx;
	uint32_t count;
	uint32_t pad;
};
struct vc_cu_rep_res_desc {
	uint64_t desc;
};

/*
 * cuGreenCtxCreate (handle: a descriptor id, dev, flags), cuGreenCtxDestroy
 * (handle: the green context id). The reply names the green context and the
 * context cuCtxFromGreenCtx converts it into (the host converts it at once,
 * so that the context id is the same however it is reached).
 */
struct vc_cu_req_green {
	uint64_t ctx;
	uint64_t handle;
	int32_t dev;
	uint32_t flags;
};
struct vc_cu_rep_green {
	uint64_t green;
	uint64_t context;
};

/*
 * The driver's error logs (vcLogs). What is kept on the host for one dump
 * is read a reply's data at a time (VC_CU_LOGS_READ, from offset).
 */
enum {
	VC_CU_LOGS_DUMP = 1,  /* cuLogsDumpToMemory: size bytes asked, iter (if has_iter) */
	VC_CU_LOGS_READ = 2,  /* the last dump's text from offset */
	VC_CU_LOGS_WATCH = 3, /* on (flags 1) or off (0): the host's driver callback */
	VC_CU_LOGS_FETCH = 4, /* messages the callback queued since the last fetch */
};
struct vc_cu_req_logs {
	uint64_t ctx;
	uint64_t size;
	uint32_t op;
	uint32_t iter;
	uint32_t has_iter;
	uint32_t flags;
	uint64_t offset;
};
/* The driver's answer travels in rc, with its outputs (which it sets on an
 * error too): the call itself succeeds. */
struct vc_cu_rep_logs {
	int32_t rc;
	uint32_t iter;
	uint64_t size;     /* the dump's size; READ: bytes in the data; FETCH: messages in the data */
	uint64_t dropped;  /* FETCH: messages lost since the last fetch (the queue was full) */
};
/* FETCH's data: messages, each this header, then len bytes of text, padded to 8. */
struct vc_cu_log_msg {
	int32_t level;
	uint32_t len;
};

#endif /* VC_CUDA_GREEN_H */
