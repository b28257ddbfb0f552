/* SPDX-License-Identifier: MIT */
/*
 * host_nvml.h - the host's NVML (libnvidia-ml.so.1), loaded at run time in
 * a session's worker to answer what the guest's NVML asks and the CUDA
 * driver cannot tell (utilisation, temperatures, power, clocks, the driver's
 * version string). A host without NVML (CI, the stand-in) answers
 * NVML_ERROR_NOT_SUPPORTED for all of it. Devices are named by their PCI bus
 * id, as the CUDA driver reports it for the session's device.
 */
#ifndef VC_HOST_NVML_H
#define VC_HOST_NVML_H

#include <stddef.h>
#include <stdint.h>

#include "vc_nvml_wire.h"

/* nvmlReturn_t values this module answers itself (NVIDIA's nvml.h). */
#define VC_NVML_SUCCESS 0
#define VC_NVML_ERROR_INVALID_ARGUMENT 2
#define VC_NVML_ERROR_NOT_SUPPORTED 3
#define VC_NVML_ERROR_NOT_FOUND 6
#define VC_NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25

/**
 * vc_host_nvml_configure() - the library to load at first use (a path or a
 * soname), or NULL: none (the CI stand-in's workers). Call before the first
 * query; the worker process loads it lazily, after fork.
 */
void vc_host_nvml_configure(const char *lib);

/**
 * vc_host_nvml_system() - the host driver's version and NVML's version
 * strings. Returns 0, or -ENOENT when the host has no usable NVML.
 */
int vc_host_nvml_system(char *driver, size_t dlen, char *nvml, size_t nlen);

/**
 * vc_host_nvml_memory() - device @bus_id's total and free memory. Returns
 * an nvmlReturn_t (VC_NVML_ERROR_NOT_SUPPORTED without NVML).
 */
int vc_host_nvml_memory(const char *bus_id, uint64_t *total, uint64_t *free);

/**
 * vc_host_nvml_value() - query @q (enum vc_nv_query) with arguments @arg of
 * device @bus_id into @out (status: the nvmlReturn_t). Queries outside the
 * table answer VC_NVML_ERROR_INVALID_ARGUMENT.
 */
void vc_host_nvml_value(const char *bus_id, uint32_t q, const uint32_t arg[2], struct vc_nv_rep_value *out);

/**
 * vc_host_nvml_p2p() - nvmlDeviceGetP2PStatus between devices @bus1 and @bus2
 * for capability @index into *@status. Returns an nvmlReturn_t
 * (VC_NVML_ERROR_NOT_SUPPORTED without NVML or without the entry point).
 */
int vc_host_nvml_p2p(const char *bus1, const char *bus2, uint32_t index, uint32_t *status);

#endif /* VC_HOST_NVML_H */
