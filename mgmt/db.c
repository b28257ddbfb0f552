/* SPDX-License-Identifier: MIT */
/* db.c - vcuda-mgmtd's state in SQLite (db.h). */
#include "db.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vc_db {
	sqlite3 *h;
	int version;
};

/*
 * Schema steps: migrations[i] takes a database from version i to i + 1, in
 * the same transaction as the new user_version. Append, never edit.
 */
static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE gpus ("
	"  uuid TEXT PRIMARY KEY NOT NULL,"
	"  idx INTEGER NOT NULL,"
	"  name TEXT NOT NULL,"
	"  mem_total INTEGER NOT NULL,"
	"  pci_bus_id TEXT NOT NULL,"
	"  health TEXT NOT NULL CHECK (health IN ('healthy', 'unhealthy')),"
	"  health_reason TEXT NOT NULL DEFAULT '',"
	"  drained INTEGER NOT NULL DEFAULT 0,"
	"  present INTEGER NOT NULL DEFAULT 1,"
	"  first_seen_ms INTEGER NOT NULL,"
	"  last_seen_ms INTEGER NOT NULL);"
	"CREATE TABLE vms ("
	"  name TEXT PRIMARY KEY NOT NULL,"
	"  gpu TEXT REFERENCES gpus(uuid),"
	"  mem_quota INTEGER NOT NULL,"
	"  pinned_quota INTEGER NOT NULL,"
	"  weight INTEGER NOT NULL,"
	"  idle_timeout INTEGER NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('stopped', 'running')),"
	"  server_pid INTEGER,"
	"  created_ms INTEGER NOT NULL,"
	"  started_ms INTEGER);"
	"CREATE TABLE events ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  time_ms INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  vm TEXT NOT NULL DEFAULT '',"
	"  gpu TEXT NOT NULL DEFAULT '',"
	"  message TEXT NOT NULL);"
	"CREATE INDEX events_vm ON events(vm, id);",
	/* 1 -> 2: VMs of several whole GPUs (vms.gpu is the first) */
	"ALTER TABLE vms ADD COLUMN gpus INTEGER NOT NULL DEFAULT 1 CHECK (gpus BETWEEN 1 AND 8);"
	"CREATE TABLE vm_gpus ("
	"  vm TEXT NOT NULL REFERENCES vms(name) ON DELETE CASCADE,"
	"  pos INTEGER NOT NULL CHECK (pos BETWEEN 1 AND 7),"
	"  gpu TEXT NOT NULL REFERENCES gpus(uuid),"
	"  PRIMARY KEY (vm, pos));"
	"ALTER TABLE gpus ADD COLUMN numa_node INTEGER NOT NULL DEFAULT -1;",
};

#define NSTEPS ((int)(sizeof(migrations) / sizeof(migrations[0])))
_Static_assert(NSTEPS == VC_DB_SCHEMA_VERSION, "one migration step per schema version");

static int exec(struct vc_db *db, const char *sql)
{
	return sqlite3_exec(db->h, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

static int pragma_int(struct vc_db *db, const char *sql, int *out)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*out = sqlite3_column_int(st, 0);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

static int pragma_text(struct vc_db *db, const char *sql, char *out, size_t len)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);

		snprintf(out, len, "%s", t ? (const char *)t : "");
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

static int migrate(struct vc_db *db, const char *path, char *err, size_t errlen)
{
	int v;

	if (pragma_int(db, "PRAGMA user_version", &v)) {
		snprintf(err, errlen, "%s: cannot read the schema version: %s", path, sqlite3_errmsg(db->h));
		return -EIO;
	}
	if (v > VC_DB_SCHEMA_VERSION) {
		snprintf(err, errlen, "%s: schema version %d is newer than this vcuda-mgmtd understands (%d); "
				      "run the vcuda-mgmtd that wrote it, or move the file away to start afresh",
			 path, v, VC_DB_SCHEMA_VERSION);
		return -EPROTONOSUPPORT;
	}
	while (v < VC_DB_SCHEMA_VERSION) {
		char sql[64];

		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		if (vc_db_begin(db) || exec(db, migrations[v]) || exec(db, sql) || vc_db_commit(db)) {
			snprintf(err, errlen, "%s: migrating the schema from version %d to %d failed: %s", path, v,
				 v + 1, sqlite3_errmsg(db->h));
			vc_db_rollback(db);
			return -EIO;
		}
		if (v > 0)
			vc_mlog("database %s: schema migrated from version %d to %d", path, v, v + 1);
		v++;
	}
	db->version = v;
	return 0;
}

int vc_db_open(const char *path, struct vc_db **out, char *err, size_t errlen)
{
	struct vc_db *db = calloc(1, sizeof(*db));
	char mode[16], check[256];
	int rc = -EIO;

	if (!db)
		return -ENOMEM;
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open database %s: %s", path,
			 db->h ? sqlite3_errmsg(db->h) : "out of memory");
		goto err_close;
	}
	sqlite3_busy_timeout(db->h, 5000);
	/* A file that is not a database (or is damaged) fails here, with its reason. */
	if (pragma_text(db, "PRAGMA journal_mode = WAL", mode, sizeof(mode)) || strcmp(mode, "wal")) {
		snprintf(err, errlen, "database %s: cannot use write-ahead logging: %s", path,
			 sqlite3_errmsg(db->h));
		goto err_close;
	}
	if (exec(db, "PRAGMA synchronous = FULL") || exec(db, "PRAGMA foreign_keys = ON")) {
		snprintf(err, errlen, "database %s: %s", path, sqlite3_errmsg(db->h));
		goto err_close;
	}
	if (pragma_text(db, "PRAGMA quick_check", check, sizeof(check)) || strcmp(check, "ok")) {
		snprintf(err, errlen, "database %s is damaged (%s); restore it from a backup or move it away",
			 path, check[0] ? check : sqlite3_errmsg(db->h));
		goto err_close;
	}
	rc = migrate(db, path, err, errlen);
	if (rc)
		goto err_close;
	*out = db;
	return 0;

err_close:
	sqlite3_close(db->h);
	free(db);
	return rc;
}

void vc_db_close(struct vc_db *db)
{
	if (!db)
		return;
	sqlite3_close(db->h);
	free(db);
}

int vc_db_schema_version(struct vc_db *db)
{
	return db->version;
}

const char *vc_db_errmsg(struct vc_db *db)
{
	return sqlite3_errmsg(db->h);
}

int vc_db_begin(struct vc_db *db)
{
	return exec(db, "BEGIN IMMEDIATE");
}

int vc_db_commit(struct vc_db *db)
{
	if (exec(db, "COMMIT")) {
		vc_mlog("database: commit failed: %s", sqlite3_errmsg(db->h));
		vc_db_rollback(db);
		return -EIO;
	}
	return 0;
}

void vc_db_rollback(struct vc_db *db)
{
	if (!sqlite3_get_autocommit(db->h))
		(void)exec(db, "ROLLBACK");
}

/* ---- statements ------------------------------------------------------------------ */

static sqlite3_stmt *prep(struct vc_db *db, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
		vc_mlog("database: %s: %s", sql, sqlite3_errmsg(db->h));
		return NULL;
	}
	return st;
}

/* Run a statement that returns no rows; 0, -EEXIST (constraint) or -EIO. */
static int run(struct vc_db *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		return -EEXIST;
	vc_mlog("database: %s", sqlite3_errmsg(db->h));
	return -EIO;
}

static void col_text(sqlite3_stmt *st, int i, char *out, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(out, len, "%s", t ? (const char *)t : "");
}

/* Append one element of @size to a growing array. */
static void *grow(void *arr, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return arr;
	*cap = *cap ? *cap * 2 : 16;
	return realloc(arr, *cap * size);
}

/* ---- GPUs -------------------------------------------------------------------------- */

int vc_db_gpu_put(struct vc_db *db, const struct vc_gpu *g)
{
	sqlite3_stmt *st = prep(db,
		"INSERT INTO gpus (uuid, idx, name, mem_total, pci_bus_id, health, health_reason, present,"
		"  first_seen_ms, last_seen_ms, numa_node) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?10)"
		" ON CONFLICT(uuid) DO UPDATE SET idx = ?2, name = ?3, mem_total = ?4, pci_bus_id = ?5,"
		"  health = ?6, health_reason = ?7, present = ?8, numa_node = ?10,"
		"  last_seen_ms = CASE WHEN ?8 THEN ?9 ELSE last_seen_ms END");

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, g->uuid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, g->index);
	sqlite3_bind_text(st, 3, g->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)g->mem_total);
	sqlite3_bind_text(st, 5, g->pci_bus_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, g->health == VC_GPU_HEALTHY ? "healthy" : "unhealthy", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, g->health_reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 8, g->present);
	sqlite3_bind_int64(st, 9, vc_wall_ms());
	sqlite3_bind_int(st, 10, g->numa_node);
	return run(db, st) ? -EIO : 0;
}

int vc_db_gpu_set_drained(struct vc_db *db, const char *uuid, bool drained)
{
	sqlite3_stmt *st = prep(db, "UPDATE gpus SET drained = ?2 WHERE uuid = ?1");
	int rc;

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, uuid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, drained);
	rc = run(db, st);
	if (rc)
		return -EIO;
	return sqlite3_changes(db->h) ? 0 : -ENOENT;
}

int vc_db_gpu_list(struct vc_db *db, struct vc_gpu **out, size_t *n)
{
	sqlite3_stmt *st = prep(db, "SELECT uuid, idx, name, mem_total, pci_bus_id, health, health_reason,"
				    " drained, present, numa_node FROM gpus ORDER BY present DESC, idx, uuid");
	struct vc_gpu *arr = NULL, *g;
	size_t cap = 0, k = 0;
	int rc;

	if (!st)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char health[16];

		g = grow(arr, k, &cap, sizeof(*arr));
		if (!g) {
			rc = -ENOMEM;
			goto out;
		}
		arr = g;
		g = &arr[k++];
		memset(g, 0, sizeof(*g));
		col_text(st, 0, g->uuid, sizeof(g->uuid));
		g->index = sqlite3_column_int(st, 1);
		col_text(st, 2, g->name, sizeof(g->name));
		g->mem_total = (uint64_t)sqlite3_column_int64(st, 3);
		col_text(st, 4, g->pci_bus_id, sizeof(g->pci_bus_id));
		col_text(st, 5, health, sizeof(health));
		g->health = strcmp(health, "healthy") ? VC_GPU_UNHEALTHY : VC_GPU_HEALTHY;
		col_text(st, 6, g->health_reason, sizeof(g->health_reason));
		g->drained = sqlite3_column_int(st, 7);
		g->present = sqlite3_column_int(st, 8);
		g->numa_node = sqlite3_column_int(st, 9);
	}
	rc = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(st);
	if (rc) {
		free(arr);
		return rc;
	}
	*out = arr;
	*n = k;
	return 0;
}

/* ---- VMs ---------------------------------------------------------------------------- */

static void bind_vm(sqlite3_stmt *st, const struct vc_vm *vm)
{
	sqlite3_bind_text(st, 1, vm->name, -1, SQLITE_TRANSIENT);
	if (vm->gpu[0])
		sqlite3_bind_text(st, 2, vm->gpu, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 2);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)vm->mem_quota);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)vm->pinned_quota);
	sqlite3_bind_int64(st, 5, vm->weight);
	sqlite3_bind_int64(st, 6, vm->idle_timeout);
	sqlite3_bind_text(st, 7, vm->state == VC_VM_RUNNING ? "running" : "stopped", -1, SQLITE_STATIC);
	if (vm->server_pid > 0)
		sqlite3_bind_int64(st, 8, vm->server_pid);
	else
		sqlite3_bind_null(st, 8);
	sqlite3_bind_int64(st, 9, vm->created_ms);
	if (vm->started_ms)
		sqlite3_bind_int64(st, 10, vm->started_ms);
	else
		sqlite3_bind_null(st, 10);
	sqlite3_bind_int64(st, 11, vm->ngpus ? vm->ngpus : 1);
}

/* The rows of vm_gpus for @vm: its GPUs after the first, as placed. */
static int put_more_gpus(struct vc_db *db, const struct vc_vm *vm)
{
	sqlite3_stmt *st = prep(db, "DELETE FROM vm_gpus WHERE vm = ?1");
	int rc;

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, vm->name, -1, SQLITE_TRANSIENT);
	if (run(db, st))
		return -EIO;
	for (unsigned k = 1; k < vm->ngpus && k < VC_VM_GPUS_MAX; k++) {
		if (!vm->more[k - 1][0])
			continue;
		st = prep(db, "INSERT INTO vm_gpus (vm, pos, gpu) VALUES (?1, ?2, ?3)");
		if (!st)
			return -EIO;
		sqlite3_bind_text(st, 1, vm->name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 2, (int)k);
		sqlite3_bind_text(st, 3, vm->more[k - 1], -1, SQLITE_TRANSIENT);
		rc = run(db, st);
		if (rc)
			return rc; /* -EEXIST: a GPU the database does not know */
	}
	return 0;
}

/* Fill the GPUs after the first of @vm from vm_gpus. */
static int get_more_gpus(struct vc_db *db, struct vc_vm *vm)
{
	sqlite3_stmt *st = prep(db, "SELECT pos, gpu FROM vm_gpus WHERE vm = ?1");
	int rc;

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, vm->name, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int pos = sqlite3_column_int(st, 0);

		if (pos >= 1 && (unsigned)pos < VC_VM_GPUS_MAX)
			col_text(st, 1, vm->more[pos - 1], sizeof(vm->more[0]));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int vc_db_vm_insert(struct vc_db *db, const struct vc_vm *vm)
{
	sqlite3_stmt *st = prep(db, "INSERT INTO vms (name, gpu, mem_quota, pinned_quota, weight, idle_timeout,"
				    " state, server_pid, created_ms, started_ms, gpus)"
				    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
	int rc;

	if (!st)
		return -EIO;
	bind_vm(st, vm);
	rc = run(db, st);
	return rc ? rc : put_more_gpus(db, vm);
}

int vc_db_vm_update(struct vc_db *db, const struct vc_vm *vm)
{
	sqlite3_stmt *st = prep(db, "UPDATE vms SET gpu = ?2, mem_quota = ?3, pinned_quota = ?4, weight = ?5,"
				    " idle_timeout = ?6, state = ?7, server_pid = ?8, created_ms = ?9,"
				    " started_ms = ?10, gpus = ?11 WHERE name = ?1");

	if (!st)
		return -EIO;
	bind_vm(st, vm);
	if (run(db, st))
		return -EIO;
	if (!sqlite3_changes(db->h))
		return -ENOENT;
	return put_more_gpus(db, vm);
}

int vc_db_vm_delete(struct vc_db *db, const char *name)
{
	sqlite3_stmt *st = prep(db, "DELETE FROM vms WHERE name = ?1");

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	if (run(db, st))
		return -EIO;
	return sqlite3_changes(db->h) ? 0 : -ENOENT;
}

#define VM_COLS "name, gpu, mem_quota, pinned_quota, weight, idle_timeout, state, server_pid, created_ms," \
		" started_ms, gpus"

static void read_vm(sqlite3_stmt *st, struct vc_vm *vm)
{
	char state[16];

	memset(vm, 0, sizeof(*vm));
	col_text(st, 0, vm->name, sizeof(vm->name));
	col_text(st, 1, vm->gpu, sizeof(vm->gpu));
	vm->mem_quota = (uint64_t)sqlite3_column_int64(st, 2);
	vm->pinned_quota = (uint64_t)sqlite3_column_int64(st, 3);
	vm->weight = (uint32_t)sqlite3_column_int64(st, 4);
	vm->idle_timeout = (uint32_t)sqlite3_column_int64(st, 5);
	col_text(st, 6, state, sizeof(state));
	vm->state = strcmp(state, "running") ? VC_VM_STOPPED : VC_VM_RUNNING;
	vm->server_pid = (pid_t)sqlite3_column_int64(st, 7);
	vm->created_ms = sqlite3_column_int64(st, 8);
	vm->started_ms = sqlite3_column_int64(st, 9);
	vm->ngpus = (uint32_t)sqlite3_column_int64(st, 10);
	if (vm->ngpus < 1 || vm->ngpus > VC_VM_GPUS_MAX)
		vm->ngpus = 1;
}

int vc_db_vm_get(struct vc_db *db, const char *name, struct vc_vm *out)
{
	sqlite3_stmt *st = prep(db, "SELECT " VM_COLS " FROM vms WHERE name = ?1");
	int rc;

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_vm(st, out);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return out->ngpus > 1 ? get_more_gpus(db, out) : 0;
	return rc == SQLITE_DONE ? -ENOENT : -EIO;
}

int vc_db_vm_list(struct vc_db *db, struct vc_vm **out, size_t *n)
{
	sqlite3_stmt *st = prep(db, "SELECT " VM_COLS " FROM vms ORDER BY name");
	struct vc_vm *arr = NULL, *v;
	size_t cap = 0, k = 0;
	int rc;

	if (!st)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = grow(arr, k, &cap, sizeof(*arr));
		if (!v) {
			rc = -ENOMEM;
			goto out;
		}
		arr = v;
		read_vm(st, &arr[k++]);
	}
	rc = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(st);
	for (size_t i = 0; !rc && i < k; i++)
		if (arr[i].ngpus > 1)
			rc = get_more_gpus(db, &arr[i]);
	if (rc) {
		free(arr);
		return rc;
	}
	*out = arr;
	*n = k;
	return 0;
}

/* ---- events ------------------------------------------------------------------------- */

int vc_db_event_add(struct vc_db *db, const char *kind, const char *vm, const char *gpu, const char *fmt, ...)
{
	char msg[VC_EVENT_MSG_MAX];
	sqlite3_stmt *st;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	vc_mlog("event %s: %s", kind, msg);
	st = prep(db, "INSERT INTO events (time_ms, kind, vm, gpu, message) VALUES (?1, ?2, ?3, ?4, ?5)");
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, vc_wall_ms());
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, vm ? vm : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, gpu ? gpu : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, msg, -1, SQLITE_TRANSIENT);
	return run(db, st) ? -EIO : 0;
}

int vc_db_event_list(struct vc_db *db, int64_t since, uint32_t limit, struct vc_event **out, size_t *n)
{
	/* The latest @limit when no start is given: newest first, reversed below. */
	sqlite3_stmt *st = prep(db, since > 0
		? "SELECT id, time_ms, kind, vm, gpu, message FROM events WHERE id > ?1 ORDER BY id LIMIT ?2"
		: "SELECT id, time_ms, kind, vm, gpu, message FROM events ORDER BY id DESC LIMIT ?2");
	struct vc_event *arr = NULL, *e;
	size_t cap = 0, k = 0;
	int rc;

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, since);
	sqlite3_bind_int64(st, 2, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		e = grow(arr, k, &cap, sizeof(*arr));
		if (!e) {
			rc = -ENOMEM;
			goto out;
		}
		arr = e;
		e = &arr[k++];
		e->id = sqlite3_column_int64(st, 0);
		e->time_ms = sqlite3_column_int64(st, 1);
		col_text(st, 2, e->kind, sizeof(e->kind));
		col_text(st, 3, e->vm, sizeof(e->vm));
		col_text(st, 4, e->gpu, sizeof(e->gpu));
		col_text(st, 5, e->message, sizeof(e->message));
	}
	rc = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(st);
	if (rc) {
		free(arr);
		return rc;
	}
	if (since <= 0) {
		for (size_t i = 0; i < k / 2; i++) {
			struct vc_event t = arr[i];

			arr[i] = arr[k - 1 - i];
			arr[k - 1 - i] = t;
		}
	}
	*out = arr;
	*n = k;
	return 0;
}

int vc_db_event_prune(struct vc_db *db, int64_t keep)
{
	sqlite3_stmt *st = prep(db, "DELETE FROM events WHERE id <= (SELECT MAX(id) FROM events) - ?1");

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, keep);
	return run(db, st) ? -EIO : 0;
}
