/* SPDX-License-Identifier: MIT */
/*
 * test_quota.c - the server's quotas, idle reclaim and admin socket
 * (docs/MGMT.md), through the guest libcuda.so.1 and a running vcuda-server
 * started with --admin-socket $VCUDA_ADMIN_SOCKET (CI stand-in or a GPU).
 * Each test forks (Check), so each is a fresh process and session; limits
 * are set through the admin socket at the start of each test.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <cuda.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vc_time.h"

#define CK(x) ck_assert_int_eq((x), CUDA_SUCCESS)
#define MiB (1ull << 20)

/* ---- the admin socket ------------------------------------------------------------ */

static int admin_connect(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const char *p = getenv("VCUDA_ADMIN_SOCKET");
	int fd;

	ck_assert_msg(p != NULL, "set VCUDA_ADMIN_SOCKET");
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", p);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* One line from @fd within @ms, parsed; NULL on timeout or close. */
static json_t *read_json(int fd, int ms)
{
	char buf[65536];
	size_t n = 0;

	while (n < sizeof(buf) - 1) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (poll(&p, 1, ms) != 1 || read(fd, buf + n, 1) != 1)
			return NULL;
		if (buf[n] == '\n')
			return json_loadb(buf, n, 0, NULL);
		n++;
	}
	return NULL;
}

static json_t *ask_raw(const char *line)
{
	int fd = admin_connect();
	json_t *r;

	ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	r = read_json(fd, 5000);
	close(fd);
	ck_assert_msg(r != NULL, "no reply to %s", line);
	return r;
}

static void set_limits(uint64_t mem, uint64_t pinned, uint64_t idle)
{
	char line[256];
	json_t *r;

	snprintf(line, sizeof(line), "{\"v\":1,\"op\":\"set\",\"mem_quota\":%llu,\"pinned_quota\":%llu,\"idle_timeout\":%llu}\n",
		 (unsigned long long)mem, (unsigned long long)pinned, (unsigned long long)idle);
	r = ask_raw(line);
	ck_assert_msg(json_is_true(json_object_get(r, "ok")), "set refused: %s",
		      json_string_value(json_object_get(r, "error")));
	json_decref(r);
}

/* The status entry of the session whose guest pid is @pid, and the totals. */
static json_t *my_session(pid_t pid, uint64_t *mem_used)
{
	json_t *r = ask_raw("{\"op\":\"status\"}\n"), *s, *found = NULL;
	size_t i;

	ck_assert(json_is_true(json_object_get(r, "ok")));
	if (mem_used)
		*mem_used = (uint64_t)json_integer_value(json_object_get(r, "mem_used"));
	json_array_foreach(json_object_get(r, "sessions"), i, s) {
		if (json_integer_value(json_object_get(s, "pid")) == pid)
			found = json_incref(s);
	}
	json_decref(r);
	return found;
}

/* ---- CUDA --------------------------------------------------------------------------- */

static CUcontext g_ctx;

static void cuda_up(void)
{
	CUdevice d;

	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&g_ctx, d));
	CK(cuCtxSetCurrent(g_ctx));
}

static void wait_used(uint64_t want, int ms)
{
	uint64_t used = ~0ull;

	for (int i = 0; i < ms / 20; i++) {
		json_decref(my_session(-1, &used));
		if (used == want)
			return;
		usleep(20000);
	}
	ck_abort_msg("server memory in use %llu, expected %llu", (unsigned long long)used,
		     (unsigned long long)want);
}

START_TEST(device_memory_quota)
{
	CUdeviceptr a, b, c;
	json_t *s;
	uint64_t used;

	set_limits(64 * MiB, 0, 0);
	wait_used(0, 3000);
	cuda_up();
	CK(cuMemAlloc(&a, 32 * MiB));
	CK(cuMemAlloc(&b, 24 * MiB));
	ck_assert_int_eq(cuMemAlloc(&c, 16 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	/* nothing else broke: the session works on */
	CK(cuMemsetD8(a, 7, 32 * MiB));
	CK(cuMemFree(a));
	CK(cuMemAlloc(&c, 16 * MiB));
	s = my_session(getpid(), &used);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(json_integer_value(json_object_get(s, "mem_bytes")), 40 * MiB);
	ck_assert_uint_eq(used, 40 * MiB);
	json_decref(s);
	CK(cuMemFree(b));
	CK(cuMemFree(c));
	ck_assert_int_eq(cuMemFree(c), CUDA_ERROR_INVALID_VALUE); /* a double free refunds nothing */
	wait_used(0, 1000);
}
END_TEST

/* Managed memory is charged like cuMemAlloc, and refused past the quota. */
START_TEST(managed_memory_quota)
{
	CUdeviceptr a, b, c;
	uint64_t used;

	set_limits(64 * MiB, 0, 0);
	wait_used(0, 3000);
	cuda_up();
	CK(cuMemAllocManaged(&a, 32 * MiB, CU_MEM_ATTACH_GLOBAL));
	CK(cuMemAlloc(&b, 24 * MiB));
	ck_assert_int_eq(cuMemAllocManaged(&c, 16 * MiB, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_OUT_OF_MEMORY);
	json_decref(my_session(getpid(), &used));
	ck_assert_uint_eq(used, 56 * MiB);
	/* the session works on, and the managed memory with it */
	((volatile unsigned char *)(uintptr_t)a)[5] = 9;
	CK(cuMemsetD8(b, 7, 24 * MiB));
	ck_assert_int_eq(((volatile unsigned char *)(uintptr_t)a)[5], 9);
	CK(cuMemFree(a));
	CK(cuMemAllocManaged(&c, 16 * MiB, CU_MEM_ATTACH_HOST));
	wait_used(40 * MiB, 1000);
	CK(cuMemFree(b));
	CK(cuMemFree(c));
	ck_assert_int_eq(cuMemFree(c), CUDA_ERROR_INVALID_VALUE); /* a double free refunds nothing */
	wait_used(0, 1000);
	set_limits(0, 0, 0); /* the next suite gets the server as it found it */
}
END_TEST

START_TEST(quota_is_shared_by_all_sessions)
{
	int go[2], done[2];
	CUdeviceptr d;
	char b;
	pid_t pid;

	set_limits(64 * MiB, 0, 0);
	wait_used(0, 3000);
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	pid = fork();
	if (pid == 0) {
		CUdeviceptr x;

		cuda_up();
		if (cuMemAlloc(&x, 48 * MiB))
			_exit(1);
		(void)!write(go[1], "g", 1);
		(void)!read(done[0], &b, 1);
		_exit(0); /* exits holding it: the server frees it */
	}
	ck_assert_int_eq(read(go[0], &b, 1), 1);
	cuda_up();
	ck_assert_int_eq(cuMemAlloc(&d, 24 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	(void)!write(done[1], "d", 1);
	waitpid(pid, NULL, 0);
	wait_used(0, 3000); /* the other session's memory came back with its exit */
	CK(cuMemAlloc(&d, 24 * MiB));
	CK(cuMemFree(d));
}
END_TEST

START_TEST(async_pitched_and_context_allocations)
{
	CUdeviceptr a, b;
	CUcontext c;
	CUstream s;
	size_t pitch;

	set_limits(64 * MiB, 0, 0);
	wait_used(0, 3000);
	cuda_up();
	CK(cuStreamCreate(&s, 0));
	CK(cuMemAllocAsync(&a, 60 * MiB, s));
	ck_assert_int_eq(cuMemAlloc(&b, 8 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(cuMemAllocAsync(&b, 8 * MiB, s), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuMemFreeAsync(a, s));
	CK(cuStreamSynchronize(s));
	ck_assert_int_eq(cuMemAllocPitch(&b, &pitch, 1 * MiB, 70, 4), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuMemAllocPitch(&b, &pitch, 1 * MiB, 40, 4));
	CK(cuMemFree(b));
	/* A context's allocations go with it, and so do their charges. */
	CK(cuCtxCreate(&c, NULL, 0, 0));
	CK(cuMemAlloc(&a, 48 * MiB));
	CK(cuCtxDestroy(c));
	CK(cuCtxSetCurrent(g_ctx));
	CK(cuMemAlloc(&a, 48 * MiB));
	CK(cuMemFree(a));
	CK(cuStreamDestroy(s));
}
END_TEST

/* Arrays and mipmapped arrays are charged by their memory requirements
 * (never less than their elements), refunded when destroyed or when their
 * context goes; past the quota they are refused. */
START_TEST(array_memory_quota)
{
	CUDA_ARRAY3D_DESCRIPTOR d2 = {.Width = 4096, .Height = 2048, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
	CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = 512, .Height = 512, .Depth = 24, .Format = CU_AD_FORMAT_UNSIGNED_INT8,
				      .NumChannels = 4};
	CUDA_ARRAY3D_DESCRIPTOR dm = {.Width = 2048, .Height = 1024, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
	CUmipmappedArray m;
	CUarray a, b, c;
	CUcontext ctx;
	uint64_t used;

	set_limits(64 * MiB, 0, 0);
	wait_used(0, 3000);
	cuda_up();
	CK(cuArray3DCreate(&a, &d2)); /* 32 MiB */
	CK(cuArray3DCreate(&b, &d3)); /* 24 MiB */
	json_decref(my_session(-1, &used));
	ck_assert_uint_ge(used, 56 * MiB);
	ck_assert_int_eq(cuArray3DCreate(&c, &d2), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(cuMipmappedArrayCreate(&m, &dm, 2), CUDA_ERROR_OUT_OF_MEMORY); /* 8 + 2 MiB */
	CK(cuArrayDestroy(a));
	CK(cuMipmappedArrayCreate(&m, &dm, 2));
	ck_assert_int_eq(cuArray3DCreate(&c, &d2), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuMipmappedArrayDestroy(m));
	CK(cuArrayDestroy(b));
	wait_used(0, 1000);
	/* an array's charge goes with its context */
	CK(cuCtxCreate(&ctx, NULL, 0, 0));
	CK(cuArray3DCreate(&a, &d2));
	CK(cuCtxDestroy(ctx));
	wait_used(0, 1000);
	CK(cuCtxSetCurrent(g_ctx));
	CK(cuArray3DCreate(&a, &d2));
	CK(cuArray3DCreate(&b, &d3));
	wait_used(56 * MiB, 1000);
	/* and with the session: it ends holding them */
	set_limits(0, 0, 0); /* the next suite gets the server as it found it */
}
END_TEST

START_TEST(pinned_memory_quota)
{
	void *a, *b;
	json_t *s;

	set_limits(0, 8 * MiB, 0);
	cuda_up();
	CK(cuMemHostAlloc(&a, 6 * MiB, 0));
	ck_assert_int_eq(cuMemHostAlloc(&b, 4 * MiB, 0), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(cuMemAllocHost(&b, 4 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	s = my_session(getpid(), NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(json_integer_value(json_object_get(s, "pinned_bytes")), 6 * MiB);
	json_decref(s);
	CK(cuMemFreeHost(a));
	CK(cuMemHostAlloc(&b, 4 * MiB, 0));
	CK(cuMemFreeHost(b));
	set_limits(0, 0, 0);
}
END_TEST

/* The server's page-locked bytes in use, over all sessions. */
static uint64_t pinned_used(void)
{
	json_t *r = ask_raw("{\"op\":\"status\"}\n");
	uint64_t u;

	ck_assert(json_is_true(json_object_get(r, "ok")));
	u = (uint64_t)json_integer_value(json_object_get(r, "pinned_used"));
	json_decref(r);
	return u;
}

/* Segments beyond the pool (the default 256 MiB) are charged like pool
 * memory, refused past the quota, and given back at a free and when the
 * session ends holding them. */
START_TEST(pinned_segments_charge_the_quota)
{
	void *a, *b;
	json_t *s;
	pid_t pid;
	int st;

	set_limits(0, 512 * MiB, 0);
	pid = fork(); /* first, a session (of a process of its own) that ends holding a segment */
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		cuda_up();
		_exit(cuMemHostAlloc(&a, 400 * MiB, 0) == CUDA_SUCCESS && pinned_used() == 400 * MiB ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (int i = 0; i < 100 && pinned_used(); i++)
		usleep(20000);
	ck_assert_uint_eq(pinned_used(), 0);
	cuda_up();
	CK(cuMemHostAlloc(&a, 300 * MiB, 0));
	s = my_session(getpid(), NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(json_integer_value(json_object_get(s, "pinned_bytes")), 300 * MiB);
	json_decref(s);
	ck_assert_int_eq(cuMemHostAlloc(&b, 300 * MiB, 0), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuMemFreeHost(a));
	ck_assert_uint_eq(pinned_used(), 0);
	CK(cuMemHostAlloc(&b, 500 * MiB, 0));
	CK(cuMemFreeHost(b));
	set_limits(0, 0, 0);
}
END_TEST

/* The next session-closed event for guest pid @pid on subscription @fd. */
static json_t *closed_event(int fd, pid_t pid, int ms)
{
	json_t *e;

	while ((e = read_json(fd, ms))) {
		if (!strcmp(json_string_value(json_object_get(e, "event")) ?: "", "session-closed") &&
		    json_integer_value(json_object_get(e, "pid")) == pid)
			return e;
		json_decref(e);
	}
	return NULL;
}

START_TEST(events_say_what_was_freed)
{
	int fd = admin_connect(), sync[2];
	json_t *r, *e;
	uint64_t t0, t1;
	char b;
	pid_t pid;

	set_limits(0, 0, 0);
	ck_assert_int_eq(write(fd, "{\"op\":\"subscribe\"}\n", 19), 19);
	r = read_json(fd, 5000);
	ck_assert(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
	ck_assert_int_eq(pipe(sync), 0);
	pid = fork();
	if (pid == 0) {
		CUdeviceptr x;

		cuda_up();
		if (cuMemAlloc(&x, 12 * MiB))
			_exit(1);
		(void)!write(sync[1], "a", 1);
		pause(); /* killed */
		_exit(0);
	}
	ck_assert_int_eq(read(sync[0], &b, 1), 1);
	kill(pid, SIGKILL);
	t0 = vc_now_ns();
	waitpid(pid, NULL, 0);
	e = closed_event(fd, pid, 2000);
	t1 = vc_now_ns();
	ck_assert_msg(e != NULL, "no session-closed event within 2 s of the client's death");
	ck_assert_str_eq(json_string_value(json_object_get(e, "reason")), "client-exit");
	ck_assert_uint_eq(json_integer_value(json_object_get(e, "freed_bytes")), 12 * MiB);
	printf("killed client reclaimed in %.0f ms\n", (double)(t1 - t0) / 1e6);
	close(fd);

	/* A subscriber that was away is told in its reply how that session
	 * ended: the same event, with the same number. */
	{
		json_t *rec, *x, *found = NULL;
		size_t i;

		fd = admin_connect();
		ck_assert_int_eq(write(fd, "{\"op\":\"subscribe\"}\n", 19), 19);
		r = read_json(fd, 5000);
		ck_assert(json_is_true(json_object_get(r, "ok")));
		ck_assert_int_ge(json_integer_value(json_object_get(r, "seq")),
				 json_integer_value(json_object_get(e, "seq")));
		rec = json_object_get(r, "recent");
		ck_assert(json_is_array(rec));
		json_array_foreach(rec, i, x)
			if (json_integer_value(json_object_get(x, "pid")) == pid)
				found = x;
		ck_assert_msg(found != NULL, "the closed session is not among the recent events");
		ck_assert(json_equal(found, e));
		json_decref(r);
		close(fd);
	}
	json_decref(e);
}
END_TEST

START_TEST(idle_sessions_are_reclaimed)
{
	int fd = admin_connect();
	CUdeviceptr x;
	json_t *r, *e;

	ck_assert_int_eq(write(fd, "{\"op\":\"subscribe\"}\n", 19), 19);
	r = read_json(fd, 5000);
	json_decref(r);
	set_limits(0, 0, 1);
	cuda_up();
	CK(cuMemAlloc(&x, 8 * MiB));
	e = closed_event(fd, getpid(), 5000);
	set_limits(0, 0, 0);
	ck_assert_msg(e != NULL, "an idle session was not reclaimed");
	ck_assert_str_eq(json_string_value(json_object_get(e, "reason")), "idle");
	ck_assert_uint_eq(json_integer_value(json_object_get(e, "freed_bytes")), 8 * MiB);
	json_decref(e);
	/* the guest gets an error, not a hang */
	ck_assert_int_ne(cuMemAlloc(&x, 1 * MiB), CUDA_SUCCESS);
	close(fd);
}
END_TEST

START_TEST(admin_refuses_bad_requests)
{
	static const struct {
		const char *line, *want;
	} cases[] = {
		{"this is not json\n", "not JSON"},
		{"[1,2]\n", "JSON object"},
		{"{\"op\":\"launch-missiles\"}\n", "unknown op"},
		{"{\"v\":2,\"op\":\"status\"}\n", "version"},
		{"{\"op\":\"set\",\"mem_quota\":-5}\n", "quotas are"},
		{"{\"op\":\"set\",\"weight\":0}\n", "weight"},
		{"{\"op\":\"set\",\"colour\":\"blue\"}\n", "unknown field"},
		{"{\"op\":\"adopt\"}\n", "SCM_RIGHTS"},
		{"{}\n", "missing"},
	};
	char *big;
	int fd;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *r = ask_raw(cases[i].line);
		const char *err = json_string_value(json_object_get(r, "error"));

		ck_assert(json_is_false(json_object_get(r, "ok")));
		ck_assert_msg(err && strstr(err, cases[i].want), "'%s': error '%s'", cases[i].line, err);
		json_decref(r);
	}
	/* A line that never ends is cut off, and the connection closed. */
	big = malloc(70000);
	memset(big, 'x', 70000);
	fd = admin_connect();
	(void)!write(fd, big, 70000);
	json_t *r = read_json(fd, 5000);

	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(r, "error")), "longer than"));
	json_decref(r);
	free(big);
	close(fd);
	/* and the server still answers */
	r = ask_raw("{\"op\":\"status\"}\n");
	ck_assert(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
}
END_TEST

/* cuMemCreate is charged; the charge goes when the memory does: released
 * and unmapped, in either order. */
START_TEST(vmm_create_quota)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle a, b;
	CUdeviceptr va;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	set_limits(64 * MiB, 0, 0);
	wait_used(0, 3000);
	cuda_up();
	CK(cuMemCreate(&a, 32 * MiB, &prop, 0));
	ck_assert_int_eq(cuMemCreate(&b, 48 * MiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
	wait_used(32 * MiB, 1000);
	CK(cuMemAddressReserve(&va, 64 * MiB, 0, 0, 0));
	CK(cuMemMap(va, 32 * MiB, 0, a, 0));
	CK(cuMemSetAccess(va, 32 * MiB, &acc, 1));
	CK(cuMemsetD8(va, 1, 32 * MiB));
	CK(cuMemRelease(a));
	wait_used(32 * MiB, 1000); /* still mapped: still held */
	ck_assert_int_eq(cuMemCreate(&b, 48 * MiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuMemUnmap(va, 32 * MiB));
	wait_used(0, 1000);
	CK(cuMemCreate(&b, 48 * MiB, &prop, 0));
	CK(cuMemMap(va, 48 * MiB, 0, b, 0));
	CK(cuMemUnmap(va, 48 * MiB));
	wait_used(48 * MiB, 1000); /* unmapped, not released: still held */
	CK(cuMemRelease(b));
	wait_used(0, 1000);
	CK(cuMemAddressFree(va, 64 * MiB));
	set_limits(0, 0, 0); /* the next suite gets the server as it found it */
}
END_TEST

/* Graph memory: an instantiation is charged its allocation nodes' sizes (the
 * most a launch maps), refunded when the executable graph goes. */
START_TEST(graph_memory_quota)
{
	CUDA_MEM_ALLOC_NODE_PARAMS ap;
	CUgraphNode n, f;
	CUgraphExec e, e2;
	CUdeviceptr a;
	uint64_t used;
	json_t *s;
	CUgraph g;

	set_limits(64 * MiB, 0, 0);
	wait_used(0, 3000);
	cuda_up();
	CK(cuGraphCreate(&g, 0));
	memset(&ap, 0, sizeof(ap));
	ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ap.bytesize = 40 * MiB;
	CK(cuGraphAddMemAllocNode(&n, g, NULL, 0, &ap));
	CK(cuGraphAddMemFreeNode(&f, g, &n, 1, ap.dptr));
	CK(cuGraphInstantiate(&e, g, 0));
	s = my_session(getpid(), &used);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(used, 40 * MiB);
	json_decref(s);
	/* a second executable graph, or memory beside the first, is past the quota */
	ck_assert_int_eq(cuGraphInstantiate(&e2, g, 0), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(cuMemAlloc(&a, 32 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuGraphExecDestroy(e));
	CK(cuGraphInstantiate(&e2, g, 0));
	CK(cuGraphExecDestroy(e2));
	CK(cuGraphDestroy(g));
	wait_used(0, 1000);
	set_limits(0, 0, 0); /* the next suite gets the server as it found it */
}
END_TEST

/* cuMemGetInfo shows the quota: total = the quota, free = what the server's
 * sessions leave of it (a second process's memory counts too); without a
 * quota, the device's own figures. */
START_TEST(mem_get_info_within_quota)
{
	CUdeviceptr a;
	size_t f, t, dev_total;
	int go[2], done[2];
	char b;
	pid_t pid;

	set_limits(64 * MiB, 0, 0);
	wait_used(0, 3000);
	/* another process of the same server (VM) holds 16 MiB (forked before
	 * this one's first CUDA call, as a CUDA process must be) */
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	pid = fork();
	if (pid == 0) {
		CUdeviceptr c;

		cuda_up();
		if (cuMemAlloc(&c, 16 * MiB) != CUDA_SUCCESS)
			_exit(1);
		(void)!write(done[1], "x", 1);
		(void)!read(go[0], &b, 1);
		_exit(0);
	}
	ck_assert_int_eq(read(done[0], &b, 1), 1);
	cuda_up();
	CK(cuDeviceTotalMem(&dev_total, 0));
	CK(cuMemGetInfo(&f, &t));
	ck_assert_uint_eq(t, 64 * MiB);
	ck_assert_uint_eq(f, 48 * MiB);
	CK(cuMemAlloc(&a, 24 * MiB));
	CK(cuMemGetInfo(&f, &t));
	ck_assert_uint_eq(t, 64 * MiB);
	ck_assert_uint_eq(f, 24 * MiB);
	(void)!write(go[1], "x", 1);
	waitpid(pid, NULL, 0);
	wait_used(24 * MiB, 3000);
	CK(cuMemGetInfo(&f, &t));
	ck_assert_uint_eq(t, 64 * MiB);
	ck_assert_uint_eq(f, 40 * MiB);
	/* without a quota: the device's figures */
	set_limits(0, 0, 0);
	CK(cuMemGetInfo(&f, &t));
	ck_assert_uint_eq(t, dev_total);
	ck_assert_uint_le(f, t);
	ck_assert_uint_gt(f, 64 * MiB);
	CK(cuMemFree(a));
	wait_used(0, 1000);
}
END_TEST

/* The counters the manager's metrics read: quota refusals and kernel launches (docs/MGMT.md). */
static uint64_t counter(const char *key)
{
	json_t *r = ask_raw("{\"op\":\"status\"}\n");
	json_t *v = json_object_get(r, key);
	uint64_t n;

	ck_assert_msg(json_is_integer(v), "status has no %s", key);
	n = (uint64_t)json_integer_value(v);
	json_decref(r);
	return n;
}

START_TEST(status_counts_refusals_and_launches)
{
	static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				  ".visible .entry noop()\n{\n ret;\n}\n";
	uint64_t mem0, pin0, k0;
	CUdeviceptr a;
	CUmodule m;
	CUfunction f;
	void *h;

	set_limits(16 * MiB, 1 * MiB, 0);
	wait_used(0, 3000);
	mem0 = counter("mem_refused");
	pin0 = counter("pinned_refused");
	k0 = counter("kernel_launches");
	cuda_up();
	ck_assert_int_eq(cuMemAlloc(&a, 32 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(cuMemAlloc(&a, 17 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(cuMemAllocHost(&h, 2 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuMemAlloc(&a, 8 * MiB)); /* a success is no refusal */
	CK(cuModuleLoadData(&m, ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	for (int i = 0; i < 5; i++)
		CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
	/* a launch the driver refuses is not counted */
	ck_assert_int_eq(cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	CK(cuCtxSynchronize());
	ck_assert_uint_eq(counter("mem_refused") - mem0, 2);
	ck_assert_uint_eq(counter("pinned_refused") - pin0, 1);
	ck_assert_uint_eq(counter("kernel_launches") - k0, 5);
	CK(cuMemFree(a));
	CK(cuModuleUnload(m));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quota");
	TCase *t = tcase_create("server");
	SRunner *sr;
	int failed;

	tcase_set_timeout(t, 60);
	tcase_add_test(t, device_memory_quota);
	tcase_add_test(t, managed_memory_quota);
	tcase_add_test(t, quota_is_shared_by_all_sessions);
	tcase_add_test(t, async_pitched_and_context_allocations);
	tcase_add_test(t, array_memory_quota);
	tcase_add_test(t, graph_memory_quota);
	tcase_add_test(t, pinned_memory_quota);
	tcase_add_test(t, pinned_segments_charge_the_quota);
	tcase_add_test(t, events_say_what_was_freed);
	tcase_add_test(t, idle_sessions_are_reclaimed);
	tcase_add_test(t, admin_refuses_bad_requests);
	tcase_add_test(t, vmm_create_quota);
	tcase_add_test(t, mem_get_info_within_quota);
	tcase_add_test(t, status_counts_refusals_and_launches);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
