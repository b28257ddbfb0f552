/* SPDX-License-Identifier: MIT */
/*
 * test_nvml.c - the guest's libnvidia-ml.so.1 (guest-lib/nvml) over a
 * running vcuda-server (CI stand-in or a GPU), beside the guest
 * libcuda.so.1: NVML's answers agree with the driver API's, memory shows the
 * server's quota (set through the admin socket, $VCUDA_ADMIN_SOCKET) and
 * what its sessions hold, the processes list this one, unserved entry points
 * answer NVML_ERROR_NOT_SUPPORTED. Each test forks (Check): a fresh process,
 * uninitialised. The processes are the server's (a VM's): inside the test
 * VM the pid they list is the guest's own.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <cuda.h>
#include <dlfcn.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vc_nvml.h"

#define OK(x) ck_assert_int_eq((x), NVML_SUCCESS)
#define CK(x) ck_assert_int_eq((x), CUDA_SUCCESS)
#define MiB (1ull << 20)

/* ---- the admin socket (as in test_quota.c) ---------------------------------------- */

static json_t *ask(const char *line)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const char *p = getenv("VCUDA_ADMIN_SOCKET");
	char buf[65536];
	size_t n = 0;
	int fd;

	ck_assert_msg(p != NULL, "set VCUDA_ADMIN_SOCKET");
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", p);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	while (n < sizeof(buf) - 1) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};

		if (poll(&pf, 1, 5000) != 1 || read(fd, buf + n, 1) != 1)
			break;
		if (buf[n] == '\n')
			break;
		n++;
	}
	close(fd);
	json_t *r = json_loadb(buf, n, 0, NULL);
	ck_assert_msg(r != NULL, "no reply to %s", line);
	return r;
}

static void set_mem_quota(uint64_t mem)
{
	char line[256];
	json_t *r;

	snprintf(line, sizeof(line), "{\"v\":1,\"op\":\"set\",\"mem_quota\":%llu,\"pinned_quota\":0,\"idle_timeout\":0}\n",
		 (unsigned long long)mem);
	r = ask(line);
	ck_assert(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
}

static uint64_t server_mem_used(void)
{
	json_t *r = ask("{\"op\":\"status\"}\n");
	uint64_t u = (uint64_t)json_integer_value(json_object_get(r, "mem_used"));

	json_decref(r);
	return u;
}

static void wait_used(uint64_t want)
{
	for (int i = 0; i < 150 && server_mem_used() != want; i++)
		usleep(20000);
	ck_assert_uint_eq(server_mem_used(), want);
}

static void cuda_up(void)
{
	CUcontext c;
	CUdevice d;

	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&c, d));
	CK(cuCtxSetCurrent(c));
}

static nvmlDevice_t dev0(void)
{
	nvmlDevice_t d;

	OK(nvmlInit_v2());
	OK(nvmlDeviceGetHandleByIndex_v2(0, &d));
	return d;
}

/* ---- tests -------------------------------------------------------------------------- */

START_TEST(use_before_init_is_uninitialized)
{
	unsigned n;
	nvmlDevice_t d;
	nvmlMemory_t m;

	ck_assert_int_eq(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	ck_assert_int_eq(nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_ERROR_UNINITIALIZED);
	ck_assert_int_eq(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	/* a handle kept past the last shutdown is no handle */
	d = dev0();
	OK(nvmlShutdown());
	ck_assert_int_eq(nvmlDeviceGetMemoryInfo(d, &m), NVML_ERROR_UNINITIALIZED);
}
END_TEST

START_TEST(init_and_shutdown_nest)
{
	unsigned n;

	OK(nvmlInit_v2());
	OK(nvmlInit());
	OK(nvmlInitWithFlags(0));
	OK(nvmlShutdown());
	OK(nvmlShutdown());
	OK(nvmlDeviceGetCount_v2(&n));
	OK(nvmlShutdown());
	ck_assert_int_eq(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	OK(nvmlInit_v2()); /* and again */
	OK(nvmlDeviceGetCount(&n));
	OK(nvmlShutdown());
}
END_TEST

START_TEST(count_and_handles)
{
	unsigned n, idx;
	int cn;
	nvmlDevice_t d, e;

	CK(cuInit(0));
	CK(cuDeviceGetCount(&cn));
	OK(nvmlInit_v2());
	OK(nvmlDeviceGetCount_v2(&n));
	ck_assert_uint_eq(n, (unsigned)cn);
	ck_assert_uint_ge(n, 1);
	OK(nvmlDeviceGetHandleByIndex_v2(0, &d));
	OK(nvmlDeviceGetHandleByIndex(0, &e));
	ck_assert_ptr_eq(d, e);
	OK(nvmlDeviceGetIndex(d, &idx));
	ck_assert_uint_eq(idx, 0);
	ck_assert_int_eq(nvmlDeviceGetHandleByIndex_v2(n, &e), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceGetCount_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
	/* a handle the library did not make */
	ck_assert_int_eq(nvmlDeviceGetIndex((nvmlDevice_t)&n, &idx), NVML_ERROR_INVALID_ARGUMENT);
	OK(nvmlShutdown());
}
END_TEST

START_TEST(name_uuid_pci_agree_with_cuda)
{
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], cname[256], uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], want[64];
	char cbus[32];
	CUuuid cu;
	CUdevice cd;
	nvmlPciInfo_t pci;
	nvmlDevice_t d, e;
	int v, major, minor;

	CK(cuInit(0));
	CK(cuDeviceGet(&cd, 0));
	d = dev0();
	OK(nvmlDeviceGetName(d, name, sizeof(name)));
	CK(cuDeviceGetName(cname, sizeof(cname), cd));
	ck_assert_str_eq(name, cname);
	ck_assert_int_eq(nvmlDeviceGetName(d, name, 4), NVML_ERROR_INSUFFICIENT_SIZE);

	OK(nvmlDeviceGetUUID(d, uuid, sizeof(uuid)));
	CK(cuDeviceGetUuid(&cu, cd));
	snprintf(want, sizeof(want), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 (unsigned char)cu.bytes[0], (unsigned char)cu.bytes[1], (unsigned char)cu.bytes[2],
		 (unsigned char)cu.bytes[3], (unsigned char)cu.bytes[4], (unsigned char)cu.bytes[5],
		 (unsigned char)cu.bytes[6], (unsigned char)cu.bytes[7], (unsigned char)cu.bytes[8],
		 (unsigned char)cu.bytes[9], (unsigned char)cu.bytes[10], (unsigned char)cu.bytes[11],
		 (unsigned char)cu.bytes[12], (unsigned char)cu.bytes[13], (unsigned char)cu.bytes[14],
		 (unsigned char)cu.bytes[15]);
	ck_assert_str_eq(uuid, want);
	OK(nvmlDeviceGetHandleByUUID(uuid, &e));
	ck_assert_ptr_eq(d, e);
	ck_assert_int_eq(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &e),
			 NVML_ERROR_NOT_FOUND);

	OK(nvmlDeviceGetPciInfo_v3(d, &pci));
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, cd));
	ck_assert_uint_eq(pci.bus, (unsigned)v);
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, cd));
	ck_assert_uint_eq(pci.device, (unsigned)v);
	CK(cuDeviceGetPCIBusId(cbus, sizeof(cbus), cd));
	/* CUDA writes a 4-digit domain, NVML an 8-digit one */
	ck_assert_msg(strcasecmp(pci.busId + 4, cbus) == 0, "NVML %s, CUDA %s", pci.busId, cbus);
	ck_assert_msg(strcasecmp(pci.busIdLegacy, cbus) == 0, "NVML %s, CUDA %s", pci.busIdLegacy, cbus);
	OK(nvmlDeviceGetHandleByPciBusId_v2(cbus, &e));
	ck_assert_ptr_eq(d, e);
	OK(nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &e));
	ck_assert_ptr_eq(d, e);

	OK(nvmlDeviceGetCudaComputeCapability(d, &major, &minor));
	CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cd));
	ck_assert_int_eq(major, v);
	OK(nvmlSystemGetCudaDriverVersion_v2(&v));
	CK(cuDriverGetVersion(&major));
	ck_assert_int_eq(v, major);
	OK(nvmlShutdown());
}
END_TEST

START_TEST(memory_without_quota_is_the_device)
{
	nvmlMemory_t m;
	nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
	CUdeviceptr p;
	size_t total;
	nvmlDevice_t d;

	set_mem_quota(0);
	wait_used(0);
	cuda_up();
	CK(cuDeviceTotalMem(&total, 0));
	d = dev0();
	OK(nvmlDeviceGetMemoryInfo(d, &m));
	ck_assert_uint_eq(m.total, total);
	ck_assert_uint_eq(m.used, 0);
	CK(cuMemAlloc(&p, 32 * MiB));
	OK(nvmlDeviceGetMemoryInfo(d, &m));
	ck_assert_uint_eq(m.total, total);
	ck_assert_uint_eq(m.used, 32 * MiB);
	ck_assert_uint_le(m.free, m.total - m.used);
	OK(nvmlDeviceGetMemoryInfo_v2(d, &m2));
	ck_assert_uint_eq(m2.total, total);
	ck_assert_uint_eq(m2.used, 32 * MiB);
	m2.version = 1;
	ck_assert_int_eq(nvmlDeviceGetMemoryInfo_v2(d, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	CK(cuMemFree(p));
	OK(nvmlShutdown());
}
END_TEST

/* With a quota, NVML, cuMemGetInfo and the admin socket tell the same story. */
START_TEST(memory_with_quota_shows_the_quota)
{
	nvmlMemory_t m;
	CUdeviceptr p;
	size_t f, t;
	nvmlDevice_t d;

	set_mem_quota(64 * MiB);
	wait_used(0);
	cuda_up();
	d = dev0();
	OK(nvmlDeviceGetMemoryInfo(d, &m));
	ck_assert_uint_eq(m.total, 64 * MiB);
	ck_assert_uint_eq(m.used, 0);
	ck_assert_uint_eq(m.free, 64 * MiB);
	CK(cuMemAlloc(&p, 24 * MiB));
	OK(nvmlDeviceGetMemoryInfo(d, &m));
	ck_assert_uint_eq(m.total, 64 * MiB);
	ck_assert_uint_eq(m.used, 24 * MiB);
	ck_assert_uint_eq(m.free, 40 * MiB);
	CK(cuMemGetInfo(&f, &t));
	ck_assert_uint_eq(t, m.total);
	ck_assert_uint_eq(f, m.free);
	ck_assert_uint_eq(server_mem_used(), m.used);
	CK(cuMemFree(p));
	OK(nvmlShutdown());
	set_mem_quota(0);
}
END_TEST

/* Where there are two devices (CI runs this over two stand-in devices): each
 * device shows the memory the VM holds on it, and the processes holding it;
 * a quota covers both together, so each one's free memory is what is left
 * of it. */
START_TEST(memory_and_processes_of_each_device)
{
	nvmlProcessInfo_t procs[8];
	nvmlMemory_t m0, m1;
	nvmlDevice_t d0, d1;
	CUdeviceptr p;
	CUcontext c1;
	unsigned n;
	int count = 0, on0 = 0, on1 = 0;

	set_mem_quota(64 * MiB);
	wait_used(0);
	cuda_up();
	CK(cuDeviceGetCount(&count));
	if (count < 2) {
		set_mem_quota(0);
		return;
	}
	CK(cuDevicePrimaryCtxRetain(&c1, 1));
	CK(cuCtxSetCurrent(c1));
	CK(cuMemAlloc(&p, 24 * MiB));
	d0 = dev0();
	OK(nvmlDeviceGetHandleByIndex_v2(1, &d1));
	OK(nvmlDeviceGetMemoryInfo(d0, &m0));
	OK(nvmlDeviceGetMemoryInfo(d1, &m1));
	ck_assert_uint_eq(m0.total, 64 * MiB);
	ck_assert_uint_eq(m0.used, 0);
	ck_assert_uint_eq(m0.free, 40 * MiB); /* the quota's rest */
	ck_assert_uint_eq(m1.used, 24 * MiB);
	ck_assert_uint_eq(m1.free, 40 * MiB);
	n = 8;
	OK(nvmlDeviceGetComputeRunningProcesses_v3(d0, &n, procs));
	for (unsigned i = 0; i < n; i++)
		on0 += procs[i].pid == (unsigned)getpid();
	n = 8;
	OK(nvmlDeviceGetComputeRunningProcesses_v3(d1, &n, procs));
	for (unsigned i = 0; i < n; i++)
		if (procs[i].pid == (unsigned)getpid()) {
			on1++;
			ck_assert_uint_eq(procs[i].usedGpuMemory, 24 * MiB);
		}
	ck_assert_int_eq(on0, 0);
	ck_assert_int_eq(on1, 1);
	CK(cuMemFree(p));
	OK(nvmlDeviceGetMemoryInfo(d1, &m1));
	ck_assert_uint_eq(m1.used, 0);
	OK(nvmlShutdown());
	CK(cuDevicePrimaryCtxRelease(1));
	set_mem_quota(0);
}
END_TEST

START_TEST(processes_list_this_one)
{
	nvmlProcessInfo_t procs[8];
	nvmlProcessInfo_v1_t old[8];
	nvmlProcessDetail_v1_t det[8];
	nvmlProcessDetailList_t list = {.version = nvmlProcessDetailList_v1, .mode = 0};
	unsigned n = 0, mine = 0;
	char name[256];
	CUdeviceptr p;
	nvmlDevice_t d;

	cuda_up();
	CK(cuMemAlloc(&p, 16 * MiB));
	d = dev0();
	/* asking the size: too small */
	ck_assert_int_eq(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
	ck_assert_uint_ge(n, 1);
	n = 8;
	OK(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, procs));
	for (unsigned i = 0; i < n; i++)
		if (procs[i].pid == (unsigned)getpid()) {
			mine++;
			ck_assert_uint_eq(procs[i].usedGpuMemory, 16 * MiB);
			ck_assert_uint_eq(procs[i].gpuInstanceId, 0xFFFFFFFFu);
		}
	ck_assert_uint_eq(mine, 1); /* once: its NVML session is no process of the GPU */
	n = 8;
	OK(nvmlDeviceGetComputeRunningProcesses(d, &n, old));
	ck_assert_uint_ge(n, 1);
	list.numProcArrayEntries = 8;
	list.procArray = det;
	OK(nvmlDeviceGetRunningProcessDetailList(d, &list));
	ck_assert_uint_ge(list.numProcArrayEntries, 1);
	n = 8;
	OK(nvmlDeviceGetGraphicsRunningProcesses_v3(d, &n, procs));
	ck_assert_uint_eq(n, 0);
	OK(nvmlSystemGetProcessName((unsigned)getpid(), name, sizeof(name)));
	ck_assert_msg(strstr(name, "test_nvml") != NULL, "process name %s", name);
	CK(cuMemFree(p));
	OK(nvmlShutdown());
}
END_TEST

/* nvmlInternalGetExportTable: the table nvidia-smi asks for first (internal.c). */
typedef nvmlReturn_t (*slot_fn)(void *, void *, void *, void *);

static slot_fn table_slot(const void *table, unsigned slot)
{
	slot_fn f;

	memcpy(&f, (const uint8_t *)table + 8 * (size_t)slot, sizeof(f));
	return f;
}

START_TEST(nvidia_smi_table)
{
	static const unsigned char id[16] = {0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f, 0x6c, 0x4e,
					     0xa3, 0x27, 0xee, 0x69, 0x6e, 0x12, 0xf7, 0xc4};
	unsigned char other[16] = {0}, *ent;
	const void *tab = NULL;
	uint64_t size;
	nvmlDevice_t d, h = NULL;
	unsigned n, mine = 0, pid;
	uint64_t used;
	CUdeviceptr p;
	int sentinel = 7;

	cuda_up();
	CK(cuMemAlloc(&p, 16 * MiB));
	d = dev0();
	ck_assert_int_eq(nvmlInternalGetExportTable(NULL, id), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlInternalGetExportTable(&tab, NULL), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlInternalGetExportTable(&tab, other), NVML_ERROR_NOT_SUPPORTED);
	OK(nvmlInternalGetExportTable(&tab, id));
	memcpy(&size, tab, sizeof(size));
	ck_assert_uint_ge(size, 0x288 + 8); /* nvidia-smi reads slots past 81 */
	/* slot 81: a handle by index, our own */
	OK(table_slot(tab, 81)((void *)(uintptr_t)0, &h, (void *)(uintptr_t)0x22, NULL));
	ck_assert_ptr_eq(h, d);
	ck_assert_int_eq(table_slot(tab, 81)((void *)(uintptr_t)9, &h, (void *)(uintptr_t)0x22, NULL),
			 NVML_ERROR_INVALID_ARGUMENT);
	/* slot 213, the compute processes: this one, with its memory and its
	 * name; 214 and 215, the graphics and MPS processes: none (nvidia-smi
	 * types a process by the lists it is in: "C", not "M+C+G") */
	ent = calloc(4, 4128);
	ck_assert_ptr_nonnull(ent);
	for (unsigned s = 214; s <= 215; s++) {
		n = 4;
		OK(table_slot(tab, s)(d, &n, ent, NULL));
		ck_assert_uint_eq(n, 0);
	}
	for (unsigned s = 213; s <= 213; s++) {
		n = 4;
		mine = 0;
		OK(table_slot(tab, s)(d, &n, ent, NULL));
		ck_assert_uint_ge(n, 1);
		ck_assert_uint_le(n, 4);
		for (unsigned i = 0; i < n; i++) {
			memcpy(&pid, ent + i * 4128, sizeof(pid));
			memcpy(&used, ent + i * 4128 + 8, sizeof(used));
			if (pid != (unsigned)getpid())
				continue;
			mine++;
			ck_assert_uint_eq(used, 16 * MiB);
			ck_assert_msg(strstr((char *)ent + i * 4128 + 32, "test_nvml") != NULL, "name %s",
				      (char *)ent + i * 4128 + 32);
		}
		ck_assert_uint_eq(mine, 1);
	}
	/* the host's PCIe generation: N/A, nothing written; a device slot
	 * vcuda does not know: a list of nothing (count 0); a call without a
	 * device of ours: success, nothing written */
	ck_assert_int_eq(table_slot(tab, 230)(d, &sentinel, NULL, NULL), NVML_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(sentinel, 7);
	OK(table_slot(tab, 100)(d, &sentinel, NULL, NULL));
	ck_assert_int_eq(sentinel, 0);
	sentinel = 7;
	OK(table_slot(tab, 7)((void *)(uintptr_t)0x1234, &sentinel, NULL, NULL));
	ck_assert_int_eq(sentinel, 7);
	free(ent);
	CK(cuMemFree(p));
	OK(nvmlShutdown());
}
END_TEST

/* nvidia-smi's default view makes an event set first: a set can be made,
 * waited on (nothing comes), and freed; a VM's device registers no events. */
START_TEST(event_sets_mig_and_mode)
{
	nvmlDevice_t d = dev0();
	nvmlEventSet_t set, forged = (nvmlEventSet_t)(uintptr_t)0x1000;
	nvmlEventData_t ev;
	nvmlGpuVirtualizationMode_t mode = 7;
	unsigned long long types = 1;
	unsigned n = 7;
	nvmlTemperature_t t = {.version = 1, .sensorType = 0};

	ck_assert_int_eq(nvmlEventSetCreate(NULL), NVML_ERROR_INVALID_ARGUMENT);
	OK(nvmlEventSetCreate(&set));
	ck_assert_int_eq(nvmlEventSetWait_v2(set, &ev, 20), NVML_ERROR_TIMEOUT);
	ck_assert_int_eq(nvmlEventSetWait_v2(forged, &ev, 0), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceRegisterEvents(d, 1, set), NVML_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(nvmlDeviceRegisterEvents(d, 1, forged), NVML_ERROR_INVALID_ARGUMENT);
	OK(nvmlDeviceGetSupportedEventTypes(d, &types));
	ck_assert_uint_eq(types, 0);
	OK(nvmlEventSetFree(set));
	ck_assert_int_eq(nvmlEventSetFree(set), NVML_ERROR_INVALID_ARGUMENT);
	OK(nvmlDeviceGetMaxMigDeviceCount(d, &n));
	ck_assert_uint_eq(n, 0);
	n = 7;
	OK(nvmlDeviceIsMigDeviceHandle(d, &n));
	ck_assert_uint_eq(n, 0);
	OK(nvmlDeviceGetVirtualizationMode(d, &mode));
	ck_assert_uint_eq(mode, 0);
	ck_assert_int_eq(nvmlDeviceGetMaxMigDeviceCount((nvmlDevice_t)(uintptr_t)0x1000, &n),
			 NVML_ERROR_INVALID_ARGUMENT);
	/* a struct of an unknown version is refused before anything is asked */
	ck_assert_int_eq(nvmlDeviceGetTemperatureV(d, &t), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	OK(nvmlShutdown());
	ck_assert_int_eq(nvmlEventSetCreate(&set), NVML_ERROR_UNINITIALIZED);
}
END_TEST

/* NCCL asks every pair of devices, each with itself too, and gives up its
 * set-up on any answer but success. */
START_TEST(p2p_status_is_the_hosts)
{
	char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	nvmlGpuP2PStatus_t st = (nvmlGpuP2PStatus_t)77;
	nvmlDevice_t d = dev0();

	ck_assert_int_eq(nvmlDeviceGetP2PStatus(d, d, NVML_P2P_CAPS_INDEX_READ, NULL), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceGetP2PStatus(NULL, d, NVML_P2P_CAPS_INDEX_READ, &st), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceGetP2PStatus(d, (nvmlDevice_t)&st, NVML_P2P_CAPS_INDEX_READ, &st),
			 NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(st, 77);
	if (nvmlSystemGetDriverVersion(drv, sizeof(drv)) == NVML_SUCCESS) {
		/* A GPU host: its NVML's answer, a status NVML defines. */
		OK(nvmlDeviceGetP2PStatus(d, d, NVML_P2P_CAPS_INDEX_READ, &st));
		ck_assert_int_le(st, NVML_P2P_STATUS_UNKNOWN);
		st = (nvmlGpuP2PStatus_t)77;
		OK(nvmlDeviceGetP2PStatus(d, d, NVML_P2P_CAPS_INDEX_WRITE, &st));
		ck_assert_int_le(st, NVML_P2P_STATUS_UNKNOWN);
	} else {
		ck_assert_int_eq(nvmlDeviceGetP2PStatus(d, d, NVML_P2P_CAPS_INDEX_READ, &st), NVML_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(st, 77);
	}
	OK(nvmlShutdown());
}
END_TEST

/* Field values are the host NVML's, field by field; the call itself
 * succeeds for a good device and array. Without a host NVML (the CI
 * stand-in) every field says NOT_SUPPORTED. */
START_TEST(field_values_are_the_hosts)
{
	char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	nvmlFieldValue_t v[3];
	nvmlDevice_t d = dev0();
	int host = nvmlSystemGetDriverVersion(drv, sizeof(drv)) == NVML_SUCCESS;

	memset(v, 0, sizeof(v));
	v[0].fieldId = NVML_FI_DEV_NVLINK_LINK_COUNT;
	v[1].fieldId = NVML_FI_DEV_NVLINK_GET_STATE;
	v[1].scopeId = 0;
	v[2].fieldId = 60000; /* no such field */
	for (int i = 0; i < 3; i++)
		v[i].nvmlReturn = (nvmlReturn_t)77;
	ck_assert_int_eq(nvmlDeviceGetFieldValues(d, 3, NULL), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceGetFieldValues(NULL, 3, v), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceGetFieldValues((nvmlDevice_t)v, 3, v), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(v[0].nvmlReturn, 77);
	OK(nvmlDeviceGetFieldValues(d, 0, v));
	ck_assert_int_eq(v[0].nvmlReturn, 77);
	OK(nvmlDeviceGetFieldValues(d, 3, v));
	for (int i = 0; i < 3; i++) {
		ck_assert_int_ne(v[i].nvmlReturn, 77);
		if (!host)
			ck_assert_int_eq(v[i].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
		else if (v[i].nvmlReturn == NVML_SUCCESS)
			ck_assert_int_gt(v[i].timestamp, 0);
	}
	ck_assert_int_ne(v[2].nvmlReturn, NVML_SUCCESS);
	/* the scope goes with its field: another link, its own answer */
	v[1].scopeId = 1;
	OK(nvmlDeviceGetFieldValues(d, 1, &v[1]));
	OK(nvmlShutdown());
	ck_assert_int_eq(nvmlDeviceGetFieldValues(d, 1, v), NVML_ERROR_UNINITIALIZED);
}
END_TEST

/* The unversioned PCI query writes the first layout (what a program built
 * against an old nvml.h passes room for): its bus id and four words, 32
 * bytes, as NVML does; the _v3 one its strings up to their NULs. */
START_TEST(unversioned_pci_info_is_the_first_layout)
{
	unsigned char b[80];
	nvmlPciInfo_t v3;
	nvmlDevice_t d = dev0();
	int end;

	memset(b, 0xee, sizeof(b));
	OK(nvmlDeviceGetPciInfo_v3(d, (nvmlPciInfo_t *)b));
	for (end = sizeof(b); end > 0 && b[end - 1] == 0xee; end--)
		;
	ck_assert_int_eq(end, 36 + (int)strlen((const char *)b + 36) + 1);
	memcpy(&v3, b, sizeof(v3));
	memset(b, 0xee, sizeof(b));
	OK(nvmlDeviceGetPciInfo(d, (nvmlPciInfo_v1_t *)b));
	for (end = sizeof(b); end > 0 && b[end - 1] == 0xee; end--)
		;
	ck_assert_int_eq(end, 32);
	ck_assert_str_eq((const char *)b, v3.busIdLegacy);
	ck_assert_uint_eq(((nvmlPciInfo_v1_t *)b)->bus, v3.bus);
	ck_assert_int_eq(nvmlDeviceGetPciInfo(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
	OK(nvmlShutdown());
}
END_TEST

/* NVLink links are the host NVML's, link by link; without a host NVML
 * each answers NOT_SUPPORTED and writes nothing. */
START_TEST(nvlink_links_are_the_hosts)
{
	char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	unsigned st = 77, ver = 77, cap = 77, type = 77;
	nvmlPciInfo_t pci;
	nvmlDevice_t d = dev0();
	int host = nvmlSystemGetDriverVersion(drv, sizeof(drv)) == NVML_SUCCESS;
	nvmlReturn_t rs, rv, rc, rt, rp;

	ck_assert_int_ne(nvmlDeviceGetNvLinkState(d, 0, NULL), NVML_SUCCESS);
	ck_assert_int_eq(nvmlDeviceGetNvLinkState(NULL, 0, &st), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceGetNvLinkRemotePciInfo_v2((nvmlDevice_t)&st, 0, &pci), NVML_ERROR_INVALID_ARGUMENT);
	memset(&pci, 0x5a, sizeof(pci));
	rs = nvmlDeviceGetNvLinkState(d, 0, &st);
	rv = nvmlDeviceGetNvLinkVersion(d, 0, &ver);
	rc = nvmlDeviceGetNvLinkCapability(d, 0, NVML_NVLINK_CAP_P2P_SUPPORTED, &cap);
	rt = nvmlDeviceGetNvLinkRemoteDeviceType(d, 0, &type);
	rp = nvmlDeviceGetNvLinkRemotePciInfo_v2(d, 0, &pci);
	if (!host) {
		ck_assert_int_eq(rs, NVML_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(rv, NVML_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(rc, NVML_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(rt, NVML_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(rp, NVML_ERROR_NOT_SUPPORTED);
		ck_assert_uint_eq(st + ver + cap + type, 4 * 77);
		ck_assert_int_eq((unsigned char)pci.busId[0], 0x5a);
	} else {
		/* A link that is up says so the same way each time it is asked. */
		if (rs == NVML_SUCCESS)
			ck_assert_uint_le(st, 1);
		if (rp == NVML_SUCCESS) {
			nvmlPciInfo_v1_t v1;

			ck_assert_uint_lt(strnlen(pci.busId, sizeof(pci.busId)), sizeof(pci.busId));
			ck_assert_int_eq(nvmlDeviceGetNvLinkRemotePciInfo(d, 0, &v1), NVML_SUCCESS);
			ck_assert_uint_eq(v1.domain, pci.domain);
			ck_assert_str_eq(v1.busId, pci.busIdLegacy);
		}
	}
	/* the link number goes to the host as it is: one past NVML's 18 */
	ck_assert_int_ne(nvmlDeviceGetNvLinkState(d, 18, &st), NVML_SUCCESS);
	OK(nvmlShutdown());
}
END_TEST

/* Confidential computing is off for a guest, whatever the host: a
 * remoted GPU's work is in the clear in the host's worker. */
START_TEST(confidential_computing_is_off)
{
	nvmlSystemConfComputeSettings_t cs;
	nvmlConfComputeSystemState_t st;
	nvmlConfComputeSystemCaps_t caps;
	nvmlMemory_t mem;
	nvmlDevice_t d;

	ck_assert_int_eq(nvmlSystemGetConfComputeState(&st), NVML_ERROR_UNINITIALIZED);
	d = dev0();
	memset(&st, 0xab, sizeof(st));
	OK(nvmlSystemGetConfComputeState(&st));
	ck_assert_uint_eq(st.ccFeature, NVML_CC_SYSTEM_FEATURE_DISABLED);
	ck_assert_uint_eq(st.environment, NVML_CC_SYSTEM_ENVIRONMENT_UNAVAILABLE);
	ck_assert_uint_eq(st.devToolsMode, NVML_CC_SYSTEM_DEVTOOLS_MODE_OFF);
	memset(&cs, 0xab, sizeof(cs));
	cs.version = nvmlSystemConfComputeSettings_v1;
	OK(nvmlSystemGetConfComputeSettings(&cs));
	ck_assert_uint_eq(cs.version, nvmlSystemConfComputeSettings_v1);
	ck_assert_uint_eq(cs.ccFeature, NVML_CC_SYSTEM_FEATURE_DISABLED);
	ck_assert_uint_eq(cs.multiGpuMode, NVML_CC_SYSTEM_MULTIGPU_NONE);
	cs.version = 2;
	ck_assert_int_eq(nvmlSystemGetConfComputeSettings(&cs), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	ck_assert_int_eq(nvmlSystemGetConfComputeSettings(NULL), NVML_ERROR_INVALID_ARGUMENT);
	OK(nvmlSystemGetConfComputeCapabilities(&caps));
	ck_assert_uint_eq(caps.gpusCaps, NVML_CC_SYSTEM_GPUS_CC_NOT_CAPABLE);
	memset(&mem, 0xab, sizeof(mem));
	OK(nvmlDeviceGetConfComputeProtectedMemoryUsage(d, &mem));
	ck_assert_uint_eq(mem.total + mem.used + mem.free, 0);
	ck_assert_int_eq(nvmlDeviceGetConfComputeProtectedMemoryUsage(NULL, &mem), NVML_ERROR_INVALID_ARGUMENT);
	OK(nvmlShutdown());
}
END_TEST

/* The monitors' values: the host's answers when it has an NVML, each
 * NOT_SUPPORTED (nothing written) without one; bad arguments refused. */
START_TEST(monitor_values_are_the_hosts)
{
	char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE], img[64];
	unsigned a = 77, b = 77, c = 77, e = 77;
	nvmlDevice_t d = dev0();
	int host = nvmlSystemGetDriverVersion(drv, sizeof(drv)) == NVML_SUCCESS;
	nvmlReturn_t r[5];

	strcpy(img, "untouched");
	r[0] = nvmlDeviceGetPcieThroughput(d, 0, &a);
	r[1] = nvmlDeviceGetMinMaxFanSpeed(d, &b, &c);
	r[2] = nvmlDeviceGetClock(d, 0, 0, &e);
	r[3] = nvmlDeviceGetRemappedRows(d, &a, &b, &c, &e);
	r[4] = nvmlDeviceGetInforomImageVersion(d, img, sizeof(img));
	for (int i = 0; i < 5; i++)
		if (!host)
			ck_assert_int_eq(r[i], NVML_ERROR_NOT_SUPPORTED);
	if (!host) {
		ck_assert_uint_eq(a + b + c + e, 4 * 77);
		ck_assert_str_eq(img, "untouched");
	} else if (r[3] == NVML_SUCCESS) {
		ck_assert_uint_le(c, 1); /* pending: a boolean */
	}
	ck_assert_int_eq(nvmlDeviceGetClock(NULL, 0, 0, &e), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_ne(nvmlDeviceGetRemappedRows(d, &a, &b, NULL, &e), NVML_SUCCESS);
	OK(nvmlShutdown());
}
END_TEST

/* A VM's GPU is in no NVLink fabric it can use: success, state
 * NOT_SUPPORTED, nothing of the host's; the caller's version is kept and
 * only its bytes are written. */
START_TEST(no_nvlink_fabric)
{
	nvmlGpuFabricInfo_t f1;
	nvmlGpuFabricInfoV_t f;
	nvmlDevice_t d = dev0();

	memset(&f, 0xab, sizeof(f));
	f.version = nvmlGpuFabricInfo_v3;
	OK(nvmlDeviceGetGpuFabricInfoV(d, &f));
	ck_assert_uint_eq(f.version, nvmlGpuFabricInfo_v3);
	ck_assert_int_eq(f.state, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED);
	ck_assert_int_eq(f.status, NVML_SUCCESS);
	ck_assert_uint_eq(f.cliqueId, 0);
	ck_assert_uint_eq(f.clusterUuid[0] | f.clusterUuid[15], 0);
	ck_assert_uint_eq(f.healthMask, 0);
	ck_assert_uint_eq(f.healthSummary, 0);
	memset(&f, 0xab, sizeof(f));
	f.version = nvmlGpuFabricInfo_v2;
	OK(nvmlDeviceGetGpuFabricInfoV(d, &f));
	ck_assert_int_eq(f.state, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED);
	ck_assert_uint_eq(f.healthMask, 0);
	ck_assert_uint_eq(f.healthSummary, 0xab); /* past a v2 struct: untouched */
	f.version = 1;
	ck_assert_int_eq(nvmlDeviceGetGpuFabricInfoV(d, &f), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	ck_assert_int_eq(nvmlDeviceGetGpuFabricInfoV(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceGetGpuFabricInfoV(NULL, &f), NVML_ERROR_INVALID_ARGUMENT);
	memset(&f1, 0xab, sizeof(f1));
	OK(nvmlDeviceGetGpuFabricInfo(d, &f1));
	ck_assert_int_eq(f1.state, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED);
	ck_assert_uint_eq(f1.cliqueId, 0);
	ck_assert_int_eq(nvmlDeviceGetGpuFabricInfo(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
	OK(nvmlShutdown());
}
END_TEST

/* Entry points of nvidia-smi -q that vc_nvml.h does not declare. */
nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t, unsigned long long *);
nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t, unsigned int,
					     unsigned long long *);
nvmlReturn_t nvmlDeviceGetGspFirmwareVersion(nvmlDevice_t, char *);
nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t, unsigned int, char *, unsigned int);
nvmlReturn_t nvmlDeviceGetModuleId(nvmlDevice_t, unsigned int *);
nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t, void *);
nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t, void *);

/* nvidia-smi -q's values: the host's answers, NOT_SUPPORTED (nothing
 * written) without a host NVML; a struct is written to its size and no
 * further, and a versioned one's version word is checked before anything
 * is asked. */
START_TEST(query_values_are_the_hosts)
{
	char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE], gsp[64], info[32];
	unsigned char buf[256];
	unsigned long long ull = 77;
	unsigned u = 77;
	uint32_t ver;
	nvmlDevice_t d = dev0();
	int host = nvmlSystemGetDriverVersion(drv, sizeof(drv)) == NVML_SUCCESS;
	nvmlReturn_t r[6];

	strcpy(gsp, "untouched");
	strcpy(info, "untouched");
	memset(buf, 0xab, sizeof(buf));
	r[0] = nvmlDeviceGetSupportedClocksEventReasons(d, &ull);
	r[1] = nvmlDeviceGetMemoryErrorCounter(d, 0, 0, 0, &ull);
	r[2] = nvmlDeviceGetGspFirmwareVersion(d, gsp);
	r[3] = nvmlDeviceGetInforomVersion(d, 0, info, sizeof(info));
	r[4] = nvmlDeviceGetModuleId(d, &u);
	r[5] = nvmlDeviceGetRowRemapperHistogram(d, buf);
	if (!host) {
		for (int i = 0; i < 6; i++)
			ck_assert_int_eq(r[i], NVML_ERROR_NOT_SUPPORTED);
		ck_assert_uint_eq(ull + u, 2 * 77);
		ck_assert_str_eq(gsp, "untouched");
		ck_assert_str_eq(info, "untouched");
		ck_assert_uint_eq(buf[0], 0xab);
	} else {
		if (r[2] == NVML_SUCCESS)
			ck_assert(strlen(gsp) < sizeof(gsp));
		ck_assert_uint_eq(buf[20], 0xab); /* five unsigned ints, and no more */
	}
	ck_assert_int_eq(nvmlDeviceGetRowRemapperHistogram(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceGetRowRemapperHistogram(NULL, buf), NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nvmlDeviceGetMemoryErrorCounter(d, 0, 0x10000, 0, &ull), NVML_ERROR_INVALID_ARGUMENT);
	/* a versioned struct: no version, or one naming more than a reply holds */
	memset(buf, 0xab, sizeof(buf));
	ver = 0;
	memcpy(buf, &ver, sizeof(ver));
	ck_assert_int_eq(nvmlDeviceGetPciInfoExt(d, buf), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	ver = 1u << 24 | 4096;
	memcpy(buf, &ver, sizeof(ver));
	ck_assert_int_eq(nvmlDeviceGetPciInfoExt(d, buf), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	ck_assert_uint_eq(buf[4], 0xab);
	/* nvmlPciInfoExt_v1: 64 bytes, its bus id at 32 */
	ver = 1u << 24 | 64;
	memcpy(buf, &ver, sizeof(ver));
	r[0] = nvmlDeviceGetPciInfoExt(d, buf);
	if (!host) {
		ck_assert_int_eq(r[0], NVML_ERROR_NOT_SUPPORTED);
		ck_assert_uint_eq(buf[4], 0xab);
	} else if (r[0] == NVML_SUCCESS) {
		memcpy(&ver, buf, sizeof(ver));
		ck_assert_uint_eq(ver, 1u << 24 | 64);
		ck_assert_uint_eq(buf[64], 0xab);
		ck_assert_ptr_nonnull(memchr(buf + 32, 0, 32));
	}
	OK(nvmlShutdown());
}
END_TEST

START_TEST(unserved_calls_are_not_supported)
{
	typedef nvmlReturn_t (*link_state_fn)(nvmlDevice_t, unsigned, unsigned *);
	typedef nvmlReturn_t (*set_fn)(nvmlDevice_t, unsigned);
	static const char *const needed[] = {"nvmlInit_v2", "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetCount_v2",
					     "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetComputeRunningProcesses_v3",
					     "nvmlDeviceGetNvLinkErrorCounter", "nvmlDeviceSetPersistenceMode",
					     "nvmlEventSetCreate", "nvmlInternalGetExportTable"};
	char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	nvmlUtilization_t u;
	link_state_fn ls;
	set_fn sp;
	unsigned st;
	nvmlDevice_t d = dev0();
	void *p;

	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		ck_assert_msg(dlsym(RTLD_DEFAULT, needed[i]) != NULL, "%s not exported", needed[i]);
	p = dlsym(RTLD_DEFAULT, "nvmlDeviceGetNvLinkErrorCounter");
	memcpy(&ls, &p, sizeof(p));
	ck_assert_int_eq(ls(d, 0, &st), NVML_ERROR_NOT_SUPPORTED);
	p = dlsym(RTLD_DEFAULT, "nvmlDeviceSetPersistenceMode");
	memcpy(&sp, &p, sizeof(p));
	ck_assert_int_eq(sp(d, 1), NVML_ERROR_NOT_SUPPORTED);
	/* Values only the host's NVML has: there when the server has one (a
	 * GPU host), NOT_SUPPORTED when not (the CI stand-in), never wrong. */
	if (nvmlSystemGetDriverVersion(drv, sizeof(drv)) == NVML_SUCCESS) {
		OK(nvmlDeviceGetUtilizationRates(d, &u));
		ck_assert_uint_le(u.gpu, 100);
	} else {
		ck_assert_int_eq(nvmlDeviceGetUtilizationRates(d, &u), NVML_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(nvmlDeviceGetTemperature(d, 0, &st), NVML_ERROR_NOT_SUPPORTED);
	}
	ck_assert_str_eq(nvmlErrorString(NVML_ERROR_NOT_SUPPORTED), "Not Supported");
	ck_assert_str_eq(nvmlErrorString((nvmlReturn_t)12345), "Unknown Error");
	OK(nvmlShutdown());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nvml");
	TCase *t = tcase_create("guest");
	SRunner *sr;
	int failed;

	/* "guest" needs only the server (it also runs inside the test VM:
	 * tests/vm/run.sh); "quota" sets limits through the admin socket. */
	tcase_set_timeout(t, 30);
	tcase_add_test(t, use_before_init_is_uninitialized);
	tcase_add_test(t, init_and_shutdown_nest);
	tcase_add_test(t, count_and_handles);
	tcase_add_test(t, name_uuid_pci_agree_with_cuda);
	tcase_add_test(t, processes_list_this_one);
	tcase_add_test(t, p2p_status_is_the_hosts);
	tcase_add_test(t, nvidia_smi_table);
	tcase_add_test(t, event_sets_mig_and_mode);
	tcase_add_test(t, unserved_calls_are_not_supported);
	tcase_add_test(t, field_values_are_the_hosts);
	tcase_add_test(t, no_nvlink_fabric);
	tcase_add_test(t, nvlink_links_are_the_hosts);
	tcase_add_test(t, unversioned_pci_info_is_the_first_layout);
	tcase_add_test(t, confidential_computing_is_off);
	tcase_add_test(t, monitor_values_are_the_hosts);
	tcase_add_test(t, query_values_are_the_hosts);
	suite_add_tcase(s, t);
	t = tcase_create("quota");
	tcase_set_timeout(t, 30);
	tcase_add_test(t, memory_without_quota_is_the_device);
	tcase_add_test(t, memory_with_quota_shows_the_quota);
	tcase_add_test(t, memory_and_processes_of_each_device);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
