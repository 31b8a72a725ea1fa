/* analysis/maxbatch.h — the largest batch a planner can train on a
 * profile: doubling from batch 1 until a batch does not fit, then
 * bisection between the last that fitted and the first that did not.
 *
 * Feasibility is taken to be monotone in the batch (a plan for batch b
 * fits b - 1 too); the search does not check it. A batch whose working
 * set exceeds the budget, or whose bytes overflow, counts as not fitting.
 *
 * Ownership: the spec is borrowed; at_max is caller-embedded
 * (ooc_summary_fini). Cost: O(log max) scenario opens and runs, each a
 * planner run and a simulation; the in-core baseline only at the result.
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
 * batch, baseline and bound included (empty when *best is 0). Errors are
 * those of a scenario run, and OOC_EINVAL when the best batch fits once
 * and not the second time (a non-deterministic planner). */
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
