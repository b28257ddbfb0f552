/* SPDX-License-Identifier: MIT */
/*
 * optimes.c - the serving thread's time per CUDA operation (optimes.h): one
 * row per operation of the generated range, written by the serving thread
 * alone and read once the session has stopped.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/optimes.h"
#include "vc_cuda_wire.h"

#define NOPS (VC_CU_OP_END_ - VC_CU_OP_BASE)

struct row {
	uint64_t calls, ns, max_ns;
};

struct vc_optimes {
	struct row r[NOPS];
};

struct vc_optimes *vc_optimes_create(void)
{
	return calloc(1, sizeof(struct vc_optimes));
}

void vc_optimes_add(struct vc_optimes *t, uint32_t op, uint64_t ns)
{
	struct row *r;

	if (!t || op < VC_CU_OP_BASE || op >= VC_CU_OP_END_)
		return;
	r = &t->r[op - VC_CU_OP_BASE];
	r->calls++;
	r->ns += ns;
	if (ns > r->max_ns)
		r->max_ns = ns;
}

int vc_optimes_report(const struct vc_optimes *t, unsigned max, void (*line)(void *arg, const char *text),
		      void *arg)
{
	uint64_t calls = 0, ns = 0, shown = 0;
	unsigned kinds = 0;
	bool done[NOPS] = {0};
	char text[160];
	int n = 0;

	if (!t)
		return 0;
	for (unsigned i = 0; i < NOPS; i++) {
		calls += t->r[i].calls;
		ns += t->r[i].ns;
		kinds += t->r[i].calls != 0;
	}
	snprintf(text, sizeof(text), "%" PRIu64 " operations of %u kinds took %.1f us on the serving thread", calls,
		 kinds, (double)ns / 1e3);
	line(arg, text);
	n++;
	/* Selection by total time, @max times over the table: it is only
	 * read once, when the session closes. */
	for (unsigned k = 0; k < max && shown < kinds; k++) {
		unsigned best = NOPS;

		for (unsigned i = 0; i < NOPS; i++)
			if (!done[i] && t->r[i].calls && (best == NOPS || t->r[i].ns > t->r[best].ns))
				best = i;
		if (best == NOPS)
			break;
		done[best] = true;
		shown++;
		snprintf(text, sizeof(text), "%-40s %10" PRIu64 " calls %12.1f us  %9.2f us each  %9.1f us max",
			 vc_cu_op_name(VC_CU_OP_BASE + best), t->r[best].calls, (double)t->r[best].ns / 1e3,
			 (double)t->r[best].ns / 1e3 / (double)t->r[best].calls, (double)t->r[best].max_ns / 1e3);
		line(arg, text);
		n++;
	}
	return n;
}

void vc_optimes_destroy(struct vc_optimes *t)
{
	free(t);
}
