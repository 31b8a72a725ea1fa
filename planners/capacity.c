/* planners/capacity.c — the OOC-Paleo capacity-based swap schedule.
 *
 * Follows the OOC-Paleo seed, §3.5 (Fig. 4): from the layers' sizes the
 * planner knows before forward starts where to stop swapping out.
 *  - Keep the tail: a memory timeline of the schedule (persistent state,
 *    each step's workspace, live gradients, live activations, every swap
 *    candidate absent from the step after its D2H until its backward use)
 *    is built; walking the candidates in the order backward first needs
 *    them (the last forward layers first), each stays resident over its
 *    gap while the timeline stays within the scheduling budget, and the
 *    first that does not fit ends the kept tail. So backward starts as soon
 *    as forward ends, with what it needs first already there.
 *  - Every other tensor that backward reads is swapped out as soon as its
 *    forward use ends (out_after = its last forward use, no
 *    synchronisation). "During forward propagation, only swap-out would
 *    happen."
 *  - In backward it is "swapped in as far as we have enough memory space":
 *    issued at the earliest step, not before backward starts, from which
 *    it fits in the timeline until its use, and freed right after its last
 *    use (liveness).
 * The timeline counts what the allocator takes, each tensor's footprint
 * (ooc_alloc_footprint, alloc.h): the bytes rounded as the policy rounds
 * a block (512 B under caching, 1 KiB under pool, ...), or under
 * `va` whole chunks for a request of at least half a chunk (its
 * fragmentation is known in advance, schedule-window seed §4; smaller
 * requests share chunk segments), a better "estimation of the memory
 * consumption" than the bytes when chunks are large.
 * Departure: a tensor that several backward steps read stays resident
 * between them (the paper's layers have one backward use each; a second
 * trip would copy out data the host already holds).
 *
 * Tensors go in by first backward use, so the copy stream serves them in
 * the order compute needs them. When the simulated plan does not fit (the
 * timeline ignores allocator fragmentation and copy timing), the
 * scheduling budget is lowered by 1/16 of the budget at a time, at most 8
 * times, and the first feasible plan is kept; if none is, the last plan is
 * returned and its simulation reports the OOM. Option sched_budget=SIZE
 * fixes it instead.
 *
 * Cost: O(acts log acts + candidates x steps) per plan (the timeline
 * before any decision is built once), at most 9 simulations.
 * Ownership: scratch arrays live in the state and are freed before return.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/planner.h"

struct cap_state {
  int32_t *order;     /* candidate acts by first backward use */
  uint64_t *keys;     /* sort keys: first backward use << 32 | act */
  int32_t *last_fwd;  /* per act: last forward use (-1: none) */
  int32_t *first_bwd; /* per act: first backward use (-1: none) */
  int64_t *base;      /* per step: the timeline before any decision */
  int64_t *occ;       /* per step: modelled resident bytes */
  int32_t n_kept, n_swapped;
  uint64_t kept_bytes;
  const ooc_allocator_type *alloc;  /* footprints under this allocator */
  ooc_alloc_config acfg;
};

/* The device bytes a request of b takes under the allocator (alloc.h;
 * va: schedule-window seed §4, eq. 1). */
static uint64_t foot(const struct cap_state *st, uint64_t b)
{
  return ooc_alloc_footprint(st->alloc, &st->acfg, b);
}

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

/* The memory timeline before any decision, into st->base: persistent,
 * workspace, gradients, and activations resident over their lives; every
 * candidate starts out swapped (absent from the step after the one its
 * D2H runs in until its backward use). The same for every scheduling
 * budget, so built once. */
static void cap_base(const ooc_planner_ctx *ctx, struct cap_state *st,
                     int32_t n_cand)
{
  const ooc_liveness *lv = ctx->live;
  const ooc_model *m = ctx->model;
  int64_t *occ = st->base;

  uint64_t persistent = foot(st, lv->act_bytes[0]);
  for (int32_t i = 0; i < lv->n_layers; i++) {
    const ooc_layer *ly = &m->layers[i];
    uint64_t pb = ly->param_bytes + ly->grad_bytes + ly->opt_bytes;
    if (pb > 0)
      persistent += foot(st, pb);
  }
  for (int32_t s = 0; s < lv->n_steps; s++) {
    const ooc_step *sp = &lv->steps[s];
    occ[s] = (int64_t)persistent;
    if (sp->phase != OOC_PH_UPDATE)
      occ[s] += (int64_t)foot(st, m->layers[sp->layer].workspace_bytes);
  }
  for (int32_t a = 1; a < lv->n_acts; a++) {
    if (lv->grad_first[a] >= 0)
      occ_add(occ, lv->grad_first[a], lv->grad_last[a],
              foot(st, lv->grad_bytes[a]));
    if (lv->act_nuses[a] == 0)
      continue;
    int32_t first = lv->use_steps[lv->act_first[a]];
    occ_add(occ, first, lv->act_last[a], foot(st, lv->act_bytes[a]));
  }
  for (int32_t k = 0; k < n_cand; k++) {
    int32_t a = st->order[k];
    int32_t from = st->last_fwd[a] + 2, to = st->first_bwd[a] - 1;
    occ_add(occ, from, to, (uint64_t)0 - foot(st, lv->act_bytes[a]));
  }
}

/* Build the plan for scheduling budget sched, from the base timeline. */
static int cap_build(const ooc_planner_ctx *ctx, struct cap_state *st,
                     int32_t n_cand, uint64_t sched, ooc_plan *pl,
                     ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  uint64_t sum = 0;
  int32_t n_keep = 0;

  ooc_plan_reset(pl);
  pl->sched_budget = sched;
  memcpy(st->occ, st->base, (size_t)lv->n_steps * sizeof *st->occ);

  /* Keep the tail (Fig. 4: "we can know when to stop the swap-out"):
   * candidates in backward order stay resident over their gap while the
   * timeline stays within the scheduling budget; the first that does not
   * fit ends the kept tail. O(candidates x steps). */
  while (n_keep < n_cand) {
    int32_t a = st->order[n_keep];
    int64_t b = (int64_t)foot(st, lv->act_bytes[a]), peak = 0;
    int32_t from = st->last_fwd[a] + 2, to = st->first_bwd[a] - 1;
    for (int32_t s = from; s <= to; s++)
      if (st->occ[s] > peak)
        peak = st->occ[s];
    if (peak + b > (int64_t)sched)
      break;
    occ_add(st->occ, from, to, (uint64_t)b);
    sum += lv->act_bytes[a];
    n_keep++;
  }
  st->n_kept = n_keep;
  st->kept_bytes = sum;
  st->n_swapped = n_cand - n_keep;

  /* Swap-ins in the order backward needs them, each as early as it fits,
   * but not before backward starts ("during forward propagation, only
   * swap-out would happen"): in_after >= the last forward step. */
  for (int32_t k = n_keep; k < n_cand; k++) {
    int32_t a = st->order[k];
    int64_t b = (int64_t)foot(st, lv->act_bytes[a]);
    int32_t lo = st->last_fwd[a] + 2, s = st->first_bwd[a];
    if (lo < lv->n_layers - 1)
      lo = lv->n_layers - 1;   /* the first backward step */
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
  st->base = calloc((size_t)lv->n_steps + 1, sizeof *st->base);
  st->occ = calloc((size_t)lv->n_steps + 1, sizeof *st->occ);
  if (!st->order || !st->keys || !st->last_fwd || !st->first_bwd ||
      !st->base || !st->occ) {
    rc = ooc_err_set(err, OOC_ENOMEM, "planner 'capacity': out of memory");
    goto done;
  }
  n_cand = cap_candidates(lv, st);
  /* Footprints with the chunk the simulator uses. */
  st->alloc = ctx->allocator;
  st->acfg = (ooc_alloc_config){ .budget = ctx->budget,
                                 .chunk_bytes = ctx->chunk_bytes,
                                 .hw = ctx->hw,
                                 .options = ctx->allocator_options };
  cap_base(ctx, st, n_cand);

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
  free(st->base);
  free(st->occ);
  free(st->keys);
  st->keys = NULL;
  st->order = st->last_fwd = st->first_bwd = NULL;
  st->base = st->occ = NULL;
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
