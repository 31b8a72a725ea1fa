/* analysis/minbudget.h — the smallest device budget at which one of a set
 * of planners fits a scenario (`oocsim minbudget`, and the hint simulate
 * and compare print under an infeasible result).
 *
 * The search works in MiB. No plan fits below the scenario's largest
 * working set (ooc_scenario_working_set: persistent bytes plus the largest
 * step, the check of ooc_plan_check_budget), or for a planner that may
 * offload optimizer steps (OOC_PLANNER_OFFLOAD) below the same with the
 * offloadable parameters on the host (ooc_scenario_working_set_offload):
 * each planner's floor, the least of them the search's. The
 * upper end is the profile's usable memory, doubled until some planner
 * fits (at most 64 times the larger of it and the naive in-core peak).
 * First each planner whose floor is the search's is tried there, in order:
 * the first that fits is the answer. Else each planner is bisected between
 * its floor and the best budget found so far: a planner that does not fit
 * just below that best is skipped without a bisection. Each probe is one
 * scenario run (ooc_scenario_probe: plan + simulate, no baseline); a
 * planner that reports that it cannot fit counts as not fitting. Each
 * planner gets the --opt values whose keys it accepts (as in compare).
 *
 * Feasibility need not be monotone in the budget (a planner's heuristics
 * change with it, and the caching allocator fragments otherwise with more
 * memory), so below the answer the search looks ahead with its planner at
 * 2, 3, 5, 9, ... MiB less, down to half of it, and bisects again below
 * one that fits (then looks ahead again); a smaller budget out of that
 * reach, or for another planner, may still fit. The result is checked
 * once more, with the baseline and bound, at the end.
 *
 * Ownership: spec and planners are borrowed; the result's summary is the
 * caller's (ooc_minbudget_result_fini). Cost: O(planners x log2(range in
 * MiB)) scenario runs at worst, far fewer with the pruning (one a
 * planner, up to the first, when one fits at the floor), plus
 * O(log2(answer in MiB)) for each look-ahead below the answer; the model,
 * profile, costs and liveness are loaded once.
 */
#ifndef OOC_MINBUDGET_H
#define OOC_MINBUDGET_H

#include <stdint.h>
#include "base/error.h"
#include "base/progress.h"
#include "analysis/scenario.h"
#include "analysis/summary.h"

/* The resolution of the search: budgets are whole MiB. */
#define OOC_MINBUDGET_STEP ((uint64_t)1 << 20)

typedef struct ooc_minbudget_result {
  uint64_t budget;            /* smallest budget that fits; 0: none found */
  const char *planner;        /* the planner that fits there (registry) */
  ooc_summary at;             /* its summary at that budget (budget > 0,
                                 unless no_final_run) */
  uint64_t working_set;       /* the floor: no plan fits below it */
  uint64_t ceiling;           /* the largest budget tried */
  int simulations;            /* scenario runs made, the final one included */
  int capped;                 /* ooc_minbudget_find_capped's cap stopped the
                                 search: budget, when not 0, fits but is
                                 not known to be the smallest */
} ooc_minbudget_result;

/* Search for spec's scenario (spec->planner and spec->budget are ignored;
 * the allocator, options and iterations count) over the n planners (NULL:
 * every registered planner). prog, when non-NULL, shows the simulations
 * run. Returns OOC_OK with res->budget 0 when no planner fits even at the
 * ceiling; errors are those of opening the scenario or of a run (a
 * planner's OOC_EOOM is a result, not an error). */
int ooc_minbudget_find(const ooc_scenario_spec *spec,
                       const ooc_planner_type *const *planners, int n,
                       ooc_progress *prog, ooc_minbudget_result *res,
                       ooc_err *err);

/* What stops ooc_minbudget_find_capped early, and what it skips. */
typedef struct ooc_minbudget_caps {
  double max_events;  /* the events its probes simulate, a planner's own
                         simulations counted as long as its plan's
                         (events x (1 + plan_simulations)); 0: no cap */
  double max_work;    /* those and the planners' other work as they report
                         it (the planner metric work_events:
                         checkpoint-dp's rotor tables); 0: no cap */
  int no_final_run;   /* 1: no run at the answer (res->at stays empty),
                         for a caller that wants only the budget and the
                         planner */
} ooc_minbudget_caps;

/* ooc_minbudget_find under caps (NULL: none, and the final run): once
 * either cap is reached the search stops, res->capped is set and
 * res->budget, when not 0, is the least budget found to fit so far. The
 * final run at the answer, made unless caps->no_final_run, is not
 * counted against them. The hint under an infeasible simulate caps its
 * search so, without the final run. */
int ooc_minbudget_find_capped(const ooc_scenario_spec *spec,
                              const ooc_planner_type *const *planners,
                              int n, const ooc_minbudget_caps *caps,
                              ooc_progress *prog, ooc_minbudget_result *res,
                              ooc_err *err);

void ooc_minbudget_result_fini(ooc_minbudget_result *res);

#endif
