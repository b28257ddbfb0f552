/* SPDX-License-Identifier: MIT */
/*
 * pipe_ceiling.h - the fastest a two-copy transport can move bulk data on
 * this machine: the same pipeline as the staging arena (the producer copies a
 * piece in, the consumer copies it out while the next piece goes in), run by
 * two threads of one process over private memory, with no ring, no decoding,
 * no validation and no second process. ring_bench reports vcuda's arena
 * against it, so that what the hardware allows and what the protocol costs
 * are told apart in the same run.
 */
#ifndef VC_BENCH_PIPE_CEILING_H
#define VC_BENCH_PIPE_CEILING_H

#include <stddef.h>
#include <stdint.h>

struct vc_pipe;

/**
 * vc_pipe_open() - start the second thread, with a staging buffer of
 * @arena_bytes. Returns 0 or -errno.
 */
int vc_pipe_open(struct vc_pipe **out, size_t arena_bytes);

/**
 * vc_pipe_copy() - move @n bytes from @src to @dst through the staging buffer
 * in pieces of @piece bytes, at most @inflight of them staged at once
 * (@piece * @inflight must fit the buffer). @to_helper: this thread fills the
 * pieces and the helper drains them (host to device); otherwise the helper
 * fills them and this thread drains them (device to host). Returns the
 * nanoseconds it took, or 0 if the shape does not fit.
 */
uint64_t vc_pipe_copy(struct vc_pipe *p, void *dst, const void *src, size_t n, size_t piece,
		      unsigned inflight, int to_helper);

/** vc_pipe_close() - stop the thread and free everything. */
void vc_pipe_close(struct vc_pipe *p);

#endif /* VC_BENCH_PIPE_CEILING_H */
