/* SPDX-License-Identifier: MIT */
/* handshake.h - decoding a client's session request (untrusted bytes). */
#ifndef VC_HANDSHAKE_H
#define VC_HANDSHAKE_H

#include <stddef.h>
#include <sys/types.h>

#include "vc_wire.h"

/**
 * vc_hello_decode() - validate the @len bytes of a client's hello message at
 * @msg and copy it to @out, with out->comm made printable and NUL-terminated.
 *
 * Returns 0; -EPROTO for a malformed message (wrong size or magic, flags set);
 * -EPROTONOSUPPORT for a protocol version or ABI hash this server does not
 * speak. @why (@whylen bytes) receives a message for the client and the log.
 */
int vc_hello_decode(const void *msg, ssize_t len, struct vc_hello *out, char *why, size_t whylen);

#endif /* VC_HANDSHAKE_H */
