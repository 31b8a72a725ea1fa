/* cli/cmd_minbudget.c — `oocsim minbudget -m MODEL -b BATCH --hw HW
 * -p PLANNER[,...|all] [--allocator A] [--json]`: the smallest device
 * budget at which one of the planners fits (analysis/minbudget.h), the
 * planner, its summary there and the number of simulations; and the
 * one-line hint simulate and compare print under an infeasible result.
 *
 * Ownership: everything is local to one command run. Cost: see
 * analysis/minbudget.h.
 */
#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/args.h"
#include "analysis/minbudget.h"
#include "base/progress.h"
#include "planners/registry.h"
#include "base/util.h"

static const ooc_cli_doc doc = {
  .name = "minbudget", .cmd = OOC_CMD_MINBUDGET,
  .usage = "Usage: oocsim minbudget -m MODEL -b BATCH --hw HW "
           "[-p P1,P2,...|all]\n"
           "                        [--allocator A] [--opt K=V ...] [--json]\n",
  .about =
    "Find the smallest device budget (to 1 MiB) at which one of the planners\n"
    "fits the scenario, and which planner that is. No plan fits below the\n"
    "largest working set of one step (persistent state plus the step's\n"
    "tensors; for a planner that may run optimizer steps on the CPU,\n"
    "zero-offload or joint, with those parameters on the host), so the\n"
    "search starts at the least of the planners': each is tried there, in\n"
    "order, and the first that fits is the answer. Else the upper end is\n"
    "the profile's usable memory, doubled until a planner fits, and each\n"
    "planner is bisected below the best budget found so far. Each probe is\n"
    "one plan and simulation. Prints the budget, the planner, the working\n"
    "set, the number of simulations and the summary at that budget; --json\n"
    "prints\n"
    "{\"model\", \"hw\", \"batch\", \"allocator\", \"planners\", "
    "\"working_set_bytes\",\n"
    "\"min_budget_bytes\", \"planner\", \"simulations\", \"at\": summary "
    "or null}.\n"
    "A progress line is drawn on stderr when it is a terminal.\n",
  .examples =
    "  oocsim minbudget -m resnet50 -b 512 --hw v100-nvlink2 -p all\n"
    "  oocsim minbudget -m resnet50 -b 256 --hw v100-pcie3 -p window,vdnn "
    "--json\n",
};

/* The registered planners that are not OOC_PLANNER_COSTLY into quick (at
 * most 64); *left_out counts the others. Returns how many. */
static int
quick_planners(const ooc_planner_type *const *ts,
               const ooc_planner_type **quick, int *left_out)
{
  int k, nq = 0;

  *left_out = 0;
  for (k = 0; ts[k] != NULL && nq < 64; k++) {
    if (ts[k]->flags & OOC_PLANNER_COSTLY)
      (*left_out)++;
    else
      quick[nq++] = ts[k];
  }
  return nq;
}

/* The hint's search stops once its probes have simulated this many
 * events, or once those and the planners' other work (work_events:
 * checkpoint-dp's rotor tables, zero-offload's through it) come to
 * HINT_MAX_WORK (ooc_minbudget_find_capped): a command that ran one plan
 * should not spend long on a hint. At 16 and 32 times the in-core max
 * batch of the benchmark's 54 model/profile pairs, the events stay below
 * their cap (at most 7.6 x 10^6), while the work came to 7.4 x 10^7
 * (resnet152 b18048 on gh200-c2c, 8.2 s): 12 of the 108 hints now stop
 * at the work cap, each within 0.6% of the exact budget (resnet152 there
 * 429.15 GiB for 428.71, in 3.4 s), and the other 96 are unchanged.
 * resnet at depth=1202, b2048 on v100-pcie3 went from 10.1 s to 4.5 s
 * (no run at the answer either: only its budget is printed);
 * gpt2 at 4,000 layers on h200-pcie5 took 58 probes and 22 s, 33 and
 * 6 s under the events cap. */
#define HINT_MAX_EVENTS 1e7
#define HINT_MAX_WORK 3e7

/* The hint under an infeasible simulate or compare: the smallest budget
 * at which one of ts[0 .. n) fits, the planners compare ran; for
 * simulate (ts NULL), every registered planner that is not
 * OOC_PLANNER_COSTLY, so that the hint costs about what the command did
 * (a pooch or joint search per probe made a simulate of gpt2 at 4,000
 * layers run for more than 5 minutes, 20 s now). The line says when
 * planners were left out. */
int
ooc_cli_minbudget_hint(FILE *f, const ooc_scenario_spec *spec,
                       const ooc_planner_type *const *ts, int n)
{
  const ooc_planner_type *quick[64];
  /* Only the budget and the planner are printed: no run at the answer. */
  const ooc_minbudget_caps caps = { .max_events = HINT_MAX_EVENTS,
                                    .max_work = HINT_MAX_WORK,
                                    .no_final_run = 1 };
  ooc_minbudget_result res;
  ooc_progress prog;
  ooc_scenario_spec s = *spec;
  ooc_err err = { 0 };
  char b[32];
  int rc, left_out = 0;

  if (ts == NULL) {
    n = quick_planners(ooc_planner_types, quick, &left_out);
    ts = quick;
  }
  s.budget = 0;
  /* The user's --opt were for the planner that ran (pooch's and
   * superneurons' stage values differ): the others at their defaults. */
  s.opts_planner = spec->planner;
  ooc_progress_begin(&prog, isatty(2) ? stderr : NULL, "minbudget");
  rc = ooc_minbudget_find_capped(&s, ts, n, &caps, &prog, &res, &err);
  ooc_progress_end(&prog);
  if (rc < 0)
    return ooc_cli_fail("smallest budget: %s", err.msg);
  if (res.capped && res.budget > 0)
    fprintf(f, "a budget that fits: %s with planner %s (the search for "
            "the smallest stopped after %d simulations; oocsim minbudget "
            "goes on)\n", ooc_fmt_bytes(res.budget, b, sizeof b),
            res.planner, res.simulations);
  else if (res.capped)
    fprintf(f, "smallest budget that fits: none found in %d simulations "
            "(oocsim minbudget goes on)\n", res.simulations);
  else if (res.budget > 0)
    fprintf(f, "smallest budget that fits: %s with planner %s%s\n",
            ooc_fmt_bytes(res.budget, b, sizeof b), res.planner,
            left_out > 0 ? " (of the quick planners; oocsim minbudget "
                           "tries every one)" : "");
  else
    fprintf(f, "smallest budget that fits: none up to %s%s\n",
            ooc_fmt_bytes(res.ceiling, b, sizeof b),
            left_out > 0 ? " (of the quick planners; oocsim minbudget "
                           "tries every one)" : "");
  ooc_minbudget_result_fini(&res);
  return 0;
}

static int
print_json(const ooc_summary *model_of, const ooc_cli_args *a,
           const ooc_planner_type **ts, int n,
           const ooc_minbudget_result *res, const char *model,
           const char *hw)
{
  cJSON *o = cJSON_CreateObject(), *arr, *s;
  char *text = NULL;
  int ok, i;

  (void)model_of;
  if (o == NULL)
    return OOC_ENOMEM;
  ok = cJSON_AddStringToObject(o, "model", model) &&
       cJSON_AddStringToObject(o, "hw", hw) &&
       cJSON_AddNumberToObject(o, "batch", (double)a->batch) &&
       cJSON_AddStringToObject(o, "allocator",
                               a->allocator ? a->allocator : "caching") &&
       (arr = cJSON_AddArrayToObject(o, "planners")) != NULL;
  for (i = 0; ok && i < n; i++) {
    cJSON *p = cJSON_CreateString(ts[i]->name);
    ok = p != NULL && cJSON_AddItemToArray(arr, p);
  }
  ok = ok && cJSON_AddNumberToObject(o, "working_set_bytes",
                                     (double)res->working_set);
  if (ok && res->budget > 0)
    ok = cJSON_AddNumberToObject(o, "min_budget_bytes",
                                 (double)res->budget) &&
         cJSON_AddStringToObject(o, "planner", res->planner);
  else if (ok)
    ok = cJSON_AddNullToObject(o, "min_budget_bytes") &&
         cJSON_AddNullToObject(o, "planner");
  ok = ok && cJSON_AddNumberToObject(o, "simulations", res->simulations);
  if (ok && res->budget > 0) {
    ok = (s = ooc_summary_to_cjson(&res->at)) != NULL;
    if (ok)
      cJSON_AddItemToObject(o, "at", s);
  } else if (ok) {
    ok = cJSON_AddNullToObject(o, "at") != NULL;
  }
  if (!ok || (text = cJSON_Print(o)) == NULL) {
    cJSON_Delete(o);
    return OOC_ENOMEM;
  }
  puts(text);
  free(text);
  cJSON_Delete(o);
  return OOC_OK;
}

int
ooc_cmd_minbudget(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_scenario_spec spec;
  ooc_scenario *sc = NULL;
  ooc_minbudget_result res = { .budget = 0 };
  ooc_progress prog;
  const ooc_planner_type **ts = NULL;
  char *model = NULL, *hw = NULL, b1[32], b2[32];
  int n = 0, rc;

  if (ooc_cli_args_start(&a, argc, argv, &doc, 0,
                         OOC_CLI_MODEL | OOC_CLI_BATCH | OOC_CLI_HW, &rc))
    goto done;
  if (ooc_cli_parse_planners(a.planner != NULL ? a.planner : "all", &ts, &n,
                             &err) < 0 ||
      ooc_cli_check_opts(&a, ts, n, &err) < 0)
    goto fail;
  ooc_cli_args_spec(&a, &spec);
  /* The names as the summary gives them, and clear errors up front. */
  if (ooc_scenario_open(&spec, &sc, &err) < 0)
    goto fail;
  model = strdup(ooc_scenario_model(sc)->name);
  hw = strdup(ooc_scenario_hw(sc)->name);
  ooc_scenario_close(sc);
  sc = NULL;
  if (model == NULL || hw == NULL) {
    ooc_err_set(&err, OOC_ENOMEM, "out of memory");
    goto fail;
  }
  ooc_progress_begin(&prog, isatty(2) ? stderr : NULL, "minbudget");
  rc = ooc_minbudget_find(&spec, (const ooc_planner_type *const *)ts, n,
                          &prog, &res, &err);
  ooc_progress_end(&prog);
  if (rc < 0)
    goto fail;
  if (a.no_timing && res.budget > 0)
    ooc_summary_clear_timing(&res.at);
  if (a.json) {
    if (print_json(NULL, &a, ts, n, &res, model, hw) < 0) {
      ooc_err_set(&err, OOC_ENOMEM, "out of memory");
      goto fail;
    }
  } else {
    if (res.budget > 0)
      printf("smallest budget that fits: %s with planner %s\n",
             ooc_fmt_bytes(res.budget, b1, sizeof b1), res.planner);
    else
      printf("smallest budget that fits: none up to %s\n",
             ooc_fmt_bytes(res.ceiling, b1, sizeof b1));
    printf("no plan fits below the working set %s; %d simulations\n",
           ooc_fmt_bytes(res.working_set, b2, sizeof b2), res.simulations);
    if (res.budget > 0) {
      printf("\nat %s:\n", b1);
      ooc_summary_write_text(stdout, &res.at);
    }
  }
  rc = 0;
  goto done;
fail:
  rc = ooc_cli_fail("%s", err.msg);
done:
  ooc_minbudget_result_fini(&res);
  free(ts);
  free(model);
  free(hw);
  ooc_scenario_close(sc);
  ooc_cli_args_fini(&a);
  return rc;
}
