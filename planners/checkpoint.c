/* planners/checkpoint.c — sublinear-memory checkpointing: split the
 * forward chain into about sqrt(n) segments, keep each segment's boundary
 * output, drop everything inside and recompute each segment once in
 * backward.
 *
 * Follows Chen, Xu, Zhang and Guestrin 2016, "Training Deep Nets with
 * Sublinear Memory Cost", §3 (Algorithm 1 with the segment boundaries as
 * the kept "checkpoints") and §4.1 (sqrt(n) segments of equal length: the
 * O(sqrt(n)) memory, one extra forward pass). A baseline for the hybrid
 * planners (issue 11): it never swaps.
 *
 * Segments need cuts a single tensor crosses. A cut after forward step s
 * is a chain cut when exactly one activation produced at or before s is
 * used by a forward step after s (the input batch, persistent, aside):
 * that activation is the checkpoint, and nothing else of the segment is
 * read by later segments. On a chain every step is a cut; in a ResNet the
 * cuts are between blocks (the add's output after its ReLU); in a
 * DenseNet only between dense blocks, so its segments are whole blocks,
 * however many sqrt(n) asks for. The forward has F steps; segments = K
 * (`--opt segments=K`, default round(sqrt(F))): the cut nearest to each
 * of k F / K (k = 1 .. K - 1), in order, each used once.
 *
 * In each segment but the last (which backward reads at once), every
 * activation that backward reads (the loss's aside) is dropped after its
 * last forward use and recomputed right before the first backward step
 * that reads any activation of the segment: the segment's forward is run
 * once more, in order, so each recompute finds its inputs (the checkpoint
 * before it, or an activation recomputed just before). Inputs the
 * recompute reads but backward does not stay resident until then (the
 * lowering extends their life).
 *
 * Cost: O(steps + uses). No search, no simulation. Ownership: scratch
 * arrays in the state (ck_alloc / ck_free); writes only the caller's plan.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "plan/planner.h"
#include "plan/toolkit.h"

struct ck_state {
  int32_t n_fwd;
  int32_t *cross;           /* per forward step s: activations live across
                               the cut after s */
  int32_t *cross_act;       /* per s: one of them (the checkpoint when
                               cross[s] == 1) */
  int32_t *cuts;            /* chain cuts, ascending */
  int32_t n_cuts;
  int32_t *chosen;          /* the cuts used as boundaries */
  int32_t n_chosen;
};

static int ck_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct ck_state *st = state;
  const ooc_liveness *lv = ctx->live;
  int32_t n = lv->n_steps, a, s, run = 0;

  st->cross = calloc((size_t)n + 2, sizeof *st->cross);
  st->cross_act = calloc((size_t)n + 2, sizeof *st->cross_act);
  st->cuts = calloc((size_t)n + 2, sizeof *st->cuts);
  st->chosen = calloc((size_t)n + 2, sizeof *st->chosen);
  if (st->cross == NULL || st->cross_act == NULL || st->cuts == NULL ||
      st->chosen == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'checkpoint': out of "
                       "memory");
  /* Forward steps come first in the schedule. */
  for (s = 0; s < n && lv->steps[s].phase == OOC_PH_FWD; s++)
    ;
  st->n_fwd = s;
  /* Activation a is live across the cuts [producer, last forward use). */
  for (a = 1; a < lv->n_acts; a++) {
    int32_t p = ooc_kit_producer(lv, a), lf = lv->act_last_fwd[a];
    if (p < 0 || lf <= p)
      continue;
    st->cross[p]++;
    st->cross[lf]--;
  }
  for (s = 0; s < st->n_fwd; s++) {
    run += st->cross[s];
    st->cross[s] = run;
  }
  for (a = 1; a < lv->n_acts; a++) {
    int32_t p = ooc_kit_producer(lv, a), lf = lv->act_last_fwd[a];
    for (s = p; p >= 0 && s < lf; s++)
      if (st->cross[s] == 1)
        st->cross_act[s] = a;
  }
  st->n_cuts = 0;
  for (s = 0; s + 1 < st->n_fwd; s++)
    if (st->cross[s] == 1)
      st->cuts[st->n_cuts++] = s;
  return OOC_OK;
}

static void ck_free(void *state)
{
  struct ck_state *st = state;

  free(st->cross);
  free(st->cross_act);
  free(st->cuts);
  free(st->chosen);
}

/* Choose K - 1 boundaries: per target k F / K the nearest unused cut after
 * the previous boundary. */
static void choose(struct ck_state *st, int64_t k_seg)
{
  int32_t j = 0, k;

  st->n_chosen = 0;
  for (k = 1; k < k_seg && j < st->n_cuts; k++) {
    double target = (double)st->n_fwd * (double)k / (double)k_seg - 1;
    int32_t best = j;
    while (best + 1 < st->n_cuts &&
           fabs(st->cuts[best + 1] - target) <= fabs(st->cuts[best] - target))
      best++;
    st->chosen[st->n_chosen++] = st->cuts[best];
    j = best + 1;
  }
}

static int ck_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                   ooc_err *err)
{
  struct ck_state *st = state;
  const ooc_liveness *lv = ctx->live;
  const ooc_model *m = ctx->model;
  int64_t k_seg;
  int32_t seg, a, n_rc = 0;
  int rc;

  if ((rc = ooc_planner_opt_int(ctx, "segments", &k_seg, err)) < 0)
    return rc;
  if (rc == 0)
    k_seg = (int64_t)llround(sqrt((double)st->n_fwd));
  else if (k_seg < 1)
    return ooc_err_set(err, OOC_EINVAL, "planner 'checkpoint': option "
                       "segments=%lld: must be >= 1", (long long)k_seg);
  if (k_seg < 1)
    k_seg = 1;
  choose(st, k_seg);
  ooc_plan_reset(pl);
  pl->sched_budget = ctx->budget;
  /* Segments [prev + 1, chosen[seg]]; the last one is kept whole. */
  for (seg = 0; seg < st->n_chosen; seg++) {
    int32_t lo = seg == 0 ? 0 : st->chosen[seg - 1] + 1;
    int32_t hi = st->chosen[seg], keep = st->cross_act[hi];
    int32_t before = -1;
    for (a = 1; a < lv->n_acts; a++) {
      int32_t p = ooc_kit_producer(lv, a);
      if (p < lo || p > hi || a == keep || lv->act_first_bwd[a] < 0 ||
          m->layers[lv->act_layer[a]].op == OOC_OPK_SOFTMAX_CE)
        continue;
      if (before < 0 || lv->act_first_bwd[a] < before)
        before = lv->act_first_bwd[a];
    }
    if (before < 0)
      continue;
    /* In forward order, so each recompute finds its inputs. */
    for (int32_t s = lo; s <= hi; s++)
      for (int32_t k = 0; k < lv->step_nacts[s]; k++) {
        ooc_recompute r;
        a = lv->step_acts[lv->step_first[s] + k];
        if (a <= 0 || ooc_kit_producer(lv, a) != s || a == keep ||
            lv->act_first_bwd[a] < 0 || lv->act_last_fwd[a] < 0 ||
            lv->act_last_fwd[a] >= before ||
            pl->action[a] != OOC_KEEP ||
            m->layers[lv->act_layer[a]].op == OOC_OPK_SOFTMAX_CE)
          continue;
        r = (ooc_recompute){ .act = a, .free_after = lv->act_last_fwd[a],
                             .before = before };
        if (ooc_plan_add_recompute(pl, &r) != OOC_OK)
          return ooc_err_set(err, OOC_ENOMEM, "planner 'checkpoint': out "
                             "of memory");
        n_rc++;
      }
  }
  snprintf(pl->note, sizeof pl->note,
           "checkpoint: %d segments (%lld asked; %d chain cuts in %d forward "
           "steps), %d activations recomputed",
           (int)st->n_chosen + 1, (long long)k_seg, (int)st->n_cuts,
           (int)st->n_fwd, (int)n_rc);
  return OOC_OK;
}

static const char *const ck_options[] = { "segments", NULL };

const ooc_planner_type ooc_planner_checkpoint = {
  .name = "checkpoint",
  .summary = "sqrt(n) checkpointing: keep segment boundaries, recompute "
             "each segment once in backward (no swapping)",
  .cite = "Chen et al. 2016, Training Deep Nets with Sublinear Memory Cost, "
          "§3-4.1",
  .state_size = sizeof(struct ck_state),
  .options = ck_options,
  .alloc = ck_alloc,
  .free = ck_free,
  .plan = ck_plan,
};
