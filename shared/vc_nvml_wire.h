/* SPDX-License-Identifier: MIT */
/*
 * vc_nvml_wire.h - wire structs of the guest NVML's operations (vcNvml*,
 * opcodes in the generated vc_cuda_wire.h). The guest's libnvidia-ml.so.1
 * (guest-lib/nvml) opens a session of its own and takes the device facts the
 * CUDA driver knows from vcDriverInfo and vcDeviceInfo; these operations
 * add what only the server knows: the memory view within the VM's quota,
 * the VM's processes, and values the host's NVML reads (when the host has
 * one). Every request starts with a context id (struct vc_cu_prefix; the
 * guest NVML has none and sends 0). Part of the ABI: the build hashes this
 * file into VC_ABI_HASH.
 */
#ifndef VC_NVML_WIRE_H
#define VC_NVML_WIRE_H

#include <assert.h>
#include <stdint.h>

#include "vc_cuda_wire.h"

/* vcNvmlSystem: request struct vc_cu_prefix. */
struct vc_nv_rep_system {
	int32_t cuda_version;     /* the host driver's cuDriverGetVersion() */
	uint32_t host_nvml;       /* 1: the host's NVML answers vcNvmlValue */
	char driver_version[80];  /* the host NVML's, NUL-terminated; "" without one */
	char nvml_version[80];
};
static_assert(sizeof(struct vc_nv_rep_system) <= VC_CU_REP_MAX, "reply fits");

/* vcNvmlMemory and vcNvmlProcs: one device of the session. */
struct vc_nv_req_dev {
	uint64_t ctx;
	int32_t dev;  /* CUDA ordinal, < vcDriverInfo's device_count */
	uint32_t pad; /* 0 */
};

/*
 * The memory a guest sees: with a quota, total = min(quota, device total),
 * used = what the server's sessions hold (a VM: all its processes), free =
 * min(the device's free, total - used); without one, the device's total and
 * the same used and free.
 */
struct vc_nv_rep_memory {
	uint64_t total, free, used;
	uint64_t quota;        /* 0: none */
	uint64_t device_total; /* the device's own */
};
static_assert(sizeof(struct vc_nv_rep_memory) <= VC_CU_REP_MAX, "reply fits");

/* vcNvmlProcs: the server's open CUDA sessions (not NVML ones), one entry
 * per process, in the reply's data area (as many as fit; count says how
 * many are there, total how many exist). */
struct vc_nv_rep_procs {
	uint32_t count;
	uint32_t total;
};
struct vc_nv_proc {
	uint32_t pid;  /* as the guest's kernel (VM) or the client (host-local) said */
	uint32_t pad;
	uint64_t used; /* device memory its session holds */
};
static_assert(sizeof(struct vc_nv_proc) == 16, "ABI");
#define VC_NV_PROCS_MAX 512u

/*
 * vcNvmlValue: one value of the host's NVML for the session's device @dev,
 * by query (enum vc_nv_query) with up to two arguments (an NVML enum: a
 * sensor, a clock type, an error counter). The answer is the host NVML's
 * nvmlReturn_t in status (0: success; 3 NVML_ERROR_NOT_SUPPORTED where the
 * host has no NVML or lacks the entry point) and its outputs in v[] or s.
 * The CUDA result of the operation is 0 unless the request is malformed.
 */
struct vc_nv_req_value {
	uint64_t ctx;
	int32_t dev;
	uint32_t query;  /* enum vc_nv_query */
	uint32_t arg[2];
};
struct vc_nv_rep_value {
	int32_t status;  /* nvmlReturn_t */
	uint32_t pad;
	uint64_t v[4];
	char s[192];     /* string queries, NUL-terminated; VC_NV_RAW_* queries: the struct's bytes */
};
static_assert(sizeof(struct vc_nv_rep_value) <= VC_CU_REP_MAX, "reply fits");

/* The queries, each one NVML entry point of the host's (v[i]: its outputs
 * in order). */
enum vc_nv_query {
	VC_NV_UTILIZATION = 1,      /* nvmlDeviceGetUtilizationRates: gpu, memory */
	VC_NV_TEMPERATURE,          /* nvmlDeviceGetTemperature(arg0 sensor) */
	VC_NV_TEMP_THRESHOLD,       /* nvmlDeviceGetTemperatureThreshold(arg0) */
	VC_NV_FAN_SPEED,            /* nvmlDeviceGetFanSpeed */
	VC_NV_POWER_USAGE,          /* nvmlDeviceGetPowerUsage (mW) */
	VC_NV_POWER_LIMIT,          /* nvmlDeviceGetPowerManagementLimit */
	VC_NV_POWER_DEFAULT_LIMIT,  /* nvmlDeviceGetPowerManagementDefaultLimit */
	VC_NV_POWER_ENFORCED_LIMIT, /* nvmlDeviceGetEnforcedPowerLimit */
	VC_NV_POWER_CONSTRAINTS,    /* nvmlDeviceGetPowerManagementLimitConstraints: min, max */
	VC_NV_TOTAL_ENERGY,         /* nvmlDeviceGetTotalEnergyConsumption (mJ) */
	VC_NV_PERF_STATE,           /* nvmlDeviceGetPerformanceState */
	VC_NV_POWER_STATE,          /* nvmlDeviceGetPowerState */
	VC_NV_PERSISTENCE,          /* nvmlDeviceGetPersistenceMode */
	VC_NV_COMPUTE_MODE,         /* nvmlDeviceGetComputeMode */
	VC_NV_DISPLAY_MODE,         /* nvmlDeviceGetDisplayMode */
	VC_NV_DISPLAY_ACTIVE,       /* nvmlDeviceGetDisplayActive */
	VC_NV_ECC_MODE,             /* nvmlDeviceGetEccMode: current, pending */
	VC_NV_ECC_TOTAL,            /* nvmlDeviceGetTotalEccErrors(arg0 type, arg1 counter) */
	VC_NV_MIG_MODE,             /* nvmlDeviceGetMigMode: current, pending */
	VC_NV_CLOCK,                /* nvmlDeviceGetClockInfo(arg0 type) */
	VC_NV_MAX_CLOCK,            /* nvmlDeviceGetMaxClockInfo(arg0 type) */
	VC_NV_APP_CLOCK,            /* nvmlDeviceGetApplicationsClock(arg0 type) */
	VC_NV_CLOCK_EVENTS,         /* nvmlDeviceGetCurrentClocksEventReasons */
	VC_NV_THROTTLE_REASONS,     /* nvmlDeviceGetCurrentClocksThrottleReasons */
	VC_NV_BRAND,                /* nvmlDeviceGetBrand */
	VC_NV_ARCHITECTURE,         /* nvmlDeviceGetArchitecture */
	VC_NV_PCIE_GEN,             /* nvmlDeviceGetCurrPcieLinkGeneration */
	VC_NV_PCIE_MAX_GEN,         /* nvmlDeviceGetMaxPcieLinkGeneration */
	VC_NV_PCIE_WIDTH,           /* nvmlDeviceGetCurrPcieLinkWidth */
	VC_NV_PCIE_MAX_WIDTH,       /* nvmlDeviceGetMaxPcieLinkWidth */
	VC_NV_ENCODER_UTIL,         /* nvmlDeviceGetEncoderUtilization: util, period */
	VC_NV_DECODER_UTIL,         /* nvmlDeviceGetDecoderUtilization: util, period */
	VC_NV_BAR1,                 /* nvmlDeviceGetBAR1MemoryInfo: total, free, used */
	VC_NV_PCI_IDS,              /* nvmlDeviceGetPciInfo_v3: pciDeviceId, pciSubSystemId */
	VC_NV_SERIAL,               /* nvmlDeviceGetSerial: s */
	VC_NV_VBIOS,                /* nvmlDeviceGetVbiosVersion: s */
	VC_NV_BOARD_PART,           /* nvmlDeviceGetBoardPartNumber: s */
	VC_NV_NUM_CORES,            /* nvmlDeviceGetNumGpuCores */
	VC_NV_BUS_WIDTH,            /* nvmlDeviceGetMemoryBusWidth */
	VC_NV_P2P_STATUS,           /* nvmlDeviceGetP2PStatus(this device, the session's device arg1,
				       arg0 caps index): status */
	VC_NV_FIELD,                /* nvmlDeviceGetFieldValues of one field (arg0 fieldId, arg1
				       scopeId): status the field's nvmlReturn (the call's own code
				       when the call fails); v[0] the value's 8 bytes (nvmlValue_t),
				       v[1] valueType, v[2] timestamp, v[3] latencyUsec */
	VC_NV_NVLINK_STATE,         /* nvmlDeviceGetNvLinkState(arg0 link) */
	VC_NV_NVLINK_VERSION,       /* nvmlDeviceGetNvLinkVersion(arg0 link) */
	VC_NV_NVLINK_CAP,           /* nvmlDeviceGetNvLinkCapability(arg0 link, arg1 capability) */
	VC_NV_NVLINK_REMOTE_TYPE,   /* nvmlDeviceGetNvLinkRemoteDeviceType(arg0 link) */
	VC_NV_NVLINK_REMOTE_PCI,    /* nvmlDeviceGetNvLinkRemotePciInfo_v2(arg0 link): v[0] domain,
				       v[1] bus, v[2] device, v[3] pciDeviceId | pciSubSystemId << 32,
				       s busId (32 bytes), then busIdLegacy (16) */
	VC_NV_PCIE_REPLAY,          /* nvmlDeviceGetPcieReplayCounter */
	VC_NV_PCIE_MAX_SPEED,       /* nvmlDeviceGetPcieLinkMaxSpeed */
	VC_NV_PCIE_SPEED,           /* nvmlDeviceGetPcieSpeed */
	VC_NV_PCIE_THROUGHPUT,      /* nvmlDeviceGetPcieThroughput(arg0 counter) */
	VC_NV_NUM_FANS,             /* nvmlDeviceGetNumFans */
	VC_NV_FAN_SPEED_OF,         /* nvmlDeviceGetFanSpeed_v2(arg0 fan) */
	VC_NV_TARGET_FAN_SPEED,     /* nvmlDeviceGetTargetFanSpeed(arg0 fan) */
	VC_NV_MIN_MAX_FAN,          /* nvmlDeviceGetMinMaxFanSpeed: min, max */
	VC_NV_POWER_SOURCE,         /* nvmlDeviceGetPowerSource */
	VC_NV_MULTI_GPU_BOARD,      /* nvmlDeviceGetMultiGpuBoard */
	VC_NV_BOARD_ID,             /* nvmlDeviceGetBoardId */
	VC_NV_BUS_TYPE,             /* nvmlDeviceGetBusType */
	VC_NV_ADAPTIVE_CLOCK,       /* nvmlDeviceGetAdaptiveClockInfoStatus */
	VC_NV_CLOCK_OF,             /* nvmlDeviceGetClock(arg0 clock type, arg1 clock id) */
	VC_NV_MAX_BOOST_CLOCK,      /* nvmlDeviceGetMaxCustomerBoostClock(arg0 clock type) */
	VC_NV_AUTO_BOOST,           /* nvmlDeviceGetAutoBoostedClocksEnabled: enabled, default */
	VC_NV_GSP_MODE,             /* nvmlDeviceGetGspFirmwareMode: enabled, default */
	VC_NV_JPG_UTIL,             /* nvmlDeviceGetJpgUtilization: util, period */
	VC_NV_OFA_UTIL,             /* nvmlDeviceGetOfaUtilization: util, period */
	VC_NV_ENCODER_CAPACITY,     /* nvmlDeviceGetEncoderCapacity(arg0 encoder type) */
	VC_NV_ENCODER_STATS,        /* nvmlDeviceGetEncoderStats: sessions, fps, latency */
	VC_NV_REMAPPED_ROWS,        /* nvmlDeviceGetRemappedRows: correctable, uncorrectable,
				       pending, failed */
	VC_NV_INFOROM_IMAGE,        /* nvmlDeviceGetInforomImageVersion: s */
	VC_NV_SUPPORTED_CLOCK_EVENTS, /* nvmlDeviceGetSupportedClocksEventReasons */
	VC_NV_SUPPORTED_THROTTLE,   /* nvmlDeviceGetSupportedClocksThrottleReasons */
	VC_NV_GPU_MAX_PCIE_GEN,     /* nvmlDeviceGetGpuMaxPcieLinkGeneration */
	VC_NV_ACCOUNTING_MODE,      /* nvmlDeviceGetAccountingMode */
	VC_NV_ACCOUNTING_BUFFER,    /* nvmlDeviceGetAccountingBufferSize */
	VC_NV_MODULE_ID,            /* nvmlDeviceGetModuleId */
	VC_NV_DEFAULT_APP_CLOCK,    /* nvmlDeviceGetDefaultApplicationsClock(arg0 type) */
	VC_NV_MEM_ERROR_COUNTER,    /* nvmlDeviceGetMemoryErrorCounter(arg0 error type, arg1 counter
				       type | location << 16) */
	VC_NV_INFOROM_VERSION,      /* nvmlDeviceGetInforomVersion(arg0 object): s */
	VC_NV_GSP_VERSION,          /* nvmlDeviceGetGspFirmwareVersion: s (its 64-byte buffer) */
	VC_NV_VALIDATE_INFOROM,     /* nvmlDeviceValidateInforom: nothing out */
	/* A struct out, its bytes in s: arg0 its size (at most sizeof s), arg1
	 * its version word (NVML_STRUCT_VERSION: the size | version << 24), or
	 * 0 for a struct without one. */
	VC_NV_RAW_FBC_STATS,        /* nvmlDeviceGetFBCStats (12 bytes) */
	VC_NV_RAW_REMAP_HISTOGRAM,  /* nvmlDeviceGetRowRemapperHistogram (20 bytes) */
	VC_NV_RAW_C2C_MODE,         /* nvmlDeviceGetC2cModeInfoV (4 bytes) */
	VC_NV_RAW_SRAM_ECC,         /* nvmlDeviceGetSramEccErrorStatus (versioned) */
	VC_NV_RAW_PDI,              /* nvmlDeviceGetPdi (versioned) */
	VC_NV_RAW_ADDRESSING_MODE,  /* nvmlDeviceGetAddressingMode (versioned) */
	VC_NV_RAW_CAPABILITIES,     /* nvmlDeviceGetCapabilities (versioned) */
	VC_NV_RAW_MARGIN_TEMP,      /* nvmlDeviceGetMarginTemperature (versioned) */
	VC_NV_RAW_REPAIR_STATUS,    /* nvmlDeviceGetRepairStatus (versioned) */
	VC_NV_RAW_PCI_INFO_EXT,     /* nvmlDeviceGetPciInfoExt (versioned) */
	VC_NV_RAW_REMAPPED_ROWS,    /* nvmlDeviceGetRemappedRows_v2 (24 bytes) */
	VC_NV_RAW_UNREPAIRABLE,     /* nvmlDeviceGetUnrepairableMemoryFlag_v1 (4 bytes) */
	VC_NV_QUERY_END_
};

#endif /* VC_NVML_WIRE_H */
