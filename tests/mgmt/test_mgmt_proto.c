/* SPDX-License-Identifier: MIT */
/*
 * test_mgmt_proto.c - what vcuda-mgmtd accepts from the outside: request
 * decoding and validation (mgmt/proto.c: versions, operations, every field's
 * type and range, unknown and duplicate fields, ids echoed in errors), the
 * inventory file (mgmt/gpus.c), sizes and names (mgmt/util.c), the admin
 * rule (mgmt/auth.c) and line framing with its caps (mgmt/lines.c).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "gpus.h"
#include "lines.h"
#include "proto.h"
#include "util.h"

static struct vc_mreq R;
static const char *CODE;
static char ERR[512];

static int parse(const char *s)
{
	vc_mreq_fini(&R);
	ERR[0] = 0;
	return vc_mreq_parse(s, strlen(s), &R, &CODE, ERR, sizeof(ERR));
}

/* Refused with @code and a message containing @needle. */
static void refused(const char *req, const char *code, const char *needle)
{
	ck_assert_msg(parse(req) == -EINVAL, "accepted: %s", req);
	ck_assert_str_eq(CODE, code);
	ck_assert_msg(strstr(ERR, needle), "'%s' refused with '%s', expected '%s'", req, ERR, needle);
	for (const char *p = ERR; *p; p++)
		ck_assert_msg(*p >= 0x20 && *p <= 0x7e, "unprintable byte in the error for %s", req);
}

static void teardown(void)
{
	vc_mreq_fini(&R);
}

START_TEST(valid_requests)
{
	ck_assert_int_eq(parse("{\"v\":1,\"op\":\"vm.list\"}"), 0);
	ck_assert_int_eq(R.op, VC_MOP_VM_LIST);
	ck_assert(!vc_mop_changes_state(R.op));
	ck_assert_int_eq(parse("{\"op\":\"vm.add\",\"v\":1,\"name\":\"vm-1.a_b\",\"gpu\":\"GPU-1234\","
			       "\"mem_quota\":8589934592,\"pinned_quota\":0,\"weight\":250,\"idle_timeout\":600,\"id\":7}"), 0);
	ck_assert_int_eq(R.op, VC_MOP_VM_ADD);
	ck_assert(vc_mop_changes_state(R.op));
	ck_assert_str_eq(R.name, "vm-1.a_b");
	ck_assert_str_eq(R.gpu, "GPU-1234");
	ck_assert_uint_eq(R.mem_quota, 8ull << 30);
	ck_assert_uint_eq(R.pinned_quota, 0);
	ck_assert_uint_eq(R.weight, 250);
	ck_assert_uint_eq(R.idle_timeout, 600);
	ck_assert_uint_eq(R.has, VC_MF_NAME | VC_MF_GPU | VC_MF_MEM_QUOTA | VC_MF_PINNED_QUOTA | VC_MF_WEIGHT | VC_MF_IDLE);
	ck_assert(json_is_integer(R.id));
	/* a GPU index may be a number */
	ck_assert_int_eq(parse("{\"v\":1,\"op\":\"gpu.drain\",\"gpu\":3}"), 0);
	ck_assert_str_eq(R.gpu, "3");
	ck_assert_int_eq(parse("{\"v\":1,\"op\":\"vm.remove\",\"name\":\"a\",\"force\":true}"), 0);
	ck_assert(R.force);
	ck_assert_int_eq(parse("{\"v\":1,\"op\":\"events\",\"since\":12,\"limit\":1000}"), 0);
	ck_assert_int_eq(R.since, 12);
	ck_assert_uint_eq(R.limit, 1000);
	ck_assert_int_eq(parse("{\"v\":1,\"op\":\"session.list\",\"vm\":\"x\"}"), 0);
	ck_assert_str_eq(R.vm, "x");
	ck_assert_int_eq(parse("  {\"v\":1,\"op\":\"status\",\"id\":\"abc\"}  "), 0);
	ck_assert_str_eq(json_string_value(R.id), "abc");
	for (int op = 0; op < VC_MOP_COUNT_; op++)
		ck_assert_str_ne(vc_mop_name((enum vc_mop)op), "?");
}
END_TEST

START_TEST(malformed_json)
{
	refused("", VC_MERR_BAD_REQUEST, "malformed JSON");
	refused("{\"v\":1,\"op\":", VC_MERR_BAD_REQUEST, "malformed JSON");
	refused("{\"v\":1,\"op\":\"vm.list\"} trailing", VC_MERR_BAD_REQUEST, "malformed JSON");
	refused("[1,2,3]", VC_MERR_BAD_REQUEST, "must be a JSON object");
	refused("\"vm.list\"", VC_MERR_BAD_REQUEST, "'[' or '{' expected");
	refused("{\"v\":1,\"v\":1,\"op\":\"vm.list\"}", VC_MERR_BAD_REQUEST, "duplicate");
	refused("{\"v\":1,\"op\":\"vm.show\",\"name\":\"a\\u0000b\"}", VC_MERR_BAD_REQUEST, "malformed JSON");
	refused("{\"v\":1,\"op\":\"vm.show\",\"name\":\"\xff\xfe\"}", VC_MERR_BAD_REQUEST, "malformed JSON");
	/* deep nesting is the parser's to refuse, not to crash on */
	char deep[5000];
	size_t n = 0;

	n += (size_t)sprintf(deep, "{\"v\":1,\"op\":\"vm.list\",\"x\":");
	for (int i = 0; i < 2000; i++)
		deep[n++] = '[';
	deep[n] = 0;
	ck_assert_int_eq(parse(deep), -EINVAL);
}
END_TEST

START_TEST(versions_and_operations)
{
	refused("{\"op\":\"vm.list\"}", VC_MERR_BAD_REQUEST, "missing field \"v\"");
	refused("{\"v\":2,\"op\":\"vm.list\"}", VC_MERR_VERSION, "version 2 is not supported");
	refused("{\"v\":\"1\",\"op\":\"vm.list\"}", VC_MERR_VERSION, "must be the protocol version");
	refused("{\"v\":1.0,\"op\":\"vm.list\"}", VC_MERR_VERSION, "must be the protocol version");
	refused("{\"v\":1}", VC_MERR_BAD_REQUEST, "\"op\"");
	refused("{\"v\":1,\"op\":7}", VC_MERR_BAD_REQUEST, "\"op\"");
	refused("{\"v\":1,\"op\":\"vm.destroy\"}", VC_MERR_UNKNOWN_OP, "unknown operation \"vm.destroy\"");
	refused("{\"v\":1,\"op\":\"\\u0001\\u0002\"}", VC_MERR_UNKNOWN_OP, "unknown operation");
}
END_TEST

START_TEST(fields)
{
	refused("{\"v\":1,\"op\":\"vm.list\",\"name\":\"a\"}", VC_MERR_BAD_REQUEST, "\"name\" is not known to vm.list");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"color\":1}", VC_MERR_BAD_REQUEST, "\"color\" is not known");
	refused("{\"v\":1,\"op\":\"vm.add\"}", VC_MERR_BAD_REQUEST, "needs the field \"name\"");
	refused("{\"v\":1,\"op\":\"gpu.show\"}", VC_MERR_BAD_REQUEST, "needs the field \"gpu\"");
	refused("{\"v\":1,\"op\":\"vm.set\",\"name\":\"a\"}", VC_MERR_BAD_REQUEST, "needs something to set");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a b\"}", VC_MERR_BAD_REQUEST, "invalid VM name");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"-a\"}", VC_MERR_BAD_REQUEST, "invalid VM name");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"../x\"}", VC_MERR_BAD_REQUEST, "invalid VM name");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"\"}", VC_MERR_BAD_REQUEST, "invalid VM name");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}", VC_MERR_BAD_REQUEST,
		"invalid VM name");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":7}", VC_MERR_BAD_REQUEST, "must be a string");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"weight\":\"100\"}", VC_MERR_BAD_REQUEST, "must be an integer");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"weight\":0}", VC_MERR_BAD_REQUEST, "from 1 to 10000");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"weight\":10001}", VC_MERR_BAD_REQUEST, "is 10001");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"mem_quota\":1.5}", VC_MERR_BAD_REQUEST, "must be an integer");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"mem_quota\":-1}", VC_MERR_BAD_REQUEST, "mem_quota");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"mem_quota\":1024}", VC_MERR_BAD_REQUEST, "mem_quota");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"mem_quota\":99999999999999999999}", VC_MERR_BAD_REQUEST,
		"malformed JSON");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"idle_timeout\":-5}", VC_MERR_BAD_REQUEST, "idle_timeout");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"gpu\":\"\"}", VC_MERR_BAD_REQUEST, "GPU index or UUID");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"gpu\":\"GPU 1\"}", VC_MERR_BAD_REQUEST, "no spaces");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"gpu\":-1}", VC_MERR_BAD_REQUEST, "index");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"gpu\":null}", VC_MERR_BAD_REQUEST, "GPU index or UUID");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"gpus\":0}", VC_MERR_BAD_REQUEST, "from 1 to 8");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"gpus\":9}", VC_MERR_BAD_REQUEST, "is 9");
	refused("{\"v\":1,\"op\":\"vm.set\",\"name\":\"a\",\"gpus\":\"2\"}", VC_MERR_BAD_REQUEST, "must be an integer");
	refused("{\"v\":1,\"op\":\"gpu.show\",\"gpu\":\"0\",\"gpus\":2}", VC_MERR_BAD_REQUEST, "not known to gpu.show");
	refused("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"gpu\":\"0, 1\"}", VC_MERR_BAD_REQUEST, "no spaces");
	ck_assert_int_eq(parse("{\"v\":1,\"op\":\"vm.add\",\"name\":\"a\",\"gpu\":\"0,GPU-1234\",\"gpus\":2}"), 0);
	ck_assert_str_eq(R.gpu, "0,GPU-1234");
	ck_assert_uint_eq(R.gpus, 2);
	ck_assert(R.has & VC_MF_GPUS);
	refused("{\"v\":1,\"op\":\"vm.remove\",\"name\":\"a\",\"force\":1}", VC_MERR_BAD_REQUEST, "true or false");
	refused("{\"v\":1,\"op\":\"events\",\"limit\":0}", VC_MERR_BAD_REQUEST, "limit");
	refused("{\"v\":1,\"op\":\"events\",\"limit\":1001}", VC_MERR_BAD_REQUEST, "limit");
	refused("{\"v\":1,\"op\":\"events\",\"since\":-1}", VC_MERR_BAD_REQUEST, "since");
}
END_TEST

START_TEST(ids_are_kept_for_errors)
{
	ck_assert_int_eq(parse("{\"v\":9,\"op\":\"vm.list\",\"id\":42}"), -EINVAL);
	ck_assert_int_eq(json_integer_value(R.id), 42);
	refused("{\"v\":1,\"op\":\"vm.list\",\"id\":{}}", VC_MERR_BAD_REQUEST, "\"id\"");
	ck_assert_ptr_null(R.id);
	refused("{\"v\":1,\"op\":\"vm.list\",\"id\":[1]}", VC_MERR_BAD_REQUEST, "\"id\"");
}
END_TEST

START_TEST(length_cap)
{
	size_t n = VC_MGMT_LINE_MAX + 10;
	char *big = malloc(n + 1);

	memset(big, ' ', n);
	memcpy(big, "{\"v\":1,\"op\":\"vm.list\"}", 22);
	big[n] = 0;
	ck_assert_int_eq(parse(big), -EINVAL);
	ck_assert_ptr_nonnull(strstr(ERR, "too long"));
	free(big);
}
END_TEST

START_TEST(replies)
{
	json_t *id = json_integer(5), *r = vc_mrep_err(id, VC_MERR_NOT_FOUND, "no VM %s", "x");
	size_t len;
	char *line = vc_json_line(r, &len);

	ck_assert_str_eq(line, "{\"v\":1,\"ok\":false,\"code\":\"not-found\",\"error\":\"no VM x\",\"id\":5}\n");
	ck_assert_uint_eq(len, strlen(line));
	free(line);
	json_decref(r);
	r = vc_mrep_ok(NULL);
	line = vc_json_line(r, &len);
	ck_assert_str_eq(line, "{\"v\":1,\"ok\":true}\n");
	free(line);
	json_decref(r);
	/* what a client sent comes back escaped: one line, ASCII */
	r = vc_mrep_err(NULL, VC_MERR_BAD_REQUEST, "bad \"%s\"", "a\nb\xc3\xa9");
	line = vc_json_line(r, &len);
	ck_assert_ptr_null(memchr(line, '\n', len - 1));
	free(line);
	json_decref(r);
	json_decref(id);
}
END_TEST

START_TEST(sizes_and_names)
{
	uint64_t v;
	char buf[32];

	ck_assert_int_eq(vc_size_parse("4096", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(vc_size_parse("512K", &v), 0);
	ck_assert_uint_eq(v, 512u << 10);
	ck_assert_int_eq(vc_size_parse("8g", &v), 0);
	ck_assert_uint_eq(v, 8ull << 30);
	ck_assert_int_eq(vc_size_parse("80GiB", &v), 0);
	ck_assert_uint_eq(v, 80ull << 30);
	ck_assert_int_eq(vc_size_parse("1T", &v), 0);
	ck_assert_uint_eq(v, 1ull << 40);
	ck_assert_int_eq(vc_size_parse("100B", &v), 0);
	ck_assert_int_eq(vc_size_parse("", &v), -EINVAL);
	ck_assert_int_eq(vc_size_parse("-1", &v), -EINVAL);
	ck_assert_int_eq(vc_size_parse("1X", &v), -EINVAL);
	ck_assert_int_eq(vc_size_parse("4G ", &v), -EINVAL);
	ck_assert_int_eq(vc_size_parse("99999999999999999999", &v), -EINVAL);
	ck_assert_int_eq(vc_size_parse("9999999999T", &v), -EINVAL);
	ck_assert_str_eq(vc_size_format(80ull << 30, buf, sizeof(buf)), "80 GiB");
	ck_assert_str_eq(vc_size_format(1536ull << 20, buf, sizeof(buf)), "1.5 GiB");
	ck_assert_str_eq(vc_size_format(12, buf, sizeof(buf)), "12 B");
	ck_assert(vc_vm_name_ok("vm1"));
	ck_assert(vc_vm_name_ok("A.b_c-9"));
	ck_assert(!vc_vm_name_ok(".hidden"));
	ck_assert(!vc_vm_name_ok("a/b"));
	ck_assert(!vc_vm_name_ok("a\nb"));
}
END_TEST

static int inv(const char *text, struct vc_gpu **g, size_t *n)
{
	ERR[0] = 0;
	return vc_inventory_parse(text, strlen(text), "inv.json", g, n, ERR, sizeof(ERR));
}

START_TEST(inventory)
{
	struct vc_gpu *g = NULL;
	size_t n = 0;

	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"GPU-a\",\"name\":\"A\",\"memory\":\"80G\",\"pci_bus_id\":\"0:17:0.0\"},"
			     "{\"uuid\":\"GPU-b\",\"name\":\"B\",\"memory\":1024,\"health\":\"unhealthy\"}]}", &g, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(g[0].uuid, "GPU-a");
	ck_assert_uint_eq(g[0].mem_total, 80ull << 30);
	ck_assert_int_eq(g[0].health, VC_GPU_HEALTHY);
	ck_assert_int_eq(g[1].index, 1);
	ck_assert_int_eq(g[1].health, VC_GPU_UNHEALTHY);
	ck_assert_ptr_nonnull(strstr(g[1].health_reason, "inv.json"));
	free(g);
	ck_assert_int_eq(inv("{\"gpus\":[]}", &g, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(g);
	ck_assert_int_eq(inv("not json", &g, &n), -EINVAL);
	ck_assert_ptr_nonnull(strstr(ERR, "inv.json"));
	ck_assert_int_eq(inv("{\"gpu\":[]}", &g, &n), -EINVAL);
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\",\"name\":\"A\",\"memory\":1},{\"uuid\":\"a\",\"name\":\"B\",\"memory\":1}]}",
			     &g, &n), -EINVAL);
	ck_assert_ptr_nonnull(strstr(ERR, "same uuid"));
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\",\"name\":\"A\",\"memory\":0}]}", &g, &n), -EINVAL);
	ck_assert_ptr_nonnull(strstr(ERR, "memory"));
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\",\"name\":\"A\",\"memory\":\"lots\"}]}", &g, &n), -EINVAL);
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\",\"memory\":1}]}", &g, &n), -EINVAL);
	ck_assert_ptr_nonnull(strstr(ERR, "gpus[0].name"));
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\",\"name\":\"A\",\"memory\":1,\"health\":\"meh\"}]}", &g, &n), -EINVAL);
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\",\"name\":\"A\",\"memory\":1,\"colour\":1}]}", &g, &n), -EINVAL);
	ck_assert_ptr_nonnull(strstr(ERR, "unknown field"));
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\\u0007\",\"name\":\"A\",\"memory\":1}]}", &g, &n), -EINVAL);
	/* the NUMA node: optional (-1, unknown), a node number, or refused */
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\",\"name\":\"A\",\"memory\":1},"
			     "{\"uuid\":\"b\",\"name\":\"B\",\"memory\":1,\"numa_node\":3}]}", &g, &n), 0);
	ck_assert_int_eq(g[0].numa_node, -1);
	ck_assert_int_eq(g[1].numa_node, 3);
	free(g);
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\",\"name\":\"A\",\"memory\":1,\"numa_node\":\"0\"}]}", &g, &n),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(ERR, "numa_node"));
	ck_assert_int_eq(inv("{\"gpus\":[{\"uuid\":\"a\",\"name\":\"A\",\"memory\":1,\"numa_node\":-2}]}", &g, &n),
			 -EINVAL);
}
END_TEST

/* A GPU's NUMA node from sysfs, where NVML does not say: the bus id's domain
 * shortened to 4 digits, hex in lower case; anything unreadable is -1. */
START_TEST(numa_node_from_sysfs)
{
	char root[] = "/tmp/test_mgmt_sysfs.XXXXXX", path[256], cmd[640];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:9a:00.0", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s %s/bus/pci/devices/0000:17:00.0", path, root);
	ck_assert_int_eq(system(cmd), 0);
	strcat(path, "/numa_node");
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("1\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:17:00.0/numa_node", root);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("junk\n", f);
	fclose(f);
	ck_assert_int_eq(vc_gpus_pci_numa_node(root, "00000000:9A:00.0"), 1);
	ck_assert_int_eq(vc_gpus_pci_numa_node(root, "00000000:17:00.0"), -1); /* not a number */
	ck_assert_int_eq(vc_gpus_pci_numa_node(root, "00000000:65:00.0"), -1); /* no such device */
	ck_assert_int_eq(vc_gpus_pci_numa_node(root, "0000:9a:00.0"), -1);     /* not NVML's form */
	ck_assert_int_eq(vc_gpus_pci_numa_node(root, NULL), -1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(admin_rule)
{
	struct vc_auth a = {.gid = 990, .group_exists = true};
	gid_t groups[] = {100, 990};

	snprintf(a.group, sizeof(a.group), "vcuda-admin");
	ck_assert(vc_auth_is_admin(&a, 0, 0, NULL, 0));
	ck_assert(vc_auth_is_admin(&a, geteuid(), 1, NULL, 0));
	ck_assert(vc_auth_is_admin(&a, 65534, 990, NULL, 0));
	ck_assert(vc_auth_is_admin(&a, 65534, 65534, groups, 2));
	ck_assert(!vc_auth_is_admin(&a, 65534, 65534, groups, 1));
	a.group_exists = false;
	ck_assert(!vc_auth_is_admin(&a, 65534, 990, groups, 2));
	ck_assert(vc_auth_is_admin(&a, 0, 0, NULL, 0));
}
END_TEST

START_TEST(line_framing)
{
	struct vc_lines l;
	char *line, sink[64];
	size_t len;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(vc_lines_init(&l, 16, 32), 0);
	ck_assert_int_eq(vc_lines_fill(&l, sv[1]), -EAGAIN);
	ck_assert_int_eq(write(sv[0], "ab\ncd", 5), 5);
	ck_assert_int_eq(vc_lines_fill(&l, sv[1]), 5);
	ck_assert_int_eq(vc_lines_next(&l, &line, &len), 1);
	ck_assert_str_eq(line, "ab");
	ck_assert_int_eq(vc_lines_next(&l, &line, &len), 0);
	ck_assert_int_eq(write(sv[0], "e\n\n", 3), 3);
	ck_assert_int_eq(vc_lines_fill(&l, sv[1]), 3);
	ck_assert_int_eq(vc_lines_next(&l, &line, &len), 1);
	ck_assert_str_eq(line, "cde");
	ck_assert_int_eq(vc_lines_next(&l, &line, &len), 1);
	ck_assert_uint_eq(len, 0);
	/* 16 bytes without a newline: past the cap */
	ck_assert_int_eq(write(sv[0], "0123456789abcdefXYZ", 19), 19);
	ck_assert_int_eq(vc_lines_fill(&l, sv[1]), 16);
	ck_assert_int_eq(vc_lines_next(&l, &line, &len), -EMSGSIZE);
	ck_assert_int_eq(vc_lines_fill(&l, sv[1]), -ENOBUFS);
	/* the output cap */
	ck_assert_int_eq(vc_lines_queue(&l, "0123456789012345678901234567890", 31), 0);
	ck_assert_int_eq(vc_lines_queue(&l, "xy", 2), -ENOBUFS);
	ck_assert_int_eq(vc_lines_flush(&l, sv[1]), 0);
	ck_assert_uint_eq(vc_lines_pending(&l), 0);
	ck_assert_int_eq(read(sv[0], sink, sizeof(sink)), 31);
	close(sv[0]);
	vc_lines_fini(&l);
	ck_assert_int_eq(vc_lines_init(&l, 16, 32), 0);
	ck_assert_int_eq(vc_lines_fill(&l, sv[1]), 3); /* "XYZ" was still there */
	ck_assert_int_eq(vc_lines_fill(&l, sv[1]), 0);
	ck_assert(l.eof);
	vc_lines_fini(&l);
	close(sv[1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mgmt_proto");
	TCase *t = tcase_create("requests");
	TCase *u = tcase_create("inputs");
	SRunner *r;
	int failed;

	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, valid_requests);
	tcase_add_test(t, malformed_json);
	tcase_add_test(t, versions_and_operations);
	tcase_add_test(t, fields);
	tcase_add_test(t, ids_are_kept_for_errors);
	tcase_add_test(t, length_cap);
	tcase_add_test(t, replies);
	suite_add_tcase(s, t);
	tcase_add_test(u, sizes_and_names);
	tcase_add_test(u, inventory);
	tcase_add_test(u, numa_node_from_sysfs);
	tcase_add_test(u, admin_rule);
	tcase_add_test(u, line_framing);
	suite_add_tcase(s, u);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
