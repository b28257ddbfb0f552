/* SPDX-License-Identifier: MIT */
/*
 * gpushare.c - the weighted fair share of a GPU between servers (gpushare.h).
 *
 * The scheduling file is shared by host processes only (the servers of one
 * GPU, and their workers); no guest ever sees it. Entries are claimed under
 * an flock; every other access is a single atomic load, store or
 * read-modify-write on one field, so a reader may see one field updated
 * before another, which only shifts a decision by one round.
 */
#include "resources/gpushare.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCHED_MAGIC 0x44484353u /* "SCHD" */
#define SCHED_VERSION 1u
#define QUANTUM_NS 2000000ull    /* how far ahead (virtual ns) a server may run */
#define MAX_WAIT_NS 100000000ull /* the longest a submission is held back */
#define POLL_NS 200000ull
#define STALE_NS 3000000000ull   /* an owner silent this long is ignored */
#define RECENT_NS 50000000ull    /* a submission this recent makes a server a competitor */
#define IDLE_NS 100000000ull     /* a server idle this long rejoins at the others' pace */

static struct vc_sched_file *g_f;
static int g_me = -1;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ld64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static bool live(const struct vc_sched_vm *v, uint64_t now)
{
	uint64_t beat = ld64(&v->beat);

	return __atomic_load_n(&v->owner, __ATOMIC_ACQUIRE) && now - beat < STALE_NS;
}

/* The least virtual time among the other live servers with work in flight;
 * false when there is none. */
static bool min_other(uint64_t now, uint64_t *min)
{
	bool any = false;

	*min = UINT64_MAX;
	for (unsigned i = 0; i < VC_SCHED_MAX; i++) {
		struct vc_sched_vm *v = &g_f->vm[i];

		if ((int)i == g_me || !live(v, now))
			continue;
		if (!__atomic_load_n(&v->active, __ATOMIC_ACQUIRE) && now - ld64(&v->recent) > RECENT_NS)
			continue;
		uint64_t t = ld64(&v->vtime);

		if (t < *min)
			*min = t;
		any = true;
	}
	return any;
}

/* Raise our virtual time to at least @floor (idle time earns no credit). */
static void raise_to(uint64_t floor)
{
	uint64_t *vt = &g_f->vm[g_me].vtime, cur = ld64(vt);

	while (cur < floor && !__atomic_compare_exchange_n(vt, &cur, floor, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

int vc_sched_attach(const char *path, uint32_t weight)
{
	struct stat st;
	void *m;
	int fd, rc = 0;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if ((size_t)st.st_size < sizeof(struct vc_sched_file) && ftruncate(fd, sizeof(struct vc_sched_file)) < 0) {
		rc = -errno;
		goto out;
	}
	m = mmap(NULL, sizeof(struct vc_sched_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	g_f = m;
	if (g_f->magic != SCHED_MAGIC || g_f->version != SCHED_VERSION) {
		memset(g_f, 0, sizeof(*g_f));
		g_f->version = SCHED_VERSION;
		__atomic_store_n(&g_f->magic, SCHED_MAGIC, __ATOMIC_RELEASE);
	}
	for (unsigned i = 0; i < VC_SCHED_MAX && g_me < 0; i++) {
		struct vc_sched_vm *v = &g_f->vm[i];
		int32_t owner = __atomic_load_n(&v->owner, __ATOMIC_ACQUIRE);

		/* free, or left behind by a server that died */
		if (owner && !(kill(owner, 0) < 0 && errno == ESRCH))
			continue;
		v->weight = weight ? weight : 100;
		v->active = 0;
		v->busy_ns = 0;
		__atomic_store_n(&v->beat, now_ns(), __ATOMIC_RELEASE);
		g_me = (int)i;
		v->vtime = 0;
		{
			uint64_t min;

			/* join at the others' pace, not with a head start */
			if (min_other(now_ns(), &min))
				v->vtime = min;
		}
		__atomic_store_n(&v->owner, (int32_t)getpid(), __ATOMIC_RELEASE);
	}
	if (g_me < 0) {
		munmap(g_f, sizeof(*g_f));
		g_f = NULL;
		rc = -ENOSPC;
	}
out:
	/* Unlock explicitly: the mapping keeps the open file, and its lock, alive. */
	flock(fd, LOCK_UN);
	close(fd);
	return rc;
}

void vc_sched_detach(void)
{
	if (!g_f)
		return;
	__atomic_store_n(&g_f->vm[g_me].active, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g_f->vm[g_me].owner, 0, __ATOMIC_RELEASE);
	munmap(g_f, sizeof(*g_f));
	g_f = NULL;
	g_me = -1;
}

void vc_sched_set_weight(uint32_t weight)
{
	if (g_f && weight)
		__atomic_store_n(&g_f->vm[g_me].weight, weight, __ATOMIC_RELEASE);
}

void vc_sched_beat(void)
{
	if (g_f)
		__atomic_store_n(&g_f->vm[g_me].beat, now_ns(), __ATOMIC_RELEASE);
}

bool vc_sched_enabled(void)
{
	return g_f != NULL;
}

bool vc_sched_competing(void)
{
	uint64_t min;

	return g_f && min_other(now_ns(), &min);
}

uint64_t vc_sched_gate(void)
{
	uint64_t t0, now, min;

	if (!g_f)
		return 0;
	t0 = now = now_ns();
	/* Back after a pause: idleness earns no credit, so start no further
	 * behind the others than one quantum. */
	if (now - __atomic_exchange_n(&g_f->vm[g_me].recent, now, __ATOMIC_ACQ_REL) > IDLE_NS &&
	    min_other(now, &min) && min > QUANTUM_NS)
		raise_to(min - QUANTUM_NS);
	for (;;) {
		uint64_t mine;

		if (!min_other(now, &min))
			break;
		mine = ld64(&g_f->vm[g_me].vtime);
		if (mine <= min + QUANTUM_NS || now - t0 > MAX_WAIT_NS)
			break;
		struct timespec ts = {.tv_nsec = (long)POLL_NS};

		nanosleep(&ts, NULL);
		now = now_ns();
		/* Waiting to submit is competing: the others go on tracking and
		 * charging their work (min_other() reads this) until this one
		 * runs, or the weights would stop counting mid-wait. */
		__atomic_store_n(&g_f->vm[g_me].recent, now, __ATOMIC_RELEASE);
	}
	return now - t0;
}

void vc_sched_busy(bool on)
{
	if (!g_f)
		return;
	if (on)
		__atomic_fetch_add(&g_f->vm[g_me].active, 1, __ATOMIC_ACQ_REL);
	else
		__atomic_fetch_sub(&g_f->vm[g_me].active, 1, __ATOMIC_ACQ_REL);
}

void vc_sched_charge(uint64_t ns)
{
	struct vc_sched_vm *v;
	uint32_t w;

	if (!g_f || !ns)
		return;
	v = &g_f->vm[g_me];
	w = __atomic_load_n(&v->weight, __ATOMIC_ACQUIRE);
	__atomic_fetch_add(&v->vtime, ns * 100 / (w ? w : 100), __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&v->busy_ns, ns, __ATOMIC_RELAXED);
}
