/* SPDX-License-Identifier: MIT */
/*
 * test_exptab.c - the guest library's export tables: MD2 and HMAC-MD2
 * vectors, the integrity check recomputed independently from the documented
 * message layout, context-local storage (semantics, bounds, destructors,
 * threads), every table's measured shape, and the ids that are refused.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cls.h"
#include "exptab.h"
#include "jitcache.h"
#include "md2.h"

typedef void (*fn_t)(void);

/* ---- table ids (memory order), as measured ------------------------------ */

#define ID(...) ((const CUuuid *)(const uint8_t[16]){__VA_ARGS__})
#define ID_F8CFF951 \
	ID(0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, \
	   0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9)
#define ID_6BD5FB6C \
	ID(0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, \
	   0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9)
#define ID_A094798C \
	ID(0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, \
	   0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66)
#define ID_42D85A81 \
	ID(0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, \
	   0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc)
#define ID_C693336E \
	ID(0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, \
	   0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93)
#define ID_263E8860 \
	ID(0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, \
	   0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e)
#define ID_D4082055 \
	ID(0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, \
	   0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2)
#define ID_21318C60 \
	ID(0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, \
	   0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2)
#define ID_6E163FBE \
	ID(0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, \
	   0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e)
#define ID_69A28E9F \
	ID(0x69, 0xa2, 0x8e, 0x9f, 0x24, 0x49, 0x8b, 0x47, \
	   0xb0, 0x30, 0xc5, 0xda, 0x33, 0x0e, 0xa4, 0xe9)
#define ID_DA9151D3 \
	ID(0xda, 0x91, 0x51, 0xd3, 0x3a, 0xe6, 0xcc, 0x41, \
	   0xa5, 0xc0, 0x4f, 0x26, 0xd5, 0x33, 0xe3, 0x28)

static const fn_t *table(const CUuuid *id)
{
	const void *t = NULL;

	ck_assert_int_eq(vc_exptab_get(&t, id), CUDA_SUCCESS);
	ck_assert_ptr_nonnull(t);
	return t;
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* ---- fake host facts and context state ---------------------------------- */

static _Thread_local CUcontext cur_ctx;
static int fake_ndev = 1;
static const uint8_t fake_uuid[16] = {0x5a, 0x1b, 0xe7, 0x03, 0x9c, 0x44, 0x21, 0x8d,
				      0x70, 0x0f, 0xaa, 0x13, 0x62, 0xbe, 0x48, 0xc9};

static CUcontext fake_current(void)
{
	return cur_ctx;
}

static int fake_device_count(void)
{
	return fake_ndev;
}

static int fake_device_ident(int ord, uint8_t uuid[16], int *dom, int *bus, int *dev)
{
	if (ord < 0 || ord >= fake_ndev)
		return -ENODEV;
	memcpy(uuid, fake_uuid, 16);
	uuid[15] = (uint8_t)(uuid[15] + ord);
	*dom = 0;
	*bus = 0x41 + ord;
	*dev = 0;
	return 0;
}

static int fake_driver_version(void)
{
	return 13000;
}

static CUresult fake_primary_ctx(CUcontext *out, CUdevice dev)
{
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*out = (CUcontext)(uintptr_t)0xc0ffee00;
	return CUDA_SUCCESS;
}

static struct {
	uint32_t table, slot;
	CUcontext ctx;
	uint64_t arg;
	int calls;
	CUresult rc;
} cq;

static CUresult fake_ctx_query(uint32_t tbl, uint32_t slot, CUcontext ctx, uint64_t arg,
			       uint64_t *out)
{
	cq.table = tbl;
	cq.slot = slot;
	cq.ctx = ctx;
	cq.arg = arg;
	cq.calls++;
	if (cq.rc)
		return cq.rc;
	*out = slot == 4 ? 1 : slot == 51 ? 0x7f00deadb000ull : slot == 39 ? 7 : 0;
	return CUDA_SUCCESS;
}

static const struct vc_exptab_ops fake_ops = {
	.device_count = fake_device_count,
	.device_ident = fake_device_ident,
	.driver_version = fake_driver_version,
	.current_ctx = fake_current,
	.primary_ctx = fake_primary_ctx,
	.ctx_query = fake_ctx_query,
};

static const struct vc_exptab_ops no_ops;

/* ---- MD2 and HMAC-MD2 ---------------------------------------------------- */

static void md2_hex(const char *msg, char out[33])
{
	uint8_t d[16];

	vc_md2(msg, strlen(msg), d);
	hex(out, d, 16);
}

START_TEST(md2_rfc1319_vectors)
{
	static const char *const v[][2] = {
		{"", "8350e5a3e24c153df2275c9f80692773"},
		{"a", "32ec01ec4a6dac72c0ab96fb34c0b5d1"},
		{"abc", "da853b0d3f88d99b30283a69e6ded6bb"},
		{"message digest", "ab4f496bfb2a530b219ff33031fe06b0"},
		{"abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b"},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		 "da33def2a42df13975352846c30338cd"},
		{"1234567890123456789012345678901234567890"
		 "1234567890123456789012345678901234567890",
		 "d5976f79d83d3a0dc9806c3c66f3efd8"},
	};
	char h[33];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		md2_hex(v[i][0], h);
		ck_assert_str_eq(h, v[i][1]);
	}
}
END_TEST

START_TEST(md2_incremental_matches_one_shot)
{
	const char *msg = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	size_t len = strlen(msg);
	uint8_t whole[16], parts[16];

	vc_md2(msg, len, whole);
	for (size_t step = 1; step <= 17; step++) {
		struct vc_md2 m;

		vc_md2_init(&m);
		for (size_t off = 0; off < len; off += step)
			vc_md2_update(&m, msg + off, len - off < step ? len - off : step);
		vc_md2_final(&m, parts);
		ck_assert_mem_eq(whole, parts, 16);
	}
}
END_TEST

static const uint8_t ic_key[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
				   0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f};

static void hmac_hex(const void *key, size_t klen, const void *msg, size_t mlen, char out[33])
{
	struct vc_hmac_md2 h;
	uint8_t mac[16];

	vc_hmac_md2_init(&h, key, klen);
	vc_hmac_md2_update(&h, msg, mlen);
	vc_hmac_md2_final(&h, mac);
	hex(out, mac, 16);
}

/* The state after the key ^ ipad block, as ZLUDA's tests of the same
 * computation publish it (tools/cuda-probe/test/test_md2.c checks it too). */
START_TEST(hmac_md2_inner_key_state)
{
	struct vc_hmac_md2 h;
	char x[33], c[33];

	vc_hmac_md2_init(&h, ic_key, sizeof(ic_key));
	hex(x, h.md.x, 16);
	hex(c, h.md.c, 16);
	ck_assert_str_eq(x, "8b219a49e86d1aeef237f9b54a8c3c75");
	ck_assert_str_eq(c, "57a110860e60441e705f67d1eb67a13d");
	ck_assert_uint_eq(h.md.n, 0);
}
END_TEST

/* Vectors from an independent implementation of RFC 1319 + RFC 2104 (Python,
 * written from the RFCs; checked there against RFC 1319's vectors). */
START_TEST(hmac_md2_vectors)
{
	const char *jefe = "what do ya want for nothing?";
	const char *big = "Test Using Larger Than Block-Size Key";
	uint8_t aa[20];
	char h[33];

	memset(aa, 0xaa, sizeof(aa));
	hmac_hex(ic_key, 16, "", 0, h);
	ck_assert_str_eq(h, "f66b07aba4a875ea140c2cc013a41c6a");
	hmac_hex(ic_key, 16, "abc", 3, h);
	ck_assert_str_eq(h, "815f118c9ab33645d4222c484070ab79");
	hmac_hex(ic_key, 16, jefe, strlen(jefe), h);
	ck_assert_str_eq(h, "615cf17da5c1fc3bd1197d34d6fa231c");
	hmac_hex("Jefe", 4, jefe, strlen(jefe), h);
	ck_assert_str_eq(h, "292f9d34f9e311846de86c495d7adfa2");
	hmac_hex(aa, sizeof(aa), big, strlen(big), h);
	ck_assert_str_eq(h, "953841c7535779c4c76a37032fd3a4f0");
}
END_TEST

/* ---- the integrity check ------------------------------------------------- */

static size_t put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return 4;
}

static size_t put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return 8;
}

/* The documented message, assembled byte by byte (little-endian). */
static void ic_expect(uint32_t version, uint64_t secs, int ndev, uint64_t out[2])
{
	const fn_t *cudart = table(ID_6BD5FB6C), *ic = table(ID_D4082055);
	uint8_t msg[48 + 4 * 28], mac[16];
	size_t n = 0;

	n += put32(msg + n, 13000);
	n += put32(msg + n, version);
	n += put32(msg + n, (uint32_t)getpid());
	n += put32(msg + n, (uint32_t)(uintptr_t)pthread_self());
	n += put64(msg + n, (uint64_t)(uintptr_t)cudart);
	n += put64(msg + n, (uint64_t)(uintptr_t)ic);
	n += put64(msg + n, (uint64_t)(uintptr_t)ic[1]);
	n += put64(msg + n, secs);
	ck_assert_uint_eq(n, 48);
	for (int d = 0; d < ndev; d++) {
		memcpy(msg + n, fake_uuid, 16);
		msg[n + 15] = (uint8_t)(msg[n + 15] + d);
		n += 16;
		n += put32(msg + n, 0);
		n += put32(msg + n, (uint32_t)(0x41 + d));
		n += put32(msg + n, 0);
	}
	struct vc_hmac_md2 h;

	vc_hmac_md2_init(&h, ic_key, sizeof(ic_key));
	vc_hmac_md2_update(&h, msg, n);
	vc_hmac_md2_final(&h, mac);
	memcpy(out, mac, 16);
}

typedef CUresult (*ic_fn)(uint32_t, uint64_t, uint64_t *);

START_TEST(integrity_constants)
{
	ic_fn f = (ic_fn)table(ID_D4082055)[1];
	uint64_t out[2];

	vc_exptab_init(&no_ops); /* the constants need no host facts */
	for (uint32_t v = 13000; v <= 13020; v += 10) {
		ck_assert_int_eq(f(v, 1795267773, out), CUDA_SUCCESS);
		ck_assert_uint_eq(out[0], 0x3341181C03CB675Cull);
		ck_assert_uint_eq(out[1], 0x8ED383AA1F4CD1E8ull);
		ck_assert_int_eq(f(v + 1, 42, out), CUDA_SUCCESS);
		ck_assert_uint_eq(out[0], 0x1841181C03CB675Cull);
		ck_assert_uint_eq(out[1], 0x8ED383AA1F4CD1E8ull);
	}
	ck_assert_int_eq(f(13002, 1, out), CUDA_ERROR_NOT_INITIALIZED);
	ck_assert_int_eq(f(13000, 1, NULL), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* A fixed message through the same HMAC: a known answer from the Python
 * implementation, pinning the byte layout of header and device record. */
START_TEST(integrity_known_answer)
{
	uint8_t msg[76], mac[16];
	size_t n = 0;
	char h[33];
	struct vc_hmac_md2 hm;

	n += put32(msg + n, 13000);
	n += put32(msg + n, 13002);
	n += put32(msg + n, 4242);
	n += put32(msg + n, 0xdeadbeef);
	n += put64(msg + n, 0x7f0000001000ull);
	n += put64(msg + n, 0x7f0000002000ull);
	n += put64(msg + n, 0x7f0000003000ull);
	n += put64(msg + n, 1795267773);
	for (int i = 0; i < 16; i++)
		msg[n++] = (uint8_t)i;
	n += put32(msg + n, 0);
	n += put32(msg + n, 0x41);
	n += put32(msg + n, 0);
	ck_assert_uint_eq(n, sizeof(msg));
	vc_hmac_md2_init(&hm, ic_key, sizeof(ic_key));
	vc_hmac_md2_update(&hm, msg, n);
	vc_hmac_md2_final(&hm, mac);
	hex(h, mac, 16);
	ck_assert_str_eq(h, "5855dd768171cf0d38832d76457fc102");
}
END_TEST

START_TEST(integrity_hmac_one_device)
{
	ic_fn f = (ic_fn)table(ID_D4082055)[1];
	uint64_t out[2], want[2], other[2];

	fake_ndev = 1;
	vc_exptab_init(&fake_ops);
	for (uint32_t v = 13002; v <= 13012; v += 10) {
		ck_assert_int_eq(f(v, 1795267773, out), CUDA_SUCCESS);
		ic_expect(v, 1795267773, 1, want);
		ck_assert_mem_eq(out, want, 16);
	}
	/* Every input is in the message: the time ... */
	ck_assert_int_eq(f(13002, 1795267774, other), CUDA_SUCCESS);
	ck_assert_mem_ne(out, other, 16);
	/* ... and the device list. */
	fake_ndev = 2;
	ck_assert_int_eq(f(13012, 1795267773, other), CUDA_SUCCESS);
	ic_expect(13012, 1795267773, 2, want);
	ck_assert_mem_eq(other, want, 16);
	ck_assert_mem_ne(other, out, 16);
	fake_ndev = 1;
}
END_TEST

struct ic_thread {
	uint64_t out[2], want[2];
	CUresult rc;
};

static void *ic_thread_main(void *arg)
{
	struct ic_thread *t = arg;
	ic_fn f = (ic_fn)table(ID_D4082055)[1];

	t->rc = f(13002, 1795267773, t->out);
	ic_expect(13002, 1795267773, 1, t->want);
	return NULL;
}

/* The calling thread is in the message: another thread gets its own answer. */
START_TEST(integrity_per_thread)
{
	ic_fn f = (ic_fn)table(ID_D4082055)[1];
	struct ic_thread t = {{0}, {0}, 0};
	uint64_t mine[2];
	pthread_t th;

	fake_ndev = 1;
	vc_exptab_init(&fake_ops);
	ck_assert_int_eq(f(13002, 1795267773, mine), CUDA_SUCCESS);
	ck_assert_int_eq(pthread_create(&th, NULL, ic_thread_main, &t), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(t.rc, CUDA_SUCCESS);
	ck_assert_mem_eq(t.out, t.want, 16);
	ck_assert_mem_ne(t.out, mine, 16);
}
END_TEST

/* ---- context-local storage through c693336e ------------------------------ */

typedef void (*dtor_fn)(CUcontext, void *, void *);
typedef CUresult (*put_fn)(CUcontext, void *, void *, dtor_fn);
typedef CUresult (*del_fn)(CUcontext, void *);
typedef CUresult (*get_fn)(void **, CUcontext, void *);

#define CTX(n) ((CUcontext)(uintptr_t)(0x10000u + (unsigned)(n) * 0x100u))

static struct {
	CUcontext ctx[8];
	void *key[8], *value[8];
	int n;
} dt;

static void record_dtor(CUcontext ctx, void *key, void *value)
{
	if (dt.n < 8) {
		dt.ctx[dt.n] = ctx;
		dt.key[dt.n] = key;
		dt.value[dt.n] = value;
	}
	dt.n++;
}

START_TEST(cls_no_context)
{
	const fn_t *t = table(ID_C693336E);
	void *v = (void *)1;
	int key;

	vc_exptab_init(&no_ops);
	ck_assert_int_eq(((get_fn)t[2])(&v, NULL, &key), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_ptr_eq(v, (void *)1);
	ck_assert_int_eq(((put_fn)t[0])(NULL, &key, &key, NULL), CUDA_ERROR_INVALID_CONTEXT);
	vc_exptab_init(&fake_ops);
	cur_ctx = NULL;
	ck_assert_int_eq(((get_fn)t[2])(&v, NULL, &key), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(((del_fn)t[1])(NULL, &key), CUDA_ERROR_INVALID_CONTEXT);
}
END_TEST

START_TEST(cls_put_get_delete)
{
	const fn_t *t = table(ID_C693336E);
	put_fn put = (put_fn)t[0];
	del_fn del = (del_fn)t[1];
	get_fn get = (get_fn)t[2];
	int key, other_key, val1, val2;
	void *v = NULL;

	vc_exptab_init(&fake_ops);
	cur_ctx = CTX(1);
	/* The runtime's sequence: get -> 400, put, get -> value. */
	ck_assert_int_eq(get(&v, NULL, &key), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(put(NULL, &key, &val1, record_dtor), CUDA_SUCCESS);
	ck_assert_int_eq(get(&v, NULL, &key), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &val1);
	/* ctx 0 is the current context; an explicit handle finds the same entry. */
	v = NULL;
	ck_assert_int_eq(get(&v, CTX(1), &key), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &val1);
	ck_assert_int_eq(get(&v, CTX(2), &key), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(get(&v, NULL, &other_key), CUDA_ERROR_INVALID_HANDLE);
	cur_ctx = CTX(2);
	ck_assert_int_eq(get(&v, NULL, &key), CUDA_ERROR_INVALID_HANDLE);
	/* put replaces */
	ck_assert_int_eq(put(CTX(1), &key, &val2, record_dtor), CUDA_SUCCESS);
	ck_assert_int_eq(get(&v, CTX(1), &key), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &val2);
	ck_assert_int_eq(get(NULL, CTX(1), &key), CUDA_ERROR_INVALID_VALUE);
	/* delete, without the destructor */
	dt.n = 0;
	ck_assert_int_eq(del(CTX(1), &key), CUDA_SUCCESS);
	ck_assert_int_eq(get(&v, CTX(1), &key), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(del(CTX(1), &key), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(dt.n, 0);
	ck_assert_int_eq(vc_cls_count(), 0);
}
END_TEST

START_TEST(cls_dtor_on_ctx_destroy)
{
	const fn_t *t = table(ID_C693336E);
	put_fn put = (put_fn)t[0];
	get_fn get = (get_fn)t[2];
	int k1, k2, v1, v2, v3;
	void *v;

	vc_exptab_init(&fake_ops);
	cur_ctx = CTX(3);
	dt.n = 0;
	ck_assert_int_eq(put(NULL, &k1, &v1, record_dtor), CUDA_SUCCESS);
	ck_assert_int_eq(put(NULL, &k2, &v2, NULL), CUDA_SUCCESS);
	ck_assert_int_eq(put(CTX(4), &k1, &v3, record_dtor), CUDA_SUCCESS);
	vc_exptab_ctx_destroyed(CTX(3));
	ck_assert_int_eq(dt.n, 1); /* k2 had no destructor */
	ck_assert_ptr_eq(dt.ctx[0], CTX(3));
	ck_assert_ptr_eq(dt.key[0], &k1);
	ck_assert_ptr_eq(dt.value[0], &v1);
	ck_assert_int_eq(get(&v, CTX(3), &k1), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(get(&v, CTX(3), &k2), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(get(&v, CTX(4), &k1), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &v3);
	vc_exptab_ctx_destroyed(CTX(3)); /* twice: nothing left to run */
	ck_assert_int_eq(dt.n, 1);
	vc_exptab_ctx_destroyed(CTX(4));
	ck_assert_int_eq(dt.n, 2);
	ck_assert_ptr_eq(dt.value[1], &v3);
	ck_assert_int_eq(vc_cls_count(), 0);
}
END_TEST

/* A destructor that calls back into the table (as runtime code may). */
static void reentrant_dtor(CUcontext ctx, void *key, void *value)
{
	const fn_t *t = table(ID_C693336E);
	void *v;

	(void)value;
	ck_assert_int_eq(((get_fn)t[2])(&v, ctx, key), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(((del_fn)t[1])(ctx, key), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(((put_fn)t[0])(CTX(6), key, value, NULL), CUDA_SUCCESS);
	dt.n++;
}

START_TEST(cls_dtor_may_reenter)
{
	const fn_t *t = table(ID_C693336E);
	static int keys[100];
	void *v;

	vc_exptab_init(&fake_ops);
	dt.n = 0;
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(((put_fn)t[0])(CTX(5), &keys[i], &keys[i], reentrant_dtor), 0);
	vc_exptab_ctx_destroyed(CTX(5));
	ck_assert_int_eq(dt.n, 100);
	ck_assert_int_eq(vc_cls_count(), 100);
	ck_assert_int_eq(((get_fn)t[2])(&v, CTX(6), &keys[99]), CUDA_SUCCESS);
	ck_assert_ptr_eq(v, &keys[99]);
	ck_assert_int_eq(vc_cls_ctx_destroyed(CTX(6)), 100);
	ck_assert_int_eq(vc_cls_count(), 0);
}
END_TEST

START_TEST(cls_bounded)
{
	const fn_t *t = table(ID_C693336E);
	put_fn put = (put_fn)t[0];
	static char keys[VC_CLS_MAX_ENTRIES + 1];
	void *v;

	vc_exptab_init(&fake_ops);
	cur_ctx = CTX(7);
	for (int i = 0; i < VC_CLS_MAX_ENTRIES; i++)
		ck_assert_int_eq(put(NULL, &keys[i], &keys[i], NULL), CUDA_SUCCESS);
	ck_assert_int_eq(put(NULL, &keys[VC_CLS_MAX_ENTRIES], NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(put(CTX(8), &keys[0], NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	/* replacing an entry needs no room */
	ck_assert_int_eq(put(NULL, &keys[5], &keys[6], NULL), CUDA_SUCCESS);
	for (int i = 0; i < VC_CLS_MAX_ENTRIES; i++) {
		ck_assert_int_eq(((get_fn)t[2])(&v, NULL, &keys[i]), CUDA_SUCCESS);
		ck_assert_ptr_eq(v, i == 5 ? &keys[6] : &keys[i]);
	}
	ck_assert_int_eq(vc_cls_ctx_destroyed(CTX(7)), VC_CLS_MAX_ENTRIES);
	ck_assert_int_eq(vc_cls_count(), 0);
	ck_assert_int_eq(put(NULL, &keys[VC_CLS_MAX_ENTRIES], NULL, NULL), CUDA_SUCCESS);
	vc_exptab_ctx_destroyed(CTX(7));
}
END_TEST

/* The map against a plain model, with few keys and contexts so that probes
 * collide and deletions shift entries around. */
START_TEST(cls_matches_model)
{
	enum { NC = 7, NK = 140 }; /* up to 980 entries: long probe runs, some wrapping */
	static uintptr_t model[NC][NK]; /* 0: absent */
	unsigned r = 12345;

	memset(model, 0, sizeof(model));
	for (int step = 0; step < 200000; step++) {
		r = r * 1103515245u + 12345u;
		int c = (int)((r >> 8) % NC), k = (int)((r >> 16) % NK), op = (int)(r >> 28) % 4;
		CUcontext ctx = CTX(100 + c);
		void *key = (void *)(uintptr_t)(0x1000 + 8 * k), *v = NULL;

		if (op == 0 || op == 1) {
			uintptr_t val = (uintptr_t)step * 2 + 1;

			ck_assert_int_eq(vc_cls_put(ctx, key, (void *)val, NULL), 0);
			model[c][k] = val;
		} else if (op == 2) {
			ck_assert_int_eq(vc_cls_delete(ctx, key), model[c][k] ? 0 : -ENOENT);
			model[c][k] = 0;
		} else {
			int rc = vc_cls_get(ctx, key, &v);

			ck_assert_int_eq(rc, model[c][k] ? 0 : -ENOENT);
			if (!rc)
				ck_assert_ptr_eq(v, (void *)model[c][k]);
		}
		if (step % 50000 == 49999) {
			vc_cls_ctx_destroyed(ctx);
			memset(model[c], 0, sizeof(model[c]));
		}
	}
	for (int c = 0; c < NC; c++)
		for (int k = 0; k < NK; k++) {
			void *v;
			int rc = vc_cls_get(CTX(100 + c), (void *)(uintptr_t)(0x1000 + 8 * k), &v);

			ck_assert_int_eq(rc, model[c][k] ? 0 : -ENOENT);
		}
	for (int c = 0; c < NC; c++)
		vc_cls_ctx_destroyed(CTX(100 + c));
	ck_assert_int_eq(vc_cls_count(), 0);
	ck_assert_int_eq(vc_cls_put(NULL, NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(vc_cls_get(CTX(1), NULL, NULL), -EINVAL);
}
END_TEST

/* ---- concurrency smoke ---------------------------------------------------- */

#define NTHREADS 8
#define ITERS 20000
#define SHARED_CTX CTX(200)
static int shared_key;
static int keys8[8];

static void *cls_thread(void *arg)
{
	const fn_t *t = table(ID_C693336E);
	put_fn put = (put_fn)t[0];
	del_fn del = (del_fn)t[1];
	get_fn get = (get_fn)t[2];
	uintptr_t id = (uintptr_t)arg;
	long bad = 0;

	cur_ctx = CTX(300 + id);
	for (uintptr_t i = 0; i < ITERS; i++) {
		void *key = &keys8[i % 8], *v = NULL;
		uintptr_t val = (id << 32) | i;

		if (put(NULL, key, (void *)val, NULL) != CUDA_SUCCESS)
			bad++;
		if (get(&v, NULL, key) != CUDA_SUCCESS || v != (void *)val)
			bad++;
		if (i % 3 == 0 && (del(NULL, key) != CUDA_SUCCESS ||
				   get(&v, NULL, key) != CUDA_ERROR_INVALID_HANDLE))
			bad++;
		/* The shared entry is rewritten all the time by thread 0; a read
		 * must never see a value torn from another entry. */
		if (id == 0 && put(SHARED_CTX, &shared_key, (void *)((i << 8) | 0xab), NULL))
			bad++;
		if (get(&v, SHARED_CTX, &shared_key) != CUDA_SUCCESS ||
		    ((uintptr_t)v & 0xff) != 0xab)
			bad++;
	}
	vc_exptab_ctx_destroyed(CTX(300 + id));
	return (void *)bad;
}

START_TEST(cls_threads)
{
	pthread_t th[NTHREADS];

	vc_exptab_init(&fake_ops);
	ck_assert_int_eq(vc_cls_put(SHARED_CTX, &shared_key, (void *)(uintptr_t)0xab, NULL), 0);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, cls_thread, (void *)i), 0);
	for (int i = 0; i < NTHREADS; i++) {
		void *bad;

		ck_assert_int_eq(pthread_join(th[i], &bad), 0);
		ck_assert_ptr_null(bad);
	}
	ck_assert_int_eq(vc_cls_count(), 1);
	vc_exptab_ctx_destroyed(SHARED_CTX);
	ck_assert_int_eq(vc_cls_count(), 0);
}
END_TEST

/* ---- table shapes ---------------------------------------------------------- */

/*
 * The driver's layouts from the probe (ETBL-LAYOUT, cut at the declared
 * size): d = the size word, c = code, 0 = NULL. The implemented slots are
 * listed so that every other code slot can be checked to answer 801.
 */
static const struct shape {
	const char *name;
	const CUuuid *id;
	uint64_t size; /* 0: no size word */
	const char *layout;
	int impl[8];   /* implemented slots, -1 ends */
} shapes[] = {
	{"f8cff951", ID_F8CFF951, 24, "dcc", {-1}},
	{"6bd5fb6c", ID_6BD5FB6C, 104, "dccccccccc0cc", {2, -1}},
	{"a094798c", ID_A094798C, 56, "dcccccc", {2, 6, -1}},
	{"42d85a81", ID_42D85A81, 24, "dcc", {2, -1}},
	{"c693336e", ID_C693336E, 0, "ccc0", {0, 1, 2, -1}},
	{"263e8860", ID_263E8860, 120, "dcccccccccccccc", {2, 3, -1}},
	{"d4082055", ID_D4082055, 24, "dcc", {1, -1}},
	{"21318c60", ID_21318C60, 744,
	 "dcccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc0c",
	 {4, 39, 51, -1}},
	{"6e163fbe", ID_6E163FBE, 792,
	 "dcccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc0ccccc",
	 {7, -1}},
	{"da9151d3", ID_DA9151D3, 56, "dcccccc", {1, 2, 3, 4, 6, -1}},
};

static int implemented(const struct shape *s, int slot)
{
	for (int i = 0; s->impl[i] >= 0; i++)
		if (s->impl[i] == slot)
			return 1;
	return 0;
}

START_TEST(table_shapes)
{
	vc_exptab_init(&fake_ops);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *s = &shapes[i];
		const fn_t *t = table(s->id), *again = table(s->id);
		size_t len = strlen(s->layout);

		ck_assert_msg(t == again, "%s moved", s->name);
		if (s->size) {
			ck_assert_uint_eq(len * 8, s->size);
			ck_assert_uint_eq(((const uint64_t *)t)[0], s->size);
		}
		for (size_t q = s->size ? 1 : 0; q < len; q++) {
			char what = s->layout[q];

			if (what == '0') {
				ck_assert_msg(!t[q], "%s slot %zu must be NULL", s->name, q);
				continue;
			}
			ck_assert_msg(t[q], "%s slot %zu is NULL", s->name, q);
			if (!implemented(s, (int)q))
				ck_assert_msg(((CUresult(*)(void))t[q])() == CUDA_ERROR_NOT_SUPPORTED,
					      "%s slot %zu", s->name, q);
		}
		for (size_t j = 0; j < i; j++)
			ck_assert_ptr_ne(table(shapes[j].id), t);
	}
}
END_TEST

START_TEST(refused_ids)
{
	const uint8_t zero[16] = {0};
	const void *t = (const void *)1;
	uint8_t near[16];

	ck_assert_int_eq(vc_exptab_get(&t, ID_69A28E9F), CUDA_ERROR_INVALID_VALUE); /* NVML */
	ck_assert_ptr_null(t);
	ck_assert_int_eq(vc_exptab_get(&t, (const CUuuid *)zero), CUDA_ERROR_INVALID_VALUE);
	memcpy(near, ID_D4082055, 16);
	near[15] ^= 1;
	ck_assert_int_eq(vc_exptab_get(&t, (const CUuuid *)near), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(vc_exptab_get(NULL, ID_D4082055), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(vc_exptab_get(&t, NULL), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* ---- the other slots ---------------------------------------------------- */

START_TEST(cudart_primary_ctx_remoted)
{
	CUresult (*f)(CUcontext *, CUdevice) =
		(CUresult(*)(CUcontext *, CUdevice))table(ID_6BD5FB6C)[2];
	CUcontext c = NULL;

	vc_exptab_init(&no_ops);
	ck_assert_int_eq(f(&c, 0), CUDA_ERROR_NOT_INITIALIZED);
	vc_exptab_init(&fake_ops);
	ck_assert_int_eq(f(&c, 0), CUDA_SUCCESS);
	ck_assert_ptr_eq(c, (CUcontext)(uintptr_t)0xc0ffee00);
	ck_assert_int_eq(f(&c, 1), CUDA_ERROR_INVALID_DEVICE);
	ck_assert_int_eq(f(NULL, 0), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(tools_hook_buffers)
{
	const fn_t *t = table(ID_A094798C);
	void *(*s2)(void **, size_t *) = (void *(*)(void **, size_t *))t[2];
	void *(*s6)(void **, size_t *) = (void *(*)(void **, size_t *))t[6];
	void *b2 = NULL, *b6 = NULL;
	size_t n2 = 0, n6 = 0;

	ck_assert_ptr_eq(s2(&b2, &n2), b2);
	ck_assert_ptr_eq(s6(&b6, &n6), b6);
	ck_assert_uint_eq(n2, 1024);
	ck_assert_uint_eq(n6, 14);
	ck_assert_ptr_ne(b2, b6);
	for (size_t i = 0; i < n2; i++)
		ck_assert_uint_eq(((uint32_t *)b2)[i], 0);
	for (size_t i = 0; i < n6; i++)
		ck_assert_uint_eq(((uint32_t *)b6)[i], 0);
}
END_TEST

START_TEST(tools_tls_current_ctx)
{
	CUresult (*f)(void *) = (CUresult(*)(void *))table(ID_42D85A81)[2];
	uint64_t out[3] = {1, 2, 3};

	vc_exptab_init(&fake_ops);
	cur_ctx = CTX(9);
	ck_assert_int_eq(f(out), CUDA_SUCCESS);
	ck_assert_uint_eq(out[0], (uintptr_t)CTX(9));
	ck_assert_uint_eq(out[1], 2);
	cur_ctx = NULL;
	ck_assert_int_eq(f(out), CUDA_SUCCESS);
	ck_assert_uint_eq(out[0], 0);
}
END_TEST

START_TEST(context_checks)
{
	const fn_t *t = table(ID_263E8860);
	CUresult (*s2)(CUcontext, uint32_t *, void **) =
		(CUresult(*)(CUcontext, uint32_t *, void **))t[2];
	uint32_t out1[2] = {0xffffffffu, 0xffffffffu};
	void *out2 = (void *)0x1234;

	ck_assert_int_eq(s2(CTX(1), out1, &out2), CUDA_SUCCESS);
	ck_assert_uint_eq(out1[0], 0);
	ck_assert_uint_eq(out1[1], 0xffffffffu); /* 4 bytes, no more */
	ck_assert_ptr_eq(out2, (void *)0x1234);
	ck_assert_int_eq(((CUresult(*)(void))t[3])(), CUDA_SUCCESS);
}
END_TEST

START_TEST(ctx_queries_remoted)
{
	const fn_t *t = table(ID_21318C60);
	CUresult (*s4)(CUcontext, uint64_t *, void *) =
		(CUresult(*)(CUcontext, uint64_t *, void *))t[4];
	CUresult (*s51)(CUcontext, uint64_t, void **) =
		(CUresult(*)(CUcontext, uint64_t, void **))t[51];
	CUresult (*s39)(CUcontext, void *, int *) = (CUresult(*)(CUcontext, void *, int *))t[39];
	uint64_t v = 99;
	void *obj = NULL;
	int n[2] = {0, -1};

	vc_exptab_init(&fake_ops);
	memset(&cq, 0, sizeof(cq));
	ck_assert_int_eq(s4(CTX(1), &v, (void *)0x48c8), CUDA_SUCCESS);
	ck_assert_uint_eq(v, 1);
	ck_assert_uint_eq(cq.table, VC_EXPTAB_CTXQ_TABLE);
	ck_assert_uint_eq(cq.slot, 4);
	ck_assert_ptr_eq(cq.ctx, CTX(1));
	ck_assert_uint_eq(cq.arg, 0);
	ck_assert_int_eq(s51(CTX(2), 0, &obj), CUDA_SUCCESS);
	ck_assert_ptr_eq(obj, (void *)(uintptr_t)0x7f00deadb000ull);
	ck_assert_uint_eq(cq.slot, 51);
	ck_assert_ptr_eq(cq.ctx, CTX(2));
	ck_assert_int_eq(s39(CTX(2), obj, n), CUDA_SUCCESS);
	ck_assert_int_eq(n[0], 7);
	ck_assert_int_eq(n[1], -1);
	ck_assert_uint_eq(cq.slot, 39);
	ck_assert_uint_eq(cq.arg, 0x7f00deadb000ull);
	/* The host's error comes back; outputs stay untouched. */
	cq.rc = CUDA_ERROR_INVALID_CONTEXT;
	v = 99;
	ck_assert_int_eq(s4(CTX(3), &v, NULL), CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_uint_eq(v, 99);
	cq.rc = 0;
	ck_assert_int_eq(s4(CTX(3), NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(cq.calls, 4);
	vc_exptab_init(&no_ops);
	ck_assert_int_eq(s4(CTX(3), &v, NULL), CUDA_ERROR_NOT_INITIALIZED);
}
END_TEST

START_TEST(cufft_slot_refused)
{
	CUresult (*f)(CUcontext, const void *, const void *, void **) =
		(CUresult(*)(CUcontext, const void *, const void *, void **))table(ID_6E163FBE)[7];
	const uint32_t desc[4] = {1, 0x14, 0x15, 0};
	void *out = NULL;

	ck_assert_int_eq(f(CTX(1), desc, (const void *)f, &out), CUDA_ERROR_INVALID_VALUE);
	ck_assert_ptr_null(out);
}
END_TEST

/* With VCUDA_DEBUG set, an uncalled slot says so on stderr, once. */
START_TEST(unsupported_slot_logs_once)
{
	CUresult (*f)(void) = (CUresult(*)(void))table(ID_F8CFF951)[2];
	FILE *tmp = tmpfile();
	int saved = dup(2);
	char buf[1024] = "";
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fileno(tmp), 2), 2);
	unsetenv("VCUDA_DEBUG");
	ck_assert_int_eq(f(), CUDA_ERROR_NOT_SUPPORTED); /* silent, and not yet "logged" */
	setenv("VCUDA_DEBUG", "1", 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(f(), CUDA_ERROR_NOT_SUPPORTED);
	unsetenv("VCUDA_DEBUG");
	fflush(stderr);
	ck_assert_int_eq(dup2(saved, 2), 2);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = 0;
	fclose(tmp);
	ck_assert_msg(strstr(buf, "f8cff951 slot 2") != NULL, "log: %s", buf);
	ck_assert_ptr_null(strchr(buf, '\n') ? strchr(strchr(buf, '\n') + 1, '\n') : NULL);
}
END_TEST

/* ---- da9151d3: NVRTC's compile cache (exptab_nvvm.c, jitcache.c) ---------- */

typedef CUresult (*nv_create_t)(void **, int, const void *, size_t, const char *, const char *, const char *,
				int, int);
typedef CUresult (*nv_destroy_t)(void *);
typedef CUresult (*nv_lookup_t)(void *, int, void **, uint32_t *);
typedef CUresult (*nv_store_t)(void *, int, const void *, size_t);
typedef CUresult (*nv_release_t)(void *, void *, size_t, size_t);

#define NV_SLOT(type, n) ((type)table(ID_DA9151D3)[n])

static char g_cache_dir[64];

/* Remove the test's cache folder (mkdtemp's name: no shell characters). */
static void cache_done(void)
{
	char cmd[96];

	if (!g_cache_dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", g_cache_dir);
	ck_assert_int_eq(system(cmd), 0);
	g_cache_dir[0] = 0;
}

/* A fresh cache folder (CUDA_CACHE_PATH) and settings read again. */
static void cache_fresh(const char *maxsize, const char *disable)
{
	cache_done();
	strcpy(g_cache_dir, "/tmp/vcjc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(g_cache_dir));
	setenv("CUDA_CACHE_PATH", g_cache_dir, 1);
	if (maxsize)
		setenv("CUDA_CACHE_MAXSIZE", maxsize, 1);
	else
		unsetenv("CUDA_CACHE_MAXSIZE");
	if (disable)
		setenv("CUDA_CACHE_DISABLE", disable, 1);
	else
		unsetenv("CUDA_CACHE_DISABLE");
	vc_jitcache_reset();
}

static int cache_files(void)
{
	char cmd[160];
	int n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/vcuda-nvrtc 2>/dev/null | grep -c '\\.vcjc$'", g_cache_dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void *nv_handle(int kind, const char *input, const char *options)
{
	void *h = NULL;

	ck_assert_int_eq(NV_SLOT(nv_create_t, 1)(&h, kind, input, strlen(input), options, "HOST64",
						 "Aug 20 2025 14:13:52", 90, 0),
			 CUDA_SUCCESS);
	ck_assert_ptr_nonnull(h);
	return h;
}

/* The exchange NVRTC makes: miss, store; then, for the same step, a hit. */
START_TEST(nvvm_cache_round_trip)
{
	const char *ptx = "// made by test_exptab\n.version 9.0\n";
	void *h = nv_handle(2, "BC\xc0\xde bitcode", " -arch=compute_90 -ftz=0"), *d = NULL;
	uint32_t len = 0;

	cache_fresh(NULL, NULL);
	ck_assert_int_eq(NV_SLOT(nv_lookup_t, 3)(h, 0, &d, &len), CUDA_ERROR_NOT_FOUND);
	ck_assert_int_eq(NV_SLOT(nv_store_t, 4)(h, 0, ptx, strlen(ptx) + 1), CUDA_SUCCESS);
	ck_assert_int_eq(NV_SLOT(nv_destroy_t, 2)(h), CUDA_SUCCESS);
	ck_assert_int_eq(cache_files(), 1);

	/* Same step: a hit, from memory and then (settings forgotten) from the file. */
	for (int round = 0; round < 2; round++) {
		h = nv_handle(2, "BC\xc0\xde bitcode", " -arch=compute_90 -ftz=0");
		ck_assert_int_eq(NV_SLOT(nv_lookup_t, 3)(h, 0, &d, &len), CUDA_SUCCESS);
		ck_assert_uint_eq(len, strlen(ptx) + 1);
		ck_assert_str_eq((const char *)d, ptx);
		ck_assert_int_eq(NV_SLOT(nv_release_t, 6)(d, &d, len, len), CUDA_SUCCESS);
		ck_assert_int_eq(NV_SLOT(nv_release_t, 6)(d, &d, len, len), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(NV_SLOT(nv_destroy_t, 2)(h), CUDA_SUCCESS);
		vc_jitcache_reset();
	}

	/* Another option, another kind, another input: each a miss. */
	const struct {
		int kind;
		const char *in, *opt;
	} other[] = {
		{2, "BC\xc0\xde bitcode", " -arch=compute_90 -ftz=1"},
		{1, "BC\xc0\xde bitcode", " -arch=compute_90 -ftz=0"},
		{2, "BC\xc0\xde bitcodf", " -arch=compute_90 -ftz=0"},
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		h = nv_handle(other[i].kind, other[i].in, other[i].opt);
		ck_assert_int_eq(NV_SLOT(nv_lookup_t, 3)(h, 0, &d, &len), CUDA_ERROR_NOT_FOUND);
		ck_assert_int_eq(NV_SLOT(nv_destroy_t, 2)(h), CUDA_SUCCESS);
	}
	cache_done();
}
END_TEST

/* CUDA_CACHE_DISABLE=1: create refuses as the driver does (3), so NVRTC
 * compiles without the cache. */
START_TEST(nvvm_cache_disabled)
{
	void *h = (void *)1;

	cache_fresh(NULL, "1");
	ck_assert_int_eq(NV_SLOT(nv_create_t, 1)(&h, 2, "x", 1, "", "HOST64", "d", 90, 0),
			 CUDA_ERROR_NOT_INITIALIZED);
	ck_assert_ptr_null(h);
	ck_assert_int_eq(cache_files(), 0);
	cache_fresh(NULL, "0");
	h = nv_handle(2, "x", "");
	ck_assert_int_eq(NV_SLOT(nv_destroy_t, 2)(h), CUDA_SUCCESS);
	cache_done();
}
END_TEST

/* Handles and buffers this table did not hand out are refused, never used. */
START_TEST(nvvm_cache_foreign_pointers)
{
	uint64_t fake[8] = {0x4e56564d43414348ull};
	void *d = NULL, *h;
	uint32_t len;

	cache_fresh(NULL, NULL);
	ck_assert_int_eq(NV_SLOT(nv_destroy_t, 2)(fake), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(NV_SLOT(nv_destroy_t, 2)(NULL), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(NV_SLOT(nv_lookup_t, 3)(fake, 0, &d, &len), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(NV_SLOT(nv_store_t, 4)(fake, 0, "x", 1), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(NV_SLOT(nv_release_t, 6)(fake, NULL, 0, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(NV_SLOT(nv_create_t, 1)(NULL, 2, "x", 1, "", "", "", 0, 0), CUDA_ERROR_INVALID_VALUE);
	h = nv_handle(2, "x", "");
	ck_assert_int_eq(NV_SLOT(nv_lookup_t, 3)(h, 0, NULL, &len), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(NV_SLOT(nv_store_t, 4)(h, 0, NULL, 5), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(NV_SLOT(nv_destroy_t, 2)(h), CUDA_SUCCESS);
	ck_assert_int_eq(NV_SLOT(nv_destroy_t, 2)(h), CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(((CUresult(*)(void))table(ID_DA9151D3)[5])(), CUDA_ERROR_NOT_SUPPORTED);
	cache_done();
}
END_TEST

/* A damaged or truncated file, or something else under an entry's name, is
 * a miss, not a wrong answer or a hang. */
START_TEST(jitcache_damaged_file)
{
	const char key[] = "key", val[] = "value bytes";
	char cmd[200];
	void *d;
	size_t n;

	for (int how = 0; how < 2; how++) {
		cache_fresh(NULL, NULL);
		ck_assert_int_eq(vc_jitcache_store(key, sizeof(key), val, sizeof(val)), 0);
		vc_jitcache_reset();
		ck_assert_int_eq(vc_jitcache_lookup(key, sizeof(key), &d, &n), 0);
		free(d);
		/* flip the value's last byte, or cut it off */
		snprintf(cmd, sizeof(cmd),
			 how ? "f=$(ls %s/vcuda-nvrtc/*.vcjc); truncate -s -1 $f"
			     : "f=$(ls %s/vcuda-nvrtc/*.vcjc); printf 'X' | dd of=$f bs=1 seek=$(($(stat -c %%s $f)-1)) conv=notrunc status=none",
			 g_cache_dir);
		ck_assert_int_eq(system(cmd), 0);
		vc_jitcache_reset();
		ck_assert_int_eq(vc_jitcache_lookup(key, sizeof(key), &d, &n), -ENOENT);
	}
	/* A FIFO under the entry's name: a miss, at once (no open that waits for a writer). */
	snprintf(cmd, sizeof(cmd), "f=$(ls %s/vcuda-nvrtc/*.vcjc); rm $f && mkfifo $f", g_cache_dir);
	ck_assert_int_eq(system(cmd), 0);
	vc_jitcache_reset();
	ck_assert_int_eq(vc_jitcache_lookup(key, sizeof(key), &d, &n), -ENOENT);
	cache_done();
}
END_TEST

/* A temporary file a dead writer left is removed once it is an hour old;
 * a fresh one (another process writing now) is left alone. */
START_TEST(jitcache_stale_tmp)
{
	char cmd[256], path[128];

	cache_fresh(NULL, NULL);
	ck_assert_int_eq(vc_jitcache_store("a", 2, "x", 1), 0);
	snprintf(cmd, sizeof(cmd), "touch -d '2 hours ago' %s/vcuda-nvrtc/.tmp-1-0 && touch %s/vcuda-nvrtc/.tmp-2-0",
		 g_cache_dir, g_cache_dir);
	ck_assert_int_eq(system(cmd), 0);
	vc_jitcache_reset(); /* the next store counts the folder again */
	ck_assert_int_eq(vc_jitcache_store("b", 2, "y", 1), 0);
	snprintf(path, sizeof(path), "%s/vcuda-nvrtc/.tmp-1-0", g_cache_dir);
	ck_assert_int_ne(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/vcuda-nvrtc/.tmp-2-0", g_cache_dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	cache_done();
}
END_TEST

/* CUDA_CACHE_MAXSIZE: the oldest files go; 0 keeps nothing; an unwritable
 * folder still leaves the process its own entries. */
START_TEST(jitcache_limits)
{
	char val[1000], key[8], k0[8] = "k0", k5[8] = "k5";
	void *d;
	size_t n;

	memset(val, 'v', sizeof(val));
	cache_fresh("2600", NULL);
	for (int i = 0; i < 6; i++) {
		memset(key, 0, sizeof(key));
		key[0] = 'k';
		key[1] = (char)('0' + i);
		ck_assert_int_eq(vc_jitcache_store(key, sizeof(key), val, sizeof(val)), 0);
		usleep(2000); /* distinct ages */
	}
	ck_assert_int_le(cache_files(), 2);
	vc_jitcache_reset();
	ck_assert_int_eq(vc_jitcache_lookup(k5, sizeof(k5), &d, &n), 0); /* the newest stays */
	free(d);
	ck_assert_int_eq(vc_jitcache_lookup(k0, sizeof(k0), &d, &n), -ENOENT);

	cache_fresh("0", NULL);
	ck_assert_int_eq(vc_jitcache_store("k", 2, val, sizeof(val)), 0);
	ck_assert_int_eq(vc_jitcache_lookup("k", 2, &d, &n), -ENOENT);
	ck_assert_int_eq(cache_files(), 0);

	setenv("CUDA_CACHE_PATH", "/proc/vcuda-no-such-folder", 1);
	unsetenv("CUDA_CACHE_MAXSIZE");
	vc_jitcache_reset();
	ck_assert_int_eq(vc_jitcache_store("k", 2, val, sizeof(val)), 0);
	ck_assert_int_eq(vc_jitcache_lookup("k", 2, &d, &n), 0);
	ck_assert_uint_eq(n, sizeof(val));
	free(d);
	ck_assert_int_eq(vc_jitcache_store(NULL, 2, val, 1), -EINVAL);
	cache_done();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("exptab");
	TCase *md2 = tcase_create("md2");
	TCase *ic = tcase_create("integrity");
	TCase *cls = tcase_create("cls");
	TCase *tbl = tcase_create("tables");
	SRunner *sr;
	int failed;

	tcase_add_test(md2, md2_rfc1319_vectors);
	tcase_add_test(md2, md2_incremental_matches_one_shot);
	tcase_add_test(md2, hmac_md2_inner_key_state);
	tcase_add_test(md2, hmac_md2_vectors);
	suite_add_tcase(s, md2);

	tcase_add_test(ic, integrity_constants);
	tcase_add_test(ic, integrity_known_answer);
	tcase_add_test(ic, integrity_hmac_one_device);
	tcase_add_test(ic, integrity_per_thread);
	suite_add_tcase(s, ic);

	tcase_set_timeout(cls, 120);
	tcase_add_test(cls, cls_no_context);
	tcase_add_test(cls, cls_put_get_delete);
	tcase_add_test(cls, cls_dtor_on_ctx_destroy);
	tcase_add_test(cls, cls_dtor_may_reenter);
	tcase_add_test(cls, cls_bounded);
	tcase_add_test(cls, cls_matches_model);
	tcase_add_test(cls, cls_threads);
	suite_add_tcase(s, cls);

	/* First: it must see its slot not yet logged, even without fork. */
	tcase_add_test(tbl, unsupported_slot_logs_once);
	tcase_add_test(tbl, table_shapes);
	tcase_add_test(tbl, refused_ids);
	tcase_add_test(tbl, cudart_primary_ctx_remoted);
	tcase_add_test(tbl, tools_hook_buffers);
	tcase_add_test(tbl, tools_tls_current_ctx);
	tcase_add_test(tbl, context_checks);
	tcase_add_test(tbl, ctx_queries_remoted);
	tcase_add_test(tbl, cufft_slot_refused);
	tcase_add_test(tbl, nvvm_cache_round_trip);
	tcase_add_test(tbl, nvvm_cache_disabled);
	tcase_add_test(tbl, nvvm_cache_foreign_pointers);
	tcase_add_test(tbl, jitcache_damaged_file);
	tcase_add_test(tbl, jitcache_limits);
	tcase_add_test(tbl, jitcache_stale_tmp);
	suite_add_tcase(s, tbl);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
