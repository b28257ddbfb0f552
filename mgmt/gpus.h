/* SPDX-License-Identifier: MIT */
/*
 * gpus.h - where vcuda-mgmtd learns the host's GPUs: NVML (libnvidia-ml.so.1,
 * loaded at run time; nvml.c), or, without a GPU (tests, dry runs), an
 * inventory file that describes them:
 *
 *   {"gpus": [{"uuid": "GPU-...", "name": "NVIDIA H100 80GB HBM3",
 *              "memory": "80G" | 85899345920, "pci_bus_id": "00000000:17:00.0",
 *              "health": "healthy" | "unhealthy", "reason": "why unhealthy",
 *              "numa_node": 0}]}          (the NUMA node: optional, -1 unknown)
 *
 * The index of a GPU is its position in the list. The file is read again on
 * every rescan, so a test can change a GPU's health.
 */
#ifndef VC_MGMT_GPUS_H
#define VC_MGMT_GPUS_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

#define VC_GPUS_MAX 64

struct vc_gpu_source;

/**
 * vc_gpus_open() - use the inventory file @inventory, or NVML when it is
 * NULL (from @nvml_lib, or NULL for libnvidia-ml.so.1). Returns 0, or -errno with a sentence in @err (NVML missing: -ENOENT,
 * "NVML not available ...; use --inventory FILE").
 */
int vc_gpus_open(const char *inventory, const char *nvml_lib, struct vc_gpu_source **out, char *err,
		 size_t errlen);

/** vc_gpus_close() - unload NVML / forget the file; NULL is fine. */
void vc_gpus_close(struct vc_gpu_source *s);

/** vc_gpus_describe() - "NVML 12.580.82 (driver 580.82.07)" or "inventory file PATH". */
const char *vc_gpus_describe(const struct vc_gpu_source *s);

/** vc_gpus_kind() - "nvml" or "inventory". */
const char *vc_gpus_kind(const struct vc_gpu_source *s);

/**
 * vc_gpus_scan() - the GPUs present now, with their health, into a
 * malloc'd array *@out of *@n (free() it). Returns 0, or -errno with a
 * sentence in @err (the inventory file is unreadable or malformed; NVML
 * failed as a whole). A GPU that cannot be queried is reported unhealthy.
 */
int vc_gpus_scan(struct vc_gpu_source *s, struct vc_gpu **out, size_t *n, char *err, size_t errlen);

/**
 * vc_inventory_parse() - the GPUs in inventory text @text (@len bytes);
 * @what names it in errors. As vc_gpus_scan().
 */
int vc_inventory_parse(const char *text, size_t len, const char *what, struct vc_gpu **out, size_t *n,
		       char *err, size_t errlen);

/* NVML, loaded with dlopen (nvml.c). */
struct vc_nvml;

/** vc_nvml_open() - load libnvidia-ml.so.1 (@lib overrides) and nvmlInit. 0 or -errno with @err. */
int vc_nvml_open(const char *lib, struct vc_nvml **out, char *err, size_t errlen);

/** vc_nvml_close() - nvmlShutdown and unload. */
void vc_nvml_close(struct vc_nvml *n);

/** vc_nvml_describe() - the library's and the driver's versions. */
const char *vc_nvml_describe(const struct vc_nvml *n);

/**
 * vc_gpus_pci_numa_node() - the NUMA node of the PCI device @bus_id (NVML's
 * "00000000:17:00.0") as @sysfs ("/sys") says, where NVML does not: -1
 * when unknown (no such file, no number, a malformed bus id).
 */
int vc_gpus_pci_numa_node(const char *sysfs, const char *bus_id);

/** vc_nvml_scan() - as vc_gpus_scan(). */
int vc_nvml_scan(struct vc_nvml *n, struct vc_gpu **out, size_t *count, char *err, size_t errlen);

#endif /* VC_MGMT_GPUS_H */
