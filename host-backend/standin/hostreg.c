/* SPDX-License-Identifier: MIT */
/*
 * hostreg.c - the stand-in's page-locked host memory: cuMemHostRegister and
 * its pair, and the registered ranges, which stream memory operations may
 * name at their device address (memops.c). Host memory is the stand-in's
 * device memory too, so a registered range's device address is itself
 * (unified addressing).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "standin/standin_priv.h"

/* Registered ranges, for the stream memory operations that write or wait on
 * page-locked host memory at its device address (memops.c). */
struct hreg {
	struct hreg *next;
	uint8_t *p;
	size_t n;
};
static pthread_mutex_t g_hreg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct hreg *g_hregs; /* under g_hreg_mu */

static CUresult s_host_register(void *p, size_t n, unsigned flags)
{
	struct hreg *r;

	(void)flags;
	if (!p || !n)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(r = malloc(sizeof(*r))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->p = p;
	r->n = n;
	pthread_mutex_lock(&g_hreg_mu);
	r->next = g_hregs;
	g_hregs = r;
	pthread_mutex_unlock(&g_hreg_mu);
	return CUDA_SUCCESS;
}

static CUresult s_host_unregister(void *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_hreg_mu);
	for (struct hreg **pp = &g_hregs; *pp; pp = &(*pp)->next) {
		struct hreg *r = *pp;

		if (r->p == p) {
			*pp = r->next;
			free(r);
			break;
		}
	}
	pthread_mutex_unlock(&g_hreg_mu);
	return CUDA_SUCCESS;
}

uint8_t *vc_si_host_ptr(uint64_t a, uint64_t len)
{
	uint8_t *at = NULL;

	pthread_mutex_lock(&g_hreg_mu);
	for (struct hreg *r = g_hregs; r && !at; r = r->next)
		if (a >= (uintptr_t)r->p && len <= r->n && a - (uintptr_t)r->p <= r->n - len)
			at = (uint8_t *)(uintptr_t)a;
	pthread_mutex_unlock(&g_hreg_mu);
	return at;
}

static CUresult s_host_devptr(CUdeviceptr *d, void *p, unsigned flags)
{
	if (!p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

void vc_si_fill_hostreg(struct vc_cuda_driver *d)
{
	d->cuMemHostRegister_v2 = s_host_register;
	d->cuMemHostUnregister = s_host_unregister;
	d->cuMemHostGetDevicePointer_v2 = s_host_devptr;
}
