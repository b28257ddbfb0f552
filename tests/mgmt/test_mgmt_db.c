/* SPDX-License-Identifier: MIT */
/*
 * test_mgmt_db.c - vcuda-mgmtd's database (mgmt/db.c): creating and
 * migrating the schema, refusing a newer or damaged one, GPUs, VMs and
 * events, transactions, and what survives a process killed with SIGKILL in
 * the middle of its work: every committed transaction, none of the rest.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db.h"

static char DIR_[64], PATH[128];
static struct vc_db *DB;
static char ERR[512];

static void setup(void)
{
	snprintf(DIR_, sizeof(DIR_), "/tmp/test_mgmt_db.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(DIR_));
	snprintf(PATH, sizeof(PATH), "%s/mgmt.db", DIR_);
	DB = NULL;
}

static void teardown(void)
{
	char cmd[160];

	vc_db_close(DB);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", DIR_);
	ck_assert_int_eq(system(cmd), 0);
}

static struct vc_vm mkvm(const char *name, const char *gpu, uint64_t quota)
{
	struct vc_vm v = {0};

	snprintf(v.name, sizeof(v.name), "%s", name);
	snprintf(v.gpu, sizeof(v.gpu), "%s", gpu);
	v.mem_quota = quota;
	v.pinned_quota = 1 << 20;
	v.weight = 100;
	v.created_ms = 1;
	return v;
}

static struct vc_gpu mkgpu(const char *uuid, int index)
{
	struct vc_gpu g = {0};

	snprintf(g.uuid, sizeof(g.uuid), "%s", uuid);
	snprintf(g.name, sizeof(g.name), "Fake");
	g.index = index;
	g.mem_total = 80ull << 30;
	g.present = true;
	return g;
}

static void open_db(void)
{
	int rc = vc_db_open(PATH, &DB, ERR, sizeof(ERR));

	ck_assert_msg(rc == 0, "open: %s", ERR);
}

START_TEST(create_and_reopen)
{
	struct stat st;
	struct vc_vm v = mkvm("vm1", "", 1 << 30), got;
	struct vc_gpu g = mkgpu("GPU-a", 0);

	open_db();
	ck_assert_int_eq(vc_db_schema_version(DB), VC_DB_SCHEMA_VERSION);
	ck_assert_int_eq(vc_db_begin(DB), 0);
	ck_assert_int_eq(vc_db_gpu_put(DB, &g), 0);
	ck_assert_int_eq(vc_db_vm_insert(DB, &v), 0);
	ck_assert_int_eq(vc_db_commit(DB), 0);
	/* write-ahead logging: the log file is there */
	snprintf(ERR, sizeof(ERR), "%s-wal", PATH);
	ck_assert_int_eq(stat(ERR, &st), 0);
	vc_db_close(DB);
	DB = NULL;
	open_db();
	ck_assert_int_eq(vc_db_schema_version(DB), VC_DB_SCHEMA_VERSION);
	ck_assert_int_eq(vc_db_vm_get(DB, "vm1", &got), 0);
	ck_assert_uint_eq(got.mem_quota, 1 << 30);
	ck_assert_str_eq(got.gpu, "");
}
END_TEST

START_TEST(newer_schema_is_refused)
{
	sqlite3 *h;

	ck_assert_int_eq(sqlite3_open(PATH, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	ck_assert_int_eq(vc_db_open(PATH, &DB, ERR, sizeof(ERR)), -EPROTONOSUPPORT);
	ck_assert_ptr_nonnull(strstr(ERR, "schema version 99 is newer"));
	ck_assert_ptr_null(DB);
}
END_TEST

START_TEST(a_file_that_is_not_a_database_is_refused)
{
	FILE *f = fopen(PATH, "w");

	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 512; i++)
		fputs("this is not an SQLite database ", f);
	fclose(f);
	ck_assert_int_eq(vc_db_open(PATH, &DB, ERR, sizeof(ERR)), -EIO);
	ck_assert_ptr_nonnull(strstr(ERR, PATH));
	ck_assert_ptr_null(DB);
}
END_TEST

START_TEST(partial_migration_is_rolled_back)
{
	sqlite3 *h;

	/* A table in the way: the migration fails, and leaves version 0. */
	ck_assert_int_eq(sqlite3_open(PATH, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "CREATE TABLE events (x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	ck_assert_int_eq(vc_db_open(PATH, &DB, ERR, sizeof(ERR)), -EIO);
	ck_assert_ptr_nonnull(strstr(ERR, "from version 0 to 1"));
	ck_assert_int_eq(sqlite3_open(PATH, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "SELECT * FROM gpus", NULL, NULL, NULL), SQLITE_ERROR);
	ck_assert_int_eq(sqlite3_exec(h, "DROP TABLE events", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	open_db();
}
END_TEST

START_TEST(gpus_keep_their_drain_flag)
{
	struct vc_gpu a = mkgpu("GPU-a", 0), b = mkgpu("GPU-b", 1), *list;
	size_t n;

	open_db();
	ck_assert_int_eq(vc_db_gpu_put(DB, &b), 0);
	ck_assert_int_eq(vc_db_gpu_put(DB, &a), 0);
	ck_assert_int_eq(vc_db_gpu_set_drained(DB, "GPU-a", true), 0);
	ck_assert_int_eq(vc_db_gpu_set_drained(DB, "GPU-x", true), -ENOENT);
	a.health = VC_GPU_UNHEALTHY;
	snprintf(a.health_reason, sizeof(a.health_reason), "row remapping pending");
	ck_assert_int_eq(vc_db_gpu_put(DB, &a), 0); /* a rescan */
	b.present = false;
	ck_assert_int_eq(vc_db_gpu_put(DB, &b), 0);
	ck_assert_int_eq(vc_db_gpu_list(DB, &list, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(list[0].uuid, "GPU-a"); /* present first */
	ck_assert(list[0].drained);
	ck_assert_int_eq(list[0].health, VC_GPU_UNHEALTHY);
	ck_assert_str_eq(list[0].health_reason, "row remapping pending");
	ck_assert(!list[1].present);
	free(list);
}
END_TEST

START_TEST(vms)
{
	struct vc_gpu g = mkgpu("GPU-a", 0);
	struct vc_vm a = mkvm("a", "GPU-a", 1 << 30), b = mkvm("b", "", 2 << 20), got, *list;
	size_t n;

	open_db();
	ck_assert_int_eq(vc_db_gpu_put(DB, &g), 0);
	ck_assert_int_eq(vc_db_vm_insert(DB, &b), 0);
	ck_assert_int_eq(vc_db_vm_insert(DB, &a), 0);
	ck_assert_int_eq(vc_db_vm_insert(DB, &a), -EEXIST);
	a.state = VC_VM_RUNNING;
	a.server_pid = 1234;
	a.started_ms = 99;
	a.weight = 7;
	ck_assert_int_eq(vc_db_vm_update(DB, &a), 0);
	ck_assert_int_eq(vc_db_vm_get(DB, "a", &got), 0);
	ck_assert_int_eq(got.state, VC_VM_RUNNING);
	ck_assert_int_eq(got.server_pid, 1234);
	ck_assert_uint_eq(got.weight, 7);
	ck_assert_str_eq(got.gpu, "GPU-a");
	ck_assert_int_eq(vc_db_vm_list(DB, &list, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(list[0].name, "a");
	free(list);
	/* a GPU that is not known cannot be assigned */
	b = mkvm("c", "GPU-nope", 1);
	ck_assert_int_eq(vc_db_vm_insert(DB, &b), -EEXIST);
	ck_assert_int_eq(vc_db_vm_delete(DB, "a"), 0);
	ck_assert_int_eq(vc_db_vm_delete(DB, "a"), -ENOENT);
	ck_assert_int_eq(vc_db_vm_get(DB, "a", &got), -ENOENT);
	b = mkvm("zz", "", 1);
	ck_assert_int_eq(vc_db_vm_update(DB, &b), -ENOENT);
}
END_TEST

START_TEST(a_vm_of_whole_gpus)
{
	struct vc_gpu g0 = mkgpu("GPU-a", 0), g1 = mkgpu("GPU-b", 1), g2 = mkgpu("GPU-c", 2);
	struct vc_vm w = mkvm("w", "GPU-a", 160ull << 30), got, *list;
	size_t n;

	open_db();
	ck_assert_int_eq(vc_db_gpu_put(DB, &g0), 0);
	ck_assert_int_eq(vc_db_gpu_put(DB, &g1), 0);
	ck_assert_int_eq(vc_db_gpu_put(DB, &g2), 0);
	w.ngpus = 2;
	snprintf(w.more[0], sizeof(w.more[0]), "GPU-c");
	ck_assert_int_eq(vc_db_vm_insert(DB, &w), 0);
	ck_assert_int_eq(vc_db_vm_get(DB, "w", &got), 0);
	ck_assert_uint_eq(got.ngpus, 2);
	ck_assert_str_eq(got.gpu, "GPU-a");
	ck_assert_str_eq(got.more[0], "GPU-c");
	/* moved: its second GPU replaced, then a third added */
	snprintf(w.more[0], sizeof(w.more[0]), "GPU-b");
	ck_assert_int_eq(vc_db_vm_update(DB, &w), 0);
	w.ngpus = 3;
	snprintf(w.more[1], sizeof(w.more[1]), "GPU-c");
	ck_assert_int_eq(vc_db_vm_update(DB, &w), 0);
	ck_assert_int_eq(vc_db_vm_list(DB, &list, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(list[0].ngpus, 3);
	ck_assert_str_eq(list[0].more[0], "GPU-b");
	ck_assert_str_eq(list[0].more[1], "GPU-c");
	free(list);
	/* back to one GPU: the others' rows go */
	w.ngpus = 1;
	ck_assert_int_eq(vc_db_vm_update(DB, &w), 0);
	ck_assert_int_eq(vc_db_vm_get(DB, "w", &got), 0);
	ck_assert_uint_eq(got.ngpus, 1);
	ck_assert_str_eq(got.more[0], "");
	/* a GPU that is not known cannot be one of them */
	w.ngpus = 2;
	snprintf(w.more[0], sizeof(w.more[0]), "GPU-nope");
	ck_assert_int_eq(vc_db_vm_update(DB, &w), -EEXIST);
	/* removing the VM removes its rows */
	ck_assert_int_eq(vc_db_vm_delete(DB, "w"), 0);
	ck_assert_int_eq(vc_db_vm_get(DB, "w", &got), -ENOENT);
}
END_TEST

/* A database of schema 1 (before VMs of several GPUs) keeps its VMs, each of one GPU. */
START_TEST(schema_1_is_migrated)
{
	sqlite3 *h;
	struct vc_vm got;

	ck_assert_int_eq(sqlite3_open(PATH, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h,
		"CREATE TABLE gpus (uuid TEXT PRIMARY KEY NOT NULL, idx INTEGER NOT NULL, name TEXT NOT NULL,"
		" mem_total INTEGER NOT NULL, pci_bus_id TEXT NOT NULL, health TEXT NOT NULL CHECK (health IN"
		" ('healthy', 'unhealthy')), health_reason TEXT NOT NULL DEFAULT '', drained INTEGER NOT NULL DEFAULT 0,"
		" present INTEGER NOT NULL DEFAULT 1, first_seen_ms INTEGER NOT NULL, last_seen_ms INTEGER NOT NULL);"
		"CREATE TABLE vms (name TEXT PRIMARY KEY NOT NULL, gpu TEXT REFERENCES gpus(uuid), mem_quota INTEGER"
		" NOT NULL, pinned_quota INTEGER NOT NULL, weight INTEGER NOT NULL, idle_timeout INTEGER NOT NULL,"
		" state TEXT NOT NULL CHECK (state IN ('stopped', 'running')), server_pid INTEGER, created_ms INTEGER"
		" NOT NULL, started_ms INTEGER);"
		"CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, time_ms INTEGER NOT NULL, kind TEXT NOT NULL,"
		" vm TEXT NOT NULL DEFAULT '', gpu TEXT NOT NULL DEFAULT '', message TEXT NOT NULL);"
		"CREATE INDEX events_vm ON events(vm, id);"
		"INSERT INTO gpus VALUES ('GPU-a', 0, 'Fake', 85899345920, '', 'healthy', '', 0, 1, 1, 1);"
		"INSERT INTO vms VALUES ('old', 'GPU-a', 1073741824, 1048576, 100, 0, 'stopped', NULL, 1, NULL);"
		"PRAGMA user_version = 1;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	open_db();
	ck_assert_int_eq(vc_db_schema_version(DB), VC_DB_SCHEMA_VERSION);
	ck_assert_int_eq(vc_db_vm_get(DB, "old", &got), 0);
	ck_assert_uint_eq(got.ngpus, 1);
	ck_assert_str_eq(got.gpu, "GPU-a");
	ck_assert_uint_eq(got.mem_quota, 1u << 30);
}
END_TEST

START_TEST(events)
{
	struct vc_event *ev;
	size_t n;

	open_db();
	for (int i = 1; i <= 20; i++)
		ck_assert_int_eq(vc_db_event_add(DB, "test", "vm1", NULL, "event %d", i), 0);
	ck_assert_int_eq(vc_db_event_list(DB, 0, 5, &ev, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(ev[0].id, 16); /* the latest five, oldest first */
	ck_assert_str_eq(ev[4].message, "event 20");
	ck_assert_str_eq(ev[4].vm, "vm1");
	free(ev);
	ck_assert_int_eq(vc_db_event_list(DB, 3, 2, &ev, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(ev[0].id, 4);
	free(ev);
	ck_assert_int_eq(vc_db_event_prune(DB, 10), 0);
	ck_assert_int_eq(vc_db_event_list(DB, 0, 100, &ev, &n), 0);
	ck_assert_uint_eq(n, 10);
	ck_assert_int_eq(ev[0].id, 11);
	free(ev);
}
END_TEST

START_TEST(rollback_leaves_nothing)
{
	struct vc_vm v = mkvm("gone", "", 1), got;

	open_db();
	ck_assert_int_eq(vc_db_begin(DB), 0);
	ck_assert_int_eq(vc_db_vm_insert(DB, &v), 0);
	ck_assert_int_eq(vc_db_event_add(DB, "vm.added", "gone", NULL, "added"), 0);
	vc_db_rollback(DB);
	ck_assert_int_eq(vc_db_vm_get(DB, "gone", &got), -ENOENT);
	vc_db_rollback(DB); /* harmless outside a transaction */
}
END_TEST

/*
 * A child commits VMs one transaction at a time and is killed with SIGKILL
 * in the middle of an open transaction: what it committed is there, what it
 * had not is not, and the file is intact.
 */
START_TEST(sigkill_mid_transaction)
{
	int p[2];
	pid_t pid;
	char buf[16];
	int st, committed = 0;
	struct vc_vm got, *list;
	size_t n;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		struct vc_db *db;
		char err[256];

		close(p[0]);
		if (vc_db_open(PATH, &db, err, sizeof(err)))
			_exit(1);
		for (int i = 0; i < 50; i++) {
			struct vc_vm v = mkvm("x", "", 1);

			snprintf(v.name, sizeof(v.name), "vm%d", i);
			if (vc_db_begin(db) || vc_db_vm_insert(db, &v) ||
			    vc_db_event_add(db, "vm.added", v.name, NULL, "added %d", i) || vc_db_commit(db))
				_exit(1);
			if (write(p[1], "c", 1) != 1)
				_exit(1);
		}
		struct vc_vm v = mkvm("uncommitted", "", 1);

		vc_db_begin(db);
		vc_db_vm_insert(db, &v);
		vc_db_event_add(db, "vm.added", v.name, NULL, "never committed");
		raise(SIGKILL);
		_exit(2);
	}
	close(p[1]);
	while (read(p[0], buf, 1) == 1)
		committed++;
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ck_assert_int_eq(committed, 50);
	open_db(); /* runs quick_check: the file is intact */
	ck_assert_int_eq(vc_db_vm_list(DB, &list, &n), 0);
	ck_assert_uint_eq(n, 50);
	free(list);
	ck_assert_int_eq(vc_db_vm_get(DB, "vm49", &got), 0);
	ck_assert_int_eq(vc_db_vm_get(DB, "uncommitted", &got), -ENOENT);
	struct vc_event *ev;

	ck_assert_int_eq(vc_db_event_list(DB, 0, 1000, &ev, &n), 0);
	ck_assert_uint_eq(n, 50);
	free(ev);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mgmt_db");
	TCase *t = tcase_create("db");
	SRunner *r;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, create_and_reopen);
	tcase_add_test(t, newer_schema_is_refused);
	tcase_add_test(t, a_file_that_is_not_a_database_is_refused);
	tcase_add_test(t, partial_migration_is_rolled_back);
	tcase_add_test(t, gpus_keep_their_drain_flag);
	tcase_add_test(t, vms);
	tcase_add_test(t, a_vm_of_whole_gpus);
	tcase_add_test(t, schema_1_is_migrated);
	tcase_add_test(t, events);
	tcase_add_test(t, rollback_leaves_nothing);
	tcase_add_test(t, sigkill_mid_transaction);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
