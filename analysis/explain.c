/* analysis/explain.c — decisions and their costs per tensor class
 * (explain.h).
 *
 * Ownership: the rows and the summary belong to the ooc_explain; the
 * program, model and detail recorder live for one call. Cost: the
 * scenario's planner run and two simulations; O(instructions + tensors +
 * classes log classes) for the tables.
 */
#include "config.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/explain.h"
#include "base/util.h"
#include "sim/sim.h"

void
ooc_explain_init(ooc_explain *x)
{
  memset(x, 0, sizeof *x);
}

void
ooc_explain_fini(ooc_explain *x)
{
  if (x == NULL)
    return;
  ooc_summary_fini(&x->sum);
  free(x->rows);
  ooc_explain_init(x);
}

/* The row of class name (created on first use); NULL when out of memory.
 * Classes are few (op kinds), so a linear search is enough. */
static ooc_explain_row *
row_of(ooc_explain *x, const char *name, int32_t *cap)
{
  int32_t i;

  for (i = 0; i < x->n_rows; i++)
    if (strcmp(x->rows[i].op, name) == 0)
      return &x->rows[i];
  if (x->n_rows == *cap) {
    int32_t c = *cap ? 2 * *cap : 16;
    ooc_explain_row *r = realloc(x->rows, (size_t)c * sizeof *r);
    if (r == NULL)
      return NULL;
    x->rows = r;
    *cap = c;
  }
  memset(&x->rows[x->n_rows], 0, sizeof *x->rows);
  snprintf(x->rows[x->n_rows].op, sizeof x->rows->op, "%s", name);
  return &x->rows[x->n_rows++];
}

static double
cost(const ooc_explain_row *r)
{
  return r->exposed_swapin_s + r->exposed_swapout_s + r->recompute_s;
}

static int
cmp_rows(const void *pa, const void *pb)
{
  const ooc_explain_row *a = pa, *b = pb;
  double ca = cost(a), cb = cost(b);

  if (ca != cb)
    return ca > cb ? -1 : 1;
  return strcmp(a->op, b->op);
}

/* Fill x's rows from the program and the detail of its last iteration. */
static int
tabulate(ooc_explain *x, const ooc_model *m, const ooc_program *p,
         const ooc_sim_detail *d, ooc_err *err)
{
  uint8_t *swapped = calloc((size_t)p->n_tensors + 1, 1);
  uint8_t *recomp = calloc((size_t)p->n_tensors + 1, 1);
  double *rc_s = calloc((size_t)p->n_tensors + 1, sizeof *rc_s);
  uint64_t *moved = calloc((size_t)p->n_tensors + 1, sizeof *moved);
  int32_t i, k, cap = 0;
  int rc = OOC_OK;

  if (swapped == NULL || recomp == NULL || rc_s == NULL || moved == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto done;
  }
  for (i = p->prologue_end; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    if (in->kind == OOC_I_D2H && in->tensor >= 0) {
      swapped[in->tensor] = 1;
      moved[in->tensor] += p->tensors[in->tensor].bytes;
    } else if (in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_RECOMP) {
      double t = d != NULL && i < d->n_instr && d->start_ns[i] >= 0
                     ? (double)(d->end_ns[i] - d->start_ns[i]) * 1e-9 : 0;
      for (k = 0; k < in->n_args; k++) {
        int32_t a = p->args[in->arg_first + k];
        int32_t t_id = OOC_ARG_TENSOR(a);
        if ((a & OOC_ARG_WRITE) && p->tensors[t_id].kind == OOC_T_ACT) {
          recomp[t_id] = 1;
          rc_s[t_id] += t;
        }
      }
    }
  }
  for (i = 0; i < p->n_tensors; i++) {
    const ooc_ptensor *t = &p->tensors[i];
    ooc_explain_row *r;
    if (t->kind == OOC_T_GRAD && !swapped[i])
      continue;
    if (t->kind != OOC_T_ACT && t->kind != OOC_T_GRAD)
      continue;
    r = row_of(x, t->kind == OOC_T_GRAD
                      ? "gradient"
                      : ooc_op_name(m->layers[t->layer].op),
               &cap);
    if (r == NULL) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto done;
    }
    r->tensors++;
    r->bytes += t->bytes;
    if (recomp[i])
      r->recompute++;
    else if (swapped[i])
      r->swap++;
    else
      r->keep++;
    r->swapped_bytes += moved[i];
    r->recompute_s += rc_s[i];
    if (d != NULL && i < d->n_tensors) {
      r->exposed_swapin_s += (double)d->exposed_in_ns[i] * 1e-9;
      r->exposed_swapout_s += (double)d->exposed_out_ns[i] * 1e-9;
    }
  }
  if (x->n_rows > 1)   /* rows is NULL when the model has no tensors */
    qsort(x->rows, (size_t)x->n_rows, sizeof *x->rows, cmp_rows);
  memset(&x->total, 0, sizeof x->total);
  snprintf(x->total.op, sizeof x->total.op, "total");
  for (i = 0; i < x->n_rows; i++) {
    const ooc_explain_row *r = &x->rows[i];
    x->total.tensors += r->tensors;
    x->total.bytes += r->bytes;
    x->total.keep += r->keep;
    x->total.swap += r->swap;
    x->total.recompute += r->recompute;
    x->total.swapped_bytes += r->swapped_bytes;
    x->total.exposed_swapin_s += r->exposed_swapin_s;
    x->total.exposed_swapout_s += r->exposed_swapout_s;
    x->total.recompute_s += r->recompute_s;
  }
done:
  free(swapped);
  free(recomp);
  free(rc_s);
  free(moved);
  return rc;
}

int
ooc_explain_program(const ooc_scenario_spec *spec, const ooc_program *prog,
                    const ooc_model *m, ooc_summary *sum, ooc_explain *x,
                    ooc_err *err)
{
  ooc_sim_detail det;
  ooc_summary again = { 0 };
  ooc_scenario_out out = { .detail = &det };
  int rc = OOC_OK;

  ooc_explain_init(x);
  x->sum = *sum;
  *sum = (ooc_summary){ 0 };
  if (prog->n_instr == 0)
    return OOC_OK;
  /* The same program again, with the detail recorder (planning is not
   * repeated). */
  ooc_sim_detail_init(&det);
  if ((rc = ooc_scenario_run_program(spec, prog, x->sum.plan_note, &again,
                                     &out, err)) == OOC_OK) {
    rc = tabulate(x, m, prog, det.n_instr > 0 ? &det : NULL, err);
    x->planned = 1;
  }
  ooc_summary_fini(&again);
  ooc_sim_detail_fini(&det);
  return rc;
}

int
ooc_explain_run(const ooc_scenario_spec *spec, ooc_explain *x, ooc_err *err)
{
  ooc_program prog;
  ooc_model *m = NULL;
  ooc_summary sum = { 0 };
  ooc_scenario_out out = { .program = &prog, .model = &m };
  int rc;

  ooc_explain_init(x);
  ooc_program_init(&prog);
  if ((rc = ooc_scenario_run(spec, &sum, &out, err)) == OOC_OK)
    rc = ooc_explain_program(spec, &prog, m, &sum, x, err);
  ooc_summary_fini(&sum);
  ooc_program_fini(&prog);
  ooc_model_free(m);
  return rc;
}

int
ooc_explain_write_text(FILE *f, const ooc_explain *x)
{
  const ooc_summary *s = &x->sum;
  char b1[32], b2[32];
  int32_t i;

  fprintf(f, "%s, batch %lld on %s: %s with the %s allocator, budget %s: ",
          s->model, (long long)s->batch, s->hw, s->planner, s->allocator,
          ooc_fmt_bytes(s->budget_bytes, b1, sizeof b1));
  if (s->feasible)
    fprintf(f, "%.6f s per iteration (compute %.6f s, lower bound %.6f s)\n",
            s->iteration_s, s->compute_s, s->lower_bound_s);
  else
    fprintf(f, "INFEASIBLE (%s)\n", s->oom.reason);
  if (!s->feasible && !s->measured && s->iterations >= 1 && x->n_rows > 0)
    fprintf(f, "swap-in s and swap-out s below: timed iteration %d up to "
            "the out of memory at %.6f s\n", s->iterations,
            (double)s->oom.time_ns * 1e-9);
  if (x->n_rows == 0) {
    fprintf(f, x->planned ? "no tensor to explain (no layer has an "
            "activation of its own: each is a view of its input)\n"
                          : "no plan (nothing to explain)\n");
    return ferror(f) ? OOC_EIO : OOC_OK;
  }
  fprintf(f, "\n%-12s %7s %10s %6s %6s %6s %10s %10s %10s %10s\n", "class",
          "tensors", "bytes", "keep", "swap", "recomp", "swapped",
          "swap-in s", "swap-out s", "recomp s");
  for (i = 0; i <= x->n_rows; i++) {
    const ooc_explain_row *r = i < x->n_rows ? &x->rows[i] : &x->total;
    fprintf(f, "%-12s %7d %10s %6d %6d %6d %10s %10.6f %10.6f %10.6f\n",
            r->op, (int)r->tensors, ooc_fmt_bytes(r->bytes, b1, sizeof b1),
            (int)r->keep, (int)r->swap, (int)r->recompute,
            ooc_fmt_bytes(r->swapped_bytes, b2, sizeof b2),
            r->exposed_swapin_s, r->exposed_swapout_s, r->recompute_s);
  }
  fprintf(f, "\nswap-in s / swap-out s: compute idle waiting for those "
          "tensors' transfers; recomp s: time rebuilding them.\n");
  if (s->offloaded_layers > 0)
    fprintf(f, "parameters: the optimizer of %d layers on the CPU, busy "
            "%.6f s per iteration; %s of their weights, gradients and "
            "state on the host\n", s->offloaded_layers, s->host_optimizer_s,
            ooc_fmt_bytes(s->offload_host_bytes, b1, sizeof b1));
  if (s->plan_note != NULL && s->plan_note[0] != '\0')
    fprintf(f, "planner: %s\n", s->plan_note);
  return ferror(f) ? OOC_EIO : OOC_OK;
}

static cJSON *
row_json(const ooc_explain_row *r)
{
  cJSON *o = cJSON_CreateObject();

  if (o == NULL ||
      cJSON_AddStringToObject(o, "op", r->op) == NULL ||
      cJSON_AddNumberToObject(o, "tensors", r->tensors) == NULL ||
      cJSON_AddNumberToObject(o, "bytes", (double)r->bytes) == NULL ||
      cJSON_AddNumberToObject(o, "keep", r->keep) == NULL ||
      cJSON_AddNumberToObject(o, "swap", r->swap) == NULL ||
      cJSON_AddNumberToObject(o, "recompute", r->recompute) == NULL ||
      cJSON_AddNumberToObject(o, "swapped_bytes", (double)r->swapped_bytes)
          == NULL ||
      cJSON_AddNumberToObject(o, "exposed_swapin_s", r->exposed_swapin_s)
          == NULL ||
      cJSON_AddNumberToObject(o, "exposed_swapout_s", r->exposed_swapout_s)
          == NULL ||
      cJSON_AddNumberToObject(o, "recompute_s", r->recompute_s) == NULL) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

int
ooc_explain_write_json(FILE *f, const ooc_explain *x)
{
  cJSON *o = cJSON_CreateObject(), *arr, *e;
  char *text = NULL;
  int32_t i;
  int ok;

  if (o == NULL)
    return OOC_ENOMEM;
  ok = (e = ooc_summary_to_cjson(&x->sum)) != NULL;
  if (ok)
    cJSON_AddItemToObject(o, "summary", e);
  ok = ok && (arr = cJSON_AddArrayToObject(o, "classes")) != NULL;
  for (i = 0; ok && i < x->n_rows; i++) {
    ok = (e = row_json(&x->rows[i])) != NULL;
    if (ok)
      cJSON_AddItemToArray(arr, e);
  }
  ok = ok && (e = row_json(&x->total)) != NULL;
  if (ok)
    cJSON_AddItemToObject(o, "total", e);
  if (ok)
    text = cJSON_Print(o);
  cJSON_Delete(o);
  if (text == NULL)
    return OOC_ENOMEM;
  fprintf(f, "%s\n", text);
  cJSON_free(text);
  return ferror(f) ? OOC_EIO : OOC_OK;
}
