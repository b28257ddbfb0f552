/* SPDX-License-Identifier: MIT */
/*
 * confcompute.c - confidential computing as a vcuda guest sees it: off.
 * A guest's GPU work is carried out by the host's worker, which sees its
 * commands and data in the clear, so nothing of it is protected the way
 * NVIDIA's confidential-computing mode protects a VM's own GPU, whatever
 * the host's GPU is set to. NCCL asks (nvmlSystemGetConfComputeSettings,
 * then nvmlSystemGetConfComputeState) and keeps its transports as they are
 * when the answer is off; the answer does not depend on the host.
 */
#include "nvml_guest.h"

nvmlReturn_t nvmlSystemGetConfComputeState(nvmlConfComputeSystemState_t *state)
{
	if (!vc_nvml_facts())
		return NVML_ERROR_UNINITIALIZED;
	if (!state)
		return NVML_ERROR_INVALID_ARGUMENT;
	state->environment = NVML_CC_SYSTEM_ENVIRONMENT_UNAVAILABLE;
	state->ccFeature = NVML_CC_SYSTEM_FEATURE_DISABLED;
	state->devToolsMode = NVML_CC_SYSTEM_DEVTOOLS_MODE_OFF;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetConfComputeSettings(nvmlSystemConfComputeSettings_t *settings)
{
	if (!vc_nvml_facts())
		return NVML_ERROR_UNINITIALIZED;
	if (!settings)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (settings->version != nvmlSystemConfComputeSettings_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	settings->environment = NVML_CC_SYSTEM_ENVIRONMENT_UNAVAILABLE;
	settings->ccFeature = NVML_CC_SYSTEM_FEATURE_DISABLED;
	settings->devToolsMode = NVML_CC_SYSTEM_DEVTOOLS_MODE_OFF;
	settings->multiGpuMode = NVML_CC_SYSTEM_MULTIGPU_NONE;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetConfComputeCapabilities(nvmlConfComputeSystemCaps_t *capabilities)
{
	if (!vc_nvml_facts())
		return NVML_ERROR_UNINITIALIZED;
	if (!capabilities)
		return NVML_ERROR_INVALID_ARGUMENT;
	capabilities->cpuCaps = NVML_CC_SYSTEM_CPU_CAPS_NONE;
	capabilities->gpusCaps = NVML_CC_SYSTEM_GPUS_CC_NOT_CAPABLE;
	return NVML_SUCCESS;
}

/* No memory of a guest's is protected: none in use, none free. */
VC_NVML_CONSTANT(nvmlDeviceGetConfComputeProtectedMemoryUsage, nvmlMemory_t, ((nvmlMemory_t){0}))
