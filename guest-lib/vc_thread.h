/* SPDX-License-Identifier: MIT */
/*
 * vc_thread.h - threads of the guest library's own inside the program's
 * process (bulk-copy helpers, the thread that frees pages set aside).
 */
#ifndef VC_THREAD_H
#define VC_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/**
 * vc_thread_start() - start @fn(@arg) on a new thread (into *@t; detached
 * when @detached, and then @t may be NULL) with every signal blocked: the
 * program's signals are not for our threads. 0 or -errno.
 */
int vc_thread_start(pthread_t *t, bool detached, void *(*fn)(void *), void *arg);

#endif /* VC_THREAD_H */
