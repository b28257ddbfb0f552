/* SPDX-License-Identifier: MIT */
/*
 * crash.h - what a session worker was doing when it crashed.
 *
 * A worker runs one guest's CUDA work; when it dies of a signal (a fault in
 * the driver or in vcuda), the listener only sees "killed by signal 11". The
 * crash reporter writes, before the process dies, the signal, the faulting
 * address and instruction, the last CUDA operation the serving thread
 * started, and a backtrace as module+offset (resolve with addr2line -e
 * MODULE OFFSET) to stderr, which is the server's log. The process then dies
 * of the same signal as it would have, so nothing else changes.
 */
#ifndef VC_CRASH_H
#define VC_CRASH_H

#include <stdint.h>

/**
 * vc_crash_install() - report SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT of
 * this process to stderr, naming the session @id. Call once, early in a worker.
 */
void vc_crash_install(uint32_t id);

/**
 * vc_crash_note_op() - the CUDA operation @op is starting on this thread (0:
 * none). Cheap: one relaxed store, read only by the crash handler.
 */
void vc_crash_note_op(uint32_t op);

#endif
