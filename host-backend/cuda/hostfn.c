/* SPDX-License-Identifier: MIT */
/*
 * hostfn.c - host functions (cuLaunchHostFunc): the driver's thread queues
 * each for the guest, which runs it, and holds the stream until it has. On
 * a capturing stream the guest names the function by a host node's cookie,
 * and the function recorded is the host node's (graph_state.c).
 *
 * The stream waits for the guest meanwhile, so the wait is short where the
 * function is: the driver's thread yields the CPU for up to HOSTFN_SPIN_NS
 * between looks, then sleeps, longer each time. A program that ends every
 * call with a host function (JAX's executions do) has its next work queued
 * behind it: a first sleep of 5 us, which the kernel's timer slack makes
 * 50 us or more, was each such call's extra time.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "cuda/exec_priv.h"
#include "cuda/graph.h"
#include "vc_time.h"

#define HOSTFN_SPIN_NS 200000u

struct hostcb {
	struct vc_cu_session *x;
	uint64_t cookie;
};

/* The driver's thread, when the stream reaches the callback: queue it for the
 * guest, wake the guest, and hold the stream until the guest has run it. */
static void CUDA_CB host_cb(void *arg)
{
	struct hostcb *c = arg;
	struct vc_cu_session *x = c->x;
	uint32_t idx = 0, wait_us = 20;
	uint64_t t0 = vc_now_ns();
	int sig = -EAGAIN;

	pthread_mutex_lock(&x->cb_mu);
	while (!x->cb_abort) {
		sig = x->svc->cb_push(x->svc->arg, c->cookie, &idx);
		if (sig != -EAGAIN)
			break;
		pthread_mutex_unlock(&x->cb_mu);
		usleep(100); /* the guest's queue is full: it is running callbacks */
		pthread_mutex_lock(&x->cb_mu);
	}
	/* Shared memory is read only under cb_mu with cb_abort clear: the
	 * session's teardown sets cb_abort before the region goes away. */
	while (sig >= 0 && !x->cb_abort && (int32_t)(x->svc->cb_done(x->svc->arg) - idx) <= 0) {
		pthread_mutex_unlock(&x->cb_mu);
		if (vc_now_ns() - t0 < HOSTFN_SPIN_NS) {
			sched_yield();
		} else {
			usleep(wait_us);
			wait_us = wait_us < 1000 ? wait_us * 2 : 1000;
		}
		pthread_mutex_lock(&x->cb_mu);
	}
	x->cb_inflight--;
	pthread_cond_broadcast(&x->cb_cv);
	pthread_mutex_unlock(&x->cb_mu);
	free(c);
}

int vc_cu_manual_vcHostFunc(struct vc_cu_session *x, const uint8_t *p, uint32_t len,
			    struct vc_cu_out *out)
{
	struct vc_cu_req_hostfunc rq;
	struct hostcb *c;
	void *stream;
	int rc;

	(void)out; /* asynchronous: no reply */
	TAKE(rq);
	if ((rc = vc_cu_enter(x, rq.ctx)) || (rc = vc_cu_lookup(x, VC_H_CUSTREAM, rq.stream, &stream)))
		return rc;
	if ((rq.cookie & VC_CU_COOKIE_GRAPH) && vc_cu_capturing(x, stream)) {
		/* A host function on a capturing stream, named by a host node's
		 * cookie: recorded as a host node is, its record kept for the
		 * session (graph_state.c), since the graph may run many times. */
		CUDA_HOST_NODE_PARAMS hp;

		if ((rc = vc_cu_graph_host_params(x, rq.cookie, 0, &hp)))
			return rc;
		return x->drv->cuLaunchHostFunc(stream, hp.fn, hp.userData);
	}
	/* Otherwise it runs once, counted in flight for the teardown to wait
	 * for: also a host node's cookie, where the guest could not tell that
	 * the stream was not capturing (the guest runs either kind). */
	if (!(rq.cookie & VC_CU_COOKIE_GRAPH) && (rc = vc_cu_not_capturing(x, stream)))
		return rc;
	c = malloc(sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->x = x;
	c->cookie = rq.cookie;
	pthread_mutex_lock(&x->cb_mu);
	x->cb_inflight++;
	pthread_mutex_unlock(&x->cb_mu);
	rc = x->drv->cuLaunchHostFunc(stream, host_cb, c);
	if (rc) {
		pthread_mutex_lock(&x->cb_mu);
		x->cb_inflight--;
		pthread_mutex_unlock(&x->cb_mu);
		free(c);
	}
	return rc;
}
