/* SPDX-License-Identifier: MIT */
/*
 * ipc.c - the server's table of IPC handles and its tokens (ipc.h).
 *
 * A token: "vcudaIPC", the kind (4 bytes), 4 zero bytes, the entry's random
 * 128-bit id, a 128-bit MAC of those 32 bytes, 16 zero bytes. The MAC is two
 * SipHash-2-4 values under two halves of the listener's 256-bit secret; ids
 * and MACs are compared in constant time. The secret lives in the listener's
 * private memory (its workers inherit it at fork), never in the table.
 *
 * The table's entries are changed and read under one process-shared robust
 * mutex (a worker that dies holding it leaves it to the next locker, whose
 * entries are whole: an entry becomes live last). No entry word is read
 * without it, so no atomics are needed.
 */
#include "resources/ipc.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "resources/fdbroker.h"

static const uint8_t MAGIC[8] = {'v', 'c', 'u', 'd', 'a', 'I', 'P', 'C'};

struct entry {
	uint32_t live;
	uint32_t kind;
	int32_t owner; /* the exporting worker's pid */
	uint32_t len;
	uint64_t tag;
	uint8_t id[16];
	uint8_t real[VC_IPC_REAL_MAX];
};

struct table {
	pthread_mutex_t mu;
	struct entry e[VC_IPC_MAX];
};

static struct table *g_tab;
static uint64_t g_key[4];

/* ---- the MAC: SipHash-2-4 ------------------------------------------------------ */

static uint64_t rotl(uint64_t v, int b)
{
	return (v << b) | (v >> (64 - b));
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#define SIPROUND                                                                       \
	do {                                                                           \
		v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);              \
		v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                                 \
		v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                                 \
		v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);              \
	} while (0)

static uint64_t siphash(uint64_t k0, uint64_t k1, const uint8_t *m, size_t n)
{
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
	uint64_t b = (uint64_t)n << 56;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		uint64_t w = le64(m + i);

		v3 ^= w;
		SIPROUND;
		SIPROUND;
		v0 ^= w;
	}
	for (size_t k = 0; i + k < n; k++)
		b |= (uint64_t)m[i + k] << (8 * k);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

int vc_ipc_mac_selftest(void)
{
	uint8_t key[16], msg[15];

	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	/* The reference implementation's vectors for 0 and 15 bytes. */
	return siphash(le64(key), le64(key + 8), msg, 0) == 0x726fdb47dd0e0e31ull &&
			       siphash(le64(key), le64(key + 8), msg, 15) == 0xa129ca6149be45e5ull
		       ? 0
		       : -1;
}

static void mac(const uint8_t head[32], uint8_t out[16])
{
	uint64_t a = siphash(g_key[0], g_key[1], head, 32), b = siphash(g_key[2], g_key[3], head, 32);

	for (int i = 0; i < 8; i++) {
		out[i] = (uint8_t)(a >> (8 * i));
		out[8 + i] = (uint8_t)(b >> (8 * i));
	}
}

/* Constant time: as long for a near miss as for a far one. */
static int differ(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d != 0;
}

/* ---- the table --------------------------------------------------------------------- */

static int make_table(void)
{
	pthread_mutexattr_t at;
	struct table *t;
	int rc;

	if (getrandom(g_key, sizeof(g_key), 0) != (ssize_t)sizeof(g_key))
		return -EIO;
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return -ENOMEM;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
	rc = pthread_mutex_init(&t->mu, &at);
	pthread_mutexattr_destroy(&at);
	if (rc) {
		munmap(t, sizeof(*t));
		return -rc;
	}
	g_tab = t;
	return 0;
}

int vc_ipc_create(void)
{
	return g_tab ? 0 : make_table();
}

static void lock(void)
{
	/* A worker died holding it: its entries are whole (live is set last). */
	if (pthread_mutex_lock(&g_tab->mu) == EOWNERDEAD)
		pthread_mutex_consistent(&g_tab->mu);
}

static void unlock(void)
{
	pthread_mutex_unlock(&g_tab->mu);
}

static void make_token(uint32_t kind, const uint8_t id[16], uint8_t token[VC_IPC_TOKEN])
{
	memset(token, 0, VC_IPC_TOKEN);
	memcpy(token, MAGIC, sizeof(MAGIC));
	for (int i = 0; i < 4; i++)
		token[8 + i] = (uint8_t)(kind >> (8 * i));
	memcpy(token + 16, id, 16);
	mac(token, token + 32);
}

int vc_ipc_put(enum vc_ipc_kind kind, const void *real, size_t n, uint64_t tag, uint8_t token[VC_IPC_TOKEN])
{
	uint8_t id[16];
	int rc = -ENOSPC;

	if (n > VC_IPC_REAL_MAX)
		return -EINVAL;
	if (!g_tab && (rc = make_table()))
		return rc;
	if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
		return -EIO;
	rc = -ENOSPC;
	lock();
	for (uint32_t i = 0; i < VC_IPC_MAX; i++) {
		struct entry *e = &g_tab->e[i];

		if (e->live)
			continue;
		e->kind = (uint32_t)kind;
		e->owner = (int32_t)getpid();
		e->len = (uint32_t)n;
		e->tag = tag;
		memcpy(e->id, id, sizeof(id));
		memset(e->real, 0, sizeof(e->real));
		memcpy(e->real, real, n);
		e->live = 1;
		rc = 0;
		break;
	}
	unlock();
	if (rc == 0)
		make_token((uint32_t)kind, id, token);
	return rc;
}

int vc_ipc_get(enum vc_ipc_kind kind, const uint8_t token[VC_IPC_TOKEN], void *real, size_t n, uint64_t *tag)
{
	static const uint8_t zero[16];
	uint8_t want[16];
	int rc = -EINVAL;

	if (!g_tab || n > VC_IPC_REAL_MAX)
		return -EINVAL;
	/* The MAC first: nothing of a token that is not ours is looked up. */
	mac(token, want);
	if (differ(token + 32, want, 16) | differ(token + 48, zero, 16) | differ(token, MAGIC, 8) |
	    differ(token + 12, zero, 4))
		return -EINVAL;
	if ((uint32_t)token[8] != (uint32_t)kind || token[9] || token[10] || token[11])
		return -EINVAL;
	lock();
	for (uint32_t i = 0; i < VC_IPC_MAX; i++) {
		struct entry *e = &g_tab->e[i];

		if (!e->live || e->kind != (uint32_t)kind || differ(e->id, token + 16, 16) || e->len < n)
			continue;
		memcpy(real, e->real, n);
		if (tag)
			*tag = e->tag;
		rc = 0;
		break;
	}
	unlock();
	return rc;
}

int vc_ipc_find(enum vc_ipc_kind kind, uint64_t tag, uint8_t token[VC_IPC_TOKEN])
{
	int32_t me = (int32_t)getpid();
	uint8_t id[16];
	int rc = -ENOENT;

	if (!g_tab)
		return -ENOENT;
	lock();
	for (uint32_t i = 0; i < VC_IPC_MAX; i++) {
		struct entry *e = &g_tab->e[i];

		if (e->live && e->owner == me && e->kind == (uint32_t)kind && e->tag == tag) {
			memcpy(id, e->id, sizeof(id));
			rc = 0;
			break;
		}
	}
	unlock();
	if (rc == 0)
		make_token((uint32_t)kind, id, token);
	return rc;
}

static void drop_where(int32_t owner, uint32_t kind, uint64_t tag)
{
	lock();
	for (uint32_t i = 0; i < VC_IPC_MAX; i++) {
		struct entry *e = &g_tab->e[i];

		if (e->live && e->owner == owner && (!kind || (e->kind == kind && e->tag == tag))) {
			e->live = 0;
			memset(e->real, 0, sizeof(e->real));
		}
	}
	unlock();
}

int vc_ipc_take(enum vc_ipc_kind kind, uint64_t tag, void *real, size_t n)
{
	int32_t me = (int32_t)getpid();
	int rc = -ENOENT;

	if (!g_tab || n > VC_IPC_REAL_MAX)
		return -ENOENT;
	lock();
	for (uint32_t i = 0; i < VC_IPC_MAX; i++) {
		struct entry *e = &g_tab->e[i];

		if (e->live && e->owner == me && e->kind == (uint32_t)kind && e->tag == tag) {
			memcpy(real, e->real, n);
			e->live = 0;
			memset(e->real, 0, sizeof(e->real));
			rc = 0;
			break;
		}
	}
	unlock();
	return rc;
}

void vc_ipc_forget(enum vc_ipc_kind fd_kind, enum vc_ipc_kind bytes_kind, uint64_t tag)
{
	uint8_t key[VC_FDBROKER_KEY];

	if (!vc_ipc_take(fd_kind, tag, key, sizeof(key)))
		vc_fdbroker_drop(key);
	vc_ipc_drop(bytes_kind, tag);
}

void vc_ipc_drop(enum vc_ipc_kind kind, uint64_t tag)
{
	if (g_tab)
		drop_where((int32_t)getpid(), (uint32_t)kind, tag);
}

void vc_ipc_reap(pid_t pid)
{
	if (g_tab)
		drop_where((int32_t)pid, 0, 0);
}
