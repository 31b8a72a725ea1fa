/* analysis/plansim.h — plan, then simulate: one planner on one loaded
 * (model, profile, costs, liveness) under an allocator and a budget, its
 * plan lowered to a program and that program simulated.
 *
 * The step every analysis repeats: a scenario run (scenario.h) and the
 * in-core baseline (baseline.h) are both one ooc_plansim_run.
 *
 * Ownership: ooc_plansim borrows everything it points to; the program
 * is caller-owned (initialised with ooc_program_init) and receives the
 * lowered plan. Cost: one planner run (whatever the planner's search
 * costs) and one simulation; a simulator and a plan are allocated and
 * freed per call. No static state: runs may go on several threads at once.
 */
#ifndef OOC_PLANSIM_H
#define OOC_PLANSIM_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "ir/trace.h"
#include "alloc/alloc.h"
#include "sim/cost.h"
#include "sim/sim.h"
#include "plan/plan.h"
#include "plan/planner.h"

/* Timed iterations of a run when none is asked for: the last of two is
 * reported, so caching allocator state is warm (and, where the second
 * asks for no driver call, steady: sim/sim.h). */
#define OOC_PLANSIM_ITERATIONS 2

typedef struct ooc_plansim {
  const ooc_model *model;
  const ooc_hw *hw;
  const ooc_costs *costs;
  const ooc_liveness *live;
  const ooc_planner_type *planner;
  const ooc_allocator_type *allocator;
  const char *allocator_options; /* "key=value:key", or NULL */
  uint64_t budget;            /* device bytes */
  const ooc_kv *opts; int n_opts;             /* planner options */
  int iterations;             /* timed iterations, >= 1 */
  int max_iterations;         /* ooc_sim_config's: 0 exactly iterations */
  ooc_trace *trace;           /* NULL, or receives the last iteration */
  const uint8_t *layer_algo;  /* NULL, or ooc_planner_ctx's */
} ooc_plansim;

typedef struct ooc_plansim_result {
  ooc_sim_result sim;
  char note[sizeof ((ooc_plan *)0)->note];    /* the planner's note */
  ooc_metric metrics[OOC_PLAN_METRICS];       /* and its metrics */
  int n_metrics;
  double plan_wall_s, sim_wall_s;             /* wall-clock time of each */
  uint64_t plan_sims;         /* simulations the planner ran */
} ooc_plansim_result;

/* Run job's planner, lower its plan into prog and simulate prog. Returns
 * OOC_OK with res filled (res->sim.feasible may be 0: an OOM is a
 * result), or the planner's or simulator's error. */
int ooc_plansim_run(const ooc_plansim *job, ooc_program *prog,
                    ooc_plansim_result *res, ooc_err *err);

#endif
