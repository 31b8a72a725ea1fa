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
#include "plan/toolkit.h"

double
ooc_lower_bound_compute(const ooc_liveness *lv, const ooc_costs *costs,
                        const ooc_hw *hw, uint64_t budget, double compute_s)
{
  ooc_timeline cross;
  int64_t *live = NULL;
  double peak = 0, avail, excess, r = INFINITY, beta;
  double h2d, d2h;
  uint64_t fixed;
  int32_t a, s;

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
    if (costs->recomp_ns[layer] > 0) {
      double per_byte = (double)costs->recomp_ns[layer] * 1e-9 / bytes;
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
  free(live);

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
  return ooc_lower_bound_combine(compute_s, excess, r, beta);
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
