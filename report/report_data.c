/* report/report_data.c — the sweeps behind the report (report_parts.h):
 * throughput around B, slowdown over link bandwidths at B, the largest
 * batch per planner, and this GPU with the host link of each link
 * profile. Each sweep's CSV and JSON stay under DIR/data/NAME/.
 *
 * Ownership: the tables, the model and the profile go into the caller's
 * ooc_report_data. Cost: about planners x (batches + 7 bandwidths + 5
 * links) scenario runs plus one maxbatch search per planner, on o->jobs
 * threads (sweep.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/report_parts.h"
#include "report/sweep.h"
#include "planners/registry.h"

/* The what-if links, slowest first (the table reads top to bottom). */
static const char *const link_profiles[] = {
  "v100-pcie3", "a100-pcie4", "h100-pcie5", "v100-nvlink2", "gh200-c2c", NULL
};

void
ooc_report_data_init(ooc_report_data *d)
{
  *d = (ooc_report_data){ .win = -1 };
  ooc_explain_init(&d->win_explain);
  ooc_table_init(&d->thr);
  ooc_table_init(&d->bw);
  ooc_table_init(&d->mb);
  for (int i = 0; i < OOC_REPORT_MAX_LINKS; i++)
    ooc_table_init(&d->wi[i]);
}

void
ooc_report_data_fini(ooc_report_data *d)
{
  for (int i = 0; i < OOC_REPORT_MAX_LINKS; i++)
    ooc_table_fini(&d->wi[i]);
  ooc_table_fini(&d->thr);
  ooc_table_fini(&d->bw);
  ooc_table_fini(&d->mb);
  ooc_explain_fini(&d->win_explain);
  ooc_model_free(d->model);
  ooc_hw_free(d->hw);
  d->model = NULL;
  d->hw = NULL;
}

int64_t
ooc_report_find_row(const ooc_table *t, const char *p, int64_t b)
{
  for (int64_t r = 0; r < t->nrows; r++)
    if (strcmp(ts(t, r, "planner"), p) == 0 &&
        (b <= 0 || (int64_t)tv(t, r, "batch") == b))
      return r;
  return -1;
}

int64_t
ooc_report_best_row(const ooc_table *t, int64_t b)
{
  int64_t best = -1;
  for (int64_t r = 0; r < t->nrows; r++) {
    if (!feasible(t, r) || (b > 0 && (int64_t)tv(t, r, "batch") != b))
      continue;
    if (best < 0 || tv(t, r, "iteration_s") < tv(t, best, "iteration_s"))
      best = r;
  }
  return best;
}

/* The grid every sweep starts from: o's model, profile, planners,
 * allocator, budget, dtype, optimizer, --set and --hw-set (each --hw-set a
 * one-value axis). */
static int
base_grid(const ooc_report_opts *o, ooc_sweep_grid *g, ooc_err *err)
{
  const char *planners = o->planners ? o->planners : "all";
  int rc;
  ooc_sweep_grid_init(g);
  g->steady = o->steady;
  g->no_timing = o->no_timing;
  if ((rc = ooc_sweep_set_model(g, o->model, err)) ||
      (rc = ooc_sweep_parse_hw(g, o->hw, err)) ||
      (rc = ooc_sweep_parse_planners(g, planners, err)) ||
      (rc = ooc_sweep_parse_allocators(g, o->allocator ? o->allocator
                                                       : "caching", err)) ||
      (rc = ooc_sweep_parse_budgets(g, o->budget ? o->budget : "default",
                                    err)) ||
      (o->dtype && (rc = ooc_sweep_parse_dtypes(g, o->dtype, err))) ||
      (o->precision &&
       (rc = ooc_sweep_parse_precisions(g, o->precision, err))) ||
      (o->optimizer && (rc = ooc_sweep_parse_optimizers(g, o->optimizer,
                                                        err))))
    return rc;
  for (int i = 0; i < o->n_hw_sets; i++) {
    char kv[512];
    snprintf(kv, sizeof kv, "%s=%s", o->hw_sets[i].key, o->hw_sets[i].value);
    if ((rc = ooc_sweep_add_hwset(g, kv, err)))
      return rc;
  }
  for (int i = 0; i < o->n_sets; i++) {
    char kv[512];
    snprintf(kv, sizeof kv, "%s=%s", o->sets[i].key, o->sets[i].value);
    if ((rc = ooc_sweep_add_set(g, kv, err)))
      return rc;
  }
  return OOC_OK;
}

/* Check and run g into DIR/data/NAME; rows in *t. Failed points are
 * counted in d->failed (the first sweep's first error in d->note). */
static int
run_sweep(const ooc_report_opts *o, ooc_sweep_grid *g, const char *name,
          ooc_table *t, ooc_report_data *d, ooc_err *err)
{
  char dir[4096];
  ooc_sweep_opts so = { .jobs = o->jobs, .resume = 0,
                        .progress = o->progress, .progress_note = name };
  ooc_sweep_stats st;
  int rc;

  if ((rc = ooc_sweep_grid_check(g, err)))
    return rc;
  if (o->progress) {
    /* The points of every sweep make one line: this sweep's count from
     * those done before it, out of the estimate made at the start. */
    int64_t np = ooc_sweep_npoints(g);
    if (d->points_done + np > d->points_total)
      d->points_total = d->points_done + np;
    ooc_progress_part(o->progress, d->points_done, d->points_total);
    d->points_done += np;
  }
  snprintf(dir, sizeof dir, "%s/data/%s", o->dir, name);
  so.dir = dir;
  if ((rc = ooc_sweep_run(g, &so, &st, t, err)))
    return rc;
  if (st.failed) {
    d->failed += st.failed;
    if (!d->note[0])
      snprintf(d->note, sizeof d->note, "%s: %s", name, st.first_error);
  }
  return OOC_OK;
}

/* Default throughput batches: B/4, B/2, B, 3B/2, 2B (distinct, >= 1). */
static void
default_batches(int64_t b, char *buf, size_t n)
{
  int64_t v[5] = { b / 4, b / 2, b, b + b / 2, 2 * b };
  size_t k = 0;
  int64_t last = 0;
  buf[0] = '\0';
  for (int i = 0; i < 5; i++) {
    if (v[i] < 1 || v[i] <= last)
      continue;
    k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, k ? "," : "", v[i]);
    last = v[i];
  }
}

/* 1. Throughput at the batches asked for (default around B), B always
 * among them: the comparison at B comes from this sweep. */
static int
sweep_throughput(const ooc_report_opts *o, ooc_report_data *d, ooc_err *err)
{
  ooc_sweep_grid g;
  int has_b = 0, rc;

  if (o->batches)
    snprintf(d->batches, sizeof d->batches, "%s", o->batches);
  else
    default_batches(o->batch, d->batches, sizeof d->batches);
  if ((rc = base_grid(o, &g, err)) ||
      (rc = ooc_sweep_parse_batches_as(&g, d->batches, "--batches", err)))
    goto out;
  for (int i = 0; i < g.n_batches; i++)
    has_b |= g.batches[i] == o->batch;
  if (!has_b) {
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, o->batch);
    if ((rc = ooc_sweep_parse_batches(&g, b, err)))
      goto out;
  }
  rc = run_sweep(o, &g, "throughput", &d->thr, d, err);
out:
  ooc_sweep_grid_fini(&g);
  return rc;
}

/* 2. Slowdown vs link bandwidth at B: a symmetric full-duplex link. */
static int
sweep_bandwidth(const ooc_report_opts *o, ooc_report_data *d, ooc_err *err)
{
  ooc_sweep_grid g;
  char b[32];
  int rc;

  if ((rc = base_grid(o, &g, err)) ||
      (rc = ooc_sweep_add_hwset(&g, "link.h2d_GBps+link.d2h_GBps+"
                                "link.duplex_h2d_GBps+link.duplex_d2h_GBps="
                                "8,16,32,64,128,256,512", err)))
    goto out;
  snprintf(b, sizeof b, "%" PRId64, o->batch);
  rc = ooc_sweep_parse_batches(&g, b, err);
  if (!rc)
    rc = run_sweep(o, &g, "bandwidth", &d->bw, d, err);
out:
  ooc_sweep_grid_fini(&g);
  return rc;
}

/* 3. Largest batch per planner on this GPU. */
static int
sweep_maxbatch(const ooc_report_opts *o, ooc_report_data *d, ooc_err *err)
{
  ooc_sweep_grid g;
  int rc;

  if ((rc = base_grid(o, &g, err)) == OOC_OK) {
    g.maxbatch = 1;
    rc = run_sweep(o, &g, "maxbatch", &d->mb, d, err);
  }
  ooc_sweep_grid_fini(&g);
  if (!rc)
    d->have_mb = 1;
  return rc;
}

/* 4. What-if: this GPU with the host link (pinned and pageable rates,
 * duplex rates, latency, copy engines) of link profile `name`, into
 * d->wi[d->n_wi]. A profile that does not load is skipped. */
static int
sweep_link(const ooc_report_opts *o, const char *name, ooc_report_data *d,
           ooc_err *err)
{
  ooc_sweep_grid g;
  ooc_hw *lh = NULL;
  char kv[8][128], b[32], sweep[256];
  int rc;

  if (ooc_hw_load(name, NULL, 0, &lh, NULL) != OOC_OK)
    return OOC_OK;
  snprintf(kv[0], sizeof kv[0], "link.h2d_GBps=%.6g", lh->h2d_Bps / 1e9);
  snprintf(kv[1], sizeof kv[1], "link.d2h_GBps=%.6g", lh->d2h_Bps / 1e9);
  snprintf(kv[2], sizeof kv[2], "link.h2d_pageable_GBps=%.6g",
           lh->h2d_pageable_Bps / 1e9);
  snprintf(kv[3], sizeof kv[3], "link.d2h_pageable_GBps=%.6g",
           lh->d2h_pageable_Bps / 1e9);
  snprintf(kv[4], sizeof kv[4], "link.duplex_h2d_GBps=%.6g",
           lh->duplex_h2d_Bps / 1e9);
  snprintf(kv[5], sizeof kv[5], "link.duplex_d2h_GBps=%.6g",
           lh->duplex_d2h_Bps / 1e9);
  snprintf(kv[6], sizeof kv[6], "link.latency_us=%.6g",
           (double)lh->copy_latency_ns / 1e3);
  snprintf(kv[7], sizeof kv[7], "link.copy_engines=%d", lh->copy_engines);
  ooc_hw_free(lh);
  rc = base_grid(o, &g, err);
  for (int k = 0; k < 8 && !rc; k++) {
    /* A field the user fixed with --hw-set stays fixed. */
    int fixed = 0;
    for (int u = 0; u < o->n_hw_sets; u++)
      fixed |= strncmp(kv[k], o->hw_sets[u].key, strlen(o->hw_sets[u].key))
                   == 0 && kv[k][strlen(o->hw_sets[u].key)] == '=';
    if (!fixed)
      rc = ooc_sweep_add_hwset(&g, kv[k], err);
  }
  snprintf(b, sizeof b, "%" PRId64, o->batch);
  if (!rc)
    rc = ooc_sweep_parse_batches(&g, b, err);
  snprintf(sweep, sizeof sweep, "whatif-%s", name);
  if (!rc)
    rc = run_sweep(o, &g, sweep, &d->wi[d->n_wi], d, err);
  ooc_sweep_grid_fini(&g);
  if (!rc)
    d->wi_name[d->n_wi++] = name;
  return rc;
}

/* Points of every sweep the report runs, for the progress line: planners x
 * (throughput batches + 7 bandwidths + the what-if links), plus one
 * largest-batch search per planner (counted as one point each). */
static int64_t
estimate_points(const ooc_report_opts *o)
{
  char b[256];
  int64_t np = 0, nb = 1, nl = 0;
  const char *pl = o->planners ? o->planners : "all";

  if (strcmp(pl, "all") == 0)
    while (ooc_planner_types[np])
      np++;
  else
    for (np = 1; *pl; pl++)
      np += *pl == ',';
  if (o->batches)
    snprintf(b, sizeof b, "%s", o->batches);
  else
    default_batches(o->batch, b, sizeof b);
  for (const char *p = b; *p; p++)
    nb += *p == ',';
  while (link_profiles[nl])
    nl++;
  return np * (nb + 1 + 7 + nl + (o->maxbatch ? 1 : 0));
}

int
ooc_report_load(const ooc_report_opts *o, ooc_report_data *d, ooc_err *err)
{
  ooc_model_opts mo = { .batch = o->batch, .sets = o->sets,
                        .n_sets = o->n_sets };
  ooc_sweep_grid g;
  int rc;

  if (o->dtype) {
    if (ooc_dtype_parse(o->dtype, &mo.dtype) != OOC_OK)
      return ooc_err_set(err, OOC_EINVAL, "--dtype: unknown dtype '%s' "
                         "(fp32, fp16, bf16)", o->dtype);
    mo.dtype_set = 1;
  }
  if (o->precision &&
      ooc_precision_parse(o->precision, &mo.precision) != OOC_OK)
    return ooc_err_set(err, OOC_EINVAL, "--precision: unknown precision "
                       "'%s' (fp32, tf32, amp-fp16, amp-bf16)",
                       o->precision);
  if (o->optimizer && ooc_optimizer_parse(o->optimizer, &mo.optimizer))
    return ooc_err_set(err, OOC_EINVAL, "--optimizer: unknown optimizer "
                       "'%s' (sgd, momentum, adam)", o->optimizer);
  if ((rc = ooc_model_load(o->model, &mo, &d->model, err)) ||
      (rc = ooc_hw_load(o->hw, o->hw_sets, o->n_hw_sets, &d->hw, err)))
    return rc;
  /* Nothing to compare: every planner would tie at the framework's
   * overhead, and ratios to a zero lower bound mean nothing. */
  if (d->model->fwd_flops + d->model->bwd_flops <= 0)
    return ooc_err_set(err, OOC_EINVAL, "%s: model '%s' computes nothing "
                       "(0 FLOP per iteration); a "
                       "report has nothing to compare", o->model,
                       d->model->name);
  /* The sweeps' options, parsed as they will be. */
  if (o->batches)
    snprintf(d->batches, sizeof d->batches, "%s", o->batches);
  else
    default_batches(o->batch, d->batches, sizeof d->batches);
  rc = base_grid(o, &g, err);
  if (!rc)
    rc = ooc_sweep_parse_batches_as(&g, d->batches, "--batches", err);
  if (!rc) {
    /* The model at the largest batch: sizes grow with it, so when it
     * loads every smaller one does, and a size it overflows is bad
     * input found before the folder is made. */
    int64_t top = 0;
    ooc_model *big = NULL;
    for (int i = 0; i < g.n_batches; i++)
      if (g.batches[i] > top)
        top = g.batches[i];
    if (top > o->batch) {
      ooc_model_opts bo = mo;
      bo.batch = top;
      if ((rc = ooc_model_load(o->model, &bo, &big, err)) < 0)
        ooc_err_prefix(err, rc, "--batches: batch %lld: ", (long long)top);
      ooc_model_free(big);
    }
  }
  for (int i = 0; !rc && i < g.n_planners; i++)
    if (ooc_planner_find(g.planners[i], err) == NULL)
      rc = ooc_err_prefix(err, OOC_EINVAL, "-p: ");
  if (!rc && g.budget_bytes[0] != 0) {
    /* A budget the user gave that no plan can fit is bad input. */
    ooc_scenario_spec sp = {
      .model = o->model, .batch = o->batch, .dtype_set = mo.dtype_set,
      .dtype = mo.dtype, .precision = mo.precision,
      .optimizer = mo.optimizer, .sets = o->sets, .n_sets = o->n_sets,
      .hw = o->hw, .hw_sets = o->hw_sets, .n_hw_sets = o->n_hw_sets,
    };
    ooc_scenario *sc = NULL;
    int off = 0;
    for (int i = 0; i < g.n_planners; i++) {
      const ooc_planner_type *t = ooc_planner_find(g.planners[i], NULL);
      off |= t != NULL && (t->flags & OOC_PLANNER_OFFLOAD) != 0;
    }
    if (!(rc = ooc_scenario_open(&sp, &sc, err)) &&
        (rc = ooc_scenario_check_budget_for(sc, g.budget_bytes[0], off,
                                            err)) < 0)
      ooc_err_prefix(err, rc, "--budget: ");
    ooc_scenario_close(sc);
  }
  ooc_sweep_grid_fini(&g);
  return rc;
}

int
ooc_report_collect(const ooc_report_opts *o, ooc_report_data *d,
                   ooc_err *err)
{
  int rc;

  d->points_total = estimate_points(o);
  if ((rc = sweep_throughput(o, d, err)))
    return rc;
  d->win = ooc_report_best_row(&d->thr, o->batch);
  if ((rc = sweep_bandwidth(o, d, err)) ||
      (o->maxbatch && (rc = sweep_maxbatch(o, d, err))))
    return rc;
  for (int i = 0; link_profiles[i] && d->n_wi < OOC_REPORT_MAX_LINKS; i++)
    if ((rc = sweep_link(o, link_profiles[i], d, err)))
      return rc;
  return OOC_OK;
}
