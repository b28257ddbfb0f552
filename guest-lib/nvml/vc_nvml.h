/* SPDX-License-Identifier: MIT */
/*
 * vc_nvml.h - the NVML interface as vcuda's guest libnvidia-ml.so.1 serves
 * it: the types and entry points it answers itself, declared here from
 * NVIDIA's public nvml.h (the interface: names, signatures, values and
 * structure layouts, each layout pinned with static_assert). Every other
 * entry point of NVML is exported too and answers NVML_ERROR_NOT_SUPPORTED
 * (the generated vc_nvml_unsup_gen.c, from guest-lib/nvml/nvml.symbols).
 * Test programs of the library include this header in nvml.h's place.
 */
#ifndef VC_NVML_H
#define VC_NVML_H

#include <assert.h>

typedef enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
	NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
	NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_DEPRECATED = 26,
	NVML_ERROR_NOT_READY = 27,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_INVALID_STATE = 29,
	NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
	NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE 32
#define NVML_DEVICE_PART_NUMBER_BUFFER_SIZE 80
#define NVML_VALUE_NOT_AVAILABLE (-1)
#define NVML_STRUCT_VERSION(data, ver) (unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U))

typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;
static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t as in nvml.h");

/* The first layout, which the unversioned nvmlDeviceGetPciInfo and
 * nvmlDeviceGetNvLinkRemotePciInfo still write: a program built against an
 * old nvml.h passes this much room. NVIDIA's library writes its bus id
 * (up to the NUL), domain, bus, device and PCI device id, nothing more. */
typedef struct {
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; /* the legacy form */
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	unsigned int reserved[4];
} nvmlPciInfo_v1_t;
static_assert(sizeof(nvmlPciInfo_v1_t) == 52, "nvmlPciInfo_t of the first nvml.h");

typedef struct nvmlMemory_st {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t as in nvml.h");
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

typedef struct nvmlUtilization_st {
	unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct nvmlBAR1Memory_st {
	unsigned long long bar1Total, bar1Free, bar1Used;
} nvmlBAR1Memory_t;

typedef struct nvmlProcessInfo_v1_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "as in nvml.h");

typedef struct nvmlProcessInfo_v2_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t, nvmlProcessInfo_t;
static_assert(sizeof(nvmlProcessInfo_t) == 24, "as in nvml.h");

typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
	unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessDetail_v1_t;
static_assert(sizeof(nvmlProcessDetail_v1_t) == 32, "as in nvml.h");

typedef struct {
	unsigned int version;
	unsigned int mode; /* 0 compute, 1 graphics, 2 MPS compute */
	unsigned int numProcArrayEntries;
	nvmlProcessDetail_v1_t *procArray;
} nvmlProcessDetailList_v1_t;
typedef nvmlProcessDetailList_v1_t nvmlProcessDetailList_t;
static_assert(sizeof(nvmlProcessDetailList_t) == 24, "as in nvml.h");
#define nvmlProcessDetailList_v1 NVML_STRUCT_VERSION(ProcessDetailList, 1)

/* Enums the value queries take or give: int-sized, their values NVML's. */
typedef unsigned int nvmlTemperatureSensors_t;    /* NVML_TEMPERATURE_GPU = 0 */
typedef unsigned int nvmlTemperatureThresholds_t;
typedef unsigned int nvmlClockType_t;             /* GRAPHICS 0, SM 1, MEM 2, VIDEO 3 */
typedef unsigned int nvmlPstates_t;               /* P0 = 0 ... P15, 32 unknown */
typedef unsigned int nvmlEnableState_t;           /* 0 disabled, 1 enabled */
typedef unsigned int nvmlComputeMode_t;
typedef unsigned int nvmlMemoryErrorType_t;
typedef unsigned int nvmlEccCounterType_t;
typedef unsigned int nvmlBrandType_t;
typedef unsigned int nvmlDeviceArchitecture_t;

#define NVML_INIT_FLAG_NO_GPUS 1
#define NVML_INIT_FLAG_NO_ATTACH 2

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);
nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
/* The private table nvidia-smi fetches first (internal.c). */
nvmlReturn_t nvmlInternalGetExportTable(const void **ppExportTable, const void *pExportTableId);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_v1_t *pci);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
						     nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
						     nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
						  nvmlProcessInfo_v1_t *infos);
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
						      nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
							nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, nvmlProcessDetailList_t *plist);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int *temp);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *pState);

/* Event sets (events.c): a VM receives no device events. */
typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef struct nvmlEventData_st {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;
static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t layout");
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms);
nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set);
nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes);

/* A versioned temperature query (NVML_STRUCT_VERSION(Temperature, 1)). */
typedef struct {
	unsigned int version;
	nvmlTemperatureSensors_t sensorType;
	int temperature;
} nvmlTemperature_t;
static_assert(sizeof(nvmlTemperature_t) == 12, "nvmlTemperature_t layout");
#define nvmlTemperature_v1 (unsigned int)(sizeof(nvmlTemperature_t) | (1u << 24))
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature);

/* MIG and virtualisation as a VM sees its GPU: no MIG devices, bare metal. */
typedef unsigned int nvmlGpuVirtualizationMode_t; /* NVML_GPU_VIRTUALIZATION_MODE_NONE = 0 */
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count);
nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice);
nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t device, nvmlGpuVirtualizationMode_t *pVirtualMode);

/* Field values (values.c): each field is one query of the host's NVML. */
typedef unsigned int nvmlValueType_t; /* NVML_VALUE_TYPE_DOUBLE 0 ... SIGNED_INT 5 */
typedef union nvmlValue_st {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
} nvmlValue_t;
static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t as in nvml.h");
typedef struct nvmlFieldValue_st {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	nvmlValueType_t valueType;
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;
static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t as in nvml.h");
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91
#define NVML_FI_DEV_NVLINK_GET_STATE 165
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values);

/* NVLink links (values.c), the host NVML's answers for the VM's GPU. */
#define NVML_NVLINK_CAP_P2P_SUPPORTED 0
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, unsigned int *isActive);
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link, unsigned int *version);
nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link, unsigned int capability,
					   unsigned int *capResult);
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link, unsigned int *type);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link, nvmlPciInfo_v1_t *pci);

/* NVLink fabric membership (device.c): a VM's GPU is in no fabric it can
 * use, as a GPU without NVSwitch: state NVML_GPU_FABRIC_STATE_NOT_SUPPORTED. */
#define NVML_GPU_FABRIC_UUID_LEN 16
#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
typedef unsigned char nvmlGpuFabricState_t;
typedef struct {
	unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
	nvmlReturn_t status;
	unsigned int cliqueId;
	nvmlGpuFabricState_t state;
} nvmlGpuFabricInfo_t;
static_assert(sizeof(nvmlGpuFabricInfo_t) == 28, "nvmlGpuFabricInfo_t as in nvml.h");
typedef struct {
	unsigned int version;
	unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
	nvmlReturn_t status;
	unsigned int cliqueId;
	nvmlGpuFabricState_t state;
	unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;
static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36, "nvmlGpuFabricInfo_v2_t as in nvml.h");
typedef struct {
	unsigned int version;
	unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
	nvmlReturn_t status;
	unsigned int cliqueId;
	nvmlGpuFabricState_t state;
	unsigned int healthMask;
	unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;
static_assert(sizeof(nvmlGpuFabricInfo_v3_t) == 40, "nvmlGpuFabricInfo_v3_t as in nvml.h");
typedef nvmlGpuFabricInfo_v3_t nvmlGpuFabricInfoV_t;
#define nvmlGpuFabricInfo_v2 NVML_STRUCT_VERSION(GpuFabricInfo, 2)
#define nvmlGpuFabricInfo_v3 NVML_STRUCT_VERSION(GpuFabricInfo, 3)
nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *gpuFabricInfo);
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *gpuFabricInfo);

/* Confidential computing (confcompute.c): off for a vcuda guest. */
#define NVML_CC_SYSTEM_CPU_CAPS_NONE 0
#define NVML_CC_SYSTEM_GPUS_CC_NOT_CAPABLE 0
#define NVML_CC_SYSTEM_DEVTOOLS_MODE_OFF 0
#define NVML_CC_SYSTEM_ENVIRONMENT_UNAVAILABLE 0
#define NVML_CC_SYSTEM_FEATURE_DISABLED 0
#define NVML_CC_SYSTEM_MULTIGPU_NONE 0
typedef struct nvmlConfComputeSystemCaps_st {
	unsigned int cpuCaps;
	unsigned int gpusCaps;
} nvmlConfComputeSystemCaps_t;
typedef struct nvmlConfComputeSystemState_st {
	unsigned int environment;
	unsigned int ccFeature;
	unsigned int devToolsMode;
} nvmlConfComputeSystemState_t;
typedef struct {
	unsigned int version;
	unsigned int environment;
	unsigned int ccFeature;
	unsigned int devToolsMode;
	unsigned int multiGpuMode;
} nvmlSystemConfComputeSettings_v1_t;
typedef nvmlSystemConfComputeSettings_v1_t nvmlSystemConfComputeSettings_t;
static_assert(sizeof(nvmlSystemConfComputeSettings_t) == 20, "as in nvml.h");
#define nvmlSystemConfComputeSettings_v1 NVML_STRUCT_VERSION(SystemConfComputeSettings, 1)
nvmlReturn_t nvmlSystemGetConfComputeState(nvmlConfComputeSystemState_t *state);
nvmlReturn_t nvmlSystemGetConfComputeSettings(nvmlSystemConfComputeSettings_t *settings);
nvmlReturn_t nvmlSystemGetConfComputeCapabilities(nvmlConfComputeSystemCaps_t *capabilities);
nvmlReturn_t nvmlDeviceGetConfComputeProtectedMemoryUsage(nvmlDevice_t device, nvmlMemory_t *memory);

/* Monitors' other values (values.c), the host NVML's answers. */
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, unsigned int counter, unsigned int *value);
nvmlReturn_t nvmlDeviceGetMinMaxFanSpeed(nvmlDevice_t device, unsigned int *minSpeed, unsigned int *maxSpeed);
nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t clockType, unsigned int clockId,
				unsigned int *clockMHz);
nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps,
				       unsigned int *averageLatency);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
				       unsigned int *isPending, unsigned int *failureOccurred);
nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t device, char *version, unsigned int length);

/* Not NVML's: marks this library as vcuda's (the server refuses to load it
 * as the host's NVML). Returns 1. */
int vcNvmlGuestLibrary(void);

typedef enum {
	NVML_P2P_CAPS_INDEX_READ = 0,
	NVML_P2P_CAPS_INDEX_WRITE = 1,
	NVML_P2P_CAPS_INDEX_NVLINK = 2,
	NVML_P2P_CAPS_INDEX_ATOMICS = 3,
	NVML_P2P_CAPS_INDEX_PCI = 4,
	NVML_P2P_CAPS_INDEX_UNKNOWN = 5
} nvmlGpuP2PCapsIndex_t;

typedef enum {
	NVML_P2P_STATUS_OK = 0,
	NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
	NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
	NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
	NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
	NVML_P2P_STATUS_NOT_SUPPORTED = 5,
	NVML_P2P_STATUS_UNKNOWN = 6
} nvmlGpuP2PStatus_t;

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t p2pIndex,
				    nvmlGpuP2PStatus_t *p2pStatus);

#endif /* VC_NVML_H */
