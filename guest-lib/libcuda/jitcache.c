/* SPDX-License-Identifier: MIT */
/*
 * jitcache.c - the compute cache NVRTC asks the driver for, kept in the
 * guest (jitcache.h says what and why).
 *
 * File format (host byte order; the folder belongs to one machine):
 *   struct disk_header, then the key's bytes, then the value's bytes.
 * The file's name is the key's 64-bit hash in hex; two keys with one hash
 * share a name, and the later one replaces the earlier.
 */
#include "jitcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MAX (256ull << 20)
#define LIMIT_MAX (4ull << 30)
#define MEM_MAX (32u << 20)
#define SUBDIR "vcuda-nvrtc"
#define SUFFIX ".vcjc"
#define TMP_STALE_S 3600 /* a temporary file older than this is a dead writer's */

static const char disk_magic[8] = {'V', 'C', 'J', 'I', 'T', 'C', '0', '1'};

struct disk_header {
	char magic[8];
	uint64_t key_len;
	uint64_t data_len;
	uint64_t data_hash;
};

struct mem_entry {
	struct mem_entry *next, *prev; /* newest first */
	uint64_t hash;
	size_t key_len, data_len;
	unsigned char *key, *data;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_loaded;             /* settings read */
static int g_enabled;            /* CUDA_CACHE_DISABLE is not 1 */
static unsigned long long g_max; /* CUDA_CACHE_MAXSIZE */
static char g_dir[PATH_MAX];     /* "" when there is no folder */
static int g_dir_ready;          /* created (or found) this process */
static long long g_disk_bytes = -1; /* in the folder, as last counted; -1 not yet */
static unsigned g_tmp_seq;
static struct mem_entry *g_head, *g_tail;
static size_t g_mem_bytes;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static uint64_t hash_of(const void *p, size_t n)
{
	return fnv(1469598103934665603ull, p, n);
}

/* Called with g_mu held. */
static void load_settings(void)
{
	const char *e;

	if (g_loaded)
		return;
	g_loaded = 1;
	e = getenv("CUDA_CACHE_DISABLE");
	g_enabled = !(e && !strcmp(e, "1"));
	g_max = DEFAULT_MAX;
	e = getenv("CUDA_CACHE_MAXSIZE");
	if (e && *e) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(e, &end, 10);
		if (!errno && !*end)
			g_max = v > LIMIT_MAX ? LIMIT_MAX : v;
	}
	g_dir[0] = 0;
	e = getenv("CUDA_CACHE_PATH");
	if (e && *e) {
		if ((size_t)snprintf(g_dir, sizeof(g_dir), "%s/" SUBDIR, e) >= sizeof(g_dir))
			g_dir[0] = 0;
	} else if ((e = getenv("HOME")) && *e) {
		if ((size_t)snprintf(g_dir, sizeof(g_dir), "%s/.nv/ComputeCache/" SUBDIR, e) >= sizeof(g_dir))
			g_dir[0] = 0;
	}
}

int vc_jitcache_enabled(void)
{
	int on;

	pthread_mutex_lock(&g_mu);
	load_settings();
	on = g_enabled;
	pthread_mutex_unlock(&g_mu);
	return on;
}

const char *vc_jitcache_dir(void)
{
	const char *d;

	pthread_mutex_lock(&g_mu);
	load_settings();
	d = g_dir[0] ? g_dir : NULL;
	pthread_mutex_unlock(&g_mu);
	return d;
}

/* ---- the memory layer (g_mu held) ----------------------------------------- */

static void mem_unlink(struct mem_entry *m)
{
	if (m->prev)
		m->prev->next = m->next;
	else
		g_head = m->next;
	if (m->next)
		m->next->prev = m->prev;
	else
		g_tail = m->prev;
	m->next = m->prev = NULL;
}

static void mem_push_front(struct mem_entry *m)
{
	m->prev = NULL;
	m->next = g_head;
	if (g_head)
		g_head->prev = m;
	g_head = m;
	if (!g_tail)
		g_tail = m;
}

static void mem_free(struct mem_entry *m)
{
	g_mem_bytes -= m->key_len + m->data_len;
	free(m->key);
	free(m->data);
	free(m);
}

static struct mem_entry *mem_find(uint64_t h, const void *key, size_t key_len)
{
	for (struct mem_entry *m = g_head; m; m = m->next)
		if (m->hash == h && m->key_len == key_len && !memcmp(m->key, key, key_len))
			return m;
	return NULL;
}

static void mem_put(uint64_t h, const void *key, size_t key_len, const void *data, size_t len)
{
	struct mem_entry *m = mem_find(h, key, key_len);

	if (m) {
		mem_unlink(m);
		mem_free(m);
	}
	if (key_len + len > MEM_MAX)
		return;
	while (g_tail && g_mem_bytes + key_len + len > MEM_MAX) {
		struct mem_entry *old = g_tail;

		mem_unlink(old);
		mem_free(old);
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	m->key = malloc(key_len ? key_len : 1);
	m->data = malloc(len ? len : 1);
	if (!m->key || !m->data) {
		free(m->key);
		free(m->data);
		free(m);
		return;
	}
	memcpy(m->key, key, key_len);
	memcpy(m->data, data, len);
	m->hash = h;
	m->key_len = key_len;
	m->data_len = len;
	g_mem_bytes += key_len + len;
	mem_push_front(m);
}

/* ---- the folder ------------------------------------------------------------ */

/* mkdir -p with mode 0700 for what it creates. Called with g_mu held. */
static int dir_ready(void)
{
	char p[PATH_MAX];

	if (!g_dir[0])
		return 0;
	if (g_dir_ready)
		return 1;
	snprintf(p, sizeof(p), "%s", g_dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0700) && errno != EEXIST)
			return 0;
		*s = '/';
	}
	if (mkdir(p, 0700) && errno != EEXIST)
		return 0;
	g_dir_ready = 1;
	return 1;
}

static void path_of(char *out, size_t cap, uint64_t h)
{
	snprintf(out, cap, "%s/%016llx" SUFFIX, g_dir, (unsigned long long)h);
}

/* The file's value when its key is @key, else -ENOENT. Called with g_mu held. */
static int disk_get(uint64_t h, const void *key, size_t key_len, void **data, size_t *len)
{
	char path[PATH_MAX + 32];
	struct disk_header hd;
	struct stat st;
	unsigned char *k = NULL, *d = NULL;
	FILE *f;
	int fd, rc = -ENOENT;

	if (!g_dir[0])
		return -ENOENT;
	path_of(path, sizeof(path), h);
	/* O_NONBLOCK: a FIFO planted under an entry's name must not hang the
	 * program (it is then refused as not a regular file). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -ENOENT;
	f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return -ENOENT;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || fread(&hd, sizeof(hd), 1, f) != 1)
		goto out;
	if (memcmp(hd.magic, disk_magic, sizeof(disk_magic)) || hd.key_len != key_len ||
	    hd.data_len > VC_JITCACHE_ITEM_MAX ||
	    (uint64_t)st.st_size != sizeof(hd) + hd.key_len + hd.data_len)
		goto out;
	k = malloc(key_len ? key_len : 1);
	d = malloc(hd.data_len ? hd.data_len : 1);
	if (!k || !d) {
		rc = -ENOMEM;
		goto out;
	}
	if (fread(k, 1, key_len, f) != key_len || memcmp(k, key, key_len) ||
	    fread(d, 1, hd.data_len, f) != hd.data_len || hash_of(d, hd.data_len) != hd.data_hash)
		goto out;
	/* A hit is a use: the oldest files are the ones evicted. */
	futimens(fd, NULL);
	*data = d;
	*len = hd.data_len;
	d = NULL;
	rc = 0;
out:
	free(k);
	free(d);
	fclose(f);
	return rc;
}

struct file_age {
	struct timespec mtime;
	off_t size;
	char name[64];
};

static int older_first(const void *a, const void *b)
{
	const struct file_age *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return 0;
}

/*
 * Count the folder's entries and, when @room bytes more would pass the
 * limit, remove the oldest until they fit in three quarters of it.
 * Called with g_mu held.
 */
static void disk_trim(unsigned long long room)
{
	struct file_age *v = NULL;
	size_t n = 0, cap = 0;
	long long total = 0;
	DIR *d = opendir(g_dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		struct stat st;

		/* A writer that died between create and rename left its file. */
		if (!strncmp(e->d_name, ".tmp-", 5)) {
			if (!fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
			    st.st_mtim.tv_sec + TMP_STALE_S < time(NULL))
				unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if (l < sizeof(SUFFIX) || l >= sizeof(v->name) || strcmp(e->d_name + l - (sizeof(SUFFIX) - 1), SUFFIX))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct file_age *nv = realloc(v, nc * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		v[n].mtime = st.st_mtim;
		v[n].size = st.st_size;
		memcpy(v[n].name, e->d_name, l + 1);
		total += st.st_size;
		n++;
	}
	if ((unsigned long long)total + room > g_max && v) {
		qsort(v, n, sizeof(*v), older_first);
		for (size_t i = 0; i < n && (unsigned long long)total + room > g_max / 4 * 3; i++)
			if (!unlinkat(dirfd(d), v[i].name, 0))
				total -= v[i].size;
	}
	g_disk_bytes = total;
	free(v);
	closedir(d);
}

/* Called with g_mu held. Failures leave the folder as it was. */
static void disk_put(uint64_t h, const void *key, size_t key_len, const void *data, size_t len)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
	struct disk_header hd;
	unsigned long long size = sizeof(hd) + key_len + len;
	FILE *f;
	int fd, ok;

	if (!g_max || size > g_max || !dir_ready())
		return;
	if (g_disk_bytes < 0 || (unsigned long long)g_disk_bytes + size > g_max)
		disk_trim(size);
	memcpy(hd.magic, disk_magic, sizeof(hd.magic));
	hd.key_len = key_len;
	hd.data_len = len;
	hd.data_hash = hash_of(data, len);
	path_of(path, sizeof(path), h);
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%d-%u", g_dir, (int)getpid(), g_tmp_seq++);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		unlink(tmp);
		return;
	}
	ok = fwrite(&hd, sizeof(hd), 1, f) == 1 && fwrite(key, 1, key_len, f) == key_len &&
	     fwrite(data, 1, len, f) == len;
	if (fclose(f) || !ok || rename(tmp, path)) {
		unlink(tmp);
		return;
	}
	g_disk_bytes += (long long)size;
}

/* ---- the interface ---------------------------------------------------------- */

int vc_jitcache_lookup(const void *key, size_t key_len, void **data, size_t *len)
{
	uint64_t h;
	struct mem_entry *m;
	int rc;

	if (!key || !data || !len || key_len > VC_JITCACHE_ITEM_MAX)
		return -ENOENT;
	h = hash_of(key, key_len);
	pthread_mutex_lock(&g_mu);
	load_settings();
	if (!g_enabled) {
		rc = -ENOENT;
	} else if ((m = mem_find(h, key, key_len))) {
		void *d = malloc(m->data_len ? m->data_len : 1);

		rc = d ? 0 : -ENOMEM;
		if (d) {
			memcpy(d, m->data, m->data_len);
			*data = d;
			*len = m->data_len;
			mem_unlink(m);
			mem_push_front(m);
		}
	} else {
		rc = disk_get(h, key, key_len, data, len);
		if (!rc)
			mem_put(h, key, key_len, *data, *len);
	}
	pthread_mutex_unlock(&g_mu);
	return rc;
}

int vc_jitcache_store(const void *key, size_t key_len, const void *data, size_t len)
{
	uint64_t h;

	if (!key || (!data && len) || key_len > VC_JITCACHE_ITEM_MAX || len > VC_JITCACHE_ITEM_MAX)
		return -EINVAL;
	h = hash_of(key, key_len);
	pthread_mutex_lock(&g_mu);
	load_settings();
	if (g_enabled && g_max) {
		mem_put(h, key, key_len, data, len);
		disk_put(h, key, key_len, data, len);
	}
	pthread_mutex_unlock(&g_mu);
	return 0;
}

void vc_jitcache_reset(void)
{
	pthread_mutex_lock(&g_mu);
	while (g_head) {
		struct mem_entry *m = g_head;

		mem_unlink(m);
		mem_free(m);
	}
	g_loaded = 0;
	g_dir_ready = 0;
	g_disk_bytes = -1;
	pthread_mutex_unlock(&g_mu);
}
