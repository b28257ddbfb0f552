/* SPDX-License-Identifier: MIT */
/*
 * fake_nvml.c - a stand-in libnvidia-ml.so.1 for ci/mgmt-test.sh: the
 * entry points vcuda-mgmtd loads (mgmt/nvml.c), with the signatures and
 * structure layouts of NVIDIA's nvml.h, answering for two GPUs: index 0
 * healthy, index 1 with a row remap pending (so: unhealthy). It checks what
 * NVML would check: init before use, valid handles and pointers.
 * vcuda-mgmtd --nvml-lib PATH loads it instead of the real library.
 */
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

#define OK 0
#define UNINITIALIZED 1
#define INVALID_ARGUMENT 2
#define NOT_SUPPORTED 3
#define INSUFFICIENT_SIZE 7

static int g_init;
static struct nvmlDevice_st {
	int index;
} g_dev[2] = {{0}, {1}};

#define EXPORT __attribute__((visibility("default")))
#define DEV(d) ((d) == &g_dev[0] || (d) == &g_dev[1])

EXPORT nvmlReturn_t nvmlInit_v2(void);
EXPORT nvmlReturn_t nvmlShutdown(void);
EXPORT const char *nvmlErrorString(nvmlReturn_t r);
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int n);
EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int n);
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *c);
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *u, unsigned int n);
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int n);
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p);
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *c, unsigned int *u, unsigned int *p,
					      unsigned int *f);
EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *p);
EXPORT nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node);

nvmlReturn_t nvmlInit_v2(void)
{
	g_init++;
	return OK;
}

nvmlReturn_t nvmlShutdown(void)
{
	if (!g_init)
		return UNINITIALIZED;
	g_init--;
	return OK;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
	return r == OK ? "Success" : r == UNINITIALIZED ? "Uninitialized" : "Invalid Argument";
}

static nvmlReturn_t str(char *out, unsigned int n, const char *s)
{
	if (!out)
		return INVALID_ARGUMENT;
	if (strlen(s) + 1 > n)
		return INSUFFICIENT_SIZE;
	strcpy(out, s);
	return OK;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int n)
{
	return str(v, n, "580.00.fake");
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int n)
{
	return str(v, n, "13.580.00.fake");
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *c)
{
	if (!g_init)
		return UNINITIALIZED;
	if (!c)
		return INVALID_ARGUMENT;
	*c = 2;
	return OK;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (!g_init)
		return UNINITIALIZED;
	if (i > 1 || !d)
		return INVALID_ARGUMENT;
	*d = &g_dev[i];
	return OK;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *u, unsigned int n)
{
	char buf[96];

	if (!g_init || !DEV(d))
		return INVALID_ARGUMENT;
	snprintf(buf, sizeof(buf), "GPU-fa4e0000-0000-4000-8000-00000000000%d", d->index);
	return str(u, n, buf);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int n)
{
	if (!g_init || !DEV(d))
		return INVALID_ARGUMENT;
	return str(s, n, d->index ? "NVIDIA H200 (fake NVML)" : "NVIDIA H100 80GB HBM3 (fake NVML)");
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	if (!g_init || !DEV(d) || !m)
		return INVALID_ARGUMENT;
	m->total = d->index ? 143771484160ull : 85520809984ull;
	m->used = 1ull << 29;
	m->free = m->total - m->used;
	return OK;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	if (!g_init || !DEV(d) || !p)
		return INVALID_ARGUMENT;
	memset(p, 0, sizeof(*p));
	p->bus = d->index ? 0x65 : 0x17;
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "0000:%02X:00.0", p->bus);
	snprintf(p->busId, sizeof(p->busId), "00000000:%02X:00.0", p->bus);
	return OK;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *c, unsigned int *u, unsigned int *p,
				       unsigned int *f)
{
	if (!g_init || !DEV(d) || !c || !u || !p || !f)
		return INVALID_ARGUMENT;
	*c = 0;
	*u = d->index;
	*p = d->index; /* GPU 1: a remap waits for a reset */
	*f = 0;
	return OK;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *p)
{
	(void)d, (void)p;
	return NOT_SUPPORTED; /* as on Ampere and later */
}

nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
	if (!g_init || !DEV(d) || !node)
		return INVALID_ARGUMENT;
	*node = (unsigned)d->index; /* each GPU on its own socket */
	return OK;
}
