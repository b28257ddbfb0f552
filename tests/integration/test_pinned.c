/* SPDX-License-Identifier: MIT */
/*
 * test_pinned.c - page-locked memory beyond the pinned pool, through the guest
 * libcuda.so.1 and a running vcuda-server (Check; each test forks, so each is
 * a fresh process and session). ci/check.sh starts the server for it with a
 * 64 MiB pool and --pinned-max 1280M, so that large allocations get segments
 * of their own and the bound is reached at a known size: a 1 GiB allocation
 * is page-locked and mapped (its pointer is its device address), copies
 * through every part of it are right, a free releases its segment (here and
 * in the server), the bound answers CUDA_ERROR_OUT_OF_MEMORY, registered
 * ranges larger than the pool move into segments, and graph copies name
 * segment memory as they name the pool's. Those run with parking off
 * (VCUDA_PINNED_KEEP=0); the "parked" tests check what a freed segment does
 * with it on: it stays, inaccessible, until an allocation or registration
 * it fits takes it again, within its bound, and the server's bound drops it.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_fixture.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* How many mappings of this process are of memfds named @name (the name
 * and the space after it, so that "vcuda-pinned" is not "vcuda-pinned-cont"). */
static int memfd_mappings(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512], want[64];
	int n = 0;

	snprintf(want, sizeof(want), "/memfd:%s ", name);
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, want) != NULL;
	fclose(f);
	return n;
}

/* How many mappings of this process are page-locked segments (their first files). */
static int segment_mappings(void)
{
	return memfd_mappings("vcuda-pinned");
}

/* Mappings left once freed segments are gone: the library unmaps a freed
 * segment on a thread of its own (aside.c), so they go within moments. */
static int segments_gone(void)
{
	int n = segment_mappings();

	for (int i = 0; n && i < 200; i++) {
		usleep(10000);
		n = segment_mappings();
	}
	return n;
}

/* How many mappings are a segment's further files (shared/vc_fill.h: one
 * per slice of a large segment, so that their pages are made in parallel). */
static int segment_parts(void)
{
	return memfd_mappings("vcuda-pinned-cont");
}

/* Wait (up to 2 s) for the segment mappings to number @want: dropped
 * segments are unmapped on a thread of the library's. */
static int segments_settle(int want)
{
	int n = segment_mappings();

	for (int i = 0; n != want && i < 200; i++) {
		usleep(10000);
		n = segment_mappings();
	}
	return n;
}

/* The permissions of the mapping holding @p in /proc/self/maps ("rw-s"),
 * into @perms (5 bytes); "" if none. */
static void perms_at(const void *p, char *perms)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long long lo, hi;
	char line[512];

	perms[0] = 0;
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %4s", &lo, &hi, perms) == 3 && lo <= (uintptr_t)p && (uintptr_t)p < hi)
			break;
		else
			perms[0] = 0;
	fclose(f);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	uint64_t *w = (uint64_t *)p;

	for (size_t i = 0; i < n / 8; i++)
		w[i] = (i + seed) * 0x9e3779b97f4a7c15ull;
}

static int same(const uint8_t *p, size_t n, unsigned seed)
{
	const uint64_t *w = (const uint64_t *)p;

	for (size_t i = 0; i < n / 8; i++)
		if (w[i] != (i + seed) * 0x9e3779b97f4a7c15ull)
			return 0;
	return 1;
}

START_TEST(a_gigabyte_is_page_locked_and_mapped)
{
	const size_t n = GiB, piece = 64 * MiB;
	CUdeviceptr d, dp = 0;
	unsigned flags = 0, type = 0;
	int mapped = 0;
	CUstream s;
	uint8_t *p;
	void *v;

	CK(cuMemHostAlloc(&v, n, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
	p = v;
	ck_assert_int_eq(segment_mappings(), 1);
	/* In the segments' zone (guest-lib/vc_place.c), away from where the
	 * worker's libraries and driver reservations lie. */
	ck_assert_uint_ge((uintptr_t)p, 0x3fffull << 32);
	ck_assert_uint_le((uintptr_t)p + n, 0x5fffull << 32);
	/* Of several files where there are several processors. */
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		ck_assert_int_ge(segment_parts(), 1);
	else
		ck_assert_int_eq(segment_parts(), 0);
	/* Mapped at the server's too: the pointer is its own device address. */
	CK(cuMemHostGetDevicePointer(&dp, p + 12345, 0));
	ck_assert_uint_eq(dp, (CUdeviceptr)(uintptr_t)(p + 12345));
	CK(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, (CUdeviceptr)(uintptr_t)p));
	ck_assert_int_eq(mapped, 1);
	CK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)(p + n - 1)));
	ck_assert_uint_eq(type, CU_MEMORYTYPE_HOST);
	CK(cuMemHostGetFlags(&flags, p));
	ck_assert_uint_ne(flags & CU_MEMHOSTALLOC_DEVICEMAP, 0);
	/* Copies through its first, middle and last pieces, both ways, async. */
	CK(cuMemAlloc(&d, piece));
	CK(cuStreamCreate(&s, 0));
	for (unsigned k = 0; k < 3; k++) {
		uint8_t *src = p + (k == 0 ? 0 : k == 1 ? n / 2 : n - piece);
		uint8_t *dst = p + (k == 2 ? 0 : n - piece);

		fill(src, piece, k + 1);
		memset(dst, 0, piece);
		CK(cuMemcpyHtoDAsync(d, src, piece, s));
		CK(cuMemcpyDtoHAsync(dst, d, piece, s));
		CK(cuStreamSynchronize(s));
		ck_assert(same(dst, piece, k + 1));
	}
	/* Synchronous copies, and cuMemcpy naming it as unified memory. */
	CK(cuMemsetD8(d, 0x5a, piece));
	CK(cuMemcpy((CUdeviceptr)(uintptr_t)(p + MiB), d, 4096));
	ck_assert_uint_eq(p[MiB], 0x5a);
	ck_assert_uint_eq(p[MiB + 4095], 0x5a);
	CK(cuStreamDestroy(s));
	CK(cuMemFree(d));
	CK(cuMemFreeHost(p));
	ck_assert_int_eq(segments_gone(), 0);
	ck_assert_int_eq(cuMemFreeHost(p), CUDA_ERROR_INVALID_VALUE);
	/* Released on the server too: the bound has room for it again. */
	CK(cuMemAllocHost(&v, n));
	CK(cuMemFreeHost(v));
}
END_TEST

START_TEST(past_the_bound_is_out_of_memory)
{
	void *a, *b, *c;

	CK(cuMemHostAlloc(&a, GiB, 0));
	/* 1 GiB + 512 MiB passes the server's 1280 MiB: as natively when no
	 * more can be locked, and nothing is left behind. */
	ck_assert_int_eq(cuMemHostAlloc(&b, 512 * MiB, 0), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(cuMemAllocHost(&b, 512 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(cuMemHostAlloc(&b, 512 * MiB, CU_MEMHOSTALLOC_DEVICEMAP), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(segment_mappings(), 1);
	/* Below the bound, more segments; the pool still serves small ones. */
	CK(cuMemHostAlloc(&b, 128 * MiB, 0));
	CK(cuMemHostAlloc(&c, 4096, 0));
	ck_assert_int_eq(segment_mappings(), 2);
	CK(cuMemFreeHost(a));
	CK(cuMemHostAlloc(&a, 512 * MiB, 0));
	CK(cuMemFreeHost(b));
	CK(cuMemFreeHost(a));
	CK(cuMemFreeHost(c));
	ck_assert_int_eq(segments_gone(), 0);
}
END_TEST

START_TEST(many_segments_freed_in_any_order)
{
	void *v[8];
	CUdeviceptr d;

	CK(cuMemAlloc(&d, MiB));
	for (int i = 0; i < 8; i++) {
		CK(cuMemHostAlloc(&v[i], 100 * MiB + (size_t)i * 4096 + 1, 0));
		fill(v[i], MiB, (unsigned)i);
	}
	ck_assert_int_eq(segment_mappings(), 8);
	for (int i = 0; i < 8; i += 2)
		CK(cuMemFreeHost(v[i]));
	for (int i = 1; i < 8; i += 2) {
		CK(cuMemcpyHtoD(d, v[i], MiB));
		memset(v[i], 0, MiB);
		CK(cuMemcpyDtoH(v[i], d, MiB));
		ck_assert(same(v[i], MiB, (unsigned)i));
		CK(cuMemFreeHost(v[i]));
	}
	ck_assert_int_eq(segments_gone(), 0);
	CK(cuMemFree(d));
}
END_TEST

START_TEST(registered_range_larger_than_the_pool_moves_into_a_segment)
{
	const size_t n = 96 * MiB + 100;
	uint8_t *m = mmap(NULL, n + 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;
	CUdeviceptr d, da = 0;
	int mapped = 0;

	ck_assert_ptr_ne(m, MAP_FAILED);
	a = m + 100;
	fill(m, n + 8192 - 8, 7);
	CK(cuMemHostRegister(a, n, CU_MEMHOSTREGISTER_DEVICEMAP));
	ck_assert_int_eq(segment_mappings(), 2); /* the segment, and its pages at the program's address */
	/* Same bytes at the same address, neighbours included; mapped now. */
	ck_assert(same(m, n + 8192 - 8, 7));
	CK(cuMemHostGetDevicePointer(&da, a, 0));
	ck_assert_uint_ne(da, 0);
	CK(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, (CUdeviceptr)(uintptr_t)a));
	ck_assert_int_eq(mapped, 1);
	CK(cuMemAlloc(&d, n));
	CK(cuMemcpyHtoD(d, a, n));
	CK(cuMemsetD8(d + n - 1, 0xee, 1));
	CK(cuMemcpyDtoH(a, d, n));
	ck_assert_uint_eq(a[n - 1], 0xee);
	CK(cuMemHostUnregister(a));
	/* Ordinary memory again, with its bytes; the segment is gone. */
	ck_assert_int_eq(segments_gone(), 0);
	ck_assert_uint_eq(a[n - 1], 0xee);
	a[n - 1] = 0; /* writable */
	ck_assert_int_eq(cuMemHostGetDevicePointer(&da, a, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(d));
	munmap(m, n + 8192);
}
END_TEST

START_TEST(graph_copies_name_segment_memory)
{
	const size_t n = 80 * MiB; /* more than the pool */
	CUDA_MEMCPY3D c = {0}, back;
	CUgraph g;
	CUgraphExec e;
	CUgraphNode node;
	CUdeviceptr d;
	uint8_t *out;
	void *h, *o;

	CK(cuMemHostAlloc(&h, n, 0));
	CK(cuMemHostAlloc(&o, n, 0));
	out = o;
	fill(h, n, 3);
	memset(out, 0, n);
	CK(cuMemAlloc(&d, n));
	CK(cuGraphCreate(&g, 0));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = h;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = d;
	c.WidthInBytes = n;
	c.Height = c.Depth = 1;
	CK(cuGraphAddMemcpyNode(&node, g, NULL, 0, &c, g_ctx));
	CK(cuGraphMemcpyNodeGetParams(node, &back));
	ck_assert_ptr_eq(back.srcHost, h);
	CK(cuGraphInstantiate(&e, g, 0));
	CK(cuGraphLaunch(e, NULL));
	CK(cuStreamSynchronize(NULL));
	CK(cuMemcpyDtoH(out, d, n));
	ck_assert(same(out, n, 3));
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(g));
	CK(cuMemFree(d));
	CK(cuMemFreeHost(h));
	CK(cuMemFreeHost(o));
}
END_TEST

/* One thread's share of segments_from_several_threads. */
static void *alloc_fill_copy(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	const size_t n = 100 * MiB;
	CUdeviceptr d;
	uint8_t *h[2];
	int bad = 0;

	if (cuCtxSetCurrent(g_ctx) || cuMemAlloc(&d, MiB))
		return (void *)1;
	for (int i = 0; i < 2; i++) {
		if (cuMemHostAlloc((void **)&h[i], n, 0))
			return (void *)1;
		fill(h[i] + n - MiB, MiB, seed + (unsigned)i);
	}
	for (int i = 0; i < 2; i++) {
		bad |= cuMemcpyHtoD(d, h[i] + n - MiB, MiB) != CUDA_SUCCESS;
		memset(h[i], 0, MiB);
		bad |= cuMemcpyDtoH(h[i], d, MiB) != CUDA_SUCCESS;
		bad |= !same(h[i], MiB, seed + (unsigned)i);
		bad |= cuMemFreeHost(h[i]) != CUDA_SUCCESS;
	}
	cuMemFree(d);
	return (void *)(uintptr_t)bad;
}

/* Segments of several files allocated by four threads at once: each
 * thread's descriptors reach the server with its own command (pinseg.c
 * passes one segment's at a time), every copy through them holds. */
START_TEST(segments_from_several_threads)
{
	pthread_t t[4];
	void *r;

	for (uintptr_t i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, alloc_fill_copy, (void *)(i * 10)), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(t[i], &r), 0);
		ck_assert_ptr_null(r);
	}
	ck_assert_int_eq(segments_gone(), 0);
}
END_TEST

/* A device round trip of @n bytes from @h: the bytes come back. */
static void round_trip(uint8_t *h, size_t n, unsigned seed)
{
	CUdeviceptr d;

	CK(cuMemAlloc(&d, n));
	fill(h, n, seed);
	CK(cuMemcpyHtoD(d, h, n));
	memset(h, 0, n);
	CK(cuMemcpyDtoH(h, d, n));
	ck_assert(same(h, n, seed));
	CK(cuMemFree(d));
}

START_TEST(a_freed_segment_is_parked_and_taken_again)
{
	const size_t n = 200 * MiB;
	CUdeviceptr dp = 0;
	char perms[5];
	uint8_t *p;
	void *v;

	CK(cuMemHostAlloc(&v, n, 0));
	p = v;
	fill(p, MiB, 1);
	CK(cuMemFreeHost(p));
	/* Kept, but a use after the free faults, as natively. */
	ck_assert_int_eq(segment_mappings(), 1);
	perms_at(p, perms);
	ck_assert_str_eq(perms, "---s");
	ck_assert_int_eq(cuMemFreeHost(p), CUDA_ERROR_INVALID_VALUE);
	/* An allocation it fits gets its pages, mapped, at the same address. */
	CK(cuMemHostAlloc(&v, n - 5 * 4096, CU_MEMHOSTALLOC_DEVICEMAP));
	ck_assert_ptr_eq(v, p);
	ck_assert_int_eq(segment_mappings(), 1);
	perms_at(p, perms);
	ck_assert_str_eq(perms, "rw-s");
	CK(cuMemHostGetDevicePointer(&dp, p + 4096, 0));
	ck_assert_uint_eq(dp, (CUdeviceptr)(uintptr_t)(p + 4096));
	round_trip(p + n - 6 * 4096, 4096, 2);
	CK(cuMemFreeHost(p));
	/* So does one of its whole size, the slack past the 200 MiB asked. */
	CK(cuMemHostAlloc(&v, n + 2 * MiB, 0));
	ck_assert_ptr_eq(v, p);
	CK(cuMemFreeHost(v));
	/* One it is far too large for gets a segment of its own. */
	CK(cuMemHostAlloc(&v, 100 * MiB, 0));
	ck_assert_ptr_ne(v, p);
	ck_assert_int_eq(segment_mappings(), 2);
	round_trip(v, MiB, 3);
	CK(cuMemFreeHost(v));
}
END_TEST

/* cudaHostRegister of a malloc'd buffer (one page more than its size) takes
 * the segment cudaFreeHost of as many bytes parked, and gives it back. */
START_TEST(a_registration_takes_a_parked_segment)
{
	const size_t n = 128 * MiB;
	uint8_t *m = mmap(NULL, n + 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;
	CUdeviceptr da = 0;
	char perms[5];
	void *v;

	ck_assert_ptr_ne(m, MAP_FAILED);
	CK(cuMemHostAlloc(&v, n, 0));
	CK(cuMemFreeHost(v));
	a = m + 16;
	fill(m, n + 8192 - 8, 5);
	CK(cuMemHostRegister(a, n, 0));
	/* The parked segment, open again, and its pages at the program's
	 * address: no third mapping, so no new segment. */
	ck_assert_int_eq(segment_mappings(), 2);
	perms_at(v, perms);
	ck_assert_str_eq(perms, "rw-s");
	ck_assert(same(m, n + 8192 - 8, 5));
	CK(cuMemHostGetDevicePointer(&da, a, 0));
	ck_assert_uint_ne(da, 0);
	round_trip(a + n - MiB, MiB, 6);
	CK(cuMemHostUnregister(a));
	/* Ordinary memory with its bytes; the segment parked again. */
	ck_assert_int_eq(segments_settle(1), 1);
	perms_at(v, perms);
	ck_assert_str_eq(perms, "---s");
	ck_assert(same(a + n - MiB, MiB, 6));
	a[n - 1] = 1; /* writable */
	ck_assert_int_eq(cuMemHostGetDevicePointer(&da, a, 0), CUDA_ERROR_INVALID_VALUE);
	/* And registered again, into the same segment. */
	CK(cuMemHostRegister(a, n, CU_MEMHOSTREGISTER_DEVICEMAP));
	ck_assert_int_eq(segment_mappings(), 2);
	round_trip(a, MiB, 7);
	CK(cuMemHostUnregister(a));
	munmap(m, n + 8192);
}
END_TEST

/* Past VCUDA_PINNED_KEEP the oldest parked segment goes. */
START_TEST(the_bound_keeps_the_newest)
{
	void *a, *b, *c;

	setenv("VCUDA_PINNED_KEEP", "300M", 1);
	CK(cuMemHostAlloc(&a, 200 * MiB, 0));
	CK(cuMemHostAlloc(&b, 200 * MiB, 0));
	CK(cuMemFreeHost(a));
	ck_assert_int_eq(segment_mappings(), 2);
	CK(cuMemFreeHost(b));
	ck_assert_int_eq(segments_settle(1), 1);
	CK(cuMemHostAlloc(&c, 200 * MiB, 0));
	ck_assert_ptr_eq(c, b);
	CK(cuMemFreeHost(c));
	/* Larger than the bound alone: not parked at all. */
	CK(cuMemHostAlloc(&a, 400 * MiB, 0));
	ck_assert_int_eq(segment_mappings(), 2);
	CK(cuMemFreeHost(a));
	ck_assert_int_eq(segments_settle(1), 1);
}
END_TEST

/* The server's --pinned-max (1280 MiB here) counts parked segments: an
 * allocation it refuses drops them and is made. */
START_TEST(a_refusal_drops_the_parked)
{
	void *a, *b;

	CK(cuMemHostAlloc(&a, GiB, 0));
	CK(cuMemFreeHost(a));
	ck_assert_int_eq(segment_mappings(), 1);
	CK(cuMemHostAlloc(&b, 512 * MiB, 0));
	ck_assert_int_eq(segments_settle(1), 1);
	ck_assert_ptr_ne(b, a);
	round_trip(b, MiB, 8);
	CK(cuMemFreeHost(b));
}
END_TEST

/* Parking off for the tests of segments themselves. */
static void setup_no_keep(void)
{
	setenv("VCUDA_PINNED_KEEP", "0", 1);
	setup();
}

int main(void)
{
	Suite *s = suite_create("pinned");
	TCase *t = tcase_create("segments");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(t, setup_no_keep, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, a_gigabyte_is_page_locked_and_mapped);
	tcase_add_test(t, past_the_bound_is_out_of_memory);
	tcase_add_test(t, many_segments_freed_in_any_order);
	tcase_add_test(t, registered_range_larger_than_the_pool_moves_into_a_segment);
	tcase_add_test(t, graph_copies_name_segment_memory);
	tcase_add_test(t, segments_from_several_threads);
	suite_add_tcase(s, t);
	t = tcase_create("parked");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, a_freed_segment_is_parked_and_taken_again);
	tcase_add_test(t, a_registration_takes_a_parked_segment);
	tcase_add_test(t, the_bound_keeps_the_newest);
	tcase_add_test(t, a_refusal_drops_the_parked);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
