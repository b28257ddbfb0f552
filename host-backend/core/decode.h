/* SPDX-License-Identifier: MIT */
/* decode.h - the session's decoder: a private span of the ring, validated and executed. */
#ifndef VC_CORE_DECODE_H
#define VC_CORE_DECODE_H

#include <stdint.h>

#include "core/session_priv.h"

/**
 * vc_decode_span() - decode and execute the commands of one private span.
 * Returns the number executed, or -EPROTO after marking the session FATAL.
 */
int vc_decode_span(struct vc_session *s, const uint8_t *span, uint32_t len);

#endif /* VC_CORE_DECODE_H */
