/* SPDX-License-Identifier: MIT */
/*
 * md2.h - MD2 (RFC 1319) and HMAC-MD2 (RFC 2104 with a 16-byte block).
 *
 * Only the integrity check of export table d4082055 needs these: NVIDIA's
 * runtime authenticates the driver with an HMAC-MD2 and recomputes it itself
 * (docs/cuda13-driver-surface.md, "The integrity check"). Not for anything
 * that needs a secure hash.
 */
#ifndef VC_MD2_H
#define VC_MD2_H

#include <stddef.h>
#include <stdint.h>

#define VC_MD2_BLOCK 16
#define VC_MD2_DIGEST 16

/* Exposed so that callers keep it on the stack and tests can read the state. */
struct vc_md2 {
	uint8_t x[48];               /* state; x[0..16) becomes the digest */
	uint8_t c[16];               /* running checksum */
	uint8_t buf[VC_MD2_BLOCK];   /* partial block */
	size_t n;                    /* bytes in buf */
};

struct vc_hmac_md2 {
	struct vc_md2 md;                /* inner hash, keyed with ipad */
	uint8_t okey[VC_MD2_BLOCK];      /* key ^ opad */
};

/** vc_md2_init() - start a digest. */
void vc_md2_init(struct vc_md2 *m);

/** vc_md2_update() - hash @len bytes at @data. */
void vc_md2_update(struct vc_md2 *m, const void *data, size_t len);

/** vc_md2_final() - pad, append the checksum and write the 16-byte digest. */
void vc_md2_final(struct vc_md2 *m, uint8_t out[VC_MD2_DIGEST]);

/** vc_md2() - one-shot MD2 of @len bytes at @data. */
void vc_md2(const void *data, size_t len, uint8_t out[VC_MD2_DIGEST]);

/**
 * vc_hmac_md2_init() - start an HMAC-MD2 with @key (@keylen bytes; a key
 * longer than the 16-byte block is hashed first, as RFC 2104 says). After
 * this, @h->md holds the inner state after the key ^ ipad block.
 */
void vc_hmac_md2_init(struct vc_hmac_md2 *h, const void *key, size_t keylen);

/** vc_hmac_md2_update() - authenticate @len more bytes at @data. */
void vc_hmac_md2_update(struct vc_hmac_md2 *h, const void *data, size_t len);

/** vc_hmac_md2_final() - write the 16-byte MAC. */
void vc_hmac_md2_final(struct vc_hmac_md2 *h, uint8_t out[VC_MD2_DIGEST]);

#endif /* VC_MD2_H */
