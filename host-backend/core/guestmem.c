/* SPDX-License-Identifier: MIT */
/*
 * guestmem.c - pins of a VM's guest process, from the guest-pin area and the
 * guest's RAM to pieces of RAM files (guestmem.h, shared/vc_gpin.h).
 */
#include "core/guestmem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vc_gpin.h"
#include "vc_vm.h"

#define PAGE 4096ull

struct vc_guestmem {
	struct vc_guest_ram ram[VC_VM_MEM_MAX];
	uint32_t nram;
	void *area;
	/* Ours alone, never read back from the area: the pin of each entry
	 * that is held (0: none), and the latest one let go. */
	uint64_t held[VC_GPIN_ENTRIES];
	uint64_t released[VC_GPIN_ENTRIES];
};

int vc_guest_ram_check(const struct vc_guest_ram *ram, uint32_t n)
{
	if (n > VC_VM_MEM_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		const struct vc_guest_ram *r = &ram[i];

		if (r->fd < 0 || !r->size || (r->gpa | r->size | r->fd_off) % PAGE || r->size > UINT64_MAX - r->gpa ||
		    r->size > UINT64_MAX - r->fd_off)
			return -EINVAL;
		for (uint32_t j = 0; j < i; j++)
			if (r->gpa < ram[j].gpa + ram[j].size && ram[j].gpa < r->gpa + r->size)
				return -EINVAL;
	}
	return 0;
}

int vc_guestmem_create(const struct vc_guest_ram *ram, uint32_t n, void *area, struct vc_guestmem **out)
{
	struct vc_guestmem *g;

	if (!area || vc_guest_ram_check(ram, n))
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	memcpy(g->ram, ram, n * sizeof(*ram));
	g->nram = n;
	g->area = area;
	*out = g;
	return 0;
}

void vc_guestmem_destroy(struct vc_guestmem *g)
{
	free(g);
}

/* The RAM range holding guest-physical @gpa, or NULL. */
static const struct vc_guest_ram *range_of(const struct vc_guestmem *g, uint64_t gpa)
{
	for (uint32_t i = 0; i < g->nram; i++)
		if (gpa >= g->ram[i].gpa && gpa - g->ram[i].gpa < g->ram[i].size)
			return &g->ram[i];
	return NULL;
}

/* A page of the run list at @gpa, copied out of guest RAM. 0 or -EINVAL. */
static int read_page(const struct vc_guestmem *g, uint64_t gpa, struct vc_gpin_page *p)
{
	const struct vc_guest_ram *r;
	uint64_t off;
	ssize_t got;

	if (gpa % PAGE || !(r = range_of(g, gpa)))
		return -EINVAL;
	off = r->fd_off + (gpa - r->gpa); /* the range is page aligned: the page lies in it */
	do
		got = pread(r->fd, p, sizeof(*p), (off_t)off);
	while (got < 0 && errno == EINTR);
	return got == (ssize_t)sizeof(*p) ? 0 : -EINVAL;
}

/* Append run [@gpa, @gpa + @len) as pieces of RAM files (a run may cross
 * from one range into the next adjacent one), merging with the last piece
 * where it continues it. 0 or -EINVAL. */
static int add_run(const struct vc_guestmem *g, uint64_t gpa, uint64_t len, struct vc_guest_piece *v, uint32_t *n,
		   uint32_t cap)
{
	if (!len || (gpa | len) % PAGE || len > UINT64_MAX - gpa)
		return -EINVAL;
	while (len) {
		const struct vc_guest_ram *r = range_of(g, gpa);
		uint64_t in, off;

		if (!r)
			return -EINVAL;
		in = r->size - (gpa - r->gpa);
		in = in < len ? in : len;
		off = r->fd_off + (gpa - r->gpa);
		if (*n && v[*n - 1].fd == r->fd && v[*n - 1].off + v[*n - 1].len == off) {
			v[*n - 1].len += in;
		} else {
			if (*n == cap)
				return -EINVAL;
			v[(*n)++] = (struct vc_guest_piece){.fd = r->fd, .off = off, .len = in};
		}
		gpa += in;
		len -= in;
	}
	return 0;
}

/* The runs of @e's list as pieces. 0, -EINVAL or -ENOMEM. */
static int walk(const struct vc_guestmem *g, const struct vc_gpin_entry *e, struct vc_guest_piece **out,
		uint32_t *nout)
{
	/* A run splits at most once per range it crosses. */
	uint32_t cap = e->runs + VC_VM_MEM_MAX, n = 0, seen = 0;
	struct vc_guest_piece *v = calloc(cap, sizeof(*v));
	uint64_t gpa = e->list, total = 0;
	struct vc_gpin_page *p = malloc(sizeof(*p));
	int rc = -EINVAL;

	if (!v || !p) {
		rc = -ENOMEM;
		goto out;
	}
	/* Each page holds at least one run, so the walk ends within
	 * e->runs pages whatever the guest wrote into next. */
	while (seen < e->runs) {
		if (read_page(g, gpa, p) || !p->count || p->count > VC_GPIN_PAGE_RUNS || p->count > e->runs - seen)
			goto out;
		for (uint32_t i = 0; i < p->count; i++) {
			if (p->run[i].len > e->len - total || add_run(g, p->run[i].gpa, p->run[i].len, v, &n, cap))
				goto out;
			total += p->run[i].len;
		}
		seen += p->count;
		gpa = p->next;
		if ((seen < e->runs) != (gpa != 0))
			goto out; /* a list that ends early, or goes on past its runs */
	}
	if (total != e->len)
		goto out;
	*out = v;
	*nout = n;
	v = NULL;
	rc = 0;
out:
	free(p);
	free(v);
	return rc;
}

int vc_guestmem_take(struct vc_guestmem *g, uint32_t entry, uint64_t gen, uint64_t addr, uint64_t len,
		     struct vc_guest_piece **pieces, uint32_t *n)
{
	struct vc_gpin_entry e;
	int rc;

	if (entry >= VC_GPIN_ENTRIES || !gen)
		return -EINVAL;
	if (g->held[entry])
		return -EBUSY;
	if (gen <= g->released[entry])
		return -EINVAL;
	vc_gpin_host_entry(g->area, entry, &e); /* copied once; only the copy is used */
	if (e.gen != gen || e.addr != addr || e.len != len || !len || len % PAGE || !(e.flags & VC_GPIN_E_WRITE) ||
	    !e.runs)
		return -EINVAL;
	if (e.runs > VC_GPIN_RUNS_MAX)
		return -E2BIG;
	rc = walk(g, &e, pieces, n);
	if (rc == 0)
		g->held[entry] = gen;
	return rc;
}

int vc_guestmem_release(struct vc_guestmem *g, uint32_t entry, uint64_t gen, bool held)
{
	if (entry >= VC_GPIN_ENTRIES || !gen)
		return -EINVAL;
	if (held ? g->held[entry] != gen : g->held[entry] || gen < g->released[entry])
		return -EINVAL;
	g->held[entry] = 0;
	if (gen > g->released[entry])
		g->released[entry] = gen;
	vc_gpin_host_release(g->area, entry, gen);
	return 0;
}
