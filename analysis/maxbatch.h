/* analysis/maxbatch.h — the largest batch a planner can train on a
 * profile: doubling from batch 1 until a batch does not fit, then
 * bisection between the last that fitted and the first that did not.
 *
 * A planner's feasibility need not be monotone in the batch: its
 * heuristics change with the batch, and a plan for b may run out of
 * memory where b + 4's fits (checkpoint-dp's on resnet50 on v100-nvlink2
 * fails at 640 and fits at 700). So once the bisection has found a batch
 * hi that does not fit, the search looks ahead at hi + 1, hi + 2, hi + 4,
 * ... up to hi + hi / 8; when one fits, it gallops up from there (the step
 * doubling) to one that does not, bisects again and looks ahead again.
 * The answer is the largest batch found that fits with the next one not
 * fitting; a larger one may still fit beyond the look-ahead's reach. A
 * batch whose working set exceeds the budget, or whose bytes overflow,
 * counts as not fitting and ends the search: no larger batch fits then.
 *
 * Ownership: the spec is borrowed; at_max is caller-embedded
 * (ooc_summary_fini). Cost: O(log max) scenario opens and runs, each a
 * planner run and a simulation; the in-core baseline only at the result,
 * whose planner is not run again.
 */
#ifndef OOC_MAXBATCH_H
#define OOC_MAXBATCH_H

#include <stdint.h>
#include "base/error.h"
#include "base/progress.h"
#include "analysis/scenario.h"
#include "analysis/summary.h"

/* The largest batch ooc_maxbatch_find tries; a result equal to it means
 * "at least this much". */
#define OOC_MAXBATCH_CAP ((int64_t)1 << 30)

/* Largest feasible batch for spec (spec->batch ignored); *best = 0 when
 * even batch 1 does not fit. at_max receives the summary at the best
 * batch, that of the search's own run of it, with the baseline and bound
 * added (empty when *best is 0 or on an error). Errors are those of a
 * scenario run. */
int ooc_maxbatch_find(const ooc_scenario_spec *spec, int64_t *best,
                      ooc_summary *at_max, ooc_err *err);

/* What stops the batch after the largest: the first batch that does not
 * fit, and why. */
typedef enum {
  OOC_LIMIT_NONE = 0,     /* the search reached the cap, or the batch's
                             bytes overflow */
  OOC_LIMIT_WORKING_SET,  /* the working set of one step exceeds the
                             budget: no plan can fit this batch */
  OOC_LIMIT_LARGEST_STEP, /* the plan ran out of memory at the step with
                             the largest working set */
  OOC_LIMIT_OOM           /* the plan ran out of memory at another step */
} ooc_limit_kind;

typedef struct ooc_maxbatch_limit {
  int64_t batch;          /* best + 1; 0 when the search reached the cap */
  ooc_limit_kind kind;
  char op[160];           /* the step the OOM names: "fwd res3_3_add" */
  int64_t hole;           /* a batch below the best that does not fit (the
                             first the bisection found), 0 when the search
                             found none: feasibility is not monotone */
} ooc_maxbatch_limit;

/* "working_set", "largest_step", "oom", "" (none). */
const char *ooc_limit_kind_name(ooc_limit_kind k);

/* ooc_maxbatch_find, and the limit (may be NULL) of the batch after the
 * best: the first that does not fit, the step its OOM names and whether
 * that is the step with the largest working set. Costs nothing more: the
 * search has run that batch already. */
int ooc_maxbatch_find_limit(const ooc_scenario_spec *spec, int64_t *best,
                            ooc_summary *at_max, ooc_maxbatch_limit *limit,
                            ooc_err *err);

/* ooc_maxbatch_find_limit, showing on prog (base/progress.h; NULL: nothing)
 * the batches tried: no total while doubling, the probes left once
 * bisecting. */
int ooc_maxbatch_search(const ooc_scenario_spec *spec, ooc_progress *prog,
                        int64_t *best, ooc_summary *at_max,
                        ooc_maxbatch_limit *limit, ooc_err *err);

#endif
