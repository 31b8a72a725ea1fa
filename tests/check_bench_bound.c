/* tests/check_bench_bound.c — the lower bound holds on every scenario of
 * the planner benchmark (analysis/benchset.h: every zoo model on
 * v100-pcie3, v100-nvlink2, h100-pcie5 and gh200-c2c at 2x, 4x and 8x its
 * in-core maximum batch), for every registered planner but incore and
 * naive: a feasible plan's iteration is never shorter than lower_bound_s
 * (docs/lower-bound.md); where one planner that keeps the parameters on
 * the device says no plan can fit (the step working set exceeds the
 * budget), all of them say so (the benchmark leaves such a batch out),
 * and a planner that may offload parameters (zero-offload, joint) says so
 * only there; where it fits there, its plan respects the bound too. `make bench-planners`
 * prints the same property for the default plans ("plans faster than the
 * lower bound: 0"); the bound holds for any plan, so here the searching
 * planners run capped to keep the suite fast: pooch at max_sims=40, joint
 * at max_evals=10 with its PoocH start at start_sims=40 and no sweeps.
 *
 * Built twice (Makefile.am), each half of the zoo in its own process
 * (BENCH_PART 1: the models at even places of the sorted zoo, 2: odd), so
 * that `make -j2 check` runs them side by side.
 * OOC_BENCH_VERBOSE=1 prints one line per scenario.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/benchset.h"
#include "analysis/scenario.h"
#include "analysis/summary.h"
#include "base/util.h"
#include "plan/planner.h"
#include "planners/registry.h"

#ifndef BENCH_PART
#define BENCH_PART 0
#endif

/* The capped options of the searching planners (any plan must respect the
 * bound, so their caps do not weaken the property). */
static const ooc_kv pooch_opts[] = { { .key = "max_sims", .value = "40" } };
static const ooc_kv joint_opts[] = {
  { .key = "max_evals", .value = "10" },
  { .key = "start_sims", .value = "40" },
  { .key = "sweep", .value = "0" },
};

START_TEST(test_bound_on_benchmark)
{
  char **models = NULL;
  int n_models = 0, m, h, k, p, verbose;
  int scenarios = 0, plans = 0, no_fit_seen = 0, off_only = 0;
  ooc_err err = { 0 };
  const char *v = getenv("OOC_BENCH_VERBOSE");

  verbose = v != NULL && strcmp(v, "1") == 0;
  ck_assert_int_eq(ooc_data_list("models", &models, &n_models, &err), 0);
  ck_assert_int_gt(n_models, 0);
  for (m = 0; m < n_models; m++) {
    if (BENCH_PART != 0 && m % 2 != BENCH_PART - 1)
      continue;
    for (h = 0; ooc_benchset_profiles[h] != NULL; h++) {
      const char *hw = ooc_benchset_profiles[h];
      int64_t b0 = 0;
      ck_assert_msg(ooc_benchset_incore_max(models[m], hw, NULL, 0, &b0,
                                            &err) == OOC_OK,
                    "%s on %s: %s", models[m], hw, err.msg);
      for (k = 0; k < OOC_BENCHSET_NMULTS && b0 > 0; k++) {
        int64_t B = b0 * ooc_benchset_mults[k];
        int no_fit = -1;        /* the planners that keep parameters on
                                   the device: unknown until one says */
        int off_nf = 0, off_fit = 0;
        for (p = 0; ooc_planner_types[p] != NULL; p++) {
          const char *pn = ooc_planner_types[p]->name;
          int off = (ooc_planner_types[p]->flags & OOC_PLANNER_OFFLOAD) != 0;
          ooc_scenario_spec sp = { .model = models[m], .batch = B,
                                   .hw = hw, .planner = pn };
          ooc_summary s = { 0 };
          int nf, rc;
          if (strcmp(pn, "incore") == 0 || strcmp(pn, "naive") == 0)
            continue;
          if (strcmp(pn, "pooch") == 0) {
            sp.opts = pooch_opts;
            sp.n_opts = 1;
          } else if (strcmp(pn, "joint") == 0) {
            sp.opts = joint_opts;
            sp.n_opts = 3;
          }
          rc = ooc_scenario_run(&sp, &s, NULL, &err);
          ck_assert_msg(rc == OOC_OK, "%s b%lld %s %s: %s", models[m],
                        (long long)B, hw, pn, err.msg);
          nf = !s.feasible && strstr(s.oom.reason, "no plan can fit") != NULL;
          /* The working set is the scenario's, not the planner's: the
           * planners that keep parameters on the device agree on whether
           * a plan can fit. One that may offload them (the front end
           * checks it against what stays, ooc_plan_check_budget_offload)
           * may fit where they cannot, never the other way round. */
          if (off) {
            off_nf |= nf;
            off_fit |= s.feasible;
          } else {
            if (no_fit < 0)
              no_fit = nf;
            ck_assert_msg(nf == no_fit, "%s b%lld %s: %s says %s a plan "
                          "can fit", models[m], (long long)B, hw, pn,
                          nf ? "no" : "that");
          }
          if (s.feasible) {
            ck_assert_msg(s.lower_bound_s > 0, "%s b%lld %s %s: no bound",
                          models[m], (long long)B, hw, pn);
            ck_assert_msg(s.iteration_s >= s.lower_bound_s * (1 - 1e-9),
                          "%s b%lld %s %s: %.9f s beats the lower bound "
                          "%.9f s", models[m], (long long)B, hw, pn,
                          s.iteration_s, s.lower_bound_s);
            plans++;
          }
          if (verbose)
            printf("%-14s %-13s b%-6lld %-14s %s %.6f / bound %.6f\n",
                   models[m], hw, (long long)B, pn,
                   s.feasible ? "fits" : nf ? "no plan can fit" : "oom",
                   s.iteration_s, s.lower_bound_s);
          ooc_summary_fini(&s);
        }
        ck_assert_msg(!(off_nf && no_fit == 0), "%s b%lld %s: a planner "
                      "that may offload parameters says no plan can fit "
                      "where the others can", models[m], (long long)B, hw);
        scenarios += no_fit == 0;
        no_fit_seen += no_fit == 1;
        off_only += no_fit == 1 && off_fit;
      }
    }
  }
  ooc_data_list_free(models, n_models);
  if (verbose)
    printf("%d scenarios, %d feasible plans, %d batches where no plan can "
           "fit with the parameters on the device (%d of them where one "
           "that offloads them does)\n", scenarios, plans, no_fit_seen,
           off_only);
  /* The benchmark has 144 scenarios over the whole zoo (docs/planners.md):
   * each half has dozens, and feasible plans in most of them. */
  ck_assert_int_ge(scenarios, 40);
  ck_assert_int_ge(plans, 5 * scenarios);
}
END_TEST

int
main(void)
{
  Suite *s = suite_create("bench_bound");
  TCase *tc = tcase_create("bench_bound");
  SRunner *sr;
  int failed;

  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_bound_on_benchmark);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
