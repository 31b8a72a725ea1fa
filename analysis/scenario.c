/* analysis/scenario.c — one scenario from loading to the summary object
 * (scenario.h): model + profile + costs + liveness, the planner through
 * ooc_planner_run, the simulator, the in-core baseline on an unlimited
 * device, and the lower bound of docs/lower-bound.md.
 *
 * Ownership: ooc_scenario owns the model, profile, costs and liveness it
 * loaded; summaries own their strings (ooc_summary_fini). Cost: one planner
 * run and one simulation per ooc_scenario_run_in, plus one in-core
 * simulation per opened scenario (cached); the lower bound is O(acts +
 * steps). No static state: scenarios may run on several threads at once.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scenario.h"
#include "planners/registry.h"
#include "sim/cost.h"
#include "alloc/alloc.h"
#include "base/util.h"

/* The "unlimited" device of the in-core baseline: large enough for any
 * model, small enough that allocator arithmetic cannot overflow. */
#define UNLIMITED_BYTES ((uint64_t)1 << 62)
#define DEFAULT_ITERATIONS 2

struct ooc_scenario {
  ooc_model *model;
  ooc_hw *hw;
  ooc_costs *costs;
  ooc_liveness *lv;
  int have_baseline;
  double incore_s;        /* 0 when the baseline is infeasible */
  double compute_s;
};

void
ooc_summary_fini(ooc_summary *s)
{
  if (s == NULL)
    return;
  free(s->model);
  free(s->hw);
  free(s->planner);
  free(s->allocator);
  free(s->oom_op);
  free(s->plan_note);
  *s = (ooc_summary){ 0 };
}

void
ooc_summary_clear_timing(ooc_summary *s)
{
  s->sim_wall_s = 0;
  s->plan_wall_s = 0;
}

static char *
dup_str(const char *s)
{
  return strdup(s != NULL ? s : "");
}

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
  };
  if ((rc = ooc_model_load(spec->model, &mo, &sc->model, err)) < 0)
    goto fail;
  if ((rc = ooc_hw_load(spec->hw, spec->hw_sets, spec->n_hw_sets, &sc->hw,
                        err)) < 0)
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

/* Plan with planner t and simulate it with allocator a under budget.
 * prog receives the lowered program; note the planner's note. */
static int
plan_and_simulate(ooc_scenario *sc, const ooc_planner_type *t,
                  const ooc_allocator_type *a, const char *aopts,
                  uint64_t budget,
                  const ooc_kv *opts, int n_opts, int iterations,
                  ooc_program *prog, char *note, size_t note_n,
                  ooc_sim_result *r, ooc_trace *trace, double *plan_wall,
                  double *sim_wall, ooc_err *err)
{
  ooc_sim *sim = NULL;
  ooc_program scratch;
  ooc_plan pl;
  ooc_planner_ctx ctx;
  ooc_sim_config cfg = {
    .model = sc->model, .hw = sc->hw, .costs = sc->costs, .allocator = a,
    .allocator_options = aopts, .budget = budget, .chunk_bytes = 0,
    .iterations = iterations,
  };
  int plan_inited = 0, rc;
  double t0;

  ooc_program_init(&scratch);
  if ((rc = ooc_sim_alloc(&cfg, &sim, err)) < 0)
    goto done;
  if ((rc = ooc_plan_init(&pl, sc->lv, err)) < 0)
    goto done;
  plan_inited = 1;
  ctx = (ooc_planner_ctx){
    .model = sc->model, .hw = sc->hw, .costs = sc->costs, .live = sc->lv,
    .allocator = a, .allocator_options = aopts, .budget = budget,
    .chunk_bytes = cfg.chunk_bytes,
    .opts = opts, .n_opts = n_opts, .sim = sim, .scratch = &scratch,
  };
  t0 = ooc_wall_s();
  if ((rc = ooc_planner_run(t, &ctx, &pl, prog, err)) < 0)
    goto done;
  if (plan_wall != NULL)
    *plan_wall = ooc_wall_s() - t0;
  if (note != NULL)
    snprintf(note, note_n, "%s", pl.note);
  t0 = ooc_wall_s();
  rc = ooc_sim_run(sim, prog, r, trace, err);
  if (sim_wall != NULL)
    *sim_wall = ooc_wall_s() - t0;
done:
  if (plan_inited)
    ooc_plan_fini(&pl);
  ooc_program_fini(&scratch);
  ooc_sim_free(sim);
  return rc;
}

int
ooc_scenario_baseline(ooc_scenario *sc, double *incore_s, double *compute_s,
                      ooc_err *err)
{
  const ooc_planner_type *t;
  ooc_program prog;
  ooc_sim_result r;
  double costs_s;
  int rc;

  if (!sc->have_baseline) {
    if ((t = ooc_planner_find("incore", err)) == NULL)
      return ooc_err_prefix(err, OOC_ENOTFOUND, "in-core baseline: ");
    ooc_program_init(&prog);
    rc = plan_and_simulate(sc, t, &ooc_alloc_ideal, NULL, UNLIMITED_BYTES,
                           NULL, 0,
                           DEFAULT_ITERATIONS, &prog, NULL, 0, &r, NULL, NULL,
                           NULL, err);
    ooc_program_fini(&prog);
    if (rc < 0)
      return ooc_err_prefix(err, rc, "in-core baseline: ");
    /* The compute stream must run every forward and backward kernel and
     * the update once; take the smaller of the cost table's sum and what
     * the in-core run kept the compute stream busy, so the bound holds
     * whatever the engine adds or omits. */
    costs_s = (double)(sc->costs->total_fwd_ns + sc->costs->total_bwd_ns +
                       sc->costs->update_ns) * 1e-9;
    sc->compute_s = costs_s;
    if (r.feasible) {
      sc->incore_s = (double)r.iteration_ns * 1e-9;
      if ((double)r.compute_busy_ns * 1e-9 < costs_s)
        sc->compute_s = (double)r.compute_busy_ns * 1e-9;
    }
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
  const ooc_liveness *lv = sc->lv;
  const ooc_hw *hw = sc->hw;
  double *cross, live = 0, peak = 0, avail, excess, r = INFINITY, beta;
  double h2d, d2h;
  uint64_t fixed;
  int32_t a, s;

  /* L(s): bytes of activations produced at or before step s and used
   * after it, by a difference array over the steps. */
  cross = calloc((size_t)lv->n_steps + 1, sizeof *cross);
  if (cross == NULL)
    return compute_s;
  for (a = 0; a < lv->n_acts; a++) {
    int32_t layer = lv->act_layer[a];
    int32_t p = lv->fwd_step[layer];
    int32_t last = lv->act_last[a];
    double bytes = (double)lv->act_bytes[a];
    if (a == 0 || p < 0 || bytes <= 0)
      continue;                 /* the input batch: see below */
    if (sc->costs->fwd_ns[layer] > 0) {
      double per_byte = (double)sc->costs->fwd_ns[layer] * 1e-9 / bytes;
      if (per_byte < r)
        r = per_byte;
    }
    if (last <= p)
      continue;
    cross[p] += bytes;
    cross[last] -= bytes;
  }
  for (s = 0; s < lv->n_steps; s++) {
    double during, shared = 0;
    int32_t k;

    live += cross[s];
    if (live > peak)
      peak = live;
    /* While step s runs, its whole working set (step_bytes) is resident
     * beside the activations of L(s) it does not touch. */
    for (k = 0; k < lv->step_nacts[s]; k++) {
      a = lv->step_acts[lv->step_first[s] + k];
      if (a > 0 && lv->fwd_step[lv->act_layer[a]] >= 0 &&
          lv->fwd_step[lv->act_layer[a]] <= s && lv->act_last[a] > s)
        shared += (double)lv->act_bytes[a];
    }
    during = live - shared + (double)lv->step_bytes[s];
    if (during > peak)
      peak = during;
  }
  free(cross);

  /* The input batch (act 0) is in persistent_bytes but may be swapped
   * out: give its room to the activations and ignore its own traffic. */
  fixed = lv->persistent_bytes;
  if (lv->n_acts > 0 && lv->act_bytes[0] <= fixed)
    fixed -= lv->act_bytes[0];
  avail = budget > fixed ? (double)(budget - fixed) : 0.0;
  excess = peak - avail;
  h2d = fmax(hw->h2d_Bps, hw->h2d_pageable_Bps);
  d2h = fmax(hw->d2h_Bps, hw->d2h_pageable_Bps);
  beta = hw->copy_engines >= 2 ? fmin(h2d, d2h)
                               : 1.0 / (1.0 / h2d + 1.0 / d2h);
  return ooc_lower_bound_combine(compute_s, excess, r, beta);
}

double
ooc_lower_bound_combine(double compute_s, double excess_bytes,
                        double recompute_s_per_byte, double link_Bps)
{
  double x, r = recompute_s_per_byte;

  if (excess_bytes <= 0 || excess_bytes / link_Bps <= compute_s)
    return compute_s;
  if (!isfinite(r))
    return excess_bytes / link_Bps;
  /* Swap x bytes, recompute the rest: min over x of
   * max(C + r (E - x), x / beta), reached where the two meet. */
  x = (compute_s + r * excess_bytes) / (1.0 / link_Bps + r);
  return x / link_Bps;
}

/* Name the operation behind an OOM: the first kernel or copy its stream
 * issues at or after the failed ALLOC ("fwd conv1", "h2d res2a"). */
static char *
oom_op_name(const ooc_model *m, const ooc_program *p, int32_t at)
{
  char buf[256];
  int32_t i;
  const ooc_instr *in;

  if (at < 0 || at >= p->n_instr)
    return dup_str("");
  for (i = at; i < p->n_instr; i++) {
    in = &p->instr[i];
    if (in->stream != p->instr[at].stream)
      continue;
    if (in->kind == OOC_I_COMPUTE || in->kind == OOC_I_H2D ||
        in->kind == OOC_I_D2H)
      break;
  }
  if (i == p->n_instr)
    in = &p->instr[at];
  if (in->kind == OOC_I_COMPUTE)
    snprintf(buf, sizeof buf, "%s %s", ooc_phase_name((ooc_phase)in->phase),
             in->layer >= 0 && in->layer < m->n_layers
                 ? m->layers[in->layer].name : "-");
  else
    snprintf(buf, sizeof buf, "%s %s",
             ooc_instr_kind_name((ooc_instr_kind)in->kind),
             in->layer >= 0 && in->layer < m->n_layers
                 ? m->layers[in->layer].name : "-");
  return dup_str(buf);
}

/* keep / swap / recompute per activation storage layer, from what the
 * program does: a D2H of the tensor is a swap, a RECOMP kernel writing it a
 * recompute. Counting the program (not the plan) gives the same figures
 * for a one-shot run and for a plan reloaded from plan.json. */
static int
count_actions(const ooc_model *m, const ooc_program *p, int counts[3])
{
  uint8_t *flag;
  int32_t i, j;
  enum { IS_ACT = 1, SWAPPED = 2, RECOMPUTED = 4 };

  counts[0] = counts[1] = counts[2] = 0;
  flag = calloc((size_t)m->n_layers + 1, 1);
  if (flag == NULL)
    return OOC_ENOMEM;
  for (i = 0; i < p->n_tensors; i++)
    if (p->tensors[i].kind == OOC_T_ACT && p->tensors[i].layer >= 0 &&
        p->tensors[i].layer < m->n_layers)
      flag[p->tensors[i].layer] |= IS_ACT;
  for (i = p->prologue_end; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    if (in->kind == OOC_I_D2H && in->tensor >= 0 &&
        in->tensor < p->n_tensors &&
        p->tensors[in->tensor].kind == OOC_T_ACT)
      flag[p->tensors[in->tensor].layer] |= SWAPPED;
    if (in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_RECOMP)
      for (j = 0; j < in->n_args; j++) {
        int32_t arg = p->args[in->arg_first + j];
        int32_t t = OOC_ARG_TENSOR(arg);
        if ((arg & OOC_ARG_WRITE) && t >= 0 && t < p->n_tensors &&
            p->tensors[t].kind == OOC_T_ACT)
          flag[p->tensors[t].layer] |= RECOMPUTED;
      }
  }
  for (i = 0; i < m->n_layers; i++) {
    if (!(flag[i] & IS_ACT))
      continue;
    if (flag[i] & RECOMPUTED)
      counts[OOC_RECOMPUTE]++;
    else if (flag[i] & SWAPPED)
      counts[OOC_SWAP]++;
    else
      counts[OOC_KEEP]++;
  }
  free(flag);
  return OOC_OK;
}

/* Fill sum from a simulation result. */
static int
fill_summary(ooc_scenario *sc, const char *planner, const char *allocator,
             uint64_t budget, const ooc_program *prog, const ooc_sim_result *r,
             const char *note, double plan_wall, double sim_wall,
             int want_baseline, ooc_summary *sum, ooc_err *err)
{
  const ooc_model *m = sc->model;
  double incore = 0, compute = 0;
  int rc, i;

  *sum = (ooc_summary){ 0 };
  if (want_baseline &&
      (rc = ooc_scenario_baseline(sc, &incore, &compute, err)) < 0)
    return rc;
  sum->model = dup_str(m->name);
  sum->hw = dup_str(sc->hw->name);
  sum->planner = dup_str(planner);
  sum->allocator = dup_str(allocator);
  sum->plan_note = dup_str(note);
  sum->oom_op = r->feasible ? dup_str("") : oom_op_name(m, prog, r->oom.instr);
  if (sum->model == NULL || sum->hw == NULL || sum->planner == NULL ||
      sum->allocator == NULL || sum->plan_note == NULL || sum->oom_op == NULL)
    goto nomem;
  sum->batch = m->batch;
  sum->dtype = m->dtype;
  sum->budget_bytes = budget;
  sum->feasible = r->feasible;
  if (!r->feasible)
    sum->oom = r->oom;
  sum->iteration_s = r->feasible ? (double)r->iteration_ns * 1e-9 : 0;
  sum->samples_per_s = r->feasible && r->iteration_ns > 0
                           ? (double)m->batch / sum->iteration_s : 0;
  sum->incore_iteration_s = incore;
  sum->slowdown = r->feasible && incore > 0 ? sum->iteration_s / incore : 0;
  sum->compute_s = compute;
  sum->lower_bound_s = want_baseline
                           ? ooc_scenario_lower_bound(sc, budget, compute) : 0;
  sum->peak_allocated_bytes = r->peak_allocated;
  sum->peak_reserved_bytes = r->peak_reserved;
  sum->peak_host_pinned_bytes = r->peak_host_pinned;
  sum->fragmentation = r->fragmentation;
  sum->h2d_bytes = r->h2d_bytes;
  sum->d2h_bytes = r->d2h_bytes;
  sum->recompute_flops = r->recompute_flops;
  sum->compute_busy_s = (double)r->compute_busy_ns * 1e-9;
  sum->h2d_busy_s = (double)r->h2d_busy_ns * 1e-9;
  sum->d2h_busy_s = (double)r->d2h_busy_ns * 1e-9;
  for (i = 0; i < OOC_STALL_COUNT; i++)
    sum->stall_s[i] = (double)r->stall_ns[i] * 1e-9;
  sum->alloc_s = (double)r->alloc_ns * 1e-9;
  if ((rc = count_actions(m, prog, sum->counts)) < 0)
    goto nomem;
  sum->events = r->events;
  sum->sim_wall_s = sim_wall;
  sum->plan_wall_s = plan_wall;
  return OOC_OK;
nomem:
  ooc_summary_fini(sum);
  return ooc_err_set(err, OOC_ENOMEM, "out of memory");
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
  rc = fill_summary(sc, planner, allocator, budget, &empty, &r, "", 0, 0,
                    want_baseline, sum, err);
  ooc_program_fini(&empty);
  if (rc < 0)
    return rc;
  free(sum->oom_op);
  if ((sum->oom_op = dup_str(step)) == NULL) {
    ooc_summary_fini(sum);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  return OOC_OK;
}

/* The allocator spec as given ("caching" when none): what summaries
 * name. */
static const char *
alloc_spec(const ooc_scenario_spec *spec)
{
  return spec->allocator != NULL ? spec->allocator : "caching";
}

/* The planner (when t is not NULL) and the allocator of spec, with the
 * allocator's options (pointing into spec->allocator, or NULL). */
static int
lookup(const ooc_scenario_spec *spec, const ooc_planner_type **t,
       const ooc_allocator_type **a, const char **opts, ooc_err *err)
{
  ooc_err e;

  if (t != NULL) {
    if (spec->planner == NULL)
      return ooc_err_set(err, OOC_EINVAL, "missing -p PLANNER");
    if ((*t = ooc_planner_find(spec->planner, err)) == NULL)
      return ooc_err_prefix(err, OOC_ENOTFOUND, "-p: ");
  }
  ooc_err_clear(&e);
  if ((*a = ooc_allocator_find(alloc_spec(spec), opts, &e)) == NULL) {
    ooc_err_set(err, e.code, "%s", e.msg);
    return ooc_err_prefix(err, e.code, "--allocator: ");
  }
  return OOC_OK;
}

static int
run_in(ooc_scenario *sc, const ooc_scenario_spec *spec, int want_baseline,
       ooc_summary *sum, ooc_scenario_out *out, ooc_err *err)
{
  const ooc_planner_type *t;
  const ooc_allocator_type *a;
  const char *aopts;
  ooc_program prog;
  ooc_sim_result r;
  uint64_t budget;
  char note[sizeof ((ooc_plan *)0)->note] = "";
  double plan_wall = 0, sim_wall = 0;
  int rc;

  *sum = (ooc_summary){ 0 };
  if ((rc = lookup(spec, &t, &a, &aopts, err)) < 0)
    return rc;
  budget = spec->budget != 0 ? spec->budget : sc->hw->mem_usable;
  if (ooc_plan_check_budget(sc->lv, budget, err) < 0) {
    /* A budget the user chose below the working set is bad input; the
     * profile's own memory too small for this batch is a result. */
    if (spec->budget != 0)
      return ooc_err_prefix(err, OOC_EINVAL, "--budget: ");
    ooc_err_clear(err);
    return no_fit_summary(sc, t->name, alloc_spec(spec), budget,
                          want_baseline, sum, err);
  }
  ooc_program_init(&prog);
  rc = plan_and_simulate(sc, t, a, aopts, budget, spec->opts, spec->n_opts,
                         spec->iterations > 0 ? spec->iterations
                                              : DEFAULT_ITERATIONS,
                         &prog, note, sizeof note, &r,
                         out != NULL ? out->trace : NULL, &plan_wall,
                         &sim_wall, err);
  if (rc < 0)
    goto done;
  if ((rc = fill_summary(sc, t->name, alloc_spec(spec), budget, &prog, &r,
                         note,
                         plan_wall, sim_wall, want_baseline, sum, err)) < 0)
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
  if ((rc = lookup(spec, NULL, &a, &aopts, err)) < 0)
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
  budget = spec->budget != 0 ? spec->budget : sc->hw->mem_usable;
  if ((rc = ooc_plan_check_budget(sc->lv, budget, err)) < 0)
    goto done;          /* no plan can fit what the user asked for */
  if ((rc = ooc_program_validate(prog, err)) < 0)
    goto done;
  cfg = (ooc_sim_config){
    .model = sc->model, .hw = sc->hw, .costs = sc->costs, .allocator = a,
    .allocator_options = aopts, .budget = budget, .chunk_bytes = 0,
    .iterations = spec->iterations > 0 ? spec->iterations
                                       : DEFAULT_ITERATIONS,
  };
  if ((rc = ooc_sim_alloc(&cfg, &sim, err)) < 0)
    goto done;
  t0 = ooc_wall_s();
  if ((rc = ooc_sim_run(sim, prog, &r, out != NULL ? out->trace : NULL,
                        err)) < 0)
    goto done;
  sim_wall = ooc_wall_s() - t0;
  if ((rc = fill_summary(sc, spec->planner != NULL ? spec->planner : "",
                         alloc_spec(spec), budget, prog, &r, plan_note, 0,
                         sim_wall,
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

/* Feasibility of batch b: 1 feasible (sum filled when want_sum), 0 not
 * (the working set exceeds the budget, the batch overflows, or the plan
 * runs out of memory), < 0 an error. */
static int
try_batch(const ooc_scenario_spec *spec, int64_t b, int want_sum,
          ooc_summary *sum, ooc_err *err)
{
  ooc_scenario_spec s = *spec;
  ooc_scenario *sc = NULL;
  ooc_summary tmp;
  ooc_err e2 = { 0 };
  int rc, feasible;

  s.batch = b;
  rc = ooc_scenario_open(&s, &sc, &e2);
  if (rc == OOC_ERANGE)
    return 0;           /* bytes of the batch overflow: too large */
  if (rc < 0) {
    if (err != NULL)
      *err = e2;
    return rc;
  }
  if (ooc_plan_check_budget(sc->lv, spec->budget != 0 ? spec->budget
                                                      : sc->hw->mem_usable,
                            NULL) < 0) {
    ooc_scenario_close(sc);
    return 0;
  }
  rc = run_in(sc, &s, want_sum, &tmp, NULL, err);
  ooc_scenario_close(sc);
  if (rc < 0)
    return rc;
  feasible = tmp.feasible;
  if (want_sum && feasible)
    *sum = tmp;
  else
    ooc_summary_fini(&tmp);
  return feasible;
}

int
ooc_scenario_maxbatch(const ooc_scenario_spec *spec, int64_t *best,
                      ooc_summary *at_max, ooc_err *err)
{
  const ooc_planner_type *t;
  const ooc_allocator_type *a;
  const char *aopts;
  int64_t lo = 0, hi = 0, b = 1, mid;
  const int64_t cap = OOC_MAXBATCH_CAP;
  int rc;

  *best = 0;
  *at_max = (ooc_summary){ 0 };
  if ((rc = lookup(spec, &t, &a, &aopts, err)) < 0)
    return rc;
  /* Doubling: lo is the largest batch known to fit, hi the smallest known
   * not to (0: none yet). */
  while (b <= cap) {
    if ((rc = try_batch(spec, b, 0, NULL, err)) < 0)
      return rc;
    if (rc == 0) {
      hi = b;
      break;
    }
    lo = b;
    b *= 2;
  }
  if (hi == 0)
    hi = cap + 1;
  while (hi - lo > 1) {
    mid = lo + (hi - lo) / 2;
    if ((rc = try_batch(spec, mid, 0, NULL, err)) < 0)
      return rc;
    if (rc)
      lo = mid;
    else
      hi = mid;
  }
  *best = lo;
  if (lo == 0)
    return OOC_OK;
  if ((rc = try_batch(spec, lo, 1, at_max, err)) < 0)
    return rc;
  if (rc == 0)
    return ooc_err_set(err, OOC_EINVAL, "maxbatch: batch %lld fitted once "
                       "and not the second time (non-deterministic planner "
                       "%s?)", (long long)lo, t->name);
  return OOC_OK;
}

int
ooc_scenario_check_budget(const ooc_scenario *sc, uint64_t budget,
                          ooc_err *err)
{
  if (budget == 0)
    return OOC_OK;      /* the default: too small is a result */
  return ooc_plan_check_budget(sc->lv, budget, err);
}

int
ooc_scenario_no_fit(ooc_scenario *sc, const ooc_scenario_spec *spec,
                    ooc_summary *sum, ooc_err *err)
{
  const ooc_planner_type *t;
  const ooc_allocator_type *a;
  const char *aopts;
  int rc;

  *sum = (ooc_summary){ 0 };
  if ((rc = lookup(spec, &t, &a, &aopts, err)) < 0)
    return rc;
  return no_fit_summary(sc, t->name, alloc_spec(spec),
                        spec->budget != 0 ? spec->budget : sc->hw->mem_usable,
                        1, sum, err);
}
