/* analysis/maxbatch.c — the doubling + bisection search of maxbatch.h over
 * scenario runs, one opened scenario per batch tried.
 *
 * Ownership: each tried scenario is opened and closed here; only the
 * summary at the best batch, and what stopped the next, leave. Cost: about
 * 2 log2(best) runs (the doubling, the bisection), plus up to
 * log2(best / 8) + 1 for each look-ahead (maxbatch.h), each skipping the
 * in-core baseline (ooc_scenario_probe); the summary of the last batch
 * that fitted, which is the best, is kept, and the baseline and bound are
 * computed for it alone at the end (no run of the planner again).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "analysis/maxbatch.h"
#include "planners/registry.h"

/* Feasibility of batch b: 1 feasible (its summary, without the baseline,
 * replaces *keep), 0 not (the working set exceeds the budget, the batch
 * overflows, or the plan runs out of memory; lim, when given, says
 * which), < 0 an error. */
static int
try_batch(const ooc_scenario_spec *spec, int64_t b, ooc_summary *keep,
          ooc_maxbatch_limit *lim, ooc_err *err)
{
  ooc_scenario_spec s = *spec;
  const ooc_planner_type *t =
      spec->planner != NULL ? ooc_planner_find(spec->planner, NULL) : NULL;
  ooc_scenario *sc = NULL;
  ooc_summary tmp;
  ooc_err e2 = { 0 };
  int rc, feasible;

  s.batch = b;
  rc = ooc_scenario_open(&s, &sc, &e2);
  if (rc == OOC_ERANGE) {
    if (lim != NULL)
      *lim = (ooc_maxbatch_limit){ .batch = b };
    return 0;           /* bytes of the batch overflow: too large */
  }
  if (rc < 0) {
    if (err != NULL)
      *err = e2;
    return rc;
  }
  /* A budget above the profile's memory is bad input at any batch, not
   * a limit of this one (maxbatch's own command refuses it up front; a
   * sweep's point fails with it). */
  if (spec->budget != 0 &&
      (rc = ooc_scenario_check_budget_size(sc, spec->budget, &e2)) < 0) {
    if (err != NULL)
      *err = e2;
    ooc_scenario_close(sc);
    return rc;
  }
  if (ooc_scenario_check_budget_for(sc, spec->budget != 0
                                            ? spec->budget
                                            : ooc_scenario_hw(sc)->mem_usable,
                                    t != NULL &&
                                        (t->flags & OOC_PLANNER_OFFLOAD),
                                    NULL) < 0) {
    if (lim != NULL) {
      *lim = (ooc_maxbatch_limit){ .batch = b,
                                   .kind = OOC_LIMIT_WORKING_SET };
      ooc_scenario_working_set(sc, lim->op, sizeof lim->op);
    }
    ooc_scenario_close(sc);
    return 0;
  }
  rc = ooc_scenario_probe(sc, &s, &tmp, err);
  if (rc < 0) {
    ooc_scenario_close(sc);
    return rc;
  }
  feasible = tmp.feasible;
  if (!feasible && lim != NULL) {
    /* No program (oom.instr < 0): the profile's memory is below the
     * working set of the step the OOM names. Else the plan ran out of
     * memory, at the largest step or elsewhere. */
    char largest[160];
    ooc_scenario_working_set(sc, largest, sizeof largest);
    *lim = (ooc_maxbatch_limit){ .batch = b, .kind = OOC_LIMIT_OOM };
    snprintf(lim->op, sizeof lim->op, "%s",
             tmp.oom_op != NULL ? tmp.oom_op : "");
    if (tmp.oom.instr < 0)
      lim->kind = OOC_LIMIT_WORKING_SET;
    else if (strcmp(lim->op, largest) == 0)
      lim->kind = OOC_LIMIT_LARGEST_STEP;
  }
  ooc_scenario_close(sc);
  if (feasible) {
    ooc_summary_fini(keep);
    *keep = tmp;
  } else {
    ooc_summary_fini(&tmp);
  }
  return feasible;
}

/* The summary *sum of a probe at spec's scenario at batch b, completed
 * with the baseline and the bound. */
static int
add_baseline(const ooc_scenario_spec *spec, int64_t b, ooc_summary *sum,
             ooc_err *err)
{
  ooc_scenario_spec s = *spec;
  ooc_scenario *sc = NULL;
  int rc;

  s.batch = b;
  if ((rc = ooc_scenario_open(&s, &sc, err)) == OOC_OK)
    rc = ooc_scenario_add_baseline(sc, sum, err);
  ooc_scenario_close(sc);
  return rc;
}

const char *
ooc_limit_kind_name(ooc_limit_kind k)
{
  switch (k) {
  case OOC_LIMIT_WORKING_SET: return "working_set";
  case OOC_LIMIT_LARGEST_STEP: return "largest_step";
  case OOC_LIMIT_OOM: return "oom";
  default: return "";
  }
}

int
ooc_maxbatch_find(const ooc_scenario_spec *spec, int64_t *best,
                  ooc_summary *at_max, ooc_err *err)
{
  return ooc_maxbatch_search(spec, NULL, best, at_max, NULL, err);
}

int
ooc_maxbatch_find_limit(const ooc_scenario_spec *spec, int64_t *best,
                        ooc_summary *at_max, ooc_maxbatch_limit *limit,
                        ooc_err *err)
{
  return ooc_maxbatch_search(spec, NULL, best, at_max, limit, err);
}

/* Probes left to bisect (lo, hi). */
static int64_t
probes_left(int64_t lo, int64_t hi)
{
  int64_t n = 0;
  while (hi - lo > 1) {
    lo += (hi - lo) / 2;
    n++;
  }
  return n;
}

static void
show(ooc_progress *prog, int64_t done, int64_t total, int64_t b)
{
  char note[64];
  snprintf(note, sizeof note, "trying batch %lld", (long long)b);
  ooc_progress_show(prog, done, total, "simulations", note);
}

/* Bisect (*lo, *hi), lo fitting and hi not, down to hi = lo + 1. lim
 * describes hi on return (try_batch writes it only for a batch that does
 * not fit, and hi moves only to such a batch). */
static int
bisect(const ooc_scenario_spec *spec, ooc_progress *prog, int64_t *probes,
       int64_t *lo, int64_t *hi, ooc_summary *at, ooc_maxbatch_limit *lim,
       ooc_err *err)
{
  int rc;

  while (*hi - *lo > 1) {
    int64_t mid = *lo + (*hi - *lo) / 2;
    show(prog, *probes, *probes + probes_left(*lo, *hi), mid);
    (*probes)++;
    if ((rc = try_batch(spec, mid, at, lim, err)) < 0)
      return rc;
    if (rc)
      *lo = mid;
    else
      *hi = mid;
  }
  return OOC_OK;
}

/* Look ahead of hi, the first batch found not to fit: hi + 1, hi + 2,
 * hi + 4, ... up to hi + hi / 8 (at least hi + 1). Stops at the first
 * that fits (*found), or at one whose working set exceeds the budget
 * (no larger batch fits either). 1 when one fits, 0 when none, < 0 an
 * error. */
static int
look_ahead(const ooc_scenario_spec *spec, ooc_progress *prog,
           int64_t *probes, int64_t hi, int64_t *found, int64_t *step,
           ooc_summary *at, ooc_err *err)
{
  const int64_t reach = hi / 8 > 1 ? hi / 8 : 1;
  ooc_maxbatch_limit l;
  int rc;

  for (int64_t d = 1; d <= reach && hi + d <= OOC_MAXBATCH_CAP; d *= 2) {
    show(prog, (*probes)++, 0, hi + d);
    l = (ooc_maxbatch_limit){ .batch = 0 };
    if ((rc = try_batch(spec, hi + d, at, &l, err)) < 0)
      return rc;
    if (rc) {
      *found = hi + d;
      *step = d;
      return 1;
    }
    if (l.kind == OOC_LIMIT_WORKING_SET || l.kind == OOC_LIMIT_NONE)
      return 0;
  }
  return 0;
}

/* From *lo, which fits, try *lo + step, the step doubling after each
 * fit, until one does not: it is *hi (lim describes it), or cap + 1 when
 * the cap is passed first. */
static int
gallop(const ooc_scenario_spec *spec, ooc_progress *prog, int64_t *probes,
       int64_t *lo, int64_t *hi, int64_t step, ooc_summary *at,
       ooc_maxbatch_limit *lim, ooc_err *err)
{
  int rc;

  for (;;) {
    int64_t b = *lo + step;
    if (b > OOC_MAXBATCH_CAP) {
      *hi = OOC_MAXBATCH_CAP + 1;
      return OOC_OK;
    }
    show(prog, (*probes)++, 0, b);
    if ((rc = try_batch(spec, b, at, lim, err)) < 0)
      return rc;
    if (rc == 0) {
      *hi = b;
      return OOC_OK;
    }
    *lo = b;
    step *= 2;
  }
}

int
ooc_maxbatch_search(const ooc_scenario_spec *spec, ooc_progress *prog,
                    int64_t *best, ooc_summary *at_max,
                    ooc_maxbatch_limit *limit, ooc_err *err)
{
  ooc_maxbatch_limit lim = { .batch = 0 };
  int64_t probes = 0, hole = 0;
  const ooc_planner_type *t;
  const ooc_allocator_type *a;
  int64_t lo = 0, hi = 0, b, step;
  const int64_t cap = OOC_MAXBATCH_CAP;
  int rc;

  *best = 0;
  *at_max = (ooc_summary){ 0 };
  if ((rc = ooc_scenario_lookup(spec, &t, &a, NULL, err)) < 0)
    return rc;
  /* Doubling: batch 1, then 2, 4, 8, ... (a gallop from 1 by 1); lo is
   * the largest batch known to fit, hi the smallest known not to. lo
   * moves only to a batch just found to fit, so *at_max, the summary of
   * the last batch that fitted, is always lo's. */
  show(prog, probes++, 0, 1);
  if ((rc = try_batch(spec, 1, at_max, &lim, err)) < 0)
    goto fail;
  if (rc == 0) {
    hi = 1;
  } else {
    lo = 1;
    if ((rc = gallop(spec, prog, &probes, &lo, &hi, 1, at_max, &lim,
                     err)) < 0)
      goto fail;
  }
  for (;;) {
    if ((rc = bisect(spec, prog, &probes, &lo, &hi, at_max, &lim, err)) < 0)
      goto fail;
    /* hi = lo + 1 does not fit. A planner's feasibility need not be
     * monotone in the batch (its heuristics change with it), so look
     * ahead before taking hi as the limit, unless its working set
     * already exceeds the budget (or its bytes overflow): then no larger
     * batch fits either. */
    if (hi > cap || lo == 0 || lim.kind == OOC_LIMIT_WORKING_SET ||
        lim.kind == OOC_LIMIT_NONE)
      break;
    if ((rc = look_ahead(spec, prog, &probes, hi, &b, &step, at_max,
                         err)) < 0)
      goto fail;
    if (rc == 0)
      break;
    if (hole == 0)
      hole = hi;
    /* b fits: gallop up from it to one that does not, and bisect again. */
    lo = b;
    if ((rc = gallop(spec, prog, &probes, &lo, &hi, step, at_max, &lim,
                     err)) < 0)
      goto fail;
  }
  /* hi is the first batch above lo found not to fit: lo + 1. */
  *best = lo;
  if (limit != NULL) {
    *limit = hi <= cap ? lim : (ooc_maxbatch_limit){ .batch = 0 };
    limit->hole = hole;
  }
  if (lo == 0)
    return OOC_OK;
  if (at_max->batch != lo) {
    rc = ooc_err_set(err, OOC_EINVAL, "maxbatch: the summary kept is of "
                     "batch %lld, not of the best, %lld", (long long)
                     at_max->batch, (long long)lo);
    goto fail;
  }
  if ((rc = add_baseline(spec, lo, at_max, err)) < 0)
    goto fail;
  ooc_progress_show(prog, probes, probes, "simulations", NULL);
  return OOC_OK;
fail:
  ooc_summary_fini(at_max);
  *at_max = (ooc_summary){ 0 };
  *best = 0;
  return rc;
}
