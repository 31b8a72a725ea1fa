/* analysis/summary.c — a summary (summary.h) made from what ran: the names
 * of the scenario, the simulator's figures, the keep / swap / recompute
 * counts and the operation behind an OOM read from the program.
 *
 * Ownership: the summary owns copies of every string; ooc_summary_fini()
 * frees them. Cost: O(instructions + tensors + layers) per fill, for the
 * counts; one byte of scratch per layer.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "plan/plan.h"

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
  s->plan_simulations = 0;    /* planning's cost, which a plan.json
                                 replay does not have */
}

static char *
dup_str(const char *s)
{
  return strdup(s != NULL ? s : "");
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
  else {
    /* Lower case, as the trace names copies: "h2d res2a". */
    char kind[16];
    size_t k;
    snprintf(kind, sizeof kind, "%s",
             ooc_instr_kind_name((ooc_instr_kind)in->kind));
    for (k = 0; kind[k] != '\0'; k++)
      if (kind[k] >= 'A' && kind[k] <= 'Z')
        kind[k] = (char)(kind[k] - 'A' + 'a');
    snprintf(buf, sizeof buf, "%s %s", kind,
             in->layer >= 0 && in->layer < m->n_layers
                 ? m->layers[in->layer].name : "-");
  }
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

void
ooc_summary_set_baseline(ooc_summary *sum, double incore_s, double compute_s,
                         double lower_bound_s)
{
  sum->incore_iteration_s = incore_s;
  sum->slowdown = sum->feasible && incore_s > 0 ? sum->iteration_s / incore_s
                                                : 0;
  sum->compute_s = compute_s;
  sum->lower_bound_s = lower_bound_s;
}

int
ooc_summary_fill(ooc_summary *sum, const ooc_summary_source *src,
                 ooc_err *err)
{
  const ooc_model *m = src->model;
  const ooc_sim_result *r = src->result;
  int i;

  *sum = (ooc_summary){ 0 };
  sum->model = dup_str(m->name);
  sum->hw = dup_str(src->hw);
  sum->planner = dup_str(src->planner);
  sum->allocator = dup_str(src->allocator);
  sum->plan_note = dup_str(src->plan_note);
  sum->n_metrics = 0;
  for (int k = 0; src->metrics != NULL && k < src->n_metrics &&
                  k < OOC_PLAN_METRICS; k++)
    sum->metrics[sum->n_metrics++] = src->metrics[k];
  sum->oom_op = r->feasible ? dup_str("")
                            : oom_op_name(m, src->program, r->oom.instr);
  if (sum->model == NULL || sum->hw == NULL || sum->planner == NULL ||
      sum->allocator == NULL || sum->plan_note == NULL || sum->oom_op == NULL)
    goto nomem;
  sum->batch = m->batch;
  sum->dtype = m->dtype;
  sum->precision = m->precision;
  sum->optimizer = m->optimizer;
  sum->budget_bytes = src->budget;
  sum->feasible = r->feasible;
  if (!r->feasible)
    sum->oom = r->oom;
  sum->iteration_s = r->feasible ? (double)r->iteration_ns * 1e-9 : 0;
  sum->samples_per_s = r->feasible && r->iteration_ns > 0
                           ? (double)m->batch / sum->iteration_s : 0;
  ooc_summary_set_baseline(sum, src->incore_s, src->compute_s,
                           src->lower_bound_s);
  sum->peak_allocated_bytes = r->peak_allocated;
  sum->peak_reserved_bytes = r->peak_reserved;
  sum->peak_host_pinned_bytes = r->peak_host_pinned;
  sum->fragmentation = r->fragmentation;
  sum->h2d_bytes = r->h2d_bytes;
  sum->d2h_bytes = r->d2h_bytes;
  sum->recompute_flops = r->recompute_flops;
  sum->recompute_s = 1e-9 * (double)r->recompute_ns;
  sum->compute_busy_s = (double)r->compute_busy_ns * 1e-9;
  sum->h2d_busy_s = (double)r->h2d_busy_ns * 1e-9;
  sum->d2h_busy_s = (double)r->d2h_busy_ns * 1e-9;
  for (i = 0; i < OOC_STALL_COUNT; i++)
    sum->stall_s[i] = (double)r->stall_ns[i] * 1e-9;
  sum->alloc_s = (double)r->alloc_ns * 1e-9;
  sum->host_optimizer_s = (double)r->host_busy_ns * 1e-9;
  for (i = 0; src->program != NULL && i < src->program->n_instr; i++) {
    const ooc_instr *in = &src->program->instr[i];
    if (in->kind == OOC_I_HOST)
      sum->offloaded_layers++;
    else if (in->kind == OOC_I_ALLOC && in->where == OOC_WHERE_HOST &&
             i < src->program->prologue_end &&
             (src->program->tensors[in->tensor].kind == OOC_T_WGRAD ||
              src->program->tensors[in->tensor].kind == OOC_T_OPTSTATE ||
              src->program->tensors[in->tensor].kind == OOC_T_PARAM))
      sum->offload_host_bytes += src->program->tensors[in->tensor].bytes;
  }
  if (count_actions(m, src->program, sum->counts) < 0)
    goto nomem;
  sum->events = r->events;
  sum->iterations = r->iterations;
  sum->steady = r->steady;
  sum->sim_wall_s = src->sim_wall_s;
  sum->plan_wall_s = src->plan_wall_s;
  sum->plan_simulations = src->plan_simulations;
  return OOC_OK;
nomem:
  ooc_summary_fini(sum);
  return ooc_err_set(err, OOC_ENOMEM, "out of memory");
}
