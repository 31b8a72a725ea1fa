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
 *    forward use ends (out_after = its last forward use). "During forward
 *    propagation, only swap-out would happen."
 *  - A swap-out frees memory only when its copy completes, and an
 *    allocation that finds no room is out of memory, not a wait
 *    (docs/program-ir.md). So the first step whose memory, with the
 *    tensor still present, would exceed the scheduling budget waits for
 *    its swap-out (out_wait); until then the copy overlaps compute.
 *    Swap-outs are visited in forward order, each one's extra presence
 *    added to the timeline before the next is placed.
 *  - In backward it is "swapped in as far as we have enough memory space":
 *    issued at the earliest step, not before backward starts, from which
 *    it fits in the timeline until its use, and freed right after its last
 *    use (liveness).
 * The timeline counts what the allocator takes, each tensor's footprint
 * (ooc_alloc_footprint, alloc.h): the bytes rounded to 512 B, or under
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
 * Built on the planning toolkit (plan/toolkit.h): the liveness's last
 * forward and first backward uses pick the candidates, and the memory
 * timeline (a segment tree) answers "the peak over this gap" and "the
 * last step before the use where this tensor does not fit".
 *
 * Cost: O(acts log acts + candidates log steps) per plan after the base
 * timeline (O(acts log steps), built once), at most 9 simulations.
 * Ownership: scratch lives in the state, sized by cap_alloc() and
 * released by cap_free() (the front end calls both).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/planner.h"
#include "plan/toolkit.h"

struct cap_state {
  int32_t *order;      /* candidate acts by first backward use */
  uint64_t *keys;      /* sort keys: first backward use << 32 | act */
  ooc_timeline base;   /* the timeline before any decision */
  ooc_timeline occ;    /* the timeline of the plan being built */
  int32_t n_cand;
  int32_t n_kept, n_swapped;
  uint64_t kept_bytes;
};

/* qsort order of the packed (first backward use, act) keys. */
static int cmp_u64(const void *x, const void *y)
{
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : (a > b);
}

/* The swap candidates: a backward use and a step between the last forward
 * and the first backward use; listed by first backward use. */
static int32_t cap_candidates(const ooc_liveness *lv, struct cap_state *st)
{
  int32_t n = 0;
  for (int32_t a = 1; a < lv->n_acts; a++) {
    int32_t lf = lv->act_last_fwd[a], fb = lv->act_first_bwd[a];
    if (lv->act_bytes[a] == 0 || lf < 0 || fb < 0 || fb - lf < 2)
      continue;
    st->keys[n++] = (uint64_t)fb << 32 | (uint32_t)a;
  }
  qsort(st->keys, (size_t)n, sizeof *st->keys, cmp_u64);
  for (int32_t k = 0; k < n; k++)
    st->order[k] = (int32_t)(st->keys[k] & 0xffffffffu);
  return n;
}

/* The steps a swapped candidate is absent: from the step after the one
 * its D2H runs in to the step before its backward use. */
static void cap_gap(const ooc_liveness *lv, int32_t a, int32_t *from,
                    int32_t *to)
{
  *from = lv->act_last_fwd[a] + 2;
  *to = lv->act_first_bwd[a] - 1;
}

/* Where each swap-out must have completed: visited in forward order, a
 * swapped tensor is counted present from the step after its D2H is issued
 * until the first step that would then exceed the scheduling budget, which
 * waits for it (-1: none before its swap-in). */
static void cap_waits(const ooc_planner_ctx *ctx, struct cap_state *st,
                      uint64_t sched, ooc_plan *pl)
{
  const ooc_liveness *lv = ctx->live;
  int32_t n = pl->n_swaps;

  for (int32_t k = 0; k < n; k++)
    st->keys[k] = (uint64_t)pl->swaps[k].out_after << 32 | (uint32_t)k;
  qsort(st->keys, (size_t)n, sizeof *st->keys, cmp_u64);
  for (int32_t k = 0; k < n; k++) {
    ooc_swap *sw = &pl->swaps[st->keys[k] & 0xffffffffu];
    int64_t b = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[sw->act]);
    int32_t from = sw->out_after + 2, to = sw->in_after;
    int32_t hit = ooc_timeline_first_above(&st->occ, from, to,
                                           (int64_t)sched - b);
    sw->out_wait = hit;
    ooc_timeline_add(&st->occ, from, hit >= 0 ? hit - 1 : to, b);
  }
}

/* Build the plan for scheduling budget sched, from the base timeline. */
static int cap_build(const ooc_planner_ctx *ctx, struct cap_state *st,
                     uint64_t sched, ooc_plan *pl, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  uint64_t sum = 0;
  int32_t n_keep = 0, n_cand = st->n_cand;

  ooc_plan_reset(pl);
  pl->sched_budget = sched;
  ooc_timeline_copy(&st->occ, &st->base);

  /* Keep the tail (Fig. 4: "we can know when to stop the swap-out"):
   * candidates in backward order stay resident over their gap while the
   * timeline stays within the scheduling budget; the first that does not
   * fit ends the kept tail. */
  while (n_keep < n_cand) {
    int32_t a = st->order[n_keep], from, to;
    int64_t b = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]);
    int64_t peak;
    cap_gap(lv, a, &from, &to);
    peak = ooc_timeline_max(&st->occ, from, to);
    if (peak < 0)
      peak = 0;
    if (peak + b > (int64_t)sched)
      break;
    ooc_timeline_add(&st->occ, from, to, b);
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
    int32_t a = st->order[k], fb = lv->act_first_bwd[a], s, hit;
    int64_t b = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]);
    int32_t lo = lv->act_last_fwd[a] + 2;
    if (lo < lv->n_layers - 1)
      lo = lv->n_layers - 1;   /* the first backward step */
    /* The earliest s >= lo from which it fits until its use: one past the
     * last step before the use where it does not. */
    hit = ooc_timeline_last_above(&st->occ, lo, fb - 1, (int64_t)sched - b);
    s = hit >= 0 ? hit + 1 : (lo < fb ? lo : fb);
    ooc_timeline_add(&st->occ, s, fb - 1, b);
    ooc_swap sw = {
      .act = a,
      .out_after = lv->act_last_fwd[a],
      .out_wait = -1,
      .in_after = s - 1,
      .in_before = fb,
    };
    if (ooc_plan_add_swap(pl, &sw) != OOC_OK)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'capacity': out of memory");
  }
  cap_waits(ctx, st, sched, pl);
  return OOC_OK;
}

/* Scratch for ctx, and the timeline before any decision: the liveness's
 * memory (persistent, workspace, gradients, activations over their lives,
 * at the allocator's footprints) with every candidate absent over its
 * gap. The same for every scheduling budget, so built once. */
static int cap_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct cap_state *st = state;
  const ooc_liveness *lv = ctx->live;
  int rc;

  st->order = calloc((size_t)lv->n_acts + 1, sizeof *st->order);
  st->keys = calloc((size_t)lv->n_acts + 1, sizeof *st->keys);
  if (st->order == NULL || st->keys == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'capacity': out of memory");
  if ((rc = ooc_timeline_init(&st->base, lv->n_steps, err)) != OOC_OK ||
      (rc = ooc_timeline_init(&st->occ, lv->n_steps, err)) != OOC_OK)
    return rc;
  st->n_cand = cap_candidates(lv, st);
  ooc_timeline_memory(&st->base, lv, ctx, OOC_TL_ALL);
  for (int32_t k = 0; k < st->n_cand; k++) {
    int32_t a = st->order[k], from, to;
    cap_gap(lv, a, &from, &to);
    ooc_timeline_add(&st->base, from, to,
                     -(int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]));
  }
  return OOC_OK;
}

static void cap_free(void *state)
{
  struct cap_state *st = state;

  free(st->order);
  free(st->keys);
  ooc_timeline_fini(&st->base);
  ooc_timeline_fini(&st->occ);
}

/* Plan at the physical budget, lowering the scheduling budget while the
 * oracle reports OOM. */
static int cap_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                    ooc_err *err)
{
  struct cap_state *st = state;
  uint64_t fixed = 0, sched = ctx->budget;
  int have_fixed, rc = OOC_OK, tries = 0, feasible = 1;
  ooc_sim_result r;

  have_fixed = ooc_planner_opt_sched(ctx, "capacity", &fixed, err);
  if (have_fixed < 0)
    return have_fixed;
  if (have_fixed) {
    sched = fixed;
    rc = cap_build(ctx, st, sched, pl, err);
    if (rc != OOC_OK)
      return rc;
  } else {
    for (tries = 0; tries <= 8; tries++) {
      sched = ctx->budget - ctx->budget / 16 * (uint64_t)tries;
      if ((rc = cap_build(ctx, st, sched, pl, err)) != OOC_OK)
        return rc;
      if ((rc = ooc_planner_evaluate(ctx, pl, &r, err)) != OOC_OK)
        return rc;
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
  return OOC_OK;
}

static const char *const cap_options[] = { "sched_budget", NULL };

const ooc_planner_type ooc_planner_capacity = {
  .name = "capacity",
  .summary = "capacity-based: keep the tail of forward resident, swap the "
             "rest, swap in as early as memory allows",
  .cite = "OOC-Paleo paper (a performance model of out-of-core training by "
          "data swapping and Unified Memory; its title is not in our copy) "
          "§3.5 (capacity-based strategy, Fig. 4)",
  .state_size = sizeof(struct cap_state),
  .options = cap_options,
  .alloc = cap_alloc,
  .free = cap_free,
  .plan = cap_plan,
};
