/* analysis/plansim.c — one planner run and the simulation of its program
 * (plansim.h), with the wall-clock time of each.
 *
 * Ownership: the simulator, the plan and the planner's scratch program live
 * for one call. Cost: the planner's (it may call the simulator many times
 * through the scratch program) plus one simulation.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "analysis/plansim.h"
#include "planners/registry.h"
#include "base/util.h"

int
ooc_plansim_run(const ooc_plansim *job, ooc_program *prog,
                ooc_plansim_result *res, ooc_err *err)
{
  ooc_sim *sim = NULL;
  ooc_program scratch;
  ooc_plan pl;
  ooc_planner_ctx ctx;
  ooc_sim_config cfg = {
    .model = job->model, .hw = job->hw, .costs = job->costs,
    .allocator = job->allocator, .allocator_options = job->allocator_options,
    .budget = job->budget, .chunk_bytes = 0, .iterations = job->iterations,
    .max_iterations = job->max_iterations,
  };
  int plan_inited = 0, rc;
  double t0;

  *res = (ooc_plansim_result){ .note = "" };
  ooc_program_init(&scratch);
  if ((rc = ooc_sim_alloc(&cfg, &sim, err)) < 0)
    goto done;
  if ((rc = ooc_plan_init(&pl, job->live, err)) < 0)
    goto done;
  plan_inited = 1;
  ctx = (ooc_planner_ctx){
    .model = job->model, .hw = job->hw, .costs = job->costs,
    .live = job->live, .allocator = job->allocator,
    .allocator_options = job->allocator_options, .budget = job->budget,
    .chunk_bytes = cfg.chunk_bytes, .opts = job->opts,
    .n_opts = job->n_opts, .sim = sim, .scratch = &scratch,
    .layer_algo = job->layer_algo, .peers = ooc_planner_types,
  };
  t0 = ooc_wall_s();
  if ((rc = ooc_planner_run(job->planner, &ctx, &pl, prog, err)) < 0)
    goto done;
  res->plan_wall_s = ooc_wall_s() - t0;
  res->plan_sims = ooc_sim_runs(sim);
  snprintf(res->note, sizeof res->note, "%s", pl.note);
  memcpy(res->metrics, pl.metrics, sizeof res->metrics);
  res->n_metrics = pl.n_metrics;
  t0 = ooc_wall_s();
  rc = ooc_sim_run(sim, prog, &res->sim, job->trace, err);
  res->sim_wall_s = ooc_wall_s() - t0;
done:
  if (plan_inited)
    ooc_plan_fini(&pl);
  ooc_program_fini(&scratch);
  ooc_sim_free(sim);
  return rc;
}
