/* SPDX-License-Identifier: MIT */
/*
 * nvml.c - vcuda's guest NVML: init and shutdown, the session, error strings
 * and the system queries.
 *
 * nvmlInit opens a session of its own with the VM's server over the same
 * transport as the guest's libcuda.so.1 (guest-lib/vc_client.c: the
 * host-local socket, or /dev/vcudaN in a VM), fetches the device facts once
 * (vcDriverInfo, vcDeviceInfo: name, UUID, PCI location, memory,
 * attributes) and the host driver's version strings (vcNvmlSystem), and
 * keeps them until the last nvmlShutdown. What changes (memory in use, the
 * processes, utilisation) is asked each time. Calls before nvmlInit answer
 * NVML_ERROR_UNINITIALIZED. A child after fork() holds no session: it
 * starts uninitialised.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml_guest.h"
#include "vc_client.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned g_refs;               /* nvmlInit calls not yet shut down */
static struct vc_client *g_client;    /* under g_mu; set while g_refs > 0 */
static struct vc_nvml_facts *g_facts; /* likewise */
static struct nvmlDevice_st g_dev[VC_NVML_MAX_DEVICES];
static pthread_once_t g_atfork = PTHREAD_ONCE_INIT;

int vcNvmlGuestLibrary(void)
{
	return 1;
}

/* In a child after fork(): the parent's session is not ours; forget it
 * (its descriptors and mapping are closed with the child). */
static void in_child(void)
{
	g_refs = 0;
	g_client = NULL;
	g_facts = NULL;
	pthread_mutex_init(&g_mu, NULL);
}

static void install_atfork(void)
{
	pthread_atfork(NULL, NULL, in_child);
}

static nvmlReturn_t from_rc(int rc)
{
	if (rc < 0)
		return NVML_ERROR_GPU_IS_LOST;
	if (rc == 0)
		return NVML_SUCCESS;
	return rc == 101 /* CUDA_ERROR_INVALID_DEVICE */ ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t vc_nvml_call(uint32_t op, const void *req, size_t reqlen, void *rep, size_t replen, void *data,
			  size_t dcap, size_t *dlen)
{
	uint8_t small[VC_CU_REP_MAX], *buf = small;
	size_t cap = sizeof(small), got = 0;
	struct vc_client *c;
	int rc;

	pthread_mutex_lock(&g_mu);
	c = g_refs ? g_client : NULL;
	pthread_mutex_unlock(&g_mu);
	if (!c)
		return NVML_ERROR_UNINITIALIZED;
	if (data) {
		cap = VC_CU_REP_MAX + dcap;
		buf = malloc(cap);
		if (!buf)
			return NVML_ERROR_MEMORY;
	}
	/* The session stays open while a call is in flight: nvmlShutdown is
	 * not to race the process's own calls (NVML's rule as well). */
	rc = vc_client_call(c, op, req, reqlen, NULL, 0, buf, cap, &got);
	if (rc == 0) {
		memset(rep, 0, replen);
		memcpy(rep, buf, got < replen ? got : replen);
		if (data) {
			size_t n = got > VC_CU_REP_MAX ? got - VC_CU_REP_MAX : 0;

			memcpy(data, buf + VC_CU_REP_MAX, n);
			*dlen = n;
		}
	}
	if (buf != small)
		free(buf);
	return from_rc(rc);
}

/* Open the session and fetch the facts; under g_mu. */
static nvmlReturn_t open_session(void)
{
	struct vc_cu_prefix none = {0};
	struct vc_cu_rep_vcDriverInfo di;
	struct vc_nv_rep_system sys;
	struct vc_nvml_facts *f;
	char err[256];
	int rc;

	f = calloc(1, sizeof(*f));
	if (!f)
		return NVML_ERROR_MEMORY;
	rc = vc_client_open(NULL, &g_client, err, sizeof(err));
	if (rc) {
		/* As the guest libcuda does: the reason on stderr; NVML's own code
		 * for no driver. */
		fprintf(stderr, "%s\n", err);
		free(f);
		g_client = NULL;
		return rc == -EBUSY ? NVML_ERROR_IN_USE : NVML_ERROR_DRIVER_NOT_LOADED;
	}
	g_refs = 1; /* vc_nvml_call works from here on */
	pthread_mutex_unlock(&g_mu);
	rc = vc_nvml_call(VC_CU_vcNvmlSystem, &none, sizeof(none), &sys, sizeof(sys), NULL, 0, NULL);
	if (!rc)
		rc = vc_nvml_call(VC_CU_vcDriverInfo, &none, sizeof(none), &di, sizeof(di), NULL, 0, NULL);
	if (!rc) {
		f->device_count = di.device_count < 0 ? 0
				  : di.device_count > VC_NVML_MAX_DEVICES ? VC_NVML_MAX_DEVICES : di.device_count;
		f->cuda_version = sys.cuda_version;
		f->host_nvml = sys.host_nvml != 0;
		sys.driver_version[sizeof(sys.driver_version) - 1] = 0;
		sys.nvml_version[sizeof(sys.nvml_version) - 1] = 0;
		memcpy(f->driver_version, sys.driver_version, sizeof(f->driver_version));
		memcpy(f->nvml_version, sys.nvml_version, sizeof(f->nvml_version));
	}
	for (int d = 0; !rc && d < f->device_count; d++) {
		struct vc_cu_req_vcDeviceInfo dq = {.dev = d};
		size_t n = 0;

		rc = vc_nvml_call(VC_CU_vcDeviceInfo, &dq, sizeof(dq), &none, 0, &f->dev[d], sizeof(f->dev[d]), &n);
		if (!rc && n < sizeof(f->dev[d]))
			rc = NVML_ERROR_UNKNOWN;
		f->dev[d].name[sizeof(f->dev[d].name) - 1] = 0;
		g_dev[d].index = (unsigned)d;
	}
	pthread_mutex_lock(&g_mu);
	if (rc) {
		g_refs = 0;
		vc_client_close(g_client);
		g_client = NULL;
		free(f);
		return (nvmlReturn_t)rc;
	}
	g_facts = f;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	nvmlReturn_t rc = NVML_SUCCESS;

	(void)flags; /* NO_GPUS, NO_ATTACH: a session attaches nothing anyway */
	pthread_once(&g_atfork, install_atfork);
	pthread_mutex_lock(&g_mu);
	if (g_refs)
		g_refs++;
	else
		rc = open_session();
	pthread_mutex_unlock(&g_mu);
	return rc;
}

nvmlReturn_t nvmlInit_v2(void)
{
	return nvmlInitWithFlags(0);
}

nvmlReturn_t nvmlInit(void)
{
	return nvmlInitWithFlags(0);
}

nvmlReturn_t nvmlShutdown(void)
{
	struct vc_client *c = NULL;
	struct vc_nvml_facts *f = NULL;

	pthread_mutex_lock(&g_mu);
	if (!g_refs) {
		pthread_mutex_unlock(&g_mu);
		return NVML_ERROR_UNINITIALIZED;
	}
	if (--g_refs == 0) {
		c = g_client;
		f = g_facts;
		g_client = NULL;
		g_facts = NULL;
	}
	pthread_mutex_unlock(&g_mu);
	vc_client_close(c);
	free(f);
	return NVML_SUCCESS;
}

const struct vc_nvml_facts *vc_nvml_facts(void)
{
	const struct vc_nvml_facts *f;

	pthread_mutex_lock(&g_mu);
	f = g_refs ? g_facts : NULL;
	pthread_mutex_unlock(&g_mu);
	return f;
}

nvmlReturn_t vc_nvml_device(nvmlDevice_t d, unsigned int *index)
{
	const struct vc_nvml_facts *f = vc_nvml_facts();

	if (!f)
		return NVML_ERROR_UNINITIALIZED;
	/* Only our own handles: compare addresses, never read the caller's. */
	for (int i = 0; i < f->device_count; i++)
		if (d == &g_dev[i]) {
			*index = (unsigned)i;
			return NVML_SUCCESS;
		}
	return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	const struct vc_nvml_facts *f = vc_nvml_facts();

	if (!f)
		return NVML_ERROR_UNINITIALIZED;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = (unsigned)f->device_count;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
	return nvmlDeviceGetCount_v2(deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	const struct vc_nvml_facts *f = vc_nvml_facts();

	if (!f)
		return NVML_ERROR_UNINITIALIZED;
	if (!device || index >= (unsigned)f->device_count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &g_dev[index];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t vc_nvml_copy_str(char *buf, unsigned int len, const char *s)
{
	size_t n = strlen(s);

	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (n + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, n + 1);
	return NVML_SUCCESS;
}

/* ---- errors and the system ------------------------------------------------- */

const char *nvmlErrorString(nvmlReturn_t result)
{
	static const char *const s[] = {
		[NVML_SUCCESS] = "Success",
		[NVML_ERROR_UNINITIALIZED] = "Uninitialized",
		[NVML_ERROR_INVALID_ARGUMENT] = "Invalid Argument",
		[NVML_ERROR_NOT_SUPPORTED] = "Not Supported",
		[NVML_ERROR_NO_PERMISSION] = "Insufficient Permissions",
		[NVML_ERROR_ALREADY_INITIALIZED] = "Already Initialized",
		[NVML_ERROR_NOT_FOUND] = "Not Found",
		[NVML_ERROR_INSUFFICIENT_SIZE] = "Insufficient Size",
		[NVML_ERROR_INSUFFICIENT_POWER] = "Insufficient External Power",
		[NVML_ERROR_DRIVER_NOT_LOADED] = "Driver Not Loaded (vcuda-server not reachable)",
		[NVML_ERROR_TIMEOUT] = "Timeout",
		[NVML_ERROR_IRQ_ISSUE] = "Interrupt Request Issue",
		[NVML_ERROR_LIBRARY_NOT_FOUND] = "NVML Shared Library Not Found",
		[NVML_ERROR_FUNCTION_NOT_FOUND] = "Function Not Found",
		[NVML_ERROR_CORRUPTED_INFOROM] = "Corrupted infoROM",
		[NVML_ERROR_GPU_IS_LOST] = "GPU is lost (the vcuda session ended)",
		[NVML_ERROR_RESET_REQUIRED] = "GPU requires reset",
		[NVML_ERROR_OPERATING_SYSTEM] = "GPU access blocked by the operating system",
		[NVML_ERROR_LIB_RM_VERSION_MISMATCH] = "Driver/library version mismatch",
		[NVML_ERROR_IN_USE] = "In use by another client",
		[NVML_ERROR_MEMORY] = "Insufficient Memory",
		[NVML_ERROR_NO_DATA] = "No data",
		[NVML_ERROR_VGPU_ECC_NOT_SUPPORTED] = "ECC not supported on vGPU",
		[NVML_ERROR_INSUFFICIENT_RESOURCES] = "Insufficient resources",
		[NVML_ERROR_FREQ_NOT_SUPPORTED] = "Frequency not supported",
		[NVML_ERROR_ARGUMENT_VERSION_MISMATCH] = "Argument version mismatch",
		[NVML_ERROR_DEPRECATED] = "Deprecated",
		[NVML_ERROR_NOT_READY] = "Not ready",
		[NVML_ERROR_GPU_NOT_FOUND] = "GPU not found",
		[NVML_ERROR_INVALID_STATE] = "Invalid state",
		[NVML_ERROR_RESET_TYPE_NOT_SUPPORTED] = "Reset type not supported",
	};

	if ((unsigned)result < sizeof(s) / sizeof(s[0]) && s[result])
		return s[result];
	return "Unknown Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	const struct vc_nvml_facts *f = vc_nvml_facts();

	if (!f)
		return NVML_ERROR_UNINITIALIZED;
	/* The host driver's, as the host's NVML says; a host without NVML
	 * (the CI stand-in) has no driver version string to give. */
	if (!f->driver_version[0])
		return NVML_ERROR_NOT_SUPPORTED;
	return vc_nvml_copy_str(version, length, f->driver_version);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
	const struct vc_nvml_facts *f = vc_nvml_facts();

	if (!f)
		return NVML_ERROR_UNINITIALIZED;
	if (!f->nvml_version[0])
		return NVML_ERROR_NOT_SUPPORTED;
	return vc_nvml_copy_str(version, length, f->nvml_version);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	const struct vc_nvml_facts *f = vc_nvml_facts();

	if (!f)
		return NVML_ERROR_UNINITIALIZED;
	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cudaDriverVersion = f->cuda_version;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
	return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

/* The process's name as this (the guest's) kernel knows it: the pids NVML
 * lists are the guest's own. Natively NVML gives the command's path. */
nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
	char path[64], buf[256];
	size_t n = 0;
	FILE *fp;

	if (!vc_nvml_facts())
		return NVML_ERROR_UNINITIALIZED;
	if (!name || !length)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	fp = fopen(path, "r");
	if (fp) {
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = 0;
	if (!buf[0]) {
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
		fp = fopen(path, "r");
		if (!fp)
			return NVML_ERROR_NOT_FOUND;
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
		buf[n] = 0;
		buf[strcspn(buf, "\n")] = 0;
	}
	/* Truncated to fit, as NVML does for this call. */
	snprintf(name, length, "%s", buf);
	return NVML_SUCCESS;
}
