/* planners/naive.c — the SuperNeurons baseline: nothing is freed during the
 * iteration, so every forward output and every gradient stays until the
 * optimizer step (peak = sum of l_i^f + sum of l_i^b, SuperNeurons §3.2).
 * Workspaces are still released after each kernel.
 *
 * Cost: O(1): it only sets OOC_PLAN_NO_FREE; lowering does the rest.
 */
#include "config.h"

#include <stdio.h>

#include "plan/planner.h"

static int
naive_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *plan,
           ooc_err *err)
{
  (void)state;
  (void)ctx;
  (void)err;
  plan->flags = OOC_PLAN_NO_FREE;
  snprintf(plan->note, sizeof plan->note,
           "nothing freed until the optimizer step");
  return OOC_OK;
}

static const char *const naive_options[] = { NULL };

const ooc_planner_type ooc_planner_naive = {
  .name = "naive",
  .summary = "no liveness: nothing freed during the iteration (baseline)",
  .cite = "SuperNeurons paper (SuperNeurons: Dynamic GPU Memory Management "
          "for Training Deep Neural Networks) §3.2 (the baseline peak)",
  .state_size = 0,
  .options = naive_options,
  .plan = naive_plan,
};
