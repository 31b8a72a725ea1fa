/* report/table.h — a table of strings: column names and rows of cells,
 * read from and written to CSV (RFC 4180 quoting) and written as JSON.
 *
 * The results of sweeps (sweep.h), and what plots and reports read back.
 * Cells are kept as the text they were read or formatted as, so a table
 * read from a CSV file writes the same bytes back.
 *
 * Ownership: ooc_table is caller-embedded (ooc_table_init/_fini) and owns
 * its column names and rows: each a string vector (base/strv.h) of ncols
 * heap strings. Cost: O(cells) to read or write; a row is pushed in
 * amortised O(1).
 */
#ifndef OOC_TABLE_H
#define OOC_TABLE_H

#include <stdint.h>
#include <stdio.h>
#include "base/error.h"

/* A table of strings: ncols column names, nrows rows of ncols cells. */
typedef struct ooc_table {
  int ncols;
  char **cols;
  int64_t nrows, cap;
  char ***rows;
  int64_t *line;    /* cap entries: the line of its file each row starts
                       on (a quoted cell may hold line breaks), 0 for a
                       row made in memory; see ooc_table_row_line */
} ooc_table;

void ooc_table_init(ooc_table *t);
void ooc_table_fini(ooc_table *t);

/* Column index by name, or -1. */
int ooc_table_col(const ooc_table *t, const char *name);

/* Append a row of ncols cells; the table takes it over. OOC_ENOMEM (and
 * the row still the caller's) when out of memory. */
int ooc_table_push(ooc_table *t, char **row);
/* The same for a row read from line `line` (>= 1) of a file. */
int ooc_table_push_line(ooc_table *t, char **row, int64_t line);

/* The line of its file row r starts on, for messages: where it was read,
 * else r + 2 (the line it takes when written after the header, unless an
 * earlier cell holds a line break). */
int64_t ooc_table_row_line(const ooc_table *t, int64_t r);

/* 1 when a and b have the same column names in the same order. */
int ooc_table_same_cols(const ooc_table *a, const ooc_table *b);

/* Read a CSV file with a header line (RFC 4180 quoting), each row's line
 * kept. OOC_EPARSE names the file and line of a row (where it starts) that
 * holds an unterminated quote or whose field count differs from the
 * header's. */
int ooc_table_read_csv(const char *path, ooc_table *t, ooc_err *err);

/* CSV with the header line first. OOC_EIO on a write error. */
int ooc_table_write_csv(FILE *f, const ooc_table *t);

/* Array of flat objects; cells that parse as numbers (except in columns
 * that hold names) are written as numbers, empty cells as null, the
 * "feasible" column as a boolean. OOC_EIO on a write error. */
int ooc_table_write_json(FILE *f, const ooc_table *t);

/* The CSV or JSON of t as the new content of path, replaced atomically
 * (base/atomic.h): a reader never sees half a file. */
int ooc_table_save_csv(const ooc_table *t, const char *path, ooc_err *err);
int ooc_table_save_json(const ooc_table *t, const char *path, ooc_err *err);

/* Write one CSV cell, quoted (RFC 4180) when it holds a comma, a quote or a
 * line break. */
void ooc_csv_cell(FILE *f, const char *s);

#endif
