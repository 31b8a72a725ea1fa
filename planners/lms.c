/* planners/lms.c — IBM Large Model Support (TFLMS v2): graph-distance
 * swapping with a simulator-driven autotune.
 *
 * Follows the schedule-window seed, §2 (LMS [Le et al. 2019] as it
 * describes it): a variable used at function f_i is swapped out when the
 * graph distance d(f_i, f_j) to f_j, the closest later function using it,
 * exceeds `swapout_threshold` (the seed prints "<=", but a threshold
 * that swaps the short edges would keep the long-lived tensors LMS exists
 * to move); it is swapped in again before f_k with d(f_k, f_j) =
 * `swapin_ahead`. Swap-out may happen anywhere in forward or backward, so
 * a tensor used again later in forward (a skip connection) gets one swap
 * record per gap that exceeds the threshold. TFLMS v2's other
 * two options:
 *   swapin_groupby  uses served by a swap-in whose distance to the previous
 *                   use is within groupby share that swap-in (no new
 *                   swap-out/swap-in between them);
 *   sync_mode       0 none; 1 swap-outs are synchronous (the next op waits
 *                   for the D2H); 2 swap-ins are synchronous (issued right
 *                   before the consuming op, which waits: ahead is
 *                   ignored); 3 both.
 * The distance is the number of ops in the schedule (TFLMS' topological
 * levels; ours is a chain of steps, so level = step index).
 *
 * Autotune (-1 = auto), as TFLMS' _search_params does with its simulator,
 * here with ooc_planner_evaluate() as the oracle and "feasible under the
 * budget" as the pass test: (1) when all three are auto, a plan with
 * threshold = #ops (no swapping) is tried first; (2) test threshold 1,
 * ahead 1, groupby 0 (or the values given), escalating sync_mode from the
 * one given up to 3 until it passes, then binary search in [1, #ops] for
 * the largest passing threshold; (3) unless swap-ins are synchronous,
 * binary search ahead in [1, #ops]; (4) groupby: #ops if that passes,
 * else TFLMS' early-stopping binary search in [0, #ops]. Each search
 * starts from a value that passed and does not simulate it again. When
 * nothing passes, the most frugal plan (sync_mode 3) is returned and the
 * simulation reports the OOM.
 *
 * Gradients: TFLMS rewrites any tensor edge of the graph, activation
 * gradients included. Their uses are the backward steps that write,
 * accumulate or read them, and the same threshold rule applies to the
 * gaps between those uses (ooc_swap.grad). Since swapping a gradient only
 * adds traffic when the activations alone fit, the autotune first runs
 * with activations only (the plans LMS made before gradients could be
 * swapped) and, only when no setting passes, once more with gradients
 * too; `--opt grads=0|1` fixes the choice.
 *
 * Cost: O(uses) to build one plan; autotune runs O(log #ops) simulations
 * (twice as many when gradients are needed). Ownership: the gradient use
 * lists (CSR, built by lms_alloc, freed by lms_free); writes only the
 * caller's plan.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include "plan/planner.h"

struct lms_params {
  int64_t threshold, ahead, groupby, sync_mode;
};

struct lms_state {
  struct lms_params p;
  int32_t n_sims;
  int grads;                  /* this build swaps gradients too */
  /* Per act, the backward steps using its gradient, ascending:
   * gsteps[gstart[a] .. gend[a]). */
  int32_t *gstart, *gend, *gsteps;
};

/* Gradient use lists from the liveness. OOC_ENOMEM. */
static int lms_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct lms_state *st = state;
  const ooc_liveness *lv = ctx->live;
  const ooc_model *m = ctx->model;
  int32_t n = 0, s, a, k;

  st->gstart = calloc((size_t)lv->n_acts + 1, sizeof *st->gstart);
  st->gend = calloc((size_t)lv->n_acts + 1, sizeof *st->gend);
  if (st->gstart == NULL || st->gend == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'lms': out of memory");
  /* Count (an upper bound: a step using x twice counts twice), lay out,
   * then fill in ascending step order without repeats. */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      for (a = 0; a < lv->n_acts; a++) {
        int32_t c = st->gend[a];
        st->gstart[a] = st->gend[a] = n;
        n += c;
      }
      st->gsteps = calloc((size_t)n + 1, sizeof *st->gsteps);
      if (st->gsteps == NULL)
        return ooc_err_set(err, OOC_ENOMEM, "planner 'lms': out of memory");
    }
    for (s = 0; s < lv->n_steps; s++) {
      const ooc_layer *ly;
      if (lv->steps[s].phase != OOC_PH_BWD)
        continue;
      ly = &m->layers[lv->steps[s].layer];
      for (k = -1; k < ly->n_in; k++) {
        a = lv->layer_act[k < 0 ? lv->steps[s].layer
                                : ooc_layer_input(m, ly, k)];
        if (lv->grad_tensor[a] < 0 || lv->grad_bytes[a] == 0 ||
            !ooc_layer_bwd_grad(ly, k))
          continue;
        if (pass == 0)
          st->gend[a]++;
        else if (st->gend[a] == st->gstart[a] ||
                 st->gsteps[st->gend[a] - 1] != s)
          st->gsteps[st->gend[a]++] = s;
      }
    }
  }
  return OOC_OK;
}

static void lms_free(void *state)
{
  struct lms_state *st = state;

  free(st->gstart);
  free(st->gend);
  free(st->gsteps);
}

/* Swap records for the gaps between consecutive uses u[0 .. n) of act a
 * (or of its gradient) that exceed the threshold. */
static int lms_gaps(ooc_plan *pl, int32_t a, int grad, const int32_t *u,
                    int32_t n, const struct lms_params *p, ooc_err *err)
{
  int from_swapin = 0;

  for (int32_t k = 1; k < n; k++) {
    int64_t gap = u[k] - u[k - 1];
    if (gap <= p->threshold)
      continue;
    if (from_swapin && gap <= p->groupby)
      continue;
    int64_t in_after = (p->sync_mode & 2) ? u[k] - 1 : u[k] - p->ahead - 1;
    if (in_after < u[k - 1])
      in_after = u[k - 1];
    ooc_swap sw = {
      .act = a,
      .out_after = u[k - 1],
      .out_wait = (p->sync_mode & 1) ? u[k - 1] + 1 : -1,
      .in_after = (int32_t)in_after,
      .in_before = u[k],
      .grad = (uint8_t)grad,
    };
    if (ooc_plan_add_swap(pl, &sw) != OOC_OK)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'lms': out of memory");
    from_swapin = 1;
  }
  return OOC_OK;
}

/* Build the plan for fixed parameters. */
static int lms_build(const struct lms_state *st, const ooc_planner_ctx *ctx,
                     const struct lms_params *p, ooc_plan *pl, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int rc;

  ooc_plan_reset(pl);
  pl->sched_budget = ctx->budget;
  for (int32_t a = 0; a < lv->n_acts; a++) {
    if (lv->act_layer[a] <= 0 || lv->act_bytes[a] == 0)
      continue;
    if ((rc = lms_gaps(pl, a, 0, lv->use_steps + lv->act_first[a],
                       lv->act_nuses[a], p, err)) != OOC_OK)
      return rc;
  }
  for (int32_t a = 0; st->grads && a < lv->n_acts; a++)
    if ((rc = lms_gaps(pl, a, 1, st->gsteps + st->gstart[a],
                       st->gend[a] - st->gstart[a], p, err)) != OOC_OK)
      return rc;
  return OOC_OK;
}

/* The oracle: build and simulate; *pass = feasible under the budget. */
static int lms_play(struct lms_state *st, const ooc_planner_ctx *ctx,
                    const struct lms_params *p, ooc_plan *pl, int *pass,
                    ooc_err *err)
{
  ooc_sim_result r;
  int rc = lms_build(st, ctx, p, pl, err);
  if (rc != OOC_OK)
    return rc;
  rc = ooc_planner_evaluate(ctx, pl, &r, err);
  if (rc != OOC_OK)
    return rc;
  st->n_sims++;
  *pass = r.feasible;
  return OOC_OK;
}

/* TFLMS' binary_search: largest value in [lo, hi] that passes, starting
 * from the current value *field, which passed (kept when nothing better
 * does, and not simulated again). With early_stop the first passing
 * midpoint is taken. */
static int lms_bsearch(struct lms_state *st, const ooc_planner_ctx *ctx,
                       int64_t *field, int64_t lo, int64_t hi, int early_stop,
                       ooc_plan *pl, ooc_err *err)
{
  const int64_t start = *field;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2, old = *field;
    int pass = 1, rc;
    *field = mid;
    if (mid != start) {
      rc = lms_play(st, ctx, &st->p, pl, &pass, err);
      if (rc != OOC_OK)
        return rc;
    }
    if (pass) {
      if (early_stop)
        break;
      lo = mid + 1;
    } else {
      *field = old;
      hi = mid - 1;
    }
  }
  return OOC_OK;
}

/* Integer option key (default def when absent), at least lo. */
static int get_opt(const ooc_planner_ctx *ctx, const char *key, int64_t def,
                   int64_t lo, int64_t *v, ooc_err *err)
{
  int rc = ooc_planner_opt_int(ctx, key, v, err);
  if (rc < 0)
    return rc;
  if (rc == 0)
    *v = def;
  if (*v < lo)
    return ooc_err_set(err, OOC_EINVAL,
                       "planner 'lms': option %s=%lld: must be >= %lld, or "
                       "-1 (auto)", key, (long long)*v, (long long)lo + 1);
  return OOC_OK;
}

/* Fixed options, or TFLMS' autotune for those left at -1. */
static int lms_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                    ooc_err *err)
{
  struct lms_state *st = state;
  const int64_t size = ctx->live->n_steps;
  struct lms_params user;
  int rc, pass = 0, auto_mode, found = 1, no_lms = 0;
  int64_t grads_opt;
  char gnote[48] = "";

  if ((rc = get_opt(ctx, "swapout_threshold", -1, -1, &user.threshold, err)) ||
      (rc = get_opt(ctx, "swapin_ahead", -1, -1, &user.ahead, err)) ||
      (rc = get_opt(ctx, "swapin_groupby", -1, -1, &user.groupby, err)) ||
      (rc = get_opt(ctx, "sync_mode", 0, -1, &user.sync_mode, err)))
    return rc;
  if (user.sync_mode > 3)
    return ooc_err_set(err, OOC_EINVAL,
                       "planner 'lms': option sync_mode=%lld: expected 0..3 "
                       "or -1 (auto)", (long long)user.sync_mode);
  if ((rc = ooc_planner_opt_int(ctx, "grads", &grads_opt, err)) < 0)
    return rc;
  if (rc == 0)
    grads_opt = -1;
  else if (grads_opt != 0 && grads_opt != 1)
    return ooc_err_set(err, OOC_EINVAL, "planner 'lms': option grads=%lld: "
                       "expected 0 or 1", (long long)grads_opt);
  st->grads = grads_opt == 1;
retry:
  found = 1;
  st->p = user;
  if (st->p.sync_mode < 0)
    st->p.sync_mode = 0;   /* auto: start asynchronous, escalate */
  auto_mode = user.threshold < 0 || user.ahead < 0 || user.groupby < 0 ||
              user.sync_mode < 0;

  if (auto_mode) {
    /* (1) Is swapping needed at all? */
    if (user.threshold < 0 && user.ahead < 0 && user.groupby < 0) {
      struct lms_params none = { .threshold = size, .ahead = 1,
                                 .groupby = 0, .sync_mode = st->p.sync_mode };
      if ((rc = lms_play(st, ctx, &none, pl, &pass, err)))
        return rc;
      if (pass) {
        st->p = none;
        no_lms = 1;
        goto done;
      }
    }
    /* (2) threshold 1 (or the fixed one), ahead 1, groupby 0 (or the fixed
     * ones), escalating sync_mode until that passes; then the largest
     * passing threshold. */
    st->p.threshold = user.threshold < 0 ? 1 : user.threshold;
    st->p.ahead = user.ahead < 0 ? 1 : user.ahead;
    st->p.groupby = user.groupby < 0 ? 0 : user.groupby;
    for (;;) {
      if ((rc = lms_play(st, ctx, &st->p, pl, &pass, err)))
        return rc;
      if (pass)
        break;
      if (st->p.sync_mode >= 3) {
        /* Nothing fits: this most frugal setting is returned, and its
         * simulation reports the OOM. */
        found = 0;
        goto done;
      }
      st->p.sync_mode++;
    }
    if (user.threshold < 0 &&
        (rc = lms_bsearch(st, ctx, &st->p.threshold, 1, size, 0, pl, err)))
      return rc;
    /* Synchronous swap-ins ignore ahead and groupby. */
    if (!(st->p.sync_mode & 2)) {
      /* (3) ahead, from 1 */
      if (user.ahead < 0 &&
          (rc = lms_bsearch(st, ctx, &st->p.ahead, 1, size, 0, pl, err)))
        return rc;
      /* (4) groupby */
      if (user.groupby < 0) {
        struct lms_params all = st->p;
        all.groupby = size;
        st->p.groupby = 0;
        if ((rc = lms_play(st, ctx, &all, pl, &pass, err)))
          return rc;
        if (pass)
          st->p.groupby = size;
        else if ((rc = lms_bsearch(st, ctx, &st->p.groupby, 0, size, 1, pl,
                                   err)))
          return rc;
      }
    }
  }

done:
  if (!found && grads_opt < 0 && !st->grads) {
    /* Activations alone do not fit: swap gradients too. */
    st->grads = 1;
    goto retry;
  }
  if ((rc = lms_build(st, ctx, &st->p, pl, err)))
    return rc;
  if (ooc_plan_grad_swaps(pl) > 0)
    snprintf(gnote, sizeof gnote, ", %d gradient%s swapped",
             ooc_plan_grad_swaps(pl), ooc_plan_grad_swaps(pl) == 1 ? "" : "s");
  snprintf(pl->note, sizeof pl->note,
           "lms: threshold=%lld, ahead=%lld, groupby=%lld, sync_mode=%lld"
           "%s%s (%d simulations)",
           (long long)st->p.threshold, (long long)st->p.ahead,
           (long long)st->p.groupby, (long long)st->p.sync_mode, gnote,
           no_lms ? ", no swapping needed"
                  : (!found ? ", no feasible setting" : ""),
           (int)st->n_sims);
  return OOC_OK;
}

static const char *const lms_options[] = {
  "swapout_threshold", "swapin_ahead", "swapin_groupby", "sync_mode",
  "grads", NULL
};

const ooc_planner_type ooc_planner_lms = {
  .name = "lms",
  .summary = "IBM LMS (TFLMS v2): swap when graph distance exceeds a "
             "threshold; simulator-driven autotune",
  .cite = "schedule-window paper (Out-of-core Training for Extremely Large-"
          "Scale Neural Networks With Adaptive Window-Based Scheduling) §2 "
          "(LMS, Le et al. 2019; TFLMS v2 options)",
  .state_size = sizeof(struct lms_state),
  .options = lms_options,
  .flags = OOC_PLANNER_SEARCH | OOC_PLANNER_COSTLY,
  .alloc = lms_alloc,
  .free = lms_free,
  .plan = lms_plan,
};
