/* SPDX-License-Identifier: MIT */
/*
 * ipc.c - IPC between the processes of one VM: memory and event handles,
 * shareable handles of allocations and pools (FABRIC, POSIX file
 * descriptors), pool pointers, and pool access.
 *
 * Every guest process is a session of its own worker, forked by the VM's
 * one listener, so the driver's own IPC works between them. The guest never
 * sees the driver's bytes: the exporter stores them in the server's table
 * (resources/ipc.h) and hands out a token of the server; an importer's token
 * is honoured only when it is one (MAC) for a live entry of the same kind.
 * A forged token, or one of another server (another VM), is
 * CUDA_ERROR_INVALID_VALUE, before the driver sees anything. Memory opened is
 * the opener's (closed at its end, accepted by its range checks) and not
 * charged again: the exporter's quota holds it. Entries go with the
 * exported allocation (freed) or the exporting session; event entries live
 * as long as the session.
 *
 * A POSIX file-descriptor handle is the driver's descriptor, which lives in
 * the exporting worker: it is given to the listener (resources/fdbroker.h)
 * and its entry holds the broker's key, so that an importing worker fetches
 * the descriptor, imports it and closes its copy. The listener keeps it
 * until the allocation is gone in the exporter (its handles released and
 * unmapped), the pool is destroyed, or the exporter ends; natively a
 * descriptor would keep the allocation alive until closed, so an import
 * after that is refused here (CUDA_ERROR_INVALID_VALUE) where it would work
 * natively. What imported
 * it before holds it, as natively.
 * Without a listener (an embedder of the session library) it is refused
 * with CUDA_ERROR_NOT_SUPPORTED, as Windows handles always are.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "resources/fdbroker.h"
#include "resources/ipc.h"
#include "vc_cuda_vmm.h"
#include "cuda/vmm.h"

static int put(struct vc_cu_session *x, enum vc_ipc_kind kind, const void *real, size_t n, uint64_t tag,
	       uint8_t *token)
{
	struct vc_cu_vmm *v = vc_cu_vmm_state(x);
	int rc;

	if (!v)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = vc_ipc_put(kind, real, n, tag, token);
	if (rc)
		return rc == -ENOSPC ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_OPERATING_SYSTEM;
	v->nexported++;
	return 0;
}

/* Remember memory opened at @d in the current context (range checks, close);
 * its extent in *@extent. */
static int opened(struct vc_cu_session *x, CUdeviceptr d, uint64_t *extent)
{
	struct vc_cu_vmm *v = vc_cu_vmm_state(x);
	CUdeviceptr base = 0;
	size_t size = 0;
	CUcontext c = NULL;

	x->drv->cuCtxGetCurrent(&c);
	if (x->drv->cuMemGetAddressRange_v2(&base, &size, d) != CUDA_SUCCESS || base != d)
		size = 1;
	*extent = size;
	if (!v || vc_cu_vmm_range_add(&v->opened, &v->nopened, &v->capopened, d, size, (uint64_t)(uintptr_t)c))
		return CUDA_ERROR_OUT_OF_MEMORY;
	return 0;
}

int vc_cu_manual_cuIpcGetMemHandle(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				   struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUipcMemHandle h;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_check_range(x, rq.ptr, 1)))
		return rc;
	/* The same allocation, the same handle, as natively. */
	if (vc_ipc_find(VC_IPC_MEM, rq.ptr, rp.token)) {
		if ((rc = x->drv->cuIpcGetMemHandle(&h, (CUdeviceptr)rq.ptr)) ||
		    (rc = put(x, VC_IPC_MEM, &h, sizeof(h), rq.ptr, rp.token)))
			return rc;
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuIpcOpenMemHandle_v2(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				       struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUipcMemHandle h;
	CUdeviceptr d = 0;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (vc_ipc_get(VC_IPC_MEM, rq.token, &h, sizeof(h), NULL))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuIpcOpenMemHandle_v2(&d, h, (unsigned)rq.flags)))
		return rc;
	if ((rc = opened(x, d, &rp.size))) {
		x->drv->cuIpcCloseMemHandle(d);
		return rc;
	}
	rp.value = d;
	REPLY(rp);
	return 0;
}

/* Index of opened memory starting at @d, or -1. */
static long find_opened(const struct vc_cu_vmm *v, uint64_t d)
{
	for (uint32_t i = 0; v && i < v->nopened; i++)
		if (v->opened[i].va == d)
			return i;
	return -1;
}

int vc_cu_manual_cuIpcCloseMemHandle(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				     struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	long i;
	int rc;

	(void)out;
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if ((i = find_opened(x->vmm, rq.ptr)) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuIpcCloseMemHandle((CUdeviceptr)rq.ptr)))
		return rc;
	x->vmm->opened[i] = x->vmm->opened[--x->vmm->nopened];
	return 0;
}

int vc_cu_manual_cuIpcGetEventHandle(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				     struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUipcEventHandle h;
	void *ev;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUEVENT, rq.handle, &ev)))
		return rc;
	if (!ev)
		return CUDA_ERROR_INVALID_HANDLE;
	if (vc_ipc_find(VC_IPC_EVENT, (uint64_t)(uintptr_t)ev, rp.token)) {
		if ((rc = x->drv->cuIpcGetEventHandle(&h, ev)) ||
		    (rc = put(x, VC_IPC_EVENT, &h, sizeof(h), (uint64_t)(uintptr_t)ev, rp.token)))
			return rc;
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuIpcOpenEventHandle(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				      struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUipcEventHandle h;
	CUevent ev = NULL;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)))
		return rc;
	if (vc_ipc_get(VC_IPC_EVENT, rq.token, &h, sizeof(h), NULL))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuIpcOpenEventHandle(&ev, h)))
		return rc;
	if ((rc = vc_cu_publish_owned(x, VC_H_CUEVENT, ev, &rp.value))) {
		x->drv->cuEventDestroy_v2(ev);
		return rc;
	}
	REPLY(rp);
	return 0;
}

/* ---- shareable handles: FABRIC and POSIX file descriptors ---------------------------- */

/* Whether shareable handles of type @t can cross between this server's
 * sessions: FABRIC as bytes; a descriptor through the listener's broker. */
static int crosses(int32_t t)
{
	if (t == CU_MEM_HANDLE_TYPE_FABRIC)
		return 0;
	if (t == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR && vc_fdbroker_available())
		return 0;
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* Keep @fd, which the driver exported for @tag, with the listener (closing
 * ours) and make its token. */
static int put_fd(struct vc_cu_session *x, enum vc_ipc_kind kind, int fd, uint64_t tag, uint8_t *token)
{
	uint8_t key[VC_FDBROKER_KEY];
	int rc = vc_fdbroker_put(fd, key);

	close(fd);
	if (rc)
		return rc == -ENOSPC ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_OPERATING_SYSTEM;
	return put(x, kind, key, sizeof(key), tag, token);
}

/* The descriptor behind a token of @kind, into *@fd (the caller closes it):
 * an exporter's that still lives, of this server. */
static int get_fd(enum vc_ipc_kind kind, const uint8_t *token, int *fd)
{
	uint8_t key[VC_FDBROKER_KEY];

	if (vc_ipc_get(kind, token, key, sizeof(key), NULL) || vc_fdbroker_get(key, fd))
		return CUDA_ERROR_INVALID_VALUE;
	return 0;
}

int vc_cu_manual_cuMemExportToShareableHandle(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					      struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUmemFabricHandle fh;
	uint64_t real;
	int fd = -1, rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_vmm_real(x, rq.handle, &real)) || (rc = crosses(rq.type)))
		return rc;
	if (rq.type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
		if (vc_ipc_find(VC_IPC_FD, real, rp.token) &&
		    ((rc = x->drv->cuMemExportToShareableHandle(&fd, real, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
								 rq.flags)) ||
		     (rc = put_fd(x, VC_IPC_FD, fd, real, rp.token))))
			return rc;
	} else if (vc_ipc_find(VC_IPC_FABRIC, real, rp.token)) {
		if ((rc = x->drv->cuMemExportToShareableHandle(&fh, real, CU_MEM_HANDLE_TYPE_FABRIC, rq.flags)) ||
		    (rc = put(x, VC_IPC_FABRIC, &fh, sizeof(fh), real, rp.token)))
			return rc;
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemImportFromShareableHandle(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUmemFabricHandle fh;
	CUmemGenericAllocationHandle h = 0;
	int fd, rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = crosses(rq.type)))
		return rc;
	if (rq.type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
		if ((rc = get_fd(VC_IPC_FD, rq.token, &fd)))
			return rc;
		rc = x->drv->cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
							    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
		close(fd);
	} else {
		if (vc_ipc_get(VC_IPC_FABRIC, rq.token, &fh, sizeof(fh), NULL))
			return CUDA_ERROR_INVALID_VALUE;
		rc = x->drv->cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC);
	}
	if (rc)
		return rc;
	if ((rc = vc_cu_vmm_import(x, h, &rp.value))) {
		x->drv->cuMemRelease(h);
		return rc;
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemPoolExportToShareableHandle(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						  struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUmemFabricHandle fh;
	uint64_t tag;
	void *pool;
	int fd = -1, rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUMEMORYPOOL, rq.handle, &pool)))
		return rc;
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = crosses(rq.type)))
		return rc;
	tag = (uint64_t)(uintptr_t)pool;
	if (rq.type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
		if (vc_ipc_find(VC_IPC_POOLFD, tag, rp.token) &&
		    ((rc = x->drv->cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
								     rq.flags)) ||
		     (rc = put_fd(x, VC_IPC_POOLFD, fd, tag, rp.token))))
			return rc;
	} else if (vc_ipc_find(VC_IPC_POOL, tag, rp.token)) {
		if ((rc = x->drv->cuMemPoolExportToShareableHandle(&fh, pool, CU_MEM_HANDLE_TYPE_FABRIC, rq.flags)) ||
		    (rc = put(x, VC_IPC_POOL, &fh, sizeof(fh), tag, rp.token)))
			return rc;
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemPoolImportFromShareableHandle(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
						    struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUmemFabricHandle fh;
	CUmemoryPool pool = NULL;
	int fd, rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = crosses(rq.type)))
		return rc;
	if (rq.type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
		if ((rc = get_fd(VC_IPC_POOLFD, rq.token, &fd)))
			return rc;
		rc = x->drv->cuMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fd,
								CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, rq.flags);
		close(fd);
	} else {
		if (vc_ipc_get(VC_IPC_POOL, rq.token, &fh, sizeof(fh), NULL))
			return CUDA_ERROR_INVALID_VALUE;
		rc = x->drv->cuMemPoolImportFromShareableHandle(&pool, &fh, CU_MEM_HANDLE_TYPE_FABRIC, rq.flags);
	}
	if (rc)
		return rc;
	if ((rc = vc_cu_publish(x, VC_H_CUMEMORYPOOL, pool, &rp.value))) {
		x->drv->cuMemPoolDestroy(pool);
		return rc;
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemPoolExportPointer(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUmemPoolPtrExportData d;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_check_range(x, rq.ptr, 1)))
		return rc;
	if (vc_ipc_find(VC_IPC_POOLPTR, rq.ptr, rp.token)) {
		if ((rc = x->drv->cuMemPoolExportPointer(&d, (CUdeviceptr)rq.ptr)) ||
		    (rc = put(x, VC_IPC_POOLPTR, &d, sizeof(d), rq.ptr, rp.token)))
			return rc;
	}
	REPLY(rp);
	return 0;
}

int vc_cu_manual_cuMemPoolImportPointer(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
					struct vc_cu_out *out)
{
	struct vc_cu_req_ipc rq;
	struct vc_cu_rep_ipc rp = {0};
	CUmemPoolPtrExportData d;
	CUdeviceptr ptr = 0;
	void *pool;
	int rc;

	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUMEMORYPOOL, rq.handle, &pool)))
		return rc;
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	if (vc_ipc_get(VC_IPC_POOLPTR, rq.token, &d, sizeof(d), NULL))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuMemPoolImportPointer(&ptr, pool, &d)))
		return rc;
	if ((rc = opened(x, ptr, &rp.size))) {
		x->drv->cuMemFree_v2(ptr);
		return rc;
	}
	rp.value = ptr;
	REPLY(rp);
	return 0;
}

/* ---- pool access ------------------------------------------------------------------- */

int vc_cu_manual_cuMemPoolSetAccess(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				    struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	CUmemAccessDesc d[VC_CU_ACCESS_MAX];
	void *pool;
	int rc;

	(void)out;
	TAKE(rq);
	if (rq.count > VC_CU_ACCESS_MAX || len - sizeof(rq) < (uint64_t)rq.count * sizeof(d[0]))
		return -VC_FATAL_PAYLOAD;
	memcpy(d, p + sizeof(rq), rq.count * sizeof(d[0]));
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUMEMORYPOOL, rq.handle, &pool)))
		return rc;
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	return x->drv->cuMemPoolSetAccess(pool, d, rq.count);
}

int vc_cu_manual_cuMemPoolGetAccess(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
				    struct vc_cu_out *out)
{
	struct vc_cu_req_vmm rq;
	struct vc_cu_rep_vmm rp = {0};
	CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_NONE;
	CUmemLocation loc;
	void *pool;
	int rc;

	TAKE(rq);
	memcpy(&loc, rq.location, sizeof(loc));
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUMEMORYPOOL, rq.handle, &pool)))
		return rc;
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuMemPoolGetAccess(&f, pool, &loc)))
		return rc;
	rp.value = (uint64_t)f;
	REPLY(rp);
	return 0;
}

/* ---- life ---------------------------------------------------------------------------- */

void vc_cu_ipc_freed(struct vc_cu_session *x, uint64_t dptr)
{
	struct vc_cu_vmm *v = x->vmm;
	long i;

	if (!v)
		return;
	if (v->nexported) {
		vc_ipc_drop(VC_IPC_MEM, dptr);
		vc_ipc_drop(VC_IPC_POOLPTR, dptr);
	}
	if ((i = find_opened(v, dptr)) >= 0) /* an imported pool pointer, freed */
		v->opened[i] = v->opened[--v->nopened];
}

int vc_cu_ipc_pool_gone(struct vc_cu_session *x, uint64_t pool)
{
	void *real;

	if (x->vmm && x->vmm->nexported && !vc_cu_lookup(x, VC_H_CUMEMORYPOOL, pool, &real))
		vc_ipc_forget(VC_IPC_POOLFD, VC_IPC_POOL, (uint64_t)(uintptr_t)real);
	return CUDA_SUCCESS;
}

void vc_cu_ipc_fini(struct vc_cu_session *x)
{
	struct vc_cu_vmm *v = x->vmm;

	if (!v)
		return;
	for (uint32_t i = 0; i < v->nopened; i++)
		if (x->drv->cuCtxSetCurrent((CUcontext)(uintptr_t)v->opened[i].aux) == CUDA_SUCCESS &&
		    x->drv->cuIpcCloseMemHandle((CUdeviceptr)v->opened[i].va) != CUDA_SUCCESS)
			x->drv->cuMemFree_v2((CUdeviceptr)v->opened[i].va); /* a pool pointer */
	v->nopened = 0;
	if (v->nexported)
		vc_ipc_drop((enum vc_ipc_kind)0, 0);
	v->nexported = 0;
}
