/* SPDX-License-Identifier: MIT */
/*
 * nvml.c - the host's GPUs from NVML, loaded at run time with dlopen, so
 * that vcuda-mgmtd builds and runs without the NVIDIA driver (it then needs
 * an inventory file; gpus.c).
 *
 * There is no nvml.h here: the few declarations below follow NVIDIA's
 * public nvml.h (the versioned entry points nvmlInit_v2,
 * nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2 and
 * nvmlDeviceGetPciInfo_v3, whose nvmlPciInfo_t has the 16-byte legacy bus
 * id first and the 32-byte bus id last).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpus.h"

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_FUNCTION_NOT_FOUND 13

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80

typedef struct {
	char busIdLegacy[16];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t as in nvml.h");

typedef struct {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;

struct vc_nvml {
	void *lib;
	char desc[200];
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
	/* health; optional: older drivers or GPUs lack one or the other */
	nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *, unsigned int *);
	nvmlReturn_t (*retired_pending)(nvmlDevice_t, nvmlEnableState_t *);
	nvmlReturn_t (*numa_node)(nvmlDevice_t, unsigned int *); /* optional: NVML 12.5 on */
	nvmlReturn_t (*driver_version)(char *, unsigned int);
	nvmlReturn_t (*nvml_version)(char *, unsigned int);
};

static const char *nverr(const struct vc_nvml *n, nvmlReturn_t rc)
{
	const char *s = n->error_string ? n->error_string(rc) : NULL;

	return s ? s : "unknown NVML error";
}

/* dlsym into a typed function pointer without a cast between object and
 * function pointers (which C11 does not define). */
#define SYM(field, name, required)                                                  \
	do {                                                                        \
		void *p_ = dlsym(n->lib, name);                                     \
		if (!p_ && (required)) {                                            \
			snprintf(err, errlen, "NVML not available: %s lacks %s", lib, name); \
			goto err_close;                                             \
		}                                                                   \
		memcpy(&n->field, &p_, sizeof(p_));                                 \
	} while (0)

int vc_nvml_open(const char *lib, struct vc_nvml **out, char *err, size_t errlen)
{
	char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "?", ver[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = "?";
	struct vc_nvml *n = calloc(1, sizeof(*n));
	nvmlReturn_t rc;

	if (!n)
		return -ENOMEM;
	if (!lib)
		lib = "libnvidia-ml.so.1";
	n->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(err, errlen, "NVML not available (%s); on a host without an NVIDIA GPU and driver, "
				      "describe GPUs with --inventory FILE", dlerror());
		free(n);
		return -ENOENT;
	}
	SYM(init, "nvmlInit_v2", 1);
	SYM(shutdown, "nvmlShutdown", 1);
	SYM(error_string, "nvmlErrorString", 1);
	SYM(count, "nvmlDeviceGetCount_v2", 1);
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2", 1);
	SYM(uuid, "nvmlDeviceGetUUID", 1);
	SYM(name, "nvmlDeviceGetName", 1);
	SYM(memory, "nvmlDeviceGetMemoryInfo", 1);
	SYM(pci, "nvmlDeviceGetPciInfo_v3", 1);
	SYM(remapped_rows, "nvmlDeviceGetRemappedRows", 0);
	SYM(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus", 0);
	SYM(numa_node, "nvmlDeviceGetNumaNodeId", 0);
	SYM(driver_version, "nvmlSystemGetDriverVersion", 0);
	SYM(nvml_version, "nvmlSystemGetNVMLVersion", 0);
	rc = n->init();
	if (rc != NVML_SUCCESS) {
		snprintf(err, errlen, "NVML not available: nvmlInit failed: %s (is the NVIDIA driver loaded?)",
			 nverr(n, rc));
		goto err_close;
	}
	if (n->driver_version)
		n->driver_version(drv, sizeof(drv));
	if (n->nvml_version)
		n->nvml_version(ver, sizeof(ver));
	snprintf(n->desc, sizeof(n->desc), "NVML %s (driver %s)", ver, drv);
	*out = n;
	return 0;

err_close:
	dlclose(n->lib);
	free(n);
	return -ENOENT;
}

void vc_nvml_close(struct vc_nvml *n)
{
	if (!n)
		return;
	n->shutdown();
	dlclose(n->lib);
	free(n);
}

const char *vc_nvml_describe(const struct vc_nvml *n)
{
	return n->desc;
}

static void unhealthy(struct vc_gpu *g, const char *why, const char *detail)
{
	/* The first reason found is kept: it is usually the cause of the rest. */
	if (g->health == VC_GPU_UNHEALTHY)
		return;
	g->health = VC_GPU_UNHEALTHY;
	snprintf(g->health_reason, sizeof(g->health_reason), "%s%s", why, detail);
}

int vc_gpus_pci_numa_node(const char *sysfs, const char *bus_id)
{
	char path[PATH_MAX], id[16];
	size_t len = bus_id ? strlen(bus_id) : 0;
	int node = -1;
	FILE *f;

	/* sysfs names a device by a 4-digit domain, in lower case */
	if (len != 16 || bus_id[8] != ':')
		return -1;
	for (size_t k = 0; k < 12; k++)
		id[k] = (char)(bus_id[4 + k] >= 'A' && bus_id[4 + k] <= 'F' ? bus_id[4 + k] + 32 : bus_id[4 + k]);
	id[12] = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/numa_node", sysfs, id) >= sizeof(path))
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &node) != 1 || node < -1 || node > 1023)
		node = -1;
	fclose(f);
	return node;
}

static void query(struct vc_nvml *n, unsigned i, struct vc_gpu *g)
{
	char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	nvmlDevice_t d;
	nvmlMemory_t mem;
	nvmlPciInfo_t pci;
	nvmlEnableState_t pending;
	unsigned corr, unc, rpend, failed;
	nvmlReturn_t rc;

	memset(g, 0, sizeof(*g));
	g->index = (int)i;
	g->present = true;
	g->numa_node = -1;
	snprintf(g->uuid, sizeof(g->uuid), "nvml-index-%u", i);
	rc = n->handle(i, &d);
	if (rc != NVML_SUCCESS) {
		unhealthy(g, "NVML cannot open it: ", nverr(n, rc));
		return;
	}
	rc = n->uuid(d, buf, sizeof(buf));
	if (rc == NVML_SUCCESS) {
		buf[sizeof(buf) - 1] = 0;
		snprintf(g->uuid, sizeof(g->uuid), "%s", buf);
	} else {
		unhealthy(g, "no UUID: ", nverr(n, rc));
	}
	rc = n->name(d, buf, sizeof(buf));
	buf[sizeof(buf) - 1] = 0;
	snprintf(g->name, sizeof(g->name), "%s", rc == NVML_SUCCESS ? buf : "?");
	rc = n->memory(d, &mem);
	if (rc == NVML_SUCCESS)
		g->mem_total = mem.total;
	else
		unhealthy(g, "memory query failed: ", nverr(n, rc));
	rc = n->pci(d, &pci);
	if (rc == NVML_SUCCESS) {
		unsigned node;

		pci.busId[sizeof(pci.busId) - 1] = 0;
		snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", pci.busId);
		if (n->numa_node && n->numa_node(d, &node) == NVML_SUCCESS && node < 1024)
			g->numa_node = (int)node;
		else
			g->numa_node = vc_gpus_pci_numa_node("/sys", g->pci_bus_id);
	} else {
		unhealthy(g, "PCI query failed: ", nverr(n, rc));
	}
	/* Memory health: a failed row remap, or one pending (needs a GPU reset);
	 * on GPUs before Ampere, retired pages pending. "Not supported" is fine. */
	if (n->remapped_rows) {
		rc = n->remapped_rows(d, &corr, &unc, &rpend, &failed);
		if (rc == NVML_SUCCESS && failed)
			unhealthy(g, "", "row remapping failed: the GPU needs service");
		else if (rc == NVML_SUCCESS && rpend)
			unhealthy(g, "", "row remapping pending: reset the GPU");
		else if (rc == NVML_ERROR_GPU_IS_LOST)
			unhealthy(g, "", "the GPU has fallen off the bus");
	}
	if (n->retired_pending) {
		rc = n->retired_pending(d, &pending);
		if (rc == NVML_SUCCESS && pending == NVML_FEATURE_ENABLED)
			unhealthy(g, "", "retired pages pending: reset the GPU");
		else if (rc == NVML_ERROR_GPU_IS_LOST)
			unhealthy(g, "", "the GPU has fallen off the bus");
	}
	vc_printable(g->uuid);
	vc_printable(g->name);
	vc_printable(g->pci_bus_id);
}

int vc_nvml_scan(struct vc_nvml *n, struct vc_gpu **out, size_t *count, char *err, size_t errlen)
{
	struct vc_gpu *g;
	unsigned c = 0;
	nvmlReturn_t rc = n->count(&c);

	if (rc != NVML_SUCCESS) {
		snprintf(err, errlen, "NVML cannot count GPUs: %s", nverr(n, rc));
		return -EIO;
	}
	if (c > VC_GPUS_MAX)
		c = VC_GPUS_MAX;
	g = calloc(c ? c : 1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	for (unsigned i = 0; i < c; i++)
		query(n, i, &g[i]);
	*out = g;
	*count = c;
	return 0;
}
