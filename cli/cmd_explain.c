/* cli/cmd_explain.c — `oocsim explain`: what a planner decided per tensor
 * class and what each decision costs (analysis/explain.h).
 *
 * Ownership: everything is local to one command run. Cost: one planner
 * run and two simulations.
 */
#include "config.h"

#include <stdio.h>

#include "cli/commands.h"
#include "cli/args.h"
#include "analysis/explain.h"

static const ooc_cli_doc explain_doc = {
  .name = "explain", .cmd = OOC_CMD_EXPLAIN,
  .usage = "Usage: oocsim explain -m MODEL -b BATCH --hw HW -p PLANNER "
           "[--budget SIZE]\n"
           "                      [--allocator A] [--opt K=V ...] [--json]\n",
  .about =
    "Explain a plan: per tensor class (the op that produced the\n"
    "activation; \"gradient\" for swapped activation gradients), how many\n"
    "tensors the planner kept, swapped and recomputed, the bytes it moved,\n"
    "and what each decision costs in the simulated iteration: the compute\n"
    "stream's idle time waiting for those tensors' swap-ins and swap-outs,\n"
    "and the time rebuilding them. Classes are sorted by cost.\n",
  .examples =
    "  oocsim explain -m resnet50 -b 512 --hw v100-pcie3 -p window\n",
};

int
ooc_cmd_explain(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_scenario_spec spec;
  ooc_explain x;
  int rc = 1;

  ooc_explain_init(&x);
  if (ooc_cli_args_start(&a, argc, argv, &explain_doc, 0,
                         OOC_CLI_MODEL | OOC_CLI_BATCH | OOC_CLI_HW |
                         OOC_CLI_PLANNER, &rc))
    goto done;
  ooc_cli_args_spec(&a, &spec);
  if (ooc_explain_run(&spec, &x, &err) < 0)
    goto fail;
  if (a.no_timing)
    ooc_summary_clear_timing(&x.sum);
  if ((a.json ? ooc_explain_write_json(stdout, &x)
              : ooc_explain_write_text(stdout, &x)) < 0) {
    ooc_err_set(&err, OOC_EIO, "cannot write the explanation");
    goto fail;
  }
  rc = 0;
  goto done;
fail:
  rc = ooc_cli_fail("%s", err.msg);
done:
  ooc_explain_fini(&x);
  ooc_cli_args_fini(&a);
  return rc;
}
