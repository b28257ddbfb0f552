/* SPDX-License-Identifier: MIT */
/* lines.c - newline-framed messages with caps (lines.h). */
#include "lines.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

int vc_lines_init(struct vc_lines *l, size_t max_line, size_t max_out)
{
	memset(l, 0, sizeof(*l));
	l->in_max = max_line;
	l->out_max = max_out;
	/* +1: room for the NUL that vc_lines_next() puts after a full-size line */
	l->in = malloc(max_line + 1);
	if (!l->in)
		return -ENOMEM;
	return 0;
}

void vc_lines_fini(struct vc_lines *l)
{
	free(l->in);
	free(l->out);
	memset(l, 0, sizeof(*l));
}

int vc_lines_fill(struct vc_lines *l, int fd)
{
	ssize_t n;

	if (l->in_start) {
		memmove(l->in, l->in + l->in_start, l->in_len - l->in_start);
		l->in_len -= l->in_start;
		l->in_start = 0;
	}
	if (l->in_len >= l->in_max)
		return -ENOBUFS;
	do
		n = recv(fd, l->in + l->in_len, l->in_max - l->in_len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0) {
		l->eof = 1;
		return 0;
	}
	l->in_len += (size_t)n;
	return (int)n;
}

int vc_lines_next(struct vc_lines *l, char **line, size_t *len)
{
	char *s = l->in + l->in_start;
	size_t have = l->in_len - l->in_start;
	char *nl = memchr(s, '\n', have);

	if (!nl) {
		if (have >= l->in_max)
			return -EMSGSIZE;
		return 0;
	}
	*nl = 0;
	*line = s;
	*len = (size_t)(nl - s);
	l->in_start += *len + 1;
	return 1;
}

int vc_lines_queue(struct vc_lines *l, const void *data, size_t len)
{
	size_t live = l->out_len - l->out_start;
	char *p;

	if (len > l->out_max || live > l->out_max - len)
		return -ENOBUFS;
	if (l->out_start) {
		memmove(l->out, l->out + l->out_start, live);
		l->out_len = live;
		l->out_start = 0;
	}
	p = realloc(l->out, live + len);
	if (!p)
		return -ENOMEM;
	memcpy(p + live, data, len);
	l->out = p;
	l->out_len = live + len;
	return 0;
}

int vc_lines_flush(struct vc_lines *l, int fd)
{
	while (l->out_start < l->out_len) {
		/* MSG_NOSIGNAL: a client that went away is an error, not SIGPIPE */
		ssize_t n = send(fd, l->out + l->out_start, l->out_len - l->out_start, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EWOULDBLOCK ? 1 : -errno;
		}
		l->out_start += (size_t)n;
	}
	l->out_start = l->out_len = 0;
	return 0;
}

size_t vc_lines_pending(const struct vc_lines *l)
{
	return l->out_len - l->out_start;
}

int vc_lines_wait_line(struct vc_lines *l, int fd, int timeout_ms, char **line, size_t *linelen)
{
	int64_t deadline = vc_now_ms() + timeout_ms;

	for (;;) {
		int rc = vc_lines_next(l, line, linelen);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left;

		if (rc)
			return rc;
		if (l->eof)
			return -ECONNRESET;
		left = deadline - vc_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		rc = poll(&p, 1, (int)left);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc <= 0)
			continue;
		rc = vc_lines_fill(l, fd);
		if (rc < 0 && rc != -EAGAIN && rc != -ENOBUFS)
			return rc;
	}
}

int vc_lines_request(struct vc_lines *l, int fd, const char *req, size_t len, int timeout_ms, char **line,
		     size_t *linelen)
{
	int64_t deadline = vc_now_ms() + timeout_ms;
	int rc = vc_lines_queue(l, req, len);

	if (rc)
		return rc;
	while ((rc = vc_lines_flush(l, fd)) == 1) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int64_t left = deadline - vc_now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
	if (rc < 0)
		return rc;
	return vc_lines_wait_line(l, fd, (int)(deadline - vc_now_ms() > 0 ? deadline - vc_now_ms() : 0), line,
				  linelen);
}
