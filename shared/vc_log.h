/* SPDX-License-Identifier: MIT */
/* vc_log.h - the host programs' log line: "prog[pid] seconds.ms text" on stderr. */
#ifndef VC_LOG_H
#define VC_LOG_H

#include <stdarg.h>

/**
 * vc_log_line() - write one timestamped line for program @prog, formatted
 * from @fmt and @ap (at most 1023 bytes of text), to stderr.
 */
void vc_log_line(const char *prog, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif /* VC_LOG_H */
