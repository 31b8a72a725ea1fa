/* analysis/scenario.c — one scenario from loading to its summary
 * (scenario.h): model + profile + costs + liveness loaded once, then each
 * run plans and simulates (plansim.h) and fills a summary with the cached
 * in-core baseline (baseline.h) and the lower bound (lower_bound.h).
 *
 * Ownership: ooc_scenario owns the model, profile, costs and liveness it
 * loaded; summaries own their strings (ooc_summary_fini). Cost: one planner
 * run and one simulation per ooc_scenario_run_in, plus one in-core
 * simulation per opened scenario (cached); the lower bound is O(acts +
 * steps). No static state: scenarios may run on several threads at once.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scenario.h"
#include "analysis/baseline.h"
#include "analysis/lower_bound.h"
#include "analysis/plansim.h"
#include "ir/kernel.h"
#include "ir/semantics.h"
#include "planners/registry.h"
#include "sim/cost.h"
#include "alloc/alloc.h"
#include "base/util.h"

struct ooc_scenario {
  ooc_model *model;
  ooc_hw *hw;
  ooc_costs *costs;
  ooc_liveness *lv;
  int have_baseline;
  double incore_s;        /* 0 when the baseline is infeasible */
  double compute_s;
};

int
ooc_scenario_open(const ooc_scenario_spec *spec, ooc_scenario **out,
                  ooc_err *err)
{
  ooc_scenario *sc;
  ooc_model_opts mo;
  int rc;

  *out = NULL;
  if (spec->model == NULL)
    return ooc_err_set(err, OOC_EINVAL, "missing -m MODEL");
  if (spec->hw == NULL)
    return ooc_err_set(err, OOC_EINVAL, "missing --hw HW");
  if (spec->batch < 1)
    return ooc_err_set(err, OOC_EINVAL, "-b: batch %lld must be >= 1",
                       (long long)spec->batch);
  sc = calloc(1, sizeof *sc);
  if (sc == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  mo = (ooc_model_opts){
    .batch = spec->batch,
    .dtype_set = spec->dtype_set,
    .dtype = spec->dtype,
    .optimizer = spec->optimizer,
    .sets = spec->sets,
    .n_sets = spec->n_sets,
    .precision = spec->precision,
  };
  if ((rc = ooc_model_load(spec->model, &mo, &sc->model, err)) < 0)
    goto fail;
  if (spec->precision == OOC_PREC_FP32 || spec->precision == OOC_PREC_TF32) {
    /* The precision decides TF32 after any --hw-set. */
    ooc_hw_override *ov = malloc(((size_t)spec->n_hw_sets + 1) * sizeof *ov);
    if (ov == NULL) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto fail;
    }
    for (int k = 0; k < spec->n_hw_sets; k++)
      ov[k] = spec->hw_sets[k];
    ov[spec->n_hw_sets] = (ooc_hw_override){
      .key = "compute.fp32_uses_tf32",
      .value = spec->precision == OOC_PREC_TF32 ? "true" : "false",
      .via = "--precision" };
    rc = ooc_hw_load(spec->hw, ov, spec->n_hw_sets + 1, &sc->hw, err);
    free(ov);
  } else {
    rc = ooc_hw_load(spec->hw, spec->hw_sets, spec->n_hw_sets, &sc->hw, err);
  }
  if (rc < 0)
    goto fail;
  if ((rc = ooc_costs_alloc(sc->model, sc->hw, &sc->costs, err)) < 0)
    goto fail;
  if ((rc = ooc_liveness_alloc(sc->model, &sc->lv, err)) < 0)
    goto fail;
  *out = sc;
  return OOC_OK;
fail:
  ooc_scenario_close(sc);
  return rc;
}

void
ooc_scenario_close(ooc_scenario *sc)
{
  if (sc == NULL)
    return;
  ooc_liveness_free(sc->lv);
  ooc_costs_free(sc->costs);
  ooc_hw_free(sc->hw);
  ooc_model_free(sc->model);
  free(sc);
}

const ooc_model *
ooc_scenario_model(const ooc_scenario *sc)
{
  return sc->model;
}

const ooc_hw *
ooc_scenario_hw(const ooc_scenario *sc)
{
  return sc->hw;
}

uint64_t
ooc_scenario_working_set(const ooc_scenario *sc, char *step, size_t n)
{
  if (step != NULL)
    ooc_step_name(sc->lv, sc->lv->max_step, step, n);
  return sc->lv->persistent_bytes + sc->lv->max_step_bytes;
}

uint64_t
ooc_scenario_working_set_offload(const ooc_scenario *sc)
{
  return ooc_liveness_offload_persistent(sc->lv) + sc->lv->max_step_bytes;
}

int
ooc_scenario_baseline(ooc_scenario *sc, double *incore_s, double *compute_s,
                      ooc_err *err)
{
  int rc;

  if (!sc->have_baseline) {
    if ((rc = ooc_baseline_compute(sc->model, sc->hw, sc->costs, sc->lv,
                                   &sc->incore_s, &sc->compute_s, err)) < 0)
      return rc;
    sc->have_baseline = 1;
  }
  *incore_s = sc->incore_s;
  *compute_s = sc->compute_s;
  return OOC_OK;
}

double
ooc_scenario_lower_bound(const ooc_scenario *sc, uint64_t budget,
                         double compute_s)
{
  return ooc_lower_bound_compute(sc->lv, sc->costs, sc->hw, budget,
                                 compute_s);
}

/* Fill sum from what ran: program prog and simulation result r, with the
 * baseline and the bound when want_baseline (else they are 0). */
static int
fill_summary(ooc_scenario *sc, const char *planner, const char *allocator,
             uint64_t budget, const ooc_program *prog, const ooc_sim_result *r,
             const char *note, const ooc_metric *metrics, int n_metrics,
             double plan_wall, double sim_wall, uint64_t plan_sims,
             int want_baseline, ooc_summary *sum, ooc_err *err)
{
  ooc_summary_source src = {
    .model = sc->model, .hw = sc->hw->name, .planner = planner,
    .allocator = allocator, .budget = budget, .program = prog, .result = r,
    .plan_note = note, .metrics = metrics, .n_metrics = n_metrics,
    .plan_wall_s = plan_wall, .sim_wall_s = sim_wall,
    .plan_simulations = plan_sims,
  };
  int rc;

  *sum = (ooc_summary){ 0 };
  if ((rc = ooc_summary_fill(sum, &src, err)) < 0)
    return rc;
  if (want_baseline && (rc = ooc_scenario_add_baseline(sc, sum, err)) < 0)
    ooc_summary_fini(sum);
  return rc;
}

int
ooc_scenario_add_baseline(ooc_scenario *sc, ooc_summary *sum, ooc_err *err)
{
  double incore_s, compute_s;
  int rc;

  if ((rc = ooc_scenario_baseline(sc, &incore_s, &compute_s, err)) < 0)
    return rc;
  ooc_summary_set_baseline(sum, incore_s, compute_s,
                           ooc_scenario_lower_bound(sc, sum->budget_bytes,
                                                    compute_s));
  return OOC_OK;
}

/* No plan can fit budget: the working set of lv->max_step (persistent
 * bytes + the step's own) exceeds it. Fill sum as an INFEASIBLE result
 * whose oom object names that step and the shortfall: requested = the
 * step's bytes, live = reserved = the persistent bytes, largest free =
 * what the budget leaves beside them, so requested - largest_free is
 * exactly the excess (docs/lower-bound.md, "Budget"). */
static int
no_fit_summary(ooc_scenario *sc, const char *planner, const char *allocator,
               uint64_t budget, int want_baseline, ooc_summary *sum,
               ooc_err *err)
{
  const ooc_liveness *lv = sc->lv;
  ooc_program empty;
  ooc_sim_result r = { .feasible = 0 };
  char step[160], b1[32], b2[32], b3[32], b4[32];
  uint64_t need = lv->persistent_bytes + lv->max_step_bytes;
  int rc;

  ooc_step_name(lv, lv->max_step, step, sizeof step);
  r.oom = (ooc_oom){
    .instr = -1, .tensor = -1,
    .layer = lv->max_step >= 0 && lv->max_step < lv->n_steps
                 ? lv->steps[lv->max_step].layer : -1,
    .requested_bytes = lv->max_step_bytes,
    .live_bytes = lv->persistent_bytes,
    .reserved_bytes = lv->persistent_bytes,
    .largest_free_bytes = budget > lv->persistent_bytes
                              ? budget - lv->persistent_bytes : 0,
  };
  snprintf(r.oom.reason, sizeof r.oom.reason,
           "working set %s (persistent %s + step %s) exceeds the budget "
           "by %s: no plan can fit",
           ooc_fmt_bytes(need, b1, sizeof b1),
           ooc_fmt_bytes(lv->persistent_bytes, b2, sizeof b2),
           ooc_fmt_bytes(lv->max_step_bytes, b3, sizeof b3),
           ooc_fmt_bytes(need > budget ? need - budget : 0, b4, sizeof b4));
  ooc_program_init(&empty);
  rc = fill_summary(sc, planner, allocator, budget, &empty, &r, "", NULL, 0,
                    0, 0, 0,
                    want_baseline, sum, err);
  ooc_program_fini(&empty);
  if (rc < 0)
    return rc;
  free(sum->oom_op);
  if ((sum->oom_op = strdup(step)) == NULL) {
    ooc_summary_fini(sum);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  return OOC_OK;
}

const char *
ooc_scenario_alloc_spec(const ooc_scenario_spec *spec)
{
  return spec->allocator != NULL ? spec->allocator : "caching";
}

int
ooc_scenario_check_allocator(const char *spec, ooc_err *err)
{
  const char *opts = NULL;
  const ooc_allocator_type *t = ooc_allocator_find(spec, &opts, err);
  /* Small and cheap: the values checked do not depend on the budget. */
  ooc_alloc_config cfg = { .budget = (uint64_t)1 << 30, .n_handles = 1,
                           .options = opts };
  void *state;
  int rc;

  if (t == NULL)
    return err != NULL && err->code != 0 ? err->code : OOC_ENOTFOUND;
  if ((state = calloc(1, t->state_size > 0 ? t->state_size : 1)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  if ((rc = t->init(state, &cfg, err)) == OOC_OK)
    t->fini(state);
  free(state);
  return rc;
}

int
ooc_scenario_lookup(const ooc_scenario_spec *spec,
                    const ooc_planner_type **t, const ooc_allocator_type **a,
                    const char **alloc_opts, ooc_err *err)
{
  if (t != NULL) {
    if (spec->planner == NULL)
      return ooc_err_set(err, OOC_EINVAL, "missing -p PLANNER");
    if ((*t = ooc_planner_find(spec->planner, err)) == NULL)
      return ooc_err_prefix(err, OOC_ENOTFOUND, "-p: ");
  }
  if ((*a = ooc_allocator_find(ooc_scenario_alloc_spec(spec), alloc_opts,
                               err)) == NULL)
    return ooc_err_prefix(err, OOC_ENOTFOUND, "--allocator: ");
  if (spec->allocator != NULL &&
      ooc_scenario_check_allocator(spec->allocator, err) < 0)
    return ooc_err_prefix(err, OOC_EINVAL, "--allocator: ");
  return OOC_OK;
}

/* With --steady, iterations up to OOC_SIM_MAX_ITERATIONS in all, or
 * --iterations N when that is more (0: no more than asked). */
static int
steady_max(const ooc_scenario_spec *spec)
{
  if (!spec->steady)
    return 0;
  return spec->iterations > OOC_SIM_MAX_ITERATIONS ? spec->iterations
                                                   : OOC_SIM_MAX_ITERATIONS;
}

static int
run_in(ooc_scenario *sc, const ooc_scenario_spec *spec, int want_baseline,
       ooc_summary *sum, ooc_scenario_out *out, ooc_err *err)
{
  ooc_plansim job = {
    .model = sc->model, .hw = sc->hw, .costs = sc->costs, .live = sc->lv,
    .opts = spec->opts, .n_opts = spec->n_opts,
    .iterations = spec->iterations > 0 ? spec->iterations
                                       : OOC_PLANSIM_ITERATIONS,
    .max_iterations = steady_max(spec),
    .trace = out != NULL ? out->trace : NULL,
    .layer_algo = spec->layer_algo,
  };
  ooc_plansim_result res;
  ooc_program prog;
  int rc;

  *sum = (ooc_summary){ 0 };
  rc = ooc_scenario_lookup(spec, &job.planner, &job.allocator,
                           &job.allocator_options, err);
  if (rc < 0)
    return rc;
  job.budget = spec->budget != 0 ? spec->budget : sc->hw->mem_usable;
  if (!spec->budget_any &&
      ooc_scenario_check_budget_size(sc, job.budget, err) < 0)
    return ooc_err_prefix(err, OOC_EINVAL, "--budget: ");
  if (((job.planner->flags & OOC_PLANNER_OFFLOAD)
           ? ooc_plan_check_budget_offload(sc->lv, job.budget, err)
           : ooc_plan_check_budget(sc->lv, job.budget, err)) < 0) {
    /* A budget the user chose below the working set is bad input; the
     * profile's own memory too small for this batch is a result, and so
     * is a search's probe (budget_any: minbudget's), where an offload
     * planner's working set may lie above the others' (two staging
     * buffers of the largest layer can outweigh what offload takes off
     * the device: vgg16 with plain SGD). */
    if (spec->budget != 0 && !spec->budget_any)
      return ooc_err_prefix(err, OOC_EINVAL, "--budget: ");
    ooc_err_clear(err);
    return no_fit_summary(sc, job.planner->name,
                          ooc_scenario_alloc_spec(spec), job.budget,
                          want_baseline, sum, err);
  }
  ooc_program_init(&prog);
  if ((rc = ooc_plansim_run(&job, &prog, &res, err)) < 0)
    goto done;
  /* What a plan file of it would have to pass to be replayed or
   * executed: a program the executors would refuse is no result. */
  if ((rc = ooc_kernels_check(sc->model, &prog, err)) < 0) {
    rc = ooc_err_prefix(err, rc, "planner '%s': its program: ",
                        job.planner->name);
    goto done;
  }
  if ((rc = fill_summary(sc, job.planner->name, ooc_scenario_alloc_spec(spec),
                         job.budget, &prog, &res.sim, res.note, res.metrics,
                         res.n_metrics,
                         res.plan_wall_s, res.sim_wall_s, res.plan_sims,
                         want_baseline, sum,
                         err)) < 0)
    goto done;
  if (out != NULL && out->program != NULL) {
    ooc_program_fini(out->program);
    *out->program = prog;
    ooc_program_init(&prog);
  }
done:
  ooc_program_fini(&prog);
  return rc;
}

int
ooc_scenario_run_in(ooc_scenario *sc, const ooc_scenario_spec *spec,
                    ooc_summary *sum, ooc_scenario_out *out, ooc_err *err)
{
  return run_in(sc, spec, 1, sum, out, err);
}

int
ooc_scenario_probe(ooc_scenario *sc, const ooc_scenario_spec *spec,
                   ooc_summary *sum, ooc_err *err)
{
  return run_in(sc, spec, 0, sum, NULL, err);
}

/* Hand the model and profile to the caller when asked (out->model/hw). */
static void
give_away(ooc_scenario *sc, ooc_scenario_out *out)
{
  if (out == NULL)
    return;
  if (out->model != NULL) {
    *out->model = sc->model;
    sc->model = NULL;
  }
  if (out->hw != NULL) {
    *out->hw = sc->hw;
    sc->hw = NULL;
  }
}

int
ooc_scenario_run(const ooc_scenario_spec *spec, ooc_summary *sum,
                 ooc_scenario_out *out, ooc_err *err)
{
  ooc_scenario *sc;
  int rc;

  *sum = (ooc_summary){ 0 };
  if ((rc = ooc_scenario_open(spec, &sc, err)) < 0)
    return rc;
  rc = run_in(sc, spec, 1, sum, out, err);
  if (rc == OOC_OK)
    give_away(sc, out);
  ooc_scenario_close(sc);
  return rc;
}

int
ooc_scenario_run_program(const ooc_scenario_spec *spec,
                         const ooc_program *prog, const char *plan_note,
                         ooc_summary *sum, ooc_scenario_out *out,
                         ooc_err *err)
{
  ooc_scenario *sc = NULL;
  const ooc_allocator_type *a;
  const char *aopts;
  ooc_sim *sim = NULL;
  ooc_sim_result r;
  ooc_sim_config cfg;
  uint64_t budget;
  double t0, sim_wall;
  int rc;

  *sum = (ooc_summary){ 0 };
  if ((rc = ooc_scenario_lookup(spec, NULL, &a, &aopts, err)) < 0)
    return rc;
  if ((rc = ooc_scenario_open(spec, &sc, err)) < 0)
    return rc;
  if (prog->model_fingerprint != sc->model->fingerprint) {
    rc = ooc_err_set(err, OOC_EINVAL, "plan was made for a different model "
                     "(fingerprint %016llx, '%s' at batch %lld has %016llx)",
                     (unsigned long long)prog->model_fingerprint,
                     sc->model->name, (long long)sc->model->batch,
                     (unsigned long long)sc->model->fingerprint);
    goto done;
  }
  /* A program says how many layers it was lowered for (0: not said); a
   * file's count that the model does not have is a hand edit. */
  if (prog->n_layers != 0 && prog->n_layers != sc->model->n_layers) {
    rc = ooc_err_set(err, OOC_EINVAL, "n_layers: the plan is for %d layers, "
                     "'%s' at batch %lld has %d", (int)prog->n_layers,
                     sc->model->name, (long long)sc->model->batch,
                     sc->model->n_layers);
    goto done;
  }
  if ((rc = ooc_plan_check_tensors(prog, sc->lv, err)) < 0)
    goto done;
  budget = spec->budget != 0 ? spec->budget : sc->hw->mem_usable;
  if (!spec->budget_any &&
      (rc = ooc_scenario_check_budget_size(sc, budget, err)) < 0) {
    ooc_err_prefix(err, rc, "%s: ",
                   spec->budget_field ? spec->budget_field : "--budget");
    goto done;
  }
  {
    /* A program that runs optimizer steps on the CPU is checked against
     * the persistent state offload leaves, and so is one an offload
     * planner made, as its planning was (ooc_planner_run): its plan
     * file's replay then reports what `plan` did (joint's plan may keep
     * every layer on the device and not fit), not a refusal. */
    const ooc_planner_type *pt = spec->planner != NULL
                                     ? ooc_planner_find(spec->planner, NULL)
                                     : NULL;
    int32_t i;
    int off = pt != NULL && (pt->flags & OOC_PLANNER_OFFLOAD);
    for (i = 0; i < prog->n_instr && !off; i++)
      off = prog->instr[i].kind == OOC_I_HOST;
    if ((rc = off ? ooc_plan_check_budget_offload(sc->lv, budget, err)
                  : ooc_plan_check_budget(sc->lv, budget, err)) < 0) {
      /* No plan can fit what the user asked for: name where it came
       * from (the profile's own memory below it is a result upstream). */
      if (spec->budget != 0)
        ooc_err_prefix(err, rc, "%s: ", spec->budget_field
                                            ? spec->budget_field
                                            : "--budget");
      goto done;
    }
  }
  /* Every COMPUTE lists what its kernel reads and writes, as the
   * executor requires (ir/kernel.h): a hand-edited plan the hardware
   * would refuse is not simulated either. */
  if ((rc = ooc_program_validate(prog, err)) < 0 ||
      (rc = ooc_kernels_check(sc->model, prog, err)) < 0)
    goto done;
  cfg = (ooc_sim_config){
    .model = sc->model, .hw = sc->hw, .costs = sc->costs, .allocator = a,
    .allocator_options = aopts, .budget = budget, .chunk_bytes = 0,
    .iterations = spec->iterations > 0 ? spec->iterations
                                       : OOC_PLANSIM_ITERATIONS,
    .max_iterations = steady_max(spec),
  };
  if ((rc = ooc_sim_alloc(&cfg, &sim, err)) < 0)
    goto done;
  t0 = ooc_wall_s();
  if ((rc = ooc_sim_run_detail(sim, prog, &r,
                               out != NULL ? out->trace : NULL,
                               out != NULL ? out->detail : NULL, err)) < 0)
    goto done;
  sim_wall = ooc_wall_s() - t0;
  if ((rc = fill_summary(sc, spec->planner != NULL ? spec->planner : "",
                         ooc_scenario_alloc_spec(spec), budget, prog, &r,
                         plan_note, NULL, 0, 0, sim_wall, 0,
                         1, sum, err)) < 0)
    goto done;
  if (out != NULL && out->program != NULL) {
    ooc_program_fini(out->program);
    ooc_program_init(out->program);
  }
  give_away(sc, out);
done:
  ooc_sim_free(sim);
  ooc_scenario_close(sc);
  return rc;
}

int
ooc_scenario_check_budget_size(const ooc_scenario *sc, uint64_t budget,
                               ooc_err *err)
{
  char b1[32], b2[32];

  if (budget <= sc->hw->mem_total)
    return OOC_OK;
  return ooc_err_set(err, OOC_EINVAL, "budget %s exceeds the %s of "
                     "profile '%s' (to emulate a larger device, raise "
                     "memory.total_GiB and memory.usable_GiB with --hw-set)",
                     ooc_fmt_bytes(budget, b1, sizeof b1),
                     ooc_fmt_bytes(sc->hw->mem_total, b2, sizeof b2),
                     sc->hw->name);
}

int
ooc_scenario_check_budget(const ooc_scenario *sc, uint64_t budget,
                          ooc_err *err)
{
  return ooc_scenario_check_budget_for(sc, budget, 0, err);
}

int
ooc_scenario_check_budget_for(const ooc_scenario *sc, uint64_t budget,
                              int offload, ooc_err *err)
{
  int rc;

  if (budget == 0)
    return OOC_OK;      /* the default: too small is a result */
  if ((rc = ooc_scenario_check_budget_size(sc, budget, err)) < 0)
    return rc;
  return offload ? ooc_plan_check_budget_offload(sc->lv, budget, err)
                 : ooc_plan_check_budget(sc->lv, budget, err);
}

int
ooc_scenario_no_fit(ooc_scenario *sc, const ooc_scenario_spec *spec,
                    const char *reason, ooc_summary *sum, ooc_err *err)
{
  const ooc_planner_type *t;
  const ooc_allocator_type *a;
  int rc;

  *sum = (ooc_summary){ 0 };
  if ((rc = ooc_scenario_lookup(spec, &t, &a, NULL, err)) < 0)
    return rc;
  rc = no_fit_summary(sc, t->name, ooc_scenario_alloc_spec(spec),
                      spec->budget != 0 ? spec->budget : sc->hw->mem_usable,
                      1, sum, err);
  if (rc == OOC_OK && reason != NULL)
    snprintf(sum->oom.reason, sizeof sum->oom.reason, "%s", reason);
  return rc;
}
