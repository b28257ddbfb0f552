/* SPDX-License-Identifier: MIT */
/*
 * gpushare.c - the weighted fair share of a GPU between servers (gpushare.h).
 *
 * The scheduling file is shared by host processes only (the servers of one
 * GPU, and their workers); no guest ever sees it. Entries are claimed under
 * an flock; every other access is a single atomic load, store or
 * read-modify-write on one field (vc_shm.h), so a reader may see one field
 * updated before another, which only shifts a decision by one round.
 *
 * The fields are figures (weight, active, vtime, beat, busy_ns, recent):
 * they publish nothing, so they are read and written relaxed; the counts
 * that several workers change (active, vtime, busy_ns) change by atomic
 * read-modify-writes only, so that none is lost. The one ordering is the
 * owner word: the claiming listener resets the entry, then stores owner with
 * release; readers load owner with acquire (live(), vc_sched_attach())
 * before they read the rest, so a claimed entry is never seen half reset.
 */
#include "resources/gpushare.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vc_shm.h"
#include "vc_time.h"

#define SCHED_MAGIC 0x44484353u /* "SCHD" */
#define SCHED_VERSION 1u
#define QUANTUM_NS 4000000ull    /* how far ahead (virtual ns) a server may run */
#define MAX_WAIT_NS 100000000ull /* the longest a submission is held back */
#define POLL_NS 50000ull
#define STALE_NS 3000000000ull   /* an owner silent this long is ignored */
#define RECENT_NS 50000000ull    /* a submission this recent makes a server a competitor */
#define IDLE_NS 100000000ull     /* a server idle this long rejoins at the others' pace */
#define LINGER_US 300u           /* a turn outlasts its work by this much (the next batch's way) */

static struct vc_sched_file *g_f;
static _Thread_local bool slack_set; /* this thread's timer slack is 1 ns */
static int g_me = -1;

static bool live(const struct vc_sched_vm *v, uint64_t now)
{
	/* Acquire pairs with the release store of owner in vc_sched_attach():
	 * seeing the owner, we see the entry it reset before taking it. */
	if (!vc_shm_loadi32(&v->owner, VC_ACQUIRE))
		return false;
	/* A figure (vc_sched_beat(), relaxed): only its age matters. */
	return now - vc_shm_load64(&v->beat, VC_RELAXED) < STALE_NS;
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
		/* Figures of the other server's workers (the relaxed RMWs and
		 * stores in vc_sched_busy(), vc_sched_gate(), vc_sched_charge()
		 * and raise_to()): relaxed. */
		if (!vc_shm_load32(&v->active, VC_RELAXED) && now - vc_shm_load64(&v->recent, VC_RELAXED) > RECENT_NS)
			continue;
		uint64_t t = vc_shm_load64(&v->vtime, VC_RELAXED);

		if (t < *min)
			*min = t;
		any = true;
	}
	return any;
}

/* Another live server holds the GPU now: it has work in flight, or its work
 * ended under LINGER_US ago while it is not a quantum ahead of us (@mine). */
static bool other_in_flight(uint64_t now, uint64_t mine)
{
	for (unsigned i = 0; i < VC_SCHED_MAX; i++) {
		struct vc_sched_vm *v = &g_f->vm[i];

		if ((int)i == g_me || !live(v, now))
			continue;
		/* Figures of the other server's workers (vc_sched_busy(),
		 * vc_sched_charge()): relaxed. */
		if (vc_shm_load32(&v->active, VC_RELAXED))
			return true;
		uint32_t end = vc_shm_load32(&v->drained_us, VC_RELAXED);

		if (end && (uint32_t)(now / 1000) - end < LINGER_US &&
		    vc_shm_load64(&v->vtime, VC_RELAXED) <= mine + QUANTUM_NS)
			return true;
	}
	return false;
}

/* Raise our virtual time to at least @floor (idle time earns no credit). */
static void raise_to(uint64_t floor)
{
	/* vtime is a count that this server's workers raise concurrently
	 * (vc_sched_charge()'s add, this CAS): atomic so that none is lost; it
	 * publishes nothing, so relaxed. */
	uint64_t *vt = &g_f->vm[g_me].vtime, cur = vc_shm_load64(vt, VC_RELAXED);

	while (cur < floor && !vc_shm_cas64(vt, &cur, floor, VC_RELAXED, VC_RELAXED))
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
	/* magic and version are read and written under the flock only, which
	 * orders them: relaxed. A file without them is new (or of another
	 * layout): no server of this version uses it yet. */
	if (vc_shm_load32(&g_f->magic, VC_RELAXED) != SCHED_MAGIC ||
	    vc_shm_load32(&g_f->version, VC_RELAXED) != SCHED_VERSION) {
		memset(g_f, 0, sizeof(*g_f));
		vc_shm_store32(&g_f->version, SCHED_VERSION, VC_RELAXED);
		vc_shm_store32(&g_f->magic, SCHED_MAGIC, VC_RELAXED);
	}
	for (unsigned i = 0; i < VC_SCHED_MAX && g_me < 0; i++) {
		struct vc_sched_vm *v = &g_f->vm[i];
		/* Acquire pairs with the release store of 0 in vc_sched_detach()
		 * (claims themselves are serialised by the flock): the last
		 * owner's stores come before the reset below. */
		int32_t owner = vc_shm_loadi32(&v->owner, VC_ACQUIRE);
		uint64_t min, vtime = 0;

		/* free, or left behind by a server that died */
		if (owner && !(kill(owner, 0) < 0 && errno == ESRCH))
			continue;
		/* The reset: relaxed, published by the release store of owner
		 * below. (A server that reads a dead owner's entry until then
		 * sees a figure of either, which shifts one decision.) */
		vc_shm_store32(&v->weight, weight ? weight : 100, VC_RELAXED);
		vc_shm_store32(&v->active, 0, VC_RELAXED);
		vc_shm_store32(&v->drained_us, 0, VC_RELAXED);
		vc_shm_store64(&v->busy_ns, 0, VC_RELAXED);
		vc_shm_store64(&v->beat, vc_now_ns(), VC_RELAXED);
		g_me = (int)i;
		/* join at the others' pace, not with a head start */
		if (min_other(vc_now_ns(), &min))
			vtime = min;
		vc_shm_store64(&v->vtime, vtime, VC_RELAXED);
		/* Release pairs with the acquire loads of owner in the other
		 * servers' live() and in the next claimant's loop above: who sees
		 * this owner sees the reset entry. */
		vc_shm_storei32(&v->owner, (int32_t)getpid(), VC_RELEASE);
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
	/* A figure, relaxed: ordered before the free entry is claimed again by
	 * the release store of owner below. */
	vc_shm_store32(&g_f->vm[g_me].active, 0, VC_RELAXED);
	/* Release pairs with the acquire load of owner in the next claimant's
	 * vc_sched_attach(): our last stores come before its reset. Readers in
	 * live() that see 0 skip the entry. */
	vc_shm_storei32(&g_f->vm[g_me].owner, 0, VC_RELEASE);
	munmap(g_f, sizeof(*g_f));
	g_f = NULL;
	g_me = -1;
}

void vc_sched_set_weight(uint32_t weight)
{
	if (!g_f || !weight)
		return;
	/* A figure for this server's workers (the relaxed load in
	 * vc_sched_charge()): a new weight applies from their next charge. */
	vc_shm_store32(&g_f->vm[g_me].weight, weight, VC_RELAXED);
}

void vc_sched_beat(void)
{
	if (!g_f)
		return;
	/* A figure for the other servers' live() (relaxed): only its age
	 * matters. */
	vc_shm_store64(&g_f->vm[g_me].beat, vc_now_ns(), VC_RELAXED);
}

uint64_t vc_sched_busy_ns(void)
{
	/* A count this server's workers add to in vc_sched_charge() (relaxed
	 * RMWs); read for status, it orders nothing: relaxed. */
	return g_f ? vc_shm_load64(&g_f->vm[g_me].busy_ns, VC_RELAXED) : 0;
}

bool vc_sched_enabled(void)
{
	return g_f != NULL;
}

bool vc_sched_competing(void)
{
	uint64_t min;

	return g_f && min_other(vc_now_ns(), &min);
}

uint64_t vc_sched_gate(void)
{
	uint64_t t0, now, min;

	if (!g_f)
		return 0;
	t0 = now = vc_now_ns();
	/* Back after a pause: idleness earns no credit, so start no further
	 * behind the others than one quantum. recent is a figure that this
	 * server's workers all set (atomic, so one of them sees the pause) and
	 * the other servers' min_other() reads: relaxed. */
	if (now - vc_shm_xchg64(&g_f->vm[g_me].recent, now, VC_RELAXED) > IDLE_NS &&
	    min_other(now, &min) && min > QUANTUM_NS)
		raise_to(min - QUANTUM_NS);
	for (;;) {
		uint64_t mine;
		/* Our own sessions' count (vc_sched_busy()), a figure: relaxed. */
		bool holding = vc_shm_load32(&g_f->vm[g_me].active, VC_RELAXED) != 0;

		if (!min_other(now, &min) || now - t0 > MAX_WAIT_NS)
			break;
		mine = vc_shm_load64(&g_f->vm[g_me].vtime, VC_RELAXED); /* a figure, as in min_other() */
		/* Turns: work of two servers in flight together time-slices the
		 * GPU, and then neither's time in flight is its GPU time. So a
		 * server joins only a GPU that is free of the others' work (or
		 * that it holds already), and holds it until it is a quantum
		 * ahead of the least-served competitor. */
		if (mine <= min + QUANTUM_NS && (holding || !other_in_flight(now, mine)))
			break;
		struct timespec ts = {.tv_nsec = (long)POLL_NS};

		if (!slack_set) { /* polls this short want the timer's 50 us slack gone */
			prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
			slack_set = true;
		}
		nanosleep(&ts, NULL);
		now = vc_now_ns();
		/* Waiting to submit is competing: the others go on tracking and
		 * charging their work (min_other() reads this, relaxed) until this
		 * one runs, or the weights would stop counting mid-wait. */
		vc_shm_store64(&g_f->vm[g_me].recent, now, VC_RELAXED);
	}
	return now - t0;
}

void vc_sched_busy(bool on)
{
	if (!g_f)
		return;
	/* A count that this server's workers change concurrently (atomic RMWs,
	 * so that none is lost) and the other servers' min_other() reads: it
	 * publishes nothing, so relaxed. */
	if (on) {
		vc_shm_add32(&g_f->vm[g_me].active, 1, VC_RELAXED);
	} else {
		/* When its work ended, for the others' other_in_flight(): a
		 * figure, relaxed (never 0, which means never). */
		uint32_t us = (uint32_t)(vc_now_ns() / 1000);

		vc_shm_store32(&g_f->vm[g_me].drained_us, us ? us : 1, VC_RELAXED);
		vc_shm_sub32(&g_f->vm[g_me].active, 1, VC_RELAXED);
	}
}

void vc_sched_charge(uint64_t ns)
{
	struct vc_sched_vm *v;
	uint32_t w;

	if (!g_f || !ns)
		return;
	v = &g_f->vm[g_me];
	/* The listener's relaxed store in vc_sched_set_weight(): a figure. */
	w = vc_shm_load32(&v->weight, VC_RELAXED);
	/* Counts that this server's workers add to concurrently (atomic, so
	 * that none is lost), read by the other servers' min_other() and by
	 * status readers of the file: they publish nothing, so relaxed. */
	vc_shm_add64(&v->vtime, ns * 100 / (w ? w : 100), VC_RELAXED);
	vc_shm_add64(&v->busy_ns, ns, VC_RELAXED);
}
