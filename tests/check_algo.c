/* tests/check_algo.c — kernel choice in the IR (ir/algo.h): workspaces of
 * each convolution algorithm family from the shapes, their times from the
 * profile, plans that name them, their lowering, simulation and plan.json.
 *
 * The model, at batch 2 in fp32 (e = 4 B), input [4, 8, 8]:
 *   conv1  3x3, pad 1, 4 -> 4 channels, output [4, 8, 8]: every family
 *   conv2  3x3, stride 2, pad 1, 4 -> 4, output [4, 4, 4]: GEMM families
 *          only (FFT and Winograd need stride 1)
 *   conv3  1x1, 4 -> 8, output [8, 4, 4]: a plain GEMM (default workspace
 *          0), no Winograd (not 3x3)
 *   relu   no choice at all
 * Workspaces of conv1 (N = 2, C = K = 4, H = W = P = Q = 8):
 *   default            C x 9 x P Q x e = 4 x 9 x 64 x 4      =   9,216 B
 *   implicit_gemm      0
 *   precomp_gemm       4 x C x 9 = 144
 *   fft                Hf = Wf = 10, 10 x 6 complex x 8 B = 480 B a plane,
 *                      N C + K C + N K = 8 + 16 + 8 = 32 planes: 15,360
 *   fft_tiling         T = ceil(8/30)^2 = 1, 8 x 32 x 17 x (8 + 16 + 8)
 *                      = 139,264
 *   winograd           36 x K x C x e = 2,304
 *   winograd_nonfused  T = 2 x 2 = 4, 36 x 4 x (8 x 4 + 8 x 4 + 16) = 11,520
 * The test profile (tests/data/hw/round.json) offers implicit_gemm (x1.5),
 * precomp_gemm (x1) and winograd (x0.5), and no FFT.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/semantics.h"
#include "ir/algo.h"
#include "ir/plan_io.h"
#include "base/util.h"
#include "plan/plan.h"
#include "sim/cost.h"
#include "sim/sim.h"

static const char *net =
  "{ \"name\": \"algos\", \"input\": [4, 8, 8], \"layers\": ["
  "  { \"name\": \"conv1\", \"op\": \"conv2d\", \"out\": 4, \"kernel\": 3,"
  "    \"pad\": 1 },"
  "  { \"name\": \"conv2\", \"op\": \"conv2d\", \"out\": 4, \"kernel\": 3,"
  "    \"stride\": 2, \"pad\": 1 },"
  "  { \"name\": \"conv3\", \"op\": \"conv2d\", \"out\": 8, \"kernel\": 1 },"
  "  { \"name\": \"relu\", \"op\": \"relu\" } ] }";

static ooc_model *m;
static ooc_hw *hw;
static ooc_costs *costs;
static ooc_liveness *lv;
static ooc_plan plan;
static ooc_program prog;
static ooc_err err;

static void
setup(void)
{
  ooc_model_opts mo = { .batch = 2 };

  ooc_err_clear(&err);
  ck_assert_msg(ooc_model_load_string(net, "algos.json", &mo, &m, &err) ==
                OOC_OK, "%s", err.msg);
  ck_assert_msg(ooc_hw_load(OOC_SRCDIR "/tests/data/hw/round.json", NULL, 0,
                            &hw, &err) == OOC_OK, "%s", err.msg);
  ck_assert_msg(ooc_costs_alloc(m, hw, &costs, &err) == OOC_OK, "%s",
                err.msg);
  ck_assert_msg(ooc_liveness_alloc(m, &lv, &err) == OOC_OK, "%s", err.msg);
  ck_assert_int_eq(ooc_plan_init(&plan, lv, &err), OOC_OK);
  ooc_program_init(&prog);
}

static void
teardown(void)
{
  ooc_program_fini(&prog);
  ooc_plan_fini(&plan);
  ooc_liveness_free(lv);
  ooc_costs_free(costs);
  ooc_hw_free(hw);
  ooc_model_free(m);
}

static uint64_t
ws(int layer, ooc_algo a)
{
  uint64_t b = 0;
  ck_assert_int_eq(ooc_algo_workspace(m, layer, a, &b), OOC_OK);
  return b;
}

static int
applies(int layer, ooc_algo a)
{
  uint64_t b;
  return ooc_algo_workspace(m, layer, a, &b) == OOC_OK;
}

START_TEST(test_names)
{
  ooc_algo a;

  for (int i = 0; i < OOC_ALGO_COUNT; i++) {
    ck_assert_int_eq(ooc_algo_parse(ooc_algo_name((ooc_algo)i), &a), OOC_OK);
    ck_assert_int_eq(a, i);
  }
  ck_assert_str_eq(ooc_algo_name(OOC_ALGO_WINOGRAD_NONFUSED),
                   "winograd_nonfused");
  ck_assert_int_eq(ooc_algo_parse("direct", &a), OOC_EINVAL);
}
END_TEST

START_TEST(test_workspaces)
{
  ck_assert_uint_eq(ws(1, OOC_ALGO_DEFAULT), 9216);
  ck_assert_uint_eq(ws(1, OOC_ALGO_IMPLICIT_GEMM), 0);
  ck_assert_uint_eq(ws(1, OOC_ALGO_PRECOMP_GEMM), 144);
  ck_assert_uint_eq(ws(1, OOC_ALGO_FFT), 15360);
  ck_assert_uint_eq(ws(1, OOC_ALGO_FFT_TILING), 139264);
  ck_assert_uint_eq(ws(1, OOC_ALGO_WINOGRAD), 2304);
  ck_assert_uint_eq(ws(1, OOC_ALGO_WINOGRAD_NONFUSED), 11520);
  /* Stride 2: the GEMM families only. */
  ck_assert(applies(2, OOC_ALGO_PRECOMP_GEMM));
  ck_assert(!applies(2, OOC_ALGO_FFT));
  ck_assert(!applies(2, OOC_ALGO_FFT_TILING));
  ck_assert(!applies(2, OOC_ALGO_WINOGRAD));
  /* 1x1: default workspace 0, FFT applies, Winograd does not. */
  ck_assert_uint_eq(ws(3, OOC_ALGO_DEFAULT), 0);
  ck_assert(applies(3, OOC_ALGO_FFT));
  ck_assert(!applies(3, OOC_ALGO_WINOGRAD_NONFUSED));
  /* No choice for relu: the default only. */
  ck_assert(!ooc_algo_has_choice(m, 4));
  ck_assert(applies(4, OOC_ALGO_DEFAULT));
  ck_assert(!applies(4, OOC_ALGO_IMPLICIT_GEMM));
  /* The smallest workspace is implicit GEMM's, and the liveness's working
   * sets use it: fwd conv1's is its output (the input batch is
   * persistent), without the 9,216 B im2col buffer. */
  ck_assert_uint_eq(ooc_algo_min_workspace(m, 1), 0);
  ck_assert_uint_eq(ooc_liveness_step_bytes(lv, 0),
                    m->layers[1].out_bytes);
}
END_TEST

START_TEST(test_times)
{
  /* The kernel part of the default time scaled, launches (5 us each)
   * kept. FFT is not offered by the profile. */
  int64_t f = costs->fwd_ns[1], b = costs->bwd_ns[1];
  /* conv1 reads the input batch, which has no gradient: its backward is
   * the weight gradient alone, one launch. */
  int64_t bl = m->layers[1].bwd_data_flops > 0 ? 10000 : 5000;

  ck_assert_int_eq(ooc_costs_algo_ns(costs, 1, 0, OOC_ALGO_DEFAULT), f);
  ck_assert_int_eq(ooc_costs_algo_ns(costs, 1, 0, OOC_ALGO_WINOGRAD),
                   (f - 5000 + 1) / 2 + 5000);
  ck_assert_int_eq(ooc_costs_algo_ns(costs, 1, 1, OOC_ALGO_IMPLICIT_GEMM),
                   (int64_t)((double)(b - bl) * 1.5 + 0.5) + bl);
  ck_assert_int_eq(bl, 5000);
  ck_assert_int_eq(ooc_costs_algo_ns(costs, 1, 0, OOC_ALGO_PRECOMP_GEMM), f);
  ck_assert_int_eq(ooc_costs_algo_ns(costs, 1, 0, OOC_ALGO_FFT), -1);
  ck_assert_int_eq(ooc_costs_algo_ns(costs, 2, 0, OOC_ALGO_WINOGRAD), -1);
  ck_assert_int_eq(ooc_costs_algo_ns(costs, 4, 0, OOC_ALGO_IMPLICIT_GEMM),
                   -1);
}
END_TEST

/* A calibrated profile (hwprofiles/README.md, "Calibrated layers"): round.json
 * with a calibration table for conv1's signature and conv3's.
 *   conv1 default:  fwd 100 us, bwd 300 us, recompute 120 us
 *   conv1 winograd: fwd 40 us; backward and recompute not measured
 *   conv1 implicit_gemm: not offered (the backend has no such kernel)
 *   conv1 fft: 10 us, but the profile does not offer fft at all
 *   conv3 default: bwd 7 us only
 * Launches are 5 us; conv1's backward is one kernel (no data gradient:
 * it reads the input batch), so bl = 5000 ns. By hand:
 *   winograd    fwd 40000 (measured); bwd (300000 - 5000) x 0.5 + 5000
 *               = 152500 (the default's, scaled); recompute 40000 (the
 *               entry's forward)
 *   precomp_gemm (factor 1, no entry): 100000, 300000, and the default's
 *               recompute (120000 - 5000) x 1 + 5000 = 120000
 *   conv3       fwd stays the roofline; recompute = that forward. */
START_TEST(test_calibrated)
{
  char sig1[256], sig3[256], *text = NULL, *json;
  size_t len = 0, n;
  ooc_hw *ch = NULL;
  ooc_costs *cc = NULL;

  ooc_layer_signature(m, 1, sig1, sizeof sig1);
  ooc_layer_signature(m, 3, sig3, sizeof sig3);
  ck_assert_int_eq(ooc_read_file(OOC_SRCDIR "/tests/data/hw/round.json",
                                 &text, &len, &err), OOC_OK);
  n = len + 2048;
  json = malloc(n);
  ck_assert_ptr_nonnull(json);
  snprintf(json, n, "%.*s, \"calibration\": { \"layers\": ["
           " { \"sig\": \"%s\", \"fwd_us\": 100, \"bwd_us\": 300,"
           "   \"recomp_us\": 120 },"
           " { \"sig\": \"%s\", \"algo\": \"winograd\", \"fwd_us\": 40 },"
           " { \"sig\": \"%s\", \"algo\": \"implicit_gemm\","
           "   \"offered\": false },"
           " { \"sig\": \"%s\", \"algo\": \"fft\", \"fwd_us\": 10 },"
           " { \"sig\": \"%s\", \"bwd_us\": 7 } ] } }",
           (int)(strrchr(text, '}') - text), text, sig1, sig1, sig1, sig1,
           sig3);
  ck_assert_msg(ooc_hw_load_string(json, "cal.json", NULL, 0, &ch, &err) ==
                OOC_OK, "%s", err.msg);
  ck_assert_msg(ooc_costs_alloc(m, ch, &cc, &err) == OOC_OK, "%s", err.msg);

  ck_assert_int_eq(cc->fwd_ns[1], 100000);
  ck_assert_int_eq(cc->bwd_ns[1], 300000);
  ck_assert_int_eq(cc->recomp_ns[1], 120000);
  ck_assert_int_eq(cc->calibrated[1], 1);
  ck_assert_int_eq(ooc_costs_algo_ns(cc, 1, OOC_PH_RECOMP, 0), 120000);
  ck_assert_int_eq(ooc_costs_algo_ns(cc, 1, OOC_PH_FWD, OOC_ALGO_WINOGRAD),
                   40000);
  ck_assert_int_eq(ooc_costs_algo_ns(cc, 1, OOC_PH_BWD, OOC_ALGO_WINOGRAD),
                   152500);
  ck_assert_int_eq(ooc_costs_algo_ns(cc, 1, OOC_PH_RECOMP,
                                     OOC_ALGO_WINOGRAD), 40000);
  for (int ph = OOC_PH_FWD; ph <= OOC_PH_RECOMP; ph++) {
    ck_assert_int_eq(ooc_costs_algo_ns(cc, 1, ph, OOC_ALGO_IMPLICIT_GEMM),
                     -1);
    ck_assert_int_eq(ooc_costs_algo_ns(cc, 1, ph, OOC_ALGO_FFT), -1);
  }
  ck_assert_int_eq(ooc_costs_algo_ns(cc, 1, OOC_PH_FWD,
                                     OOC_ALGO_PRECOMP_GEMM), 100000);
  ck_assert_int_eq(ooc_costs_algo_ns(cc, 1, OOC_PH_BWD,
                                     OOC_ALGO_PRECOMP_GEMM), 300000);
  ck_assert_int_eq(ooc_costs_algo_ns(cc, 1, OOC_PH_RECOMP,
                                     OOC_ALGO_PRECOMP_GEMM), 120000);
  /* conv2 has no entry: as without the table. */
  ck_assert_int_eq(cc->fwd_ns[2], costs->fwd_ns[2]);
  ck_assert_int_eq(cc->recomp_ns[2], costs->fwd_ns[2]);
  ck_assert_int_eq(cc->calibrated[2], 0);
  ck_assert_int_eq(ooc_costs_algo_ns(cc, 2, OOC_PH_BWD,
                                     OOC_ALGO_IMPLICIT_GEMM),
                   ooc_costs_algo_ns(costs, 2, OOC_PH_BWD,
                                     OOC_ALGO_IMPLICIT_GEMM));
  /* conv3: backward measured, forward and recompute the roofline's. */
  ck_assert_int_eq(cc->bwd_ns[3], 7000);
  ck_assert_int_eq(cc->fwd_ns[3], costs->fwd_ns[3]);
  ck_assert_int_eq(cc->recomp_ns[3], costs->fwd_ns[3]);
  ooc_costs_free(cc);
  ooc_hw_free(ch);
  free(json);
  free(text);
}
END_TEST

/* Index of the first instruction of kind k, phase ph, on layer l. */
static int32_t
find(const ooc_program *p, int k, int ph, int l)
{
  for (int32_t i = 0; i < p->n_instr; i++)
    if (p->instr[i].kind == k && p->instr[i].phase == ph &&
        p->instr[i].layer == l)
      return i;
  return -1;
}

START_TEST(test_lowering)
{
  int32_t f1 = lv->fwd_step[1], b1 = lv->bwd_step[1], i;
  int32_t tw = lv->layer_ws_tensor[1], tb = lv->layer_bws_tensor[1];

  /* Every convolution has a forward and a backward workspace tensor;
   * relu none. */
  ck_assert_int_ge(tw, 0);
  ck_assert_int_eq(tb, tw + 1);
  ck_assert_int_ge(lv->layer_ws_tensor[3], 0);
  ck_assert_int_eq(lv->layer_ws_tensor[4], -1);

  plan.algo[f1] = OOC_ALGO_WINOGRAD;
  plan.algo[b1] = OOC_ALGO_IMPLICIT_GEMM;
  ck_assert_msg(ooc_plan_lower(&plan, lv, &prog, &err) == OOC_OK, "%s",
                err.msg);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
  ck_assert_uint_eq(prog.tensors[tw].bytes, 2304);
  ck_assert_uint_eq(prog.tensors[tb].bytes, 0);
  i = find(&prog, OOC_I_COMPUTE, OOC_PH_FWD, 1);
  ck_assert_int_eq(prog.instr[i].algo, OOC_ALGO_WINOGRAD);
  /* ALLOC before and FREE after it, and the kernel writes it. */
  ck_assert_int_eq(prog.instr[i - 1].kind, OOC_I_ALLOC);
  ck_assert_int_eq(prog.instr[i - 1].tensor, tw);
  ck_assert_int_eq(prog.instr[i + 1].kind, OOC_I_FREE);
  ck_assert_int_eq(prog.args[prog.instr[i].arg_first + prog.instr[i].n_args
                             - 1], tw | OOC_ARG_WRITE);
  /* Implicit GEMM needs no workspace: nothing around bwd conv1. */
  i = find(&prog, OOC_I_COMPUTE, OOC_PH_BWD, 1);
  ck_assert_int_eq(prog.instr[i].algo, OOC_ALGO_IMPLICIT_GEMM);
  ck_assert_int_ne(prog.instr[i - 1].tensor, tb);
  /* conv2 (stride 2) keeps the default: its im2col buffer. */
  i = find(&prog, OOC_I_COMPUTE, OOC_PH_FWD, 2);
  ck_assert_int_eq(prog.instr[i].algo, OOC_ALGO_DEFAULT);
  ck_assert_int_eq(prog.instr[i - 1].tensor, lv->layer_ws_tensor[2]);

  /* Algorithms that do not apply are refused by step. */
  plan.algo[lv->fwd_step[2]] = OOC_ALGO_WINOGRAD;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "plan: step 'fwd conv2' names kernel algorithm "
                   "'winograd', which does not apply to it");
  plan.algo[lv->fwd_step[2]] = OOC_ALGO_DEFAULT;
  plan.algo[lv->bwd_step[4]] = OOC_ALGO_FFT;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "plan: step 'bwd relu' names kernel algorithm "
                   "'fft', which does not apply to it");
  plan.algo[lv->bwd_step[4]] = OOC_ALGO_DEFAULT;
  plan.algo[lv->update_step] = OOC_ALGO_WINOGRAD;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "plan: step 'update' names kernel algorithm "
                   "'winograd', which does not apply to it");
  /* Reset brings back the defaults. */
  ooc_plan_reset(&plan);
  for (int32_t s = 0; s < lv->n_steps; s++)
    ck_assert_int_eq(plan.algo[s], OOC_ALGO_DEFAULT);
}
END_TEST

/* Simulate p on an unlimited ideal device. */
static ooc_sim_result
simulate(const ooc_program *p, int *rc)
{
  ooc_sim_config cfg = { .model = m, .hw = hw, .costs = costs,
                         .allocator = &ooc_alloc_ideal,
                         .budget = (uint64_t)1 << 40, .iterations = 1 };
  ooc_sim *sim = NULL;
  ooc_sim_result r;

  ck_assert_int_eq(ooc_sim_alloc(&cfg, &sim, &err), OOC_OK);
  *rc = ooc_sim_run(sim, p, &r, NULL, &err);
  ooc_sim_free(sim);
  return r;
}

START_TEST(test_simulation)
{
  ooc_sim_result base, alt;
  int rc;
  int64_t df, db;

  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  base = simulate(&prog, &rc);
  ck_assert_int_eq(rc, OOC_OK);
  plan.algo[lv->fwd_step[1]] = OOC_ALGO_WINOGRAD;
  plan.algo[lv->bwd_step[1]] = OOC_ALGO_IMPLICIT_GEMM;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  alt = simulate(&prog, &rc);
  ck_assert_int_eq(rc, OOC_OK);
  /* One stream, no copies, a free allocator: the iteration is the sum of
   * the kernels, so it moves by exactly the two kernels' differences. */
  df = ooc_costs_algo_ns(costs, 1, 0, OOC_ALGO_WINOGRAD) - costs->fwd_ns[1];
  db = ooc_costs_algo_ns(costs, 1, 1, OOC_ALGO_IMPLICIT_GEMM) -
       costs->bwd_ns[1];
  ck_assert_int_eq(alt.iteration_ns - base.iteration_ns, df + db);
  ck_assert_int_eq(alt.compute_busy_ns - base.compute_busy_ns, df + db);
  /* FFT applies to conv1 but the profile does not offer it. */
  plan.algo[lv->fwd_step[1]] = OOC_ALGO_FFT;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  simulate(&prog, &rc);
  ck_assert_int_eq(rc, OOC_EINVAL);
  /* The profile named by its file, as it was loaded. */
  ck_assert_msg(strstr(err.msg, "runs kernel algorithm 'fft', which profile "
                       "'") != NULL &&
                    strstr(err.msg, "tests/data/hw/round.json' does not "
                           "offer for that layer") != NULL,
                "%s", err.msg);
}
END_TEST

START_TEST(test_plan_file)
{
  ooc_plan_file pf = { .model = "algos", .batch = 2, .hw = "round",
                       .planner = "incore", .allocator = "ideal",
                       .budget_bytes = 1u << 30 }, rd;
  char *text = NULL;
  size_t len = 0;
  FILE *f;

  plan.algo[lv->fwd_step[1]] = OOC_ALGO_WINOGRAD;
  plan.algo[lv->bwd_step[3]] = OOC_ALGO_FFT;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  pf.program = prog;
  f = open_memstream(&text, &len);
  ck_assert_int_eq(ooc_plan_file_write(f, &pf, &err), OOC_OK);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(text, ",\"winograd\"]"));
  ck_assert_ptr_nonnull(strstr(text, ",\"fft\"]"));
  ck_assert_msg(ooc_plan_file_read_string(text, len, "p.json", &rd, &err) ==
                OOC_OK, "%s", err.msg);
  ck_assert(ooc_program_equal(&rd.program, &prog));
  ooc_plan_file_fini(&rd);
  free(text);
}
END_TEST

static Suite *
algo_suite(void)
{
  Suite *s = suite_create("algo");
  TCase *tc = tcase_create("kernel_choice");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_names);
  tcase_add_test(tc, test_workspaces);
  tcase_add_test(tc, test_times);
  tcase_add_test(tc, test_calibrated);
  tcase_add_test(tc, test_lowering);
  tcase_add_test(tc, test_simulation);
  tcase_add_test(tc, test_plan_file);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(algo_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
