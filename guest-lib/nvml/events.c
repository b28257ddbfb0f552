/* SPDX-License-Identifier: MIT */
/*
 * events.c - NVML's event sets in the guest. A VM receives no device events
 * (Xid errors, clock changes and the like stay on the host), but programs
 * create a set before they ask for any: nvidia-smi's default view stops with
 * "Internal NVML error" when nvmlEventSetCreate fails. So a set can be made,
 * waited on (nothing ever arrives: NVML_ERROR_TIMEOUT after the wait, as
 * natively for a set with no events) and freed; registering a device's
 * events answers NVML_ERROR_NOT_SUPPORTED and its supported types are none.
 * A set is ours only when it is in the list of live sets: a freed or forged
 * handle is NVML_ERROR_INVALID_ARGUMENT, never read.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "nvml_guest.h"

struct nvmlEventSet_st {
	struct nvmlEventSet_st *next;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nvmlEventSet_st *g_sets; /* under g_mu */

/* @set is a live set (found by address under g_mu). */
static bool live(nvmlEventSet_t set)
{
	bool found = false;

	pthread_mutex_lock(&g_mu);
	for (struct nvmlEventSet_st *s = g_sets; s && !found; s = s->next)
		found = s == set;
	pthread_mutex_unlock(&g_mu);
	return found;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	struct nvmlEventSet_st *s;

	if (!vc_nvml_facts())
		return NVML_ERROR_UNINITIALIZED;
	if (!set)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!(s = calloc(1, sizeof(*s))))
		return NVML_ERROR_MEMORY;
	pthread_mutex_lock(&g_mu);
	s->next = g_sets;
	g_sets = s;
	pthread_mutex_unlock(&g_mu);
	*set = s;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	struct nvmlEventSet_st **pp;

	if (!vc_nvml_facts())
		return NVML_ERROR_UNINITIALIZED;
	pthread_mutex_lock(&g_mu);
	for (pp = &g_sets; *pp && *pp != set; pp = &(*pp)->next)
		;
	if (!*pp) {
		pthread_mutex_unlock(&g_mu);
		return NVML_ERROR_INVALID_ARGUMENT;
	}
	*pp = set->next;
	pthread_mutex_unlock(&g_mu);
	free(set);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
	struct timespec ts = {.tv_sec = timeoutms / 1000, .tv_nsec = (long)(timeoutms % 1000) * 1000000L};

	if (!vc_nvml_facts())
		return NVML_ERROR_UNINITIALIZED;
	if (!data || !live(set))
		return NVML_ERROR_INVALID_ARGUMENT;
	while (nanosleep(&ts, &ts) < 0)
		; /* the whole wait, through signals */
	return NVML_ERROR_TIMEOUT;
}

nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
	return nvmlEventSetWait_v2(set, data, timeoutms);
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set)
{
	unsigned idx;
	nvmlReturn_t rc = vc_nvml_device(device, &idx);

	(void)eventTypes;
	if (rc)
		return rc;
	if (!live(set))
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_ERROR_NOT_SUPPORTED;
}

VC_NVML_CONSTANT(nvmlDeviceGetSupportedEventTypes, unsigned long long, 0)
