/* analysis/validate.c — plan, simulate, execute and compare each planner
 * (validate.h), and the results object.
 *
 * Ownership: rows and their measures belong to the ooc_validate. Cost: see
 * validate.h; the comparisons are O(parameters) per row.
 */
#include "config.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/validate.h"
#include "analysis/summary.h"

void
ooc_validate_init(ooc_validate *v)
{
  memset(v, 0, sizeof *v);
}

void
ooc_validate_fini(ooc_validate *v)
{
  int i;

  if (v == NULL)
    return;
  for (i = 0; i < v->n_rows; i++)
    if (v->rows[i].m != NULL) {
      ooc_measure_fini(v->rows[i].m);
      free(v->rows[i].m);
    }
  free(v->rows);
  ooc_validate_init(v);
}

/* The kernel algorithms of prog's COMPUTEs, 2 per layer (forward, which
 * a recompute shares, and backward), into a new array; NULL when every
 * kernel runs its default (or out of memory: the check then falls back on
 * the plain reference, and says so by failing). */
static uint8_t *
layer_algos(const ooc_program *prog, int32_t n_layers)
{
  uint8_t *la;
  int32_t i;
  int any = 0;

  for (i = 0; i < prog->n_instr; i++)
    any |= prog->instr[i].kind == OOC_I_COMPUTE && prog->instr[i].algo != 0;
  if (!any || (la = calloc((size_t)n_layers * 2 + 2, 1)) == NULL)
    return NULL;
  for (i = 0; i < prog->n_instr; i++) {
    const ooc_instr *in = &prog->instr[i];
    if (in->kind == OOC_I_COMPUTE && in->layer >= 0 &&
        in->layer < n_layers && in->phase != OOC_PH_UPDATE)
      la[2 * in->layer + (in->phase == OOC_PH_BWD)] = in->algo;
  }
  return la;
}

/* Plan with spec's planner, then predict and measure the program into m;
 * *algos (when not NULL) receives layer_algos() of its program. */
static int
plan_and_measure(const ooc_scenario_spec *spec, const ooc_measure_config *mc,
                 ooc_measure *m, uint8_t **algos, ooc_err *err)
{
  ooc_summary plan_sum = { 0 };
  ooc_program prog;
  ooc_scenario_out out = { 0 };
  int rc;

  ooc_program_init(&prog);
  out.program = &prog;
  if ((rc = ooc_scenario_run(spec, &plan_sum, &out, err)) < 0)
    goto done;
  if (!plan_sum.feasible && prog.n_instr == 0) {
    /* No program: the budget is below a step's working set. */
    m->predicted = plan_sum;
    plan_sum = (ooc_summary){ 0 };
    rc = OOC_OK;
    goto done;
  }
  rc = ooc_measure_program(spec, &prog, plan_sum.plan_note, mc, m, err);
  if (rc == OOC_OK)
    m->predicted.plan_wall_s = plan_sum.plan_wall_s;
  if (rc == OOC_OK && algos != NULL)
    *algos = layer_algos(&prog, prog.n_layers);
done:
  ooc_summary_fini(&plan_sum);
  ooc_program_fini(&prog);
  return rc;
}

/* Compare a row's parameters with the reference's: the in-core plan, run
 * with the row's kernel algorithms when it changes them (same_algos), since
 * two algorithms sum in different orders and training amplifies that. */
static void
integrity(ooc_validate_row *r, const ooc_measure *m, const ooc_measure *ref,
          int same_algos)
{
  const char *with = same_algos ? ", run with the plan's kernel algorithms"
                                : "";
  uint64_t i, bad = 0, first = 0;
  double worst = 0;

  if (!r->feasible_predicted) {
    snprintf(r->integrity, sizeof r->integrity, "not run: the simulator "
             "predicts out of memory");
    r->integrity_ok = 0;
    return;
  }
  if (!r->feasible_measured) {
    snprintf(r->integrity, sizeof r->integrity, "not run to the end (out "
             "of memory)");
    r->integrity_ok = 0;
    return;
  }
  if (m->exec.verify_mismatches > 0) {
    snprintf(r->integrity, sizeof r->integrity, "%llu swapped tensor%s "
             "came back different: %.100s",
             (unsigned long long)m->exec.verify_mismatches,
             m->exec.verify_mismatches == 1 ? "" : "s",
             m->exec.verify_first);
    r->integrity_ok = 0;
    return;
  }
  if (ref == NULL || ref->params == NULL) {
    snprintf(r->integrity, sizeof r->integrity, "no in-core reference (it "
             "does not fit the profile)");
    r->integrity_ok = 1;
    return;
  }
  if (ref->n_params != m->n_params) {
    snprintf(r->integrity, sizeof r->integrity, "%llu parameter values, "
             "the reference has %llu", (unsigned long long)m->n_params,
             (unsigned long long)ref->n_params);
    r->integrity_ok = 0;
    return;
  }
  if (memcmp(m->params, ref->params, m->n_params * sizeof(float)) == 0) {
    snprintf(r->integrity, sizeof r->integrity, "weights and gradients "
             "bit-identical to the in-core plan's (%llu values)%s%s",
             (unsigned long long)m->n_params, with,
             m->exec.verify_checked > 0 ? ", swapped tensors verified" : "");
    r->integrity_ok = 1;
    return;
  }
  for (i = 0; i < m->n_params; i++) {
    double a = m->params[i], b = ref->params[i];
    double d = fabs(a - b) / (fabs(b) > 1e-30 ? fabs(b) : 1e-30);
    if (a != b) {
      if (bad++ == 0)
        first = i;
      if (d > worst)
        worst = d;
    }
  }
  if (r->counts[2] > 0 && worst <= OOC_VALIDATE_RECOMP_TOL) {
    snprintf(r->integrity, sizeof r->integrity, "within %g of the in-core "
             "plan's (recompute; worst %.3g, %llu values differ)%s",
             OOC_VALIDATE_RECOMP_TOL, worst, (unsigned long long)bad, with);
    r->integrity_ok = 1;
    return;
  }
  snprintf(r->integrity, sizeof r->integrity, "%llu of %llu values differ "
           "from the in-core plan's (first at %llu, worst relative %.3g)%s%s",
           (unsigned long long)bad, (unsigned long long)m->n_params,
           (unsigned long long)first, worst, with,
           r->counts[2] > 0 ? "" : "; a swap-only plan must be bit-identical");
  r->integrity_ok = 0;
}

static void
fill_row(ooc_validate_row *r, const ooc_measure *m)
{
  const ooc_summary *p = &m->predicted, *q = &m->measured;

  r->feasible_predicted = p->feasible;
  r->feasible_measured = p->feasible && m->exec.feasible;
  r->predicted_iteration_s = p->feasible ? p->iteration_s : 0;
  r->measured_iteration_s = r->feasible_measured ? q->iteration_s : 0;
  r->iteration_error = r->feasible_measured && q->iteration_s > 0
                           ? (q->iteration_s - p->iteration_s) /
                                 q->iteration_s
                           : 0;
  r->predicted_stall_s = (double)m->predicted_stall_ns * 1e-9;
  r->measured_stall_s = (double)m->measured_stall_ns * 1e-9;
  r->predicted_peak_reserved_bytes = p->peak_reserved_bytes;
  r->predicted_peak_allocated_bytes = p->peak_allocated_bytes;
  r->measured_peak_reserved_bytes = m->exec.peak_reserved;
  r->measured_peak_allocated_bytes = m->exec.peak_allocated;
  r->op_error_median = m->op_error_median;
  r->op_error_p95 = m->op_error_p95;
  memcpy(r->counts, p->counts, sizeof r->counts);
  r->h2d_bytes = p->h2d_bytes;
  r->loss = m->exec.loss;
}

int
ooc_validate_run(const ooc_scenario_spec *spec,
                 const ooc_planner_type *const *ts, int n,
                 const ooc_measure_config *mc, int keep_measures,
                 ooc_progress *progress, ooc_validate *v, ooc_err *err)
{
  ooc_scenario_spec sp = *spec;
  ooc_measure_config c = *mc;
  ooc_measure ref;
  ooc_kv *opts = NULL;
  uint8_t *algos;
  int i, have_ref = 0, rc = OOC_OK;
  double sum_abs = 0;
  char note[96];

  ooc_validate_init(v);
  ooc_measure_init(&ref);
  if ((v->rows = calloc((size_t)(n > 0 ? n : 1), sizeof *v->rows)) == NULL ||
      (opts = calloc((size_t)spec->n_opts + 1, sizeof *opts)) == NULL) {
    free(opts);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  c.want_params = 1;
  c.want_traces = keep_measures;
  v->warmup = mc->warmup;
  v->iterations = mc->iterations;
  v->threads = mc->threads > 0 ? mc->threads : 1;   /* 0: the default, 1 */
  v->link_GBps = mc->link_GBps;
  snprintf(v->backend, sizeof v->backend, "%s", mc->backend);
  snprintf(v->allocator, sizeof v->allocator, "%s",
           ooc_scenario_alloc_spec(spec));

  /* The reference: the in-core plan on the profile's own memory. */
  if (progress != NULL)
    ooc_progress_show(progress, 0, n + 1, "runs", "in-core reference");
  sp.planner = "incore";
  sp.budget = 0;
  sp.opts = NULL;             /* --opt is for the planners compared */
  sp.n_opts = 0;
  if ((rc = plan_and_measure(&sp, &c, &ref, NULL, err)) < 0)
    goto done;
  have_ref = ref.measured.feasible && ref.params != NULL;
  v->reference_iteration_s = have_ref ? ref.measured.iteration_s : 0;
  v->reference_predicted_s = ref.predicted.feasible
                                 ? ref.predicted.iteration_s : 0;
  v->reference_error = have_ref && v->reference_predicted_s > 0
                           ? (v->reference_iteration_s -
                              v->reference_predicted_s) /
                                 v->reference_iteration_s
                           : 0;
  snprintf(v->note, sizeof v->note, "%s", ref.exec.note);

  for (i = 0; i < n; i++) {
    ooc_validate_row *r = &v->rows[i];
    ooc_measure *m = calloc(1, sizeof *m);

    if (m == NULL) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto done;
    }
    ooc_measure_init(m);
    snprintf(note, sizeof note, "planner %s", ts[i]->name);
    if (progress != NULL)
      ooc_progress_show(progress, i + 1, n + 1, "runs", note);
    sp = *spec;
    sp.planner = ts[i]->name;
    sp.opts = opts;
    sp.n_opts = ooc_planner_opts_for(ts[i], spec->opts, spec->n_opts, opts);
    snprintf(r->planner, sizeof r->planner, "%s", ts[i]->name);
    v->n_rows = i + 1;
    algos = NULL;
    if ((rc = plan_and_measure(&sp, &c, m, &algos, err)) < 0) {
      ooc_measure_fini(m);
      free(m);
      if (rc == OOC_ENOMEM) {
        ooc_err_prefix(err, rc, "planner %s: ", ts[i]->name);
        goto done;
      }
      /* This planner's plan alone: report it and go on with the rest. */
      r->refused = 1;
      snprintf(r->integrity, sizeof r->integrity, "not run: %.170s",
               err != NULL ? err->msg : ooc_strerror(rc));
      ooc_err_clear(err);
      rc = OOC_OK;
      continue;
    }
    fill_row(r, m);
    if (algos != NULL && have_ref && r->feasible_measured) {
      /* A plan that changes kernel algorithms: its reference is the
       * in-core plan with the same algorithms (one more run). */
      ooc_scenario_spec rs = *spec;
      ooc_measure ref2;
      ooc_measure_init(&ref2);
      rs.planner = "incore";
      rs.budget = 0;
      rs.opts = NULL;
      rs.n_opts = 0;
      rs.layer_algo = algos;
      c.want_traces = 0;
      rc = plan_and_measure(&rs, &c, &ref2, NULL, err);
      c.want_traces = keep_measures;
      if (rc == OOC_OK)
        integrity(r, m, ref2.measured.feasible ? &ref2 : NULL, 1);
      ooc_measure_fini(&ref2);
      if (rc < 0) {
        free(algos);
        ooc_measure_fini(m);
        free(m);
        ooc_err_prefix(err, rc, "planner %s: in-core reference with its "
                       "kernel algorithms: ", ts[i]->name);
        goto done;
      }
    } else {
      integrity(r, m, have_ref ? &ref : NULL, 0);
    }
    free(algos);
    if (v->model[0] == '\0' && m->predicted.model != NULL) {
      snprintf(v->model, sizeof v->model, "%s", m->predicted.model);
      snprintf(v->hw, sizeof v->hw, "%s", m->predicted.hw);
      v->batch = m->predicted.batch;
      v->budget_bytes = m->predicted.budget_bytes;
    }
    if (r->feasible_predicted && r->feasible_measured) {
      double a = fabs(r->iteration_error);
      double pe = r->predicted_peak_reserved_bytes > 0
                      ? fabs((double)r->measured_peak_reserved_bytes -
                             (double)r->predicted_peak_reserved_bytes) /
                            (double)r->predicted_peak_reserved_bytes
                      : 0;
      sum_abs += a;
      v->n_compared++;
      if (a > v->max_abs_iteration_error)
        v->max_abs_iteration_error = a;
      if (pe > v->max_abs_peak_error)
        v->max_abs_peak_error = pe;
    }
    if (keep_measures) {
      r->m = m;
    } else {
      ooc_measure_fini(m);
      free(m);
    }
  }
  if (progress != NULL)
    ooc_progress_show(progress, n + 1, n + 1, "runs", NULL);
  v->mean_abs_iteration_error = v->n_compared > 0
                                    ? sum_abs / v->n_compared : 0;
  if (v->model[0] == '\0' && ref.predicted.model != NULL) {
    snprintf(v->model, sizeof v->model, "%s", ref.predicted.model);
    snprintf(v->hw, sizeof v->hw, "%s", ref.predicted.hw);
    v->batch = ref.predicted.batch;
  }
done:
  free(opts);
  ooc_measure_fini(&ref);
  return rc;
}

static int
add_num(cJSON *o, const char *k, double x)
{
  return cJSON_AddNumberToObject(o, k, x) != NULL;
}

static int
add_num_or_null(cJSON *o, const char *k, int ok, double x)
{
  return ok ? add_num(o, k, x) : cJSON_AddNullToObject(o, k) != NULL;
}

char *
ooc_validate_json(const ooc_validate *v)
{
  cJSON *o = cJSON_CreateObject(), *arr, *e;
  char *text = NULL;
  int i, ok;

  if (o == NULL)
    return NULL;
  ok = cJSON_AddStringToObject(o, "model", v->model) != NULL &&
       add_num(o, "batch", (double)v->batch) &&
       cJSON_AddStringToObject(o, "hw", v->hw) != NULL &&
       cJSON_AddStringToObject(o, "allocator", v->allocator) != NULL &&
       add_num(o, "budget_bytes", (double)v->budget_bytes) &&
       cJSON_AddStringToObject(o, "backend", v->backend) != NULL &&
       add_num_or_null(o, "link_GBps", v->link_GBps > 0, v->link_GBps) &&
       add_num(o, "warmup", v->warmup) &&
       add_num(o, "iterations", v->iterations) &&
       add_num(o, "threads", v->threads) &&
       cJSON_AddStringToObject(o, "device_note", v->note) != NULL &&
       add_num_or_null(o, "reference_iteration_s",
                       v->reference_iteration_s > 0,
                       v->reference_iteration_s) &&
       add_num_or_null(o, "reference_predicted_s",
                       v->reference_predicted_s > 0,
                       v->reference_predicted_s) &&
       add_num_or_null(o, "reference_error",
                       v->reference_iteration_s > 0 &&
                           v->reference_predicted_s > 0,
                       v->reference_error) &&
       (arr = cJSON_AddArrayToObject(o, "results")) != NULL;
  for (i = 0; ok && i < v->n_rows; i++) {
    const ooc_validate_row *r = &v->rows[i];
    int both = r->feasible_predicted && r->feasible_measured;
    ok = (e = cJSON_CreateObject()) != NULL;
    if (!ok)
      break;
    cJSON_AddItemToArray(arr, e);
    ok = cJSON_AddStringToObject(e, "planner", r->planner) != NULL &&
         cJSON_AddBoolToObject(e, "feasible_predicted",
                               r->feasible_predicted) != NULL &&
         cJSON_AddBoolToObject(e, "feasible_measured",
                               r->feasible_measured) != NULL &&
         add_num_or_null(e, "predicted_iteration_s", r->feasible_predicted,
                         r->predicted_iteration_s) &&
         add_num_or_null(e, "measured_iteration_s", r->feasible_measured,
                         r->measured_iteration_s) &&
         add_num_or_null(e, "iteration_error", both, r->iteration_error) &&
         add_num_or_null(e, "predicted_stall_s", r->feasible_predicted,
                         r->predicted_stall_s) &&
         add_num_or_null(e, "measured_stall_s", r->feasible_measured,
                         r->measured_stall_s) &&
         add_num(e, "predicted_peak_reserved_bytes",
                 (double)r->predicted_peak_reserved_bytes) &&
         add_num_or_null(e, "measured_peak_reserved_bytes",
                         r->feasible_predicted,
                         (double)r->measured_peak_reserved_bytes) &&
         add_num(e, "predicted_peak_allocated_bytes",
                 (double)r->predicted_peak_allocated_bytes) &&
         add_num_or_null(e, "measured_peak_allocated_bytes",
                         r->feasible_predicted,
                         (double)r->measured_peak_allocated_bytes) &&
         add_num_or_null(e, "op_error_median", both, r->op_error_median) &&
         add_num_or_null(e, "op_error_p95", both, r->op_error_p95) &&
         cJSON_AddBoolToObject(e, "refused", r->refused) != NULL &&
         /* null when nothing was checked (not run, or not to the end) */
         (both ? cJSON_AddBoolToObject(e, "integrity_ok", r->integrity_ok)
               : cJSON_AddNullToObject(e, "integrity_ok")) != NULL &&
         cJSON_AddStringToObject(e, "integrity", r->integrity) != NULL &&
         add_num(e, "swap", r->counts[1]) &&
         add_num(e, "recompute", r->counts[2]) &&
         add_num(e, "h2d_bytes", (double)r->h2d_bytes) &&
         add_num_or_null(e, "loss", r->feasible_measured, r->loss);
  }
  ok = ok &&
       add_num_or_null(o, "mean_abs_iteration_error", v->n_compared > 0,
                       v->mean_abs_iteration_error) &&
       add_num_or_null(o, "max_abs_iteration_error", v->n_compared > 0,
                       v->max_abs_iteration_error) &&
       add_num_or_null(o, "max_abs_peak_reserved_error", v->n_compared > 0,
                       v->max_abs_peak_error);
  if (ok)
    text = cJSON_Print(o);
  cJSON_Delete(o);
  return text;
}
