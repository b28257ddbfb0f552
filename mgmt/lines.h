/* SPDX-License-Identifier: MIT */
/*
 * lines.h - newline-framed messages on a non-blocking stream socket, with
 * a cap on a line and on what may wait to be written: the JSON connections
 * of vcuda-mgmtd (its clients, the servers' admin sockets) and vcudactl.
 * A peer that sends a line past the cap, or does not read its replies, is
 * the caller's to drop; nothing here grows without bound.
 */
#ifndef VC_MGMT_LINES_H
#define VC_MGMT_LINES_H

#include <stddef.h>

struct vc_lines {
	char *in;
	size_t in_start, in_len, in_max; /* unread bytes are in[in_start, in_len) */
	char *out;
	size_t out_start, out_len, out_max;
	int eof;
};

/**
 * vc_lines_init() - empty buffers for lines of at most @max_line bytes
 * (newline included) and at most @max_out bytes waiting to be written.
 * Returns 0 or -ENOMEM.
 */
int vc_lines_init(struct vc_lines *l, size_t max_line, size_t max_out);

/** vc_lines_fini() - free the buffers. */
void vc_lines_fini(struct vc_lines *l);

/**
 * vc_lines_fill() - read what @fd has without blocking. Returns the bytes
 * read (> 0), 0 at end of file (also recorded in @l->eof), -EAGAIN when
 * nothing was there, -ENOBUFS when the buffer is full (a line past the cap
 * is waiting: vc_lines_next() says so), or -errno.
 */
int vc_lines_fill(struct vc_lines *l, int fd);

/**
 * vc_lines_next() - take the next complete line: returns 1 with *@line
 * (NUL terminated in place, the newline removed, valid until the next call
 * on @l) and *@len; 0 when no line is complete yet; -EMSGSIZE when more
 * than the cap arrived without a newline.
 */
int vc_lines_next(struct vc_lines *l, char **line, size_t *len);

/** vc_lines_queue() - add @len bytes to be written. 0, or -ENOBUFS past the cap. */
int vc_lines_queue(struct vc_lines *l, const void *data, size_t len);

/**
 * vc_lines_flush() - write what is queued without blocking. Returns 0 when
 * all is written, 1 when some is left (wait for POLLOUT), or -errno.
 */
int vc_lines_flush(struct vc_lines *l, int fd);

/** vc_lines_pending() - bytes waiting to be written. */
size_t vc_lines_pending(const struct vc_lines *l);

/**
 * vc_lines_request() - for short exchanges on a blocking or non-blocking
 * socket: send @req (a complete line) and wait at most @timeout_ms for one
 * line back, returned in *@line as vc_lines_next() does. Returns 1, or
 * -ETIMEDOUT, -ECONNRESET (closed first), -EMSGSIZE, -errno.
 */
int vc_lines_request(struct vc_lines *l, int fd, const char *req, size_t len, int timeout_ms, char **line,
		     size_t *linelen);

/**
 * vc_lines_wait_line() - wait at most @timeout_ms for the next line on @fd.
 * Returns 1 (as vc_lines_next()), -ETIMEDOUT, -ECONNRESET, -EMSGSIZE, -errno.
 */
int vc_lines_wait_line(struct vc_lines *l, int fd, int timeout_ms, char **line, size_t *linelen);

#endif /* VC_MGMT_LINES_H */
