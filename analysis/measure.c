/* analysis/measure.c — predict, then replay and measure, one lowered
 * program (measure.h).
 *
 * Ownership: everything the run loads (model, profile, traces, the
 * simulator's detail, parameters) belongs to the ooc_measure or to one
 * call. Cost: a simulation and an execution of warmup + iterations
 * iterations; O(instructions log instructions) for the per-op errors.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/measure.h"
#include "base/util.h"
#include "sim/sim.h"

void
ooc_measure_init(ooc_measure *m)
{
  memset(m, 0, sizeof *m);
  ooc_trace_init(&m->predicted_trace);
  ooc_trace_init(&m->measured_trace);
}

void
ooc_measure_fini(ooc_measure *m)
{
  if (m == NULL)
    return;
  ooc_summary_fini(&m->predicted);
  ooc_summary_fini(&m->measured);
  ooc_trace_fini(&m->predicted_trace);
  ooc_trace_fini(&m->measured_trace);
  free(m->op_errors);
  free(m->params);
  free(m->lane);
  ooc_model_free(m->model);
  ooc_hw_free(m->hw);
  ooc_measure_init(m);
}

/* Start and end of every instruction of one iteration's trace (-1 where
 * it has no span), into caller arrays of p->n_instr. */
static void
spans_by_instr(const ooc_program *p, const ooc_trace *tr, int64_t *start,
               int64_t *end)
{
  int32_t i;

  for (i = 0; i < p->n_instr; i++)
    start[i] = end[i] = -1;
  for (i = 0; i < tr->n_spans; i++) {
    const ooc_span *s = &tr->spans[i];
    if (s->instr >= 0 && s->instr < p->n_instr) {
      start[s->instr] = s->start_ns;
      end[s->instr] = s->end_ns;
    }
  }
}

/* The reason the compute stream waited before instruction i started: the
 * stream of its wait that completed last (end[]), as the simulator
 * attributes it. */
static int
stall_reason(const ooc_program *p, const int64_t *end, int32_t i)
{
  const ooc_instr *in = &p->instr[i];
  int64_t last = -1;
  int why = OOC_STALL_OTHER;
  int32_t k;

  for (k = 0; k < in->n_waits; k++) {
    int32_t w = p->waits[in->wait_first + k];
    if (w < p->prologue_end || end[w] < last)
      continue;
    last = end[w];
    why = p->instr[w].stream == OOC_STREAM_H2D   ? OOC_STALL_SWAPIN
          : p->instr[w].stream == OOC_STREAM_D2H ? OOC_STALL_SWAPOUT
                                                 : OOC_STALL_OTHER;
  }
  return why;
}

static int64_t
stall_of(const ooc_program *p, const int64_t *start, const int64_t *end,
         int64_t by[OOC_STALL_COUNT])
{
  int64_t prev = 0, total = 0;
  int32_t i;

  if (by != NULL)
    memset(by, 0, sizeof(int64_t) * OOC_STALL_COUNT);
  for (i = p->prologue_end; i < p->n_instr; i++) {
    if (p->instr[i].stream != OOC_STREAM_COMPUTE || start[i] < 0)
      continue;
    if (start[i] > prev) {
      total += start[i] - prev;
      if (by != NULL)
        by[stall_reason(p, end, i)] += start[i] - prev;
    }
    if (end[i] > prev)
      prev = end[i];
  }
  return total;
}

int64_t
ooc_measure_stall(const ooc_program *p, const ooc_trace *tr,
                  int64_t by[OOC_STALL_COUNT])
{
  int64_t *start, *end, total;

  if (by != NULL)
    memset(by, 0, sizeof(int64_t) * OOC_STALL_COUNT);
  if (tr == NULL || p->n_instr == 0)
    return 0;
  start = malloc(sizeof *start * (size_t)p->n_instr);
  end = malloc(sizeof *end * (size_t)p->n_instr);
  if (start == NULL || end == NULL) {
    free(start);
    free(end);
    return 0;
  }
  spans_by_instr(p, tr, start, end);
  total = stall_of(p, start, end, by);
  free(start);
  free(end);
  return total;
}

void
ooc_measure_result_of(const ooc_exec_result *r, const ooc_program *p,
                      const ooc_trace *tr, ooc_sim_result *out)
{
  int32_t i;
  uint64_t best_res = 0;

  *out = (ooc_sim_result){
    .feasible = r->feasible, .oom = r->oom,
    .iteration_ns = r->iteration_ns,
    .peak_allocated = r->peak_allocated, .peak_reserved = r->peak_reserved,
    .peak_host_pinned = r->peak_host_pinned,
    .h2d_bytes = r->h2d_bytes, .d2h_bytes = r->d2h_bytes,
    .compute_busy_ns = r->compute_busy_ns, .h2d_busy_ns = r->h2d_busy_ns,
    .d2h_busy_ns = r->d2h_busy_ns, .alloc_ns = r->alloc_ns,
    .host_busy_ns = r->host_busy_ns,
    .iterations = r->warmup + r->iterations,
  };
  if (tr == NULL)
    return;
  ooc_measure_stall(p, tr, out->stall_ns);
  for (i = 0; i < tr->n_spans; i++) {
    const ooc_span *s = &tr->spans[i];
    const ooc_instr *in;
    if (s->instr < 0 || s->instr >= p->n_instr)
      continue;
    in = &p->instr[s->instr];
    if (in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_RECOMP)
      out->recompute_ns += s->end_ns - s->start_ns;
  }
  /* Fragmentation at the sample of the highest reserved bytes, as the
   * simulator defines it (1 - allocated / reserved there). */
  for (i = 0; i < tr->n_mem; i++)
    if (tr->mem[i].reserved > best_res) {
      best_res = tr->mem[i].reserved;
      out->fragmentation = 1.0 - (double)tr->mem[i].allocated /
                                     (double)tr->mem[i].reserved;
    }
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The q-quantile of sorted v[0..n) by linear interpolation. */
static double
quantile(const double *v, int32_t n, double q)
{
  double pos, frac;
  int32_t k;

  if (n == 0)
    return 0;
  pos = q * (double)(n - 1);
  k = (int32_t)pos;
  frac = pos - k;
  return k + 1 < n ? v[k] * (1 - frac) + v[k + 1] * frac : v[k];
}

/* Per kernel, copy and CPU optimizer step present in both traces:
 * (measured - predicted) / measured of its duration. */
static int
op_errors(ooc_measure *m, const ooc_program *p, const ooc_trace *pred,
          const ooc_trace *meas, ooc_err *err)
{
  int64_t *ps, *pe, *ms, *me;
  double *absv = NULL;
  int32_t i, n = 0;
  int rc = OOC_OK;

  ps = malloc(sizeof(int64_t) * (size_t)(p->n_instr + 1));
  pe = malloc(sizeof(int64_t) * (size_t)(p->n_instr + 1));
  ms = malloc(sizeof(int64_t) * (size_t)(p->n_instr + 1));
  me = malloc(sizeof(int64_t) * (size_t)(p->n_instr + 1));
  m->op_errors = malloc(sizeof(double) * (size_t)(p->n_instr + 1));
  absv = malloc(sizeof(double) * (size_t)(p->n_instr + 1));
  if (ps == NULL || pe == NULL || ms == NULL || me == NULL ||
      m->op_errors == NULL || absv == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto done;
  }
  spans_by_instr(p, pred, ps, pe);
  spans_by_instr(p, meas, ms, me);
  for (i = p->prologue_end; i < p->n_instr; i++) {
    int k = p->instr[i].kind;
    int64_t dp = pe[i] - ps[i], dm = me[i] - ms[i];
    if ((k != OOC_I_COMPUTE && k != OOC_I_H2D && k != OOC_I_D2H &&
         k != OOC_I_HOST) ||
        ps[i] < 0 || ms[i] < 0 || dm <= 0)
      continue;
    m->op_errors[n] = (double)(dm - dp) / (double)dm;
    absv[n] = fabs(m->op_errors[n]);
    n++;
  }
  m->n_op_errors = n;
  if (n > 1)
    qsort(absv, (size_t)n, sizeof *absv, cmp_double);
  m->op_error_median = quantile(absv, n, 0.5);
  m->op_error_p95 = quantile(absv, n, 0.95);
done:
  free(ps);
  free(pe);
  free(ms);
  free(me);
  free(absv);
  return rc;
}

/* Every parameter tensor's weights and gradients after the run. */
static int
read_params(ooc_measure *m, const ooc_exec *ex, const ooc_program *p,
            ooc_err *err)
{
  uint64_t total = 0, off = 0;
  int32_t t;
  int rc;

  for (t = 0; t < p->n_tensors; t++)
    if (p->tensors[t].kind == OOC_T_PARAM)
      total += m->model->layers[p->tensors[t].layer].param_bytes * 2;
  if ((m->params = malloc(total + sizeof(float))) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (t = 0; t < p->n_tensors; t++)
    if (p->tensors[t].kind == OOC_T_PARAM) {
      uint64_t b = m->model->layers[p->tensors[t].layer].param_bytes * 2;
      int32_t g;
      /* An offloaded layer (docs/offload.md): its weights and gradients
       * are in the host copies of its param and wgrad tensors. */
      for (g = 0; g < p->n_tensors; g++)
        if (p->tensors[g].kind == OOC_T_WGRAD &&
            p->tensors[g].layer == p->tensors[t].layer)
          break;
      if (g < p->n_tensors) {
        if ((rc = ooc_exec_read_host(ex, t, 0, (char *)m->params + off,
                                     b / 2, err)) < 0 ||
            (rc = ooc_exec_read_host(ex, g, 0,
                                     (char *)m->params + off + b / 2, b / 2,
                                     err)) < 0)
          return rc;
      } else if ((rc = ooc_exec_read(ex, t, 0, (char *)m->params + off, b,
                                     err)) < 0) {
        return rc;
      }
      off += b;
    }
  m->n_params = total / sizeof(float);
  return OOC_OK;
}

int
ooc_measure_program(const ooc_scenario_spec *spec, const ooc_program *prog,
                    const char *note, const ooc_measure_config *mc,
                    ooc_measure *m, ooc_err *err)
{
  ooc_scenario_spec sp = *spec;
  ooc_sim_detail det;
  ooc_scenario_out out = { .detail = &det };
  const ooc_exec_backend *b;
  const ooc_allocator_type *at;
  const char *aopts;
  ooc_exec *ex = NULL;
  ooc_exec_config cfg;
  ooc_sim_result mr;
  ooc_summary_source src;
  int rc;

  ooc_sim_detail_init(&det);
  if (mc->iterations < 1) {
    rc = ooc_err_set(err, OOC_EINVAL, "--iterations: %d must be >= 1",
                     mc->iterations);
    goto done;
  }
  if (mc->warmup < 0) {
    rc = ooc_err_set(err, OOC_EINVAL, "--warmup: %d must be >= 0",
                     mc->warmup);
    goto done;
  }
  if ((b = ooc_exec_backend_find(mc->backend, err)) == NULL) {
    rc = ooc_err_prefix(err, OOC_EINVAL, "--backend: ");
    goto done;
  }
  if ((rc = ooc_exec_backend_probe(b, err)) < 0)
    goto done;
  sp.iterations = mc->warmup + mc->iterations;
  sp.steady = 0;                /* exactly what the executor will run */
  out.model = &m->model;
  out.hw = &m->hw;
  out.trace = &m->predicted_trace;
  if ((rc = ooc_scenario_run_program(&sp, prog, note, &m->predicted, &out,
                                     err)) < 0)
    goto done;
  if (!m->predicted.feasible) {
    /* Nothing to replay: the plan does not fit what it was made for. */
    m->measured.feasible = 0;
    goto done;
  }
  if ((rc = ooc_scenario_lookup(spec, NULL, &at, &aopts, err)) < 0)
    goto done;
  cfg = (ooc_exec_config){
    .backend = b, .model = m->model, .program = prog, .hw = m->hw,
    .allocator = at, .allocator_options = aopts,
    .budget = m->predicted.budget_bytes, .chunk_bytes = 0,
    .mem_order = det.n_iter > 0 ? det.mem_order : NULL,
    .iter_first = det.iter_first, .n_iter = det.n_iter,
    .warmup = mc->warmup, .iterations = mc->iterations,
    .threads = mc->threads,
    .seed = mc->seed != 0 ? mc->seed : OOC_MEASURE_SEED,
    .link_GBps = mc->link_GBps, .verify = mc->verify,
  };
  if ((rc = ooc_exec_alloc(&cfg, &ex, err)) < 0)
    goto done;
  if ((rc = ooc_exec_run(ex, &m->exec, &m->measured_trace, err)) < 0)
    goto done;
  if (mc->want_params && m->exec.feasible &&
      (rc = read_params(m, ex, prog, err)) < 0)
    goto done;
  ooc_measure_result_of(&m->exec, prog, &m->measured_trace, &mr);
  src = (ooc_summary_source){
    .model = m->model, .hw = m->predicted.hw,
    .planner = m->predicted.planner, .allocator = m->predicted.allocator,
    .budget = m->predicted.budget_bytes, .program = prog, .result = &mr,
    .plan_note = m->predicted.plan_note,
    .sim_wall_s = 0, .plan_wall_s = m->predicted.plan_wall_s,
    .incore_s = m->predicted.incore_iteration_s,
    .compute_s = m->predicted.compute_s,
    .lower_bound_s = m->predicted.lower_bound_s,
  };
  if ((rc = ooc_summary_fill(&m->measured, &src, err)) < 0)
    goto done;
  m->measured.measured = 1;
  m->measured.events = 0;
  m->predicted_stall_ns = ooc_measure_stall(prog, &m->predicted_trace, NULL);
  m->measured_stall_ns = ooc_measure_stall(prog, &m->measured_trace, NULL);
  if (m->exec.feasible &&
      (rc = op_errors(m, prog, &m->predicted_trace, &m->measured_trace,
                      err)) < 0)
    goto done;
  if (mc->want_traces) {
    int32_t i;
    if ((m->lane = malloc((size_t)prog->n_instr + 1)) == NULL) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto done;
    }
    for (i = 0; i < prog->n_instr; i++) {
      int k = prog->instr[i].kind;
      m->lane[i] = k == OOC_I_COMPUTE || k == OOC_I_H2D || k == OOC_I_D2H
                       ? prog->instr[i].stream : 255;
    }
    m->n_lane = prog->n_instr;
  } else {
    ooc_trace_fini(&m->predicted_trace);
    ooc_trace_fini(&m->measured_trace);
    ooc_trace_init(&m->predicted_trace);
    ooc_trace_init(&m->measured_trace);
  }
  rc = OOC_OK;
done:
  ooc_exec_free(ex);
  ooc_sim_detail_fini(&det);
  return rc;
}
