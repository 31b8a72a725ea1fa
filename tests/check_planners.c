/* tests/check_planners.c — the planners of planners/, each on small
 * hand-built models whose right answer is worked out by hand in the
 * comments, and the properties every registered planner must have.
 *
 * The main model, "chain6", is six linear layers 256 -> 256 (bias) at batch
 * 1024 in fp32: every activation is 1024 x 256 x 4 B = 1 MiB, no workspace,
 * no saved state. Schedule (13 steps): fwd fc1..fc6 = steps 0..5, bwd fc6..
 * fc1 = steps 6..11, update = 12. Act i (layer fci) is used by fwd fci
 * (step i-1), fwd fc(i+1) (step i) and bwd fc(i+1) (step 11-i, it needs its
 * input); act 6 only by step 5. Gradient of act i lives over steps
 * [11-i, 12-i] (i = 6: [6, 6]). The widest step is a backward one: its
 * input and two gradients, 3 MiB. Persistent: per layer 65,792 parameters
 * x 4 B x 3 (weights, gradients, momentum) = 789,504 B, x 6 = 4,737,024 B,
 * plus the 1 MiB input = 5,785,600 B.
 *
 * Budgets below are persistent + N MiB on the `ideal` allocator unless a
 * test says otherwise, so "fits" is plain arithmetic.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "plan/planner.h"
#include "planners/registry.h"
#include "plan/toolkit.h"
#include "ir/algo.h"

#define MiB (1024u * 1024u)

static const char *chain6 =
  "{ \"name\": \"chain6\", \"input\": [256], \"layers\": ["
  "  { \"name\": \"fc1\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"fc2\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"fc3\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"fc4\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"fc5\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"fc6\", \"op\": \"linear\", \"out\": 256 } ] }";

/* A skip connection: fc1's output is read by fc2 and by the add. */
static const char *skip =
  "{ \"name\": \"skip\", \"input\": [256], \"layers\": ["
  "  { \"name\": \"fc1\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"fc2\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"fc3\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"fc4\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"add\", \"op\": \"add\", \"in\": [\"fc4\", \"fc1\"] },"
  "  { \"name\": \"fc5\", \"op\": \"linear\", \"out\": 256 } ] }";

/* conv -> bn -> conv -> bn -> conv at batch 2: only bn outputs feed a
 * convolution (besides the input). */
static const char *convbn =
  "{ \"name\": \"convbn\", \"input\": [4, 8, 8], \"layers\": ["
  "  { \"name\": \"conv1\", \"op\": \"conv2d\", \"out\": 4, \"kernel\": 3,"
  "    \"pad\": 1 },"
  "  { \"name\": \"bn1\", \"op\": \"batchnorm\" },"
  "  { \"name\": \"conv2\", \"op\": \"conv2d\", \"out\": 4, \"kernel\": 3,"
  "    \"pad\": 1 },"
  "  { \"name\": \"bn2\", \"op\": \"batchnorm\" },"
  "  { \"name\": \"conv3\", \"op\": \"conv2d\", \"out\": 4, \"kernel\": 3,"
  "    \"pad\": 1 } ] }";

/* A residual stack with concatenation, for the properties every planner
 * must have. */
static const char *resblocks =
  "{ \"name\": \"res\", \"input\": [16, 32, 32], \"layers\": ["
  "  { \"name\": \"stem\", \"op\": \"conv2d\", \"out\": 32, \"kernel\": 3,"
  "    \"pad\": 1 },"
  "  { \"repeat\": 4, \"var\": \"i\", \"layers\": ["
  "    { \"name\": \"b{i}_c1\", \"op\": \"conv2d\", \"out\": 32,"
  "      \"kernel\": 3, \"pad\": 1 },"
  "    { \"name\": \"b{i}_bn\", \"op\": \"batchnorm\" },"
  "    { \"name\": \"b{i}_r\", \"op\": \"relu\", \"in_place\": true },"
  "    { \"name\": \"b{i}_c2\", \"op\": \"conv2d\", \"out\": 32,"
  "      \"kernel\": 3, \"pad\": 1 },"
  "    { \"name\": \"b{i}_add\", \"op\": \"add\", \"in\": [\"@prev\","
  "      \"@in\"] } ] },"
  "  { \"name\": \"cat\", \"op\": \"concat\", \"in\": [\"@prev\", \"stem\"] },"
  "  { \"name\": \"pool\", \"op\": \"globalpool\" },"
  "  { \"name\": \"flat\", \"op\": \"flatten\" },"
  "  { \"name\": \"fc\", \"op\": \"linear\", \"out\": 10 },"
  "  { \"name\": \"loss\", \"op\": \"softmax_ce\" } ] }";

extern const ooc_planner_type ooc_planner_incore, ooc_planner_vdnn,
    ooc_planner_lms, ooc_planner_capacity, ooc_planner_window,
    ooc_planner_checkpoint, ooc_planner_pooch, ooc_planner_checkpoint_dp,
    ooc_planner_superneurons, ooc_planner_joint, ooc_planner_naive;

/* A chain of n linear layers 256 -> 256 (n filled in by chain_json). */
static char *chain_json(int n)
{
  char *j = malloc(512);
  ck_assert_ptr_nonnull(j);
  snprintf(j, 512, "{ \"name\": \"chain\", \"input\": [256], \"layers\": ["
           "  { \"repeat\": %d, \"var\": \"i\", \"layers\": ["
           "    { \"name\": \"fc{i+1}\", \"op\": \"linear\", "
           "\"out\": 256 } ] } ] }", n);
  return j;
}

typedef struct fixture {
  ooc_model *m;
  ooc_hw *hw;
  ooc_costs *costs;
  ooc_liveness *lv;
  ooc_sim *sim;
  ooc_program scratch, prog;
  ooc_plan plan;
  ooc_planner_ctx ctx;
  ooc_sim_result res;
  uint64_t budget;
} fixture;

static void fx_open(fixture *f, const char *json, int64_t batch)
{
  ooc_model_opts mo = { .batch = batch };
  ooc_err err = { 0 };
  int rc;

  memset(f, 0, sizeof *f);
  rc = ooc_model_load_string(json, "test.json", &mo, &f->m, &err);
  ck_assert_msg(rc == OOC_OK, "%s", err.msg);
  /* Round numbers: 10 GB/s each way, two copy engines (shared with
   * check_hw). */
  rc = ooc_hw_load(OOC_SRCDIR "/tests/data/hw/round.json", NULL, 0, &f->hw,
                   &err);
  ck_assert_msg(rc == OOC_OK, "%s", err.msg);
  rc = ooc_costs_alloc(f->m, f->hw, &f->costs, &err);
  ck_assert_msg(rc == OOC_OK, "%s", err.msg);
  rc = ooc_liveness_alloc(f->m, &f->lv, &err);
  ck_assert_msg(rc == OOC_OK, "%s", err.msg);
  ooc_program_init(&f->scratch);
  ooc_program_init(&f->prog);
  rc = ooc_plan_init(&f->plan, f->lv, &err);
  ck_assert_msg(rc == OOC_OK, "%s", err.msg);
}

/* Configure the oracle for budget (bytes), allocator a and va chunk (0:
 * the profile's). */
static void fx_budget_chunk(fixture *f, uint64_t budget, const char *alloc,
                            uint64_t chunk)
{
  ooc_err err = { 0 };
  const char *opts;
  const ooc_allocator_type *a = ooc_allocator_find(alloc, &opts, &err);
  ooc_sim_config cfg;
  int rc;

  ck_assert_msg(a != NULL, "%s", err.msg);
  ooc_sim_free(f->sim);
  f->sim = NULL;
  cfg = (ooc_sim_config){ .model = f->m, .hw = f->hw, .costs = f->costs,
                          .allocator = a, .allocator_options = opts,
                          .budget = budget, .chunk_bytes = chunk,
                          .iterations = 2 };
  rc = ooc_sim_alloc(&cfg, &f->sim, &err);
  ck_assert_msg(rc == OOC_OK, "%s", err.msg);
  f->budget = budget;
  f->ctx = (ooc_planner_ctx){ .model = f->m, .hw = f->hw,
                              .costs = f->costs, .live = f->lv,
                              .allocator = a, .allocator_options = opts,
                              .budget = budget,
                              .chunk_bytes = cfg.chunk_bytes,
                              .opts = NULL, .n_opts = 0, .sim = f->sim,
                              .scratch = &f->scratch,
                              .peers = ooc_planner_types };
}

/* Configure the oracle for budget (bytes) and allocator a. */
static void fx_budget(fixture *f, uint64_t budget, const char *alloc)
{
  fx_budget_chunk(f, budget, alloc, 0);
}

/* Plan with t and options, then simulate the lowered program. */
static void fx_run(fixture *f, const ooc_planner_type *t, const ooc_kv *opts,
                   int n_opts)
{
  ooc_err err = { 0 };
  int rc;

  f->ctx.opts = opts;
  f->ctx.n_opts = n_opts;
  rc = ooc_planner_run(t, &f->ctx, &f->plan, &f->prog, &err);
  ck_assert_msg(rc == OOC_OK, "%s: %s", t->name, err.msg);
  rc = ooc_sim_run(f->sim, &f->prog, &f->res, NULL, &err);
  ck_assert_msg(rc == OOC_OK, "%s: %s", t->name, err.msg);
  if (f->res.feasible)
    ck_assert_uint_le(f->res.peak_reserved, f->budget);
}

static void fx_close(fixture *f)
{
  ooc_plan_fini(&f->plan);
  ooc_program_fini(&f->prog);
  ooc_program_fini(&f->scratch);
  ooc_sim_free(f->sim);
  ooc_liveness_free(f->lv);
  ooc_costs_free(f->costs);
  ooc_hw_free(f->hw);
  ooc_model_free(f->m);
}

static void assert_swap(const ooc_plan *pl, int i, int act, int out_after,
                        int out_wait, int in_after, int in_before)
{
  ck_assert_int_lt(i, pl->n_swaps);
  ck_assert_int_eq(pl->swaps[i].act, act);
  ck_assert_int_eq(pl->swaps[i].out_after, out_after);
  ck_assert_int_eq(pl->swaps[i].out_wait, out_wait);
  ck_assert_int_eq(pl->swaps[i].in_after, in_after);
  ck_assert_int_eq(pl->swaps[i].in_before, in_before);
}

/* --- the model the hand computations rely on ------------------------------ */

/* The search planners' event caps count a run as two timed iterations
 * would (--steady runs more): 600 events over 6 iterations count 200. */
START_TEST(events_per_two_iterations)
{
  ooc_sim_result r = { .events = 600, .iterations = 6 };

  ck_assert_uint_eq(ooc_planner_events(&r), 200);
  r.iterations = 2;
  ck_assert_uint_eq(ooc_planner_events(&r), 600);
  r.iterations = 1;
  ck_assert_uint_eq(ooc_planner_events(&r), 600);
}
END_TEST

/* budget_s's reserve: k of the longest evaluations recorded, plus 1% of
 * the budget. An evaluation recorded as begun 0.5 s ago counts at least
 * 0.5 s, and a shorter one after it does not lower the longest. */
START_TEST(reserve_keeps_back_longest_and_one_percent)
{
  ooc_reserve r;

  ooc_reserve_init(&r, 2.0);
  ck_assert_double_eq_tol(ooc_reserve_s(&r, 4), 0.02, 1e-12);
  ooc_reserve_timed(&r, ooc_wall_s() - 0.5);
  ooc_reserve_timed(&r, ooc_wall_s());
  ck_assert(r.eval_s >= 0.5);
  ck_assert_double_eq_tol(ooc_reserve_s(&r, 2), 2 * r.eval_s + 0.02,
                          1e-12);
  ooc_reserve_init(&r, 0);
  ck_assert_double_eq_tol(ooc_reserve_s(&r, 3), 0.0, 1e-12);
}
END_TEST

START_TEST(chain6_figures)
{
  fixture f;
  fx_open(&f, chain6, 1024);
  ck_assert_int_eq(f.lv->n_steps, 13);
  ck_assert_int_eq(f.lv->n_acts, 7);
  for (int i = 1; i <= 6; i++) {
    ck_assert_int_eq(f.lv->act_layer[i], i);
    ck_assert_uint_eq(f.lv->act_bytes[i], MiB);
  }
  ck_assert_uint_eq(f.lv->persistent_bytes, 5785600);
  ck_assert_uint_eq(f.lv->max_step_bytes, 3 * MiB);
  /* act 2: produced at 1, read by fwd fc3 (2) and bwd fc3 (9). */
  ck_assert_int_eq(f.lv->act_nuses[2], 3);
  ck_assert_int_eq(f.lv->use_steps[f.lv->act_first[2] + 0], 1);
  ck_assert_int_eq(f.lv->use_steps[f.lv->act_first[2] + 1], 2);
  ck_assert_int_eq(f.lv->use_steps[f.lv->act_first[2] + 2], 9);
  fx_close(&f);
}
END_TEST

/* --- vdnn ----------------------------------------------------------------- */

/* Acts 1..4 have a step between their last forward use (i) and first
 * backward use (11-i); act 5 (5 -> 6) has none, act 6 no backward use.
 * Prefetch one layer ahead: issued after step 9-i (as bwd of the layer
 * before starts), needed at 11-i; the offload overlaps one forward layer
 * and step i+2 waits for it. */
START_TEST(vdnn_one_layer_ahead)
{
  fixture f;
  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 64 * MiB, "ideal");
  fx_run(&f, &ooc_planner_vdnn, NULL, 0);
  ck_assert_int_eq(f.plan.n_swaps, 4);
  for (int i = 1; i <= 4; i++) {
    assert_swap(&f.plan, i - 1, i, i, i + 2, 9 - i, 11 - i);
    ck_assert_int_eq(f.plan.swaps[i - 1].in_before -
                     f.plan.swaps[i - 1].in_after, 2);
    ck_assert_int_eq(f.plan.action[i], OOC_SWAP);
  }
  ck_assert_int_eq(f.plan.action[5], OOC_KEEP);
  ck_assert_int_eq(f.plan.action[6], OOC_KEEP);
  ck_assert(f.res.feasible);
  ck_assert_uint_eq(f.res.d2h_bytes, 4 * MiB);
  ck_assert_uint_eq(f.res.h2d_bytes, 4 * MiB);
  fx_close(&f);
}
END_TEST

/* convbn: steps fwd conv1..conv3 = 0..4, bwd conv3..conv1 = 5..9. Acts:
 * 1 conv1 (last fwd 1, first bwd 8: bn1 needs its input), 2 bn1 (2, 7),
 * 3 conv2 (3, 6), 4 bn2 (4, 5: no step between), 5 conv3 (no backward
 * use). all -> {1, 2, 3}; conv -> only the convolution input {2}. */
START_TEST(vdnn_policy)
{
  fixture f;
  ooc_kv conv = { "policy", "conv" }, all = { "policy", "all" },
         bad = { "policy", "some" };
  ooc_err err = { 0 };

  fx_open(&f, convbn, 2);
  fx_budget(&f, f.lv->persistent_bytes + 64 * MiB, "ideal");
  fx_run(&f, &ooc_planner_vdnn, &all, 1);
  ck_assert_int_eq(f.plan.n_swaps, 3);
  assert_swap(&f.plan, 0, 1, 1, 3, 6, 8);
  assert_swap(&f.plan, 1, 2, 2, 4, 5, 7);
  assert_swap(&f.plan, 2, 3, 3, 5, 4, 6);
  fx_run(&f, &ooc_planner_vdnn, &conv, 1);
  ck_assert_int_eq(f.plan.n_swaps, 1);
  assert_swap(&f.plan, 0, 2, 2, 4, 5, 7);
  ck_assert(strstr(f.plan.note, "policy=conv") != NULL);
  f.ctx.opts = &bad;
  f.ctx.n_opts = 1;
  ck_assert_int_eq(ooc_planner_run(&ooc_planner_vdnn, &f.ctx, &f.plan,
                                   &f.prog, &err), OOC_EINVAL);
  ck_assert(strstr(err.msg, "policy=some") != NULL);
  fx_close(&f);
}
END_TEST

/* --- lms ------------------------------------------------------------------ */

/* Gaps of act i: 1 (fwd) and 11-2i (to backward). threshold 4 swaps acts
 * with 11-2i > 4: 1, 2, 3; threshold 6: 1, 2. ahead 1: issued after step
 * 9-i. sync_mode 3: step i+1 waits for the D2H, the H2D is issued right
 * before the use (after 10-i) whatever ahead says. */
START_TEST(lms_threshold)
{
  fixture f;
  ooc_kv o4[] = { { "swapout_threshold", "4" }, { "swapin_ahead", "1" },
                  { "swapin_groupby", "0" }, { "sync_mode", "0" } };
  ooc_kv o6[] = { { "swapout_threshold", "6" }, { "swapin_ahead", "1" },
                  { "swapin_groupby", "0" }, { "sync_mode", "3" } };

  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 64 * MiB, "ideal");
  fx_run(&f, &ooc_planner_lms, o4, 4);
  ck_assert_int_eq(f.plan.n_swaps, 3);
  for (int i = 1; i <= 3; i++)
    assert_swap(&f.plan, i - 1, i, i, -1, 9 - i, 11 - i);
  ck_assert_int_eq(f.plan.action[4], OOC_KEEP);
  ck_assert_str_eq(f.plan.note, "lms: threshold=4, ahead=1, groupby=0, "
                   "sync_mode=0 (0 simulations)");
  fx_run(&f, &ooc_planner_lms, o6, 4);
  ck_assert_int_eq(f.plan.n_swaps, 2);
  for (int i = 1; i <= 2; i++)
    assert_swap(&f.plan, i - 1, i, i, i + 1, 10 - i, 11 - i);
  fx_close(&f);
}
END_TEST

/* skip: fwd fc1..fc5 = 0..5 (add = 4), bwd fc5 = 6, add = 7, fc4 = 8,
 * fc3 = 9, fc2 = 10. fc1's output is used at 0, 1, 4 (add) and 10 (bwd
 * fc2): gaps 1, 3, 6. threshold 2, groupby 0: two records, 1 -> 4 and
 * 4 -> 10; groupby 6 serves the use at 10 with the swap-in for 4; threshold
 * 3: only the gap of 6. */
START_TEST(lms_skip_groupby)
{
  fixture f;
  ooc_kv g0[] = { { "swapout_threshold", "2" }, { "swapin_ahead", "1" },
                  { "swapin_groupby", "0" } };
  ooc_kv g6[] = { { "swapout_threshold", "2" }, { "swapin_ahead", "1" },
                  { "swapin_groupby", "6" } };
  ooc_kv t3[] = { { "swapout_threshold", "3" }, { "swapin_ahead", "2" },
                  { "swapin_groupby", "0" } };
  int n;

  fx_open(&f, skip, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 64 * MiB, "ideal");
  ck_assert_int_eq(f.lv->act_nuses[1], 4);
  fx_run(&f, &ooc_planner_lms, g0, 3);
  n = 0;
  for (int i = 0; i < f.plan.n_swaps; i++)
    if (f.plan.swaps[i].act == 1) {
      if (n == 0)
        assert_swap(&f.plan, i, 1, 1, -1, 2, 4);
      else
        assert_swap(&f.plan, i, 1, 4, -1, 8, 10);
      n++;
    }
  ck_assert_int_eq(n, 2);
  ck_assert(f.res.feasible);
  fx_run(&f, &ooc_planner_lms, g6, 3);
  n = 0;
  for (int i = 0; i < f.plan.n_swaps; i++)
    if (f.plan.swaps[i].act == 1) {
      assert_swap(&f.plan, i, 1, 1, -1, 2, 4);
      n++;
    }
  ck_assert_int_eq(n, 1);
  fx_run(&f, &ooc_planner_lms, t3, 3);
  n = 0;
  for (int i = 0; i < f.plan.n_swaps; i++)
    if (f.plan.swaps[i].act == 1) {
      assert_swap(&f.plan, i, 1, 4, -1, 7, 10);
      n++;
    }
  ck_assert_int_eq(n, 1);
  fx_close(&f);
}
END_TEST

/* In core, chain6 peaks at 7 MiB of activations and gradients (step 6:
 * acts 1..5, gradients of 5 and 6): with 64 MiB autotune finds that no
 * swapping is needed (threshold = 13 ops); with 4 MiB in-core does not
 * fit, but swapping does, and autotune must find such a setting. */
START_TEST(lms_autotune)
{
  fixture f;
  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 64 * MiB, "ideal");
  fx_run(&f, &ooc_planner_lms, NULL, 0);
  ck_assert_int_eq(f.plan.n_swaps, 0);
  ck_assert_str_eq(f.plan.note, "lms: threshold=13, ahead=1, groupby=0, "
                   "sync_mode=0, no swapping needed (1 simulations)");
  fx_budget(&f, f.lv->persistent_bytes + 4 * MiB, "ideal");
  fx_run(&f, &ooc_planner_incore, NULL, 0);
  ck_assert(!f.res.feasible);
  fx_run(&f, &ooc_planner_lms, NULL, 0);
  ck_assert_msg(f.res.feasible, "%s", f.plan.note);
  ck_assert_int_gt(f.plan.n_swaps, 0);
  ck_assert(strncmp(f.plan.note, "lms: threshold=", 15) == 0);
  fx_close(&f);
}
END_TEST

/* Fixed threshold, the rest auto. 64 MiB: (2) threshold 4, ahead 1,
 * groupby 0, sync_mode 0 fits (1 simulation); (3) ahead searched from 1,
 * which is not simulated again: 7, 10, 12, 13 all fit (4); (4) groupby 13
 * fits (1): 6 simulations. persistent + 3 MiB, threshold 1, groupby 0:
 * acts 1..4 are swapped. Without waiting for swap-outs (sync_mode 0 and
 * 2) fwd fc4 (step 3) allocates act 4 while the copies of acts 1 and 2
 * are still in flight and their memory not yet free: 5 MiB > 3 MiB, out
 * of memory (an ALLOC does not wait for room). With sync_mode 1 the
 * swap-outs are waited for, but with ahead 1 act 4's swap-in is issued
 * after step 5 and takes the MiB bwd fc6 (step 6) needs next to act 5 and
 * two gradients: OOM. sync_mode 3 also issues each swap-in after the step
 * before its use, when step 6 is done: it fits, 4 simulations. */
START_TEST(lms_autotune_fixed_threshold)
{
  fixture f;
  ooc_kv t4[] = { { "swapout_threshold", "4" }, { "sync_mode", "-1" } };
  ooc_kv t1[] = { { "swapout_threshold", "1" }, { "swapin_groupby", "0" } };

  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 64 * MiB, "ideal");
  fx_run(&f, &ooc_planner_lms, t4, 2);
  ck_assert_str_eq(f.plan.note, "lms: threshold=4, ahead=13, groupby=13, "
                   "sync_mode=0 (6 simulations)");
  ck_assert_int_eq(f.plan.n_swaps, 3);
  fx_budget(&f, f.lv->persistent_bytes + 3 * MiB, "ideal");
  fx_run(&f, &ooc_planner_lms, t1, 2);
  ck_assert_str_eq(f.plan.note, "lms: threshold=1, ahead=1, groupby=0, "
                   "sync_mode=3 (4 simulations)");
  ck_assert_msg(f.res.feasible, "%s", f.res.oom.reason);
  ck_assert_int_eq(f.plan.n_swaps, 4);
  for (int i = 1; i <= 4; i++)
    assert_swap(&f.plan, i - 1, i, i, i + 1, 10 - i, 11 - i);
  fx_close(&f);
}
END_TEST

/* --- capacity ------------------------------------------------------------- */

/* Candidates by first backward use: act 4 (7), 3 (8), 2 (9), 1 (10); act 5
 * has no step between its uses. Budget persistent + 3 MiB (widest step) +
 * 2.5 MiB keeps 4 and 3 (2 MiB) and swaps 2 and 1 right after their last
 * forward use. Modelled occupancy (MiB, without the swapped acts between
 * their D2H and swap-in) by step 6..10: 5, 4, 3, 3, 3. Act 2 (needed at
 * 9) fits back from step 7 (4+1, 3+1 <= 5.5; step 6: 6 > 5.5): in_after 6.
 * Then occupancy 7, 8 is 5, 4: act 1 (needed at 10) fits from step 8
 * (3+1, 4+1; step 7: 6): in_after 7. Swap-out waits, in forward order:
 * act 1 may stay until the first step of [3, 7] where one more MiB would
 * exceed 5.5: the occupancy with both acts gone is 3, 3, 4, 5, 5 there, so
 * step 6 waits for it; with act 1 present on [3, 5] (4, 4, 5), act 2 may
 * stay on [4, 6] until step 5 (5 + 1 > 5.5), which waits for it. */
START_TEST(capacity_keeps_tail)
{
  fixture f;
  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 3 * MiB + 5 * MiB / 2, "ideal");
  fx_run(&f, &ooc_planner_capacity, NULL, 0);
  ck_assert_int_eq(f.plan.n_swaps, 2);
  assert_swap(&f.plan, 0, 2, 2, 5, 6, 9);
  assert_swap(&f.plan, 1, 1, 1, 6, 7, 10);
  ck_assert_int_eq(f.plan.action[3], OOC_KEEP);
  ck_assert_int_eq(f.plan.action[4], OOC_KEEP);
  ck_assert_msg(f.res.feasible, "%s", f.res.oom.reason);
  ck_assert(strncmp(f.plan.note, "capacity: kept 2 tensors", 24) == 0);
  fx_close(&f);
}
END_TEST

/* With room for everything nothing is swapped. */
START_TEST(capacity_fits)
{
  fixture f;
  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 64 * MiB, "ideal");
  fx_run(&f, &ooc_planner_capacity, NULL, 0);
  ck_assert_int_eq(f.plan.n_swaps, 0);
  ck_assert(f.res.feasible);
  fx_close(&f);
}
END_TEST

/* --- window --------------------------------------------------------------- */

/* window = 2 MiB, budget persistent + 4 MiB (activations may use 4 MiB in
 * forward, 2 MiB in backward where two gradients live). Variable-sequence
 * by step: 0 [1], 1 [1 2], 2 [2 3], 3 [3 4], 4 [4 5], 5 [5 6], 6 [5],
 * 7 [4], 8 [3], 9 [2], 10 [1]. Walking it:
 *  - (c) after steps 1, 2, 3, 4 the swap-outs of acts 1, 2, 3, 4 are
 *    reserved (their next uses are outside the 2 MiB window);
 *  - (b) step 4's new output needs 1 MiB: 1 resident + 3 reserved + 1 > 4,
 *    so step 4 waits for the oldest, act 1; step 5 likewise for act 2;
 *    step 6 starts with 1 + 2 > 2 (its gradients take 2 MiB): act 3;
 *  - (d) act 5 is still in the window after step 5 (used at 6) and act 6
 *    has no future use: neither is swapped out; act 4 re-enters the window
 *    at step 6 before anyone waited for it: its swap-out is cancelled;
 *  - (a) act 3 enters the window at step 7 (in_after 6, needed at 8),
 *    act 2 at step 8, act 1 at step 9. */
START_TEST(window_abcd)
{
  fixture f;
  ooc_kv w2 = { "window", "2MiB" };

  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 4 * MiB, "ideal");
  fx_run(&f, &ooc_planner_window, &w2, 1);
  ck_assert_int_eq(f.plan.n_swaps, 3);
  assert_swap(&f.plan, 0, 3, 3, 6, 6, 8);
  assert_swap(&f.plan, 1, 2, 2, 5, 7, 9);
  assert_swap(&f.plan, 2, 1, 1, 4, 8, 10);
  ck_assert_int_eq(f.plan.action[4], OOC_KEEP);
  ck_assert_int_eq(f.plan.action[5], OOC_KEEP);
  ck_assert_msg(f.res.feasible, "%s", f.res.oom.reason);
  ck_assert_uint_le(f.res.peak_allocated, f.budget);
  ck_assert(strstr(f.plan.note, "(1 cancelled)") != NULL);
  fx_close(&f);
}
END_TEST

/* With room for everything no reserved swap-out is ever waited for (each
 * is cancelled or its act freed), so every one of the 50 candidates (25
 * windows at 16/16 and at 15/16 of the budget) gives the same empty
 * schedule: it is simulated once. */
START_TEST(window_fits_one_simulation)
{
  fixture f;
  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 64 * MiB, "ideal");
  fx_run(&f, &ooc_planner_window, NULL, 0);
  ck_assert_int_eq(f.plan.n_swaps, 0);
  ck_assert(f.res.feasible);
  ck_assert_msg(strstr(f.plan.note, " 0 swap-outs (") != NULL &&
                strstr(f.plan.note, "(1 simulations)") != NULL, "%s",
                f.plan.note);
  fx_close(&f);
}
END_TEST

/* Autotuned window under every allocator policy (and caching with
 * expandable segments): feasible where in-core is not,
 * and never above the budget. At batch 8192 an activation is 8 MiB; the
 * budget leaves room for five, in-core needs seven (step 6), and `va`
 * rounds each of the seven persistent tensors up to 2 MiB chunks (about
 * 9 MiB lost), which the tuned scheduling budget has to absorb. */
START_TEST(window_autotune_allocators)
{
  static const char *allocs[] = { "ideal", "caching",
                                  "caching:expandable_segments", "bestfit",
                                  "pool", "va" };
  fixture f;

  fx_open(&f, chain6, 8192);
  for (int k = 0; k < 6; k++) {
    fx_budget(&f, f.lv->persistent_bytes + 40 * MiB, allocs[k]);
    fx_run(&f, &ooc_planner_incore, NULL, 0);
    ck_assert(!f.res.feasible);
    fx_run(&f, &ooc_planner_window, NULL, 0);
    ck_assert_msg(f.res.feasible, "%s: %s / %s", allocs[k], f.plan.note,
                  f.res.oom.reason);
    ck_assert_uint_le(f.res.peak_allocated, f.budget);
    ck_assert_uint_le(f.res.peak_reserved, f.budget);
  }
  fx_close(&f);
}
END_TEST

/* Under va the window schedules against the allocator's footprints (seed
 * §4: the internal fragmentation m_a - m_r of a large request is known in
 * advance; ooc_alloc_footprint). The round profile's chunk is 2 MiB, so
 * requests under 1 MiB take the small path: each 1 MiB act, gradient and
 * the input take a whole 2 MiB chunk, each 789,504 B parameter tensor is
 * sub-allocated (two share a 2 MiB small segment, a third does not fit the
 * 518,144 B left). Physically the persistent state takes 3 segments + the
 * input's chunk = 8 MiB; the planner counts 6 x 789,504 + 2 MiB =
 * 6,834,176 B. In core, step 6 holds acts 1..5 and gradients 5, 6: 7
 * chunks, peak reserved 8 + 14 = 22 MiB. Budget 20 MiB: in core fails.
 * With the scheduling budget fixed at the physical one, a planner that
 * counted bytes would believe it had 20 MiB - 5,785,600 B = 14.5 MiB for
 * 1 MiB activations and gradients, where only 6 chunks (12 MiB) exist;
 * counting footprints it keeps within 20 MiB - 6,834,176 B (6 x 2 MiB) and
 * fits. */
START_TEST(window_va_footprint)
{
  fixture f;
  ooc_kv o[] = { { "window", "4MiB" }, { "sched_budget", "20MiB" } };
  ooc_alloc_config ac = { .budget = 20 * MiB, .hw = NULL };

  fx_open(&f, chain6, 1024);
  ac.hw = f.hw;
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &ac, 789504), 789504);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &ac, MiB), 2 * MiB);
  fx_budget(&f, 64 * MiB, "va");
  fx_run(&f, &ooc_planner_incore, NULL, 0);
  ck_assert(f.res.feasible);
  ck_assert_uint_eq(f.res.peak_reserved, 22 * MiB);
  fx_budget(&f, 20 * MiB, "va");
  fx_run(&f, &ooc_planner_incore, NULL, 0);
  ck_assert(!f.res.feasible);
  fx_run(&f, &ooc_planner_window, o, 2);
  ck_assert_msg(f.res.feasible, "%s / %s", f.plan.note, f.res.oom.reason);
  ck_assert_int_gt(f.plan.n_swaps, 0);
  ck_assert_uint_le(f.res.peak_reserved, 20 * MiB);
  /* The same plan on caching counts bytes: fewer swaps, and that program
   * run on va runs out of chunks. */
  {
    int n_va = f.plan.n_swaps;
    ooc_sim_config cfg = { .model = f.m, .hw = f.hw, .costs = f.costs,
                           .allocator = &ooc_alloc_va, .budget = 20 * MiB,
                           .iterations = 2 };
    ooc_sim *va = NULL;
    ooc_err err = { 0 };

    fx_budget(&f, 20 * MiB, "caching");
    fx_run(&f, &ooc_planner_window, o, 2);
    ck_assert_int_lt(f.plan.n_swaps, n_va);
    ck_assert_int_eq(ooc_sim_alloc(&cfg, &va, &err), OOC_OK);
    ck_assert_int_eq(ooc_sim_run(va, &f.prog, &f.res, NULL, &err), OOC_OK);
    ck_assert(!f.res.feasible);
    ck_assert_msg(strncmp(f.res.oom.reason, "va: ", 4) == 0, "%s",
                  f.res.oom.reason);
    ooc_sim_free(va);
  }
  fx_close(&f);
}
END_TEST

/* The chunk is the simulator's (ooc_sim_config.chunk_bytes, passed on in
 * ooc_planner_ctx.chunk_bytes), not the profile's: the same scenario as
 * window_va_footprint, but the profile says 512 KiB chunks, under which the
 * 1 MiB tensors would take exactly their bytes, while the simulator uses
 * 2 MiB chunks. Planning with the profile's chunk would count bytes, as
 * caching does there, and run out of chunks; with the simulator's, window
 * and capacity (scheduling budget fixed at 20 MiB) fit as before. */
START_TEST(va_chunk_of_the_simulator)
{
  fixture f;
  ooc_kv o[] = { { "window", "4MiB" }, { "sched_budget", "20MiB" } };

  fx_open(&f, chain6, 1024);
  f.hw->va_chunk_bytes = 512 * 1024;
  fx_budget_chunk(&f, 20 * MiB, "va", 2 * MiB);
  ck_assert_uint_eq(f.ctx.chunk_bytes, 2 * MiB);
  fx_run(&f, &ooc_planner_incore, NULL, 0);
  ck_assert(!f.res.feasible);
  fx_run(&f, &ooc_planner_window, o, 2);
  ck_assert_msg(f.res.feasible, "%s / %s", f.plan.note, f.res.oom.reason);
  ck_assert_uint_le(f.res.peak_reserved, 20 * MiB);
  fx_run(&f, &ooc_planner_capacity, o + 1, 1);
  ck_assert_msg(f.res.feasible, "%s / %s", f.plan.note, f.res.oom.reason);
  ck_assert_uint_le(f.res.peak_reserved, 20 * MiB);
  fx_close(&f);
}
END_TEST

/* --- every registered planner ---------------------------------------------- */

/* On a residual model at budgets from roomy to tight, for every planner in
 * the registry (registering a planner puts it under this test): every plan
 * lowers, passes the simulator's semantic checks (fx_run fails otherwise),
 * never reports a peak above the budget, an infeasible one says why, and
 * the same input gives the same plan. A planner that searches
 * (OOC_PLANNER_SEARCH) fits whenever the budget holds the in-core peak. */
/* Chen et al.'s sqrt(n) segments on chains, by hand. 16 layers: F = 16
 * forward steps, K = 4 segments, boundaries at the cuts nearest 16k/4 - 1
 * = 3, 7, 11: segments of steps [0,3], [4,7], [8,11] and [12,15] (kept
 * whole). In the first three, the acts produced before the boundary (fc1..
 * fc3, fc5..fc7, fc9..fc11: act i is fci's output) are dropped and
 * recomputed before the first backward step reading any of them, the
 * backward of the layer after the segment's last dropped act: bwd fc4
 * (step 32 - 4 = 28), bwd fc8 (24), bwd fc12 (20). 10 layers: K = 3, the
 * cuts nearest 2.33 and 5.67 are 2 and 6: segments of 3, 4 and 3 steps. */
START_TEST(checkpoint_sqrt_segments)
{
  static const int before16[3] = { 28, 24, 20 };
  fixture f;
  char *j = chain_json(16);
  int k;

  fx_open(&f, j, 1024);
  free(j);
  fx_budget(&f, (uint64_t)1 << 34, "ideal");
  fx_run(&f, &ooc_planner_checkpoint, NULL, 0);
  ck_assert_msg(strstr(f.plan.note, "checkpoint: 4 segments (4 asked") !=
                NULL, "%s", f.plan.note);
  ck_assert_int_eq(f.plan.n_recomps, 9);
  ck_assert_int_eq(f.plan.n_swaps, 0);
  for (k = 0; k < 9; k++) {
    const ooc_recompute *r = &f.plan.recomps[k];
    int seg = k / 3, act = 4 * seg + 1 + k % 3;
    ck_assert_int_eq(r->act, act);
    ck_assert_int_eq(r->before, before16[seg]);
    ck_assert_int_eq(r->free_after, act);   /* its last forward use */
    ck_assert_int_eq(f.plan.action[act], OOC_RECOMPUTE);
  }
  for (k = 4; k <= 16; k += 4)
    ck_assert_int_eq(f.plan.action[k], OOC_KEEP);   /* boundaries, tail */
  ck_assert(f.res.feasible);
  ck_assert_int_gt(f.res.recompute_ns, 0);
  fx_close(&f);

  j = chain_json(10);
  fx_open(&f, j, 1024);
  free(j);
  fx_budget(&f, (uint64_t)1 << 34, "ideal");
  fx_run(&f, &ooc_planner_checkpoint, NULL, 0);
  ck_assert_msg(strstr(f.plan.note, "checkpoint: 3 segments (3 asked") !=
                NULL, "%s", f.plan.note);
  /* Segment [0,2] drops acts 1, 2 (act 3 is the boundary); [3,6] drops
   * 4, 5, 6 (7 is the boundary); [7,9] is kept whole. */
  ck_assert_int_eq(f.plan.n_recomps, 5);
  ck_assert_int_eq(f.plan.recomps[0].act, 1);
  ck_assert_int_eq(f.plan.recomps[1].act, 2);
  ck_assert_int_eq(f.plan.recomps[2].act, 4);
  ck_assert_int_eq(f.plan.recomps[4].act, 6);
  ck_assert_int_eq(f.plan.action[3], OOC_KEEP);
  ck_assert_int_eq(f.plan.action[7], OOC_KEEP);
  fx_close(&f);
}
END_TEST

/* --- pooch ---------------------------------------------------------------- */

/* chain6 on `ideal` at persistent + 3 MiB and + 4 MiB, swap-all with §4.3
 * (stage=swapall). Feature maps: acts 1..4 (act 5 is read by bwd fc6 right
 * after its last forward use, act 6 by nothing in backward). Memory over
 * persistent, in MiB, before any swapped map is placed: acts 5 and 6 and
 * the gradients (the file header) and each swapped map over [i-1, i]:
 *   step  0 1 2 3 4 5 6 7 8 9 10 11
 *         1 2 2 2 2 2 3 2 2 2  2  1
 * A swapped map is pending from i+1 until a step waits for its D2H or its
 * swap-in; a step over budget with the pending maps waits for the oldest.
 * + 3 MiB: step 3 holds 2 + a1 + a2 = 4 > 3: a1 waits at 3; so a2 at 4,
 * a3 at 5, a4 at 6 (3 + 1). Swap-ins, in order of need (a4 at 7, a3 at 8,
 * ...): a4 fits after step 6 (2 + 1 at step 7) but not after 5 (3 + 1 at
 * step 6): in_after 6, and so on, one step ahead each.
 * + 4 MiB: step 4 holds 2 + a1 + a2 + a3 = 5: a1 waits at 4, a2 at 5; step
 * 6 holds 3 + a3 + a4: a3 waits at 6; a4 is never waited for (its swap-in
 * follows its D2H). Pending a1 over [2, 3], a2 [3, 4], a3 [4, 5], a4 [5,
 * 6] give steps 2..6 = 3 4 4 4 4. a4, without its own pending bytes, fits
 * from step 5 on (3 + 1, 3 + 1, 2 + 1): in_after 4, its last forward use,
 * and steps 5..7 become 4 4 3; a3 fits over steps 7, 8 (3 + 1, 2 + 1) but
 * not at 6 (4 + 1): in_after 6; a2: steps 8, 9 (3 + 1, 2 + 1), in_after 7;
 * a1: in_after 8. Without §4.3 (swapall-nosched) every swap-in is issued
 * after the step before its use. */
START_TEST(pooch_swapin_schedule)
{
  static const ooc_kv swapall = { "stage", "swapall" },
                      nosched = { "stage", "swapall-nosched" };
  fixture f;

  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 3 * MiB, "ideal");
  fx_run(&f, &ooc_planner_pooch, &swapall, 1);
  ck_assert(f.res.feasible);
  ck_assert_uint_eq(f.plan.sched_budget, f.budget);
  ck_assert_int_eq(f.plan.n_swaps, 4);
  ck_assert_int_eq(f.plan.n_recomps, 0);
  assert_swap(&f.plan, 0, 4, 4, 6, 6, 7);
  assert_swap(&f.plan, 1, 3, 3, 5, 7, 8);
  assert_swap(&f.plan, 2, 2, 2, 4, 8, 9);
  assert_swap(&f.plan, 3, 1, 1, 3, 9, 10);

  fx_budget(&f, f.lv->persistent_bytes + 4 * MiB, "ideal");
  fx_run(&f, &ooc_planner_pooch, &swapall, 1);
  ck_assert(f.res.feasible);
  ck_assert_uint_eq(f.plan.sched_budget, f.budget);
  assert_swap(&f.plan, 0, 4, 4, -1, 4, 7);
  assert_swap(&f.plan, 1, 3, 3, 6, 6, 8);
  assert_swap(&f.plan, 2, 2, 2, 5, 7, 9);
  assert_swap(&f.plan, 3, 1, 1, 4, 8, 10);
  ck_assert_msg(strstr(f.plan.note, "pooch (swapall): 4 feature maps: keep "
                       "0, swap 4, recompute 0") != NULL, "%s", f.plan.note);

  fx_run(&f, &ooc_planner_pooch, &nosched, 1);
  assert_swap(&f.plan, 0, 4, 4, -1, 6, 7);
  assert_swap(&f.plan, 1, 3, 3, 6, 7, 8);
  assert_swap(&f.plan, 2, 2, 2, 5, 8, 9);
  assert_swap(&f.plan, 3, 1, 1, 4, 9, 10);
  fx_close(&f);
}
END_TEST

/* The seed's ablation (§5.1) on chain6, where a 1 MiB map takes 107 us
 * over the 10 GB/s link and its linear layer 22 us to recompute: each
 * stage is at least as fast as the one before, keep/swap keeps maps once
 * the budget has room, and §4.4.3 recomputes (r < 1: 22 us against an
 * exposed transfer), all within the budget. */
START_TEST(pooch_stages)
{
  static const char *const stages[] = { "swapall-nosched", "swapall",
                                        "swapopt", "full" };
  fixture f;

  fx_open(&f, chain6, 1024);
  for (int n = 3; n <= 5; n++) {
    int64_t prev = INT64_MAX;
    fx_budget(&f, f.lv->persistent_bytes + (uint64_t)n * MiB, "ideal");
    for (int k = 0; k < 4; k++) {
      ooc_kv o = { "stage", stages[k] };
      fx_run(&f, &ooc_planner_pooch, &o, 1);
      ck_assert_msg(f.res.feasible, "+%d MiB %s: %s", n, stages[k],
                    f.plan.note);
      ck_assert_int_le(f.res.iteration_ns, prev);
      prev = f.res.iteration_ns;
      if (k == 2 && n >= 4)
        ck_assert_int_eq(f.plan.action[4], OOC_KEEP);
      if (k == 3) {
        ck_assert_int_ge(f.plan.n_recomps, 1);
        ck_assert_int_gt(f.res.recompute_ns, 0);
      }
    }
  }
  fx_close(&f);
}
END_TEST

/* --- checkpoint-dp ------------------------------------------------------- */

/* A chain of n linear layers of varying width (128, 320, 192, 448, ...):
 * heterogeneous recompute times and activation sizes. */
static char *hetero_json(int n)
{
  size_t cap = 128 + (size_t)n * 80, len;
  char *j = malloc(cap);
  ck_assert_ptr_nonnull(j);
  len = (size_t)snprintf(j, cap, "{ \"name\": \"hetero\", \"input\": [256],"
                         " \"layers\": [");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(j + len, cap - len, "%s{ \"name\": \"fc%d\", "
                            "\"op\": \"linear\", \"out\": %d }",
                            i ? ", " : "", i + 1, 128 + 64 * ((i * 3) % 7));
  snprintf(j + len, cap - len, " ] }");
  return j;
}

/* Opens f on hetero_json(n) with an unlimited budget and returns the
 * in-core plan's peak. */
static uint64_t hetero_open(fixture *f, int n)
{
  char *j = hetero_json(n);

  fx_open(f, j, 1024);
  free(j);
  fx_budget(f, (uint64_t)1 << 40, "ideal");
  fx_run(f, &ooc_planner_incore, NULL, 0);
  return f->res.peak_allocated;
}

struct brute {
  fixture *f;
  int32_t n;              /* nodes = layers; cuts after steps 0 .. n - 2 */
  int32_t seg_lo[16], seg_hi[16], n_seg;
  uint8_t mark[64];
  int64_t best;           /* fastest feasible iteration */
  int count;
};

/* Every single-recompute schedule of nodes [i, n): node i kept, or the
 * segment [i, k] (k <= n - 2) recomputed with its last output kept. */
static void brute_walk(struct brute *b, int32_t i)
{
  fixture *f = b->f;
  ooc_err err = { 0 };

  if (i == b->n) {
    ooc_plan_reset(&f->plan);
    f->plan.sched_budget = f->budget;
    for (int s = 0; s < b->n_seg; s++)
      ck_assert_int_ge(ooc_kit_recompute_segment(&f->ctx, &f->plan,
                                                 b->seg_lo[s], b->seg_hi[s],
                                                 b->seg_hi[s] + 1, b->mark,
                                                 &err), 0);
    ck_assert_int_eq(ooc_planner_evaluate(&f->ctx, &f->plan, &f->res, &err),
                     OOC_OK);
    if (f->res.feasible && f->res.iteration_ns < b->best)
      b->best = f->res.iteration_ns;
    b->count++;
    return;
  }
  brute_walk(b, i + 1);
  for (int32_t k = i; k <= b->n - 2; k++) {
    b->seg_lo[b->n_seg] = i;
    b->seg_hi[b->n_seg++] = k;
    brute_walk(b, k + 1);
    b->n_seg--;
  }
}

/* On chains of 6, 9 and 12 heterogeneous layers, at budgets from the
 * in-core peak down to where nothing fits, the single-recompute table's
 * plan (family=single) is as fast as the fastest of every
 * single-recompute schedule (28,657 of them at 12 layers, each
 * simulated), and fits exactly when one does; with rotor's table too
 * (the default) the plan is never slower and fits whenever one does. */
START_TEST(checkpoint_dp_brute_force)
{
  static const int sizes[3] = { 6, 9, 12 };
  static const int counts[3] = { 89, 1597, 28657 };
  const ooc_kv single = { "family", "single" };

  for (int z = 0; z < 3; z++) {
    fixture f;
    struct brute b;
    uint64_t peak = hetero_open(&f, sizes[z]), per;
    per = (peak - f.lv->persistent_bytes) / 8;
    for (int q = 8; q >= 1; q--) {
      if (per * (uint64_t)q + per / 4 < f.lv->max_step_bytes)
        break;                  /* below the working set: refused */
      /* A quarter step of slack: the table rounds savings down to 1/512
       * of the droppable bytes, which matters only at a knife's edge. */
      fx_budget(&f, f.lv->persistent_bytes + per * (uint64_t)q + per / 4,
                "ideal");
      memset(&b, 0, sizeof b);
      b.f = &f;
      b.n = sizes[z];
      b.best = INT64_MAX;
      brute_walk(&b, 0);
      ck_assert_int_eq(b.count, counts[z]);
      fx_run(&f, &ooc_planner_checkpoint_dp, &single, 1);
      ck_assert_msg(f.res.feasible == (b.best != INT64_MAX),
                    "%d layers, %d/8: dp %s, brute force %s (%s)",
                    sizes[z], q, f.res.feasible ? "fits" : "does not fit",
                    b.best != INT64_MAX ? "fits" : "does not fit",
                    f.plan.note);
      if (f.res.feasible)
        ck_assert_msg(f.res.iteration_ns == b.best,
                      "%d layers, %d/8: dp %lld ns, brute force %lld ns (%s)",
                      sizes[z], q, (long long)f.res.iteration_ns,
                      (long long)b.best, f.plan.note);
      /* With rotor's table beside it: never slower, fits at least as
       * often. */
      fx_run(&f, &ooc_planner_checkpoint_dp, NULL, 0);
      if (b.best != INT64_MAX)
        ck_assert_msg(f.res.feasible && f.res.iteration_ns <= b.best,
                      "%d layers, %d/8: both tables %lld ns, brute force "
                      "%lld ns (%s)", sizes[z], q,
                      (long long)f.res.iteration_ns, (long long)b.best,
                      f.plan.note);
    }
    fx_close(&f);
  }
}
END_TEST

/* Rotor's table recomputes a stage several times where a single
 * recompute per activation does not fit: on a chain of 24 heterogeneous
 * layers, at budgets rising by 1/32 of the activations from the working
 * set, the rotor plan (family=rotor) fits at a budget where no
 * single-recompute plan (family=single) does, and there some activation
 * carries two recompute records (dropped after a pass and rebuilt by a
 * later one), each plan simulated to fit. */
START_TEST(checkpoint_dp_rotor_nested)
{
  const ooc_kv single = { "family", "single" }, rotor = { "family",
                                                          "rotor" };
  fixture f;
  uint64_t peak = hetero_open(&f, 24), per, b;
  int found = 0;

  per = (peak - f.lv->persistent_bytes) / 32;
  for (b = f.lv->persistent_bytes + per; b < peak && !found; b += per) {
    int single_fits, twice = 0;
    if (b < f.lv->persistent_bytes + f.lv->max_step_bytes)
      continue;
    fx_budget(&f, b, "ideal");
    fx_run(&f, &ooc_planner_checkpoint_dp, &single, 1);
    single_fits = f.res.feasible;
    fx_run(&f, &ooc_planner_checkpoint_dp, &rotor, 1);
    if (single_fits) {
      /* The first budget a single recompute fits: rotor fitted lower. */
      ck_abort_msg("a single recompute per activation fits at %llu bytes "
                   "before rotor's table fitted lower", (unsigned long long)b);
    }
    if (!f.res.feasible)
      continue;
    for (int32_t r1 = 0; r1 < f.plan.n_recomps; r1++)
      for (int32_t r2 = r1 + 1; r2 < f.plan.n_recomps; r2++)
        if (f.plan.recomps[r1].act == f.plan.recomps[r2].act &&
            f.lv->act_first_bwd[f.plan.recomps[r1].act] >= 0)
          twice = 1;
    ck_assert_msg(twice, "rotor fits at %llu bytes without a nested "
                  "recompute (%s)", (unsigned long long)b, f.plan.note);
    found = 1;
  }
  ck_assert(found);
  fx_close(&f);
}
END_TEST

/* --- superneurons --------------------------------------------------------- */

/* Checkpoints are linear layers here (FC); the relus between them form
 * the recompute segments. At batch 1024, a 256-wide act is 1 MiB and a
 * 2048-wide one 8 MiB:
 *   fc1 (256) -> r1 -> fc2 (2048) -> r2 -> r3 -> r4 -> fc3 (256)
 * A relu's backward reads its output and both gradients: bwd r4 holds
 * 8 + 8 + 8 = 24 MiB, the largest working set of a step: l_peak = 24 MiB
 * (bwd fc3: r4 8 + 1 + 8 = 17; fwd fc2: 1 + 8 = 9).
 * Steps: fwd fc1 .. fc3 = 0 .. 6, bwd fc3 .. fc1 = 7 .. 13. r4 is read by
 * bwd fc3 (7) right after its last forward use (6): no gap, kept. The
 * dropped maps are r1, r2 (last forward use: r3's, 4) and r3 (r4's, 5).
 * Segment [r1]: memcost = r1 (1) + bwd r1's working set (3) = 4 <= 24:
 * speed-centric, r1 rebuilt once, before bwd fc2 (11, its first reader).
 * Segment [r2, r4]: memcost = r2 + r3 (16) + bwd r4's 24 = 40 > 24:
 * memory-centric: before each backward step reading what it dropped, that
 * is rebuilt from fc2's output: bwd r3 (9) reads r3 (r2 and r3 rebuilt),
 * bwd r2 (10) reads r2 (r2 rebuilt again, after being dropped after 9). */
static const char *segs =
  "{ \"name\": \"segs\", \"input\": [256], \"layers\": ["
  "  { \"name\": \"fc1\", \"op\": \"linear\", \"out\": 256 },"
  "  { \"name\": \"r1\", \"op\": \"relu\" },"
  "  { \"name\": \"fc2\", \"op\": \"linear\", \"out\": 2048 },"
  "  { \"name\": \"r2\", \"op\": \"relu\" },"
  "  { \"name\": \"r3\", \"op\": \"relu\" },"
  "  { \"name\": \"r4\", \"op\": \"relu\" },"
  "  { \"name\": \"fc3\", \"op\": \"linear\", \"out\": 256 } ] }";

START_TEST(superneurons_cost_aware_segments)
{
  static const ooc_kv rc = { "stage", "recompute" };
  static const int want[8] = { 0, 0, 1, 0, 2, 1, 0, 0 };
  int got[8] = { 0 };
  fixture f;

  fx_open(&f, segs, 1024);
  ck_assert_uint_eq(f.lv->max_step_bytes, 24 * MiB);
  fx_budget(&f, (uint64_t)1 << 34, "ideal");
  fx_run(&f, &ooc_planner_superneurons, &rc, 1);
  ck_assert_msg(strstr(f.plan.note, "2 segments recomputed (1 speed-, 1 "
                       "memory-centric)") != NULL, "%s", f.plan.note);
  ck_assert_msg(strstr(f.plan.note, "l_peak 0.023 GiB") != NULL, "%s",
                f.plan.note);
  for (int k = 0; k < f.plan.n_recomps; k++) {
    ck_assert_int_lt(f.plan.recomps[k].act, 8);
    got[f.plan.recomps[k].act]++;
  }
  for (int a = 0; a < 8; a++)
    ck_assert_msg(got[a] == want[a], "act %d rebuilt %d times, not %d", a,
                  got[a], want[a]);
  /* In order: r1 (2) 2 -> 11; r2 (4) 4 -> 9, r3 (5) 5 -> 9; r2 9 -> 10. */
  ck_assert_int_eq(f.plan.n_recomps, 4);
  ck_assert_int_eq(f.plan.recomps[0].before, 11);
  ck_assert_int_eq(f.plan.recomps[1].act, 4);
  ck_assert_int_eq(f.plan.recomps[1].free_after, 4);
  ck_assert_int_eq(f.plan.recomps[1].before, 9);
  ck_assert_int_eq(f.plan.recomps[2].act, 5);
  ck_assert_int_eq(f.plan.recomps[2].before, 9);
  ck_assert_int_eq(f.plan.recomps[3].act, 4);
  ck_assert_int_eq(f.plan.recomps[3].free_after, 9);
  ck_assert_int_eq(f.plan.recomps[3].before, 10);
  ck_assert(f.res.feasible);
  fx_close(&f);
}
END_TEST

/* The tensor cache moves nothing while memory suffices (Alg. 2: a miss
 * evicts only when the allocation fails), while the UTP alone offloads
 * every checkpoint output backward reads again; at the budget the
 * recomputed plan with every output offloaded needs, the cache evicts
 * some (each copy issued after the tensor's last use, the step that needs
 * the room waiting for it) and fits. */
START_TEST(superneurons_lru_cache)
{
  static const ooc_kv all = { "stage", "all" }, off = { "stage", "offload" },
                      rc = { "stage", "recompute" };
  fixture f;
  uint64_t peak_rc;

  fx_open(&f, resblocks, 16);
  fx_budget(&f, (uint64_t)1 << 40, "ideal");
  fx_run(&f, &ooc_planner_superneurons, &off, 1);
  ck_assert_int_gt(f.plan.n_swaps, 0);
  ck_assert_int_gt(f.res.h2d_bytes, 0);
  fx_run(&f, &ooc_planner_superneurons, &all, 1);
  ck_assert_int_eq(f.plan.n_swaps, 0);
  ck_assert_uint_eq(f.res.h2d_bytes, 0);
  ck_assert_msg(strstr(f.plan.note, "0 offloaded (LRU cache)") != NULL, "%s",
                f.plan.note);
  fx_run(&f, &ooc_planner_superneurons, &rc, 1);
  peak_rc = f.res.peak_allocated;
  fx_budget(&f, peak_rc, "ideal");
  fx_run(&f, &ooc_planner_superneurons, &all, 1);
  ck_assert_msg(f.res.feasible, "%s", f.plan.note);
  ck_assert_int_gt(f.plan.n_swaps, 0);
  /* Each eviction's copy starts right after the tensor's last use so far
   * (a use step), and the step that needed the room waits for it. */
  for (int k = 0; k < f.plan.n_swaps; k++) {
    const ooc_swap *w = &f.plan.swaps[k];
    int used_at = 0, used_between = 0;
    ck_assert_int_gt(w->out_wait, w->out_after);
    for (int u = 0; u < f.lv->act_nuses[w->act]; u++) {
      int32_t st = f.lv->use_steps[f.lv->act_first[w->act] + u];
      used_at |= st == w->out_after;
      used_between |= st > w->out_after && st < w->in_before;
    }
    ck_assert(used_at);
    ck_assert(!used_between);
  }
  fx_close(&f);
}
END_TEST

/* The fastest algorithm the cost table offers step s's kernel (for a
 * forward with need_recomp, one its recompute can run too); -1 when the
 * step has no choice. */
static int fastest_algo(const fixture *f, int s, int need_recomp)
{
  int l = f->lv->steps[s].layer, ph = f->lv->steps[s].phase, best = -1;
  int64_t best_ns = -1;

  if (ph == OOC_PH_UPDATE || !ooc_algo_has_choice(f->m, l))
    return -1;
  for (int a = 0; a < OOC_ALGO_COUNT; a++) {
    int64_t t = ooc_costs_algo_ns(f->costs, l, ph, a);
    if (t >= 0 && (best_ns < 0 || t < best_ns) &&
        (!need_recomp || ph == OOC_PH_BWD ||
         ooc_costs_algo_ns(f->costs, l, OOC_PH_RECOMP, a) >= 0)) {
      best_ns = t;
      best = a;
    }
  }
  return best;
}

/* §3.5: with memory to spare every convolution step takes its fastest
 * algorithm; at a budget with no room beyond the plan's own peak, none
 * takes one whose workspace is larger than its default's. */
START_TEST(superneurons_conv_algorithms)
{
  static const ooc_kv all = { "stage", "all" }, rc = { "stage", "recompute" };
  fixture f;
  int n_conv = 0;

  fx_open(&f, resblocks, 16);
  fx_budget(&f, (uint64_t)1 << 40, "ideal");
  fx_run(&f, &ooc_planner_superneurons, &all, 1);
  for (int s = 0; s < f.lv->n_steps; s++) {
    int best = fastest_algo(&f, s, 0);
    if (best < 0)
      continue;
    ck_assert_int_eq(f.plan.algo[s], best);
    n_conv++;
  }
  ck_assert_int_eq(n_conv, 2 * 9);    /* stem + 4 x 2 convolutions */
  fx_run(&f, &ooc_planner_superneurons, &rc, 1);
  fx_budget(&f, f.res.peak_allocated, "ideal");
  fx_run(&f, &ooc_planner_superneurons, &all, 1);
  ck_assert_msg(f.res.feasible, "%s", f.plan.note);
  for (int s = 0; s < f.lv->n_steps; s++) {
    int l = f.lv->steps[s].layer;
    uint64_t ws, ws0;
    if (f.lv->steps[s].phase == OOC_PH_UPDATE ||
        !ooc_algo_has_choice(f.m, l))
      continue;
    ck_assert_int_eq(ooc_algo_workspace(f.m, l, (ooc_algo)f.plan.algo[s],
                                        &ws), OOC_OK);
    ck_assert_int_eq(ooc_algo_workspace(f.m, l, OOC_ALGO_DEFAULT, &ws0),
                     OOC_OK);
    ck_assert_uint_le(ws, ws0);
  }
  fx_close(&f);
}
END_TEST

START_TEST(all_planners_properties)
{
  fixture f;
  uint64_t incore_peak;

  fx_open(&f, resblocks, 16);
  fx_budget(&f, (uint64_t)1 << 40, "ideal");
  fx_run(&f, &ooc_planner_incore, NULL, 0);
  incore_peak = f.res.peak_allocated;
  for (int div = 1; div <= 4; div++) {
    uint64_t b = f.lv->persistent_bytes + f.lv->max_step_bytes +
                 (incore_peak - f.lv->persistent_bytes) / (uint64_t)div;
    fx_budget(&f, b, "caching");
    for (int k = 0; ooc_planner_types[k] != NULL; k++) {
      const ooc_planner_type *t = ooc_planner_types[k];
      ooc_swap first;
      int n, nr;
      fx_run(&f, t, NULL, 0);
      if (!f.res.feasible)
        ck_assert_msg(f.res.oom.reason[0] != '\0', "%s", t->name);
      n = f.plan.n_swaps;
      nr = f.plan.n_recomps;
      first = n > 0 ? f.plan.swaps[0] : (ooc_swap){ 0 };
      fx_run(&f, t, NULL, 0);
      ck_assert_int_eq(f.plan.n_swaps, n);
      ck_assert_int_eq(f.plan.n_recomps, nr);
      if (n > 0) {
        /* Field by field: a struct copy need not copy its padding. */
        const ooc_swap *w = &f.plan.swaps[0];
        ck_assert_msg(w->act == first.act && w->out_after == first.out_after &&
                      w->out_wait == first.out_wait &&
                      w->in_after == first.in_after &&
                      w->in_before == first.in_before &&
                      w->grad == first.grad, "%s: first swap differs",
                      t->name);
      }
      if (div == 1 && (t->flags & OOC_PLANNER_SEARCH))
        ck_assert_msg(f.res.feasible, "%s: %s", t->name, f.plan.note);
    }
  }
  fx_close(&f);
}
END_TEST

/* Unknown options are refused by name. */
START_TEST(options_checked)
{
  fixture f;
  ooc_kv bad = { "swapin_ahead", "x" }, neg = { "sync_mode", "4" };
  ooc_err err = { 0 };

  fx_open(&f, chain6, 1024);
  fx_budget(&f, f.lv->persistent_bytes + 64 * MiB, "ideal");
  f.ctx.opts = &bad;
  f.ctx.n_opts = 1;
  ck_assert_int_eq(ooc_planner_run(&ooc_planner_lms, &f.ctx, &f.plan,
                                   &f.prog, &err), OOC_EINVAL);
  ck_assert(strstr(err.msg, "swapin_ahead") != NULL);
  f.ctx.opts = &neg;
  ck_assert_int_eq(ooc_planner_run(&ooc_planner_lms, &f.ctx, &f.plan,
                                   &f.prog, &err), OOC_EINVAL);
  ck_assert(strstr(err.msg, "sync_mode=4") != NULL);
  f.ctx.opts = &bad;
  ck_assert_int_eq(ooc_planner_run(&ooc_planner_window, &f.ctx, &f.plan,
                                   &f.prog, &err), OOC_EINVAL);
  ck_assert(strstr(err.msg, "swapin_ahead") != NULL);
  {
    ooc_kv st = { "stage", "swapin" }, ms = { "max_sims", "0" };
    f.ctx.opts = &st;
    ck_assert_int_eq(ooc_planner_run(&ooc_planner_pooch, &f.ctx, &f.plan,
                                     &f.prog, &err), OOC_EINVAL);
    ck_assert_str_eq(err.msg, "planner 'pooch': option stage=swapin: "
                     "expected swapall-nosched, swapall, swapopt or full");
    f.ctx.opts = &ms;
    ck_assert_int_eq(ooc_planner_run(&ooc_planner_pooch, &f.ctx, &f.plan,
                                     &f.prog, &err), OOC_EINVAL);
    ck_assert_str_eq(err.msg, "planner 'pooch': option max_sims=0: must be "
                     ">= 1");
    ms = (ooc_kv){ "max_events", "-1" };
    f.ctx.opts = &ms;
    ck_assert_int_eq(ooc_planner_run(&ooc_planner_pooch, &f.ctx, &f.plan,
                                     &f.prog, &err), OOC_EINVAL);
    ck_assert_str_eq(err.msg, "planner 'pooch': option max_events=-1: must "
                     "be >= 0 (0: no cap)");
    st.value = "cache";
    f.ctx.opts = &st;
    ck_assert_int_eq(ooc_planner_run(&ooc_planner_superneurons, &f.ctx,
                                     &f.plan, &f.prog, &err), OOC_EINVAL);
    ck_assert_str_eq(err.msg, "planner 'superneurons': option stage=cache: "
                     "expected liveness, offload, recompute or all");
  }
  fx_close(&f);
}
END_TEST

/* --- joint ------------------------------------------------------------------ */

/* Every keep / swap / recompute assignment of the activations joint's moves
 * decide (those backward reads after a gap), built as its moves build them
 * (swap: out after the last forward use, in as early as memory allows
 * before the first backward use; recompute: the one-step segment), each
 * simulated: the fastest feasible time, or INT64_MAX. */
static int64_t
joint_brute(fixture *f, const int32_t *acts, int n, int i, uint8_t *choice,
            uint8_t *mark, ooc_plan *pl)
{
  int64_t best = INT64_MAX, t;
  ooc_err err = { 0 };

  if (i < n) {
    for (int c = 0; c < 3; c++) {
      choice[i] = (uint8_t)c;
      t = joint_brute(f, acts, n, i + 1, choice, mark, pl);
      if (t < best)
        best = t;
    }
    return best;
  }
  ooc_plan_reset(pl);
  for (int k = 0; k < n; k++) {
    int32_t a = acts[k];
    if (choice[k] == 1) {
      ooc_swap w = { .act = a, .out_after = f->lv->act_last_fwd[a],
                     .out_wait = -1, .in_after = -1,
                     .in_before = f->lv->act_first_bwd[a] };
      ck_assert_int_eq(ooc_plan_add_swap(pl, &w), OOC_OK);
    } else if (choice[k] == 2) {
      int32_t s = ooc_kit_producer(f->lv, a);
      ck_assert(ooc_kit_recompute_segment(&f->ctx, pl, s, s, -1, mark,
                                          &err) >= 0);
    }
  }
  if (ooc_planner_evaluate(&f->ctx, pl, &f->res, &err) != OOC_OK ||
      !f->res.feasible)
    return INT64_MAX;
  return f->res.iteration_ns;
}

/* On chain6 (no convolution: the decisions are keep / swap / recompute and
 * the swap-in times), at budgets from the in-core peak down to where
 * nothing fits, joint is at least as fast as the best of all 3^n
 * assignments of its decisions, and fits whenever one does. */
START_TEST(joint_brute_force)
{
  static const ooc_kv evals = { "max_evals", "2000" };
  fixture f;
  ooc_plan pl;
  ooc_err err = { 0 };
  int32_t acts[16];
  uint8_t choice[16], mark[64] = { 0 };
  int n = 0, tried = 0;
  uint64_t peak, per;

  fx_open(&f, chain6, 1024);
  fx_budget(&f, (uint64_t)1 << 40, "ideal");
  fx_run(&f, &ooc_planner_incore, NULL, 0);
  peak = f.res.peak_allocated;
  for (int32_t a = 1; a < f.lv->n_acts && n < 16; a++)
    if (f.lv->act_first_bwd[a] >= 0 && f.lv->act_last_fwd[a] >= 0 &&
        f.lv->act_last_fwd[a] < f.lv->act_first_bwd[a])
      acts[n++] = a;
  ck_assert_int_ge(n, 4);
  ck_assert_int_le(f.lv->n_acts, 64);
  ck_assert_int_eq(ooc_plan_init(&pl, f.lv, &err), OOC_OK);
  per = (peak - f.lv->persistent_bytes) / 8;
  for (int q = 8; q >= 1; q--) {
    int64_t best;
    uint64_t budget = f.lv->persistent_bytes + per * (uint64_t)q;
    if (budget < f.lv->persistent_bytes + f.lv->max_step_bytes)
      break;
    fx_budget(&f, budget, "ideal");
    best = joint_brute(&f, acts, n, 0, choice, mark, &pl);
    fx_run(&f, &ooc_planner_joint, &evals, 1);
    ck_assert_msg(f.res.feasible || best == INT64_MAX,
                  "%d/8: brute force fits (%lld ns), joint does not (%s)", q,
                  (long long)best, f.plan.note);
    if (best != INT64_MAX)
      ck_assert_msg(f.res.iteration_ns <= best,
                    "%d/8: joint %lld ns, brute force %lld ns (%s)", q,
                    (long long)f.res.iteration_ns, (long long)best,
                    f.plan.note);
    tried += best != INT64_MAX;
  }
  ck_assert_int_ge(tried, 3);
  ooc_plan_fini(&pl);
  fx_close(&f);
}
END_TEST

/* joint's algorithm sweep: its first simulation moves every convolution of
 * the start plan to its fastest algorithm. At budgets from the in-core
 * peak down, a plan joint makes with that one simulation has every
 * convolution there, or has none of the change because the plan with it
 * does not fit or is not faster; and at some budget the sweep is what
 * puts them there (the start plan alone, sweep=0, does not). */
START_TEST(joint_algorithm_sweep)
{
  /* start_sims=1: pooch stops at its swap-all profile, so the start is a
   * plan on the default algorithms, not pooch's own choice of kernels. */
  static const ooc_kv one[] = { { "max_evals", "1" }, { "sweep", "1" },
                                { "start_sims", "1" } };
  static const ooc_kv off[] = { { "max_evals", "1" }, { "sweep", "0" },
                                { "start_sims", "1" } };
  fixture f;
  ooc_plan pl;
  ooc_err err = { 0 };
  uint64_t peak;
  int swept = 0, kept = 0;

  fx_open(&f, resblocks, 16);
  fx_budget(&f, (uint64_t)1 << 40, "ideal");
  fx_run(&f, &ooc_planner_incore, NULL, 0);
  peak = f.res.peak_allocated;
  ck_assert_int_eq(ooc_plan_init(&pl, f.lv, &err), OOC_OK);
  for (int q = 8; q >= 3; q--) {
    uint64_t budget = f.lv->persistent_bytes +
                      (peak - f.lv->persistent_bytes) / 8 * (uint64_t)q;
    int64_t t, t_off;
    int n_slow = 0, n_off = 0;
    fx_budget(&f, budget, "ideal");
    fx_run(&f, &ooc_planner_joint, off, 3);
    t_off = f.res.feasible ? f.res.iteration_ns : INT64_MAX;
    for (int s = 0; s < f.lv->n_steps; s++)
      n_off += f.lv->steps[s].phase != OOC_PH_UPDATE &&
               ooc_algo_has_choice(f.m, f.lv->steps[s].layer) &&
               f.plan.algo[s] != 0;
    fx_run(&f, &ooc_planner_joint, one, 3);
    if (!f.res.feasible)
      continue;
    t = f.res.iteration_ns;
    ck_assert_msg(t <= t_off, "%d/8: the sweep made it slower (%s)", q,
                  f.plan.note);
    ck_assert_int_eq(ooc_plan_copy(&pl, &f.plan), OOC_OK);
    for (int s = 0; s < f.lv->n_steps; s++) {
      int best = fastest_algo(&f, s, 1);
      if (best < 0)
        continue;
      n_slow += pl.algo[s] != best;
      pl.algo[s] = (uint8_t)best;
    }
    if (n_slow == 0) {
      swept += n_off == 0 || t < t_off;
      continue;
    }
    ck_assert_int_eq(ooc_planner_evaluate(&f.ctx, &pl, &f.res, &err),
                     OOC_OK);
    ck_assert_msg(!f.res.feasible || f.res.iteration_ns >= t,
                  "%d/8: %d convolutions left slower, yet the plan with "
                  "them at their fastest fits and takes %lld ns < %lld ns "
                  "(%s)", q, n_slow, (long long)f.res.iteration_ns,
                  (long long)t, f.plan.note);
    kept++;
  }
  ck_assert_msg(swept >= 1, "the sweep moved no convolution at any budget "
                "(%d budgets kept theirs)", kept);
  ooc_plan_fini(&pl);
  fx_close(&f);
}
END_TEST

/* joint's start (threads=2) runs PoocH in a thread of its own while the
 * first searches from the best other plan; when PoocH's plan is the start,
 * the search runs from it too, and the faster of the two results is the
 * plan (a tie: the one from PoocH's). Here a "pooch" listed first takes
 * 0.3 s and returns the in-core plan, which ties incore's: it is the start
 * by the registry's order, both searches run, the note says what the one
 * from incore's reached, and the plan and note are the sequential
 * start's (threads=1), byte for byte. */
static int
fake_pooch_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                ooc_err *err)
{
  struct timespec ts = { 0, 300000000 };

  nanosleep(&ts, NULL);
  return ooc_planner_incore.plan(state, ctx, pl, err);
}

static const char *const fake_pooch_opts[] = { "max_events", "threads",
                                               NULL };
static const ooc_planner_type fake_pooch = {
  .name = "pooch", .summary = "test: sleeps, then plans incore's",
  .cite = "-", .options = fake_pooch_opts, .plan = fake_pooch_plan,
};

START_TEST(joint_two_starts)
{
  static const ooc_planner_type *const peers[] = { &fake_pooch,
                                                   &ooc_planner_incore,
                                                   NULL };
  static const ooc_kv one = { "threads", "1" }, two = { "threads", "2" };
  fixture f;
  ooc_program p1;
  ooc_plan pl1;
  ooc_err err = { 0 };
  char note[sizeof f.plan.note];

  fx_open(&f, chain6, 1024);
  fx_budget(&f, (uint64_t)1 << 40, "ideal");
  f.ctx.peers = peers;
  ooc_program_init(&p1);
  fx_run(&f, &ooc_planner_joint, &one, 1);
  ck_assert_msg(strncmp(f.plan.note, "joint: from the pooch plan (", 28) == 0,
                "%s", f.plan.note);
  ck_assert_msg(strstr(f.plan.note, "; from the incore plan (") != NULL &&
                strstr(f.plan.note, " the search reached ") != NULL,
                "%s", f.plan.note);
  ck_assert_int_eq(ooc_plan_init(&pl1, f.lv, &err), OOC_OK);
  ck_assert_int_eq(ooc_plan_copy(&pl1, &f.plan), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&pl1, f.lv, &p1, &err), OOC_OK);
  memcpy(note, f.plan.note, sizeof note);
  fx_run(&f, &ooc_planner_joint, &two, 1);
  ck_assert_msg(ooc_program_equal(&p1, &f.prog), "threads=2 gives another "
                "plan than threads=1 (%s)", f.plan.note);
  ck_assert_str_eq(f.plan.note, note);
  ooc_plan_fini(&pl1);
  ooc_program_fini(&p1);
  fx_close(&f);
}
END_TEST

static Suite *planners_suite(void)
{
  Suite *s = suite_create("planners");
  TCase *tc = tcase_create("hand");

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, chain6_figures);
  tcase_add_test(tc, events_per_two_iterations);
  tcase_add_test(tc, checkpoint_sqrt_segments);
  tcase_add_test(tc, pooch_swapin_schedule);
  tcase_add_test(tc, checkpoint_dp_brute_force);
  tcase_add_test(tc, checkpoint_dp_rotor_nested);
  tcase_add_test(tc, joint_brute_force);
  tcase_add_test(tc, joint_algorithm_sweep);
  tcase_add_test(tc, joint_two_starts);
  tcase_add_test(tc, superneurons_cost_aware_segments);
  tcase_add_test(tc, superneurons_lru_cache);
  tcase_add_test(tc, superneurons_conv_algorithms);
  tcase_add_test(tc, pooch_stages);
  tcase_add_test(tc, vdnn_one_layer_ahead);
  tcase_add_test(tc, vdnn_policy);
  tcase_add_test(tc, lms_threshold);
  tcase_add_test(tc, lms_skip_groupby);
  tcase_add_test(tc, lms_autotune);
  tcase_add_test(tc, lms_autotune_fixed_threshold);
  tcase_add_test(tc, capacity_keeps_tail);
  tcase_add_test(tc, capacity_fits);
  tcase_add_test(tc, window_abcd);
  tcase_add_test(tc, window_fits_one_simulation);
  tcase_add_test(tc, window_autotune_allocators);
  tcase_add_test(tc, window_va_footprint);
  tcase_add_test(tc, va_chunk_of_the_simulator);
  tcase_add_test(tc, all_planners_properties);
  tcase_add_test(tc, options_checked);
  tcase_add_test(tc, reserve_keeps_back_longest_and_one_percent);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(planners_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
