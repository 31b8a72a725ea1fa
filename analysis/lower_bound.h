/* analysis/lower_bound.h — the time per iteration no plan can beat
 * (docs/lower-bound.md): compute, the bytes that cannot stay on the device
 * at the worst step boundary, and the cheapest way to get rid of them
 * (swap over the link or recompute).
 *
 * Pure functions of their arguments: nothing is allocated that outlives a
 * call, and they may run on several threads at once. Cost: O(activations +
 * steps) for ooc_lower_bound_compute, O(1) for ooc_lower_bound_combine.
 */
#ifndef OOC_LOWER_BOUND_H
#define OOC_LOWER_BOUND_H

#include <stdint.h>
#include "ir/hw.h"
#include "sim/cost.h"
#include "plan/plan.h"

/* The lower bound in seconds for a device budget (bytes), given the
 * liveness, costs and profile of one (model, batch, profile) and the
 * compute time of one iteration (compute_s, seconds: see baseline.h). When
 * out of memory it returns compute_s, still a bound. */
double ooc_lower_bound_compute(const ooc_liveness *lv, const ooc_costs *costs,
                               const ooc_hw *hw, uint64_t budget,
                               double compute_s);

/* The last step of the bound: compute time C (s), excess bytes E that must
 * be absent at some step boundary, the cheapest recompute cost r (s per
 * byte; INFINITY when none) and the effective link rate beta (bytes/s for
 * x bytes out and back). Returns
 * max(C, min over x in [0,E] of max(C + r (E - x), x / beta)). */
double ooc_lower_bound_combine(double compute_s, double excess_bytes,
                               double recompute_s_per_byte, double link_Bps);

#endif
