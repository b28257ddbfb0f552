/* SPDX-License-Identifier: MIT */
/*
 * ops.h - what vcuda-mgmtd does: the requests of its socket (checked by
 * proto.c, allowed by auth.c), a QEMU connecting to a VM's socket, GPU
 * rescans, and restoring its state at start. Each change of state is one
 * database transaction with its event.
 */
#ifndef VC_MGMT_OPS_H
#define VC_MGMT_OPS_H

#include <jansson.h>

#include "auth.h"
#include "mgmtd.h"
#include "proto.h"

/**
 * vc_ops_handle() - carry out request @r from @peer (who may change state
 * only as an administrator). Returns the reply (a new reference).
 */
json_t *vc_ops_handle(struct vc_mgmtd *d, const struct vc_mreq *r, const struct vc_peer *peer);

/**
 * vc_ops_vm_connected() - QEMU connected to VM @vm's socket (@conn, taken):
 * place the VM if it has no usable GPU, then start its server with the
 * connection, hand the connection to its running server, or refuse it with
 * a reason QEMU logs.
 */
void vc_ops_vm_connected(struct vc_mgmtd *d, const char *vm, int conn);

/**
 * vc_ops_rescan() - read the GPUs again and record what changed (new GPUs,
 * vanished ones, health), with events; @who says who asked. Returns 0 and
 * the number of changes in *@changes, or -errno with a sentence in @err.
 */
int vc_ops_rescan(struct vc_mgmtd *d, const char *who, int *changes, char *err, size_t errlen);

/**
 * vc_ops_restore() - at start, from the database: the socket of every VM,
 * and the servers still running from a previous daemon re-attached (those
 * that are gone are recorded as stopped). Returns 0 or -errno.
 */
int vc_ops_restore(struct vc_mgmtd *d, char *err, size_t errlen);

#endif /* VC_MGMT_OPS_H */
