/* report/sweep_row.c — the columns of a sweep's results and the row of one
 * point (sweep_row.h): the coordinates, then the summary's result columns
 * (ooc_summary_columns, analysis/summary.h), the one schema of every table
 * (docs/output-schema.md).
 *
 * Ownership: cells are heap strings of the caller's row. Cost: O(columns)
 * per row.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/sweep_row.h"
#include "base/strv.h"

int
ooc_sweep_header(const ooc_sweep_grid *g, ooc_table *t, ooc_err *err)
{
  int nc = ooc_sweep_ncoords(g), n = nc + (g->maxbatch ? 5 : 0) +
           OOC_SUMMARY_NCOLS, k = 0, i;
  char **c = calloc((size_t)n, sizeof *c);
  char buf[300];

  if (!c)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  c[k++] = strdup("model");
  c[k++] = strdup("set");
  c[k++] = strdup("hw");
  for (i = 0; i < g->n_hwsets; i++) {
    snprintf(buf, sizeof buf, "hw_set:%s", g->hwsets[i].name);
    c[k++] = strdup(buf);
  }
  c[k++] = strdup("allocator");
  c[k++] = strdup("budget");
  c[k++] = strdup("planner");
  if (!g->maxbatch)
    c[k++] = strdup("batch");
  if (g->precision)
    c[k++] = strdup("precision");
  c[k++] = strdup("dtype");
  c[k++] = strdup("optimizer");
  if (g->maxbatch) {
    c[k++] = strdup("max_batch");
    c[k++] = strdup("fail_batch");
    c[k++] = strdup("fail_limit");
    c[k++] = strdup("fail_op");
    c[k++] = strdup("fail_below");
  }
  for (i = 0; ooc_summary_columns[i]; i++)
    c[k++] = strdup(ooc_summary_columns[i]);
  for (i = 0; i < n; i++)
    if (!c[i]) {
      ooc_strv_free(c, n);
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    }
  t->cols = c;
  t->ncols = n;
  return OOC_OK;
}

int
ooc_sweep_row(const ooc_sweep_grid *g, int64_t i, int64_t best,
              const ooc_maxbatch_limit *lim, const ooc_summary *s,
              char **row)
{
  int k = ooc_sweep_ncoords(g);
  char b[32];

  if (ooc_sweep_point_coords(g, i, row))
    return OOC_ENOMEM;
  if (g->maxbatch) {
    int known = lim != NULL && lim->batch > 0;
    snprintf(b, sizeof b, "%" PRId64, best);
    row[k++] = strdup(b);
    snprintf(b, sizeof b, "%" PRId64, known ? lim->batch : 0);
    row[k++] = strdup(known ? b : "");
    row[k++] = strdup(known ? ooc_limit_kind_name(lim->kind) : "");
    row[k++] = strdup(known ? lim->op : "");
    snprintf(b, sizeof b, "%" PRId64, lim != NULL ? lim->hole : 0);
    row[k++] = strdup(lim != NULL && lim->hole > 0 ? b : "");
    for (int j = k - 5; j < k; j++)
      if (!row[j])
        return OOC_ENOMEM;
    if (best == 0)
      return ooc_summary_cells_none(s, row + k);
  }
  return ooc_summary_cells(s, row + k);
}

int
ooc_sweep_col_kind(const char *name)
{
  int k;

  if (strcmp(name, "fail_limit") == 0)
    return OOC_SWEEP_CELL_LIMIT;
  if (strcmp(name, "fail_op") == 0)
    return OOC_CELL_TEXT;
  if (strcmp(name, "max_batch") == 0 || strcmp(name, "fail_batch") == 0 ||
      strcmp(name, "fail_below") == 0)
    return OOC_CELL_COUNT;
  for (k = 0; ooc_summary_columns[k] != NULL; k++)
    if (strcmp(name, ooc_summary_columns[k]) == 0)
      return ooc_summary_column_kinds[k];
  return OOC_CELL_TEXT;
}
