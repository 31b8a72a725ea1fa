/* tests/check_zoo_planners.c — every registered planner on every model of
 * the zoo, beyond in-core (registering a planner puts it under this test).
 *
 * For each model in models/, the largest batch that trains in core on a
 * 16 GB V100 (v100-nvlink2, caching allocator, the profile's usable
 * memory) is found with ooc_maxbatch_find() and the incore planner,
 * exactly as `oocsim maxbatch -p incore` does. At 2x and 4x that batch:
 *   - each planner plans, or, when the budget is below the largest step's
 *     working set so that no plan can fit, it reports so: either an
 *     infeasible result with an OOM report, or OOC_EOOM from
 *     ooc_planner_run with ooc_plan_check_budget's "is below the working
 *     set of step ..." message;
 *   - the program validates and the simulator finds no semantic violation
 *     (nothing used while absent, in flight or freed);
 *   - a feasible result never exceeds the budget (allocated or reserved)
 *     and never beats the lower bound (docs/lower-bound.md), nor its own
 *     plan's bound (ooc_kit_plan_bound, joint's pruning);
 *     an infeasible one carries a reason, the op and the bytes it asked for;
 *   - the same input gives the same program;
 *   - run until steady (sim/sim.h: an iteration that takes and gives back
 *     no device memory), two more iterations end the same: the rule that
 *     stops the simulator there holds for every plan of every planner;
 *   - capacity issues no swap-in during forward (OOC-Paleo §3.5: "during
 *     forward propagation, only swap-out would happen");
 *   - a planner that searches (OOC_PLANNER_SEARCH: lms and window, whose
 *     autotune the schedule-window seed §2-§3 describes) finds a feasible
 *     plan wherever any registered planner does;
 * all of it on the caching allocator and on va (window "works with every
 * allocator").
 * OOC_ZOO_VERBOSE=1 prints one line per model, batch and planner.
 *
 * Cost: about 30 simulations per model for the in-core batch, then two
 * plans (up to 175 simulations for window's autotune, 200 for pooch's
 * search, cut from its default 2000) per planner, batch and allocator.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/kernel.h"
#include "ir/semantics.h"
#include "analysis/scenario.h"
#include "analysis/maxbatch.h"
#include "analysis/baseline.h"
#include "analysis/lower_bound.h"
#include "base/worker.h"
#include "plan/planner.h"
#include "plan/toolkit.h"
#include "planners/registry.h"

extern const ooc_planner_type ooc_planner_capacity;

#define HW "v100-nvlink2"
#define MAX_PLANNERS 64

/* The best-fit baseline and virtual addressing (schedule-window seed §4),
 * with the profile's 40 MiB chunk. */
static const ooc_allocator_type *const allocators[] = {
  &ooc_alloc_caching, &ooc_alloc_va,
};

/* The largest in-core batch of model on HW (caching, usable memory). */
static int64_t
incore_max_batch(const char *model)
{
  ooc_scenario_spec spec = { .model = model, .hw = HW, .planner = "incore",
                             .allocator = "caching" };
  ooc_summary at = { 0 };
  ooc_err err = { 0 };
  int64_t best = 0;

  ck_assert_msg(ooc_maxbatch_find(&spec, &best, &at, &err) == OOC_OK,
                "%s: maxbatch incore: %s", model, err.msg);
  ck_assert_msg(best >= 1, "%s: not even batch 1 trains in core", model);
  ooc_summary_fini(&at);
  return best;
}

typedef struct outcome {
  int planned;            /* 0: refused (budget below a step) */
  int feasible;
} outcome;

/* Plan model m with t on allocator a and check every property; returns
 * what happened. */
static outcome
run_one(const char *what, const ooc_model *m, const ooc_hw *hw,
        const ooc_costs *costs, const ooc_liveness *lv,
        const ooc_allocator_type *a, const ooc_planner_type *t,
        double bound_s)
{
  ooc_sim_config cfg = { .model = m, .hw = hw, .costs = costs,
                         .allocator = a, .budget = hw->mem_usable,
                         .iterations = 2 };
  ooc_sim *sim = NULL;
  ooc_program scratch, prog, prog2;
  ooc_plan pl, pl2;
  ooc_sim_result r;
  ooc_err err = { 0 };
  outcome o = { 0, 0 };
  int rc, below;

  ck_assert_msg(ooc_sim_alloc(&cfg, &sim, &err) == OOC_OK, "%s", err.msg);
  ooc_program_init(&scratch);
  ooc_program_init(&prog);
  ooc_program_init(&prog2);
  ck_assert_int_eq(ooc_plan_init(&pl, lv, &err), OOC_OK);
  ck_assert_int_eq(ooc_plan_init(&pl2, lv, &err), OOC_OK);
  {
    /* The properties below do not depend on how long a planner searches:
     * pooch's simulation budget is cut to 200 to keep the suite quick. */
    /* Fewer simulations for the searching planners: the properties
     * checked here hold for any budget of them, and joint runs every
     * other planner again in its start. */
    static const ooc_kv quick_sims = { "max_sims", "200" };
    static const ooc_kv quick_joint[2] = { { "max_evals", "30" },
                                           { "start_sims", "50" } };
    int sims = ooc_planner_accepts(t, quick_sims.key);
    int joint = ooc_planner_accepts(t, "max_evals");
    ooc_planner_ctx ctx = { .model = m, .hw = hw, .costs = costs,
                            .live = lv, .allocator = a,
                            .budget = hw->mem_usable, .sim = sim,
                            .scratch = &scratch,
                            .opts = sims ? &quick_sims
                                         : joint ? quick_joint : NULL,
                            .n_opts = sims ? 1 : joint ? 2 : 0,
                            .peers = ooc_planner_types };
    below = ooc_plan_check_budget(lv, hw->mem_usable, NULL) != OOC_OK;
    rc = ooc_planner_run(t, &ctx, &pl, &prog, &err);
    if (rc != OOC_OK) {
      /* Only "no plan can fit" may be refused, and with that message. */
      ck_assert_msg(below && rc == OOC_EOOM &&
                    strstr(err.msg, "is below the working set of step"),
                    "%s: %s (%s) failed: %s", what, t->name, a->name,
                    err.msg);
      goto done;
    }
    o.planned = 1;
    ck_assert_msg(ooc_program_validate(&prog, &err) == OOC_OK, "%s: %s: %s",
                  what, t->name, err.msg);
    ck_assert_msg(ooc_kernels_check(m, &prog, &err) == OOC_OK,
                  "%s: %s (%s): %s", what, t->name, a->name, err.msg);
    memset(&r, 0, sizeof r);
    rc = ooc_sim_run(sim, &prog, &r, NULL, &err);
    ck_assert_msg(rc == OOC_OK, "%s: %s (%s): simulator rejects the "
                  "program: %s", what, t->name, a->name, err.msg);
    o.feasible = r.feasible;
    if (getenv("OOC_ZOO_VERBOSE"))
      fprintf(stderr, "%s %s/%s: %s %.3f s, peak %.2f GiB, h2d %.2f GiB; "
              "%s%s\n", what, t->name, a->name,
              r.feasible ? "feasible" : "OOM", 1e-9 * (double)r.iteration_ns,
              (double)r.peak_reserved / 1073741824.0,
              (double)r.h2d_bytes / 1073741824.0, pl.note,
              r.feasible ? "" : r.oom.reason);
    if (r.feasible) {
      ck_assert_msg(r.peak_reserved <= hw->mem_usable &&
                    r.peak_allocated <= hw->mem_usable,
                    "%s: %s (%s): feasible but peak %llu > budget %llu",
                    what, t->name, a->name,
                    (unsigned long long)r.peak_reserved,
                    (unsigned long long)hw->mem_usable);
      ck_assert_msg(r.iteration_ns > 0, "%s: %s: zero time", what, t->name);
      /* docs/lower-bound.md: no plan beats it. */
      ck_assert_msg(1e-9 * (double)r.iteration_ns >= bound_s * (1 - 1e-9),
                    "%s: %s (%s): %.6f s beats the lower bound %.6f s",
                    what, t->name, a->name, 1e-9 * (double)r.iteration_ns,
                    bound_s);
      /* The plan's own bound (joint prunes with it) never exceeds its
       * simulated time. */
      ck_assert_msg(ooc_kit_plan_bound(&ctx, &pl) <= r.iteration_ns,
                    "%s: %s (%s): plan bound %lld ns > simulated %lld ns",
                    what, t->name, a->name,
                    (long long)ooc_kit_plan_bound(&ctx, &pl),
                    (long long)r.iteration_ns);
    } else {
      ck_assert_msg(r.oom.reason[0] != '\0' && r.oom.requested_bytes > 0 &&
                    r.oom.instr >= 0, "%s: %s (%s): infeasible without an "
                    "OOM report", what, t->name, a->name);
    }
    {
      /* The steady state (sim/sim.h): run until an iteration takes and
       * gives back no device memory; when one does, every later one
       * repeats it: two more iterations, run exactly, end the same. */
      ooc_sim_config c2 = cfg;
      ooc_sim *s2 = NULL;
      ooc_sim_result rs, rx;
      c2.max_iterations = OOC_SIM_MAX_ITERATIONS;
      ck_assert_int_eq(ooc_sim_alloc(&c2, &s2, &err), OOC_OK);
      ck_assert_int_eq(ooc_sim_run(s2, &prog, &rs, NULL, &err), OOC_OK);
      ooc_sim_free(s2);
      if (rs.feasible && rs.steady) {
        c2.iterations = c2.max_iterations = rs.iterations + 2;
        ck_assert_int_eq(ooc_sim_alloc(&c2, &s2, &err), OOC_OK);
        ck_assert_int_eq(ooc_sim_run(s2, &prog, &rx, NULL, &err), OOC_OK);
        ooc_sim_free(s2);
        ck_assert_msg(rx.feasible && rx.iteration_ns == rs.iteration_ns &&
                      rx.peak_reserved == rs.peak_reserved,
                      "%s: %s (%s): steady after %d iterations (%lld ns) "
                      "but not after %d (%s, %lld ns)", what, t->name,
                      a->name, rs.iterations, (long long)rs.iteration_ns,
                      rx.iterations, rx.feasible ? "feasible" : "OOM",
                      (long long)rx.iteration_ns);
      }
      /* A run steady at the default two is the default run. */
      if (r.feasible && r.steady)
        ck_assert_msg(rs.iterations == 2 && rs.iteration_ns == r.iteration_ns,
                      "%s: %s (%s): steady at 2 iterations, yet --steady ran "
                      "%d", what, t->name, a->name, rs.iterations);
    }
    if (below)
      ck_assert_msg(!r.feasible, "%s: %s: feasible below the working set "
                    "of a step", what, t->name);
    if (t == &ooc_planner_capacity)
      for (int32_t i = 0; i < pl.n_swaps; i++)
        ck_assert_msg(pl.swaps[i].in_after >= lv->n_layers - 2,
                      "%s: capacity swaps act %d in during forward (after "
                      "step %d)", what, (int)pl.swaps[i].act,
                      (int)pl.swaps[i].in_after);
    ck_assert_int_eq(ooc_planner_run(t, &ctx, &pl2, &prog2, &err), OOC_OK);
    ck_assert_msg(ooc_program_equal(&prog, &prog2), "%s: %s: two runs give "
                  "different programs", what, t->name);
  }
done:
  ooc_plan_fini(&pl);
  ooc_plan_fini(&pl2);
  ooc_program_fini(&prog);
  ooc_program_fini(&prog2);
  ooc_program_fini(&scratch);
  ooc_sim_free(sim);
  return o;
}

static void
zoo(const char *name)
{
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };
  int64_t b0 = incore_max_batch(name);

  ck_assert_msg(ooc_hw_load(HW, NULL, 0, &hw, &err) == OOC_OK, "%s",
                err.msg);
  for (int k = 2; k <= 4; k *= 2) {
    ooc_model_opts mo = { .batch = b0 * k };
    ooc_model *m = NULL;
    ooc_costs *costs = NULL;
    ooc_liveness *lv = NULL;
    outcome o[MAX_PLANNERS];
    char what[96];
    double bound_s;

    snprintf(what, sizeof what, "%s b=%lld (%dx in-core %lld)", name,
             (long long)mo.batch, k, (long long)b0);
    ck_assert_msg(ooc_model_load(name, &mo, &m, &err) == OOC_OK, "%s",
                  err.msg);
    ck_assert_msg(ooc_costs_alloc(m, hw, &costs, &err) == OOC_OK, "%s",
                  err.msg);
    ck_assert_msg(ooc_liveness_alloc(m, &lv, &err) == OOC_OK, "%s",
                  err.msg);
    {
      double incore_s, compute_s;
      ck_assert_msg(ooc_baseline_compute(m, hw, costs, lv, &incore_s,
                                         &compute_s, &err) == OOC_OK, "%s",
                    err.msg);
      bound_s = ooc_lower_bound_compute(lv, costs, hw, hw->mem_usable,
                                        compute_s);
    }
    for (int j = 0; j < 2; j++) {
      const ooc_allocator_type *a = allocators[j];
      int any = 0, n = 0;
      for (; ooc_planner_types[n] != NULL; n++) {
        ck_assert_int_lt(n, MAX_PLANNERS);
        o[n] = run_one(what, m, hw, costs, lv, a, ooc_planner_types[n],
                       bound_s);
        any |= o[n].feasible;
      }
      for (int i = 0; any && i < n; i++)
        if (ooc_planner_types[i]->flags & OOC_PLANNER_SEARCH)
          ck_assert_msg(o[i].feasible, "%s: %s (%s) searched and found no "
                        "feasible plan where another planner did", what,
                        ooc_planner_types[i]->name, a->name);
    }
    ooc_liveness_free(lv);
    ooc_costs_free(costs);
    ooc_model_free(m);
  }
  ooc_hw_free(hw);
}

START_TEST(zoo_alexnet) { zoo("alexnet"); }
END_TEST

START_TEST(zoo_alexnet_caffe) { zoo("alexnet_caffe"); }
END_TEST

START_TEST(zoo_vgg16) { zoo("vgg16"); }
END_TEST
START_TEST(zoo_resnet50) { zoo("resnet50"); }
END_TEST
START_TEST(zoo_resnet101) { zoo("resnet101"); }
END_TEST
START_TEST(zoo_resnet152) { zoo("resnet152"); }
END_TEST
START_TEST(zoo_resnet) { zoo("resnet"); }
END_TEST
START_TEST(zoo_densenet121) { zoo("densenet121"); }
END_TEST
START_TEST(zoo_inception_v4) { zoo("inception_v4"); }
END_TEST
START_TEST(zoo_unet) { zoo("unet"); }
END_TEST
START_TEST(zoo_deeplabv3plus) { zoo("deeplabv3plus"); }
END_TEST
START_TEST(zoo_resnext101_3d) { zoo("resnext101_3d"); }
END_TEST
START_TEST(zoo_gpt2) { zoo("gpt2"); }
END_TEST

/* Virtual addressing against the best-fit baseline (schedule-window seed
 * §4), ResNet-50 on v100-nvlink2 with window: each of the 107 parameter
 * tensors once took a whole 40 MiB chunk (4.18 GiB for 292 MiB) and va's
 * largest batch was 901 against caching's 1214. Small requests now share
 * chunks, so only the chunk rounding of the tensors of half a chunk or
 * more remains: the two largest batches are within 2% (1201 and 1214 when
 * written), and under va the parameter tensors count at most 25% above
 * their bytes (364.03 MiB). */
START_TEST(resnet50_va_maxbatch)
{
  ooc_scenario_spec spec = { .model = "resnet50", .hw = HW,
                             .planner = "window", .allocator = "caching" };
  ooc_summary at = { 0 };
  ooc_err err = { 0 };
  int64_t caching = 0, va = 0;
  ooc_model_opts mo = { .batch = 1 };
  ooc_model *m = NULL;
  ooc_hw *hw = NULL;
  uint64_t bytes = 0, foot = 0;

  ck_assert_msg(ooc_maxbatch_find(&spec, &caching, &at, &err) == OOC_OK,
                "%s", err.msg);
  ooc_summary_fini(&at);
  spec.allocator = "va";
  ck_assert_msg(ooc_maxbatch_find(&spec, &va, &at, &err) == OOC_OK,
                "%s", err.msg);
  ooc_summary_fini(&at);
  ck_assert_msg(va * 100 >= caching * 98, "va %lld, caching %lld",
                (long long)va, (long long)caching);

  ck_assert_msg(ooc_model_load("resnet50", &mo, &m, &err) == OOC_OK, "%s",
                err.msg);
  ck_assert_msg(ooc_hw_load(HW, NULL, 0, &hw, &err) == OOC_OK, "%s",
                err.msg);
  {
    ooc_alloc_config ac = { .budget = hw->mem_usable, .hw = hw };
    int n = 0;
    for (int32_t i = 0; i < m->n_layers; i++) {
      const ooc_layer *l = &m->layers[i];
      uint64_t pb = l->param_bytes + l->grad_bytes + l->opt_bytes;
      if (pb == 0)
        continue;
      n++;
      bytes += pb;
      foot += ooc_alloc_footprint(&ooc_alloc_va, &ac, pb);
    }
    ck_assert_int_eq(n, 107);
    ck_assert_uint_le(foot * 4, bytes * 5);
  }
  ooc_model_free(m);
  ooc_hw_free(hw);
}
END_TEST

/* Largest batch of resnet50 on HW under planner p, allocator a and --opt
 * grads=g (-1: the planner's default). */
static int64_t
grads_max(const char *p, const char *a, int g)
{
  ooc_kv opt = { .key = "grads", .value = g == 0 ? "0" : "1" };
  ooc_scenario_spec spec = { .model = "resnet50", .hw = HW, .planner = p,
                             .allocator = a, .opts = &opt,
                             .n_opts = g < 0 ? 0 : 1 };
  ooc_summary at = { 0 };
  ooc_err err = { 0 };
  int64_t best = 0;

  ck_assert_msg(ooc_maxbatch_find(&spec, &best, &at, &err) == OOC_OK,
                "%s/%s: %s", p, a, err.msg);
  ooc_summary_fini(&at);
  return best;
}

/* Swappable activation gradients (issue 11, item 5): with gradients kept
 * resident, the backward of res2_2, which needs three activation
 * gradients at once, bound ResNet-50 on a 16 GB V100 at batch 1214
 * (caching; 1201 under va) for both window and lms. The schedule-window
 * seed's variable-sequence (§3) covers every variable, gradients included,
 * and TFLMS rewrites any tensor edge: swapping gradients lifts the ceiling
 * (1580 for window under va and 1594 for lms when written). */
START_TEST(resnet50_grad_swaps_maxbatch)
{
  int64_t w0 = grads_max("window", "va", 0), w = grads_max("window", "va", -1);
  int64_t l0 = grads_max("lms", "caching", 0);
  int64_t l = grads_max("lms", "caching", -1);

  ck_assert_msg(w0 <= 1214 && l0 <= 1214, "resident gradients: window %lld, "
                "lms %lld", (long long)w0, (long long)l0);
  ck_assert_msg(w > 1214 * 5 / 4, "window va with gradient swaps: %lld",
                (long long)w);
  ck_assert_msg(l > 1214 * 5 / 4, "lms with gradient swaps: %lld",
                (long long)l);
}
END_TEST

/* Largest batch of model under window with allocator spec a, gradients
 * resident (--opt grads=0). */
static const ooc_kv grads0 = { .key = "grads", .value = "0" };

static int64_t
window_max(const char *model, const char *a)
{
  ooc_scenario_spec spec = { .model = model, .hw = HW, .planner = "window",
                             .allocator = a, .opts = &grads0, .n_opts = 1 };
  ooc_summary at = { 0 };
  ooc_err err = { 0 };
  int64_t best = 0;

  ck_assert_msg(ooc_maxbatch_find(&spec, &best, &at, &err) == OOC_OK,
                "%s/%s: %s", model, a, err.msg);
  ooc_summary_fini(&at);
  return best;
}

/* The schedule-window seed's §4 effect: under heavy swapping a best-fit
 * caching allocator reuses its cached blocks more often than best fit can
 * keep them whole, fragments, and an allocation fails with enough memory
 * free in pieces; virtual addressing maps any free physical chunks behind
 * one range and does not. DenseNet-121 (dense concatenations: the skip
 * connections the seed names) with window on a 16 GB V100: when written,
 * the largest batch was 1555 on the ideal allocator, 1537 on va, 1376 on
 * caching (PyTorch) and 1392 on bestfit (nnabla); 1266 and 1267 before
 * max-pool indices were saved as PyTorch does. At batch 1400 bestfit runs
 * out of memory with the block it needs free only in fragments (4.16 GiB
 * free, the largest piece 1 KiB short of the 2.09 GiB asked),
 * where va trains. ResNet-50 does not show it: its largest step working set
 * with gradients resident (the backward of res2_2) bound every allocator
 * first, at 1214. All of this with gradients resident (--opt grads=0):
 * when window may swap gradients too, the schedule leaves enough slack that
 * the allocators no longer part (1615 bestfit and caching, 1606 va when
 * written), so the effect is asserted where it shows. */
START_TEST(densenet121_fragmentation)
{
  int64_t ideal = window_max("densenet121", "ideal");
  int64_t va = window_max("densenet121", "va");
  int64_t caching = window_max("densenet121", "caching");
  int64_t bestfit = window_max("densenet121", "bestfit");
  ooc_scenario_spec spec = { .model = "densenet121", .batch = 1400,
                             .hw = HW, .planner = "window",
                             .allocator = "bestfit", .opts = &grads0,
                             .n_opts = 1 };
  ooc_summary sum = { 0 };
  ooc_err err = { 0 };

  ck_assert_msg(va * 100 >= ideal * 97, "va %lld, ideal %lld",
                (long long)va, (long long)ideal);
  ck_assert_msg(bestfit * 100 < va * 92 && caching * 100 < va * 92,
                "bestfit %lld, caching %lld, va %lld", (long long)bestfit,
                (long long)caching, (long long)va);
  ck_assert_msg(ooc_scenario_run(&spec, &sum, NULL, &err) == OOC_OK, "%s",
                err.msg);
  ck_assert(!sum.feasible);
  ck_assert_msg(strstr(sum.oom.reason, "fragmented") != NULL &&
                sum.oom.largest_free_bytes < sum.oom.requested_bytes &&
                sum.oom.reserved_bytes - sum.oom.live_bytes >
                    sum.oom.requested_bytes,
                "%s", sum.oom.reason);
  ooc_summary_fini(&sum);
  spec.allocator = "va";
  ck_assert_msg(ooc_scenario_run(&spec, &sum, NULL, &err) == OOC_OK, "%s",
                err.msg);
  ck_assert_msg(sum.feasible, "%s", sum.oom.reason);
  ooc_summary_fini(&sum);
}
END_TEST

/* pooch's group tests and joint's sweeps simulate, in a helper thread,
 * the candidate that follows each one, and take that simulation when the
 * one before fails (base/worker.h). Whether the helper gets to run a
 * candidate before it is needed depends on the machine's timing, so a
 * threads=2 plan equal to the threads=1 plan may not show the helper's
 * results were ever used. With the helper eager, every candidate posted
 * runs there, and what is used follows from the search alone: the plan
 * must still be threads=1's, the helper's results used and some dropped.
 * On resnet50 b384 v100-pcie3 pooch's plan is joint's start, and joint's
 * PoocH uses exactly what pooch alone does (the same search), so what
 * joint used beyond that is its sweeps'. */
static void
speculative(const char *planner, unsigned long *ran, unsigned long *used)
{
  static const ooc_kv one = { "threads", "1" }, two = { "threads", "2" };
  ooc_scenario_spec spec = { .model = "resnet50", .batch = 384,
                             .hw = "v100-pcie3", .planner = planner,
                             .opts = &one, .n_opts = 1 };
  ooc_program p1, p2;
  ooc_scenario_out o1 = { .program = &p1 }, o2 = { .program = &p2 };
  ooc_summary s1 = { 0 }, s2 = { 0 };
  ooc_err err = { 0 };
  unsigned long r0, u0;

  ooc_program_init(&p1);
  ooc_program_init(&p2);
  ck_assert_msg(ooc_scenario_run(&spec, &s1, &o1, &err) == OOC_OK, "%s",
                err.msg);
  spec.opts = &two;
  ooc_worker_counts(&r0, &u0);
  ooc_worker_set_eager(1);
  ck_assert_msg(ooc_scenario_run(&spec, &s2, &o2, &err) == OOC_OK, "%s",
                err.msg);
  ooc_worker_set_eager(0);
  ooc_worker_counts(ran, used);
  *ran -= r0;
  *used -= u0;
  ck_assert_msg(s1.feasible && s2.feasible, "%s: not feasible", planner);
  ck_assert_msg(ooc_program_equal(&p1, &p2), "%s: threads=2 with the "
                "helper eager gives another plan than threads=1", planner);
  ck_assert_str_eq(s1.plan_note, s2.plan_note);
  ck_assert_msg(*used > 0 && *ran > *used, "%s: the helper ran %lu "
                "candidates, %lu used", planner, *ran, *used);
  ooc_summary_fini(&s1);
  ooc_summary_fini(&s2);
  ooc_program_fini(&p1);
  ooc_program_fini(&p2);
}

START_TEST(speculation_used)
{
  unsigned long pr, pu, jr, ju;

  speculative("pooch", &pr, &pu);
  speculative("joint", &jr, &ju);
  ck_assert_msg(ju > pu, "joint's sweeps used none of the helper's "
                "candidates (joint %lu, its PoocH %lu)", ju, pu);
}
END_TEST

/* The suite is built twice (Makefile.am): ZOO_PART 1 (check_zoo_planners)
 * and 2 (check_zoo_planners_b) each run about half of its time, so that
 * `make -j2 check` runs the halves side by side instead of one 60 s (5 min
 * under the sanitizers) test last and alone; 0 runs it all. */
#ifndef ZOO_PART
#define ZOO_PART 0
#endif

static Suite *
zoo_planners_suite(void)
{
  Suite *s = suite_create("zoo_planners");
  TCase *tc = tcase_create("beyond_incore");

  tcase_set_timeout(tc, 120);
  if (ZOO_PART != 2) {                  /* 28 s natively */
    tcase_add_test(tc, zoo_alexnet);
    tcase_add_test(tc, zoo_vgg16);
    tcase_add_test(tc, zoo_resnet50);
    tcase_add_test(tc, zoo_resnet152);
    tcase_add_test(tc, zoo_resnet);
    tcase_add_test(tc, zoo_inception_v4);
    tcase_add_test(tc, zoo_gpt2);
    tcase_add_test(tc, resnet50_va_maxbatch);
  }
  if (ZOO_PART != 1) {                  /* 36 s */
    tcase_add_test(tc, zoo_alexnet_caffe);
    tcase_add_test(tc, zoo_resnet101);
    tcase_add_test(tc, zoo_densenet121);
    tcase_add_test(tc, zoo_unet);
    tcase_add_test(tc, zoo_deeplabv3plus);
    tcase_add_test(tc, zoo_resnext101_3d);
    tcase_add_test(tc, resnet50_grad_swaps_maxbatch);
    tcase_add_test(tc, densenet121_fragmentation);
    tcase_add_test(tc, speculation_used);
  }
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(zoo_planners_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
