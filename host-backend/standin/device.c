/* SPDX-License-Identifier: MIT */
/*
 * device.c - the CI stand-in's driver and device queries: one device, or
 * VCUDA_STANDIN_DEVICES (up to 4) of the same kind, whose attributes and
 * driver version are a real H200's recorded profile (standin.h); each has
 * its own UUID and PCI bus, and none is another's peer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_priv.h"

/* ---- driver and device ------------------------------------------------------- */

static CUresult s_init(unsigned int f)
{
	return f ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult s_version(int *v)
{
	*v = vc_standin_driver_version;
	return CUDA_SUCCESS;
}

int vc_si_ndev = 1;

static CUresult s_count(int *n)
{
	*n = vc_si_ndev;
	return CUDA_SUCCESS;
}

static CUresult s_device_get(CUdevice *d, int ordinal)
{
	if (!vc_si_dev_ok(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}

static int g_decompress = -1; /* -1: the recorded profile's */

void vc_cuda_driver_standin_decompress(int mask)
{
	__atomic_store_n(&g_decompress, mask, __ATOMIC_RELAXED);
}

static CUresult s_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	int dm = __atomic_load_n(&g_decompress, __ATOMIC_RELAXED);

	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	if ((int)a < 1 || (int)a >= vc_standin_nattrs)
		return CUDA_ERROR_INVALID_VALUE;
	*v = a == CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK && dm >= 0 ? dm : vc_standin_attrs[a];
	/* Multicast, as a GPU behind NVSwitch has it (the recorded H200 has
	 * not): the guest must answer it off, as it refuses the family. */
	if (a == CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED)
		*v = 1;
	if (a == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)
		*v += d; /* the next devices on the next buses */
	return CUDA_SUCCESS;
}

static CUresult s_name(char *name, int len, CUdevice d)
{
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	if (len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	/* Says what it is wherever a program prints the device's name. */
	strncpy(name, "vcuda CI stand-in (no GPU)", (size_t)len - 1);
	name[len - 1] = 0;
	return CUDA_SUCCESS;
}

static CUresult s_uuid(CUuuid *u, CUdevice d)
{
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	memcpy(u->bytes, "vcuda-ci-standin", 16);
	u->bytes[15] = (char)('n' + d); /* device 0's is the one-device UUID */
	return CUDA_SUCCESS;
}

static CUresult s_total(size_t *b, CUdevice d)
{
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	*b = g_limit;
	return CUDA_SUCCESS;
}

static CUresult s_pci(char *id, int len, CUdevice d)
{
	if (!vc_si_dev_ok(d))
		return CUDA_ERROR_INVALID_DEVICE;
	int dom = 0, bus = 0, dev = 0;
	char buf[32];

	if (len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	/* The location the recorded attributes give, as the driver writes it
	 * (the guest NVML's PCI info and bus-id lookups must agree with it). */
	s_attr(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
	s_attr(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
	s_attr(&dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
	snprintf(buf, sizeof(buf), "%04x:%02x:%02x.0", (unsigned)dom & 0xffffu, (unsigned)bus & 0xffu,
		 (unsigned)dev & 0xffu);
	strncpy(id, buf, (size_t)len - 1);
	id[len - 1] = 0;
	return CUDA_SUCCESS;
}

/* A device by its bus id, in the forms the driver takes: domain:bus:device.function
 * or bus:device.function, hexadecimal. */
static CUresult s_by_pci(CUdevice *dev, const char *id)
{
	unsigned dom = 0, bus, d, f;
	char tail;

	if (!dev || !id)
		return CUDA_ERROR_INVALID_VALUE;
	if (sscanf(id, "%x:%x:%x.%x%c", &dom, &bus, &d, &f, &tail) != 4 &&
	    (dom = 0, sscanf(id, "%x:%x.%x%c", &bus, &d, &f, &tail) != 3))
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < vc_si_ndev; i++) {
		int wd = 0, wb = 0, wv = 0;

		s_attr(&wd, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, i);
		s_attr(&wb, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, i);
		s_attr(&wv, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, i);
		if (dom == (unsigned)wd && bus == (unsigned)wb && d == (unsigned)wv && f == 0) {
			*dev = i;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_DEVICE;
}

void vc_si_fill_device(struct vc_cuda_driver *d)
{
	const char *n = getenv("VCUDA_STANDIN_DEVICES");

	if (n && atoi(n) >= 1 && atoi(n) <= VC_SI_DEVICES_MAX)
		vc_si_ndev = atoi(n);
	d->cuInit = s_init;
	d->cuDriverGetVersion = s_version;
	d->cuDeviceGetCount = s_count;
	d->cuDeviceGet = s_device_get;
	d->cuDeviceGetAttribute = s_attr;
	d->cuDeviceGetName = s_name;
	d->cuDeviceGetUuid_v2 = s_uuid;
	d->cuDeviceTotalMem_v2 = s_total;
	d->cuDeviceGetPCIBusId = s_pci;
	d->cuDeviceGetByPCIBusId = s_by_pci;
}
