/* SPDX-License-Identifier: MIT */
/*
 * console.h - the worker's stdout, captured for the guest.
 *
 * A kernel's printf goes into a device FIFO that the CUDA driver writes to
 * the calling process's stdout at synchronisation points. In vcuda that
 * process is the session's worker, so the worker makes its fd 1 a pipe that a
 * thread of its own drains into a bounded buffer; after every operation that
 * can flush device printf, and before the reply that lets the guest go on,
 * the executor collects what reached the pipe and publishes the running total
 * through the session's services (it lands in the control page); the guest fetches the bytes
 * with vcConsole and writes them to its own stdout.
 *
 * One per process, as fd 1 is. Without vc_console_capture() (unit tests,
 * fuzzers, an embedder's own process) every call is a cheap no-op.
 */
#ifndef VC_CONSOLE_H
#define VC_CONSOLE_H

#include <stdint.h>

struct vc_session_services;

/* Output waiting for the guest beyond this is dropped (and said so once). */
#define VC_CONSOLE_MAX (8u << 20)

/**
 * vc_console_capture() - make fd 1 a pipe drained by a thread of this
 * process into a buffer of VC_CONSOLE_MAX bytes, and make stdout unbuffered.
 * Call once, early in a worker. Returns 0 or -errno (fd 1 is then left as it
 * was).
 */
int vc_console_capture(void);

/**
 * vc_console_publish() - after an operation that can flush device printf:
 * flush stdout, take everything that reached the pipe so far, and publish the
 * total captured through the session's services @svc. Call before the reply (or done_seq)
 * that lets the guest go on; any thread, while the region is mapped. From
 * then until vc_console_stop() the capture thread also publishes whatever
 * else arrives (output the driver prints outside a synchronisation).
 */
void vc_console_publish(const struct vc_session_services *svc);

/**
 * vc_console_take() - move up to @cap bytes of captured output, oldest
 * first, to @buf. *@end receives the bytes handed out so far (this call's
 * included), *@left what still waits. Returns the bytes moved.
 */
uint32_t vc_console_take(void *buf, uint32_t cap, uint64_t *end, uint64_t *left);

/**
 * vc_console_stop() - at the end of the session, before its region is
 * unmapped: point fd 1 at /dev/null, end the thread and free the buffer.
 * Returns the bytes captured that the guest never fetched (dropped ones
 * included), for the log.
 */
uint64_t vc_console_stop(void);

#endif /* VC_CONSOLE_H */
