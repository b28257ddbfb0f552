/* SPDX-License-Identifier: MIT */
/*
 * ipc.h - IPC handles among the sessions of one vcuda-server (one VM): a
 * table shared by the listener and its workers (an anonymous shared mapping
 * made by the listener before it forks them, like acct.h's page), and a
 * secret of the listener's (getrandom at start, inherited by the workers).
 *
 * The guest never sees the driver's IPC bytes. The exporting worker stores
 * them under a random 128-bit id and hands out a token: a header, the id and
 * a MAC of both keyed by the secret. An importing worker honours a token
 * only when its MAC verifies (so only one made by a session of this server)
 * and its id names a live entry of the same kind; anything else, a forged
 * token or one of another server, is refused. Entries go with the exporting
 * allocation or session, and with a worker that died (the listener reaps
 * them). Only host processes touch the table.
 */
#ifndef VC_IPC_H
#define VC_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define VC_IPC_TOKEN 64u   /* bytes of a token: the size of CUipcMemHandle */
#define VC_IPC_REAL_MAX 64u /* bytes of the driver's handle an entry keeps */
#define VC_IPC_MAX 4096u    /* live entries per server */

enum vc_ipc_kind {
	VC_IPC_MEM = 1,     /* CUipcMemHandle */
	VC_IPC_EVENT = 2,   /* CUipcEventHandle */
	VC_IPC_FABRIC = 3,  /* CUmemFabricHandle of an allocation */
	VC_IPC_POOL = 4,    /* CUmemFabricHandle of a memory pool */
	VC_IPC_POOLPTR = 5, /* CUmemPoolPtrExportData */
	VC_IPC_FD = 6,      /* an allocation's descriptor: the broker's key (fdbroker.h) */
	VC_IPC_POOLFD = 7,  /* a memory pool's descriptor: the broker's key */
};

/**
 * vc_ipc_create() - in the listener, before forking workers: the shared
 * table and the secret. A process that never called it (an embedder, a
 * test) gets a table of its own at its first export. Returns 0 or -errno.
 */
int vc_ipc_create(void);

/**
 * vc_ipc_put() - store @n bytes of driver handle @real of @kind, owned by
 * this process, with @tag (the exporter's own key, e.g. the address) and
 * write its token into @token. Returns 0, -ENOSPC (table full) or -errno.
 */
int vc_ipc_put(enum vc_ipc_kind kind, const void *real, size_t n, uint64_t tag, uint8_t token[VC_IPC_TOKEN]);

/**
 * vc_ipc_get() - the driver handle behind @token if it is a token of this
 * server for a live entry of @kind: its bytes into @real (@n of them) and
 * the exporter's tag into *@tag when not NULL. Returns 0 or -EINVAL.
 */
int vc_ipc_get(enum vc_ipc_kind kind, const uint8_t token[VC_IPC_TOKEN], void *real, size_t n, uint64_t *tag);

/**
 * vc_ipc_find() - the token of this process's live entry of @kind with
 * @tag, into @token. Returns 0 or -ENOENT.
 */
int vc_ipc_find(enum vc_ipc_kind kind, uint64_t tag, uint8_t token[VC_IPC_TOKEN]);

/**
 * vc_ipc_take() - remove this process's live entry of @kind with @tag and
 * give its first @n bytes of driver handle into @real. Returns 0 or -ENOENT.
 */
int vc_ipc_take(enum vc_ipc_kind kind, uint64_t tag, void *real, size_t n);

/**
 * vc_ipc_forget() - what was exported of this process's object @tag goes:
 * its entry of @fd_kind (a broker key: the listener closes that descriptor,
 * fdbroker.h) and its entry of @bytes_kind.
 */
void vc_ipc_forget(enum vc_ipc_kind fd_kind, enum vc_ipc_kind bytes_kind, uint64_t tag);

/** vc_ipc_drop() - remove this process's entries of @kind with @tag (0 kind: any kind, any tag). */
void vc_ipc_drop(enum vc_ipc_kind kind, uint64_t tag);

/** vc_ipc_reap() - in the listener: remove the entries of worker @pid, which ended. */
void vc_ipc_reap(pid_t pid);

/**
 * vc_ipc_mac_selftest() - SipHash-2-4 against its published test vector
 * (the MAC's building block). Returns 0 when it matches.
 */
int vc_ipc_mac_selftest(void);

#endif /* VC_IPC_H */
