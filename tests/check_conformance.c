/* tests/check_conformance.c — the properties every registered planner must
 * have (GSL min/test.c, libsigrok tests/driver_all.c): for each planner in
 * ooc_planner_types, on a small hand-written model and on zoo models at
 * batches 1x, 2x and 4x of the largest that keeps every activation resident
 * on a 16 GB V100 (v100-nvlink2):
 *   - the planner succeeds and its program validates;
 *   - the simulator finds no semantic violation (nothing used while absent,
 *     in flight or freed): ooc_sim_run returns OOC_OK;
 *   - when the result is feasible, peak reserved memory <= the budget;
 *   - an infeasible result carries an OOM report (reason, bytes);
 *   - planning and simulating again gives the same program and result.
 * A profile or zoo model that cannot be loaded fails the test (they are
 * part of the tree). OOC_CONFORMANCE_VERBOSE=1 prints one line per
 * scenario and planner (feasibility, time, peak, bytes swapped in).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/kernel.h"
#include "ir/semantics.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "planners/registry.h"
#include "base/util.h"

/* A small CNN with the awkward cases: in-place ops (aliases), a residual
 * add, a concat, dropout with a saved mask, flatten. */
static const char small_json[] =
  "{ \"format\": 1, \"name\": \"small\", \"input\": [3, 32, 32],\n"
  "  \"layers\": [\n"
  "    { \"name\": \"c1\", \"op\": \"conv2d\", \"out\": 16, \"kernel\": 3, \"pad\": 1 },\n"
  "    { \"name\": \"b1\", \"op\": \"batchnorm\" },\n"
  "    { \"name\": \"r1\", \"op\": \"relu\", \"in_place\": true },\n"
  "    { \"name\": \"c2\", \"op\": \"conv2d\", \"out\": 16, \"kernel\": 3, \"pad\": 1 },\n"
  "    { \"name\": \"r2\", \"op\": \"relu\" },\n"
  "    { \"name\": \"add\", \"op\": \"add\", \"in\": [\"r2\", \"r1\"] },\n"
  "    { \"name\": \"c3\", \"op\": \"conv2d\", \"out\": 8, \"kernel\": 1, \"in\": \"r1\" },\n"
  "    { \"name\": \"cat\", \"op\": \"concat\", \"in\": [\"add\", \"c3\"] },\n"
  "    { \"name\": \"d1\", \"op\": \"dropout\", \"in_place\": true },\n"
  "    { \"name\": \"p1\", \"op\": \"maxpool\", \"kernel\": 2 },\n"
  "    { \"name\": \"gp\", \"op\": \"globalpool\" },\n"
  "    { \"name\": \"fl\", \"op\": \"flatten\" },\n"
  "    { \"name\": \"fc\", \"op\": \"linear\", \"out\": 10 },\n"
  "    { \"name\": \"loss\", \"op\": \"softmax_ce\" }\n"
  "  ] }\n";

static ooc_hw *hw;

static void
setup(void)
{
  ooc_err err = { 0 };
  hw = NULL;
  ck_assert_msg(ooc_hw_load("v100-nvlink2", NULL, 0, &hw, &err) == OOC_OK,
                "profile v100-nvlink2: %s", err.msg);
}

static void
teardown(void)
{
  ooc_hw_free(hw);
}

/* One scenario: model m on hw with `budget`, allocator caching. */
typedef struct scen {
  ooc_model *m;
  ooc_costs *costs;
  ooc_liveness *lv;
  ooc_sim *sim;
  ooc_program scratch;
  uint64_t budget;
} scen;

static void
scen_open(scen *S, ooc_model *m, uint64_t budget)
{
  ooc_err err = { 0 };
  ooc_sim_config cfg;

  memset(S, 0, sizeof *S);
  S->m = m;
  S->budget = budget;
  ck_assert_msg(ooc_costs_alloc(m, hw, &S->costs, &err) == OOC_OK, "%s",
                err.msg);
  ck_assert_msg(ooc_liveness_alloc(m, &S->lv, &err) == OOC_OK, "%s",
                err.msg);
  cfg = (ooc_sim_config){ .model = m, .hw = hw, .costs = S->costs,
                          .allocator = &ooc_alloc_caching, .budget = budget,
                          .iterations = 2 };
  ck_assert_msg(ooc_sim_alloc(&cfg, &S->sim, &err) == OOC_OK, "%s", err.msg);
  ooc_program_init(&S->scratch);
}

static void
scen_close(scen *S)
{
  ooc_program_fini(&S->scratch);
  ooc_sim_free(S->sim);
  ooc_liveness_free(S->lv);
  ooc_costs_free(S->costs);
}

/* Plan with t and simulate; fills prog and r. Returns 0 when the budget is
 * below a single step's working set (no planner can run), 1 otherwise. */
static int
plan_and_sim(scen *S, const ooc_planner_type *t, ooc_program *prog,
             ooc_sim_result *r, const char *what)
{
  ooc_planner_ctx ctx = {
    .model = S->m, .hw = hw, .costs = S->costs, .live = S->lv,
    .allocator = &ooc_alloc_caching, .budget = S->budget, .sim = S->sim,
    .scratch = &S->scratch, .peers = ooc_planner_types,
  };
  ooc_plan pl;
  ooc_err err = { 0 };
  int rc;

  if (ooc_plan_check_budget(S->lv, S->budget, NULL) != OOC_OK)
    return 0;
  ck_assert_int_eq(ooc_plan_init(&pl, S->lv, &err), OOC_OK);
  rc = ooc_planner_run(t, &ctx, &pl, prog, &err);
  ck_assert_msg(rc == OOC_OK, "%s: planner %s failed: %s", what, t->name,
                err.msg);
  ck_assert_msg(ooc_program_validate(prog, &err) == OOC_OK, "%s: %s: %s",
                what, t->name, err.msg);
  /* Every kernel's tensors are listed: the executor can run it. */
  ck_assert_msg(ooc_kernels_check(ctx.model, prog, &err) == OOC_OK,
                "%s: %s: %s", what, t->name, err.msg);
  memset(r, 0, sizeof *r);
  rc = ooc_sim_run(S->sim, prog, r, NULL, &err);
  ck_assert_msg(rc == OOC_OK, "%s: planner %s: simulator rejects the "
                "program: %s", what, t->name, err.msg);
  ooc_plan_fini(&pl);
  return 1;
}

/* Every property for every planner on one scenario. */
static void
conform(scen *S, const char *what)
{
  int i;

  for (i = 0; ooc_planner_types[i] != NULL; i++) {
    const ooc_planner_type *t = ooc_planner_types[i];
    ooc_program p1, p2;
    ooc_sim_result r1, r2;

    ooc_program_init(&p1);
    ooc_program_init(&p2);
    if (plan_and_sim(S, t, &p1, &r1, what)) {
      if (getenv("OOC_CONFORMANCE_VERBOSE"))
        fprintf(stderr, "%s %s: feasible %d, %.3f ms, peak reserved %llu, "
                "budget %llu, h2d %llu\n", what, t->name, r1.feasible,
                1e-6 * (double)r1.iteration_ns,
                (unsigned long long)r1.peak_reserved,
                (unsigned long long)S->budget,
                (unsigned long long)r1.h2d_bytes);
      if (r1.feasible) {
        ck_assert_msg(r1.peak_reserved <= S->budget,
                      "%s: %s: feasible but peak reserved %llu > budget "
                      "%llu", what, t->name,
                      (unsigned long long)r1.peak_reserved,
                      (unsigned long long)S->budget);
        ck_assert_msg(r1.iteration_ns > 0, "%s: %s: zero time", what,
                      t->name);
      } else {
        ck_assert_msg(r1.oom.reason[0] != '\0' && r1.oom.requested_bytes > 0,
                      "%s: %s: infeasible without an OOM report", what,
                      t->name);
      }
      ck_assert(plan_and_sim(S, t, &p2, &r2, what));
      ck_assert_msg(ooc_program_equal(&p1, &p2), "%s: %s: programs differ "
                    "between two runs", what, t->name);
      ck_assert_msg(r1.feasible == r2.feasible &&
                    r1.iteration_ns == r2.iteration_ns &&
                    r1.peak_reserved == r2.peak_reserved &&
                    r1.peak_allocated == r2.peak_allocated &&
                    r1.h2d_bytes == r2.h2d_bytes &&
                    r1.d2h_bytes == r2.d2h_bytes && r1.events == r2.events,
                    "%s: %s: results differ between two runs", what,
                    t->name);
    }
    ooc_program_fini(&p1);
    ooc_program_fini(&p2);
  }
}

START_TEST(test_registry)
{
  ooc_err err = { 0 };
  int i, j;

  ck_assert_ptr_nonnull(ooc_planner_types[0]);
  ck_assert_str_eq(ooc_planner_types[0]->name, "incore");
  ck_assert_str_eq(ooc_planner_types[1]->name, "naive");
  for (i = 0; ooc_planner_types[i] != NULL; i++) {
    const ooc_planner_type *t = ooc_planner_types[i];
    ck_assert(t->name && t->summary && t->cite && t->plan && t->options);
    ck_assert_ptr_eq(ooc_planner_find(t->name, &err), t);
    for (j = 0; j < i; j++)
      ck_assert_str_ne(ooc_planner_types[j]->name, t->name);
  }
}
END_TEST

START_TEST(test_small_model)
{
  ooc_model_opts mo = { .batch = 8 };
  ooc_model *m = NULL;
  ooc_err err = { 0 };
  scen S;
  uint64_t budgets[3];
  int k;

  ck_assert_msg(ooc_model_load_string(small_json, "small", &mo, &m, &err)
                == OOC_OK, "%s", err.msg);
  /* Unlimited, a third of the activations above the largest step, and
   * exactly the largest step: feasible, tight, and likely infeasible. */
  {
    ooc_liveness *lv;
    ck_assert_int_eq(ooc_liveness_alloc(m, &lv, &err), OOC_OK);
    budgets[0] = hw->mem_usable;
    budgets[1] = lv->persistent_bytes + lv->max_step_bytes +
                 m->activation_bytes / 3 + (8u << 20);
    budgets[2] = lv->persistent_bytes + lv->max_step_bytes;
    ooc_liveness_free(lv);
  }
  for (k = 0; k < 3; k++) {
    char what[64];
    snprintf(what, sizeof what, "small b=8 budget=%llu",
             (unsigned long long)budgets[k]);
    scen_open(&S, m, budgets[k]);
    conform(&S, what);
    scen_close(&S);
  }
  ooc_model_free(m);
}
END_TEST

/* Zoo models at 1x, 2x, 4x the batch whose activations all fit. */
static void
zoo(const char *name, int64_t cap)
{
  ooc_model_opts mo = { .batch = 1 };
  ooc_model *m = NULL;
  ooc_err err = { 0 };
  uint64_t state, per_sample, budget;
  int64_t b0;
  int k;

  ck_assert_msg(ooc_model_load(name, &mo, &m, &err) == OOC_OK, "%s: %s",
                name, err.msg);
  budget = hw->mem_usable;
  state = m->weight_bytes + m->grad_bytes + m->opt_bytes;
  per_sample = m->activation_bytes;
  ooc_model_free(m);
  ck_assert(per_sample > 0 && state < budget);
  b0 = (int64_t)((budget - state) / per_sample);
  if (b0 < 1)
    b0 = 1;
  if (b0 > cap)
    b0 = cap;
  for (k = 1; k <= 4; k *= 2) {
    char what[96];
    scen S;
    mo.batch = b0 * k;
    ck_assert_msg(ooc_model_load(name, &mo, &m, &err) == OOC_OK, "%s",
                  err.msg);
    snprintf(what, sizeof what, "%s b=%lld", name, (long long)mo.batch);
    scen_open(&S, m, budget);
    conform(&S, what);
    scen_close(&S);
    ooc_model_free(m);
  }
}

START_TEST(test_zoo_resnet50) { zoo("resnet50", 1 << 20); }
END_TEST
START_TEST(test_zoo_vgg16) { zoo("vgg16", 1 << 20); }
END_TEST
START_TEST(test_zoo_densenet121) { zoo("densenet121", 1 << 20); }
END_TEST
START_TEST(test_zoo_gpt2) { zoo("gpt2", 1 << 20); }
END_TEST

static Suite *
conformance_suite(void)
{
  Suite *s = suite_create("conformance");
  TCase *tc = tcase_create("registry");

  tcase_add_test(tc, test_registry);
  suite_add_tcase(s, tc);
  tc = tcase_create("models");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_small_model);
  tcase_add_test(tc, test_zoo_resnet50);
  tcase_add_test(tc, test_zoo_vgg16);
  tcase_add_test(tc, test_zoo_densenet121);
  tcase_add_test(tc, test_zoo_gpt2);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(conformance_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
