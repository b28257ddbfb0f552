/* SPDX-License-Identifier: MIT */
/*
 * device.c - device facts: the driver's version and device count, and each
 * device's name, identity, memory and attributes in one reply.
 */
#include <string.h>

#include "cuda/exec_priv.h"

int vc_cu_manual_vcDriverInfo(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_prefix rq;
	struct vc_cu_rep_vcDriverInfo rp = {0};
	int v = 0, n = 0, rc;

	TAKE(rq);
	if ((rc = x->drv->cuDriverGetVersion(&v)) || (rc = x->drv->cuDeviceGetCount(&n)))
		return rc;
	rp.driver_version = v;
	rp.device_count = n > VC_CU_MAX_DEVICES ? VC_CU_MAX_DEVICES : n;
	REPLY(rp);
	return 0;
}

int vc_cu_manual_vcDeviceInfo(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			      struct vc_cu_out *out)
{
	struct vc_cu_req_vcDeviceInfo rq;
	struct vc_cu_device_info *info;
	CUdevice dev;
	CUuuid uuid;
	size_t mem = 0;
	int rc;

	TAKE(rq);
	if (!out->data || out->data_cap < sizeof(*info))
		return CUDA_ERROR_INVALID_VALUE;
	if ((rc = x->drv->cuDeviceGet(&dev, rq.dev)))
		return rc;
	info = (struct vc_cu_device_info *)out->data;
	memset(info, 0, sizeof(*info));
	if ((rc = x->drv->cuDeviceGetName(info->name, sizeof(info->name), dev)) ||
	    (rc = x->drv->cuDeviceGetUuid_v2(&uuid, dev)) || (rc = x->drv->cuDeviceTotalMem_v2(&mem, dev)))
		return rc;
	info->name[sizeof(info->name) - 1] = 0;
	memcpy(info->uuid, uuid.bytes, sizeof(info->uuid));
	info->total_mem = mem;
	info->attr_count = CU_DEVICE_ATTRIBUTE_MAX;
	for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; a++) {
		int v = 0;

		/* Unsupported attributes answer an error natively; 0 is what the
		 * guest reports for them too (it keeps the driver's error code
		 * out of a value table). */
		if (x->drv->cuDeviceGetAttribute(&v, (CUdevice_attribute)a, dev) == CUDA_SUCCESS)
			info->attrs[a] = v;
	}
	info->pci_domain = info->attrs[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID];
	info->pci_bus = info->attrs[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID];
	info->pci_device = info->attrs[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID];
	out->data_len = sizeof(*info);
	return 0;
}
