/* cli/cmd_sim.c — `oocsim plan`, `oocsim simulate` and `oocsim maxbatch`.
 *
 *   plan      run a planner on a scenario and write its lowered program and
 *             the scenario that produced it to PLAN.json (ir/plan_io.h)
 *   simulate  PLAN.json, or a one-shot -m/-b/--hw/-p scenario: the summary
 *             object (--json) or readable text, a Chrome trace (--trace),
 *             the memory curve (--mem-csv) and the timeline the Gantt plot
 *             draws (--timeline-csv). Both forms print the same
 *             result for the same scenario; --no-timing zeroes the wall
 *             times so the outputs compare byte for byte.
 *   maxbatch  the largest batch a planner fits, by doubling then bisection
 *             (ooc_maxbatch_find)
 *
 * Ownership: everything is local to one command run. Cost: one scenario run
 * (plan, simulate), or O(log max_batch) of them (maxbatch).
 */
#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/args.h"
#include "planners/registry.h"
#include "analysis/scenario.h"
#include "analysis/maxbatch.h"
#include "report/trace_out.h"
#include "ir/plan_io.h"
#include "base/atomic.h"
#include "base/progress.h"
#include "base/util.h"

/* --- plan -------------------------------------------------------------- */

static const ooc_cli_doc plan_doc = {
  .name = "plan", .cmd = OOC_CMD_PLAN,
  .usage = "Usage: oocsim plan -m MODEL -b BATCH --hw HW -p PLANNER "
           "[--budget SIZE]\n"
           "                   [--allocator A] [--opt K=V ...] -o PLAN.json\n",
  .about =
    "Run a planner and write the lowered program (ops on the compute,\n"
    "H2D and D2H streams, with their waits) together with the\n"
    "scenario it was planned for to PLAN.json. 'oocsim simulate\n"
    "PLAN.json' replays it and prints what the one-shot simulate\n"
    "prints; 'oocsim exec PLAN.json' replays it on real hardware.\n",
  .examples =
    "  oocsim plan -m resnet50 -b 512 --hw v100-nvlink2 -p window "
    "--allocator va -o plan.json\n",
};

/* A model or profile argument as the plan file records it: a zoo name as
 * is, a path made absolute so the plan replays from any directory. Returns
 * a heap string or NULL (out of memory, or a path that does not resolve:
 * the caller then keeps the argument). */
static char *
plan_ref(const char *arg)
{
  size_t n = strlen(arg);
  if (strchr(arg, '/') == NULL && (n < 5 || strcmp(arg + n - 5, ".json") != 0))
    return strdup(arg);
  return realpath(arg, NULL);
}

/* Fill the plan file's scenario fields (borrowed) from the options, the
 * loaded model and the summary; the program is a shallow copy. */
static void
plan_file_from(ooc_plan_file *pf, const ooc_cli_args *a, const char *model,
               const char *model_path, const char *hw, const ooc_model *m,
               const ooc_summary *s, const ooc_program *prog)
{
  *pf = (ooc_plan_file){
    .model = model,
    .model_path = model_path != NULL ? model_path : m->path,
    .batch = m->batch,
    .dtype = m->dtype,
    .precision = m->precision,
    .optimizer = m->optimizer,
    .sets = a->sets, .n_sets = a->n_sets,
    .hw = hw,
    .hw_sets = a->hw_sets, .n_hw_sets = a->n_hw_sets,
    .planner = s->planner,
    .opts = a->opts, .n_opts = a->n_opts,
    .allocator = s->allocator,
    .budget_bytes = s->budget_bytes,
    .iterations = a->iterations,
    .steady = a->steady,
    .note = s->plan_note,
    .program = *prog,
  };
}

/* Write the plan beside path (base/atomic.h), prepared: the caller
 * commits it once the summary is out, or aborts, which leaves an older
 * plan file as it was. */
static int
write_plan_file(ooc_atomic_file *af, const char *path, const ooc_plan_file *pf,
                ooc_err *err)
{
  int rc;

  if ((rc = ooc_atomic_open(af, path, err)) < 0)
    return ooc_err_prefix(err, rc, "-o: ");
  if ((rc = ooc_plan_file_write(af->f, pf, err)) < 0) {
    ooc_err_prefix(err, rc, "-o: cannot write '%s': ", path);
    ooc_atomic_abort(af);
    return rc;
  }
  if ((rc = ooc_atomic_prepare(af, err)) < 0) {
    ooc_atomic_abort(af);
    return ooc_err_prefix(err, rc, "-o: ");
  }
  return OOC_OK;
}

int
ooc_cmd_plan(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_scenario_spec spec;
  ooc_summary sum = { 0 };
  ooc_program prog;
  ooc_model *model = NULL;
  ooc_scenario_out out = { .program = &prog, .model = &model };
  ooc_plan_file pf;
  ooc_atomic_file af;
  char *model_ref = NULL, *hw_ref = NULL, *model_path = NULL;
  int rc = 1;

  ooc_program_init(&prog);
  if (ooc_cli_args_start(&a, argc, argv, &plan_doc, 0,
                         OOC_CLI_MODEL | OOC_CLI_BATCH | OOC_CLI_HW |
                         OOC_CLI_PLANNER | OOC_CLI_OUTPUT, &rc))
    goto done;
  {
    /* A model or profile file read, named by path or by its zoo name,
     * is not the plan file written. */
    const char *opt[1] = { "-o" }, *path[1] = { a.output };
    if (ooc_cli_check_not_inputs("-m", a.model, "--hw", a.hw, opt, path, 1,
                                 &err) < 0)
      goto fail;
  }
  ooc_cli_args_spec(&a, &spec);
  if (ooc_scenario_run(&spec, &sum, &out, &err) < 0)
    goto fail;
  if (!sum.feasible && prog.n_instr == 0) {
    /* The profile's memory is below the working set: no plan exists. */
    ooc_err_set(&err, OOC_EINVAL, "no plan to write: step '%s': %s",
                sum.oom_op, sum.oom.reason);
    goto fail;
  }
  model_ref = plan_ref(a.model);
  hw_ref = plan_ref(a.hw);
  /* The file it resolved to, however the data directory was spelled. */
  model_path = model->path != NULL ? realpath(model->path, NULL) : NULL;
  plan_file_from(&pf, &a, model_ref != NULL ? model_ref : a.model,
                 model_path, hw_ref != NULL ? hw_ref : a.hw, model, &sum,
                 &prog);
  if (write_plan_file(&af, a.output, &pf, &err) < 0)
    goto fail;
  if (a.no_timing)
    ooc_summary_clear_timing(&sum);
  if (a.json)
    ooc_summary_write_json(stdout, &sum, 1);
  else if (sum.feasible)
    printf("%s: %s on %s, batch %lld, %s allocator: feasible (%.6f s per "
           "iteration)\n", a.output, sum.planner, sum.hw,
           (long long)sum.batch, sum.allocator, sum.iteration_s);
  else      /* no time: an infeasible run has none (null in JSON) */
    printf("%s: %s on %s, batch %lld, %s allocator: INFEASIBLE\n",
           a.output, sum.planner, sum.hw, (long long)sum.batch,
           sum.allocator);
  /* The plan file only when the summary got out: all or nothing. */
  if (ooc_cli_stdout_check(&err) < 0) {
    ooc_atomic_abort(&af);
    goto fail;
  }
  if (ooc_atomic_commit(&af, &err) < 0) {
    ooc_err_prefix(&err, OOC_EIO, "-o: ");
    goto fail;
  }
  rc = 0;
  goto done;
fail:
  rc = ooc_cli_fail("%s", err.msg);
done:
  free(model_ref);
  free(model_path);
  free(hw_ref);
  ooc_summary_fini(&sum);
  ooc_model_free(model);
  ooc_program_fini(&prog);
  ooc_cli_args_fini(&a);
  return rc;
}

/* --- simulate ------------------------------------------------------------ */

static const ooc_cli_doc simulate_doc = {
  .name = "simulate", .cmd = OOC_CMD_SIMULATE,
  .usage = "Usage: oocsim simulate PLAN.json [--allocator A] [--budget SIZE]\n"
           "                       [--iterations N] [--steady]\n"
           "                       [--json] [--trace FILE] [--mem-csv FILE]\n"
           "                       [--timeline-csv FILE]\n"
           "       oocsim simulate -m MODEL -b BATCH --hw HW -p PLANNER ...\n"
           "                       [--json] [--trace FILE] [--mem-csv FILE]\n",
  .about =
    "Predict the time and memory of one training iteration: the summary\n"
    "object (oocsim(1), SUMMARY OBJECT) with --json, else a readable\n"
    "summary. A PLAN.json written by 'oocsim plan' is replayed with the\n"
    "model and profile it names (its fingerprint must match the model);\n"
    "the result equals the one-shot form's (but for planner_metrics:\n"
    "the planner does not run). --allocator and --budget may\n"
    "override the plan's for a what-if. When the one-shot form is\n"
    "infeasible and no --budget was given, the text output adds the\n"
    "smallest budget at which one of the planners quick to plan fits\n"
    "(oocsim minbudget, without lms, window, pooch, superneurons and\n"
    "joint).\n",
  .examples =
    "  oocsim simulate -m resnet50 -b 64 --hw h100-pcie5 -p incore --json\n"
    "  oocsim simulate plan.json --trace trace.json --mem-csv mem.csv\n",
};

/* The summary on stdout and every file asked for, all or none: each file
 * is written beside its target and prepared (base/atomic.h), the summary
 * flushed, and only then are the files renamed into place, so that one
 * output that cannot be written (a full disk, /dev/full, a closed
 * stdout) leaves the others as they were. */
static int
write_outputs(const ooc_cli_args *a, const ooc_summary *sum, const ooc_model *m,
              const ooc_program *prog, const ooc_trace *tr, ooc_err *err)
{
  const char *opt[3] = { "--timeline-csv", "--trace", "--mem-csv" };
  const char *path[3] = { a->timeline_csv, a->trace, a->mem_csv };
  ooc_atomic_file af[3];
  int at[3], k, n = 0, rc = OOC_OK;

  for (k = 0; k < 3 && rc == OOC_OK; k++) {
    if (path[k] == NULL)
      continue;
    if ((rc = ooc_atomic_open(&af[n], path[k], err)) < 0) {
      ooc_err_prefix(err, rc, "%s: ", opt[k]);
      break;
    }
    at[n++] = k;
    rc = k == 0 ? ooc_trace_write_timeline(af[n - 1].f, m, prog, tr)
         : k == 1 ? ooc_trace_write_chrome(af[n - 1].f, m, prog, tr)
                  : ooc_trace_write_mem_csv(af[n - 1].f, tr);
    if (rc == OOC_ENOMEM) {
      ooc_err_set(err, rc, "out of memory");
    } else {
      /* A write error is also the stream's: prepare says why. */
      int prc = ooc_atomic_prepare(&af[n - 1], err);
      if (prc < 0 || rc < 0) {
        if (prc == OOC_OK)
          ooc_err_set(err, OOC_EIO, "cannot write '%s'", path[k]);
        rc = ooc_err_prefix(err, OOC_EIO, "%s: ", opt[k]);
      }
    }
  }
  if (rc == OOC_OK) {
    if (a->json)
      rc = ooc_summary_write_json(stdout, sum, 1);
    else
      ooc_summary_write_text(stdout, sum);
    if (rc < 0)
      ooc_err_set(err, rc, "cannot write the summary");
    else
      rc = ooc_cli_stdout_check(err);
  }
  for (k = 0; k < n; k++) {
    if (rc < 0) {
      ooc_atomic_abort(&af[k]);
    } else if ((rc = ooc_atomic_commit(&af[k], err)) < 0) {
      ooc_err_prefix(err, rc, "%s: ", opt[at[k]]);
    }
  }
  return rc;
}

int
ooc_cmd_simulate(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_scenario_spec spec;
  ooc_summary sum = { 0 };
  ooc_program prog;
  ooc_trace tr;
  ooc_model *model = NULL;
  ooc_scenario_out out = { .program = &prog, .model = &model };
  ooc_plan_file pf;
  int pf_loaded = 0, rc = 1;

  ooc_program_init(&prog);
  ooc_trace_init(&tr);
  if (ooc_cli_args_start(&a, argc, argv, &simulate_doc, 1, 0, &rc))
    goto done;
  if (a.trace != NULL || a.mem_csv != NULL || a.timeline_csv != NULL)
    out.trace = &tr;
  {
    /* Every output writable and each its own file, none the plan file
     * or the one-shot form's model and profile files read (by path or
     * zoo name; a plan file's are checked once it is read, below), before
     * any is written: a failure must not leave the first ones behind. */
    char *mf = ooc_cli_input_file("models", a.model);
    char *hf = ooc_cli_input_file("hwprofiles", a.hw);
    const char *opt[6] = { "the plan file", "-m", "--hw",
                           "--timeline-csv", "--trace", "--mem-csv" };
    const char *path[6] = { a.n_pos > 0 ? a.pos[0] : NULL, mf, hf,
                            a.timeline_csv, a.trace, a.mem_csv };
    int bad = ooc_cli_check_outputs(opt, path, 6, 3, &err) < 0;
    free(mf);
    free(hf);
    if (bad)
      goto fail;
  }
  if (a.n_pos > 1) {
    ooc_err_set(&err, OOC_EINVAL, "simulate: one plan file at most (got "
                "'%s' and '%s')", a.pos[0], a.pos[1]);
    goto fail;
  }
  if (a.n_pos == 1) {
    /* The plan file fixes the scenario: name the first option that
     * would change it. */
    const char *fixed = a.model != NULL ? "-m"
                        : ooc_cli_model_option(&a) != NULL
                            ? ooc_cli_model_option(&a)
                        : a.hw != NULL ? "--hw" : a.planner != NULL ? "-p"
                        : a.n_hw_sets > 0 ? "--hw-set"
                        : a.n_opts > 0 ? "--opt" : NULL;
    if (fixed != NULL) {
      ooc_err_set(&err, OOC_EINVAL, "simulate: %s cannot be given with a "
                  "plan file (%s fixes the scenario; only --allocator and "
                  "--budget override it)", fixed, a.pos[0]);
      goto fail;
    }
    if (ooc_cli_plan_file_read(a.pos[0], &pf, &err) < 0)
      goto fail;
    pf_loaded = 1;
    {
      /* Nor the model and profile files the plan names. */
      const char *opt[3] = { "--timeline-csv", "--trace", "--mem-csv" };
      const char *path[3] = { a.timeline_csv, a.trace, a.mem_csv };
      if (ooc_cli_check_not_inputs("the plan's model", pf.model,
                                   "the plan's profile", pf.hw, opt, path, 3,
                                   &err) < 0)
        goto fail;
    }
    /* An override is the user's option, not the plan file's field. */
    if (a.allocator != NULL &&
        ooc_scenario_check_allocator(a.allocator, &err) < 0) {
      ooc_err_prefix(&err, OOC_EINVAL, "--allocator: ");
      goto fail;
    }
    spec = (ooc_scenario_spec){
      .model = pf.model, .batch = pf.batch,
      .dtype_set = pf.precision == OOC_PREC_NONE, .dtype = pf.dtype,
      .precision = pf.precision,
      .optimizer = pf.optimizer,
      .sets = pf.sets, .n_sets = pf.n_sets,
      .hw = pf.hw, .hw_sets = pf.hw_sets, .n_hw_sets = pf.n_hw_sets,
      .planner = pf.planner,
      .opts = pf.opts, .n_opts = pf.n_opts,
      .allocator = a.allocator != NULL ? a.allocator : pf.allocator,
      .budget = a.budget != 0 ? a.budget : pf.budget_bytes,
      .budget_field = a.budget != 0 ? NULL : "scenario.budget_bytes",
      /* As it was planned, unless the options say otherwise. */
      .iterations = a.iterations > 0 ? a.iterations : pf.iterations,
      .steady = a.steady || pf.steady,
    };
    if (ooc_scenario_run_program(&spec, &pf.program, pf.note, &sum, &out,
                                 &err) < 0) {
      ooc_err_prefix(&err, err.code, "%s: ", a.pos[0]);
      goto fail;
    }
    if (a.no_timing)
      ooc_summary_clear_timing(&sum);
    if (write_outputs(&a, &sum, model, &pf.program, &tr,
                      &err) < 0)
      goto fail;
    /* The hint plans afresh, with each planner's defaults: the plan
     * file's options were its planner's, and are not checked here (a
     * replay does not run the planner), so a bad value in them must not
     * fail the command after its outputs are written. */
    spec.opts = NULL;
    spec.n_opts = 0;
    if (!a.json && !sum.feasible && a.budget == 0 &&
        (rc = ooc_cli_minbudget_hint(stdout, &spec, NULL, 0)) != 0)
      goto done;
  } else {
    if (ooc_cli_args_require(&a, OOC_CLI_MODEL | OOC_CLI_BATCH | OOC_CLI_HW |
                             OOC_CLI_PLANNER, &err) < 0)
      goto fail;
    ooc_cli_args_spec(&a, &spec);
    if (ooc_scenario_run(&spec, &sum, &out, &err) < 0)
      goto fail;
    if (a.no_timing)
      ooc_summary_clear_timing(&sum);
    if (write_outputs(&a, &sum, model, &prog, &tr, &err) < 0)
      goto fail;
    /* What budget would have worked: only in text, only when the user
     * left the budget to the profile (a --budget is a what-if). */
    if (!a.json && !sum.feasible && a.budget == 0 &&
        (rc = ooc_cli_minbudget_hint(stdout, &spec, NULL, 0)) != 0)
      goto done;
  }
  rc = 0;
  goto done;
fail:
  rc = ooc_cli_fail("%s", err.msg);
done:
  if (pf_loaded)
    ooc_plan_file_fini(&pf);
  ooc_summary_fini(&sum);
  ooc_model_free(model);
  ooc_trace_fini(&tr);
  ooc_program_fini(&prog);
  ooc_cli_args_fini(&a);
  return rc;
}

/* --- maxbatch ------------------------------------------------------------ */

static const ooc_cli_doc maxbatch_doc = {
  .name = "maxbatch", .cmd = OOC_CMD_MAXBATCH,
  .usage = "Usage: oocsim maxbatch -m MODEL --hw HW -p PLANNER "
           "[--allocator A]\n"
           "                       [--budget SIZE] [--json]\n",
  .about =
    "Find the largest batch the planner can train under the budget:\n"
    "double the batch from 1 until it no longer fits, then bisect.\n"
    "A batch fits when the planner's plan simulates without running\n"
    "out of memory. Prints the batch and the summary there; --json\n"
    "prints {\"model\", \"hw\", \"planner\", \"allocator\",\n"
    "\"budget_bytes\", \"max_batch\", \"at_max\": summary or null,\n"
    "\"fails_at\": {\"batch\", \"limit\", \"op\"} or null}: fails_at is the\n"
    "first batch that does not fit and why: limit \"working_set\" (one\n"
    "step's working set exceeds the budget, so no plan fits it),\n"
    "\"largest_step\" (the plan ran out of memory at the step with the\n"
    "largest working set) or \"oom\" (at another step); op names the step.\n"
    "A planner's feasibility need not be monotone in the batch, so past\n"
    "the first batch that does not fit the search looks ahead (up to an\n"
    "eighth above it) and goes on from any that fits; \"fails_below\" is\n"
    "then the batch below max_batch found not to fit (else null).\n"
    "A progress line with ETA is drawn on stderr when it is a terminal.\n",
  .examples =
    "  oocsim maxbatch -m resnet50 --hw v100-nvlink2 -p window "
    "--allocator va\n",
};

int
ooc_cmd_maxbatch(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_scenario_spec spec;
  ooc_scenario *sc = NULL;
  ooc_summary at = { 0 };
  ooc_maxbatch_limit lim = { .batch = 0 };
  cJSON *o = NULL, *s;
  char *text = NULL, *model_name = NULL, *hw_name = NULL;
  uint64_t budget;
  int64_t best = 0;
  ooc_progress prog;
  int rc = 1;

  if (ooc_cli_args_start(&a, argc, argv, &maxbatch_doc, 0,
                         OOC_CLI_MODEL | OOC_CLI_HW | OOC_CLI_PLANNER, &rc))
    goto done;
  ooc_cli_args_spec(&a, &spec);
  /* Check the model and profile once at batch 1 (clear errors up front)
   * and take their names and the default budget from them. */
  spec.batch = 1;
  if (ooc_scenario_open(&spec, &sc, &err) < 0)
    goto fail;
  /* A --budget no batch fits, or above the device's memory, is refused
   * as simulate refuses it (batch 1 has the smallest working set). */
  if (a.budget != 0 &&
      ooc_scenario_check_budget_for(sc, a.budget,
                                    ooc_planner_find(spec.planner, NULL) &&
                                        (ooc_planner_find(spec.planner, NULL)
                                             ->flags & OOC_PLANNER_OFFLOAD),
                                    &err) < 0) {
    ooc_err_prefix(&err, err.code, "--budget: ");
    goto fail;
  }
  model_name = strdup(ooc_scenario_model(sc)->name);
  hw_name = strdup(ooc_scenario_hw(sc)->name);
  budget = a.budget != 0 ? a.budget : ooc_scenario_hw(sc)->mem_usable;
  ooc_scenario_close(sc);
  sc = NULL;
  if (model_name == NULL || hw_name == NULL) {
    ooc_err_set(&err, OOC_ENOMEM, "out of memory");
    goto fail;
  }
  ooc_progress_begin(&prog, isatty(2) ? stderr : NULL, "maxbatch");
  rc = ooc_maxbatch_search(&spec, &prog, &best, &at, &lim, &err);
  ooc_progress_end(&prog);
  if (rc < 0)
    goto fail;
  if (a.no_timing)
    ooc_summary_clear_timing(&at);
  if (a.json) {
    const char *al = a.allocator != NULL ? a.allocator : "caching";
    const ooc_planner_type *pt = ooc_planner_find(a.planner, NULL);
    if ((o = cJSON_CreateObject()) == NULL ||
        !cJSON_AddStringToObject(o, "model", model_name) ||
        !cJSON_AddStringToObject(o, "hw", hw_name) ||
        !cJSON_AddStringToObject(o, "planner", pt->name) ||
        !cJSON_AddStringToObject(o, "allocator", al) ||
        !cJSON_AddNumberToObject(o, "budget_bytes", (double)budget) ||
        !cJSON_AddNumberToObject(o, "max_batch", (double)best))
      goto nomem;
    if (best > 0) {
      if ((s = ooc_summary_to_cjson(&at)) == NULL)
        goto nomem;
      cJSON_AddItemToObject(o, "at_max", s);
    } else if (!cJSON_AddNullToObject(o, "at_max")) {
      goto nomem;
    }
    if (lim.batch > 0) {
      if ((s = cJSON_AddObjectToObject(o, "fails_at")) == NULL ||
          !cJSON_AddNumberToObject(s, "batch", (double)lim.batch) ||
          !cJSON_AddStringToObject(s, "limit", ooc_limit_kind_name(lim.kind)) ||
          !cJSON_AddStringToObject(s, "op", lim.op))
        goto nomem;
    } else if (!cJSON_AddNullToObject(o, "fails_at")) {
      goto nomem;
    }
    if (!(lim.hole > 0
              ? cJSON_AddNumberToObject(o, "fails_below", (double)lim.hole)
              : cJSON_AddNullToObject(o, "fails_below")))
      goto nomem;
    if ((text = cJSON_Print(o)) == NULL)
      goto nomem;
    puts(text);
  } else {
    char b1[32];
    printf("max batch %s%lld for %s on %s (%s allocator, budget %s)\n",
           best == OOC_MAXBATCH_CAP ? "at least " : "", (long long)best,
           a.planner, hw_name, a.allocator != NULL ? a.allocator : "caching",
           ooc_fmt_bytes(budget, b1, sizeof b1));
    if (lim.batch > 0) {
      if (lim.kind == OOC_LIMIT_WORKING_SET)
        printf("batch %lld does not fit: the working set of %s exceeds "
               "the budget, so no plan can fit it\n", (long long)lim.batch,
               lim.op);
      else
        printf("batch %lld does not fit: out of memory at %s%s\n",
               (long long)lim.batch, lim.op,
               lim.kind == OOC_LIMIT_LARGEST_STEP
                   ? ", the step with the largest working set" : "");
    }
    if (lim.hole > 0)
      printf("batch %lld does not fit either, though %lld does: this "
             "planner's feasibility\nis not monotone in the batch\n",
             (long long)lim.hole, (long long)best);
    if (best > 0) {
      printf("\nat batch %lld:\n", (long long)best);
      ooc_summary_write_text(stdout, &at);
    } else {
      printf("even batch 1 does not fit\n");
    }
  }
  rc = 0;
  goto done;
nomem:
  ooc_err_set(&err, OOC_ENOMEM, "out of memory");
fail:
  rc = ooc_cli_fail("%s", err.msg);
done:
  free(text);
  cJSON_Delete(o);
  free(model_name);
  free(hw_name);
  ooc_summary_fini(&at);
  ooc_scenario_close(sc);
  ooc_cli_args_fini(&a);
  return rc;
}
