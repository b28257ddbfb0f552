/* SPDX-License-Identifier: MIT */
/*
 * ctl_print.h - vcudactl's human output: aligned tables with a header row,
 * and "key: value" blocks. Scripts use --json instead.
 */
#ifndef VC_CTL_PRINT_H
#define VC_CTL_PRINT_H

#include <stdio.h>

#define VC_TABLE_MAX_COLS 12

struct vc_table {
	int ncol;
	const char *head[VC_TABLE_MAX_COLS];
	char **cells;   /* nrows * ncol copies */
	int nrows, cap;
};

/** vc_table_init() - a table with the @ncol column titles @head. */
void vc_table_init(struct vc_table *t, int ncol, const char *const *head);

/** vc_table_row() - add a row of ncol strings (copied; NULL prints "-"). */
void vc_table_row(struct vc_table *t, ...);

/** vc_table_print() - columns padded to their widest cell, two spaces apart. */
void vc_table_print(const struct vc_table *t, FILE *f);

/** vc_table_free() - release the rows. */
void vc_table_free(struct vc_table *t);

/** vc_print_kv() - "  key:   value" with keys padded to @width. */
void vc_print_kv(FILE *f, int width, const char *key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* VC_CTL_PRINT_H */
