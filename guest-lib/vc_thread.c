/* SPDX-License-Identifier: MIT */
/*
 * vc_thread.c - threads of the guest library's own (vc_thread.h). The new
 * thread inherits the signal mask in force when it is created, so the
 * creating thread blocks everything for that moment and puts its own mask
 * back.
 */
#include <errno.h>
#include <signal.h>

#include "vc_thread.h"

int vc_thread_start(pthread_t *t, bool detached, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t mine;
	int rc;

	if ((rc = pthread_attr_init(&at)))
		return -rc;
	if (detached)
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t ? t : &mine, &at, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	return -rc;
}
