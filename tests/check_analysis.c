/* tests/check_analysis.c — the analyses under every command (analysis/):
 * the lower bound's last step, the summary JSON and the scenario runner on
 * a small model.
 *
 * Test case "bound": ooc_lower_bound_combine on figures worked out by hand.
 * Test case "summary": the summary JSON, feasible and infeasible, to the
 * byte.
 * Test case "scenario": tests/data/cli_mlp.json end to end: the in-core
 * plan equals the baseline, the bound holds, a probe is a run without the
 * baseline, maxbatch is the feasibility edge, a budget below the largest
 * working set is bad input or a result.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/lower_bound.h"
#include "analysis/maxbatch.h"
#include "analysis/minbudget.h"
#include "planners/registry.h"
#include "analysis/scenario.h"
#include "analysis/summary.h"
#include "sim/cost.h"
#include "plan/plan.h"

#define MLP OOC_SRCDIR "/tests/data/cli_mlp.json"

/* --- bound --------------------------------------------------------------- */

START_TEST(bound_combine)
{
  /* Nothing in excess: the compute time. */
  ck_assert_double_eq(ooc_lower_bound_combine(1.0, 0, 1e-10, 10e9), 1.0);
  /* 10 GB out and back at 10 GB/s = 1 s <= C = 2 s: compute bound. */
  ck_assert_double_eq(ooc_lower_bound_combine(2.0, 10e9, 1e-10, 10e9), 2.0);
  /* C = 1 s, E = 30 GB, beta = 10 GB/s, r = 1e-10 s/B (10 GB/s recompute):
   * x* = (1 + 3) / (1e-10 + 1e-10) = 20 GB; x* / beta = 2 s
   * and C + r (E - x*) = 1 + 1 = 2 s. */
  ck_assert_double_eq_tol(ooc_lower_bound_combine(1.0, 30e9, 1e-10, 10e9),
                          2.0, 1e-12);
  /* No recompute possible: all 30 GB cross: 3 s. */
  ck_assert_double_eq_tol(ooc_lower_bound_combine(1.0, 30e9, INFINITY, 10e9),
                          3.0, 1e-12);
  /* Very expensive recompute (1 s per KB): nearly all swapped, just under
   * 3 s: x* = (1 + 3e7) / (1e-10 + 1e-3) = 2.99999997e10 B -> 2.9999999 s */
  ck_assert_double_eq_tol(ooc_lower_bound_combine(1.0, 30e9, 1e-3, 10e9),
                          (1.0 + 3e7) / (1e-10 + 1e-3) / 10e9, 1e-9);
  ck_assert(ooc_lower_bound_combine(1.0, 30e9, 1e-3, 10e9) < 3.0);
}
END_TEST

/* --- summary ------------------------------------------------------------- */

static char *
capture_json(const ooc_summary *s)
{
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(ooc_summary_write_json(f, s, 0), 0);
  fclose(f);
  return buf;
}

START_TEST(summary_json)
{
  ooc_summary s = {
    .model = "m", .hw = "h", .planner = "p", .allocator = "va",
    .batch = 4, .dtype = OOC_FP32, .budget_bytes = 17179869184ULL,
    .feasible = 1, .iteration_s = 0.5, .samples_per_s = 8,
    .incore_iteration_s = 0.25, .slowdown = 2, .lower_bound_s = 0.125,
    .counts = { 3, 1, 0 }, .events = 42, .plan_note = "n", .oom_op = "",
  };
  char *j = capture_json(&s);

  ck_assert_msg(strstr(j, "{\"model\":\"m\",\"batch\":4,\"dtype\":\"fp32\","
                          "\"hw\":\"h\",\"planner\":\"p\",\"allocator\":\"va\","
                          "\"budget_bytes\":17179869184,\"feasible\":true,"
                          "\"oom\":null,\"iteration_s\":0.5,"
                          "\"samples_per_s\":8,\"incore_iteration_s\":0.25,"
                          "\"slowdown\":2,\"lower_bound_s\":0.125,") == j,
                "%s", j);
  ck_assert_ptr_nonnull(strstr(j, "\"counts\":{\"keep\":3,\"swap\":1,"
                                  "\"recompute\":0},\"events\":42,"));
  /* extensions at the end: the optimizer, the precision (null: not
   * given), whether it was measured */
  ck_assert_ptr_nonnull(strstr(j, "\"optimizer\":\"momentum\","
                                  "\"precision\":null,\"measured\":false}"));
  free(j);
  s.precision = OOC_PREC_AMP_BF16;
  j = capture_json(&s);
  ck_assert_ptr_nonnull(strstr(j, "\"precision\":\"amp-bf16\","));
  free(j);
  s.precision = OOC_PREC_NONE;

  s.feasible = 0;
  s.iteration_s = s.slowdown = s.samples_per_s = 0;
  s.oom_op = "fwd conv1";
  s.oom = (ooc_oom){ .time_ns = 1500000, .requested_bytes = 1024,
                     .live_bytes = 2048, .reserved_bytes = 4096,
                     .largest_free_bytes = 512, .reason = "full" };
  j = capture_json(&s);
  ck_assert_msg(strstr(j, "\"feasible\":false,\"oom\":{\"op\":\"fwd conv1\","
                          "\"time_s\":0.0015,\"requested_bytes\":1024,"
                          "\"live_bytes\":2048,\"reserved_bytes\":4096,"
                          "\"largest_free_bytes\":512,\"reason\":\"full\"},"
                          "\"iteration_s\":null,\"samples_per_s\":null,") != NULL,
                "%s", j);
  ck_assert_ptr_nonnull(strstr(j, "\"slowdown\":null,"));
  free(j);
}
END_TEST

/* --- scenario ------------------------------------------------------------ */

START_TEST(scenario_incore)
{
  ooc_scenario_spec spec = { .model = MLP, .batch = 8, .hw = "v100-pcie3",
                             .planner = "incore" };
  ooc_summary s;
  ooc_err err = { 0 };

  ck_assert_msg(ooc_scenario_run(&spec, &s, NULL, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(s.feasible, 1);
  ck_assert_str_eq(s.model, "cli_mlp");
  ck_assert_str_eq(s.allocator, "caching");
  ck_assert_int_eq(s.batch, 8);
  ck_assert(s.iteration_s > 0);
  /* The incore plan on a device that holds it is the baseline itself. */
  ck_assert_double_eq(s.iteration_s, s.incore_iteration_s);
  ck_assert_double_eq(s.slowdown, 1.0);
  ck_assert_double_eq(s.samples_per_s, 8 / s.iteration_s);
  ck_assert(s.lower_bound_s <= s.iteration_s);
  /* Nothing to cover: the bound is the pure compute, less the device's
   * optimizer step, which a plan may move to the CPU (v100-pcie3 prices
   * one), where it overlaps the backward (docs/lower-bound.md). */
  {
    ooc_scenario *sc;
    ooc_costs *c;
    ck_assert_int_eq(ooc_scenario_open(&spec, &sc, &err), 0);
    ck_assert_int_eq(ooc_costs_alloc(ooc_scenario_model(sc),
                                     ooc_scenario_hw(sc), &c, &err), 0);
    ck_assert(c->update_ns > 0 && s.compute_s > 0);
    ck_assert_double_eq_tol(s.lower_bound_s,
                            s.compute_s - (double)c->update_ns * 1e-9, 1e-12);
    ooc_costs_free(c);
    ooc_scenario_close(sc);
  }
  ck_assert_int_eq(s.counts[OOC_SWAP] + s.counts[OOC_RECOMPUTE], 0);
  ck_assert_uint_eq(s.h2d_bytes + s.d2h_bytes, 0);
  ooc_summary_fini(&s);

  spec.planner = "nosuch";
  ck_assert_int_eq(ooc_scenario_run(&spec, &s, NULL, &err), OOC_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(err.msg, "-p: "));
  spec.planner = "incore";
  spec.allocator = "buddy";
  ck_assert_int_eq(ooc_scenario_run(&spec, &s, NULL, &err), OOC_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(err.msg, "--allocator: "));
  spec.allocator = NULL;
  spec.budget = 1000;   /* below the weights alone */
  ck_assert_int_eq(ooc_scenario_run(&spec, &s, NULL, &err), OOC_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "budget"));
}
END_TEST

/* A probe is the same run without the baseline and the bound. */
START_TEST(scenario_probe)
{
  ooc_scenario_spec spec = { .model = MLP, .batch = 64, .hw = "v100-pcie3",
                             .planner = "vdnn" };
  ooc_scenario *sc = NULL;
  ooc_summary full, probe;
  ooc_err err = { 0 };

  ck_assert_msg(ooc_scenario_open(&spec, &sc, &err) == 0, "%s", err.msg);
  ck_assert_msg(ooc_scenario_probe(sc, &spec, &probe, &err) == 0, "%s",
                err.msg);
  ck_assert_msg(ooc_scenario_run_in(sc, &spec, &full, NULL, &err) == 0, "%s",
                err.msg);
  ck_assert_int_eq(probe.feasible, 1);
  ck_assert_double_eq(probe.iteration_s, full.iteration_s);
  ck_assert_uint_eq(probe.h2d_bytes, full.h2d_bytes);
  ck_assert_int_eq(probe.counts[OOC_SWAP], full.counts[OOC_SWAP]);
  ck_assert_double_eq(probe.incore_iteration_s, 0);
  ck_assert_double_eq(probe.lower_bound_s, 0);
  ck_assert(full.incore_iteration_s > 0 && full.lower_bound_s > 0);
  ck_assert_double_eq(full.lower_bound_s,
                      ooc_scenario_lower_bound(sc, full.budget_bytes,
                                               full.compute_s));
  ooc_summary_fini(&probe);
  ooc_summary_fini(&full);
  ooc_scenario_close(sc);
}
END_TEST

START_TEST(scenario_maxbatch_edge)
{
  /* ideal allocator, a 1 MiB budget: the largest batch fits, one more does
   * not. */
  ooc_scenario_spec spec = { .model = MLP, .hw = "v100-pcie3",
                             .planner = "incore", .allocator = "ideal",
                             .budget = 1048576 };
  ooc_summary at, s;
  ooc_err err = { 0 };
  int64_t best = 0;

  ck_assert_msg(ooc_maxbatch_find(&spec, &best, &at, &err) == 0, "%s",
                err.msg);
  ck_assert_int_gt(best, 1);
  ck_assert_int_eq(at.batch, best);
  ck_assert_int_eq(at.feasible, 1);
  ck_assert(at.peak_allocated_bytes <= 1048576);
  /* The summary kept from the search's own probe, with the baseline and
   * bound added, is a full run's at that batch. */
  spec.batch = best;
  ck_assert_msg(ooc_scenario_run(&spec, &s, NULL, &err) == 0, "%s",
                err.msg);
  ck_assert_double_eq(at.iteration_s, s.iteration_s);
  ck_assert(s.incore_iteration_s > 0 && s.lower_bound_s > 0);
  ck_assert_double_eq(at.incore_iteration_s, s.incore_iteration_s);
  ck_assert_double_eq(at.slowdown, s.slowdown);
  ck_assert_double_eq(at.compute_s, s.compute_s);
  ck_assert_double_eq(at.lower_bound_s, s.lower_bound_s);
  ck_assert_int_eq(at.peak_reserved_bytes, s.peak_reserved_bytes);
  ooc_summary_fini(&s);
  ooc_summary_fini(&at);
  spec.batch = best + 1;
  if (ooc_scenario_run(&spec, &s, NULL, &err) == 0) {
    ck_assert_int_eq(s.feasible, 0);
    ooc_summary_fini(&s);
  } else {
    ck_assert_ptr_nonnull(strstr(err.msg, "budget"));
  }
}
END_TEST

/* The capped search (minbudget.h) of the hint: resnet50 b512 on
 * v100-nvlink2 with vdnn and window (cli_minbudget.sh's scenario). Without
 * a cap the answer is exact (5,561,647,104 B in 30 simulations); with a
 * cap of one event the first probe spends it, nothing fits at the
 * working set, and the search stops, capped, having found nothing; with
 * a cap that lets it reach a budget that fits but stops the bisection,
 * that budget fits and is above the exact answer. */
START_TEST(minbudget_capped)
{
  const ooc_planner_type *ts[3] = { ooc_planner_find("vdnn", NULL),
                                    ooc_planner_find("window", NULL), NULL };
  ooc_scenario_spec spec = { .model = "resnet50", .batch = 512,
                             .hw = "v100-nvlink2" };
  const ooc_minbudget_caps cap1 = { .max_events = 1 },
                           cap4 = { .max_events = 1e4 },
                           cap4q = { .max_events = 1e4, .no_final_run = 1 };
  ooc_minbudget_result exact, one, part, quiet;
  ooc_err err = { 0 };

  ck_assert_msg(ooc_minbudget_find(&spec, ts, 2, NULL, &exact, &err) == 0,
                "%s", err.msg);
  ck_assert(exact.budget > 0);
  ck_assert_int_eq(exact.capped, 0);
  ck_assert_msg(ooc_minbudget_find_capped(&spec, ts, 2, &cap1, NULL, &one,
                                          &err) == 0, "%s", err.msg);
  ck_assert_int_eq(one.capped, 1);
  ck_assert_int_eq(one.budget, 0);
  ck_assert_int_eq(one.simulations, 1);
  /* 10^4 events: the two floor probes, then vdnn's doubling, which fits
   * at 16 GiB, and one step of its bisection (11,094,982,656 B, 4
   * probes and the final run). */
  ck_assert_msg(ooc_minbudget_find_capped(&spec, ts, 2, &cap4, NULL, &part,
                                          &err) == 0, "%s", err.msg);
  ck_assert_int_eq(part.capped, 1);
  ck_assert(part.budget > exact.budget);
  ck_assert_int_eq(part.at.feasible, 1);
  ck_assert_str_eq(part.planner, "vdnn");
  ck_assert_int_lt(part.simulations, exact.simulations);
  /* Without the final run: the same answer, one simulation fewer, and
   * no summary. */
  ck_assert_msg(ooc_minbudget_find_capped(&spec, ts, 2, &cap4q, NULL,
                                          &quiet, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(quiet.capped, 1);
  ck_assert_uint_eq(quiet.budget, part.budget);
  ck_assert_str_eq(quiet.planner, part.planner);
  ck_assert_int_eq(quiet.simulations, part.simulations - 1);
  ck_assert_int_eq(quiet.at.feasible, 0);
  ooc_minbudget_result_fini(&quiet);
  ooc_minbudget_result_fini(&exact);
  ooc_minbudget_result_fini(&one);
  ooc_minbudget_result_fini(&part);
}
END_TEST

/* The work cap counts what a planner reports beside its simulations:
 * checkpoint-dp's rotor tables. On resnet50 b512 (v100-pcie3) rotor's
 * plan wins with 40 stages, and the plan reports work_events = the cells
 * of its rotor solves / 400, each solve filling 40 x 41 x 42 / 6 x 257
 * = 2,950,360 cells: four solves (64/64 of the budget, then lower while
 * the simulator finds the model short), 29,503.6. A work cap of 5,000
 * events is more than the first probe simulates but less than one solve
 * (7,375.9): with the tables counted, the search stops after that probe,
 * capped, having found no budget that fits (one simulation); with 5,000
 * as a cap on events alone it goes on and finds one (three). */
START_TEST(minbudget_work_capped)
{
  const ooc_planner_type *ts[2] = { ooc_planner_find("checkpoint-dp", NULL),
                                    NULL };
  ooc_scenario_spec spec = { .model = "resnet50", .batch = 512,
                             .hw = "v100-pcie3", .planner = "checkpoint-dp" };
  const ooc_minbudget_caps caps = { .max_work = 5000 },
                           events = { .max_events = 5000 };
  ooc_summary sum;
  ooc_minbudget_result res;
  ooc_err err = { 0 };
  double work = -1;

  ck_assert_msg(ooc_scenario_run(&spec, &sum, NULL, &err) == 0, "%s",
                err.msg);
  work = ooc_metric_value(sum.metrics, sum.n_metrics,
                          OOC_METRIC_WORK_EVENTS);
  ck_assert_ptr_nonnull(strstr(sum.plan_note, "(several recomputes per "
                               "stage): 40 stages"));
  ck_assert_double_eq_tol(work, 4 * 2950360 / 400.0, 1e-9);
  ooc_summary_fini(&sum);
  ck_assert_msg(ooc_minbudget_find_capped(&spec, ts, 1, &caps, NULL, &res,
                                          &err) == 0, "%s", err.msg);
  ck_assert_int_eq(res.capped, 1);
  ck_assert_int_eq(res.simulations, 1);
  ck_assert_int_eq(res.budget, 0);
  ooc_minbudget_result_fini(&res);
  /* The same figure as a cap on events alone: the tables do not count,
   * and the search goes on to a budget that fits. */
  ck_assert_msg(ooc_minbudget_find_capped(&spec, ts, 1, &events, NULL,
                                          &res, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(res.capped, 1);
  ck_assert_int_eq(res.simulations, 3);
  ck_assert(res.budget > 0);
  ooc_minbudget_result_fini(&res);
}
END_TEST

/* What stops the batch after the largest (maxbatch.h): with the ideal
 * allocator and 64 MiB, every planner takes the MLP to the batch where the
 * working set of its largest step, 'bwd relu1', exceeds the budget; with
 * the caching allocator on a V100, vdnn stops earlier, out of memory at
 * AlexNet's largest step, 'bwd pool1'. */
START_TEST(scenario_maxbatch_limit)
{
  ooc_scenario_spec spec = { .model = MLP, .hw = "v100-pcie3",
                             .planner = "window", .allocator = "ideal",
                             .budget = 64u << 20 };
  ooc_maxbatch_limit lim;
  ooc_summary at;
  ooc_err err = { 0 };
  int64_t best = 0;

  ck_assert_msg(ooc_maxbatch_find_limit(&spec, &best, &at, &lim, &err) == 0,
                "%s", err.msg);
  ck_assert_int_gt(best, 1);
  ck_assert_int_eq(lim.batch, best + 1);
  ck_assert_int_eq(lim.kind, OOC_LIMIT_WORKING_SET);
  ck_assert_str_eq(lim.op, "bwd relu1");
  ck_assert_str_eq(ooc_limit_kind_name(lim.kind), "working_set");
  ooc_summary_fini(&at);

  spec = (ooc_scenario_spec){ .model = "alexnet", .hw = "v100-pcie3",
                              .planner = "vdnn" };
  ck_assert_msg(ooc_maxbatch_find_limit(&spec, &best, &at, &lim, &err) == 0,
                "%s", err.msg);
  ck_assert_int_eq(lim.batch, best + 1);
  ck_assert_int_eq(lim.kind, OOC_LIMIT_LARGEST_STEP);
  ck_assert_str_eq(lim.op, "bwd pool1");
  ooc_summary_fini(&at);
}
END_TEST

/* Budget semantics (docs/lower-bound.md, "Budget"). tests/data/cli_mlp.json
 * at batch 64: persistent = 172 params x 4 B x 3 (weights, gradients,
 * momentum) + the 16 x 64 x 4 B input = 2064 + 4096 = 6160 B; the largest
 * step is 'bwd relu1': its output 2048 B + the gradients of its output and
 * input 2 x 2048 B = 6144 B. At 9000 B no plan fits: 12304 - 9000 = 3304 B
 * short, and beside the persistent bytes 2840 B are left. */
START_TEST(scenario_budget_semantics)
{
  ooc_hw_override small[1] = {
    { .key = "memory.usable_GiB", .value = "0.0000083819031715393066" } };
  ooc_scenario_spec spec = { .model = MLP, .batch = 64, .hw = "v100-pcie3",
                             .planner = "window", .budget = 9000 };
  ooc_scenario *sc = NULL;
  ooc_summary s;
  ooc_err err = { 0 };

  /* a budget the user chose: bad input */
  ck_assert_int_eq(ooc_scenario_run(&spec, &s, NULL, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "--budget: budget 8.79 KiB is below the working "
                   "set of step 'bwd relu1' (persistent 6.02 KiB + 6.00 "
                   "KiB)");
  ck_assert_int_eq(ooc_scenario_open(&spec, &sc, &err), 0);
  ck_assert_int_eq(ooc_scenario_check_budget(sc, 9000, &err), OOC_EINVAL);
  ck_assert_int_eq(ooc_scenario_check_budget(sc, 6160 + 6144, &err), 0);
  ck_assert_int_eq(ooc_scenario_check_budget(sc, 0, &err), 0);
  /* the same budget as a sweep point: a result */
  ck_assert_int_eq(ooc_scenario_no_fit(sc, &spec, NULL, &s, &err), 0);
  ck_assert_int_eq(s.feasible, 0);
  ck_assert_str_eq(s.oom_op, "bwd relu1");
  ck_assert_str_eq(s.planner, "window");
  ck_assert_uint_eq(s.budget_bytes, 9000);
  ooc_summary_fini(&s);
  ooc_scenario_close(sc);

  /* the profile's own memory (9000 B) too small: an INFEASIBLE result */
  spec.budget = 0;
  spec.hw_sets = small;
  spec.n_hw_sets = 1;
  ck_assert_msg(ooc_scenario_run(&spec, &s, NULL, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(s.feasible, 0);
  ck_assert_uint_eq(s.budget_bytes, 9000);
  ck_assert_str_eq(s.oom_op, "bwd relu1");
  ck_assert_uint_eq(s.oom.requested_bytes, 6144);
  ck_assert_uint_eq(s.oom.live_bytes, 6160);
  ck_assert_uint_eq(s.oom.reserved_bytes, 6160);
  ck_assert_uint_eq(s.oom.largest_free_bytes, 2840);
  ck_assert_int_eq(s.oom.time_ns, 0);
  ck_assert_str_eq(s.oom.reason, "working set 12.02 KiB (persistent 6.02 "
                   "KiB + step 6.00 KiB) exceeds the budget by 3.23 KiB: no "
                   "plan can fit");
  ck_assert_uint_eq(s.events, 0);
  ck_assert_double_eq(s.iteration_s, 0);
  ck_assert(s.incore_iteration_s > 0);
  ooc_summary_fini(&s);
}
END_TEST

static Suite *
analysis_suite(void)
{
  Suite *s = suite_create("analysis");
  TCase *tc;

  tc = tcase_create("bound");
  tcase_add_test(tc, bound_combine);
  suite_add_tcase(s, tc);
  tc = tcase_create("summary");
  tcase_add_test(tc, summary_json);
  suite_add_tcase(s, tc);
  tc = tcase_create("scenario");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, scenario_incore);
  tcase_add_test(tc, scenario_probe);
  tcase_add_test(tc, scenario_maxbatch_edge);
  tcase_add_test(tc, minbudget_capped);
  tcase_add_test(tc, minbudget_work_capped);
  tcase_add_test(tc, scenario_maxbatch_limit);
  tcase_add_test(tc, scenario_budget_semantics);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(analysis_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
