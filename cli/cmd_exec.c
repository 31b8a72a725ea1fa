/* cli/cmd_exec.c — `oocsim exec` and `oocsim validate`.
 *
 *   exec      replay PLAN.json on an executor backend and print the
 *             measured summary ("measured": true), optionally its measured
 *             Chrome trace (analysis/measure.h)
 *   validate  for each planner: plan, simulate, execute, compare; the
 *             results object (--json), a table, and with -o DIR a report
 *             (analysis/validate.h, report/vreport.h)
 *
 * Ownership: everything is local to one command run. Cost: one execution
 * of warmup + iterations iterations per plan (and one more, the in-core
 * reference, for validate).
 */
#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/args.h"
#include "analysis/measure.h"
#include "analysis/validate.h"
#include "report/trace_out.h"
#include "report/sweep.h"
#include "report/vreport.h"
#include "ir/plan_io.h"
#include "base/progress.h"
#include "base/util.h"

/* The measurement options of a, with the defaults. */
static ooc_measure_config
measure_config(const ooc_cli_args *a)
{
  return (ooc_measure_config){
    .backend = a->backend != NULL ? a->backend : "cpu",
    .warmup = a->warmup >= 0 ? a->warmup : OOC_MEASURE_WARMUP,
    .iterations = a->iterations > 0 ? a->iterations
                                    : OOC_MEASURE_ITERATIONS,
    .threads = a->threads, .link_GBps = a->link_GBps, .verify = a->verify,
    .seed = OOC_MEASURE_SEED,
  };
}

/* The backend exists in this build: "--backend: unknown executor backend
 * 'x' (valid: cpu, cuda)", before any work. */
static int
check_backend(const ooc_measure_config *mc, ooc_err *err)
{
  if (ooc_exec_backend_find(mc->backend, err) == NULL)
    return ooc_err_prefix(err, OOC_EINVAL, "--backend: ");
  return OOC_OK;
}

/* --- exec ----------------------------------------------------------------- */

static const ooc_cli_doc exec_doc = {
  .name = "exec", .cmd = OOC_CMD_EXEC,
  .usage = "Usage: oocsim exec PLAN.json [--backend cpu|cuda] "
           "[--iterations N] [--warmup W]\n"
           "                   [--threads T] [--link-GBps X] [--verify] "
           "[--trace FILE] [--json]\n",
  .about =
    "Replay a plan written by 'oocsim plan' on real hardware and measure\n"
    "it: the same program the simulator runs, one thread per stream,\n"
    "real kernels (cpu: oneDNN; cuda: cuDNN/cuBLAS), device memory placed\n"
    "by the plan's allocator in the order the simulator predicted. Prints\n"
    "the summary of the measured iteration (median of N after W warm-ups)\n"
    "and what was predicted; with --json, the summary object with\n"
    "\"measured\": true and an \"exec\" object (backend, pacing, spread,\n"
    "loss, what was predicted). Peaks are the arena's real high-water\n"
    "marks. The in-core time, compute time and lower bound are the\n"
    "profile's. docs/executor.md.\n",
  .examples =
    "  oocsim calibrate --backend cpu -m resnet50 -b 16 --set image=64 "
    "--link-GBps 2 -o cpu.json\n"
    "  oocsim plan -m resnet50 -b 16 --set image=64 --hw cpu.json -p window "
    "--budget 400M -o plan.json\n"
    "  oocsim exec plan.json --link-GBps 2 --json\n",
};

/* The exec object beside the measured summary. */
static cJSON *
exec_object(const ooc_measure *m, const ooc_measure_config *mc)
{
  cJSON *o = cJSON_CreateObject(), *p;
  const ooc_exec_result *r = &m->exec;
  int ok;

  if (o == NULL)
    return NULL;
  ok = cJSON_AddStringToObject(o, "backend", mc->backend) != NULL &&
       cJSON_AddStringToObject(o, "note", r->note) != NULL &&
       cJSON_AddNumberToObject(o, "warmup", r->warmup) != NULL &&
       cJSON_AddNumberToObject(o, "iterations", r->iterations) != NULL &&
       /* 0 asks for the backends' default, one kernel thread. */
       cJSON_AddNumberToObject(o, "threads",
                               mc->threads > 0 ? mc->threads : 1) != NULL &&
       (r->link_GBps > 0
            ? cJSON_AddNumberToObject(o, "link_GBps", r->link_GBps) != NULL
            : cJSON_AddNullToObject(o, "link_GBps") != NULL) &&
       cJSON_AddNumberToObject(o, "min_iteration_s",
                               (double)r->min_iteration_ns * 1e-9) != NULL &&
       cJSON_AddNumberToObject(o, "max_iteration_s",
                               (double)r->max_iteration_ns * 1e-9) != NULL &&
       cJSON_AddNumberToObject(o, "loss", r->loss) != NULL &&
       cJSON_AddNumberToObject(o, "side_bytes", (double)r->side_bytes) !=
           NULL &&
       cJSON_AddNumberToObject(o, "host_unpinned_bytes",
                               (double)r->host_unpinned_bytes) != NULL &&
       cJSON_AddNumberToObject(o, "verify_checked",
                               (double)r->verify_checked) != NULL &&
       cJSON_AddNumberToObject(o, "verify_mismatches",
                               (double)r->verify_mismatches) != NULL &&
       (p = cJSON_AddObjectToObject(o, "predicted")) != NULL &&
       (m->predicted.feasible
            ? cJSON_AddNumberToObject(p, "iteration_s",
                                      m->predicted.iteration_s) != NULL
            : cJSON_AddNullToObject(p, "iteration_s") != NULL) &&
       cJSON_AddNumberToObject(p, "stall_s",
                               (double)m->predicted_stall_ns * 1e-9) !=
           NULL &&
       cJSON_AddNumberToObject(p, "peak_allocated_bytes",
                               (double)m->predicted.peak_allocated_bytes) !=
           NULL &&
       cJSON_AddNumberToObject(p, "peak_reserved_bytes",
                               (double)m->predicted.peak_reserved_bytes) !=
           NULL &&
       cJSON_AddNumberToObject(o, "op_error_median", m->op_error_median) !=
           NULL &&
       cJSON_AddNumberToObject(o, "op_error_p95", m->op_error_p95) != NULL;
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

int
ooc_cmd_exec(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_plan_file pf;
  ooc_scenario_spec spec;
  ooc_measure_config mc;
  ooc_measure m;
  cJSON *o = NULL, *x;
  char *text = NULL, b1[32], b2[32];
  int pf_loaded = 0, rc = 1;

  ooc_measure_init(&m);
  if (ooc_cli_args_start(&a, argc, argv, &exec_doc, 1, 0, &rc))
    goto done;
  if (a.n_pos != 1) {
    ooc_err_set(&err, OOC_EINVAL, a.n_pos == 0
                ? "exec: missing PLAN.json (write one with 'oocsim plan')"
                : "exec: one plan file at most");
    goto fail;
  }
  if (a.trace != NULL) {
    /* The trace is written after the measured runs: it must be writable
     * and not the plan file read, before they start. */
    const char *opt[2] = { "the plan file", "--trace" };
    const char *path[2] = { a.pos[0], a.trace };
    if (ooc_cli_check_outputs(opt, path, 2, 1, &err) < 0)
      goto fail;
  }
  mc = measure_config(&a);
  mc.want_traces = a.trace != NULL;
  if (check_backend(&mc, &err) < 0)
    goto fail;
  if (ooc_cli_plan_file_read(a.pos[0], &pf, &err) < 0)
    goto fail;
  pf_loaded = 1;
  if (a.trace != NULL) {
    /* Nor the model and profile files the plan names. */
    const char *opt[1] = { "--trace" }, *path[1] = { a.trace };
    if (ooc_cli_check_not_inputs("the plan's model", pf.model,
                                 "the plan's profile", pf.hw, opt, path, 1,
                                 &err) < 0)
      goto fail;
  }
  spec = (ooc_scenario_spec){
    .model = pf.model, .batch = pf.batch,
    .dtype_set = pf.precision == OOC_PREC_NONE, .dtype = pf.dtype,
    .precision = pf.precision,
    .optimizer = pf.optimizer, .sets = pf.sets, .n_sets = pf.n_sets,
    .hw = pf.hw, .hw_sets = pf.hw_sets, .n_hw_sets = pf.n_hw_sets,
    .planner = pf.planner, .opts = pf.opts, .n_opts = pf.n_opts,
    .allocator = pf.allocator, .budget = pf.budget_bytes,
    .budget_field = "scenario.budget_bytes",
  };
  if (ooc_measure_program(&spec, &pf.program, pf.note, &mc, &m, &err) < 0) {
    ooc_err_prefix(&err, err.code, "%s: ", a.pos[0]);
    goto fail;
  }
  if (!m.predicted.feasible) {
    ooc_err_set(&err, OOC_EINVAL, "%s: the plan does not fit its own "
                "scenario (the simulator runs out of memory at %s): "
                "nothing to execute", a.pos[0],
                m.predicted.oom_op != NULL ? m.predicted.oom_op : "?");
    goto fail;
  }
  if (a.trace != NULL &&
      ooc_trace_save_chrome(a.trace, m.model, &pf.program, &m.measured_trace,
                            &err) < 0) {
    ooc_err_prefix(&err, err.code, "--trace: ");
    goto fail;
  }
  if (a.json) {
    if ((o = ooc_summary_to_cjson(&m.measured)) == NULL ||
        (x = exec_object(&m, &mc)) == NULL)
      goto nomem;
    cJSON_AddItemToObject(o, "exec", x);
    if ((text = cJSON_Print(o)) == NULL)
      goto nomem;
    printf("%s\n", text);
  } else {
    printf("measured on %s: %s\n", mc.backend, m.exec.note);
    if (m.exec.link_GBps > 0)
      printf("copies paced to %.3g GB/s (emulating a slower host link)\n",
             m.exec.link_GBps);
    ooc_summary_write_text(stdout, &m.measured);
    if (m.measured.feasible)
      printf("predicted %.6f s, measured %.6f s (%+.1f%%; timed iterations "
             "%.6f .. %.6f s); peak reserved predicted %s, measured %s\n",
             m.predicted.iteration_s, m.measured.iteration_s,
             100 * (m.measured.iteration_s - m.predicted.iteration_s) /
                 m.measured.iteration_s,
             (double)m.exec.min_iteration_ns * 1e-9,
             (double)m.exec.max_iteration_ns * 1e-9,
             ooc_fmt_bytes(m.predicted.peak_reserved_bytes, b1, sizeof b1),
             ooc_fmt_bytes(m.exec.peak_reserved, b2, sizeof b2));
    if (mc.verify)
      printf("verify: %llu swapped tensor copies checked, %llu "
             "mismatch%s%s%s\n", (unsigned long long)m.exec.verify_checked,
             (unsigned long long)m.exec.verify_mismatches,
             m.exec.verify_mismatches == 1 ? "" : "es",
             m.exec.verify_first[0] ? ": " : "", m.exec.verify_first);
  }
  rc = m.exec.verify_mismatches > 0
           ? ooc_cli_fail("%s: %llu swapped tensor%s came back different",
                          a.pos[0],
                          (unsigned long long)m.exec.verify_mismatches,
                          m.exec.verify_mismatches == 1 ? "" : "s")
           : 0;
  goto done;
nomem:
  ooc_err_set(&err, OOC_ENOMEM, "out of memory");
fail:
  rc = ooc_cli_fail("%s", err.msg);
done:
  cJSON_Delete(o);
  cJSON_free(text);
  if (pf_loaded)
    ooc_plan_file_fini(&pf);
  ooc_measure_fini(&m);
  ooc_cli_args_fini(&a);
  return rc;
}

/* --- validate ------------------------------------------------------------- */

static const ooc_cli_doc validate_doc = {
  .name = "validate", .cmd = OOC_CMD_VALIDATE,
  .usage = "Usage: oocsim validate -m MODEL -b BATCH -p LIST --hw HW "
           "[--backend cpu|cuda]\n"
           "                       [--budget SIZE] [--link-GBps X] "
           "[-o DIR] [--json]\n",
  .about =
    "Check the simulator against the hardware: for each planner, plan,\n"
    "simulate, execute the same program (oocsim exec) and compare the\n"
    "iteration time, stalls, peak memory and every kernel's and copy's\n"
    "duration; then check that the weights and gradients after the run\n"
    "equal the in-core plan's (bit-identical for swap-only plans). Use a\n"
    "profile calibrated on this machine (oocsim calibrate). --link-GBps\n"
    "paces the cpu backend's copies and sets the profile's link to the\n"
    "same rate. --json prints the results object (docs/validation.md);\n"
    "-o DIR writes a report with predicted and measured timelines\n"
    "overlaid, the iteration error per planner and a per-op error\n"
    "histogram. Exit status 1 when an integrity check fails, a plan\n"
    "predicted to fit runs out of memory or a planner could not run (its\n"
    "row says why; the others still run); a plan predicted to run out of\n"
    "memory is not run, which is no failure.\n",
  .examples =
    "  oocsim calibrate --backend cpu -m resnet50 -b 16 --set image=64 "
    "--link-GBps 2 -o cpu.json\n"
    "  oocsim validate -m resnet50 -b 16 --set image=64 --hw cpu.json "
    "-p vdnn,lms,window --budget 400M --link-GBps 2 -o val\n",
};

int
ooc_cmd_validate(int argc, char **argv)
{
  static const char *const link_keys[] = {
    "link.h2d_GBps", "link.d2h_GBps", "link.duplex_h2d_GBps",
    "link.duplex_d2h_GBps", "link.h2d_pageable_GBps",
    "link.d2h_pageable_GBps"
  };
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_scenario_spec spec;
  ooc_measure_config mc;
  ooc_validate v;
  const ooc_planner_type **ts = NULL;
  ooc_hw_override *hws = NULL;
  ooc_progress prog;
  char *text = NULL, gbps[32], b1[32], b2[32], e[16];
  int n = 0, i, rc = 1, missing = 0, bad = 0, oom = 0, refused = 0;
  int first_refused = 0;

  ooc_validate_init(&v);
  if (ooc_cli_args_start(&a, argc, argv, &validate_doc, 0,
                         OOC_CLI_MODEL | OOC_CLI_BATCH | OOC_CLI_HW |
                         OOC_CLI_PLANNER, &rc))
    goto done;
  if (ooc_cli_parse_planners(a.planner, &ts, &n, &err) < 0)
    goto fail;
  if (ooc_cli_check_opts(&a, ts, n, &err) < 0)
    goto fail;
  mc = measure_config(&a);
  if (check_backend(&mc, &err) < 0)
    goto fail;
  ooc_cli_args_spec(&a, &spec);
  if (a.link_GBps > 0) {
    /* The prediction sees the link the pacing emulates. */
    size_t k, nk = sizeof link_keys / sizeof link_keys[0];
    hws = calloc((size_t)a.n_hw_sets + nk, sizeof *hws);
    if (hws == NULL)
      goto nomem;
    snprintf(gbps, sizeof gbps, "%.17g", a.link_GBps);
    for (k = 0; k < nk; k++)
      hws[k] = (ooc_hw_override){ .key = link_keys[k], .value = gbps };
    for (i = 0; i < a.n_hw_sets; i++)
      hws[nk + (size_t)i] = a.hw_sets[i];
    spec.hw_sets = hws;
    spec.n_hw_sets = (int)nk + a.n_hw_sets;
  }
  /* The report's folder, made (and found writable) before the runs, not
   * after them. */
  if (a.output != NULL && ooc_sweep_mkdir(a.output, &err) < 0) {
    ooc_err_prefix(&err, err.code, "-o: ");
    goto fail;
  }
  ooc_progress_begin(&prog, isatty(2) ? stderr : NULL, "validate");
  rc = ooc_validate_run(&spec, ts, n, &mc, a.output != NULL, &prog, &v,
                        &err);
  ooc_progress_end(&prog);
  if (rc < 0)
    goto fail;
  if (a.output != NULL &&
      (rc = ooc_vreport_write(&v, a.output, &missing, &err)) < 0 &&
      rc != OOC_EUNSUP)
    goto fail;
  if (rc == OOC_EUNSUP || missing > 0)
    fprintf(stderr, "oocsim: warning: %d plot%s not drawn: %s\n", missing,
            missing == 1 ? "" : "s", err.msg);
  if (a.json) {
    if ((text = ooc_validate_json(&v)) == NULL)
      goto nomem;
    printf("%s\n", text);
  } else {
    printf("%s, batch %lld, %s, budget %s, %s allocator, %s backend%s\n",
           v.model, (long long)v.batch, v.hw,
           ooc_fmt_bytes(v.budget_bytes, b1, sizeof b1), v.allocator,
           v.backend, a.link_GBps > 0 ? ", link paced" : "");
    printf("%-12s %12s %12s %8s %10s %10s %8s  %s\n", "planner",
           "predicted s", "measured s", "error", "peak pred", "peak meas",
           "op p95", "integrity");
    for (i = 0; i < v.n_rows; i++) {
      const ooc_validate_row *r = &v.rows[i];
      int both = r->feasible_predicted && r->feasible_measured;
      char ps[32], ms[32], p95[16];
      snprintf(ps, sizeof ps, r->feasible_predicted ? "%.4f"
               : r->refused ? "-" : "OOM", r->predicted_iteration_s);
      snprintf(ms, sizeof ms, r->feasible_measured ? "%.4f"
               : r->feasible_predicted ? "OOM" : "-",
               r->measured_iteration_s);
      snprintf(e, sizeof e, both ? "%+.1f%%" : "-", 100 * r->iteration_error);
      snprintf(p95, sizeof p95, both ? "%.1f%%" : "-", 100 * r->op_error_p95);
      printf("%-12s %12s %12s %8s %10s %10s %8s  %s\n", r->planner, ps, ms,
             e, r->refused ? "-"
                : ooc_fmt_bytes(r->predicted_peak_reserved_bytes, b1,
                                sizeof b1),
             r->feasible_predicted
                 ? ooc_fmt_bytes(r->measured_peak_reserved_bytes, b2,
                                 sizeof b2)
                 : "-",
             p95, r->integrity_ok ? "ok" : r->integrity);
    }
    if (v.n_compared > 0)
      printf("mean |error| %.2f%%, max |error| %.2f%% over %d planner%s\n",
             100 * v.mean_abs_iteration_error,
             100 * v.max_abs_iteration_error, v.n_compared,
             v.n_compared == 1 ? "" : "s");
    if (v.reference_iteration_s > 0 && v.reference_predicted_s > 0)
      printf("in-core reference: predicted %.4f s, measured %.4f s (%+.1f%%; "
             "the machine against its calibration)\n",
             v.reference_predicted_s, v.reference_iteration_s,
             100 * v.reference_error);
    if (a.output != NULL)
      printf("report: %s/report.html\n", a.output);
  }
  for (i = 0; i < v.n_rows; i++) {
    bad += v.rows[i].feasible_measured && !v.rows[i].integrity_ok;
    /* Predicted to fit, ran out of memory: it could not run. */
    oom += v.rows[i].feasible_predicted && !v.rows[i].feasible_measured;
    if (v.rows[i].refused && refused++ == 0)
      first_refused = i;
  }
  if (bad > 0)
    rc = ooc_cli_fail("validate: integrity failed for %d planner%s", bad,
                      bad == 1 ? "" : "s");
  else if (oom > 0)
    rc = ooc_cli_fail("validate: %d planner%s ran out of memory though "
                      "predicted to fit (see the table)", oom,
                      oom == 1 ? "" : "s");
  else if (refused > 0)
    rc = ooc_cli_fail("validate: planner %s %s%s",
                      v.rows[first_refused].planner,
                      v.rows[first_refused].integrity,
                      refused > 1 ? " (and more: see the table)" : "");
  else
    rc = 0;
  goto done;
nomem:
  ooc_err_set(&err, OOC_ENOMEM, "out of memory");
fail:
  rc = ooc_cli_fail("%s", err.msg);
done:
  free(text);
  free(ts);
  free(hws);
  ooc_validate_fini(&v);
  ooc_cli_args_fini(&a);
  return rc;
}
