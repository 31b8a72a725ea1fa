/* planners/capacity.c — the OOC-Paleo capacity-based swap schedule.
 *
 * Follows the OOC-Paleo seed, §3.5 (Fig. 4): from the layers' sizes the
 * planner knows before forward starts where to stop swapping out. Walking
 * the tensors in the order backward first needs them (the last forward
 * layers first), it keeps them resident while the running sum plus the
 * working set (persistent state + the largest step's working set) fits the
 * budget, so backward starts as soon as forward ends. Every other tensor
 * that backward reads is swapped out as soon as its forward use ends
 * (out_after = its last forward use, no synchronisation), and in backward
 * it is "swapped in as far as we have enough memory space": the swap-in is
 * issued at the earliest step from which it fits, in a memory timeline of
 * the schedule (persistent state, live activations and gradients, each
 * step's workspace), and it is freed right after its last use (liveness).
 *
 * Tensors go in by first backward use, so the copy stream serves them in
 * the order compute needs them. When the simulated plan does not fit (the
 * estimate ignores allocator fragmentation), the scheduling budget is
 * lowered by 1/16 of the budget at a time, at most 8 times, and the first
 * feasible plan is kept; if none is, the last plan is returned and its
 * simulation reports the OOM. Option sched_budget=SIZE fixes it instead.
 *
 * Cost: O(acts log acts + swapped x steps) per plan, at most 9 simulations.
 * Ownership: scratch arrays live in the state and are freed before return.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include "sim/planner.h"

struct cap_state {
  int32_t *order;     /* candidate acts by first backward use */
  uint64_t *keys;     /* sort keys: first backward use << 32 | act */
  int32_t *last_fwd;  /* per act: last forward use (-1: none) */
  int32_t *first_bwd; /* per act: first backward use (-1: none) */
  int64_t *occ;       /* per step: modelled resident bytes */
  int32_t n_kept, n_swapped;
  uint64_t kept_bytes;
};

/* qsort order of the packed (first backward use, act) keys. */
static int cmp_u64(const void *x, const void *y)
{
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : (a > b);
}

/* Find each act's last forward and first backward use; list the swap
 * candidates (a backward use and a step between the two). */
static int32_t cap_candidates(const ooc_liveness *lv, struct cap_state *st)
{
  int32_t n = 0;
  for (int32_t a = 0; a < lv->n_acts; a++) {
    const int32_t *u = lv->use_steps + lv->act_first[a];
    st->last_fwd[a] = st->first_bwd[a] = -1;
    for (int32_t k = 0; k < lv->act_nuses[a]; k++) {
      uint8_t ph = lv->steps[u[k]].phase;
      if (ph == OOC_PH_FWD)
        st->last_fwd[a] = u[k];
      else if (ph == OOC_PH_BWD && st->first_bwd[a] < 0)
        st->first_bwd[a] = u[k];
    }
    if (a == 0 || lv->act_bytes[a] == 0 || st->last_fwd[a] < 0 ||
        st->first_bwd[a] < 0 || st->first_bwd[a] - st->last_fwd[a] < 2)
      continue;
    st->keys[n++] = (uint64_t)st->first_bwd[a] << 32 | (uint32_t)a;
  }
  qsort(st->keys, (size_t)n, sizeof *st->keys, cmp_u64);
  for (int32_t k = 0; k < n; k++)
    st->order[k] = (int32_t)(st->keys[k] & 0xffffffffu);
  return n;
}

/* Add b bytes (mod 2^64: a negated size removes) to steps [from, to]. */
static void occ_add(int64_t *occ, int32_t from, int32_t to, uint64_t b)
{
  for (int32_t s = from; s <= to; s++)
    occ[s] += (int64_t)b;
}

/* Build the plan for scheduling budget sched. */
static int cap_build(const ooc_planner_ctx *ctx, struct cap_state *st,
                     int32_t n_cand, uint64_t sched, ooc_plan *pl,
                     ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  const ooc_model *m = ctx->model;
  uint64_t base = lv->persistent_bytes + lv->max_step_bytes, sum = 0;
  int32_t n_keep = 0;

  ooc_plan_reset(pl);
  pl->sched_budget = sched;

  /* Keep the tail: candidates in backward order while they fit. */
  while (n_keep < n_cand) {
    uint64_t b = lv->act_bytes[st->order[n_keep]];
    if (base + sum + b > sched)
      break;
    sum += b;
    n_keep++;
  }
  st->n_kept = n_keep;
  st->kept_bytes = sum;
  st->n_swapped = n_cand - n_keep;

  /* Memory timeline: persistent, workspace, gradients, and activations
   * resident over their lives (swapped ones until the step after their
   * swap-out, while the D2H runs). */
  for (int32_t s = 0; s < lv->n_steps; s++) {
    const ooc_step *sp = &lv->steps[s];
    st->occ[s] = (int64_t)lv->persistent_bytes;
    if (sp->phase != OOC_PH_UPDATE)
      st->occ[s] += (int64_t)m->layers[sp->layer].workspace_bytes;
  }
  for (int32_t a = 1; a < lv->n_acts; a++) {
    if (lv->grad_first[a] >= 0)
      occ_add(st->occ, lv->grad_first[a], lv->grad_last[a],
              lv->grad_bytes[a]);
    if (lv->act_nuses[a] == 0)
      continue;
    int32_t first = lv->use_steps[lv->act_first[a]];
    occ_add(st->occ, first, lv->act_last[a], lv->act_bytes[a]);
  }
  for (int32_t k = n_keep; k < n_cand; k++) {
    int32_t a = st->order[k];
    int32_t from = st->last_fwd[a] + 2, to = st->first_bwd[a] - 1;
    /* Not resident from the step after the D2H to its backward use. */
    occ_add(st->occ, from, to, (uint64_t)0 - lv->act_bytes[a]);
  }

  /* Swap-ins in the order backward needs them, each as early as it fits. */
  for (int32_t k = n_keep; k < n_cand; k++) {
    int32_t a = st->order[k];
    int64_t b = (int64_t)lv->act_bytes[a];
    int32_t lo = st->last_fwd[a] + 2, s = st->first_bwd[a];
    while (s - 1 >= lo && st->occ[s - 1] + b <= (int64_t)sched)
      s--;
    occ_add(st->occ, s, st->first_bwd[a] - 1, (uint64_t)b);
    ooc_swap sw = {
      .act = a,
      .out_after = st->last_fwd[a],
      .out_wait = -1,
      .in_after = s - 1,
      .in_before = st->first_bwd[a],
    };
    if (ooc_plan_add_swap(pl, &sw) != OOC_OK)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'capacity': out of memory");
  }
  return OOC_OK;
}

/* Plan at the physical budget, lowering the scheduling budget while the
 * oracle reports OOM. */
static int cap_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                    ooc_err *err)
{
  struct cap_state *st = state;
  const ooc_liveness *lv = ctx->live;
  uint64_t fixed = 0, sched = ctx->budget;
  int have_fixed, rc = OOC_OK, tries = 0, feasible = 1;
  int32_t n_cand;
  ooc_sim_result r;

  have_fixed = ooc_planner_opt_size(ctx, "sched_budget", &fixed, err);
  if (have_fixed < 0)
    return have_fixed;
  if (have_fixed && (fixed == 0 || fixed > ctx->budget))
    return ooc_err_set(err, OOC_EINVAL,
                       "planner 'capacity': option sched_budget: must be in "
                       "(0, budget]");

  st->order = calloc((size_t)lv->n_acts + 1, sizeof *st->order);
  st->last_fwd = calloc((size_t)lv->n_acts + 1, sizeof *st->last_fwd);
  st->first_bwd = calloc((size_t)lv->n_acts + 1, sizeof *st->first_bwd);
  st->keys = calloc((size_t)lv->n_acts + 1, sizeof *st->keys);
  st->occ = calloc((size_t)lv->n_steps + 1, sizeof *st->occ);
  if (!st->order || !st->keys || !st->last_fwd || !st->first_bwd || !st->occ) {
    rc = ooc_err_set(err, OOC_ENOMEM, "planner 'capacity': out of memory");
    goto done;
  }
  n_cand = cap_candidates(lv, st);

  if (have_fixed) {
    sched = fixed;
    rc = cap_build(ctx, st, n_cand, sched, pl, err);
  } else {
    for (tries = 0; tries <= 8; tries++) {
      sched = ctx->budget - ctx->budget / 16 * (uint64_t)tries;
      if ((rc = cap_build(ctx, st, n_cand, sched, pl, err)) != OOC_OK)
        goto done;
      if ((rc = ooc_planner_evaluate(ctx, pl, &r, err)) != OOC_OK)
        goto done;
      if (r.feasible)
        break;
    }
    feasible = tries <= 8;
  }
  snprintf(pl->note, sizeof pl->note,
           "capacity: kept %d tensors (%.3f GiB) resident from the end of "
           "forward, swapped %d; sched budget %.3f GiB%s",
           (int)st->n_kept, (double)st->kept_bytes / 1073741824.0,
           (int)st->n_swapped, (double)sched / 1073741824.0,
           feasible ? "" : ", no feasible schedule");
done:
  free(st->order);
  free(st->last_fwd);
  free(st->first_bwd);
  free(st->occ);
  free(st->keys);
  st->keys = NULL;
  st->order = st->last_fwd = st->first_bwd = NULL;
  st->occ = NULL;
  return rc;
}

static const char *const cap_options[] = { "sched_budget", NULL };

const ooc_planner_type ooc_planner_capacity = {
  .name = "capacity",
  .summary = "capacity-based: keep the tail of forward resident, swap the "
             "rest, swap in as early as memory allows",
  .cite = "OOC-Paleo seed §3.5 (capacity-based strategy, Fig. 4)",
  .state_size = sizeof(struct cap_state),
  .options = cap_options,
  .plan = cap_plan,
};
