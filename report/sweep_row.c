/* report/sweep_row.c — the columns of a sweep's results and the row of one
 * point (sweep_row.h): coordinates, then every summary field as text.
 *
 * Numbers are printed with "%.9g" (doubles) or as integers, so the same
 * summary always gives the same cells. Ownership: cells are heap strings
 * of the caller's row. Cost: O(columns) per row.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/sweep_row.h"
#include "base/strv.h"

static const char *const summary_cols[] = {
  "dtype", "budget_bytes", "feasible", "iteration_s", "samples_per_s",
  "incore_iteration_s", "slowdown", "lower_bound_s", "compute_s",
  "peak_allocated_bytes", "peak_reserved_bytes", "peak_host_pinned_bytes",
  "fragmentation", "h2d_bytes", "d2h_bytes", "recompute_flops",
  "recompute_s", "compute_busy_s", "h2d_busy_s", "d2h_busy_s",
  "stall_swapin_s", "stall_swapout_s", "stall_other_s", "alloc_s", "keep",
  "swap", "recompute", "events", "oom_op", "oom_time_s",
  "oom_requested_bytes", "oom_live_bytes", "oom_reserved_bytes",
  "oom_largest_free_bytes", "oom_reason", "plan_note", "plan_wall_s",
  "sim_wall_s", NULL
};
#define N_SUMMARY_COLS (sizeof summary_cols / sizeof summary_cols[0] - 1)

int
ooc_sweep_header(const ooc_sweep_grid *g, ooc_table *t, ooc_err *err)
{
  int nc = ooc_sweep_ncoords(g), n = nc + (g->maxbatch ? 4 : 0) +
           (int)N_SUMMARY_COLS, k = 0, i;
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
  if (!g->maxbatch) {
    c[k++] = strdup("batch");
  } else {
    c[k++] = strdup("max_batch");
    c[k++] = strdup("fail_batch");
    c[k++] = strdup("fail_limit");
    c[k++] = strdup("fail_op");
  }
  for (i = 0; summary_cols[i]; i++)
    c[k++] = strdup(summary_cols[i]);
  for (i = 0; i < n; i++)
    if (!c[i]) {
      ooc_strv_free(c, n);
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    }
  t->cols = c;
  t->ncols = n;
  return OOC_OK;
}

static char *
fmt_d(double v)
{
  char b[48];
  snprintf(b, sizeof b, "%.9g", v);
  return strdup(b);
}

static char *
fmt_u(uint64_t v)
{
  char b[32];
  snprintf(b, sizeof b, "%" PRIu64, v);
  return strdup(b);
}

/* Summary cells in summary_cols order. */
static int
summary_cells(const ooc_summary *s, char **c)
{
  int k = 0, oom = !s->feasible;

  c[k++] = strdup(ooc_dtype_name(s->dtype));
  c[k++] = fmt_u(s->budget_bytes);
  c[k++] = strdup(s->feasible ? "1" : "0");
  c[k++] = fmt_d(s->iteration_s);
  c[k++] = fmt_d(s->samples_per_s);
  c[k++] = fmt_d(s->incore_iteration_s);
  c[k++] = fmt_d(s->slowdown);
  c[k++] = fmt_d(s->lower_bound_s);
  c[k++] = fmt_d(s->compute_s);
  c[k++] = fmt_u(s->peak_allocated_bytes);
  c[k++] = fmt_u(s->peak_reserved_bytes);
  c[k++] = fmt_u(s->peak_host_pinned_bytes);
  c[k++] = fmt_d(s->fragmentation);
  c[k++] = fmt_u(s->h2d_bytes);
  c[k++] = fmt_u(s->d2h_bytes);
  c[k++] = fmt_d(s->recompute_flops);
  c[k++] = fmt_d(s->recompute_s);
  c[k++] = fmt_d(s->compute_busy_s);
  c[k++] = fmt_d(s->h2d_busy_s);
  c[k++] = fmt_d(s->d2h_busy_s);
  for (int st = 0; st < OOC_STALL_COUNT; st++)
    c[k++] = fmt_d(s->stall_s[st]);
  c[k++] = fmt_d(s->alloc_s);
  c[k++] = fmt_u((uint64_t)s->counts[0]);
  c[k++] = fmt_u((uint64_t)s->counts[1]);
  c[k++] = fmt_u((uint64_t)s->counts[2]);
  c[k++] = fmt_u(s->events);
  c[k++] = strdup(oom && s->oom_op ? s->oom_op : "");
  c[k++] = oom ? fmt_d((double)s->oom.time_ns / 1e9) : strdup("");
  c[k++] = oom ? fmt_u(s->oom.requested_bytes) : strdup("");
  c[k++] = oom ? fmt_u(s->oom.live_bytes) : strdup("");
  c[k++] = oom ? fmt_u(s->oom.reserved_bytes) : strdup("");
  c[k++] = oom ? fmt_u(s->oom.largest_free_bytes) : strdup("");
  c[k++] = strdup(oom ? s->oom.reason : "");
  c[k++] = strdup(s->plan_note ? s->plan_note : "");
  c[k++] = fmt_d(s->plan_wall_s);
  c[k++] = fmt_d(s->sim_wall_s);
  for (int j = 0; j < k; j++)
    if (!c[j])
      return OOC_ENOMEM;
  return OOC_OK;
}

int
ooc_sweep_row(const ooc_sweep_grid *g, int64_t i, int64_t best,
              const ooc_maxbatch_limit *lim, const ooc_summary *s,
              char **row)
{
  int k = ooc_sweep_ncoords(g);

  if (ooc_sweep_point_coords(g, i, row))
    return OOC_ENOMEM;
  if (g->maxbatch) {
    int known = lim != NULL && lim->batch > 0;
    row[k++] = fmt_u((uint64_t)best);
    row[k++] = known ? fmt_u((uint64_t)lim->batch) : strdup("");
    row[k++] = strdup(known ? ooc_limit_kind_name(lim->kind) : "");
    row[k++] = strdup(known ? lim->op : "");
    for (int j = k - 4; j < k; j++)
      if (!row[j])
        return OOC_ENOMEM;
  }
  return summary_cells(s, row + k);
}
