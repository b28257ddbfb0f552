/* SPDX-License-Identifier: MIT */
/* util.c - helpers shared by vcuda-mgmtd and vcudactl (util.h). */
#include "util.h"
#include "vc_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

void vc_mlog(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vc_log_line("vcuda-mgmtd", fmt, ap);
	va_end(ap);
}

int64_t vc_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int vc_size_parse(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (!strcasecmp(end, "iB") || !strcasecmp(end, "B")))
		end += strlen(end);
	else if (!shift && !strcasecmp(end, "B"))
		end++;
	if (*end || v > (UINT64_C(1) << 62) >> shift)
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

const char *vc_size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return buf;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (v == (double)(uint64_t)v)
		snprintf(buf, len, "%" PRIu64 " %s", (uint64_t)v, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

bool vc_vm_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > VC_VM_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

void vc_printable(char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
}
