/* SPDX-License-Identifier: MIT */
#include "core/handshake.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vc_abi_hash.h"

int vc_hello_decode(const void *msg, ssize_t len, struct vc_hello *out, char *why, size_t whylen)
{
	if (len != (ssize_t)sizeof(*out)) {
		snprintf(why, whylen, "vcuda-server: malformed hello message (%zd bytes)", len);
		return -EPROTO;
	}
	memcpy(out, msg, sizeof(*out));
	out->comm[sizeof(out->comm) - 1] = 0;
	for (char *p = out->comm; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	if (out->magic != VC_HELLO_MAGIC || out->flags) {
		snprintf(why, whylen, "vcuda-server: malformed hello message");
		return -EPROTO;
	}
	if (out->version != VC_PROTO_VERSION || out->abi_hash != VC_ABI_HASH) {
		snprintf(why, whylen,
			 "protocol mismatch: client v%u/%016" PRIx64 ", server v%u/%016" PRIx64
			 ": install a matching guest library",
			 out->version, out->abi_hash, VC_PROTO_VERSION, (uint64_t)VC_ABI_HASH);
		return -EPROTONOSUPPORT;
	}
	return 0;
}
