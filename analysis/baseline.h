/* analysis/baseline.h — the in-core baseline of a (model, batch, profile):
 * the incore planner (everything resident, freed after its last use) with
 * the ideal allocator on a device with unlimited memory, and the pure
 * compute time of one iteration that the lower bound starts from
 * (docs/lower-bound.md, C).
 *
 * Every summary's incore_iteration_s and slowdown compare with it.
 *
 * Ownership: borrows its arguments. Cost: one in-core plan (O(1)) and one
 * simulation; scenarios cache the result (ooc_scenario_baseline).
 */
#ifndef OOC_BASELINE_H
#define OOC_BASELINE_H

#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "sim/cost.h"
#include "plan/plan.h"

/* Simulate the in-core baseline. *incore_s receives its iteration time (0
 * when even the unlimited device cannot run it); *compute_s the smaller of
 * the cost table's forward + backward + update sum and the compute-stream
 * busy time of the baseline, so the bound holds whatever the engine adds
 * or omits. Errors are prefixed "in-core baseline: ". */
int ooc_baseline_compute(const ooc_model *m, const ooc_hw *hw,
                         const ooc_costs *costs, const ooc_liveness *lv,
                         double *incore_s, double *compute_s, ooc_err *err);

#endif
