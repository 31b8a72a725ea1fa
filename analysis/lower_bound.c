/* analysis/lower_bound.c — the lower bound of docs/lower-bound.md: L(s) on
 * the planning toolkit's memory timeline (plan/toolkit.h), the working set
 * of each step beside what it does not touch, the worst excess over the
 * budget, then the cheapest mix of swapping and recomputing it.
 *
 * Ownership: a timeline and one array of n_steps + 1 values per call,
 * freed before it returns. Cost: O(activations log steps + steps + step
 * arguments).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "analysis/lower_bound.h"
#include "ir/algo.h"
#include "plan/toolkit.h"


/* The fastest recompute of layer l: its forward again at any algorithm
 * the cost model offers (a plan may pick it, ir/algo.h). */
static int64_t
recomp_min_ns(const ooc_costs *c, int32_t l)
{
  int64_t best = c->recomp_ns[l], t;
  int a;

  for (a = 1; a < OOC_ALGO_COUNT; a++)
    if ((t = ooc_costs_algo_ns(c, l, OOC_PH_RECOMP, a)) >= 0 && t < best)
      best = t;
  return best;
}

/* The fastest kernel of step s (forward or backward at any algorithm; the
 * update once). */
static int64_t
step_min_ns(const ooc_liveness *lv, const ooc_costs *c, int32_t s)
{
  const ooc_step *st = &lv->steps[s];
  int64_t best, t;
  int a, ph;

  if (st->phase == OOC_PH_UPDATE || st->layer < 0)
    return st->phase == OOC_PH_UPDATE ? c->update_ns : 0;
  ph = st->phase == OOC_PH_BWD ? OOC_PH_BWD : OOC_PH_FWD;
  best = ooc_costs_algo_ns(c, st->layer, ph, 0);
  for (a = 1; a < OOC_ALGO_COUNT; a++)
    if ((t = ooc_costs_algo_ns(c, st->layer, ph, a)) >= 0 && t < best)
      best = t;
  return best;
}

/* One absent candidate: its bytes and the seconds its recompute takes. */
typedef struct { double bytes, rc; } cand;

static int
cmp_cand(const void *pa, const void *pb)
{
  const cand *x = pa, *y = pb;
  double u = x->rc * y->bytes, v = y->rc * x->bytes;   /* rc / bytes */

  return u < v ? -1 : u > v;
}

/* R(e): the least recompute time that covers e bytes with the candidates
 * sorted by seconds per byte (prefix sums pb, pr over n): the fractional
 * knapsack, convex and piecewise linear in e. INFINITY past their bytes. */
static double
recompute_cover(const cand *c, const double *pb, const double *pr, int32_t n,
                double e)
{
  int32_t lo = 0, hi = n;

  if (e <= 0)
    return 0;
  if (n == 0 || e > pb[n - 1])
    return INFINITY;
  while (lo < hi) {                 /* first k with pb[k] >= e */
    int32_t mid = lo + (hi - lo) / 2;
    if (pb[mid] >= e)
      hi = mid;
    else
      lo = mid + 1;
  }
  return (lo > 0 ? pr[lo - 1] : 0) +
         (e - (lo > 0 ? pb[lo - 1] : 0)) * (c[lo].rc / c[lo].bytes);
}

/* The split bound at one moment (docs/lower-bound.md, "Split at the
 * moment of the excess"): E bytes of the candidates are absent; x of them
 * went out over D2H before the moment and come back over H2D after it,
 * the rest is recomputed after it; the compute stream runs c_pre before
 * the moment and c_post after it. min over x of
 * max(c_pre, x / d2h) + max(c_post + R(E - x), x / h2d), convex in x:
 * ternary search. */
static double
split_at(const cand *c, const double *pb, const double *pr, int32_t n,
         double E, double c_pre, double c_post, double h2d, double d2h)
{
  double lo = fmax(0.0, E - (n > 0 ? pb[n - 1] : 0)), hi = E, best;
  int it;

  if (lo > hi)
    return 0;
#define F(x) (fmax(c_pre, (x) / d2h) + \
              fmax(c_post + recompute_cover(c, pb, pr, n, E - (x)), (x) / h2d))
  for (it = 0; it < 100 && hi - lo > 1.0; it++) {
    double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (F(m1) <= F(m2))
      hi = m2;
    else
      lo = m1;
  }
  best = fmin(F(lo), F(hi));
  /* The fractional relaxation is convex; the float search may stop a
   * byte short of the minimum: give back what a byte could change. */
  best -= 1.0 / fmin(h2d, d2h);
#undef F
  return best;
}

/* The split bound: at the moments of the largest excess (at most K of
 * them, the steps whose working set leaves the least room), the best of
 * split_at over "while the step runs" (candidates: what lives across it
 * and it does not touch; compute before it and after it) and "after the
 * step" (candidates: all that lives across it). 0 when the per-step
 * costs do not add up to compute_s (the in-core run was faster than the
 * cost table: the split would not be a bound). O(K acts log acts +
 * steps x algorithms). */
static double
split_bound(const ooc_liveness *lv, const ooc_costs *costs, int no_update,
            const int64_t *live, double avail, double compute_s, double h2d,
            double d2h)
{
  enum { K = 24 };
  int32_t top[K], n_top = 0, s, i, a, k;
  double ex_top[K], best = 0, sum = 0;
  double *pre = malloc(sizeof(double) * ((size_t)lv->n_steps + 1));
  cand *c = malloc(sizeof *c * ((size_t)lv->n_acts + 1));
  double *pb = malloc(sizeof(double) * ((size_t)lv->n_acts + 1));
  double *pr = malloc(sizeof(double) * ((size_t)lv->n_acts + 1));
  uint8_t *touch = calloc((size_t)lv->n_acts + 1, 1);

  if (pre == NULL || c == NULL || pb == NULL || pr == NULL || touch == NULL)
    goto done;
  pre[0] = 0;
  for (s = 0; s < lv->n_steps; s++)
    pre[s + 1] = pre[s] + (no_update && lv->steps[s].phase == OOC_PH_UPDATE
                               ? 0
                               : (double)step_min_ns(lv, costs, s) * 1e-9);
  sum = pre[lv->n_steps];
  if (sum > compute_s * (1 + 1e-9) + 1e-12)
    goto done;
  /* The K steps of largest excess while they run. */
  for (s = 0; s < lv->n_steps; s++) {
    double shared = 0, ex;
    for (k = 0; k < lv->step_nacts[s]; k++) {
      a = lv->step_acts[lv->step_first[s] + k];
      if (a > 0 && ooc_kit_producer(lv, a) >= 0 &&
          ooc_kit_producer(lv, a) <= s && lv->act_last[a] > s)
        shared += (double)lv->act_bytes[a];
    }
    ex = fmax((double)live[s] - shared + (double)lv->step_bytes[s],
              (double)live[s]) - avail;
    if (ex <= 0)
      continue;
    if (n_top < K) {
      top[n_top] = s;
      ex_top[n_top++] = ex;
    } else {
      int32_t w = 0;
      for (i = 1; i < K; i++)
        if (ex_top[i] < ex_top[w])
          w = i;
      if (ex > ex_top[w]) {
        top[w] = s;
        ex_top[w] = ex;
      }
    }
  }
  for (i = 0; i < n_top; i++) {
    int during;
    s = top[i];
    for (k = 0; k < lv->step_nacts[s]; k++)
      touch[lv->step_acts[lv->step_first[s] + k]] = 1;
    for (during = 0; during <= 1; during++) {
      int32_t n = 0;
      double E, lb, held = 0;
      for (a = 1; a < lv->n_acts; a++) {
        int32_t p = ooc_kit_producer(lv, a);
        if (p < 0 || p > s || lv->act_last[a] <= s || lv->act_bytes[a] == 0)
          continue;
        if (during && touch[a]) {
          held += (double)lv->act_bytes[a];
          continue;
        }
        c[n].bytes = (double)lv->act_bytes[a];
        c[n].rc = (double)recomp_min_ns(costs, lv->act_layer[a]) * 1e-9;
        if (c[n].rc < 0)
          c[n].rc = 0;
        n++;
      }
      E = during ? (double)live[s] - held + (double)lv->step_bytes[s] - avail
                 : (double)live[s] - avail;
      if (E <= 0)
        continue;
      if (n > 1)
        qsort(c, (size_t)n, sizeof *c, cmp_cand);
      for (k = 0; k < n; k++) {
        pb[k] = (k > 0 ? pb[k - 1] : 0) + c[k].bytes;
        pr[k] = (k > 0 ? pr[k - 1] : 0) + c[k].rc;
      }
      /* During s: the kernel of s itself is on neither side. */
      lb = split_at(c, pb, pr, n, E, during ? pre[s] : pre[s + 1],
                    sum - pre[s + 1], h2d, d2h);
      if (lb > best)
        best = lb;
    }
    for (k = 0; k < lv->step_nacts[s]; k++)
      touch[lv->step_acts[lv->step_first[s] + k]] = 0;
  }
done:
  free(pre);
  free(c);
  free(pb);
  free(pr);
  free(touch);
  return best;
}

/* Parameter offload (docs/lower-bound.md, "Parameter offload"): covering
 * the excess E with y bytes of offloaded gradients and optimizer state
 * (at most ymax), each costing rho seconds of link time, x bytes swapped
 * and the rest recomputed: min over y and x of
 * max(C + r (E - y - x), x / beta + rho y). The inner minimum over x is
 * convex and piecewise linear in y, with its kinks where the best x
 * reaches 0 or E - y, so the minimum over y is at one of them or at an
 * end: exact, not a search. */
static double
offload_inner(double C, double E, double r, double beta, double rho,
              double y)
{
  double e = E - y, l0 = rho * y, x;

  if (e < 0)
    e = 0;
  if (e / beta + l0 <= C)
    return C;
  if (!isfinite(r))
    return e / beta + l0;
  x = (C + r * e - l0) / (1.0 / beta + r);
  if (x < 0)
    x = 0;
  if (x > e)
    x = e;
  return fmax(C + r * (e - x), x / beta + l0);
}

static double
offload_combine(double C, double E, double r, double beta, double ymax,
                double rho)
{
  double ys[4], best = INFINITY, y;
  int k;

  ys[0] = 0;
  ys[1] = fmin(E, ymax);
  ys[2] = isfinite(r) ? (C + r * E) / (r + rho) : 0;
  ys[3] = 1.0 / beta != rho ? (E / beta - C) / (1.0 / beta - rho) : 0;
  for (k = 0; k < 4; k++) {
    y = fmin(fmax(ys[k], 0), ys[1]);
    best = fmin(best, offload_inner(C, E, r, beta, rho, y));
  }
  return best;
}

double
ooc_lower_bound_compute(const ooc_liveness *lv, const ooc_costs *costs,
                        const ooc_hw *hw, uint64_t budget, double compute_s)
{
  ooc_timeline cross;
  int64_t *live = NULL;
  double peak = 0, avail, excess, r = INFINITY, beta, bound;
  double h2d, d2h, ymax = 0, rho_off = INFINITY, cpu_floor = 0;
  uint64_t fixed;
  int32_t a, s;
  int offload = 0;

  /* L(s): bytes of activations produced at or before step s and used
   * after it: each one on [producer, last use - 1] of the planning
   * toolkit's memory timeline (raw bytes). */
  if (ooc_timeline_init(&cross, lv->n_steps, NULL) != OOC_OK ||
      (live = calloc((size_t)lv->n_steps + 1, sizeof *live)) == NULL) {
    ooc_timeline_fini(&cross);
    return compute_s;
  }
  for (a = 1; a < lv->n_acts; a++) {
    int32_t layer = lv->act_layer[a];
    int32_t p = ooc_kit_producer(lv, a);
    double bytes = (double)lv->act_bytes[a];
    if (p < 0 || bytes <= 0)
      continue;
    if (recomp_min_ns(costs, layer) > 0) {
      double per_byte = (double)recomp_min_ns(costs, layer) * 1e-9 / bytes;
      if (per_byte < r)
        r = per_byte;
    }
    ooc_timeline_add(&cross, p, lv->act_last[a] - 1,
                     (int64_t)lv->act_bytes[a]);
  }
  ooc_timeline_values(&cross, live);
  ooc_timeline_fini(&cross);
  for (s = 0; s < lv->n_steps; s++) {
    double during, shared = 0;
    int32_t k;

    if ((double)live[s] > peak)
      peak = (double)live[s];
    /* While step s runs, its whole working set (step_bytes) is resident
     * beside the activations of L(s) it does not touch. */
    for (k = 0; k < lv->step_nacts[s]; k++) {
      a = lv->step_acts[lv->step_first[s] + k];
      if (a > 0 && ooc_kit_producer(lv, a) >= 0 &&
          ooc_kit_producer(lv, a) <= s && lv->act_last[a] > s)
        shared += (double)lv->act_bytes[a];
    }
    during = (double)live[s] - shared + (double)lv->step_bytes[s];
    if (during > peak)
      peak = during;
  }
  /* The input batch (act 0) is in persistent_bytes but may be swapped
   * out: give its room to the activations and ignore its own traffic. */
  fixed = lv->persistent_bytes;
  if (lv->n_acts > 0 && lv->act_bytes[0] <= fixed)
    fixed -= lv->act_bytes[0];
  avail = budget > fixed ? (double)(budget - fixed) : 0.0;
  excess = peak - avail;
  h2d = fmax(hw->h2d_Bps, hw->h2d_pageable_Bps);
  d2h = fmax(hw->d2h_Bps, hw->d2h_pageable_Bps);
  beta = hw->copy_engines >= 2 ? fmin(h2d, d2h)
                               : 1.0 / (1.0 / h2d + 1.0 / d2h);
  /* Parameter offload, where the profile prices a CPU optimizer: the
   * device step may leave the compute stream (the CPU's overlaps the
   * backward), and up to ymax bytes of gradients and optimizer state may
   * leave the device, each byte of layer l for at least
   * min(weights_l / h2d, gradients_l / d2h) / (gradients_l + state_l)
   * seconds of link time: its gradients go out and its weights come
   * back every iteration. */
  if (hw->host_opt_Bps > 0) {
    const ooc_model *m = lv->model;
    uint64_t max_g, off = ooc_liveness_offloadable(lv, 1, NULL, &max_g);
    double rho = INFINITY;
    for (s = 0; s < m->n_layers; s++) {
      const ooc_layer *y = &m->layers[s];
      double sb = (double)(y->grad_bytes + y->opt_bytes);
      if (!ooc_liveness_can_offload(lv, s) || sb <= 0)
        continue;
      /* Kept on the device: weights in once, gradients out; streamed:
       * weights in twice (forward, backward) for their bytes too. */
      rho = fmin(rho, fmin((double)y->param_bytes / h2d,
                           (double)y->grad_bytes / d2h) / sb);
      rho = fmin(rho, fmin(2.0 * (double)y->param_bytes / h2d,
                           (double)y->grad_bytes / d2h) /
                          (sb + (double)y->param_bytes));
    }
    ymax = off > max_g ? (double)(off - max_g) : 0;
    /* When the persistent state and the largest step do not fit beside
     * each other, at least that many bytes of gradients, optimizer state
     * (and weights) must leave the device, and the CPU steps their
     * layers one after another, each byte for at least kappa seconds. */
    if ((double)fixed + (double)lv->max_step_bytes > (double)budget) {
      double need = (double)fixed + (double)lv->max_step_bytes -
                    (double)budget, kappa = INFINITY;
      for (s = 0; s < m->n_layers; s++) {
        const ooc_layer *y = &m->layers[s];
        double sb = (double)(y->grad_bytes + y->opt_bytes + y->param_bytes);
        if (!ooc_liveness_can_offload(lv, s) || sb <= 0 ||
            costs->host_opt_ns[s] <= 0)
          continue;
        kappa = fmin(kappa, (double)costs->host_opt_ns[s] * 1e-9 / sb);
      }
      if (isfinite(kappa))
        cpu_floor = kappa * need;
    }
    if (ymax > 0 && isfinite(rho)) {
      compute_s -= fmin(compute_s, (double)costs->update_ns * 1e-9);
      offload = 1;
    }
    rho_off = rho;
  }
  bound = offload && excess > 0
              ? offload_combine(compute_s, excess, r, beta, ymax, rho_off)
              : ooc_lower_bound_combine(compute_s, excess, r, beta);
  bound = fmax(bound, cpu_floor);
  if (excess > 0)
    bound = fmax(bound, split_bound(lv, costs, offload, live, avail + ymax,
                                    compute_s,
                                    h2d, d2h));
  free(live);
  return bound;
}

double
ooc_lower_bound_combine(double compute_s, double excess_bytes,
                        double recompute_s_per_byte, double link_Bps)
{
  double x, r = recompute_s_per_byte;

  if (excess_bytes <= 0 || excess_bytes / link_Bps <= compute_s)
    return compute_s;
  if (!isfinite(r))
    return excess_bytes / link_Bps;
  /* Swap x bytes, recompute the rest: min over x of
   * max(C + r (E - x), x / beta), reached where the two meet. */
  x = (compute_s + r * excess_bytes) / (1.0 / link_Bps + r);
  return x / link_Bps;
}
