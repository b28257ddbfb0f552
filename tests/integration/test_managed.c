/* SPDX-License-Identifier: MIT */
/*
 * test_managed.c - managed memory through a running vcuda-server (Check;
 * each test forks): one pointer valid on the CPU and in kernels, CPU writes
 * seen by the next kernel and copy, kernel writes seen by the CPU after
 * synchronisation, prefetches both ways, advice and range attributes,
 * pointer and device attributes, stream attachment, batches, frees and a
 * managed module variable. Kernels are vc_standin_store (tests/lib/
 * vt_kernels.h): a test double over the CI stand-in, PTX on a GPU, with the
 * same effect.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <cuda.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cuda_fixture.h"
#include "vt_kernels.h"

#define N (3u * 65536u / 4u + 100u) /* words: more than three 64 KiB granules */

static void store(CUfunction f, CUdeviceptr at, unsigned v, CUstream s)
{
	void *args[] = {&at, &v};

	CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

static CUfunction store_fn(CUmodule *m)
{
	CUfunction f;

	CK(cuModuleLoadData(m, vt_store_ptx));
	CK(cuModuleGetFunction(&f, *m, VT_STORE_KERNEL));
	return f;
}

START_TEST(cpu_and_kernel_take_turns)
{
	CUmodule m;
	CUfunction f = store_fn(&m);
	CUdeviceptr d;
	unsigned *p, *back;

	CK(cuMemAllocManaged(&d, N * 4, CU_MEM_ATTACH_GLOBAL));
	p = (unsigned *)(uintptr_t)d;
	for (unsigned i = 0; i < N; i++) /* the CPU writes first: its pages come on demand */
		p[i] = i * 3u;
	store(f, d + 4 * 5, 0xabcu, NULL);            /* the kernel sees the CPU's writes around it */
	store(f, d + 4 * (N - 1), 0xdefu, NULL);
	CK(cuCtxSynchronize());
	for (unsigned i = 0; i < N; i++)
		ck_assert_uint_eq(p[i], i == 5 ? 0xabcu : i == N - 1 ? 0xdefu : i * 3u);
	/* A read after a write: the CPU's copy is dropped at the launch. */
	p[7] = 77;
	store(f, d + 4 * 7, 78, NULL);
	CK(cuCtxSynchronize());
	ck_assert_uint_eq(p[7], 78);
	/* Copies see the CPU's writes, and the CPU sees the copies. */
	p[9] = 99;
	back = malloc(N * 4);
	CK(cuMemcpyDtoH(back, d, N * 4));
	ck_assert_uint_eq(back[9], 99);
	ck_assert_uint_eq(back[7], 78);
	back[11] = 1111;
	CK(cuMemcpyHtoD(d, back, N * 4));
	ck_assert_uint_eq(p[11], 1111);
	ck_assert_uint_eq(p[9], 99);
	/* cuMemcpy with a managed pointer: device memory to the driver */
	back[0] = 4242;
	CK(cuMemcpy(d, (CUdeviceptr)(uintptr_t)back, 4));
	ck_assert_uint_eq(p[0], 4242);
	CK(cuMemcpyHtoD(d + 4, p + 11, 4)); /* a managed "host" pointer is device memory too */
	ck_assert_uint_eq(p[1], 1111);
	CK(cuMemsetD32(d + 4 * 12, 0x5a5a5a5a, 4));
	ck_assert_uint_eq(p[13], 0x5a5a5a5au);
	free(back);
	CK(cuMemFree(d));
	CK(cuModuleUnload(m));
}
END_TEST

START_TEST(attributes)
{
	CUdeviceptr d, base = 0;
	size_t size = 0;
	int v = -1;
	unsigned type = 0;
	void *host = NULL;

	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0));
	ck_assert_int_eq(v, 1);
	/* The CPU may not touch managed memory while the device runs. */
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0));
	ck_assert_int_eq(v, 0);
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 0));
	ck_assert_int_eq(v, 0);
	CK(cuMemAllocManaged(&d, 10000, CU_MEM_ATTACH_HOST));
	CK(cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_IS_MANAGED, d + 100));
	ck_assert_int_eq(v, 1);
	CK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d));
	ck_assert_uint_eq(type, CU_MEMORYTYPE_DEVICE);
	CK(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, d));
	ck_assert_ptr_eq(host, (void *)(uintptr_t)d);
	CK(cuMemGetAddressRange(&base, &size, d + 5000));
	ck_assert_uint_eq(base, d);
	ck_assert_uint_ge(size, 10000);
	ck_assert_int_eq(cuMemAllocManaged(&d, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemAllocManaged(&d, 4096, 7), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(base));
}
END_TEST

START_TEST(prefetch_advise_and_range_attributes)
{
	CUmemLocation dev = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
	CUmemLocation cpu = {.type = CU_MEM_LOCATION_TYPE_HOST, .id = 0};
	CUmem_range_attribute as[3] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
				       CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION};
	int rm = -1, ptype = -1, last = -1, by[3] = {7, 7, 7};
	void *data[3] = {&rm, &ptype, &last};
	size_t sizes[3] = {4, 4, 4};
	CUdeviceptr d, plain;
	CUstream s;
	unsigned *p;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAllocManaged(&d, 1 << 20, CU_MEM_ATTACH_GLOBAL));
	p = (unsigned *)(uintptr_t)d;
	p[1000] = 1234;
	CK(cuMemPrefetchAsync(d, 1 << 20, dev, 0, s));
	CK(cuStreamSynchronize(s));
	CK(cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, d, 1 << 20));
	ck_assert_int_eq(last, 0);
	ck_assert_uint_eq(p[1000], 1234); /* prefetched to the device and back on the CPU's touch */
	CK(cuMemPrefetchAsync(d, 1 << 20, cpu, 0, s));
	CK(cuStreamSynchronize(s));
	CK(cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, d, 1 << 20));
	ck_assert_int_eq(last, CU_DEVICE_CPU);
	ck_assert_uint_eq(p[1000], 1234);
	/* advice, and what the range attributes say of it */
	CK(cuMemAdvise(d, 1 << 20, CU_MEM_ADVISE_SET_READ_MOSTLY, dev));
	CK(cuMemAdvise(d, 1 << 20, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev));
	CK(cuMemAdvise(d, 1 << 20, CU_MEM_ADVISE_SET_ACCESSED_BY, dev));
	CK(cuMemRangeGetAttributes(data, sizes, as, 3, d, 1 << 20));
	ck_assert_int_eq(rm, 1);
	ck_assert_int_eq(ptype, CU_MEM_LOCATION_TYPE_DEVICE);
	ck_assert_int_eq(last, CU_DEVICE_CPU);
	CK(cuMemRangeGetAttribute(by, sizeof(by), CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, d, 1 << 20));
	ck_assert_int_eq(by[0], 0);
	ck_assert_int_eq(by[1], CU_DEVICE_INVALID);
	ck_assert_int_eq(by[2], CU_DEVICE_INVALID);
	CK(cuMemAdvise(d, 1 << 20, CU_MEM_ADVISE_UNSET_READ_MOSTLY, dev));
	CK(cuMemRangeGetAttribute(&rm, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, d, 1 << 20));
	ck_assert_int_eq(rm, 0);
	/* the driver's own refusals */
	ck_assert_int_eq(cuMemRangeGetAttribute(&rm, 3, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, d, 1 << 20),
			 CUDA_ERROR_INVALID_VALUE);
	CK(cuMemAlloc(&plain, 4096));
	ck_assert_int_ne(cuMemPrefetchAsync(plain, 4096, dev, 0, s), CUDA_SUCCESS);
	ck_assert_int_ne(cuMemRangeGetAttribute(&rm, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, plain, 4096),
			 CUDA_SUCCESS);
	/* stream attachment */
	CK(cuStreamAttachMemAsync(s, d, 0, CU_MEM_ATTACH_SINGLE));
	CK(cuStreamSynchronize(s));
	ck_assert_uint_eq(p[1000], 1234);
	CK(cuMemFree(plain));
	CK(cuMemFree(d));
	CK(cuStreamDestroy(s));
}
END_TEST

START_TEST(batches)
{
	CUmemLocation locs[2] = {{.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}, {.type = CU_MEM_LOCATION_TYPE_HOST}};
	CUdeviceptr d[3];
	size_t sizes[3] = {65536, 65536, 65536}, idx[2] = {0, 2}, bad[2] = {1, 2};
	CUstream s;
	int last = -1;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < 3; i++) {
		CK(cuMemAllocManaged(&d[i], 65536, CU_MEM_ATTACH_GLOBAL));
		((unsigned *)(uintptr_t)d[i])[0] = 100u + (unsigned)i;
	}
	CK(cuMemPrefetchBatchAsync(d, sizes, 3, locs, idx, 2, 0, s));
	CK(cuStreamSynchronize(s));
	CK(cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, d[1], 65536));
	ck_assert_int_eq(last, 0);
	CK(cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, d[2], 65536));
	ck_assert_int_eq(last, CU_DEVICE_CPU);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(((unsigned *)(uintptr_t)d[i])[0], 100u + (unsigned)i);
	ck_assert_int_eq(cuMemPrefetchBatchAsync(d, sizes, 3, locs, bad, 2, 0, s), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemDiscardBatchAsync(d, sizes, 1, 0, s));
	CK(cuMemDiscardAndPrefetchBatchAsync(d + 1, sizes, 2, locs, idx, 1, 0, s));
	CK(cuStreamSynchronize(s));
	for (int i = 0; i < 3; i++)
		CK(cuMemFree(d[i]));
	CK(cuStreamDestroy(s));
}
END_TEST

START_TEST(free_unmaps)
{
	CUdeviceptr d;

	CK(cuMemAllocManaged(&d, 1 << 16, CU_MEM_ATTACH_GLOBAL));
	((unsigned *)(uintptr_t)d)[3] = 3;
	ck_assert_int_eq(msync((void *)(uintptr_t)d, 4096, MS_ASYNC), 0);
	CK(cuMemFree(d));
	/* gone from this process too */
	ck_assert_int_eq(msync((void *)(uintptr_t)d, 4096, MS_ASYNC), -1);
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
	/* many in a row: each one mapped and unmapped */
	for (int i = 0; i < 64; i++) {
		CK(cuMemAllocManaged(&d, 4096 * (unsigned)(i + 1), CU_MEM_ATTACH_GLOBAL));
		((volatile unsigned char *)(uintptr_t)d)[4096 * (unsigned)i] = (unsigned char)i;
		CK(cuMemFree(d));
	}
}
END_TEST

START_TEST(managed_module_variable)
{
	static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
				  ".visible .global .attribute(.managed) .align 4 .u32 vc_mvar;\n"
				  ".visible .entry noop()\n{\n ret;\n}\n";
	CUmodule m;
	CUfunction f = store_fn(&m);
	CUlibrary lib;
	CUdeviceptr d = 0;
	size_t n = 0;
	int v = 0;

	CK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetManaged(&d, &n, lib, "vc_mvar"));
	ck_assert_uint_ge(n, 4);
	CK(cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_IS_MANAGED, d));
	ck_assert_int_eq(v, 1);
	*(volatile unsigned *)(uintptr_t)d = 41;
	store(f, d, *(volatile unsigned *)(uintptr_t)d + 1, NULL);
	CK(cuCtxSynchronize());
	ck_assert_uint_eq(*(volatile unsigned *)(uintptr_t)d, 42);
	CK(cuLibraryUnload(lib));
	CK(cuModuleUnload(m));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("managed");
	TCase *t = tcase_create("managed");
	SRunner *r;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, cpu_and_kernel_take_turns);
	tcase_add_test(t, attributes);
	tcase_add_test(t, prefetch_advise_and_range_attributes);
	tcase_add_test(t, batches);
	tcase_add_test(t, free_unmaps);
	tcase_add_test(t, managed_module_variable);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
