/* planners/incore.c — everything resident; tensors freed after their last
 * use (liveness only, SuperNeurons §3.2). The reference every other plan
 * is compared with, and the in-core baseline on an unlimited device.
 *
 * Cost: O(1): the plan is empty; lowering does the work.
 */
#include "config.h"

#include <stdio.h>

#include "plan/planner.h"

static int
incore_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *plan,
            ooc_err *err)
{
  (void)state;
  (void)ctx;
  (void)err;
  snprintf(plan->note, sizeof plan->note,
           "liveness only: every tensor resident, freed after its last use");
  return OOC_OK;
}

static const char *const incore_options[] = { NULL };

const ooc_planner_type ooc_planner_incore = {
  .name = "incore",
  .summary = "liveness only: everything resident, freed after last use",
  .cite = "SuperNeurons paper (SuperNeurons: Dynamic GPU Memory Management "
          "for Training Deep Neural Networks) §3.2 (liveness analysis)",
  .state_size = 0,
  .options = incore_options,
  .plan = incore_plan,
};
