/* SPDX-License-Identifier: MIT */
/*
 * md2.c - MD2 and HMAC-MD2, checked against RFC 1319's vectors and against
 * the inner state published for the runtime's integrity check
 * (tests/unit/test_exptab.c).
 */
#include "md2.h"

#include <string.h>

#define IPAD 0x36
#define OPAD 0x5c

/* RFC 1319's permutation of 0..255, built from the digits of pi. */
static const uint8_t md2_s[256] = {
	41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,
	98,  167, 5,   243, 192, 199, 115, 140, 152, 147, 43,  217, 188, 76,  130, 202,
	30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,  138, 23,  229, 18,
	190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122,
	169, 104, 121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,
	128, 127, 93,  154, 90,  144, 50,  39,  53,  62,  204, 231, 191, 247, 151, 3,
	255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,  170, 198,
	79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241,
	69,  157, 112, 89,  100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,
	27,  96,  37,  173, 174, 176, 185, 246, 28,  70,  97,  105, 52,  64,  126, 15,
	85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,
	44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,
	106, 220, 55,  200, 108, 193, 171, 250, 36,  225, 123, 8,   12,  189, 177, 74,
	120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254, 59,  0,   29,  57,
	242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,
	49,  68,  80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20,
};

static void md2_block(struct vc_md2 *m, const uint8_t *blk)
{
	uint8_t l = m->c[15];
	unsigned t = 0;

	for (int j = 0; j < 16; j++) {
		m->x[16 + j] = blk[j];
		m->x[32 + j] = (uint8_t)(m->x[j] ^ blk[j]);
		/* RFC 1319 as printed says "C[j] = S[c ^ L]"; its erratum (and
		 * every published vector) needs the XOR into C[j]. */
		m->c[j] ^= md2_s[blk[j] ^ l];
		l = m->c[j];
	}
	for (unsigned r = 0; r < 18; r++) {
		for (int k = 0; k < 48; k++) {
			m->x[k] ^= md2_s[t];
			t = m->x[k];
		}
		t = (t + r) & 0xff;
	}
}

void vc_md2_init(struct vc_md2 *m)
{
	memset(m, 0, sizeof(*m));
}

void vc_md2_update(struct vc_md2 *m, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (m->n) {
		size_t take = VC_MD2_BLOCK - m->n < len ? VC_MD2_BLOCK - m->n : len;

		memcpy(m->buf + m->n, p, take);
		m->n += take;
		p += take;
		len -= take;
		if (m->n < VC_MD2_BLOCK)
			return;
		md2_block(m, m->buf);
		m->n = 0;
	}
	for (; len >= VC_MD2_BLOCK; p += VC_MD2_BLOCK, len -= VC_MD2_BLOCK)
		md2_block(m, p);
	memcpy(m->buf, p, len);
	m->n = len;
}

void vc_md2_final(struct vc_md2 *m, uint8_t out[VC_MD2_DIGEST])
{
	uint8_t pad[VC_MD2_BLOCK], ck[16];
	size_t k = VC_MD2_BLOCK - m->n; /* 1..16: a full block when aligned */

	memset(pad, (int)k, sizeof(pad));
	vc_md2_update(m, pad, k);
	memcpy(ck, m->c, sizeof(ck));
	vc_md2_update(m, ck, sizeof(ck));
	memcpy(out, m->x, VC_MD2_DIGEST);
}

void vc_md2(const void *data, size_t len, uint8_t out[VC_MD2_DIGEST])
{
	struct vc_md2 m;

	vc_md2_init(&m);
	vc_md2_update(&m, data, len);
	vc_md2_final(&m, out);
}

void vc_hmac_md2_init(struct vc_hmac_md2 *h, const void *key, size_t keylen)
{
	uint8_t k[VC_MD2_BLOCK] = {0}, ikey[VC_MD2_BLOCK];

	if (keylen > VC_MD2_BLOCK)
		vc_md2(key, keylen, k);
	else if (keylen)
		memcpy(k, key, keylen);
	for (int i = 0; i < VC_MD2_BLOCK; i++) {
		ikey[i] = (uint8_t)(k[i] ^ IPAD);
		h->okey[i] = (uint8_t)(k[i] ^ OPAD);
	}
	vc_md2_init(&h->md);
	vc_md2_update(&h->md, ikey, sizeof(ikey));
}

void vc_hmac_md2_update(struct vc_hmac_md2 *h, const void *data, size_t len)
{
	vc_md2_update(&h->md, data, len);
}

void vc_hmac_md2_final(struct vc_hmac_md2 *h, uint8_t out[VC_MD2_DIGEST])
{
	uint8_t inner[VC_MD2_DIGEST];

	vc_md2_final(&h->md, inner);
	vc_md2_init(&h->md);
	vc_md2_update(&h->md, h->okey, sizeof(h->okey));
	vc_md2_update(&h->md, inner, sizeof(inner));
	vc_md2_final(&h->md, out);
}
