/* SPDX-License-Identifier: MIT */
/* vc_log.c - the host programs' log line (vc_log.h). */
#include "vc_log.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

void vc_log_line(const char *prog, const char *fmt, va_list ap)
{
	char buf[1024];
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "%s[%d] %lld.%03ld %s\n", prog, (int)getpid(), (long long)ts.tv_sec, ts.tv_nsec / 1000000,
		buf);
}
