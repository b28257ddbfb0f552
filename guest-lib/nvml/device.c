/* SPDX-License-Identifier: MIT */
/*
 * device.c - the guest NVML's device queries: identity (name, UUID, PCI
 * location, compute capability) from the facts nvmlInit fetched; memory
 * within the VM's quota and the VM's processes from the server
 * (vcNvmlMemory, vcNvmlProcs; host-backend/cuda/nvml.c).
 *
 * Memory: total is the VM's quota when one is set (never more than the
 * device has), used what the VM's processes hold, free what is left of
 * the quota and of the device. Processes: the VM's processes with a CUDA
 * session (pids as the guest's kernel knows them) and the device memory
 * each holds; no graphics or MPS processes exist in a guest. NVLink
 * fabric: none the VM can use (state NOT_SUPPORTED).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvml_guest.h"

#define NO_INSTANCE 0xFFFFFFFFu /* gpuInstanceId, computeInstanceId without MIG */

static nvmlReturn_t facts_of(nvmlDevice_t d, const struct vc_cu_device_info **info, unsigned *index)
{
	const struct vc_nvml_facts *f;
	nvmlReturn_t rc = vc_nvml_device(d, index);

	if (rc)
		return rc;
	f = vc_nvml_facts();
	if (!f)
		return NVML_ERROR_UNINITIALIZED;
	*info = &f->dev[*index];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	unsigned i;
	nvmlReturn_t rc = vc_nvml_device(device, &i);

	if (rc)
		return rc;
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = i;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	const struct vc_cu_device_info *info;
	unsigned i;
	nvmlReturn_t rc = facts_of(device, &info, &i);

	return rc ? rc : vc_nvml_copy_str(name, length, info->name);
}

static void uuid_string(const uint8_t u[16], char out[48])
{
	snprintf(out, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	const struct vc_cu_device_info *info;
	char s[48];
	unsigned i;
	nvmlReturn_t rc = facts_of(device, &info, &i);

	if (rc)
		return rc;
	uuid_string(info->uuid, s);
	return vc_nvml_copy_str(uuid, length, s);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	const struct vc_nvml_facts *f = vc_nvml_facts();
	char s[48];

	if (!f)
		return NVML_ERROR_UNINITIALIZED;
	if (!uuid || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int d = 0; d < f->device_count; d++) {
		uuid_string(f->dev[d].uuid, s);
		if (!strcasecmp(uuid, s))
			return nvmlDeviceGetHandleByIndex_v2((unsigned)d, device);
	}
	return NVML_ERROR_NOT_FOUND;
}

/* "[domain:]bus:device[.function]", hexadecimal, as NVML takes it. */
static int parse_bus_id(const char *s, unsigned *dom, unsigned *bus, unsigned *dev)
{
	unsigned a, b, c, fn = 0;

	if (sscanf(s, "%x:%x:%x.%x", &a, &b, &c, &fn) >= 3) {
		*dom = a;
		*bus = b;
		*dev = c;
	} else if (sscanf(s, "%x:%x.%x", &b, &c, &fn) >= 2) {
		*dom = 0;
		*bus = b;
		*dev = c;
	} else {
		return -1;
	}
	return fn == 0 ? 0 : -1;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
	const struct vc_nvml_facts *f = vc_nvml_facts();
	unsigned dom, bus, dev;

	if (!f)
		return NVML_ERROR_UNINITIALIZED;
	if (!pciBusId || !device || parse_bus_id(pciBusId, &dom, &bus, &dev))
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int d = 0; d < f->device_count; d++)
		if ((unsigned)f->dev[d].pci_domain == dom && (unsigned)f->dev[d].pci_bus == bus &&
		    (unsigned)f->dev[d].pci_device == dev)
			return nvmlDeviceGetHandleByIndex_v2((unsigned)d, device);
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	const struct vc_cu_device_info *info;
	struct vc_nv_req_value rq = {0};
	struct vc_nv_rep_value rp;
	unsigned i;
	nvmlReturn_t rc = facts_of(device, &info, &i);

	if (rc)
		return rc;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* Each field, and each string up to its NUL, as NVML writes them. */
	pci->pciDeviceId = pci->pciSubSystemId = 0;
	pci->domain = (unsigned)info->pci_domain;
	pci->bus = (unsigned)info->pci_bus;
	pci->device = (unsigned)info->pci_device;
	snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", pci->domain & 0xffffffffu, pci->bus & 0xffu,
		 pci->device & 0xffu);
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", pci->domain & 0xffffu,
		 pci->bus & 0xffu, pci->device & 0xffu);
	/* The PCI ids only the host's NVML knows (0 without one). */
	rq.dev = (int32_t)i;
	rq.query = VC_NV_PCI_IDS;
	if (vc_nvml_call(VC_CU_vcNvmlValue, &rq, sizeof(rq), &rp, sizeof(rp), NULL, 0, NULL) == NVML_SUCCESS &&
	    rp.status == NVML_SUCCESS) {
		pci->pciDeviceId = (unsigned)rp.v[0];
		pci->pciSubSystemId = (unsigned)rp.v[1];
	}
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	return nvmlDeviceGetPciInfo_v3(device, pci);
}

void vc_nvml_pci_v1(const nvmlPciInfo_t *pci, nvmlPciInfo_v1_t *out)
{
	/* As NVML: the string up to its NUL, the four words after it. */
	snprintf(out->busId, sizeof(out->busId), "%s", pci->busIdLegacy);
	out->domain = pci->domain;
	out->bus = pci->bus;
	out->device = pci->device;
	out->pciDeviceId = pci->pciDeviceId;
}

/* The unversioned name writes the first layout, as NVML's does: a program
 * built against an old nvml.h passes only that much room. */
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_v1_t *pci)
{
	nvmlPciInfo_t full;
	nvmlReturn_t rc;

	if (!pci)
		return nvmlDeviceGetPciInfo_v3(device, NULL);
	if ((rc = nvmlDeviceGetPciInfo_v3(device, &full)))
		return rc;
	vc_nvml_pci_v1(&full, pci);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
	const struct vc_cu_device_info *info;
	unsigned i;
	nvmlReturn_t rc = facts_of(device, &info, &i);

	if (rc)
		return rc;
	if (!major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	*major = info->attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
	*minor = info->attrs[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
	return NVML_SUCCESS;
}

/* ---- memory ---------------------------------------------------------------------- */

static nvmlReturn_t memory(nvmlDevice_t device, struct vc_nv_rep_memory *m)
{
	unsigned i;
	nvmlReturn_t rc = vc_nvml_device(device, &i);
	struct vc_nv_req_dev rq = {.dev = (int32_t)i};

	if (rc)
		return rc;
	return vc_nvml_call(VC_CU_vcNvmlMemory, &rq, sizeof(rq), m, sizeof(*m), NULL, 0, NULL);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *mem)
{
	struct vc_nv_rep_memory m;
	nvmlReturn_t rc = memory(device, &m);

	if (rc)
		return rc;
	if (!mem)
		return NVML_ERROR_INVALID_ARGUMENT;
	mem->total = m.total;
	mem->free = m.free;
	mem->used = m.used;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *mem)
{
	struct vc_nv_rep_memory m;
	nvmlReturn_t rc = memory(device, &m);

	if (rc)
		return rc;
	if (!mem)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (mem->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	mem->total = m.total;
	mem->reserved = 0; /* the driver's own reservation is the host's business */
	mem->free = m.free;
	mem->used = m.used;
	return NVML_SUCCESS;
}

/* ---- processes ------------------------------------------------------------------ */

nvmlReturn_t vc_nvml_procs(nvmlDevice_t device, struct vc_nv_proc **out, unsigned *n)
{
	struct vc_nv_rep_procs rp;
	struct vc_nv_proc *p;
	unsigned i;
	size_t len = 0;
	nvmlReturn_t rc = vc_nvml_device(device, &i);
	struct vc_nv_req_dev rq = {.dev = (int32_t)i};

	if (rc)
		return rc;
	p = calloc(VC_NV_PROCS_MAX, sizeof(*p));
	if (!p)
		return NVML_ERROR_MEMORY;
	rc = vc_nvml_call(VC_CU_vcNvmlProcs, &rq, sizeof(rq), &rp, sizeof(rp), p, VC_NV_PROCS_MAX * sizeof(*p), &len);
	if (rc) {
		free(p);
		return rc;
	}
	*n = (unsigned)(len / sizeof(*p));
	if (*n > rp.count)
		*n = rp.count;
	*out = p;
	return NVML_SUCCESS;
}

/*
 * The running-process calls' protocol: *@count in is the room in @infos;
 * out, the number of processes. Too little room: NVML_ERROR_INSUFFICIENT_SIZE
 * with the number needed; none running: NVML_SUCCESS and 0.
 */
#define FILL_PROCS(device, infoCount, infos, graphics, set)                     \
	do {                                                                     \
		struct vc_nv_proc *p_ = NULL;                                    \
		unsigned n_ = 0;                                                 \
		nvmlReturn_t rc_ = (graphics) ? vc_nvml_device(device, &n_) : vc_nvml_procs(device, &p_, &n_); \
		if (rc_)                                                         \
			return rc_;                                              \
		if (graphics)                                                    \
			n_ = 0;                                                  \
		if (!(infoCount)) {                                              \
			free(p_);                                                \
			return NVML_ERROR_INVALID_ARGUMENT;                      \
		}                                                                \
		if (*(infoCount) < n_ || (n_ && !(infos))) {                     \
			*(infoCount) = n_;                                       \
			free(p_);                                                \
			return NVML_ERROR_INSUFFICIENT_SIZE;                     \
		}                                                                \
		for (unsigned k_ = 0; k_ < n_; k_++) {                           \
			memset(&(infos)[k_], 0, sizeof((infos)[k_]));            \
			(infos)[k_].pid = p_[k_].pid;                            \
			(infos)[k_].usedGpuMemory = p_[k_].used;                 \
			set;                                                     \
		}                                                                \
		*(infoCount) = n_;                                               \
		free(p_);                                                        \
		return NVML_SUCCESS;                                             \
	} while (0)

#define MIG_NONE(i) ((i).gpuInstanceId = NO_INSTANCE, (i).computeInstanceId = NO_INSTANCE)

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
						     nvmlProcessInfo_t *infos)
{
	FILL_PROCS(device, infoCount, infos, 0, MIG_NONE(infos[k_]));
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
						     nvmlProcessInfo_v2_t *infos)
{
	FILL_PROCS(device, infoCount, infos, 0, MIG_NONE(infos[k_]));
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
						  nvmlProcessInfo_v1_t *infos)
{
	FILL_PROCS(device, infoCount, infos, 0, (void)0);
}

/* No graphics or MPS processes exist in a guest: none, successfully. */
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
						      nvmlProcessInfo_t *infos)
{
	FILL_PROCS(device, infoCount, infos, 1, (void)0);
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
							nvmlProcessInfo_t *infos)
{
	FILL_PROCS(device, infoCount, infos, 1, (void)0);
}

nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, nvmlProcessDetailList_t *plist)
{
	unsigned idx;
	nvmlReturn_t rc = vc_nvml_device(device, &idx);

	if (rc)
		return rc;
	if (!plist)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (plist->version != nvmlProcessDetailList_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (plist->mode > 2)
		return NVML_ERROR_INVALID_ARGUMENT;
	FILL_PROCS(device, &plist->numProcArrayEntries, plist->procArray, plist->mode != 0,
		   MIG_NONE(plist->procArray[k_]));
}

/* A VM's GPU has no MIG devices of its own to show (MIG is the host's), and
 * it is a whole GPU, as on bare metal (NVML_GPU_VIRTUALIZATION_MODE_NONE). */
VC_NVML_CONSTANT(nvmlDeviceGetMaxMigDeviceCount, unsigned int, 0)
VC_NVML_CONSTANT(nvmlDeviceIsMigDeviceHandle, unsigned int, 0)
VC_NVML_CONSTANT(nvmlDeviceGetVirtualizationMode, nvmlGpuVirtualizationMode_t, 0)

/* ---- NVLink fabric ---------------------------------------------------------------- */

/* A VM's GPU belongs to no NVLink fabric the VM could use: its peers,
 * IMEX channels and Fabric Manager are the host's. NVML's answer for a GPU
 * without one is success with state NOT_SUPPORTED (XLA and NCCL read the
 * state; an error makes XLA log its query as failed), so that is the
 * answer: no cluster UUID, clique or health of the host's. */
VC_NVML_CONSTANT(nvmlDeviceGetGpuFabricInfo, nvmlGpuFabricInfo_t,
		 ((nvmlGpuFabricInfo_t){.status = NVML_SUCCESS, .state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED}))

nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *gpuFabricInfo)
{
	unsigned int idx, version;
	nvmlReturn_t rc = vc_nvml_device(device, &idx);
	size_t size;

	if (rc)
		return rc;
	if (!gpuFabricInfo)
		return NVML_ERROR_INVALID_ARGUMENT;
	version = gpuFabricInfo->version;
	if (version == nvmlGpuFabricInfo_v3)
		size = sizeof(nvmlGpuFabricInfo_v3_t);
	else if (version == nvmlGpuFabricInfo_v2)
		size = sizeof(nvmlGpuFabricInfo_v2_t);
	else
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	/* Only the caller's version's bytes: a v2 struct is shorter. */
	memset(gpuFabricInfo, 0, size);
	gpuFabricInfo->version = version;
	gpuFabricInfo->status = NVML_SUCCESS;
	gpuFabricInfo->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
	return NVML_SUCCESS;
}
