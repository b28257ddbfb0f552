/* SPDX-License-Identifier: MIT */
/* ctl_print.c - vcudactl's tables (ctl_print.h). */
#include "ctl_print.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void vc_table_init(struct vc_table *t, int ncol, const char *const *head)
{
	memset(t, 0, sizeof(*t));
	t->ncol = ncol > VC_TABLE_MAX_COLS ? VC_TABLE_MAX_COLS : ncol;
	for (int i = 0; i < t->ncol; i++)
		t->head[i] = head[i];
}

void vc_table_row(struct vc_table *t, ...)
{
	va_list ap;
	char **cells;

	if (t->nrows == t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;

		cells = realloc(t->cells, (size_t)cap * (size_t)t->ncol * sizeof(*cells));
		if (!cells)
			return;
		t->cells = cells;
		t->cap = cap;
	}
	cells = t->cells + (size_t)t->nrows * (size_t)t->ncol;
	va_start(ap, t);
	for (int i = 0; i < t->ncol; i++) {
		const char *s = va_arg(ap, const char *);

		cells[i] = strdup(s ? s : "-");
	}
	va_end(ap);
	t->nrows++;
}

void vc_table_print(const struct vc_table *t, FILE *f)
{
	size_t w[VC_TABLE_MAX_COLS];

	for (int c = 0; c < t->ncol; c++) {
		w[c] = strlen(t->head[c]);
		for (int r = 0; r < t->nrows; r++) {
			const char *s = t->cells[(size_t)r * (size_t)t->ncol + (size_t)c];

			if (s && strlen(s) > w[c])
				w[c] = strlen(s);
		}
	}
	for (int r = -1; r < t->nrows; r++) {
		for (int c = 0; c < t->ncol; c++) {
			const char *s = r < 0 ? t->head[c] : t->cells[(size_t)r * (size_t)t->ncol + (size_t)c];

			if (!s)
				s = "?";
			/* the last column is not padded: no trailing blanks */
			if (c == t->ncol - 1)
				fprintf(f, "%s", s);
			else
				fprintf(f, "%-*s  ", (int)w[c], s);
		}
		fputc('\n', f);
	}
}

void vc_table_free(struct vc_table *t)
{
	for (int i = 0; i < t->nrows * t->ncol; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

void vc_print_kv(FILE *f, int width, const char *key, const char *fmt, ...)
{
	va_list ap;
	char k[64];

	snprintf(k, sizeof(k), "%s:", key);
	fprintf(f, "  %-*s ", width + 1, k);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}
