/* analysis/baseline.c — the in-core baseline (baseline.h): the incore
 * planner from the registry, the ideal allocator, an unlimited budget.
 *
 * Ownership: the lowered program lives for one call. Cost: one simulation
 * of the in-core program, O(instructions log streams).
 */
#include "config.h"

#include "analysis/baseline.h"
#include "ir/algo.h"
#include "ir/program.h"
#include "analysis/plansim.h"
#include "planners/registry.h"

/* The "unlimited" device of the in-core baseline: large enough for any
 * model, small enough that allocator arithmetic cannot overflow. */
#define UNLIMITED_BYTES ((uint64_t)1 << 62)

/* Every layer's forward and backward at its fastest kernel algorithm
 * (ir/algo.h; the default where a layer offers no choice). O(layers x
 * algorithms). */
static int64_t
fastest_ns(const ooc_model *m, const ooc_costs *costs)
{
  int64_t sum = 0;

  for (int l = 0; l < m->n_layers; l++)
    for (int ph = 0; ph < 2; ph++) {
      int phase = ph ? OOC_PH_BWD : OOC_PH_FWD;
      int64_t best = -1;
      for (int a = 0; a < OOC_ALGO_COUNT; a++) {
        int64_t t = ooc_costs_algo_ns(costs, l, phase, a);
        if (t >= 0 && (best < 0 || t < best))
          best = t;
      }
      if (best > 0)
        sum += best;
    }
  return sum;
}

int
ooc_baseline_compute(const ooc_model *m, const ooc_hw *hw,
                     const ooc_costs *costs, const ooc_liveness *lv,
                     double *incore_s, double *compute_s, ooc_err *err)
{
  ooc_plansim job = {
    .model = m, .hw = hw, .costs = costs, .live = lv,
    .allocator = &ooc_alloc_ideal, .budget = UNLIMITED_BYTES,
    .iterations = OOC_PLANSIM_ITERATIONS,
  };
  ooc_plansim_result res;
  ooc_program prog;
  double costs_s;
  int rc;

  *incore_s = 0;
  if ((job.planner = ooc_planner_find("incore", err)) == NULL)
    return ooc_err_prefix(err, OOC_ENOTFOUND, "in-core baseline: ");
  ooc_program_init(&prog);
  rc = ooc_plansim_run(&job, &prog, &res, err);
  ooc_program_fini(&prog);
  if (rc < 0)
    return ooc_err_prefix(err, rc, "in-core baseline: ");
  /* The compute stream must run every forward and backward kernel and the
   * update once, each at best with its fastest algorithm (a plan may pick
   * it, SuperNeurons §3.5); take the smaller of that sum and what the
   * in-core run kept the compute stream busy. */
  costs_s = (double)(fastest_ns(m, costs) + costs->update_ns) * 1e-9;
  *compute_s = costs_s;
  if (res.sim.feasible) {
    *incore_s = (double)res.sim.iteration_ns * 1e-9;
    if ((double)res.sim.compute_busy_ns * 1e-9 < costs_s)
      *compute_s = (double)res.sim.compute_busy_ns * 1e-9;
  }
  return OOC_OK;
}
