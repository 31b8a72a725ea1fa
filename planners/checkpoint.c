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
 * recompute reads but backward does not (a block's inner outputs read by
 * its add) are recomputed with them as transients
 * (ooc_kit_recompute_segment).
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
  int32_t *cuts;            /* chain cuts, ascending */
  int32_t *cut_act;         /* their checkpoints */
  int32_t n_cuts;
  int32_t *chosen;          /* indices into cuts used as boundaries */
  int32_t n_chosen;
  uint8_t *mark;            /* per act: scratch of the toolkit */
};

static int ck_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct ck_state *st = state;
  const ooc_liveness *lv = ctx->live;
  int32_t n = lv->n_steps;

  st->cuts = calloc((size_t)n + 2, sizeof *st->cuts);
  st->cut_act = calloc((size_t)n + 2, sizeof *st->cut_act);
  st->chosen = calloc((size_t)n + 2, sizeof *st->chosen);
  st->mark = calloc((size_t)lv->n_acts + 1, 1);
  if (st->cuts == NULL || st->cut_act == NULL || st->chosen == NULL ||
      st->mark == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'checkpoint': out of "
                       "memory");
  st->n_cuts = ooc_kit_chain_cuts(lv, st->cuts, st->cut_act, &st->n_fwd,
                                  err);
  return st->n_cuts < 0 ? st->n_cuts : OOC_OK;
}

static void ck_free(void *state)
{
  struct ck_state *st = state;

  free(st->cuts);
  free(st->cut_act);
  free(st->chosen);
  free(st->mark);
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
    st->chosen[st->n_chosen++] = best;
    j = best + 1;
  }
}

static int ck_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                   ooc_err *err)
{
  struct ck_state *st = state;
  int64_t k_seg;
  int32_t seg, n_rc = 0;
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
    int32_t lo = seg == 0 ? 0 : st->cuts[st->chosen[seg - 1]] + 1;
    int32_t n = ooc_kit_recompute_segment(ctx, pl, lo,
                                          st->cuts[st->chosen[seg]],
                                          st->cut_act[st->chosen[seg]],
                                          st->mark, err);
    if (n < 0)
      return n;
    n_rc += n;
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
