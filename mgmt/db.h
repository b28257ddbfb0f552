/* SPDX-License-Identifier: MIT */
/*
 * db.h - vcuda-mgmtd's state in SQLite: GPUs, VMs and the event log.
 *
 * WAL with synchronous=FULL: a committed transaction survives kill -9 of the
 * daemon (and a power cut). Callers make every change one transaction
 * (vc_db_begin() .. vc_db_commit()), event included, so that the state and
 * its log never disagree. The schema carries its version (user_version) and
 * is migrated forward at open; a database from a newer vcuda-mgmtd is
 * refused rather than guessed at.
 */
#ifndef VC_MGMT_DB_H
#define VC_MGMT_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define VC_DB_SCHEMA_VERSION 2

struct vc_db;

/**
 * vc_db_open() - open (creating if needed) the database at @path, check it,
 * migrate it to VC_DB_SCHEMA_VERSION. Returns 0, or -errno with a sentence in
 * @err (a newer schema: -EPROTONOSUPPORT; a damaged file: -EIO).
 */
int vc_db_open(const char *path, struct vc_db **out, char *err, size_t errlen);

/** vc_db_close() - close; NULL is fine. */
void vc_db_close(struct vc_db *db);

/** vc_db_schema_version() - the schema version of the open database. */
int vc_db_schema_version(struct vc_db *db);

/** vc_db_errmsg() - SQLite's message for the last failure. */
const char *vc_db_errmsg(struct vc_db *db);

/** vc_db_begin() - start a write transaction (BEGIN IMMEDIATE). 0 or -EIO. */
int vc_db_begin(struct vc_db *db);

/** vc_db_commit() - commit it: durable once this returns 0. 0 or -EIO (rolled back). */
int vc_db_commit(struct vc_db *db);

/** vc_db_rollback() - abandon it. */
void vc_db_rollback(struct vc_db *db);

/**
 * vc_db_gpu_put() - record what a scan found for @g->uuid (index, name,
 * memory, bus id, health, present), inserting it if new. The administrator's
 * drain flag is kept. Returns 0 or -EIO.
 */
int vc_db_gpu_put(struct vc_db *db, const struct vc_gpu *g);

/** vc_db_gpu_set_drained() - set the drain flag. 0, -ENOENT or -EIO. */
int vc_db_gpu_set_drained(struct vc_db *db, const char *uuid, bool drained);

/**
 * vc_db_gpu_list() - every GPU ever seen, present ones first, by index; a
 * malloc'd array in *@out (free() it) of *@n. Returns 0 or -EIO/-ENOMEM.
 */
int vc_db_gpu_list(struct vc_db *db, struct vc_gpu **out, size_t *n);

/** vc_db_vm_insert() - add @vm. 0, -EEXIST or -EIO. */
int vc_db_vm_insert(struct vc_db *db, const struct vc_vm *vm);

/** vc_db_vm_update() - replace the row of @vm->name. 0, -ENOENT or -EIO. */
int vc_db_vm_update(struct vc_db *db, const struct vc_vm *vm);

/** vc_db_vm_delete() - remove VM @name. 0, -ENOENT or -EIO. */
int vc_db_vm_delete(struct vc_db *db, const char *name);

/** vc_db_vm_get() - VM @name into @out. 0, -ENOENT or -EIO. */
int vc_db_vm_get(struct vc_db *db, const char *name, struct vc_vm *out);

/** vc_db_vm_list() - every VM by name, as vc_db_gpu_list(). */
int vc_db_vm_list(struct vc_db *db, struct vc_vm **out, size_t *n);

/**
 * vc_db_event_add() - append to the event log: @kind ("vm.added"), the VM
 * and GPU it concerns ("" or NULL for none), and a sentence. Returns 0 or
 * -EIO. Also the daemon's log line.
 */
int vc_db_event_add(struct vc_db *db, const char *kind, const char *vm, const char *gpu, const char *fmt,
		    ...) __attribute__((format(printf, 5, 6)));

/**
 * vc_db_event_list() - events with id > @since, oldest first, at most
 * @limit; with @since 0, the latest @limit. As vc_db_gpu_list().
 */
int vc_db_event_list(struct vc_db *db, int64_t since, uint32_t limit, struct vc_event **out, size_t *n);

/** vc_db_event_prune() - keep the latest @keep events. 0 or -EIO. */
int vc_db_event_prune(struct vc_db *db, int64_t keep);

#endif /* VC_MGMT_DB_H */
