/* SPDX-License-Identifier: MIT */
/*
 * fuzz_handshake.c - libFuzzer target for the server's decoder of a client's
 * session request (the first message on the control socket).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/handshake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vc_hello h;
	char why[128];
	int rc = vc_hello_decode(data, (ssize_t)size, &h, why, sizeof(why));

	if (rc == 0) {
		/* Accepted: the name must be printable and terminated. */
		size_t n = strnlen(h.comm, sizeof(h.comm));

		if (n == sizeof(h.comm))
			abort();
		for (size_t i = 0; i < n; i++)
			if (h.comm[i] < 0x20 || h.comm[i] > 0x7e)
				abort();
	} else if (!memchr(why, 0, sizeof(why))) {
		abort();
	}
	return 0;
}
