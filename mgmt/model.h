/* SPDX-License-Identifier: MIT */
/*
 * model.h - what vcuda-mgmtd knows: GPUs, VMs and events, as the database
 * keeps them (db.c) and the GPU sources (gpus.c) report them.
 */
#ifndef VC_MGMT_MODEL_H
#define VC_MGMT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

#define VC_UUID_MAX 96
#define VC_GPU_NAME_MAX 96
#define VC_BUSID_MAX 32
#define VC_REASON_MAX 160
#define VC_EVENT_MSG_MAX 512
/* A VM has 1 GPU, which it may share with other VMs, or 2..VC_VM_GPUS_MAX
 * whole GPUs of its own (docs/MGMT.md, placement). */
#define VC_VM_GPUS_MAX 8u
/* A VM's GPUs as vcuda-server's --gpu takes them: UUIDs joined by commas. */
#define VC_GPULIST_MAX (VC_VM_GPUS_MAX * VC_UUID_MAX)

/* The defaults of a VM added without them (vcuda-mgmtd may change them). */
#define VC_DEF_MEM_QUOTA (UINT64_C(4) << 30)
#define VC_DEF_PINNED_QUOTA (UINT64_C(256) << 20)
#define VC_DEF_WEIGHT 100u
#define VC_WEIGHT_MAX 10000u
#define VC_IDLE_MAX (7u * 24 * 3600)

enum vc_gpu_health { VC_GPU_HEALTHY = 0, VC_GPU_UNHEALTHY = 1 };

struct vc_gpu {
	char uuid[VC_UUID_MAX];
	int index;                 /* NVML's index, or the inventory's order */
	char name[VC_GPU_NAME_MAX];
	uint64_t mem_total;
	char pci_bus_id[VC_BUSID_MAX];
	enum vc_gpu_health health;
	char health_reason[VC_REASON_MAX]; /* why it is unhealthy, else "" */
	bool drained;              /* by an administrator */
	bool present;              /* seen at the last scan */
	int numa_node;             /* the NUMA node of its PCI device, -1 when unknown */
};

enum vc_vm_state { VC_VM_STOPPED = 0, VC_VM_RUNNING = 1 };

struct vc_vm {
	char name[VC_VM_NAME_MAX + 1];
	char gpu[VC_UUID_MAX];     /* assigned (first) GPU's UUID, "" until placed */
	uint32_t ngpus;            /* GPUs it has, 1..VC_VM_GPUS_MAX; more than 1: whole GPUs */
	char more[VC_VM_GPUS_MAX - 1][VC_UUID_MAX]; /* its GPUs after the first, in device order */
	uint64_t mem_quota, pinned_quota;
	uint32_t weight, idle_timeout; /* idle_timeout: seconds, 0 = never */
	enum vc_vm_state state;
	pid_t server_pid;          /* while running */
	int64_t created_ms, started_ms;
};

struct vc_event {
	int64_t id, time_ms;
	char kind[32];
	char vm[VC_VM_NAME_MAX + 1];
	char gpu[VC_GPULIST_MAX];
	char message[VC_EVENT_MSG_MAX];
};

/** vc_gpu_eligible() - may take new VMs: healthy, present, not drained. */
static inline bool vc_gpu_eligible(const struct vc_gpu *g)
{
	return g->present && g->health == VC_GPU_HEALTHY && !g->drained;
}

/** vc_gpu_state_name() - "healthy", "unhealthy" or "drained" (docs/MGMT.md). */
static inline const char *vc_gpu_state_name(const struct vc_gpu *g)
{
	if (!g->present || g->health != VC_GPU_HEALTHY)
		return "unhealthy";
	return g->drained ? "drained" : "healthy";
}

/** vc_vm_gpu() - the UUID of @vm's GPU @k (0 .. ngpus - 1); "" until placed. */
static inline const char *vc_vm_gpu(const struct vc_vm *vm, unsigned k)
{
	return k == 0 ? vm->gpu : k < VC_VM_GPUS_MAX ? vm->more[k - 1] : "";
}

/** vc_vm_whole() - @vm takes its GPUs whole (it has more than one). */
static inline bool vc_vm_whole(const struct vc_vm *vm)
{
	return vm->ngpus > 1;
}

/**
 * vc_vm_promise() - the memory @vm promises on GPU @g, one of its GPUs: its
 * memory quota, or all of @g's memory when the VM has its GPUs whole.
 */
static inline uint64_t vc_vm_promise(const struct vc_vm *vm, const struct vc_gpu *g)
{
	return vc_vm_whole(vm) ? g->mem_total : vm->mem_quota;
}

/** vc_vm_gpu_pos() - which of @vm's GPUs @uuid is (0 ..), or -1 when none. */
int vc_vm_gpu_pos(const struct vc_vm *vm, const char *uuid);

/**
 * vc_vm_gpu_join() - @vm's GPUs as vcuda-server's --gpu takes them (UUIDs
 * joined by commas) into @out (@len, at least VC_GPULIST_MAX); "" until placed.
 */
void vc_vm_gpu_join(const struct vc_vm *vm, char *out, size_t len);

#endif /* VC_MGMT_MODEL_H */
