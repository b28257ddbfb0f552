/* SPDX-License-Identifier: MIT */
/*
 * vcactl_main.c - vcudactl, the administrator's command line for
 * vcuda-mgmtd: one request on its socket (mgmt/proto.h), the reply as a
 * table for people or, with --json, as the daemon's JSON for scripts.
 *
 * Exit codes: 0 done; 1 the daemon refused (its reason on stderr); 2 bad
 * usage; 3 the daemon cannot be reached; 4 permission denied.
 */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_print.h"
#include "lines.h"
#include "proto.h"
#include "util.h"

enum { EX_OK = 0, EX_DAEMON = 1, EX_USAGE = 2, EX_UNREACHABLE = 3, EX_PERM = 4 };

#define REPLY_TIMEOUT_MS 60000
#define REPLY_MAX (16u << 20)

static const char *g_socket;
static bool g_json;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vcudactl [--json] [--socket PATH] COMMAND\n"
		"  status                               the daemon: GPU source, database, who may change state\n"
		"  gpu list                             GPUs, their state and what is promised on them\n"
		"  gpu show ID                          one GPU (an index or a UUID) and its VMs\n"
		"  gpu drain ID | undrain ID            stop / resume placing VMs on a GPU\n"
		"  gpu rescan                           read the GPUs again (NVML or the inventory file)\n"
		"  vm add NAME [--gpu ID[,ID...]] [--gpus N] [--mem-quota SIZE] [--pinned-quota SIZE] [--weight N]\n"
		"         [--idle-timeout S]          (several GPUs: the VM takes them whole)\n"
		"  vm set NAME [--gpu ID[,ID...]] [--gpus N] [--mem-quota SIZE] [--pinned-quota SIZE] [--weight N]\n"
		"         [--idle-timeout S]\n"
		"  vm remove NAME [--force]\n"
		"  vm list | vm show NAME\n"
		"  session list [--vm NAME]             sessions of running VMs, with their usage\n"
		"  events [--since ID] [--limit N] [--follow]\n"
		"Options: --json (the daemon's reply as JSON), --socket PATH (default $VCUDA_MGMT_SOCKET or\n"
		"/run/vcuda/mgmt.sock). Sizes take K, M, G, T suffixes.\n"
		"Exit codes: 0 done, 1 refused by the daemon, 2 usage, 3 daemon unreachable, 4 permission denied.\n");
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vcudactl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(run 'vcudactl --help' for the commands)\n");
	return EX_USAGE;
}

/* ---- talking to the daemon --------------------------------------------------------------- */

static int unreachable(int err)
{
	struct stat st;

	if (err == EACCES || err == EPERM) {
		struct group *g = stat(g_socket, &st) == 0 ? getgrgid(st.st_gid) : NULL;

		fprintf(stderr, "vcudactl: permission denied on %s: reading needs membership of group %s "
				"(the socket's group), changing state needs root or the daemon's admin group "
				"(vcuda-admin unless --admin-group says otherwise)\n",
			g_socket, g ? g->gr_name : "?");
		return EX_PERM;
	}
	fprintf(stderr, "vcudactl: cannot reach vcuda-mgmtd at %s: %s.\n"
			"Is it running? Start it (as root: 'vcuda-mgmtd', or 'vcuda-mgmtd --inventory FILE' on a "
			"host without NVIDIA GPUs), or point --socket or VCUDA_MGMT_SOCKET at its socket.\n",
		g_socket, strerror(err));
	return EX_UNREACHABLE;
}

/* One request, its reply in *@rep. Returns EX_OK or an exit code. */
static int call(json_t *req, json_t **rep)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct vc_lines l;
	size_t len, linelen;
	char *text, *line;
	json_error_t jerr;
	int fd, rc;

	json_object_set_new(req, "v", json_integer(VC_MGMT_PROTO_VERSION));
	if (strlen(g_socket) >= sizeof(a.sun_path))
		return bad_usage("socket path too long: %s", g_socket);
	strcpy(a.sun_path, g_socket);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		rc = errno;
		if (fd >= 0)
			close(fd);
		return unreachable(rc);
	}
	text = vc_json_line(req, &len);
	if (!text || vc_lines_init(&l, REPLY_MAX, VC_MGMT_LINE_MAX)) {
		fprintf(stderr, "vcudactl: out of memory\n");
		free(text);
		close(fd);
		return EX_DAEMON;
	}
	rc = vc_lines_request(&l, fd, text, len, REPLY_TIMEOUT_MS, &line, &linelen);
	free(text);
	if (rc < 0) {
		fprintf(stderr, "vcudactl: no reply from vcuda-mgmtd at %s: %s\n", g_socket,
			rc == -ETIMEDOUT ? "timed out" : rc == -ECONNRESET ? "it closed the connection" : strerror(-rc));
		vc_lines_fini(&l);
		close(fd);
		return EX_UNREACHABLE;
	}
	*rep = json_loadb(line, linelen, 0, &jerr);
	vc_lines_fini(&l);
	close(fd);
	if (!json_is_object(*rep)) {
		fprintf(stderr, "vcudactl: vcuda-mgmtd sent a reply that is not JSON (%s); is it the same release?\n",
			jerr.text);
		json_decref(*rep);
		return EX_DAEMON;
	}
	return EX_OK;
}

/* Send @req (taken); print an error reply; returns the exit code and, on
 * success, the reply in *@rep (NULL when printed as JSON already). */
static int request(json_t *req, json_t **rep)
{
	const char *code, *error;
	int rc = call(req, rep);

	json_decref(req);
	if (rc)
		return rc;
	if (g_json) {
		char *s = json_dumps(*rep, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		printf("%s\n", s ? s : "{}");
		free(s);
	}
	if (json_is_true(json_object_get(*rep, "ok"))) {
		if (g_json) {
			json_decref(*rep);
			*rep = NULL;
		}
		return EX_OK;
	}
	code = json_string_value(json_object_get(*rep, "code"));
	error = json_string_value(json_object_get(*rep, "error"));
	if (!g_json)
		fprintf(stderr, "vcudactl: %s\n", error ? error : "the daemon refused, without a reason");
	rc = code && !strcmp(code, VC_MERR_PERMISSION) ? EX_PERM : EX_DAEMON;
	json_decref(*rep);
	*rep = NULL;
	return rc;
}

/* ---- formatting ---------------------------------------------------------------------------- */

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "-";
}

static int64_t jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static const char *size_of(json_t *o, const char *k, char *buf, size_t len)
{
	json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		return "-";
	return vc_size_format((uint64_t)json_integer_value(v), buf, len);
}

static const char *num_of(json_t *o, const char *k, char *buf, size_t len)
{
	json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		return "-";
	snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	return buf;
}

static const char *time_of(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!ms || !localtime_r(&t, &tm))
		return "-";
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

/* ---- commands ----------------------------------------------------------------------------- */

/* Options of a command: --name VALUE or --name=VALUE; flags without a value. */
struct copt {
	const char *name;
	const char **value; /* NULL: a flag */
	bool *flag;
};

static int parse_opts(int argc, char **argv, int first, struct copt *o, int no, const char **pos, int npos,
		      int *got)
{
	*got = 0;
	for (int i = first; i < argc; i++) {
		const char *arg = argv[i];
		int k;

		if (strncmp(arg, "--", 2)) {
			if (*got == npos)
				return bad_usage("unexpected argument '%s'", arg);
			pos[(*got)++] = arg;
			continue;
		}
		for (k = 0; k < no; k++) {
			size_t n = strlen(o[k].name);

			if (strncmp(arg + 2, o[k].name, n) || (arg[2 + n] && arg[2 + n] != '='))
				continue;
			if (!o[k].value) {
				if (arg[2 + n])
					return bad_usage("--%s takes no value", o[k].name);
				*o[k].flag = true;
			} else if (arg[2 + n] == '=') {
				*o[k].value = arg + 3 + n;
			} else if (i + 1 < argc) {
				*o[k].value = argv[++i];
			} else {
				return bad_usage("--%s needs a value", o[k].name);
			}
			break;
		}
		if (k == no)
			return bad_usage("unknown option '%s' here", arg);
	}
	return EX_OK;
}

static int set_size(json_t *req, const char *key, const char *opt, const char *v)
{
	uint64_t b;

	if (!v)
		return EX_OK;
	if (vc_size_parse(v, &b))
		return bad_usage("%s: '%s' is not a size (like 4096, 512M, 8G)", opt, v);
	json_object_set_new(req, key, json_integer((json_int_t)b));
	return EX_OK;
}

static int set_uint(json_t *req, const char *key, const char *opt, const char *v)
{
	char *end;
	unsigned long long x;

	if (!v)
		return EX_OK;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || x > INT64_MAX)
		return bad_usage("%s: '%s' is not a number", opt, v);
	json_object_set_new(req, key, json_integer((json_int_t)x));
	return EX_OK;
}

static int cmd_status(void)
{
	json_t *rep, *dm, *you;
	int rc = request(json_pack("{s:s}", "op", "status"), &rep);

	if (rc || !rep)
		return rc;
	dm = json_object_get(rep, "daemon");
	you = json_object_get(rep, "you");
	printf("vcuda-mgmtd %s (pid %" PRId64 "), protocol %" PRId64 "\n", jstr(dm, "version"), jint(dm, "pid"),
	       jint(dm, "protocol"));
	vc_print_kv(stdout, 10, "GPUs from", "%s", jstr(dm, "gpu_source_detail"));
	vc_print_kv(stdout, 10, "database", "%s (schema %" PRId64 ")", jstr(dm, "database"), jint(dm, "schema"));
	vc_print_kv(stdout, 10, "run dir", "%s", jstr(dm, "run_dir"));
	vc_print_kv(stdout, 10, "server", "%s%s%s", jstr(dm, "server"),
		    json_is_true(json_object_get(dm, "server_ok")) ? "" : ": ",
		    json_is_true(json_object_get(dm, "server_ok")) ? "" : jstr(dm, "server_problem"));
	vc_print_kv(stdout, 10, "servers", "%" PRId64 " running", jint(dm, "servers"));
	vc_print_kv(stdout, 10, "admins", "%s", jstr(dm, "admins"));
	vc_print_kv(stdout, 10, "you", "uid %" PRId64 ", %s", jint(you, "uid"),
		    json_is_true(json_object_get(you, "admin")) ? "may change state" : "may read only");
	json_decref(rep);
	return EX_OK;
}

static void print_gpus(json_t *rep)
{
	static const char *const head[] = {"IDX", "UUID", "NAME", "MEMORY", "PROMISED", "VMS", "WEIGHT", "STATE"};
	struct vc_table t;
	json_t *g;
	size_t i;

	vc_table_init(&t, 8, head);
	json_array_foreach(json_object_get(rep, "gpus"), i, g) {
		char idx[16], mem[32], prom[32], vms[96], w[24], state[200];

		snprintf(state, sizeof(state), "%s%s%s", jstr(g, "state"),
			 json_object_get(g, "health_reason") ? " (" : "",
			 json_object_get(g, "health_reason") ? jstr(g, "health_reason") : "");
		if (json_object_get(g, "health_reason"))
			strncat(state, ")", sizeof(state) - strlen(state) - 1);
		num_of(g, "vms", vms, sizeof(vms));
		if (json_is_string(json_object_get(g, "whole_vm"))) /* a VM of several GPUs has it whole */
			snprintf(vms, sizeof(vms), "1 (%s's whole)", jstr(g, "whole_vm"));
		vc_table_row(&t, json_is_true(json_object_get(g, "present")) ? num_of(g, "index", idx, sizeof(idx)) : "-",
			     jstr(g, "uuid"), jstr(g, "name"), size_of(g, "memory_total", mem, sizeof(mem)),
			     size_of(g, "promised", prom, sizeof(prom)), vms,
			     num_of(g, "weight", w, sizeof(w)), state);
	}
	vc_table_print(&t, stdout);
	vc_table_free(&t);
	if (!strcmp(jstr(rep, "source"), "inventory"))
		printf("(GPUs from an inventory file, not NVML: a test or dry-run setup)\n");
}

static int cmd_gpu(int argc, char **argv)
{
	const char *pos[1], *sub = argc > 2 ? argv[2] : NULL;
	json_t *rep, *req;
	int rc, got;

	if (!sub)
		return bad_usage("gpu: list, show ID, drain ID, undrain ID or rescan?");
	if ((rc = parse_opts(argc, argv, 3, NULL, 0, pos, 1, &got)))
		return rc;
	if (!strcmp(sub, "list") || !strcmp(sub, "rescan")) {
		if (got)
			return bad_usage("gpu %s takes no arguments", sub);
		rc = request(json_pack("{s:s}", "op", !strcmp(sub, "list") ? "gpu.list" : "gpu.rescan"), &rep);
		if (rc || !rep)
			return rc;
		if (!strcmp(sub, "rescan"))
			printf("rescanned: %" PRId64 " change%s\n", jint(rep, "changes"), jint(rep, "changes") == 1 ? "" : "s");
		print_gpus(rep);
		json_decref(rep);
		return EX_OK;
	}
	if (strcmp(sub, "show") && strcmp(sub, "drain") && strcmp(sub, "undrain"))
		return bad_usage("gpu: unknown command '%s' (list, show, drain, undrain, rescan)", sub);
	if (got != 1)
		return bad_usage("gpu %s needs a GPU: an index or a UUID", sub);
	req = json_pack("{s:s, s:s}", "op", !strcmp(sub, "show") ? "gpu.show" : !strcmp(sub, "drain") ? "gpu.drain"
				: "gpu.undrain", "gpu", pos[0]);
	rc = request(req, &rep);
	if (rc || !rep)
		return rc;
	json_t *g = json_object_get(rep, "gpu");
	char a[32], b[32], c[32];

	if (strcmp(sub, "show")) {
		printf("gpu %" PRId64 " (%s) %s%s\n", jint(g, "index"), jstr(g, "uuid"),
		       json_is_true(json_object_get(rep, "changed")) ? "" : "was already ",
		       !strcmp(sub, "drain") ? "drained: it takes no new VMs; its VMs move on their next open"
					     : "undrained: it takes new VMs");
		json_decref(rep);
		return EX_OK;
	}
	printf("gpu %" PRId64 "\n", jint(g, "index"));
	vc_print_kv(stdout, 12, "uuid", "%s", jstr(g, "uuid"));
	vc_print_kv(stdout, 12, "name", "%s", jstr(g, "name"));
	vc_print_kv(stdout, 12, "pci bus id", "%s", jstr(g, "pci_bus_id"));
	vc_print_kv(stdout, 12, "memory", "%s, %s promised, %s not promised", size_of(g, "memory_total", a, sizeof(a)),
		    size_of(g, "promised", b, sizeof(b)), size_of(g, "unpromised", c, sizeof(c)));
	vc_print_kv(stdout, 12, "state", "%s%s%s", jstr(g, "state"), json_object_get(g, "health_reason") ? ": " : "",
		    json_object_get(g, "health_reason") ? jstr(g, "health_reason") : "");
	vc_print_kv(stdout, 12, "weight", "%" PRId64 " (total of its VMs)", jint(g, "weight"));
	printf("  VMs:");
	json_t *n;
	size_t i;

	json_array_foreach(json_object_get(g, "vm_names"), i, n)
		printf(" %s", json_string_value(n));
	printf("%s\n", json_array_size(json_object_get(g, "vm_names")) ? "" : " none");
	json_decref(rep);
	return EX_OK;
}

/* A VM's GPUs for a table: "0", "1 (drained)", "0,1 (whole)"; "none" until placed. */
static const char *vm_gpus(json_t *v, char *out, size_t len)
{
	json_t *all = json_object_get(v, "gpus"), *g;
	const char *bad = NULL;
	size_t at = 0, i;

	out[0] = '\0';
	json_array_foreach(all, i, g) {
		json_t *st = json_object_get(g, "state");

		if (json_is_string(st) && strcmp(json_string_value(st), "healthy"))
			bad = json_string_value(st);
		if (at < len)
			at += (size_t)snprintf(out + at, len - at, json_is_integer(json_object_get(g, "index")) ? "%s%" PRId64
					       : "%s?", i ? "," : "", jint(g, "index"));
	}
	if (!out[0]) {
		snprintf(out, len, "none");
		return out;
	}
	if (at < len && (bad || json_array_size(all) > 1))
		snprintf(out + at, len - at, " (%s%s%s)", json_array_size(all) > 1 ? "whole" : "",
			 bad && json_array_size(all) > 1 ? ", " : "", bad ? bad : "");
	return out;
}

static void print_vms(json_t *arr)
{
	static const char *const head[] = {"NAME", "GPU", "MEM QUOTA", "PINNED QUOTA", "WEIGHT", "IDLE TIMEOUT",
					   "STATE", "SERVER PID"};
	struct vc_table t;
	json_t *v;
	size_t i;

	vc_table_init(&t, 8, head);
	json_array_foreach(arr, i, v) {
		char gpu[64], mq[32], pq[32], w[16], idle[24], pid[16], state[64];

		vm_gpus(v, gpu, sizeof(gpu));
		snprintf(idle, sizeof(idle), "%" PRId64 "%s", jint(v, "idle_timeout"), jint(v, "idle_timeout") ? " s" : " (never)");
		snprintf(state, sizeof(state), "%s", jstr(v, "state"));
		if (json_is_string(json_object_get(v, "server_state")) && strcmp(jstr(v, "server_state"), "running"))
			snprintf(state, sizeof(state), "%s", jstr(v, "server_state"));
		vc_table_row(&t, jstr(v, "name"), gpu, size_of(v, "mem_quota", mq, sizeof(mq)),
			     size_of(v, "pinned_quota", pq, sizeof(pq)), num_of(v, "weight", w, sizeof(w)), idle, state,
			     num_of(v, "server_pid", pid, sizeof(pid)));
	}
	vc_table_print(&t, stdout);
	vc_table_free(&t);
}

static void print_sessions(json_t *arr, bool with_vm)
{
	static const char *const head[] = {"VM", "ID", "KIND", "SLOT", "PID", "UID", "COMM", "MEMORY", "PINNED",
					   "COMMANDS", "IDLE"};
	struct vc_table t;
	json_t *s;
	size_t i;

	/* Without the VM column inside 'vm show': the VM is known there. */
	vc_table_init(&t, with_vm ? 11 : 10, with_vm ? head : head + 1);
	json_array_foreach(arr, i, s) {
		char id[16], slot[16], pid[16], uid[16], mem[32], pin[32], cmds[24], idle[32];

		snprintf(idle, sizeof(idle), "%.1f s", (double)jint(s, "idle_ms") / 1000.0);
		if (!with_vm)
			vc_table_row(&t, num_of(s, "id", id, sizeof(id)), jstr(s, "kind"), num_of(s, "slot", slot, sizeof(slot)),
				     num_of(s, "pid", pid, sizeof(pid)), num_of(s, "uid", uid, sizeof(uid)), jstr(s, "comm"),
				     size_of(s, "mem_bytes", mem, sizeof(mem)), size_of(s, "pinned_bytes", pin, sizeof(pin)),
				     num_of(s, "commands", cmds, sizeof(cmds)), idle);
		else
		vc_table_row(&t, jstr(s, "vm"), num_of(s, "id", id, sizeof(id)), jstr(s, "kind"),
			     num_of(s, "slot", slot, sizeof(slot)), num_of(s, "pid", pid, sizeof(pid)),
			     num_of(s, "uid", uid, sizeof(uid)), jstr(s, "comm"), size_of(s, "mem_bytes", mem, sizeof(mem)),
			     size_of(s, "pinned_bytes", pin, sizeof(pin)), num_of(s, "commands", cmds, sizeof(cmds)), idle);
	}
	vc_table_print(&t, stdout);
	vc_table_free(&t);
}

static int cmd_vm(int argc, char **argv)
{
	const char *gpu = NULL, *gpus = NULL, *mq = NULL, *pq = NULL, *w = NULL, *idle = NULL, *pos[1];
	const char *sub = argc > 2 ? argv[2] : NULL;
	bool force = false;
	struct copt q[] = {{"gpu", &gpu, NULL}, {"gpus", &gpus, NULL}, {"mem-quota", &mq, NULL},
			   {"pinned-quota", &pq, NULL}, {"weight", &w, NULL}, {"idle-timeout", &idle, NULL}};
	struct copt fo[] = {{"force", NULL, &force}};
	json_t *req, *rep, *v;
	int rc, got;
	char a[32], b[32], where[160];

	if (!sub)
		return bad_usage("vm: add, remove, list, show or set?");
	if (!strcmp(sub, "list")) {
		if ((rc = parse_opts(argc, argv, 3, NULL, 0, pos, 0, &got)))
			return rc;
		rc = request(json_pack("{s:s}", "op", "vm.list"), &rep);
		if (rc || !rep)
			return rc;
		print_vms(json_object_get(rep, "vms"));
		json_decref(rep);
		return EX_OK;
	}
	if (!strcmp(sub, "add") || !strcmp(sub, "set")) {
		if ((rc = parse_opts(argc, argv, 3, q, 6, pos, 1, &got)))
			return rc;
		if (got != 1)
			return bad_usage("vm %s needs the VM's name", sub);
		req = json_pack("{s:s, s:s}", "op", !strcmp(sub, "add") ? "vm.add" : "vm.set", "name", pos[0]);
		if (gpu)
			json_object_set_new(req, "gpu", json_string(gpu));
		if ((rc = set_uint(req, "gpus", "--gpus", gpus)) || (rc = set_size(req, "mem_quota", "--mem-quota", mq)) ||
		    (rc = set_size(req, "pinned_quota", "--pinned-quota", pq)) ||
		    (rc = set_uint(req, "weight", "--weight", w)) ||
		    (rc = set_uint(req, "idle_timeout", "--idle-timeout", idle))) {
			json_decref(req);
			return rc;
		}
		if (!strcmp(sub, "set") && json_object_size(req) == 2) {
			json_decref(req);
			return bad_usage("vm set %s: nothing to set (--gpu, --gpus, --mem-quota, --pinned-quota, --weight, "
					 "--idle-timeout)", pos[0]);
		}
		rc = request(req, &rep);
		if (rc || !rep)
			return rc;
		v = json_object_get(rep, "vm");
		if (!strcmp(sub, "add")) {
			if (json_array_size(json_object_get(v, "gpus")) > 1)
				printf("added %s on gpus %s: %s\n", jstr(v, "name"), vm_gpus(v, where, sizeof(where)),
				       jstr(rep, "placement"));
			else
				printf("added %s on gpu %" PRId64 " (%s): %s\n", jstr(v, "name"), jint(v, "gpu_index"),
				       jstr(v, "gpu"), jstr(rep, "placement"));
			printf("  mem quota %s, pinned quota %s, weight %" PRId64 ", idle timeout %" PRId64 " s\n",
			       size_of(v, "mem_quota", a, sizeof(a)), size_of(v, "pinned_quota", b, sizeof(b)),
			       jint(v, "weight"), jint(v, "idle_timeout"));
			printf("  QEMU connects to %s (virtio-vcuda-pci's chardev)\n", jstr(v, "socket"));
		} else {
			printf("changed %s: gpu %s, mem quota %s, pinned quota %s, weight %" PRId64 ", idle timeout %" PRId64
			       " s%s\n", jstr(v, "name"), vm_gpus(v, where, sizeof(where)), size_of(v, "mem_quota", a, sizeof(a)),
			       size_of(v, "pinned_quota", b, sizeof(b)), jint(v, "weight"), jint(v, "idle_timeout"),
			       json_is_true(json_object_get(rep, "live")) ? " (applied to its running server)" : "");
			if (json_object_get(rep, "note"))
				printf("  note: %s\n", jstr(rep, "note"));
		}
		json_decref(rep);
		return EX_OK;
	}
	if (!strcmp(sub, "remove") || !strcmp(sub, "show")) {
		if ((rc = parse_opts(argc, argv, 3, fo, !strcmp(sub, "remove") ? 1 : 0, pos, 1, &got)))
			return rc;
		if (got != 1)
			return bad_usage("vm %s needs the VM's name", sub);
		req = json_pack("{s:s, s:s}", "op", !strcmp(sub, "remove") ? "vm.remove" : "vm.show", "name", pos[0]);
		if (force)
			json_object_set_new(req, "force", json_true());
		rc = request(req, &rep);
		if (rc || !rep)
			return rc;
		if (!strcmp(sub, "remove")) {
			printf("removed %s\n", pos[0]);
			json_decref(rep);
			return EX_OK;
		}
		v = json_object_get(rep, "vm");
		char t1[32], t2[32];
		json_t *live = json_object_get(v, "live"), *g;
		size_t k;

		printf("vm %s\n", jstr(v, "name"));
		if (!json_array_size(json_object_get(v, "gpus")))
			vc_print_kv(stdout, 12, "gpu", "none (placed when its QEMU connects)");
		json_array_foreach(json_object_get(v, "gpus"), k, g) {
			if (json_is_integer(json_object_get(g, "index")))
				snprintf(where, sizeof(where), "%" PRId64 " (%s, %s)", jint(g, "index"), jstr(g, "uuid"),
					 jstr(g, "state"));
			else
				snprintf(where, sizeof(where), "? (%s)", jstr(g, "uuid"));
			if (json_array_size(json_object_get(v, "gpus")) > 1)
				snprintf(a, sizeof(a), "device %zu", k); /* the VM's device ordinal */
			vc_print_kv(stdout, 12, json_array_size(json_object_get(v, "gpus")) > 1 ? a : "gpu", "%s%s", where,
				    json_array_size(json_object_get(v, "gpus")) > 1 ? ", whole" : "");
		}
		vc_print_kv(stdout, 12, "mem quota", "%s", size_of(v, "mem_quota", a, sizeof(a)));
		vc_print_kv(stdout, 12, "pinned quota", "%s", size_of(v, "pinned_quota", b, sizeof(b)));
		vc_print_kv(stdout, 12, "weight", "%" PRId64, jint(v, "weight"));
		vc_print_kv(stdout, 12, "idle timeout", "%" PRId64 " s%s", jint(v, "idle_timeout"),
			    jint(v, "idle_timeout") ? "" : " (never)");
		vc_print_kv(stdout, 12, "state", "%s", jstr(v, "state"));
		if (json_is_integer(json_object_get(v, "server_pid")))
			vc_print_kv(stdout, 12, "server pid", "%" PRId64 " (since %s)", jint(v, "server_pid"),
				    time_of(jint(v, "started_ms"), t1, sizeof(t1)));
		vc_print_kv(stdout, 12, "socket", "%s", jstr(v, "socket"));
		vc_print_kv(stdout, 12, "created", "%s", time_of(jint(v, "created_ms"), t2, sizeof(t2)));
		if (live) {
			char u1[32], u2[32], u3[32], u4[32];

			vc_print_kv(stdout, 12, "memory used", "%s of %s", size_of(live, "mem_used", u1, sizeof(u1)),
				    size_of(live, "mem_quota", u2, sizeof(u2)));
			/* a VM of several GPUs: what it holds on each */
			json_t *byd = json_object_get(live, "mem_used_by_device"), *e;
			char lbl[48];
			size_t d;

			json_array_foreach(byd, d, e) {
				if (json_array_size(byd) < 2 || !json_is_integer(e))
					break;
				snprintf(lbl, sizeof(lbl), "  on device %zu", d);
				vc_print_kv(stdout, 12, lbl, "%s", vc_size_format((uint64_t)json_integer_value(e), u1, sizeof(u1)));
			}
			vc_print_kv(stdout, 12, "pinned used", "%s of %s", size_of(live, "pinned_used", u3, sizeof(u3)),
				    size_of(live, "pinned_quota", u4, sizeof(u4)));
			printf("  sessions:\n");
			print_sessions(json_object_get(live, "sessions"), false);
		} else if (json_object_get(v, "live_error")) {
			vc_print_kv(stdout, 12, "live", "unavailable: %s", jstr(v, "live_error"));
		}
		json_decref(rep);
		return EX_OK;
	}
	return bad_usage("vm: unknown command '%s' (add, remove, list, show, set)", sub);
}

static int cmd_session(int argc, char **argv)
{
	const char *vm = NULL, *pos[1];
	struct copt o[] = {{"vm", &vm, NULL}};
	json_t *req, *rep, *e;
	size_t i;
	int rc, got;

	if (argc < 3 || strcmp(argv[2], "list"))
		return bad_usage("session: only 'session list [--vm NAME]'");
	if ((rc = parse_opts(argc, argv, 3, o, 1, pos, 0, &got)))
		return rc;
	req = json_pack("{s:s}", "op", "session.list");
	if (vm)
		json_object_set_new(req, "vm", json_string(vm));
	rc = request(req, &rep);
	if (rc || !rep)
		return rc;
	print_sessions(json_object_get(rep, "sessions"), true);
	json_array_foreach(json_object_get(rep, "errors"), i, e)
		fprintf(stderr, "vcudactl: vm %s: %s\n", jstr(e, "vm"), jstr(e, "error"));
	json_decref(rep);
	return EX_OK;
}

static int print_events(json_t *rep, int64_t *last)
{
	static const char *const head[] = {"ID", "TIME", "KIND", "MESSAGE"};
	struct vc_table t;
	json_t *e;
	size_t i;

	vc_table_init(&t, 4, head);
	json_array_foreach(json_object_get(rep, "events"), i, e) {
		char id[24], tm[32];

		vc_table_row(&t, num_of(e, "id", id, sizeof(id)), time_of(jint(e, "time_ms"), tm, sizeof(tm)),
			     jstr(e, "kind"), jstr(e, "message"));
		*last = jint(e, "id");
	}
	if (t.nrows)
		vc_table_print(&t, stdout);
	vc_table_free(&t);
	fflush(stdout);
	return EX_OK;
}

static int cmd_events(int argc, char **argv)
{
	const char *since = NULL, *limit = NULL, *pos[1];
	bool follow = false;
	struct copt o[] = {{"since", &since, NULL}, {"limit", &limit, NULL}, {"follow", NULL, &follow}};
	int64_t last = 0;
	json_t *req, *rep;
	int rc, got;

	if ((rc = parse_opts(argc, argv, 2, o, 3, pos, 0, &got)))
		return rc;
	for (;;) {
		req = json_pack("{s:s}", "op", "events");
		if ((rc = set_uint(req, "since", "--since", since)) || (rc = set_uint(req, "limit", "--limit", limit))) {
			json_decref(req);
			return rc;
		}
		rc = request(req, &rep);
		if (rc)
			return rc;
		if (rep) {
			print_events(rep, &last);
			json_decref(rep);
		}
		if (!follow)
			return EX_OK;
		/* from here on only what is new */
		static char buf[24];

		if (last) {
			snprintf(buf, sizeof(buf), "%" PRId64, last);
			since = buf;
		}
		sleep(1);
	}
}

int main(int argc, char **argv)
{
	char *args[64];
	int n = 0;

	g_socket = getenv("VCUDA_MGMT_SOCKET");
	if (!g_socket || !*g_socket)
		g_socket = "/run/vcuda/mgmt.sock";
	/* Global options may come anywhere. */
	for (int i = 0; i < argc; i++) {
		if (i > 0 && !strcmp(argv[i], "--json")) {
			g_json = true;
		} else if (i > 0 && !strcmp(argv[i], "--socket")) {
			if (i + 1 == argc)
				return bad_usage("--socket needs a path");
			g_socket = argv[++i];
		} else if (i > 0 && !strncmp(argv[i], "--socket=", 9)) {
			g_socket = argv[i] + 9;
		} else if (i > 0 && (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))) {
			usage(stdout);
			return EX_OK;
		} else if (n < 63) {
			args[n++] = argv[i];
		} else {
			return bad_usage("too many arguments");
		}
	}
	args[n] = NULL;
	if (n < 2) {
		usage(stderr);
		return EX_USAGE;
	}
	if (!strcmp(args[1], "status"))
		return n == 2 ? cmd_status() : bad_usage("status takes no arguments");
	if (!strcmp(args[1], "gpu"))
		return cmd_gpu(n, args);
	if (!strcmp(args[1], "vm"))
		return cmd_vm(n, args);
	if (!strcmp(args[1], "session") || !strcmp(args[1], "sessions"))
		return cmd_session(n, args);
	if (!strcmp(args[1], "events"))
		return cmd_events(n, args);
	return bad_usage("unknown command '%s'", args[1]);
}
