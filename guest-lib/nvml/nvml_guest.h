/* SPDX-License-Identifier: MIT */
/*
 * nvml_guest.h - the guest NVML's state, shared by its files: init and the
 * session (nvml.c), device queries answered from the device facts and the
 * server's views (device.c), and values of the host's NVML (values.c).
 */
#ifndef VC_NVML_GUEST_H
#define VC_NVML_GUEST_H

#include <stddef.h>
#include <stdint.h>

#include "vc_cuda_manual.h"
#include "vc_nvml.h"
#include "vc_nvml_wire.h"

#define VC_NVML_MAX_DEVICES 16

/* A device handle: one of these, never anything the caller made. */
struct nvmlDevice_st {
	unsigned int index;
};

/* What nvmlInit fetched once (the device facts do not change). */
struct vc_nvml_facts {
	int device_count;
	int cuda_version;
	int host_nvml; /* the host's NVML answers value queries */
	char driver_version[80];
	char nvml_version[80];
	struct vc_cu_device_info dev[VC_NVML_MAX_DEVICES];
};

/** vc_nvml_facts() - the facts, or NULL before nvmlInit (or after the last shutdown). */
const struct vc_nvml_facts *vc_nvml_facts(void);

/**
 * vc_nvml_device() - the ordinal behind handle @d into *@index.
 * Returns NVML_SUCCESS, NVML_ERROR_UNINITIALIZED or NVML_ERROR_INVALID_ARGUMENT.
 */
nvmlReturn_t vc_nvml_device(nvmlDevice_t d, unsigned int *index);

/**
 * vc_nvml_call() - synchronous operation @op of the session with request
 * @req; its reply struct into @rep (@replen bytes) and, when @data is not
 * NULL, its data area (at most @dcap bytes) into @data with its length in
 * *@dlen. Returns an NVML code: transport failures are
 * NVML_ERROR_GPU_IS_LOST, CUDA errors NVML_ERROR_INVALID_ARGUMENT (invalid
 * device) or NVML_ERROR_UNKNOWN.
 */
nvmlReturn_t vc_nvml_call(uint32_t op, const void *req, size_t reqlen, void *rep, size_t replen, void *data,
			  size_t dcap, size_t *dlen);

/**
 * vc_nvml_procs() - the VM's processes on device @device (pid and device
 * memory held): *@n of them in a new array *@out, which the caller frees.
 * Returns an NVML code (device.c).
 */
nvmlReturn_t vc_nvml_procs(nvmlDevice_t device, struct vc_nv_proc **out, unsigned *n);

/*
 * VC_NVML_CONSTANT() - define entry point @name(device, @type *out), which
 * answers @value for any device of ours: what a VM's GPU always says (no MIG
 * devices, no events). A bad handle or a NULL @out is refused first.
 */
#define VC_NVML_CONSTANT(name, type, value)                                        \
	nvmlReturn_t name(nvmlDevice_t device, type *out)                          \
	{                                                                          \
		unsigned idx_;                                                     \
		nvmlReturn_t rc_ = vc_nvml_device(device, &idx_);                  \
		if (rc_)                                                           \
			return rc_;                                                \
		if (!out)                                                          \
			return NVML_ERROR_INVALID_ARGUMENT;                        \
		*out = (value);                                                    \
		return NVML_SUCCESS;                                               \
	}

/** vc_nvml_pci_v1() - @pci in the first layout, into @out: the bytes NVML writes there. */
void vc_nvml_pci_v1(const nvmlPciInfo_t *pci, nvmlPciInfo_v1_t *out);

/** vc_nvml_copy_str() - copy @s into @buf of @len bytes; NVML_ERROR_INSUFFICIENT_SIZE if it does not fit. */
nvmlReturn_t vc_nvml_copy_str(char *buf, unsigned int len, const char *s);

#endif /* VC_NVML_GUEST_H */
