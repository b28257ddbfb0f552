/* SPDX-License-Identifier: MIT */
/*
 * util.h - small helpers shared by vcuda-mgmtd and vcudactl: the log line,
 * the wall clock (the monotonic one is shared/vc_time.h's), byte sizes with
 * suffixes, VM names and GPU identifiers.
 */
#ifndef VC_MGMT_UTIL_H
#define VC_MGMT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vc_time.h" /* vc_now_ms(): the monotonic clock */

#define VC_VM_NAME_MAX 48 /* characters; the socket paths must fit sun_path */

/** vc_mlog() - one timestamped line on stderr: "vcuda-mgmtd[pid] s.ms text". */
void vc_mlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** vc_wall_ms() - CLOCK_REALTIME in milliseconds since the epoch. */
int64_t vc_wall_ms(void);

/**
 * vc_size_parse() - "4096", "512K", "8M", "80G", "1T" (binary units, the
 * suffix in either case, an optional "iB"/"B") into bytes. Returns 0, or
 * -EINVAL for anything else or a value past 2^62.
 */
int vc_size_parse(const char *s, uint64_t *out);

/** vc_size_format() - bytes for people: "80.0 GiB", "512 MiB", "4096 B". */
const char *vc_size_format(uint64_t bytes, char *buf, size_t len);

/**
 * vc_vm_name_ok() - a VM name is 1..VC_VM_NAME_MAX characters of
 * [A-Za-z0-9._-], not starting with '.' or '-' (it names files and appears
 * in logs and command lines).
 */
bool vc_vm_name_ok(const char *name);

/** vc_printable() - replace bytes outside 0x20..0x7e with '?', in place. */
void vc_printable(char *s);

#endif /* VC_MGMT_UTIL_H */
