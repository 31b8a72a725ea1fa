/* analysis/minbudget.c — the search of minbudget.h: try each planner at
 * the floor, else grow an upper budget until a planner fits, then bisect
 * each planner below the best so far, in MiB, on one opened scenario.
 *
 * Ownership: the scenario is opened and closed here; the summary at the
 * result goes to the caller. Cost: see minbudget.h.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "analysis/minbudget.h"
#include "planners/registry.h"
#include "base/util.h"

#define MIB OOC_MINBUDGET_STEP

/* spec's --opt values that planner t accepts, into out (at most 64);
 * none for a planner other than spec->opts_planner when that is set. */
static int
opts_for(const ooc_scenario_spec *spec, const ooc_planner_type *t,
         ooc_kv *out)
{
  if (spec->opts_planner != NULL && strcmp(spec->opts_planner, t->name) != 0)
    return 0;
  return ooc_planner_opts_for(t, spec->opts,
                              spec->n_opts < 64 ? spec->n_opts : 64, out);
}

struct search {
  ooc_scenario *sc;
  ooc_scenario_spec spec;
  ooc_progress *prog;
  int sims;
  double events;            /* events simulated, the planners' included */
  double work;              /* those and the planners' other work */
  ooc_minbudget_caps caps;
};

/* Has the search spent its caps? */
static int
spent(const struct search *S)
{
  return (S->caps.max_events > 0 && S->events >= S->caps.max_events) ||
         (S->caps.max_work > 0 && S->work >= S->caps.max_work);
}

/* 1 when planner t fits budget mib (in MiB), 0 when not, < 0 an error. */
static int
fits(struct search *S, const ooc_planner_type *t, int64_t mib, ooc_err *err)
{
  ooc_scenario_spec s = S->spec;
  ooc_summary sum;
  ooc_err e2 = { 0 };
  ooc_kv opts[64];
  char note[96], b[32];
  double ev;
  int rc, ok;

  s.planner = t->name;
  s.n_opts = opts_for(&S->spec, t, opts);
  s.opts = opts;
  s.budget = (uint64_t)mib * MIB;
  snprintf(note, sizeof note, "%s at %s", t->name,
           ooc_fmt_bytes(s.budget, b, sizeof b));
  ooc_progress_show(S->prog, S->sims, 0, "simulations", note);
  S->sims++;
  rc = ooc_scenario_probe(S->sc, &s, &sum, &e2);
  if (rc < 0) {
    if (e2.code == OOC_EOOM)
      return 0;           /* the planner says it cannot fit: a result */
    if (err != NULL)
      *err = e2;
    return rc;
  }
  ok = sum.feasible;
  /* The planner's own simulations are taken to be as long as this one;
   * its work beside them, where it reports it (checkpoint-dp's rotor
   * tables), counts in work as the events it would have simulated
   * meanwhile. */
  ev = (double)sum.events * (double)(1 + sum.plan_simulations);
  S->events += ev;
  S->work += ev;
  S->work += ooc_metric_value(sum.metrics, sum.n_metrics,
                              OOC_METRIC_WORK_EVENTS);
  ooc_summary_fini(&sum);
  return ok;
}

/* Bisect planner t between *lo (does not fit) and *hi (fits) until they
 * are 1 MiB apart or the caps are spent. */
static int
bisect(struct search *S, const ooc_planner_type *t, int64_t *lo,
       int64_t *hi, ooc_err *err)
{
  while (*hi - *lo > 1 && !spent(S)) {
    int64_t mid = *lo + (*hi - *lo) / 2;
    int rc = fits(S, t, mid, err);
    if (rc < 0)
      return rc;
    if (rc)
      *hi = mid;
    else
      *lo = mid;
  }
  return OOC_OK;
}

void
ooc_minbudget_result_fini(ooc_minbudget_result *res)
{
  ooc_summary_fini(&res->at);
  *res = (ooc_minbudget_result){ .budget = 0 };
}

int
ooc_minbudget_find(const ooc_scenario_spec *spec,
                   const ooc_planner_type *const *planners, int n,
                   ooc_progress *prog, ooc_minbudget_result *res,
                   ooc_err *err)
{
  return ooc_minbudget_find_capped(spec, planners, n, NULL, prog, res, err);
}

int
ooc_minbudget_find_capped(const ooc_scenario_spec *spec,
                          const ooc_planner_type *const *planners, int n,
                          const ooc_minbudget_caps *caps,
                          ooc_progress *prog, ooc_minbudget_result *res,
                          ooc_err *err)
{
  struct search S = { .spec = *spec, .prog = prog };
  const ooc_planner_type *const *ts = planners;
  const ooc_planner_type *best_t = NULL;
  const ooc_allocator_type *al;
  int64_t floor_mib, start_mib, cap_mib, best = 0, floor_res, floor_off;
  uint64_t big, ws_off;
  int rc, i, any_res = 0, any_off = 0;

  *res = (ooc_minbudget_result){ .budget = 0 };
  if (caps != NULL)
    S.caps = *caps;
  if (ts == NULL) {
    ts = ooc_planner_types;
    for (n = 0; ts[n] != NULL; n++)
      ;
  }
  S.spec.planner = NULL;
  S.spec.budget = 0;
  S.spec.budget_any = 1;      /* the answer may be a larger device */
  if ((rc = ooc_scenario_lookup(&S.spec, NULL, &al, NULL, err)) < 0 ||
      (rc = ooc_scenario_open(&S.spec, &S.sc, err)) < 0)
    return rc;
  /* Each planner's floor: the working set with every parameter on the
   * device, or, for one that may offload them (zero-offload, joint), with
   * the offloadable ones on the host. The least of the chosen planners'
   * is the search's. */
  res->working_set = ooc_scenario_working_set(S.sc, NULL, 0);
  ws_off = ooc_scenario_working_set_offload(S.sc);
  floor_res = (int64_t)((res->working_set + MIB - 1) / MIB);
  floor_off = (int64_t)((ws_off + MIB - 1) / MIB);
  for (i = 0; i < n; i++)
    if (ts[i]->flags & OOC_PLANNER_OFFLOAD)
      any_off = 1;
    else
      any_res = 1;
  if (any_off && (!any_res || floor_off < floor_res))
    res->working_set = ws_off;
  floor_mib = (int64_t)((res->working_set + MIB - 1) / MIB);
  start_mib = (int64_t)(ooc_scenario_hw(S.sc)->mem_usable / MIB);
  if (start_mib < floor_mib)
    start_mib = floor_mib;
  big = ooc_scenario_model(S.sc)->naive_peak_bytes;
  cap_mib = 64 * ((int64_t)(big / MIB) > start_mib ? (int64_t)(big / MIB)
                                                   : start_mib);

  /* No plan fits below the floor: the first planner that fits at it is
   * the answer the bisections below would find (the first to reach the
   * least budget), at one probe a planner rather than a bisection. */
  for (i = 0; i < n; i++) {
    if (spent(&S)) {
      res->capped = 1;
      break;
    }
    if ((ts[i]->flags & OOC_PLANNER_OFFLOAD ? floor_off : floor_res) !=
        floor_mib)
      continue;               /* its floor is above: bisected below */
    if ((rc = fits(&S, ts[i], floor_mib, err)) < 0)
      goto done;
    if (rc) {
      best = floor_mib;
      best_t = ts[i];
      break;
    }
  }
  for (i = best_t != NULL || res->capped ? n : 0; i < n; i++) {
    const ooc_planner_type *t = ts[i];
    int64_t own = t->flags & OOC_PLANNER_OFFLOAD ? floor_off : floor_res;
    /* lo never fits: the floor itself was tried above when it is the
     * search's, else only below it is certain not to fit. */
    int64_t lo = own == floor_mib ? own : own - 1, hi;

    if (spent(&S)) {
      res->capped = 1;
      break;
    }
    if (best > 0) {
      /* Only a planner that fits just below the best can improve on it. */
      if (best - 1 <= lo)
        continue;
      if ((rc = fits(&S, t, best - 1, err)) < 0)
        goto done;
      if (rc == 0)
        continue;
      hi = best - 1;
    } else {
      for (hi = start_mib; hi <= cap_mib; hi *= 2) {
        if (spent(&S)) {
          res->capped = 1;
          hi = cap_mib + 1;
          break;
        }
        if ((rc = fits(&S, t, hi, err)) < 0)
          goto done;
        if (rc)
          break;
        lo = hi;
        if (res->ceiling < (uint64_t)hi * MIB)
          res->ceiling = (uint64_t)hi * MIB;
      }
      if (hi > cap_mib)
        continue;
    }
    if ((rc = bisect(&S, t, &lo, &hi, err)) < 0)
      goto done;
    best = hi;
    best_t = t;
    if (hi - lo > 1)
      res->capped = 1;        /* hi fits, the least may be below */
  }
  /* Feasibility need not be monotone in the budget (a planner's
   * heuristics change with it; the caching allocator fragments otherwise
   * with more memory): below the answer, whose next MiB down does not
   * fit, look ahead with its planner at best - 1 - d for d = 1, 2, 4, ...
   * (2, 3, 5, 9, ... MiB below it), down to half of it and not past its
   * floor; where one fits, bisect again between it and the floor, and look
   * ahead again. O(log2(best)) runs a round. */
  while (best_t != NULL && !res->capped) {
    int64_t own = best_t->flags & OOC_PLANNER_OFFLOAD ? floor_off : floor_res;
    int64_t lo = own == floor_mib ? own : own - 1, found = 0, d, hi;

    for (d = 1; best - 1 - d > lo && d <= best / 2; d *= 2) {
      if (spent(&S)) {
        res->capped = 1;
        break;
      }
      if ((rc = fits(&S, best_t, best - 1 - d, err)) < 0)
        goto done;
      if (rc) {
        found = best - 1 - d;
        break;
      }
    }
    if (found == 0)
      break;
    hi = found;
    if ((rc = bisect(&S, best_t, &lo, &hi, err)) < 0)
      goto done;
    best = hi;
    if (hi - lo > 1)
      res->capped = 1;
  }
  if (res->ceiling < (uint64_t)start_mib * MIB)
    res->ceiling = (uint64_t)start_mib * MIB;
  rc = OOC_OK;
  if (best_t != NULL && S.caps.no_final_run) {
    res->budget = (uint64_t)best * MIB;
    res->planner = best_t->name;
  } else if (best_t != NULL) {
    ooc_scenario_spec s = S.spec;
    ooc_kv opts[64];
    s.planner = best_t->name;
    s.n_opts = opts_for(&S.spec, best_t, opts);
    s.opts = opts;
    s.budget = (uint64_t)best * MIB;
    S.sims++;
    if ((rc = ooc_scenario_run_in(S.sc, &s, &res->at, NULL, err)) < 0)
      goto done;
    if (!res->at.feasible) {
      ooc_summary_fini(&res->at);
      rc = ooc_err_set(err, OOC_EINVAL, "minbudget: planner %s fitted %llu "
                       "MiB once and not the second time (non-deterministic "
                       "planner?)", best_t->name, (unsigned long long)best);
      goto done;
    }
    res->budget = (uint64_t)best * MIB;
    res->planner = best_t->name;
  }
done:
  res->simulations = S.sims;
  ooc_scenario_close(S.sc);
  return rc;
}
