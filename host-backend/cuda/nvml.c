/* SPDX-License-Identifier: MIT */
/*
 * nvml.c - what the guest's NVML (guest-lib/nvml) asks the server beyond the
 * device facts of vcDriverInfo/vcDeviceInfo: the host driver's version
 * strings, the memory a guest is shown (within the server's quota: a VM's
 * quota covers all its processes), the server's processes, and single values
 * of the host's NVML (nvml/host_nvml.c) for the session's device, found by
 * the PCI bus id the CUDA driver gives. A session that asks any of these is
 * a monitor (vc_acct_monitor()): it is not listed among the processes.
 */
#include <stdio.h>
#include <string.h>

#include "resources/acct.h"
#include "cuda/exec_priv.h"
#include "nvml/host_nvml.h"
#include "vc_nvml_wire.h"

/* The session's device @ord and its PCI bus id. */
static int dev_of(struct vc_cu_session *x, int32_t ord, CUdevice *dev, char *bus, int blen)
{
	int rc;

	if ((rc = x->drv->cuDeviceGet(dev, ord)))
		return rc;
	return x->drv->cuDeviceGetPCIBusId(bus, blen, *dev);
}

int vc_cu_manual_vcNvmlSystem(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_cu_prefix rq;
	struct vc_nv_rep_system rp;
	int v = 0, rc;

	TAKE(rq);
	vc_acct_monitor();
	memset(&rp, 0, sizeof(rp));
	if ((rc = x->drv->cuDriverGetVersion(&v)))
		return rc;
	rp.cuda_version = v;
	rp.host_nvml = vc_host_nvml_system(rp.driver_version, sizeof(rp.driver_version), rp.nvml_version,
					   sizeof(rp.nvml_version)) == 0;
	REPLY(rp);
	return CUDA_SUCCESS;
}

int vc_cu_manual_vcNvmlMemory(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_nv_req_dev rq;
	struct vc_nv_rep_memory rp;
	uint64_t quota, used, on_dev, left, dev_total = 0, dev_free;
	size_t total = 0;
	char bus[32];
	CUdevice dev;
	int rc;

	TAKE(rq);
	if (rq.pad)
		return -VC_FATAL_PAYLOAD;
	vc_acct_monitor();
	if ((rc = dev_of(x, rq.dev, &dev, bus, sizeof(bus))) || (rc = x->drv->cuDeviceTotalMem_v2(&total, dev)))
		return rc;
	vc_acct_mem_view(&quota, &used);
	on_dev = vc_acct_device_used(rq.dev);
	/* The device's free memory needs a context of the driver's, which a
	 * monitor never makes: the host NVML's when there is one, else what the
	 * server's sessions leave of it. */
	if (vc_host_nvml_memory(bus, &dev_total, &dev_free) != VC_NVML_SUCCESS)
		dev_free = total - (on_dev < total ? on_dev : total);
	memset(&rp, 0, sizeof(rp));
	rp.device_total = total;
	rp.quota = quota;
	rp.total = quota && quota < total ? quota : total;
	/* Used: what the VM holds on this device. Free: what is left of it,
	 * and of the quota, which covers all the VM's devices together. */
	rp.used = on_dev < rp.total ? on_dev : rp.total;
	rp.free = rp.total - rp.used;
	left = quota - (used < quota ? used : quota);
	if (quota && rp.free > left)
		rp.free = left;
	if (rp.free > dev_free)
		rp.free = dev_free;
	REPLY(rp);
	return CUDA_SUCCESS;
}

int vc_cu_manual_vcNvmlProcs(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_nv_req_dev rq;
	struct vc_nv_rep_procs rp = {0};
	struct vc_acct_proc procs[VC_NV_PROCS_MAX];
	struct vc_nv_proc *e;
	uint32_t cap, n;
	char bus[32];
	CUdevice dev;
	int rc;

	TAKE(rq);
	if (rq.pad)
		return -VC_FATAL_PAYLOAD;
	vc_acct_monitor();
	if ((rc = dev_of(x, rq.dev, &dev, bus, sizeof(bus))))
		return rc;
	if (!out->data)
		return CUDA_ERROR_INVALID_VALUE;
	cap = out->data_cap / sizeof(*e);
	if (cap > sizeof(procs) / sizeof(procs[0]))
		cap = sizeof(procs) / sizeof(procs[0]);
	n = vc_acct_procs(procs, cap, rq.dev); /* those with memory on this device */
	rp.total = n;
	rp.count = n < cap ? n : cap;
	e = (struct vc_nv_proc *)out->data;
	for (uint32_t i = 0; i < rp.count; i++) {
		struct vc_nv_proc one = {.pid = procs[i].pid, .used = procs[i].used};

		memcpy(&e[i], &one, sizeof(one));
	}
	memcpy(out->rep, &rp, sizeof(rp));
	out->data_len = rp.count * (uint32_t)sizeof(*e);
	out->rep_len = sizeof(rp);
	return CUDA_SUCCESS;
}

int vc_cu_manual_vcNvmlValue(struct vc_cu_session *x, const uint8_t *p, uint32_t len, struct vc_cu_out *out)
{
	struct vc_nv_req_value rq;
	struct vc_nv_rep_value rp;
	char bus[32];
	CUdevice dev;
	int rc;

	TAKE(rq);
	if (rq.query == 0 || rq.query >= VC_NV_QUERY_END_)
		return -VC_FATAL_PAYLOAD;
	vc_acct_monitor();
	if ((rc = dev_of(x, rq.dev, &dev, bus, sizeof(bus))))
		return rc;
	if (rq.query == VC_NV_P2P_STATUS) {
		/* Two devices: the second is the session's device arg[1]. */
		char bus2[32];
		CUdevice dev2;
		uint32_t st = 0;

		if ((rc = dev_of(x, (int32_t)rq.arg[1], &dev2, bus2, sizeof(bus2))))
			return rc;
		memset(&rp, 0, sizeof(rp));
		rp.status = vc_host_nvml_p2p(bus, bus2, rq.arg[0], &st);
		rp.v[0] = rp.status == VC_NVML_SUCCESS ? st : 0;
	} else {
		vc_host_nvml_value(bus, rq.query, rq.arg, &rp);
	}
	REPLY(rp);
	return CUDA_SUCCESS;
}
