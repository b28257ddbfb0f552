/* SPDX-License-Identifier: MIT */
/*
 * values.c - the guest NVML's queries that only the host's NVML can answer
 * (utilisation, temperature, power, clocks, modes, PCIe link, ECC, field
 * values, NVLink links): each
 * is one vcNvmlValue of the server, which calls the same entry point of the
 * host's NVML for the VM's GPU (host-backend/nvml/host_nvml.c) and hands
 * back its nvmlReturn_t and outputs. A host without NVML answers
 * NVML_ERROR_NOT_SUPPORTED, which nvidia-smi shows as N/A.
 */
#include <string.h>

#include "nvml_guest.h"

/* Query @q of @device with arguments @a0, @a1 into @rp: NVML's code. */
static nvmlReturn_t value(nvmlDevice_t device, uint32_t q, uint32_t a0, uint32_t a1, struct vc_nv_rep_value *rp)
{
	unsigned i;
	nvmlReturn_t rc = vc_nvml_device(device, &i);
	struct vc_nv_req_value rq = {.dev = (int32_t)i, .query = q, .arg = {a0, a1}};

	if (rc)
		return rc;
	rc = vc_nvml_call(VC_CU_vcNvmlValue, &rq, sizeof(rq), rp, sizeof(*rp), NULL, 0, NULL);
	return rc ? rc : (nvmlReturn_t)rp->status;
}

/* One unsigned int out. */
#define VALUE_U1(name, q, type)                                                    \
	nvmlReturn_t name(nvmlDevice_t device, type *out);                         \
	nvmlReturn_t name(nvmlDevice_t device, type *out)                          \
	{                                                                          \
		struct vc_nv_rep_value rp;                                         \
		nvmlReturn_t rc = value(device, q, 0, 0, &rp);                     \
		if (rc)                                                            \
			return rc;                                                 \
		if (!out)                                                          \
			return NVML_ERROR_INVALID_ARGUMENT;                        \
		*out = (type)rp.v[0];                                              \
		return NVML_SUCCESS;                                               \
	}

/* An enum argument, one unsigned int out. */
#define VALUE_A_U1(name, q, atype)                                                 \
	nvmlReturn_t name(nvmlDevice_t device, atype arg, unsigned int *out);      \
	nvmlReturn_t name(nvmlDevice_t device, atype arg, unsigned int *out)       \
	{                                                                          \
		struct vc_nv_rep_value rp;                                         \
		nvmlReturn_t rc = value(device, q, (uint32_t)arg, 0, &rp);         \
		if (rc)                                                            \
			return rc;                                                 \
		if (!out)                                                          \
			return NVML_ERROR_INVALID_ARGUMENT;                        \
		*out = (unsigned int)rp.v[0];                                      \
		return NVML_SUCCESS;                                               \
	}

/* Two enum arguments, one unsigned int out. */
#define VALUE_A2_U1(name, q, atype, btype)                                             \
	nvmlReturn_t name(nvmlDevice_t device, atype a, btype b, unsigned int *out);   \
	nvmlReturn_t name(nvmlDevice_t device, atype a, btype b, unsigned int *out)    \
	{                                                                              \
		struct vc_nv_rep_value rp;                                             \
		nvmlReturn_t rc = value(device, q, (uint32_t)a, (uint32_t)b, &rp);     \
		if (rc)                                                                \
			return rc;                                                     \
		if (!out)                                                              \
			return NVML_ERROR_INVALID_ARGUMENT;                            \
		*out = (unsigned int)rp.v[0];                                          \
		return NVML_SUCCESS;                                                   \
	}

/* Two unsigned ints out. */
#define VALUE_U2(name, q, type)                                                    \
	nvmlReturn_t name(nvmlDevice_t device, type *a, type *b);                  \
	nvmlReturn_t name(nvmlDevice_t device, type *a, type *b)                   \
	{                                                                          \
		struct vc_nv_rep_value rp;                                         \
		nvmlReturn_t rc = value(device, q, 0, 0, &rp);                     \
		if (rc)                                                            \
			return rc;                                                 \
		if (!a || !b)                                                      \
			return NVML_ERROR_INVALID_ARGUMENT;                        \
		*a = (type)rp.v[0];                                                \
		*b = (type)rp.v[1];                                                \
		return NVML_SUCCESS;                                               \
	}

/* One unsigned long long out. */
#define VALUE_ULL(name, q)                                                         \
	nvmlReturn_t name(nvmlDevice_t device, unsigned long long *out);           \
	nvmlReturn_t name(nvmlDevice_t device, unsigned long long *out)            \
	{                                                                          \
		struct vc_nv_rep_value rp;                                         \
		nvmlReturn_t rc = value(device, q, 0, 0, &rp);                     \
		if (rc)                                                            \
			return rc;                                                 \
		if (!out)                                                          \
			return NVML_ERROR_INVALID_ARGUMENT;                        \
		*out = rp.v[0];                                                    \
		return NVML_SUCCESS;                                               \
	}

/* A string out. */
#define VALUE_STR(name, q)                                                         \
	nvmlReturn_t name(nvmlDevice_t device, char *out, unsigned int length);    \
	nvmlReturn_t name(nvmlDevice_t device, char *out, unsigned int length)     \
	{                                                                          \
		struct vc_nv_rep_value rp;                                         \
		nvmlReturn_t rc = value(device, q, 0, 0, &rp);                     \
		if (rc)                                                            \
			return rc;                                                 \
		rp.s[sizeof(rp.s) - 1] = 0;                                        \
		return vc_nvml_copy_str(out, length, rp.s);                        \
	}

VALUE_A_U1(nvmlDeviceGetTemperature, VC_NV_TEMPERATURE, nvmlTemperatureSensors_t)
VALUE_A_U1(nvmlDeviceGetTemperatureThreshold, VC_NV_TEMP_THRESHOLD, nvmlTemperatureThresholds_t)
VALUE_U1(nvmlDeviceGetFanSpeed, VC_NV_FAN_SPEED, unsigned int)
VALUE_U1(nvmlDeviceGetPowerUsage, VC_NV_POWER_USAGE, unsigned int)
VALUE_U1(nvmlDeviceGetPowerManagementLimit, VC_NV_POWER_LIMIT, unsigned int)
VALUE_U1(nvmlDeviceGetPowerManagementDefaultLimit, VC_NV_POWER_DEFAULT_LIMIT, unsigned int)
VALUE_U1(nvmlDeviceGetEnforcedPowerLimit, VC_NV_POWER_ENFORCED_LIMIT, unsigned int)
VALUE_U2(nvmlDeviceGetPowerManagementLimitConstraints, VC_NV_POWER_CONSTRAINTS, unsigned int)
VALUE_ULL(nvmlDeviceGetTotalEnergyConsumption, VC_NV_TOTAL_ENERGY)
VALUE_U1(nvmlDeviceGetPerformanceState, VC_NV_PERF_STATE, nvmlPstates_t)
VALUE_U1(nvmlDeviceGetPowerState, VC_NV_POWER_STATE, nvmlPstates_t)
VALUE_U1(nvmlDeviceGetPersistenceMode, VC_NV_PERSISTENCE, nvmlEnableState_t)
VALUE_U1(nvmlDeviceGetComputeMode, VC_NV_COMPUTE_MODE, nvmlComputeMode_t)
VALUE_U1(nvmlDeviceGetDisplayMode, VC_NV_DISPLAY_MODE, nvmlEnableState_t)
VALUE_U1(nvmlDeviceGetDisplayActive, VC_NV_DISPLAY_ACTIVE, nvmlEnableState_t)
VALUE_U2(nvmlDeviceGetEccMode, VC_NV_ECC_MODE, nvmlEnableState_t)
VALUE_U2(nvmlDeviceGetMigMode, VC_NV_MIG_MODE, unsigned int)
VALUE_A_U1(nvmlDeviceGetClockInfo, VC_NV_CLOCK, nvmlClockType_t)
VALUE_A_U1(nvmlDeviceGetMaxClockInfo, VC_NV_MAX_CLOCK, nvmlClockType_t)
VALUE_A_U1(nvmlDeviceGetApplicationsClock, VC_NV_APP_CLOCK, nvmlClockType_t)
VALUE_ULL(nvmlDeviceGetCurrentClocksEventReasons, VC_NV_CLOCK_EVENTS)
VALUE_ULL(nvmlDeviceGetCurrentClocksThrottleReasons, VC_NV_THROTTLE_REASONS)
VALUE_U1(nvmlDeviceGetBrand, VC_NV_BRAND, nvmlBrandType_t)
VALUE_U1(nvmlDeviceGetArchitecture, VC_NV_ARCHITECTURE, nvmlDeviceArchitecture_t)
VALUE_U1(nvmlDeviceGetCurrPcieLinkGeneration, VC_NV_PCIE_GEN, unsigned int)
VALUE_U1(nvmlDeviceGetMaxPcieLinkGeneration, VC_NV_PCIE_MAX_GEN, unsigned int)
VALUE_U1(nvmlDeviceGetCurrPcieLinkWidth, VC_NV_PCIE_WIDTH, unsigned int)
VALUE_U1(nvmlDeviceGetMaxPcieLinkWidth, VC_NV_PCIE_MAX_WIDTH, unsigned int)
VALUE_U2(nvmlDeviceGetEncoderUtilization, VC_NV_ENCODER_UTIL, unsigned int)
VALUE_U2(nvmlDeviceGetDecoderUtilization, VC_NV_DECODER_UTIL, unsigned int)
VALUE_U1(nvmlDeviceGetNumGpuCores, VC_NV_NUM_CORES, unsigned int)
VALUE_U1(nvmlDeviceGetMemoryBusWidth, VC_NV_BUS_WIDTH, unsigned int)
VALUE_STR(nvmlDeviceGetSerial, VC_NV_SERIAL)
VALUE_STR(nvmlDeviceGetVbiosVersion, VC_NV_VBIOS)
VALUE_STR(nvmlDeviceGetBoardPartNumber, VC_NV_BOARD_PART)

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc = value(device, VC_NV_UTILIZATION, 0, 0, &rp);

	if (rc)
		return rc;
	if (!utilization)
		return NVML_ERROR_INVALID_ARGUMENT;
	utilization->gpu = (unsigned)rp.v[0];
	utilization->memory = (unsigned)rp.v[1];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
					 nvmlEccCounterType_t counterType, unsigned long long *eccCounts);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
					 nvmlEccCounterType_t counterType, unsigned long long *eccCounts)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc = value(device, VC_NV_ECC_TOTAL, errorType, counterType, &rp);

	if (rc)
		return rc;
	if (!eccCounts)
		return NVML_ERROR_INVALID_ARGUMENT;
	*eccCounts = rp.v[0];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc = value(device, VC_NV_BAR1, 0, 0, &rp);

	if (rc)
		return rc;
	if (!bar1Memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	bar1Memory->bar1Total = rp.v[0];
	bar1Memory->bar1Free = rp.v[1];
	bar1Memory->bar1Used = rp.v[2];
	return NVML_SUCCESS;
}

/* Peer-to-peer status between two of the VM's devices, as the host's NVML
 * gives it for the two physical GPUs (so it agrees with cuDeviceCanAccessPeer,
 * which the host's driver answers too). NCCL asks it of every pair, a device
 * with itself included, and fails its set-up unless each answers. */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t p2pIndex,
				    nvmlGpuP2PStatus_t *p2pStatus)
{
	struct vc_nv_rep_value rp;
	unsigned other;
	nvmlReturn_t rc = vc_nvml_device(device2, &other);

	if (rc)
		return rc;
	if (!p2pStatus)
		return NVML_ERROR_INVALID_ARGUMENT;
	if ((rc = value(device1, VC_NV_P2P_STATUS, (uint32_t)p2pIndex, other, &rp)))
		return rc;
	*p2pStatus = (nvmlGpuP2PStatus_t)rp.v[0];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc;

	if (!temperature)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (temperature->version != nvmlTemperature_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if ((rc = value(device, VC_NV_TEMPERATURE, temperature->sensorType, 0, &rp)))
		return rc;
	temperature->temperature = (int)rp.v[0];
	return NVML_SUCCESS;
}

/*
 * Field values: each field one query of the host's NVML for the VM's GPU
 * (NCCL asks one NVLink's state at a time; monitors ask a few dozen
 * fields), so every field gets the host's own code and value. The call
 * succeeds when the device and the array are good; a field the host lacks
 * says so in its nvmlReturn, as natively. A failure of the transport fails
 * the call.
 */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
	unsigned idx;
	nvmlReturn_t rc = vc_nvml_device(device, &idx);

	if (rc)
		return rc;
	if (!values || valuesCount < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < valuesCount; i++) {
		struct vc_nv_req_value rq = {.dev = (int32_t)idx, .query = VC_NV_FIELD,
					     .arg = {values[i].fieldId, values[i].scopeId}};
		struct vc_nv_rep_value rp;
		nvmlFieldValue_t *f = &values[i];

		rc = vc_nvml_call(VC_CU_vcNvmlValue, &rq, sizeof(rq), &rp, sizeof(rp), NULL, 0, NULL);
		if (rc)
			return rc;
		f->nvmlReturn = (nvmlReturn_t)rp.status;
		if (rp.status != NVML_SUCCESS)
			continue;
		memcpy(&f->value, &rp.v[0], sizeof(f->value));
		f->valueType = (nvmlValueType_t)rp.v[1];
		f->timestamp = (long long)rp.v[2];
		f->latencyUsec = (long long)rp.v[3];
	}
	return NVML_SUCCESS;
}

/*
 * NVLink, link by link, as the host's NVML sees the VM's GPU: NCCL finds
 * its peers this way (a link that can carry P2P, is up, and whose far end
 * is another of the process's GPUs or an NVSwitch), and without the links
 * it takes the GPUs for PCIe peers and moves data through host memory.
 * Counters, utilisation and every setter stay refused.
 */
VALUE_A_U1(nvmlDeviceGetNvLinkState, VC_NV_NVLINK_STATE, unsigned int)
VALUE_A_U1(nvmlDeviceGetNvLinkVersion, VC_NV_NVLINK_VERSION, unsigned int)
VALUE_A_U1(nvmlDeviceGetNvLinkRemoteDeviceType, VC_NV_NVLINK_REMOTE_TYPE, unsigned int)

VALUE_A2_U1(nvmlDeviceGetNvLinkCapability, VC_NV_NVLINK_CAP, unsigned int, unsigned int)

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc = value(device, VC_NV_NVLINK_REMOTE_PCI, link, 0, &rp);

	if (rc)
		return rc;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* Each field, and each string up to its NUL, as NVML writes them. */
	pci->domain = (unsigned int)rp.v[0];
	pci->bus = (unsigned int)rp.v[1];
	pci->device = (unsigned int)rp.v[2];
	pci->pciDeviceId = (unsigned int)rp.v[3];
	pci->pciSubSystemId = (unsigned int)(rp.v[3] >> 32);
	rp.s[sizeof(pci->busId) - 1] = 0;
	memcpy(pci->busId, rp.s, strlen(rp.s) + 1);
	rp.s[sizeof(pci->busId) + sizeof(pci->busIdLegacy) - 1] = 0;
	memcpy(pci->busIdLegacy, rp.s + sizeof(pci->busId), strlen(rp.s + sizeof(pci->busId)) + 1);
	return NVML_SUCCESS;
}

/* The unversioned name NCCL looks up writes the first layout, as NVML's
 * does (where NCCL reads a bus id it finds none, natively too). */
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link, nvmlPciInfo_v1_t *pci)
{
	nvmlPciInfo_t full;
	nvmlReturn_t rc;

	if (!pci)
		return nvmlDeviceGetNvLinkRemotePciInfo_v2(device, link, NULL);
	if ((rc = nvmlDeviceGetNvLinkRemotePciInfo_v2(device, link, &full)))
		return rc;
	vc_nvml_pci_v1(&full, pci);
	return NVML_SUCCESS;
}

/* What monitors (nvitop, gpustat, DCGM's exporters, nvidia-smi -q) read
 * besides: PCIe speed and traffic, fans, board and bus, clocks, the media
 * engines, remapped memory rows, the InfoROM image. */
VALUE_U1(nvmlDeviceGetPcieReplayCounter, VC_NV_PCIE_REPLAY, unsigned int)
VALUE_U1(nvmlDeviceGetPcieLinkMaxSpeed, VC_NV_PCIE_MAX_SPEED, unsigned int)
VALUE_U1(nvmlDeviceGetPcieSpeed, VC_NV_PCIE_SPEED, unsigned int)
VALUE_A_U1(nvmlDeviceGetPcieThroughput, VC_NV_PCIE_THROUGHPUT, unsigned int)
VALUE_U1(nvmlDeviceGetNumFans, VC_NV_NUM_FANS, unsigned int)
VALUE_A_U1(nvmlDeviceGetFanSpeed_v2, VC_NV_FAN_SPEED_OF, unsigned int)
VALUE_A_U1(nvmlDeviceGetTargetFanSpeed, VC_NV_TARGET_FAN_SPEED, unsigned int)
VALUE_U2(nvmlDeviceGetMinMaxFanSpeed, VC_NV_MIN_MAX_FAN, unsigned int)
VALUE_U1(nvmlDeviceGetPowerSource, VC_NV_POWER_SOURCE, unsigned int)
VALUE_U1(nvmlDeviceGetMultiGpuBoard, VC_NV_MULTI_GPU_BOARD, unsigned int)
VALUE_U1(nvmlDeviceGetBoardId, VC_NV_BOARD_ID, unsigned int)
VALUE_U1(nvmlDeviceGetBusType, VC_NV_BUS_TYPE, unsigned int)
VALUE_U1(nvmlDeviceGetAdaptiveClockInfoStatus, VC_NV_ADAPTIVE_CLOCK, unsigned int)
VALUE_A_U1(nvmlDeviceGetMaxCustomerBoostClock, VC_NV_MAX_BOOST_CLOCK, nvmlClockType_t)
VALUE_U2(nvmlDeviceGetAutoBoostedClocksEnabled, VC_NV_AUTO_BOOST, nvmlEnableState_t)
VALUE_U2(nvmlDeviceGetGspFirmwareMode, VC_NV_GSP_MODE, unsigned int)
VALUE_U2(nvmlDeviceGetJpgUtilization, VC_NV_JPG_UTIL, unsigned int)
VALUE_U2(nvmlDeviceGetOfaUtilization, VC_NV_OFA_UTIL, unsigned int)
VALUE_A_U1(nvmlDeviceGetEncoderCapacity, VC_NV_ENCODER_CAPACITY, unsigned int)
VALUE_STR(nvmlDeviceGetInforomImageVersion, VC_NV_INFOROM_IMAGE)

VALUE_A2_U1(nvmlDeviceGetClock, VC_NV_CLOCK_OF, nvmlClockType_t, unsigned int)

nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps,
				       unsigned int *averageLatency);
nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps,
				       unsigned int *averageLatency)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc = value(device, VC_NV_ENCODER_STATS, 0, 0, &rp);

	if (rc)
		return rc;
	if (!sessionCount || !averageFps || !averageLatency)
		return NVML_ERROR_INVALID_ARGUMENT;
	*sessionCount = (unsigned int)rp.v[0];
	*averageFps = (unsigned int)rp.v[1];
	*averageLatency = (unsigned int)rp.v[2];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
				       unsigned int *isPending, unsigned int *failureOccurred);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
				       unsigned int *isPending, unsigned int *failureOccurred)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc = value(device, VC_NV_REMAPPED_ROWS, 0, 0, &rp);

	if (rc)
		return rc;
	if (!corrRows || !uncRows || !isPending || !failureOccurred)
		return NVML_ERROR_INVALID_ARGUMENT;
	*corrRows = (unsigned int)rp.v[0];
	*uncRows = (unsigned int)rp.v[1];
	*isPending = (unsigned int)rp.v[2];
	*failureOccurred = (unsigned int)rp.v[3];
	return NVML_SUCCESS;
}

/*
 * What nvidia-smi -q shows besides (tests/gpu/nvml-smi.sh compares it with
 * the host's): the clock event reasons a GPU supports, memory errors by
 * location, the InfoROM and GSP firmware versions, accounting and module
 * ids, and the structs below, each the host's answer for the VM's GPU.
 */
VALUE_ULL(nvmlDeviceGetSupportedClocksEventReasons, VC_NV_SUPPORTED_CLOCK_EVENTS)
VALUE_ULL(nvmlDeviceGetSupportedClocksThrottleReasons, VC_NV_SUPPORTED_THROTTLE)
VALUE_U1(nvmlDeviceGetGpuMaxPcieLinkGeneration, VC_NV_GPU_MAX_PCIE_GEN, unsigned int)
VALUE_U1(nvmlDeviceGetAccountingMode, VC_NV_ACCOUNTING_MODE, nvmlEnableState_t)
VALUE_U1(nvmlDeviceGetAccountingBufferSize, VC_NV_ACCOUNTING_BUFFER, unsigned int)
VALUE_U1(nvmlDeviceGetModuleId, VC_NV_MODULE_ID, unsigned int)
VALUE_A_U1(nvmlDeviceGetDefaultApplicationsClock, VC_NV_DEFAULT_APP_CLOCK, nvmlClockType_t)

nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
					     nvmlEccCounterType_t counterType, unsigned int locationType,
					     unsigned long long *count);
nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
					     nvmlEccCounterType_t counterType, unsigned int locationType,
					     unsigned long long *count)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc;

	/* The counter type and the location share one argument of the query. */
	if (counterType > 0xffffu || locationType > 0xffffu)
		return NVML_ERROR_INVALID_ARGUMENT;
	if ((rc = value(device, VC_NV_MEM_ERROR_COUNTER, errorType, counterType | locationType << 16, &rp)))
		return rc;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = rp.v[0];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t device, unsigned int object, char *version, unsigned int length);
nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t device, unsigned int object, char *version, unsigned int length)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc = value(device, VC_NV_INFOROM_VERSION, object, 0, &rp);

	if (rc)
		return rc;
	rp.s[sizeof(rp.s) - 1] = 0;
	return vc_nvml_copy_str(version, length, rp.s);
}

/* The caller's buffer is NVML_GSP_FIRMWARE_VERSION_BUF_SIZE (64) bytes. */
nvmlReturn_t nvmlDeviceGetGspFirmwareVersion(nvmlDevice_t device, char *version);
nvmlReturn_t nvmlDeviceGetGspFirmwareVersion(nvmlDevice_t device, char *version)
{
	struct vc_nv_rep_value rp;
	nvmlReturn_t rc = value(device, VC_NV_GSP_VERSION, 0, 0, &rp);

	if (rc)
		return rc;
	rp.s[63] = 0;
	return vc_nvml_copy_str(version, 64, rp.s);
}

nvmlReturn_t nvmlDeviceValidateInforom(nvmlDevice_t device);
nvmlReturn_t nvmlDeviceValidateInforom(nvmlDevice_t device)
{
	struct vc_nv_rep_value rp;

	return value(device, VC_NV_VALIDATE_INFOROM, 0, 0, &rp);
}

/*
 * A struct in NVML's own layout, @size bytes at @out, as the host's NVML
 * writes it. A versioned one (@versioned) starts with NVML's version word,
 * which names its size (NVML_STRUCT_VERSION); the host's NVML accepts or
 * refuses that version, so only a size it knows is ever written here.
 */
static nvmlReturn_t raw(nvmlDevice_t device, uint32_t q, void *out, uint32_t size, int versioned)
{
	struct vc_nv_rep_value rp;
	uint32_t ver = 0;
	unsigned idx;
	nvmlReturn_t rc = vc_nvml_device(device, &idx);

	if (rc)
		return rc;
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (versioned) {
		memcpy(&ver, out, sizeof(ver));
		size = ver & 0xffffffu;
		if (size < sizeof(ver) || size > sizeof(rp.s) || !(ver >> 24))
			return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	}
	if ((rc = value(device, q, size, ver, &rp)))
		return rc;
	memcpy(out, rp.s, size);
	return NVML_SUCCESS;
}

/* Structs of a fixed layout: nvmlFBCStats_t (three unsigned ints),
 * nvmlRowRemapperHistogramValues_t (five), nvmlC2cModeInfo_v1_t (one),
 * nvmlRemappedRowsInfo_v2_t (six), nvmlUnrepairableMemoryStatus_v1_t (one);
 * the others begin with their version word. */
#define VALUE_RAW(name, q, size, versioned)                                       \
	nvmlReturn_t name(nvmlDevice_t device, void *out);                        \
	nvmlReturn_t name(nvmlDevice_t device, void *out)                         \
	{                                                                         \
		return raw(device, q, out, size, versioned);                      \
	}

VALUE_RAW(nvmlDeviceGetFBCStats, VC_NV_RAW_FBC_STATS, 12, 0)
VALUE_RAW(nvmlDeviceGetRowRemapperHistogram, VC_NV_RAW_REMAP_HISTOGRAM, 20, 0)
VALUE_RAW(nvmlDeviceGetC2cModeInfoV, VC_NV_RAW_C2C_MODE, 4, 0)
VALUE_RAW(nvmlDeviceGetSramEccErrorStatus, VC_NV_RAW_SRAM_ECC, 0, 1)
VALUE_RAW(nvmlDeviceGetPdi, VC_NV_RAW_PDI, 0, 1)
VALUE_RAW(nvmlDeviceGetAddressingMode, VC_NV_RAW_ADDRESSING_MODE, 0, 1)
VALUE_RAW(nvmlDeviceGetCapabilities, VC_NV_RAW_CAPABILITIES, 0, 1)
VALUE_RAW(nvmlDeviceGetMarginTemperature, VC_NV_RAW_MARGIN_TEMP, 0, 1)
VALUE_RAW(nvmlDeviceGetRepairStatus, VC_NV_RAW_REPAIR_STATUS, 0, 1)
VALUE_RAW(nvmlDeviceGetPciInfoExt, VC_NV_RAW_PCI_INFO_EXT, 0, 1)
VALUE_RAW(nvmlDeviceGetRemappedRows_v2, VC_NV_RAW_REMAPPED_ROWS, 24, 0)
VALUE_RAW(nvmlDeviceGetUnrepairableMemoryFlag_v1, VC_NV_RAW_UNREPAIRABLE, 4, 0)
