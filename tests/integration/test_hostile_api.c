/* SPDX-License-Identifier: MIT */
/*
 * test_hostile_api.c - a buggy program's misuse of the driver API through the
 * guest library and a running vcuda-server (Check; each test forks): handles
 * used after their owner went (a function of an unloaded module, a kernel of
 * an unloaded library, a stream of a destroyed context), host memory
 * registrations of memory the pool must not take (read-only, shared, file
 * backed, unmapped, overflowing), and images whose headers claim more bytes
 * than they have, and a program that ends while a stream waits for ever.
 * Each case asserts the driver's own error code, that the
 * session carries on (a copy round trip after it), and that nothing the call
 * should not touch changed.
 */
#include <check.h>
#include <cuda.h>
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_fixture.h"
#include "vt_admin.h"

static const char g_ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
			    ".visible .entry noop()\n{\n ret;\n}\n";

/* The session still works: 4 KiB there and back. */
static void session_alive(void)
{
	uint8_t a[4096], b[4096];
	CUdeviceptr d;

	for (unsigned i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 7);
	CK(cuMemAlloc(&d, sizeof(a)));
	CK(cuMemcpyHtoD(d, a, sizeof(a)));
	memset(b, 0, sizeof(b));
	CK(cuMemcpyDtoH(b, d, sizeof(b)));
	ck_assert_mem_eq(a, b, sizeof(a));
	CK(cuMemFree(d));
	CK(cuCtxSynchronize());
}

static CUresult launch1(CUfunction f)
{
	return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
}

/* ---- handles that outlive their owner ------------------------------------------ */

START_TEST(function_of_unloaded_module)
{
	CUmodule m;
	CUfunction f;
	int v;

	CK(cuModuleLoadData(&m, g_ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	CK(launch1(f)); /* its layout is cached now */
	CK(cuCtxSynchronize());
	CK(cuModuleUnload(m));
	/* at once, as natively, not at the next synchronisation */
	ck_assert_int_eq(launch1(f), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuModuleGetFunction(&f, m, "noop"), CUDA_ERROR_INVALID_HANDLE);
	CK(cuCtxSynchronize()); /* and no error left behind */
	session_alive();
}
END_TEST

START_TEST(function_of_unloaded_module_extra_form)
{
	size_t n = 0;
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &n, CU_LAUNCH_PARAM_BUFFER_SIZE, &n, CU_LAUNCH_PARAM_END};
	CUmodule m;
	CUfunction f;

	CK(cuModuleLoadData(&m, g_ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
	CK(cuModuleUnload(m));
	ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra), CUDA_ERROR_INVALID_HANDLE);
	CK(cuCtxSynchronize());
	session_alive();
}
END_TEST

START_TEST(enumerated_functions_die_with_module)
{
	CUmodule m;
	CUfunction fs[4] = {0};
	int v;

	CK(cuModuleLoadData(&m, g_ptx));
	CK(cuModuleEnumerateFunctions(fs, 4, m));
	ck_assert_ptr_nonnull(fs[0]);
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, fs[0]));
	CK(cuModuleUnload(m));
	ck_assert_int_eq(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, fs[0]), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(launch1(fs[0]), CUDA_ERROR_INVALID_HANDLE);
	session_alive();
}
END_TEST

START_TEST(kernel_of_unloaded_library)
{
	CUlibrary lib;
	CUkernel k, ks[2] = {0};
	CUfunction kf;
	CUdevice dev;
	int v;

	CK(cuDeviceGet(&dev, 0));
	CK(cuLibraryLoadData(&lib, g_ptx, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&k, lib, "noop"));
	CK(cuKernelGetFunction(&kf, k));
	CK(cuLibraryEnumerateKernels(ks, 1, lib));
	CK(launch1((CUfunction)k));
	CK(launch1(kf));
	CK(cuCtxSynchronize());
	CK(cuLibraryUnload(lib));
	ck_assert_int_eq(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, dev), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, ks[0], dev),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(launch1((CUfunction)k), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(launch1(kf), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuKernelGetFunction(&kf, k), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
	CK(cuCtxSynchronize());
	session_alive();
}
END_TEST

START_TEST(objects_of_destroyed_context)
{
	CUcontext c;
	CUstream s, mine;
	CUevent e;
	CUmodule m;
	CUfunction f;

	CK(cuStreamCreate(&mine, CU_STREAM_NON_BLOCKING));
	CK(cuCtxCreate(&c, NULL, 0, 0));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&e, 0));
	CK(cuModuleLoadData(&m, g_ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	CK(launch1(f));
	CK(cuCtxDestroy(c));
	CK(cuCtxSetCurrent(g_ctx));
	ck_assert_int_eq(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuEventQuery(e), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuEventRecord(e, mine), CUDA_SUCCESS); /* asynchronous: reported at the sync */
	ck_assert_int_eq(cuStreamSynchronize(mine), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuModuleGetFunction(&f, m, "noop"), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(launch1(f), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
	/* the surviving context's own stream is untouched */
	CK(cuStreamQuery(mine));
	CK(cuStreamDestroy(mine));
	session_alive();
}
END_TEST

/* A forged id: right tag, kind and index bits of a live stream, another
 * generation; and the old 0x7c tag. */
START_TEST(forged_handle_ids)
{
	CUstream s;
	uint64_t id;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	id = (uint64_t)(uintptr_t)s;
	ck_assert_int_eq(cuStreamQuery((CUstream)(uintptr_t)(id ^ (1ull << 24))), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuStreamQuery((CUstream)(uintptr_t)(id ^ (1ull << 55))), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuStreamQuery((CUstream)(uintptr_t)(id ^ (1ull << 56))), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuStreamQuery((CUstream)(uintptr_t)(id ^ (3ull << 62))), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuStreamQuery((CUstream)(uintptr_t)(id + 1)), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(cuStreamQuery((CUstream)(uintptr_t)0x7c0a000000000000ull), CUDA_ERROR_INVALID_HANDLE);
	CK(cuStreamQuery(s));
	CK(cuStreamDestroy(s));
	ck_assert_int_eq(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
	session_alive();
}
END_TEST

/* Create and destroy on one slot: each id is new, no old one comes back. */
START_TEST(reused_slots_issue_new_ids)
{
	CUevent first, e;

	CK(cuEventCreate(&first, 0));
	CK(cuEventDestroy(first));
	for (int i = 0; i < 1000; i++) {
		CK(cuEventCreate(&e, 0));
		ck_assert_ptr_ne(e, first);
		CK(cuEventDestroy(e));
		ck_assert_int_eq(cuEventQuery(first), CUDA_ERROR_INVALID_HANDLE);
	}
	session_alive();
}
END_TEST

/* ---- host memory registrations ---------------------------------------------------- */

/* The permissions and inode of the mapping holding @p, from /proc/self/maps. */
static void mapping_of(const void *p, char perms[5], unsigned long long *inode)
{
	unsigned long long s, e, ino;
	char line[512], pr[5];
	FILE *f = fopen("/proc/self/maps", "r");

	ck_assert_ptr_nonnull(f);
	strcpy(perms, "?");
	*inode = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %4s %*s %*s %llu", &s, &e, pr, &ino) == 4 && s <= (uintptr_t)p &&
		    (uintptr_t)p < e) {
			strcpy(perms, pr);
			*inode = ino;
		}
	fclose(f);
}

START_TEST(register_read_only_mapping)
{
	uint8_t *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long long ino;
	char perms[5];
	CUdeviceptr d;
	uint8_t b[8192];

	ck_assert_ptr_ne(p, MAP_FAILED);
	memset(p, 0x3c, 8192);
	ck_assert_int_eq(mprotect(p, 8192, PROT_READ), 0);
	/* the driver pins for writing unless told the device only reads it */
	ck_assert_int_eq(cuMemHostRegister(p, 8192, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemHostRegister(p, 8192, CU_MEMHOSTREGISTER_DEVICEMAP), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemHostRegister(p, 8192, CU_MEMHOSTREGISTER_READ_ONLY));
	mapping_of(p, perms, &ino);
	ck_assert_str_eq(perms, "r--p"); /* still read-only */
	CK(cuMemAlloc(&d, 8192));
	CK(cuMemcpyHtoD(d, p, 8192));
	CK(cuMemcpyDtoH(b, d, 8192));
	ck_assert_int_eq(b[0], 0x3c);
	ck_assert_int_eq(b[8191], 0x3c);
	CK(cuMemHostUnregister(p));
	mapping_of(p, perms, &ino);
	ck_assert_str_eq(perms, "r--p");
	CK(cuMemFree(d));
	munmap(p, 8192);
	session_alive();
}
END_TEST

START_TEST(register_shared_file_mapping)
{
	char path[] = "/tmp/vcuda-hostile-XXXXXX", perms[5];
	unsigned long long ino, ino0;
	int fd = mkstemp(path);
	uint8_t *p, b[4];
	CUdeviceptr d;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(fd, 8192), 0);
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	mapping_of(p, perms, &ino0);
	CK(cuMemHostRegister(p, 8192, 0));
	mapping_of(p, perms, &ino);
	ck_assert_str_eq(perms, "rw-s");
	ck_assert_uint_eq(ino, ino0); /* still the file */
	/* writes after registration reach the file, copies work */
	memcpy(p + 100, "abcd", 4);
	ck_assert_int_eq(pread(fd, b, 4, 100), 4);
	ck_assert_mem_eq(b, "abcd", 4);
	CK(cuMemAlloc(&d, 4096));
	CK(cuMemcpyHtoD(d, p, 4096));
	CK(cuMemcpyDtoH(p + 4096, d, 4096));
	ck_assert_int_eq(pread(fd, b, 4, 4096 + 100), 4);
	ck_assert_mem_eq(b, "abcd", 4); /* the device's bytes reached the file too */
	CK(cuMemHostUnregister(p));
	mapping_of(p, perms, &ino);
	ck_assert_str_eq(perms, "rw-s");
	ck_assert_uint_eq(ino, ino0);
	memcpy(p + 200, "wxyz", 4);
	ck_assert_int_eq(pread(fd, b, 4, 200), 4);
	ck_assert_mem_eq(b, "wxyz", 4);
	CK(cuMemFree(d));
	munmap(p, 8192);
	close(fd);
	session_alive();
}
END_TEST

START_TEST(register_bad_ranges)
{
	uint8_t *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t text = (uintptr_t)&session_alive;
	uint8_t *heap = malloc(3 * 4096);

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_ptr_nonnull(heap);
	/* a size that wraps around the address space */
	ck_assert_int_eq(cuMemHostRegister(p, (size_t)-4096, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemHostRegister(p + 4096, SIZE_MAX, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemHostRegister(p, 0, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemHostRegister(p, 4096, 0x100), CUDA_ERROR_INVALID_VALUE); /* unknown flag */
	/* a hole: the second page unmapped; and a guard page */
	ck_assert_int_eq(munmap(p + 4096, 4096), 0);
	ck_assert_int_eq(cuMemHostRegister(p, 3 * 4096, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemHostRegister(p + 4096, 100, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(mprotect(p + 2 * 4096, 4096, PROT_NONE), 0);
	ck_assert_int_eq(cuMemHostRegister(p + 2 * 4096, 4096, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemHostRegister(p + 2 * 4096, 4096, CU_MEMHOSTREGISTER_READ_ONLY),
			 CUDA_ERROR_INVALID_VALUE);
	/* the program's own code: writable it is not */
	ck_assert_int_eq(cuMemHostRegister((void *)(text & ~(uintptr_t)4095), 4096, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemHostRegister((void *)(text & ~(uintptr_t)4095), 4096, CU_MEMHOSTREGISTER_READ_ONLY));
	CK(cuMemHostUnregister((void *)(text & ~(uintptr_t)4095)));
	/* nothing above left a registration behind: the heap registers, and
	 * overlaps with it are refused */
	CK(cuMemHostRegister(heap + 4096, 4096, 0));
	ck_assert_int_eq(cuMemHostRegister(heap, 4096 + 1, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	ck_assert_int_eq(cuMemHostRegister(heap + 8191, 2, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	ck_assert_int_eq(cuMemHostRegister(heap, 3 * 4096, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	CK(cuMemHostUnregister(heap + 4096));
	ck_assert_int_eq(cuMemHostUnregister(heap + 4096), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	/* third-party PCI memory there is none */
	ck_assert_int_eq(cuMemHostRegister(heap, 4096, CU_MEMHOSTREGISTER_IOMEMORY), CUDA_ERROR_NOT_PERMITTED);
	free(heap);
	munmap(p, 4096);
	munmap(p + 2 * 4096, 2 * 4096);
	session_alive(); /* ... and the program still runs its own code */
}
END_TEST

/* ---- images whose headers lie about their size ---------------------------------- */

/* A fatbin whose payload size wraps the sum around to 8 bytes. */
START_TEST(fatbin_size_wraps)
{
	struct {
		uint32_t magic;
		uint16_t version, header_size;
		uint64_t fat_size;
		uint8_t rest[64];
	} fb = {0xba55ed50u, 1, 16, UINT64_MAX - 7, {0}};
	CUmodule m;
	CUlibrary l;

	ck_assert_int_eq(cuModuleLoadData(&m, &fb), CUDA_ERROR_INVALID_IMAGE);
	ck_assert_int_eq(cuLibraryLoadData(&l, &fb, NULL, NULL, 0, NULL, NULL, 0), CUDA_ERROR_INVALID_IMAGE);
	fb.header_size = 4; /* smaller than the header itself */
	fb.fat_size = 16;
	ck_assert_int_eq(cuModuleLoadData(&m, &fb), CUDA_ERROR_INVALID_IMAGE);
	session_alive();
}
END_TEST

/* ELF claims that wrap: a section offset near 2^64, a table offset past
 * anything an image may be. */
START_TEST(elf_offsets_wrap)
{
	static uint8_t b[1024];
	Elf64_Ehdr e = {0};
	Elf64_Shdr sh[2] = {{0}};
	CUmodule m;

	memcpy(e.e_ident, ELFMAG, SELFMAG);
	e.e_ident[EI_CLASS] = ELFCLASS64;
	e.e_ehsize = sizeof(e);
	e.e_shoff = sizeof(e);
	e.e_shnum = 2;
	e.e_shentsize = sizeof(Elf64_Shdr);
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_offset = UINT64_MAX - 15;
	sh[1].sh_size = 32;
	memcpy(b, &e, sizeof(e));
	memcpy(b + sizeof(e), sh, sizeof(sh));
	ck_assert_int_eq(cuModuleLoadData(&m, b), CUDA_ERROR_INVALID_IMAGE);
	e.e_shoff = UINT64_MAX - 64;
	memcpy(b, &e, sizeof(e));
	ck_assert_int_eq(cuModuleLoadData(&m, b), CUDA_ERROR_INVALID_IMAGE);
	session_alive();
}
END_TEST


/* ---- memory misuse -------------------------------------------------------------------- */

START_TEST(double_and_interior_frees)
{
	CUdeviceptr d, d2;

	CK(cuMemAlloc(&d, 1 << 20));
	ck_assert_int_eq(cuMemFree(d + 4096), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(d));
	ck_assert_int_eq(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemFree((CUdeviceptr)0x1000), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(0)); /* as natively */
	CK(cuMemAlloc(&d2, 4096));
	CK(cuMemFree(d2));
	session_alive();
}
END_TEST

START_TEST(copies_past_the_allocation)
{
	uint8_t b[64] = {0};
	CUdeviceptr d, d2;

	CK(cuMemAlloc(&d, 4096));
	CK(cuMemAlloc(&d2, 4096));
	ck_assert_int_eq(cuMemcpyHtoD(d + 4096 - 32, b, sizeof(b)), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemcpyDtoH(b, d + 4096 - 32, sizeof(b)), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemcpyDtoD(d2, d + 8, 4096), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemsetD8(d + 4000, 1, 200), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuMemcpyHtoD((CUdeviceptr)0x1000, b, sizeof(b)), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemcpyHtoD(d + 4096 - 64, b, sizeof(b))); /* the last bytes are fine */
	CK(cuMemFree(d));
	CK(cuMemFree(d2));
	session_alive();
}
END_TEST

/* 2000 asynchronous memsets to memory that is not the program's, none read:
 * the synchronisation reports the error once, the next one nothing. */
/* A program that ends while one of its streams waits for a value nothing
 * will write (cuStreamWaitValue32): its session must still be freed (the
 * server's state is checked at the end), not wait for ever at the close.
 * No fixture: a release of the context would wait for the stream too. */
START_TEST(exit_while_a_stream_waits_forever)
{
	CUdevice d;
	CUcontext c;
	CUstream s;
	CUdeviceptr flag, pooled;

	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&c, d));
	CK(cuCtxSetCurrent(c));
	CK(cuMemAlloc(&flag, 4096));
	CK(cuMemsetD32(flag, 0, 1024));
	CK(cuMemAllocAsync(&pooled, 4096, NULL)); /* left for the close to free, in order */
	CK(cuCtxSynchronize());
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamWaitValue32(s, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuMemsetD8Async(flag + 64, 1, 64, s));
	ck_assert_int_eq(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	/* and the program ends here */
}
END_TEST

/* A program killed while its server waits for it in the driver: a 3D copy
 * into pageable memory behind a stream that waits for a value nothing will
 * write keeps the session's serving thread in cuStreamSynchronize for ever
 * (natively the program would hang there too). Killed, its session cannot
 * close; the worker is ended 10 s after the client went, and everything it
 * held is freed (the server's state is checked at the end). */
START_TEST(killed_while_the_server_waits_in_a_copy)
{
	int pipefd[2], st = 0;
	pid_t pid;
	char c = 0;

	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static uint8_t host[64 * 64];
		CUDA_MEMCPY3D m = {0};
		CUdeviceptr flag, src;
		CUcontext ctx;
		CUstream s;
		CUdevice d;

		close(pipefd[0]);
		if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&ctx, d) || cuCtxSetCurrent(ctx) ||
		    cuMemAlloc(&flag, 4096) || cuMemsetD32(flag, 0, 1024) || cuMemAlloc(&src, sizeof(host)) ||
		    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) ||
		    cuStreamWaitValue32(s, flag, 1, CU_STREAM_WAIT_VALUE_GEQ))
			_exit(2);
		m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
		m.srcDevice = src;
		m.srcPitch = 64;
		m.dstMemoryType = CU_MEMORYTYPE_HOST;
		m.dstHost = host;
		m.dstPitch = 64;
		m.WidthInBytes = 64;
		m.Height = 64;
		m.Depth = 1;
		if (write(pipefd[1], "x", 1) != 1)
			_exit(3);
		cuMemcpy3DAsync(&m, s); /* into pageable memory: returns when the data is there, never */
		_exit(4);
	}
	close(pipefd[1]);
	ck_assert_int_eq(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	usleep(300 * 1000); /* the copy is at the server */
	ck_assert_int_eq(waitpid(pid, &st, WNOHANG), 0); /* still waiting for it */
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st));
}
END_TEST

START_TEST(async_errors_unread)
{
	CUstream s;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < 2000; i++)
		CK(cuMemsetD8Async((CUdeviceptr)0x1000, 0, 64, s));
	ck_assert_int_eq(cuStreamSynchronize(s), CUDA_ERROR_INVALID_VALUE);
	CK(cuStreamSynchronize(s));
	CK(cuCtxSynchronize());
	CK(cuStreamDestroy(s));
	session_alive();
}
END_TEST

START_TEST(null_output_pointers)
{
	CUmodule m;

	ck_assert_int_eq(cuMemAlloc(NULL, 16), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuStreamCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuEventCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuCtxGetCurrent(NULL), CUDA_ERROR_INVALID_VALUE);
	CK(cuModuleLoadData(&m, g_ptx));
	ck_assert_int_eq(cuModuleGetFunction(NULL, m, "noop"), CUDA_ERROR_INVALID_VALUE);
	CK(cuModuleUnload(m));
	session_alive();
}
END_TEST

/* Shapes past the device's limits, refused at once. */
START_TEST(launch_shapes_past_limits)
{
	CUmodule m;
	CUfunction f;
	CUdevice dev;
	int max_smem = 0;

	CK(cuCtxGetDevice(&dev));
	CK(cuDeviceGetAttribute(&max_smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
	CK(cuModuleLoadData(&m, g_ptx));
	CK(cuModuleGetFunction(&f, m, "noop"));
	ck_assert_int_eq(cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 1, 1, 128, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, (unsigned)max_smem + 1, NULL, NULL, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	CK(launch1(f));
	CK(cuCtxSynchronize());
	CK(cuModuleUnload(m));
	session_alive();
}
END_TEST

/* ---- caps ------------------------------------------------------------------------------ */

/* Mapped page-locked memory past the pinned pool and the machine (1 TiB):
 * CUDA_ERROR_OUT_OF_MEMORY, as natively; nothing is left taken, so the pool
 * still serves. */
START_TEST(pinned_pool_exhausted)
{
	void *big = NULL, *small = NULL;
	size_t huge = (size_t)1 << 40;
	CUdeviceptr d;

	ck_assert_int_eq(cuMemHostAlloc(&big, huge, CU_MEMHOSTALLOC_DEVICEMAP), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(cuMemHostAlloc(&big, huge, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
			 CUDA_ERROR_OUT_OF_MEMORY);
	/* (unmapped, the library falls back to malloc, whose answer to 1 TiB is
	 * the C library's: a sanitizer's allocator aborts instead) */
	ck_assert_ptr_null(big);
	CK(cuMemHostAlloc(&small, 1 << 20, CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemHostGetDevicePointer(&d, small, 0));
	memset(small, 0x5a, 1 << 20);
	CK(cuMemAlloc(&d, 1 << 20));
	CK(cuMemcpyHtoD(d, small, 1 << 20));
	memset(small, 0, 1 << 20);
	CK(cuMemcpyDtoH(small, d, 1 << 20));
	ck_assert_int_eq(((uint8_t *)small)[(1 << 20) - 1], 0x5a);
	CK(cuMemFree(d));
	CK(cuMemFreeHost(small));
	session_alive();
}
END_TEST

/* ---- the neighbour and the server's baseline ------------------------------------------ */

/* A process with a session of its own, copying 64 KiB there and back (every
 * byte checked) until SIGTERM; exits 0 only if every round trip was right
 * and it made some. */
static pid_t neighbour_start(void)
{
	pid_t pid;
	sigset_t term;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pid = fork();
	if (pid == 0) {
		static uint8_t a[65536], b[65536];
		unsigned long n = 0;
		sigset_t pend;
		CUdeviceptr d;

		sigprocmask(SIG_BLOCK, &term, NULL); /* looked at between round trips */
		CUcontext ctx;
		CUdevice dev;
		CUresult rc;

		/* not setup(): Check's asserts work only inside a test */
		if ((rc = cuInit(0)) || (rc = cuDeviceGet(&dev, 0)) || (rc = cuDevicePrimaryCtxRetain(&ctx, dev)) ||
		    (rc = cuCtxSetCurrent(ctx)) || (rc = cuMemAlloc(&d, sizeof(a)))) {
			printf("neighbour: setup failed: %d\n", rc);
			_exit(2);
		}
		do {
			for (unsigned i = 0; i < sizeof(a); i++)
				a[i] = (uint8_t)(i + n);
			if (cuMemcpyHtoD(d, a, sizeof(a)) || cuMemcpyDtoH(b, d, sizeof(b)) || memcmp(a, b, sizeof(a)))
				_exit(1);
			n++;
			sigpending(&pend);
		} while (!sigismember(&pend, SIGTERM));
		printf("neighbour: %lu verified round trips\n", n);
		fflush(stdout);
		_exit(0);
	}
	return pid;
}

/* The neighbour stops cleanly; 0 if it never saw a wrong byte. */
static int neighbour_stop(pid_t pid)
{
	int st = 0;

	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	printf("the neighbour ended with status %#x\n", st);
	return -1;
}

/* The server's state, where it can be asked (not inside a VM). */
static const char *g_admin;
static int g_server_pid;

int main(void)
{
	Suite *s = suite_create("hostile_api");
	TCase *t = tcase_create("handles");
	struct vt_server_state st0, st1;
	SRunner *r;
	pid_t nb;
	int failed;

	g_admin = getenv("VCUDA_ADMIN_SOCKET");
	g_server_pid = getenv("VCUDA_SERVER_PID") ? atoi(getenv("VCUDA_SERVER_PID")) : 0;
	/* an earlier program's session may still be closing: wait for the
	 * server to be idle, and for its descriptor count to settle */
	if (g_server_pid > 0 && vt_server_settle(g_server_pid, g_admin, 0, 0, 5000, &st0) == 0)
		for (int i = 0, prev = -1; i < 100 && st0.fds != prev; i++) {
			prev = st0.fds;
			usleep(20000);
			vt_server_state(g_server_pid, g_admin, &st0);
		}
	if (g_server_pid > 0 && (vt_server_state(g_server_pid, g_admin, &st0) ||
				 (g_admin && (st0.sessions || st0.mem_used || st0.pinned_used)))) {
		printf("the server is not idle before the test: %d sessions, %lld bytes charged\n", st0.sessions,
		       (long long)st0.mem_used);
		return 1;
	}
	fflush(stdout);
	nb = neighbour_start();

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, function_of_unloaded_module);
	tcase_add_test(t, function_of_unloaded_module_extra_form);
	tcase_add_test(t, enumerated_functions_die_with_module);
	tcase_add_test(t, kernel_of_unloaded_library);
	tcase_add_test(t, objects_of_destroyed_context);
	tcase_add_test(t, forged_handle_ids);
	tcase_add_test(t, reused_slots_issue_new_ids);
	suite_add_tcase(s, t);
	t = tcase_create("host registrations");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, register_read_only_mapping);
	tcase_add_test(t, register_shared_file_mapping);
	tcase_add_test(t, register_bad_ranges);
	suite_add_tcase(s, t);
	t = tcase_create("images");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, fatbin_size_wraps);
	tcase_add_test(t, elf_offsets_wrap);
	suite_add_tcase(s, t);
	t = tcase_create("memory misuse and caps");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, double_and_interior_frees);
	tcase_add_test(t, copies_past_the_allocation);
	tcase_add_test(t, async_errors_unread);
	tcase_add_test(t, null_output_pointers);
	tcase_add_test(t, launch_shapes_past_limits);
	tcase_add_test(t, pinned_pool_exhausted);
	suite_add_tcase(s, t);
	t = tcase_create("endings");
	tcase_add_test(t, exit_while_a_stream_waits_forever);
	tcase_add_test(t, killed_while_the_server_waits_in_a_copy);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);

	if (neighbour_stop(nb)) {
		printf("the neighbour process failed or saw a wrong byte\n");
		failed++;
	}
	if (g_server_pid > 0) {
		/* every session gone, nothing charged, the listener's fds as before */
		/* A stuck worker exits 10 s after its client went, or 10 s
		 * into a teardown stuck in the driver (vc_worker_close(): on
		 * the H100, destroying the context of exit_while_a_stream_
		 * waits_forever); the margin is for a loaded machine. */
		int rc = vt_server_settle(g_server_pid, g_admin, 0, 0, 60000, &st1);

		for (int i = 0; rc == 0 && i < 300 && st1.fds > st0.fds; i++) {
			usleep(10000);
			rc = vt_server_state(g_server_pid, g_admin, &st1);
		}
		if (rc || st1.pinned_used || st1.fds > st0.fds || st1.rss_kib > st0.rss_kib + 4096) {
			printf("the server did not return to its baseline: %d sessions, %lld device and %lld pinned "
			       "bytes charged, %d fds (was %d), RSS %lld KiB (was %lld)\n", st1.sessions,
			       (long long)st1.mem_used, (long long)st1.pinned_used, st1.fds, st0.fds,
			       (long long)st1.rss_kib, (long long)st0.rss_kib);
			failed++;
		} else {
			printf("server back to its baseline: %s, %d fds, RSS %lld KiB (was %lld)\n",
			       g_admin ? "0 sessions, 0 bytes charged" : "no admin socket", st1.fds,
			       (long long)st1.rss_kib, (long long)st0.rss_kib);
		}
	}
	return failed ? 1 : 0;
}
