/* analysis/benchset.h — the planner benchmark's scenario set
 * (`make bench-planners`, docs/planners.md; issue 12): every zoo model on
 * four profiles at 2x, 4x and 8x its in-core maximum batch (the largest
 * batch the incore planner fits on that profile). A scenario whose
 * largest step's working set exceeds the budget is not one (no plan can
 * exist); the planners say so ("no plan can fit").
 *
 * One list for bench/planners.c and tests/check_bench_bound.c, so that
 * the test's "every benchmark scenario" is the benchmark's.
 *
 * Cost: ooc_benchset_incore_max is one ooc_maxbatch_find, O(log batch)
 * plans and simulations of the incore planner.
 */
#ifndef OOC_BENCHSET_H
#define OOC_BENCHSET_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"

/* The profiles, NULL-terminated. */
extern const char *const ooc_benchset_profiles[];

/* The multiples of the in-core maximum batch. */
#define OOC_BENCHSET_NMULTS 3
extern const int ooc_benchset_mults[OOC_BENCHSET_NMULTS];

/* The largest batch the incore planner trains for model (with the
 * overrides sets[0 .. n_sets)) on profile hw, into *b (0: not even 1).
 * Errors are those of a scenario run. */
int ooc_benchset_incore_max(const char *model, const char *hw,
                            const ooc_kv *sets, int n_sets, int64_t *b,
                            ooc_err *err);

#endif
