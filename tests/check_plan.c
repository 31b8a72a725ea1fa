/* tests/check_plan.c — schedule, liveness, lowering, the planner front end
 * and plan.json (plan/plan.h, plan/planner.h, ir/plan_io.h).
 *
 * The model is built in C so that every figure is round and checked by
 * hand in the comments:
 *
 *   layer  name   inputs  alias  out   saved ws  params(w+g+opt) needs
 *   0      input  -       -      100   -     -   -               -
 *   1      conv1  0       -      1000  0     50  30              input
 *   2      relu1  1       1      0     0     0   0               output
 *   3      conv2  2       -      1000  0     0   30              input
 *   4      add    3, 2    -      1000  0     0   0               none
 *   5      flat   4       4      0     0     0   0               none
 *   6      fc     5       -      40    0     0   30              input
 *   7      loss   6       -      4     40    0   0               output
 *
 * Acts: a0 input (100), a1 conv1+relu1 (1000), a2 conv2 (1000),
 * a3 add+flat (1000), a4 fc (40), a5 loss (4 + 40 saved = 44).
 * Steps: fwd layer l at l-1 (0..6); bwd layer l at 14-l (7..13); update 14.
 * Tensors: params L1,L3,L6 = 0,1,2; input 3; acts a1..a5 = 4..8; grads
 * a1..a5 = 9..13; forward and backward workspace of conv1 = 14, 15 (the
 * layers are built by hand with no op kind, so conv1 keeps its 50 B
 * workspace: no other kernel algorithm applies).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/paths.h"
#include "ir/semantics.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "plan/toolkit.h"
#include "planners/registry.h"
#include "ir/plan_io.h"

static ooc_layer layers[8];
static int inputs[8] = { 0, 1, 2, 3, 2, 4, 5, 6 };
static ooc_model model;
static ooc_liveness *lv;
static ooc_plan plan;
static ooc_program prog;
static ooc_err err;

static void
mk(int i, const char *name, int n_in, int in_first, int alias,
   uint64_t out, uint64_t saved, uint64_t ws, uint64_t par, unsigned needs)
{
  layers[i] = (ooc_layer){
    .name = name, .n_in = n_in, .in_first = in_first, .alias_of = alias,
    .out_bytes = out, .saved_bytes = saved, .workspace_bytes = ws,
    .param_bytes = par / 3, .grad_bytes = par / 3, .opt_bytes = par / 3,
    .needs = needs,
    /* As the loader sets them: every layer after conv1 has an input that
     * depends on a parameter; every layer but the input has a backward. */
    .grad_in = i >= 2, .has_bwd = i >= 1,
  };
}

static void
setup(void)
{
  mk(0, "input", 0, 0, -1, 100, 0, 0, 0, OOC_NEED_NONE);
  mk(1, "conv1", 1, 0, -1, 1000, 0, 50, 30, OOC_NEED_INPUT);
  mk(2, "relu1", 1, 1, 1, 0, 0, 0, 0, OOC_NEED_OUTPUT);
  mk(3, "conv2", 1, 2, -1, 1000, 0, 0, 30, OOC_NEED_INPUT);
  mk(4, "add", 2, 3, -1, 1000, 0, 0, 0, OOC_NEED_NONE);
  mk(5, "flat", 1, 5, 4, 0, 0, 0, 0, OOC_NEED_NONE);
  mk(6, "fc", 1, 6, -1, 40, 0, 0, 30, OOC_NEED_INPUT);
  mk(7, "loss", 1, 7, -1, 4, 40, 0, 0, OOC_NEED_OUTPUT);
  /* add's inputs are conv2 (3) and relu1 (2): inputs[3..4] = 3, 2. */
  model = (ooc_model){
    .name = "toy", .path = "toy.json", .batch = 1, .n_layers = 8,
    .layers = layers, .inputs = inputs, .fingerprint = 0x1234abcdULL,
  };
  ooc_err_clear(&err);
  ck_assert_int_eq(ooc_liveness_alloc(&model, &lv, &err), OOC_OK);
  ck_assert_int_eq(ooc_plan_init(&plan, lv, &err), OOC_OK);
  ooc_program_init(&prog);
}

static void
teardown(void)
{
  ooc_program_fini(&prog);
  ooc_plan_fini(&plan);
  ooc_liveness_free(lv);
}

/* The program as text: one token per instruction,
 *   A4 (ALLOC t4 on compute), a4 (ALLOC t4 on the H2D stream),
 *   Ah4 (ALLOC t4 in host memory), F4 / f4 (FREE on compute / D2H),
 *   >4 (H2D of t4), <4 (D2H of t4),
 *   fwd1[3,4w,0,14w] (COMPUTE phase layer [args]) and "@i,j" for its waits,
 * tokens separated by spaces, "|" after the prologue. */
static const char *
render(const ooc_program *p)
{
  static char buf[8192];
  size_t o = 0;
  int32_t i, k;

#define P(...) o += (size_t)snprintf(buf + o, sizeof buf - o, __VA_ARGS__)
  buf[0] = '\0';
  for (i = 0; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    if (i == p->prologue_end)
      P("| ");
    switch (in->kind) {
    case OOC_I_ALLOC:
      P("%s%d", in->where == OOC_WHERE_HOST ? "Ah"
                : in->stream == OOC_STREAM_COMPUTE ? "A" : "a", in->tensor);
      break;
    case OOC_I_FREE:
      P("%s%d", in->stream == OOC_STREAM_COMPUTE ? "F" : "f", in->tensor);
      break;
    case OOC_I_H2D: P(">%d", in->tensor); break;
    case OOC_I_D2H: P("<%d", in->tensor); break;
    case OOC_I_HOST:
      P("cpu%d[", in->layer);
      for (k = 0; k < in->n_args; k++) {
        int32_t a = p->args[in->arg_first + k];
        P("%s%d%s", k ? "," : "", OOC_ARG_TENSOR(a),
          (a & OOC_ARG_WRITE) ? "w" : "");
      }
      P("]");
      break;
    default:
      P("%s%d[", ooc_phase_name((ooc_phase)in->phase), in->layer);
      for (k = 0; k < in->n_args; k++) {
        int32_t a = p->args[in->arg_first + k];
        P("%s%d%s", k ? "," : "", OOC_ARG_TENSOR(a),
          (a & OOC_ARG_WRITE) ? "w" : "");
      }
      P("]");
    }
    for (k = 0; k < in->n_waits; k++)
      P("%s%d", k ? "," : "@", p->waits[in->wait_first + k]);
    P(" ");
  }
  if (o > 0 && o < sizeof buf)
    buf[o - 1] = '\0';
#undef P
  return buf;
}

/* --- liveness ---------------------------------------------------------------- */

START_TEST(test_schedule)
{
  char name[64];

  ck_assert_int_eq(lv->n_steps, 15);
  ck_assert_int_eq(lv->fwd_step[1], 0);
  ck_assert_int_eq(lv->fwd_step[7], 6);
  ck_assert_int_eq(lv->bwd_step[7], 7);
  ck_assert_int_eq(lv->bwd_step[1], 13);
  ck_assert_int_eq(lv->fwd_step[0], -1);
  ck_assert_int_eq(lv->update_step, 14);
  ck_assert_str_eq(ooc_step_name(lv, 3, name, sizeof name), "fwd add");
  ck_assert_str_eq(ooc_step_name(lv, 11, name, sizeof name), "bwd conv2");
  ck_assert_str_eq(ooc_step_name(lv, 14, name, sizeof name), "update");
}
END_TEST

START_TEST(test_acts_and_uses)
{
  /* Uses: a1 at fwd conv1 (0), fwd relu1 (1), fwd conv2 (2), fwd add (3),
   * bwd conv2 (11, needs input), bwd relu1 (12, needs output). */
  static const int32_t u1[] = { 0, 1, 2, 3, 11, 12 };
  static const int32_t last[] = { 13, 12, 3, 8, 6, 7 };
  int32_t k, a;

  ck_assert_int_eq(lv->n_acts, 6);
  ck_assert_int_eq(lv->layer_act[2], 1);   /* relu1 aliases conv1 */
  ck_assert_int_eq(lv->layer_act[5], 3);   /* flat aliases add */
  ck_assert_int_eq(lv->act_layer[4], 6);
  ck_assert_uint_eq(lv->act_bytes[5], 44); /* loss: 4 + 40 saved */
  ck_assert_int_eq(lv->act_nuses[1], 6);
  for (k = 0; k < 6; k++)
    ck_assert_int_eq(lv->use_steps[lv->act_first[1] + k], u1[k]);
  for (a = 0; a < 6; a++)
    ck_assert_int_eq(lv->act_last[a], last[a]);
  /* flat's backward (step 9) and add's (10) need nothing. */
  ck_assert_int_eq(lv->step_nacts[9], 0);
  ck_assert_int_eq(lv->step_nacts[10], 0);
  ck_assert_int_eq(ooc_liveness_next_use(lv, 1, 3), 11);
  ck_assert_int_eq(ooc_liveness_next_use(lv, 1, 12), -1);
  ck_assert_int_eq(lv->act_nlayers[1], 2);
  ck_assert_int_eq(lv->act_layers[lv->act_lfirst[3] + 1], 5);
}
END_TEST

START_TEST(test_grads)
{
  /* Grad of a3 (add+flat): first written by bwd fc (8), last read by bwd
   * add (10). a1: written by bwd add (10), read last by bwd conv1 (13).
   * The loss seeds its own at 7. The input has none. */
  ck_assert_int_eq(lv->grad_first[0], -1);
  ck_assert_int_eq(lv->grad_first[5], 7);
  ck_assert_int_eq(lv->grad_last[5], 7);
  ck_assert_int_eq(lv->grad_first[4], 7);
  ck_assert_int_eq(lv->grad_last[4], 8);
  ck_assert_int_eq(lv->grad_first[3], 8);
  ck_assert_int_eq(lv->grad_last[3], 10);
  ck_assert_int_eq(lv->grad_first[2], 10);
  ck_assert_int_eq(lv->grad_last[2], 11);
  ck_assert_int_eq(lv->grad_first[1], 10);
  ck_assert_int_eq(lv->grad_last[1], 13);
  ck_assert_uint_eq(lv->grad_bytes[5], 4);
}
END_TEST

/* Gradients only of what depends on a parameter: in pool_first (input,
 * a max-pool, then conv1, the first layer with parameters), conv1's
 * backward computes no input gradient and the max-pool has no backward,
 * so the max-pool's output has no gradient tensor, no step uses one, and
 * the lowered program allocates and lists only the other three; and the
 * max-pool saves no indices. */
START_TEST(test_grads_need_a_parameter)
{
  ooc_model_opts o = { .batch = 16 };
  ooc_model *m = NULL;
  ooc_liveness *l2 = NULL;
  ooc_plan p2;
  ooc_program g;
  ooc_err e = { 0 };
  int32_t pool, conv, i, n_grad = 0;

  ck_assert_int_eq(ooc_model_load(OOC_SRCDIR "/tests/data/models/"
                                  "pool_first.json", &o, &m, &e), OOC_OK);
  ck_assert_int_eq(ooc_liveness_alloc(m, &l2, &e), OOC_OK);
  pool = l2->layer_act[ooc_model_find_layer(m, "pool0")];
  conv = l2->layer_act[ooc_model_find_layer(m, "conv1")];
  ck_assert_int_ne(pool, conv);
  ck_assert_int_eq(l2->grad_tensor[pool], -1);
  ck_assert_int_eq(l2->grad_first[pool], -1);
  ck_assert_int_ge(l2->grad_tensor[conv], 0);
  for (i = 0; i < l2->n_steps; i++)
    ck_assert_int_eq(ooc_liveness_step_uses_grad(l2, i, pool), 0);
  /* Nor does it keep its indices (int64, twice its fp32 output) or its
   * output for a backward: 3 x 16 x 16 x 16 x 4 bytes, last read by
   * conv1's backward. */
  ck_assert_uint_eq(l2->act_bytes[pool], 49152);
  ck_assert_int_eq(l2->steps[l2->act_last[pool]].layer,
                   ooc_model_find_layer(m, "conv1"));
  ck_assert_int_eq(l2->steps[l2->act_last[pool]].phase, OOC_PH_BWD);
  ck_assert_int_eq(ooc_plan_init(&p2, l2, &e), OOC_OK);
  ooc_program_init(&g);
  ck_assert_int_eq(ooc_plan_lower(&p2, l2, &g, &e), OOC_OK);
  for (i = 0; i < g.n_tensors; i++)
    if (g.tensors[i].kind == OOC_T_GRAD) {
      n_grad++;
      ck_assert_int_ne(g.tensors[i].layer, ooc_model_find_layer(m, "pool0"));
    }
  ck_assert_int_eq(n_grad, 3);
  ck_assert_int_eq(ooc_program_validate(&g, &e), OOC_OK);
  ooc_program_fini(&g);
  ooc_plan_fini(&p2);
  ooc_liveness_free(l2);
  ooc_model_free(m);
}
END_TEST

START_TEST(test_step_bytes)
{
  /* fwd add: a2 + a1 + a3 = 3000. bwd add: grads a3 + a2 + a1 = 3000.
   * bwd fc: a3 (1000) + grads a4 (40) + a3 (1000) = 2040. bwd conv1: grad
   * a1 (1000) + workspace 50; the input is persistent. Persistent: 100 +
   * 3 x 30 = 190. The first step with 3000 is fwd add. */
  ck_assert_uint_eq(ooc_liveness_step_bytes(lv, 0), 1050);
  ck_assert_uint_eq(ooc_liveness_step_bytes(lv, 3), 3000);
  ck_assert_uint_eq(ooc_liveness_step_bytes(lv, 8), 2040);
  ck_assert_uint_eq(ooc_liveness_step_bytes(lv, 10), 3000);
  ck_assert_uint_eq(ooc_liveness_step_bytes(lv, 13), 1050);
  ck_assert_uint_eq(ooc_liveness_step_bytes(lv, 14), 0);
  ck_assert_uint_eq(lv->max_step_bytes, 3000);
  ck_assert_int_eq(lv->max_step, 3);
  ck_assert_uint_eq(lv->persistent_bytes, 190);
  ck_assert_int_eq(lv->n_tensors, 16);
  ck_assert_int_eq(lv->layer_ws_tensor[1], 14);
  ck_assert_int_eq(lv->layer_bws_tensor[1], 15);
  ck_assert_int_eq(lv->grad_tensor[1], 9);
}
END_TEST

START_TEST(test_saved_state)
{
  /* Small saved state (8 B on add's 1000 B output) does not keep the
   * output alive until add's backward (step 10); saved state as large as
   * the output does. Either way it is counted in the act's bytes. */
  ooc_liveness *l2;
  layers[4].saved_bytes = 8;
  ck_assert_int_eq(ooc_liveness_alloc(&model, &l2, &err), OOC_OK);
  ck_assert_int_eq(l2->step_nacts[10], 0);
  ck_assert_int_eq(l2->act_last[3], 8);
  ck_assert_uint_eq(l2->act_bytes[3], 1008);
  ooc_liveness_free(l2);
  layers[4].saved_bytes = 1000;
  ck_assert_int_eq(ooc_liveness_alloc(&model, &l2, &err), OOC_OK);
  ck_assert_int_eq(l2->step_nacts[10], 1);
  ck_assert_int_eq(l2->act_last[3], 10);
  ooc_liveness_free(l2);
}
END_TEST

START_TEST(test_budget_check)
{
  ck_assert_int_eq(ooc_plan_check_budget(lv, 3190, &err), OOC_OK);
  ck_assert_int_eq(ooc_plan_check_budget(lv, 3189, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "budget 3.11 KiB is below the working set of "
                   "step 'fwd add' (persistent 190 B + 2.93 KiB)");
}
END_TEST

/* --- planning toolkit (plan/toolkit.h) ------------------------------------------ */

START_TEST(test_first_last_uses)
{
  /* Last forward / first backward use per act (uses in the header):
   * a0 read by fwd conv1 (0) and bwd conv1 (13); a1 last read in forward
   * by fwd add (3), first in backward by bwd conv2 (11); a2 never in
   * backward; a3 by fwd fc (5) and bwd fc (8); a5 by bwd loss (7). */
  static const int32_t lf[] = { 0, 3, 3, 5, 6, 6 };
  static const int32_t fb[] = { 13, 11, -1, 8, -1, 7 };
  int32_t a;

  for (a = 0; a < 6; a++) {
    ck_assert_int_eq(lv->act_last_fwd[a], lf[a]);
    ck_assert_int_eq(lv->act_first_bwd[a], fb[a]);
  }
}
END_TEST

START_TEST(test_memory_timeline)
{
  /* Raw bytes (no allocator): persistent 100 + 3 x 30 = 190 everywhere;
   * conv1's workspace 50 at steps 0 and 13; acts a1 (0..12), a2 (2..3),
   * a3 (3..8), a4 40 (5..6), a5 44 (6..7); grads a5 4 (7), a4 40 (7..8),
   * a3 (8..10), a2 (10..11), a1 (10..13), 1000 each but a4, a5. */
  static const int64_t all[15] = {
    1240, 1190, 2190, 3190, 2190, 2230, 2274, 2278, 3230, 2190, 4190,
    3190, 2190, 1240, 190,
  };
  int64_t v[15];
  ooc_timeline t;
  int32_t s;

  ck_assert_int_eq(ooc_timeline_init(&t, lv->n_steps, &err), OOC_OK);
  ooc_timeline_memory(&t, lv, NULL, OOC_TL_ALL);
  ooc_timeline_values(&t, v);
  for (s = 0; s < 15; s++) {
    ck_assert_int_eq(v[s], all[s]);
    ck_assert_int_eq(ooc_timeline_at(&t, s), all[s]);
  }
  ck_assert_int_eq(ooc_timeline_max(&t, 0, 14), 4190);
  ck_assert_int_eq(ooc_timeline_max(&t, 11, 14), 3190);
  ck_assert_int_eq(ooc_timeline_last_above(&t, 0, 14, 3000), 11);
  ck_assert_int_eq(ooc_timeline_last_above(&t, 0, 7, 3190), -1);
  ck_assert_int_eq(ooc_timeline_last_above(&t, 0, 7, 3189), 3);
  ck_assert_int_eq(ooc_timeline_first_above(&t, 0, 14, 3000), 3);
  ck_assert_int_eq(ooc_timeline_first_above(&t, 4, 9, 3000), 8);
  /* Only persistent, workspace and gradients (what window subtracts). */
  ooc_timeline_clear(&t);
  ooc_timeline_memory(&t, lv, NULL,
                      OOC_TL_PERSISTENT | OOC_TL_WORKSPACE | OOC_TL_GRADS);
  ck_assert_int_eq(ooc_timeline_at(&t, 0), 240);
  ck_assert_int_eq(ooc_timeline_at(&t, 10), 3190);
  ck_assert_int_eq(ooc_timeline_at(&t, 13), 1240);
  ooc_timeline_fini(&t);
}
END_TEST

/* A fixed 64-bit LCG: the random tests are reproducible. */
static int32_t
lcg(uint64_t *x, int32_t k)
{
  *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int32_t)((*x >> 33) % (uint64_t)k);
}

/* Over [lo, hi] of t and of the plain array ref: the maximum, and the
 * last and first step above a limit a little under it (from x). */
static void
check_range(const ooc_timeline *t, const int64_t *ref, int32_t lo,
            int32_t hi, uint64_t *x)
{
  int64_t mx = INT64_MIN, lim;
  int32_t s, last = -1;

  for (s = lo; s <= hi; s++)
    mx = ref[s] > mx ? ref[s] : mx;
  ck_assert_int_eq(ooc_timeline_max(t, lo, hi), mx);
  lim = mx - lcg(x, 50);
  for (s = lo; s <= hi; s++)
    if (ref[s] > lim)
      last = s;
  ck_assert_int_eq(ooc_timeline_last_above(t, lo, hi, lim), last);
  for (s = hi; s >= lo; s--)
    if (ref[s] > lim)
      last = s;
  ck_assert_int_eq(ooc_timeline_first_above(t, lo, hi, lim), last);
}

START_TEST(test_timeline_matches_brute_force)
{
  /* 4,000 random range adds on 37 steps (not a power of two), each
   * followed by a range maximum, a last-above query and a point query,
   * against a plain array. */
  enum { N = 37 };
  int64_t ref[N], v[N];
  uint64_t x = 12345;
  ooc_timeline t;
  int it, s;

  ck_assert_int_eq(ooc_timeline_init(&t, N, &err), OOC_OK);
  memset(ref, 0, sizeof ref);
  for (it = 0; it < 4000; it++) {
    int32_t a = lcg(&x, N), b = lcg(&x, N), lo, hi, p;
    int64_t d = lcg(&x, 2001) - 1000;

    lo = a < b ? a : b;
    hi = a < b ? b : a;
    ooc_timeline_add(&t, lo, hi, d);
    for (s = lo; s <= hi; s++)
      ref[s] += d;
    a = lcg(&x, N);
    b = lcg(&x, N);
    lo = a < b ? a : b;
    hi = a < b ? b : a;
    check_range(&t, ref, lo, hi, &x);
    p = lcg(&x, N);
    ck_assert_int_eq(ooc_timeline_at(&t, p), ref[p]);
  }
  ooc_timeline_values(&t, v);
  for (s = 0; s < N; s++)
    ck_assert_int_eq(v[s], ref[s]);
  /* Empty ranges. */
  ck_assert_int_eq(ooc_timeline_max(&t, 5, 4), INT64_MIN);
  ck_assert_int_eq(ooc_timeline_last_above(&t, 5, 4, INT64_MIN), -1);
  ck_assert_int_eq(ooc_timeline_first_above(&t, 5, 4, INT64_MIN), -1);
  ooc_timeline_fini(&t);
}
END_TEST

START_TEST(test_timeline_set_values)
{
  /* 300 random range adds on a difference array (ooc_diff_add, ranges
   * reaching past both ends and empty ones among them, clamped as
   * ooc_timeline_add clamps), the tree built from its prefix sums
   * (ooc_timeline_set_values, over a tree that held other values), then
   * 2,000 tree adds and queries, all against a plain array. */
  enum { N = 37 };
  int64_t ref[N], v[N], d[N + 1], run;
  uint64_t x = 777;
  ooc_timeline t;
  int it, s;

  ck_assert_int_eq(ooc_timeline_init(&t, N, &err), OOC_OK);
  ooc_timeline_add(&t, 3, 30, 999);
  memset(ref, 0, sizeof ref);
  memset(d, 0, sizeof d);
  for (it = 0; it < 300; it++) {
    int32_t a = lcg(&x, N + 10) - 5, b = lcg(&x, N + 10) - 5;
    int64_t by = lcg(&x, 2001) - 1000;
    ooc_diff_add(d, N, a, b, by);
    for (s = a < 0 ? 0 : a; s <= b && s < N; s++)
      ref[s] += by;
  }
  for (s = 0, run = 0; s < N; s++)
    v[s] = run += d[s];
  ooc_timeline_set_values(&t, v);
  for (it = 0; it < 2000; it++) {
    int32_t a = lcg(&x, N), b = lcg(&x, N), lo, hi;
    int64_t by = lcg(&x, 2001) - 1000;
    lo = a < b ? a : b;
    hi = a < b ? b : a;
    check_range(&t, ref, lo, hi, &x);
    ck_assert_int_eq(ooc_timeline_at(&t, a), ref[a]);
    ooc_timeline_add(&t, lo, hi, by);
    for (s = lo; s <= hi; s++)
      ref[s] += by;
  }
  ooc_timeline_values(&t, v);
  for (s = 0; s < N; s++)
    ck_assert_int_eq(v[s], ref[s]);
  ooc_timeline_fini(&t);
}
END_TEST

START_TEST(test_segment_frontier_and_cost)
{
  /* Recompute times 10 x layer ns. Segment [2, 4] (fwd conv2, add, flat)
   * reads a1 (made by conv1 at step 0) and what it makes itself (a2, a3):
   * frontier {a1}, cost 30 + 40 + 50. [1, 1] (the in-place relu1) reads
   * a1 made before it. [5, 6] (fc, loss) reads a3: {a3}. The whole
   * forward [0, 6] needs the input batch only. Backward steps cost
   * nothing in a recompute: [5, 8] = fc + loss. */
  int64_t fwd[8], bwd[8], rec[8];
  ooc_costs c = { .n_layers = 8, .fwd_ns = fwd, .bwd_ns = bwd,
                  .recomp_ns = rec };
  ooc_plankit k;
  int32_t out[6], i;

  for (i = 0; i < 8; i++) {
    fwd[i] = 7 * i;        /* a recompute is priced by rec[], not fwd[] */
    rec[i] = 10 * i;
    bwd[i] = 1000;
  }
  ck_assert_int_eq(ooc_plankit_init(&k, lv, &c, &err), OOC_OK);
  ck_assert_int_eq(ooc_kit_frontier(&k, 2, 4, out), 1);
  ck_assert_int_eq(out[0], 1);
  ck_assert_int_eq(ooc_kit_recompute_ns(&k, 2, 4), 120);
  ck_assert_int_eq(ooc_kit_frontier(&k, 1, 1, out), 1);
  ck_assert_int_eq(out[0], 1);
  ck_assert_int_eq(ooc_kit_frontier(&k, 5, 6, out), 1);
  ck_assert_int_eq(out[0], 3);
  ck_assert_int_eq(ooc_kit_frontier(&k, 0, 6, out), 1);
  ck_assert_int_eq(out[0], 0);
  ck_assert_int_eq(ooc_kit_frontier(&k, 3, 3, out), 2);   /* add: a2, a1 */
  ck_assert_int_eq(out[0], 2);
  ck_assert_int_eq(out[1], 1);
  ck_assert_int_eq(ooc_kit_recompute_ns(&k, 5, 8), 130);
  ck_assert_int_eq(ooc_kit_recompute_ns(&k, 0, 14), 280);
  ck_assert_int_eq(ooc_kit_producer(lv, 3), 3);
  ck_assert_int_eq(ooc_kit_producer(lv, 0), -1);
  ooc_plankit_fini(&k);
}
END_TEST

/* Every act of the fixture can be rebuilt in backward (its in-place relu
 * rewrites conv1's output, which only the relu itself reads before); the
 * input batch never is. In inplace_read, a softmax (l2) reads l1 before a
 * dropout rewrites l1 in place: rebuilt in backward, l2 would be computed
 * from the dropout's output, so it is not recomputable; l1 (linear and
 * the dropout) and the matmul over the dropout's output are. */
START_TEST(test_recomputable)
{
  static const char *json =
    "{ \"name\": \"inplace_read\", \"input\": [8], \"layers\": ["
    "  { \"op\": \"embedding\", \"vocab\": 20, \"out\": 16,"
    "    \"name\": \"l0\" },"
    "  { \"op\": \"linear\", \"out\": 8, \"name\": \"l1\" },"
    "  { \"op\": \"softmax\", \"in\": \"l1\", \"name\": \"l2\" },"
    "  { \"op\": \"dropout\", \"in\": \"l1\", \"in_place\": true,"
    "    \"name\": \"l3\" },"
    "  { \"op\": \"matmul\", \"in\": [\"l3\", \"l3\"], \"name\": \"l4\" },"
    "  { \"op\": \"add\", \"in\": [\"l4\", \"l2\"], \"name\": \"l5\" },"
    "  { \"op\": \"softmax_ce\", \"name\": \"loss\" } ] }";
  static const char *json_view =
    "{ \"name\": \"view_read\", \"input\": [8], \"layers\": ["
    "  { \"op\": \"linear\", \"out\": 8, \"name\": \"l1\" },"
    "  { \"op\": \"relu\", \"in\": \"l1\", \"name\": \"r\" },"
    "  { \"op\": \"reshape\", \"in\": \"l1\", \"shape\": [2, 4],"
    "    \"name\": \"v\" },"
    "  { \"op\": \"flatten\", \"in\": \"v\", \"name\": \"f\" },"
    "  { \"op\": \"add\", \"in\": [\"r\", \"f\"], \"name\": \"a\" },"
    "  { \"op\": \"softmax_ce\", \"name\": \"loss\" } ] }";
  ooc_model_opts mo = { .batch = 2 };
  ooc_model *m2;
  ooc_liveness *lv2;
  int32_t a;

  ck_assert_int_eq(ooc_kit_recomputable(lv, 0), 0);
  for (a = 1; a < lv->n_acts; a++)
    ck_assert_msg(ooc_kit_recomputable(lv, a), "act %d", a);
  ck_assert_int_eq(ooc_model_load_string(json, "inplace_read.json", &mo,
                                         &m2, &err), OOC_OK);
  ck_assert_int_eq(ooc_liveness_alloc(m2, &lv2, &err), OOC_OK);
  ck_assert_int_eq(lv2->layer_act[4], lv2->layer_act[2]);  /* l3 in l1 */
  ck_assert_int_eq(ooc_kit_recomputable(lv2, lv2->layer_act[3]), 0);
  ck_assert_int_eq(ooc_kit_recomputable(lv2, lv2->layer_act[2]), 1);
  ck_assert_int_eq(ooc_kit_recomputable(lv2, lv2->layer_act[5]), 1);
  ck_assert_int_eq(ooc_kit_recomputable(lv2, lv2->layer_act[6]), 1);
  ooc_liveness_free(lv2);
  ooc_model_free(m2);
  /* A view rewrites nothing: relu(l1), then a reshape of l1, leaves the
   * relu recomputable. */
  ck_assert_int_eq(ooc_model_load_string(json_view, "view_read.json", &mo,
                                         &m2, &err), OOC_OK);
  ck_assert_int_eq(ooc_liveness_alloc(m2, &lv2, &err), OOC_OK);
  ck_assert_int_eq(lv2->layer_act[3], lv2->layer_act[1]);  /* v in l1 */
  ck_assert_int_eq(ooc_kit_recomputable(lv2, lv2->layer_act[2]), 1);
  ooc_liveness_free(lv2);
  ooc_model_free(m2);
}
END_TEST

START_TEST(test_footprints)
{
  /* Under the caching allocator every request rounds up to 512 B:
   * persistent = input 100 -> 512, three parameter tensors 30 -> 512. */
  ooc_planner_ctx ctx = { .model = &model, .live = lv,
                          .allocator = &ooc_alloc_caching,
                          .budget = 1 << 20 };

  ck_assert_uint_eq(ooc_kit_footprint(&ctx, 1000), 1024);
  ck_assert_uint_eq(ooc_kit_footprint(&ctx, 0), 0);
  ck_assert_uint_eq(ooc_kit_footprint(NULL, 1000), 1000);
  ck_assert_uint_eq(ooc_kit_persistent(&ctx, lv), 4 * 512);
  ck_assert_uint_eq(ooc_kit_persistent(NULL, lv), 190);
}
END_TEST

/* --- lowering ---------------------------------------------------------------- */

/* Hand-derived from the liveness above (prologue: params 0-2, input 3). */
static const char incore_expected[] =
  "A0 A1 A2 A3 | "
  "A4 A14 fwd1[3,4w,0,14w] F14 "           /* s0 */
  "fwd2[4w] "                          /* s1: relu1 in place */
  "A5 fwd3[4,5w,1] "                   /* s2 */
  "A6 fwd4[5,4,6w] F5 "                /* s3: conv2's output dies */
  "fwd5[6w] "                          /* s4 */
  "A7 fwd6[6,7w,2] "                   /* s5 */
  "A8 fwd7[7,8w] F7 "                  /* s6: fc's output dies */
  "A13 A12 bwd7[8,13w,12w] F8 F13 "    /* s7: loss seeds its gradient */
  "A11 bwd6[6,2w,12,11w] F6 F12 "      /* s8 */
  "bwd5[11w] "                         /* s9: flat, read+write merged */
  "A10 A9 bwd4[11,10w,9w] F11 "        /* s10 */
  "bwd3[4,1w,10,9w] F10 "              /* s11 */
  "bwd2[4,9w] F4 "                     /* s12 */
  "A15 bwd1[3,0w,9,15w] F15 F9 "           /* s13 */
  "update-1[0w,1w,2w]";                /* s14 */

START_TEST(test_lower_incore)
{
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_str_eq(render(&prog), incore_expected);
  ck_assert_int_eq(prog.prologue_end, 4);
  ck_assert_int_eq(prog.n_tensors, 16);
  ck_assert_uint_eq(prog.tensors[8].bytes, 44);
  ck_assert_int_eq(prog.tensors[9].kind, OOC_T_GRAD);
  ck_assert(prog.model_fingerprint == 0x1234abcdULL);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
}
END_TEST

/* Parameter offload: conv1 (layer 1, param tensor 0) and fc (6, tensor
 * 2) at OOC_PARAM_OFFLOAD, conv2 (3, tensor 1) at OOC_PARAM_STREAM. Each
 * gets a gradient and an optimizer-state tensor after the table (16-21,
 * in layer order); its param tensor holds the weights alone (10 bytes).
 * conv2's weights live on the host: copied in ahead of its forward (s2)
 * and of its backward (s11), each copy freed after its step; the others'
 * stay. Each backward allocates its gradient tensor, the D2H stream takes
 * it out and frees it, the host steps it, and after the device update
 * (which has no layer left) the resident weights come back. */
START_TEST(test_lower_offload)
{
  ooc_err e;

  layers[1].params = layers[3].params = layers[6].params = 10;
  ck_assert_int_eq(ooc_plan_set_param(&plan, 1, OOC_PARAM_OFFLOAD, &err), 0);
  ck_assert_int_eq(ooc_plan_set_param(&plan, 3, OOC_PARAM_STREAM, &err), 0);
  ck_assert_int_eq(ooc_plan_set_param(&plan, 6, OOC_PARAM_OFFLOAD, &err), 0);
  ck_assert_int_eq(plan.n_offloaded, 3);
  ck_assert_int_eq(ooc_plan_set_param(&plan, 2, OOC_PARAM_OFFLOAD, &e),
                   OOC_EINVAL);
  ck_assert_str_eq(e.msg, "plan: layer 2 has no parameters to place");
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_str_eq(render(&prog),
                   "A0 A2 A3 Ah0 Ah16 Ah17 Ah1 Ah18 Ah19 Ah2 Ah20 Ah21 | "
                   "A4 A14 fwd1[3,4w,0,14w] F14 "
                   "a1 >1 fwd2[4w] "                  /* conv2's copy in */
                   "A5 fwd3[4,5w,1]@17 F1 "          /* ... used, freed */
                   "A6 fwd4[5,4,6w] F5 fwd5[6w] A7 fwd6[6,7w,2] "
                   "A8 fwd7[7,8w] F7 A13 A12 bwd7[8,13w,12w] F8 F13 "
                   "A11 A20 bwd6[6,2,20w,12,11w] F6 F12 "
                   "<20@38 f20 cpu6[20,21w,2w]@41 "   /* fc's gradient out */
                   "bwd5[11w] a1@21 >1 "             /* after the last F1 */
                   "A10 A9 bwd4[11,10w,9w] F11 "
                   "A18 bwd3[4,1,18w,10,9w]@46 F10 F1 "
                   "<18@52 f18 cpu3[18,19w,1w]@55 bwd2[4,9w] F4 "
                   "A16 A15 bwd1[3,0,16w,9,15w] F15 F9 "
                   "<16@62 f16 cpu1[16,17w,0w]@65 "
                   "update-1[] >2@43 >0@67");   /* resident weights back */
  ck_assert_int_eq(prog.n_tensors, 22);
  ck_assert_uint_eq(prog.tensors[0].bytes, 10);
  ck_assert_int_eq(prog.tensors[16].kind, OOC_T_WGRAD);
  ck_assert_int_eq(prog.tensors[17].kind, OOC_T_OPTSTATE);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
  /* The host step must wait for its gradient's copy: without that wait
   * the validator names the race. */
  prog.instr[43].n_waits = 0;
  ck_assert_int_eq(ooc_program_validate(&prog, &e), OOC_EINVAL);
  ck_assert_str_eq(e.msg, "program: instruction 43 (HOST, layer 6, tensor "
                   "-1) reads the host copy of tensor 20 (layer 6), which "
                   "instruction 41 (D2H, layer 6, tensor 20) writes on "
                   "another stream, and no wait orders the two");
  /* A host step may not read a gradient whose host copy is being
   * written: in index order the rules see the copy in flight. */
  {
    ooc_sem sem;
    int32_t i;
    ooc_sem_init(&sem);
    ck_assert_int_eq(ooc_sem_reset(&sem, &prog), OOC_OK);
    for (i = 0; i < prog.prologue_end; i++)
      ck_assert_int_eq(ooc_sem_prologue(&sem, i, &e), OOC_OK);
    for (i = prog.prologue_end; i < 43; i++) {
      if (i == 42)
        continue;                    /* its FREE waits for the copy */
      ck_assert_int_eq(ooc_sem_begin(&sem, i, &e), OOC_OK);
      if (i != 41)
        ooc_sem_finish(&sem, i);     /* the D2H (41) has not completed */
    }
    ck_assert_int_eq(ooc_sem_begin(&sem, 43, &e), OOC_EINVAL);
    ck_assert_str_eq(e.msg, "instruction 43 (HOST, layer 6, tensor -1): "
                     "reads the host copy of tensor 20 (layer 6) while it "
                     "is still being copied out");
    ooc_sem_fini(&sem);
  }
}
END_TEST

START_TEST(test_lower_naive)
{
  plan.flags = OOC_PLAN_NO_FREE;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_str_eq(render(&prog),
                   "A0 A1 A2 A3 | "
                   "A4 A14 fwd1[3,4w,0,14w] F14 fwd2[4w] A5 fwd3[4,5w,1] "
                   "A6 fwd4[5,4,6w] fwd5[6w] A7 fwd6[6,7w,2] A8 fwd7[7,8w] "
                   "A13 A12 bwd7[8,13w,12w] A11 bwd6[6,2w,12,11w] bwd5[11w] "
                   "A10 A9 bwd4[11,10w,9w] bwd3[4,1w,10,9w] bwd2[4,9w] "
                   "A15 bwd1[3,0w,9,15w] F15 update-1[0w,1w,2w] "
                   "F4 F5 F6 F7 F8 F9 F10 F11 F12 F13");
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
}
END_TEST

START_TEST(test_lower_swap)
{
  /* a1 (t4) out after fwd add (s3), back in after bwd flat (s9), needed by
   * bwd conv2 (s11). Prologue gains its pinned host buffer (index 4). The
   * D2H (index 15) waits on fwd add's compute (13); its FREE follows on
   * the D2H stream (16); the ALLOC on the H2D stream (33) waits on bwd
   * flat (32) and on that FREE; bwd conv2 (39) waits on the H2D (34). */
  ooc_swap s = { .act = 1, .out_after = 3, .out_wait = -1, .in_after = 9,
                 .in_before = 11 };
  ck_assert_int_eq(ooc_plan_add_swap(&plan, &s), OOC_OK);
  ck_assert_int_eq(plan.action[1], OOC_SWAP);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_str_eq(render(&prog),
                   "A0 A1 A2 A3 Ah4 | "
                   "A4 A14 fwd1[3,4w,0,14w] F14 fwd2[4w] A5 fwd3[4,5w,1] "
                   "A6 fwd4[5,4,6w] F5 <4@13 f4 "
                   "fwd5[6w] A7 fwd6[6,7w,2] A8 fwd7[7,8w] F7 "
                   "A13 A12 bwd7[8,13w,12w] F8 F13 "
                   "A11 bwd6[6,2w,12,11w] F6 F12 bwd5[11w] a4@32,16 >4 "
                   "A10 A9 bwd4[11,10w,9w] F11 bwd3[4,1w,10,9w]@34 F10 "
                   "bwd2[4,9w] F4 A15 bwd1[3,0w,9,15w] F15 F9 "
                   "update-1[0w,1w,2w]");
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);

  /* in_after -1: the swap-in follows the swap-out at once; out_wait makes
   * fwd flat (s4) wait for the FREE after the D2H (16). With SYNC_LAYERS
   * fwd flat also waits for the last instruction on each copy stream (the
   * H2D, 18, and that FREE, 16); fwd fc has no new copy to wait for. */
  plan.swaps[0].in_after = -1;
  plan.swaps[0].out_wait = 4;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert(strstr(render(&prog), "F5 <4@13 f4 a4@16 >4 fwd5[6w]@16 ")
            != NULL);
  plan.flags = OOC_PLAN_SYNC_LAYERS;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert(strstr(render(&prog), "f4 a4@16 >4 fwd5[6w]@16,18,16 A7 "
                   "fwd6[6,7w,2] A8") != NULL);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
}
END_TEST

START_TEST(test_lower_swap_errors)
{
  /* bwd conv2 (s11) uses a1 while it is out until bwd relu1 (s12). */
  ooc_swap s = { .act = 1, .out_after = 3, .out_wait = -1, .in_after = 9,
                 .in_before = 12 };
  ck_assert_int_eq(ooc_plan_add_swap(&plan, &s), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "swap record 0 (act 'conv1'): the tensor is "
                   "used at step 'bwd conv2' between its swap-out after "
                   "'fwd add' and its swap-in before 'bwd relu1'");
  /* Swapped in after its last use (bwd relu1, 12). */
  plan.swaps[0].in_before = 13;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "swap record 0 (act 'conv1'): swapped in "
                   "before 'bwd conv1', after its last use 'bwd relu1'");
  plan.swaps[0].in_before = 11;
  plan.swaps[0].in_after = 11;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "swap record 0 (act 'conv1'): in_after 11 must "
                   "be -1 or in [out_after 3, in_before 11)");
  /* Two records of one act that overlap. */
  plan.swaps[0].in_after = 9;
  s.in_before = 11;
  s.out_after = 4;
  ck_assert_int_eq(ooc_plan_add_swap(&plan, &s), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "swap record 1 (act 'conv1'): not resident "
                   "when swapped out after 'fwd flat'");
}
END_TEST

/* Gradient swaps (ooc_swap.grad): a3's gradient is written by bwd fc (8),
 * used by bwd flat (9, its alias) and read last by bwd add (10). */
START_TEST(test_lower_grad_swap)
{
  ooc_swap s = { .act = 3, .out_after = 8, .out_wait = -1, .in_after = -1,
                 .in_before = 9, .grad = 1 };
  int32_t i, d2h = 0, h2d = 0, host = 0, c[3];

  ck_assert_int_eq(ooc_plan_add_swap(&plan, &s), OOC_OK);
  ooc_plan_counts(&plan, c);
  ck_assert_int_eq(c[OOC_SWAP], 0);
  ck_assert_int_eq(plan.action[3], OOC_KEEP);
  ck_assert_int_eq(ooc_plan_grad_swaps(&plan), 1);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  for (i = 0; i < prog.n_instr; i++) {
    const ooc_instr *in = &prog.instr[i];
    if (in->tensor != lv->grad_tensor[3])
      continue;
    d2h += in->kind == OOC_I_D2H;
    h2d += in->kind == OOC_I_H2D;
    host += in->kind == OOC_I_ALLOC && in->where == OOC_WHERE_HOST;
  }
  ck_assert_int_eq(d2h, 1);
  ck_assert_int_eq(h2d, 1);
  ck_assert_int_eq(host, 1);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
  ck_assert(ooc_liveness_step_uses_grad(lv, 9, 3));
  ck_assert(!ooc_liveness_step_uses_grad(lv, 11, 3));
  ck_assert(!ooc_liveness_step_uses_grad(lv, 3, 3));   /* a forward step */

  /* Used while out: bwd flat (9) between out after 8 and in before 10. */
  plan.swaps[0].in_before = 10;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "the gradient of act 'add' is not resident "
                   "at 'bwd flat' (swapped out without a swap-in before "
                   "it)");
  /* Before it is written. */
  plan.swaps[0].out_after = 7;
  plan.swaps[0].in_before = 8;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "swap record 0 (gradient of 'add'): swapped "
                   "out after 'bwd loss', outside its life (written first "
                   "at 'bwd fc', last used at 'bwd add')");
  /* Back after its last use. */
  plan.swaps[0].out_after = 8;
  plan.swaps[0].in_before = 11;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "swap record 0 (gradient of 'add'): swapped "
                   "in before 'bwd conv2', after its last use 'bwd add'");
  /* The input has no gradient. */
  plan.swaps[0].act = 0;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "swap record 0 (gradient of 'input'): the act "
                   "has no gradient");
}
END_TEST

START_TEST(test_lower_recompute)
{
  /* Drop a3 (add+flat, t6) after fwd fc (s5) and recompute it before bwd
   * fc (s8): add and flat run again (RECOMP). add reads conv2's output
   * (t5), whose life is extended from s3 to s8, and relu1's (t4). */
  ooc_recompute r = { .act = 3, .free_after = 5, .before = 8 };
  ck_assert_int_eq(ooc_plan_add_recompute(&plan, &r), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_str_eq(render(&prog),
                   "A0 A1 A2 A3 | "
                   "A4 A14 fwd1[3,4w,0,14w] F14 fwd2[4w] A5 fwd3[4,5w,1] "
                   "A6 fwd4[5,4,6w] fwd5[6w] A7 fwd6[6,7w,2] F6 "
                   "A8 fwd7[7,8w] F7 A13 A12 bwd7[8,13w,12w] F8 F13 "
                   "A6 recomp4[5,4,6w] recomp5[6w] "
                   "A11 bwd6[6,2w,12,11w] F5 F6 F12 bwd5[11w] "
                   "A10 A9 bwd4[11,10w,9w] F11 bwd3[4,1w,10,9w] F10 "
                   "bwd2[4,9w] F4 A15 bwd1[3,0w,9,15w] F15 F9 "
                   "update-1[0w,1w,2w]");
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
  {
    int counts[3];
    ooc_plan_counts(&plan, counts);
    ck_assert_int_eq(counts[OOC_KEEP], 4);
    ck_assert_int_eq(counts[OOC_RECOMPUTE], 1);
  }
}
END_TEST

/* A layer the model marks "recompute" (the framework drops and rebuilds
 * it): lowering an all-keep plan adds the recompute the plan would have
 * written itself. add (a3) forced gives test_lower_recompute's program:
 * dropped after its last forward use (fwd fc, s5), rebuilt before its
 * first backward use (bwd fc, s8). With conv2 (a2) forced too, conv2's
 * output, which no backward reads, is rebuilt as a transient before add's
 * recompute reads it, at the same step and first. A plan that swaps a
 * forced act keeps its swap. */
START_TEST(test_lower_forced_recompute)
{
  char want[8192];
  int32_t i, rc2 = -1, rc4 = -1, bwd_fc = -1;

  {
    ooc_recompute r = { .act = 3, .free_after = 5, .before = 8 };
    ck_assert_int_eq(ooc_plan_add_recompute(&plan, &r), OOC_OK);
    ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
    snprintf(want, sizeof want, "%s", render(&prog));
  }
  ooc_plan_fini(&plan);
  ooc_liveness_free(lv);
  layers[4].recompute = 1;
  ck_assert_int_eq(ooc_liveness_alloc(&model, &lv, &err), OOC_OK);
  ck_assert_int_eq(lv->n_forced, 1);
  ck_assert_int_eq(lv->act_forced[3], 1);
  ck_assert_int_eq(ooc_plan_init(&plan, lv, &err), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_str_eq(render(&prog), want);
  ck_assert_int_eq(plan.n_recomps, 0);       /* the plan is untouched */
  ck_assert_int_eq(plan.action[3], OOC_KEEP);

  ooc_plan_fini(&plan);
  ooc_liveness_free(lv);
  layers[3].recompute = 1;
  ck_assert_int_eq(ooc_liveness_alloc(&model, &lv, &err), OOC_OK);
  ck_assert_int_eq(lv->n_forced, 2);
  ck_assert_int_eq(ooc_plan_init(&plan, lv, &err), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
  for (i = prog.prologue_end; i < prog.n_instr; i++) {
    const ooc_instr *in = &prog.instr[i];
    if (in->kind != OOC_I_COMPUTE)
      continue;
    if (in->phase == OOC_PH_RECOMP && in->layer == 3)
      rc2 = i;
    if (in->phase == OOC_PH_RECOMP && in->layer == 4)
      rc4 = i;
    if (in->phase == OOC_PH_BWD && in->layer == 6)
      bwd_fc = i;
  }
  ck_assert_int_ge(rc2, 0);
  ck_assert_int_lt(rc2, rc4);
  ck_assert_int_lt(rc4, bwd_fc);

  /* The plan swaps relu1's output (a1), which add's rebuild before bwd fc
   * (s8) reads, out after fwd add (s3) and back before bwd conv2 (s11):
   * a1 is away at s8, so add stays (and so conv2's output, which only
   * add's rebuild would have read). */
  {
    ooc_swap w = { .act = 1, .out_after = 3, .out_wait = -1,
                   .in_after = -1, .in_before = 11 };
    ck_assert_int_eq(ooc_plan_add_swap(&plan, &w), OOC_OK);
    ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
    ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
    for (i = prog.prologue_end; i < prog.n_instr; i++)
      ck_assert(!(prog.instr[i].kind == OOC_I_COMPUTE &&
                  prog.instr[i].phase == OOC_PH_RECOMP));
    ooc_plan_reset(&plan);
  }

  /* The plan swaps add's output: no recompute of it. */
  {
    ooc_swap w = { .act = 3, .out_after = 5, .out_wait = -1,
                   .in_after = -1, .in_before = 8 };
    ck_assert_int_eq(ooc_plan_add_swap(&plan, &w), OOC_OK);
    ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
    ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
    for (i = prog.prologue_end; i < prog.n_instr; i++)
      ck_assert(!(prog.instr[i].kind == OOC_I_COMPUTE &&
                  prog.instr[i].phase == OOC_PH_RECOMP));
  }
  layers[3].recompute = layers[4].recompute = 0;
}
END_TEST

START_TEST(test_lower_recompute_errors)
{
  ooc_recompute r = { .act = 0, .free_after = 0, .before = 12 };
  ck_assert_int_eq(ooc_plan_add_recompute(&plan, &r), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "recompute record 0: the input batch cannot be "
                   "recomputed");
  /* add's output (a3) is last read by bwd fc (8). */
  plan.recomps[0] = (ooc_recompute){ .act = 3, .free_after = 5, .before = 9 };
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "recompute record 0 (act 'add'): recomputed "
                   "before 'bwd flat', after its last use 'bwd fc'");
  /* Dropped after fwd relu1 but conv2 reads it at fwd conv2 (2). */
  plan.recomps[0] = (ooc_recompute){ .act = 1, .free_after = 1, .before = 11 };
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "recompute record 0 (act 'conv1'): the tensor "
                   "is used at step 'fwd conv2' after it is dropped (after "
                   "'fwd relu1') and before it is recomputed (before "
                   "'bwd conv2')");
}
END_TEST

/* conv2's output (a2, tensor 5) is read by fwd add (3) and by nothing in
 * backward: recomputed before bwd add (10) it is a transient, rebuilt
 * there (conv2's kernel, phase RECOMP, reading a1, alive to 12) and freed
 * after that step instead of at its last use. */
START_TEST(test_lower_recompute_transient)
{
  ooc_recompute r = { .act = 2, .free_after = 3, .before = 10 };
  int32_t i, rc_at = -1, free_at = -1, comp_bwd_add = -1;

  ck_assert_int_eq(ooc_plan_add_recompute(&plan, &r), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
  for (i = prog.prologue_end; i < prog.n_instr; i++) {
    const ooc_instr *in = &prog.instr[i];
    if (in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_RECOMP &&
        in->layer == 3)
      rc_at = i;
    if (in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_BWD &&
        in->layer == 4)
      comp_bwd_add = i;
    if (in->kind == OOC_I_FREE && in->tensor == 5)
      free_at = i;      /* the last FREE of a2 */
  }
  ck_assert_int_ge(rc_at, 0);
  ck_assert_int_lt(rc_at, comp_bwd_add);
  ck_assert_int_gt(free_at, comp_bwd_add);
}
END_TEST

/* An activation may be dropped and recomputed more than once (a nested
 * recompute: rebuilt for one backward step, dropped again, rebuilt for a
 * later one): a1 (conv1 + relu1, read by bwd conv2 at 11 and bwd relu1 at
 * 12) dropped after fwd add (3), recomputed before 11, dropped after 11
 * and recomputed before 12: conv1 and relu1 run twice in phase RECOMP. */
START_TEST(test_lower_recompute_twice)
{
  ooc_recompute r1 = { .act = 1, .free_after = 3, .before = 11 };
  ooc_recompute r2 = { .act = 1, .free_after = 11, .before = 12 };
  int32_t i, n1 = 0, n2 = 0;

  ck_assert_int_eq(ooc_plan_add_recompute(&plan, &r1), OOC_OK);
  ck_assert_int_eq(ooc_plan_add_recompute(&plan, &r2), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
  for (i = prog.prologue_end; i < prog.n_instr; i++) {
    const ooc_instr *in = &prog.instr[i];
    if (in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_RECOMP) {
      n1 += in->layer == 1;
      n2 += in->layer == 2;
    }
  }
  ck_assert_int_eq(n1, 2);
  ck_assert_int_eq(n2, 2);
}
END_TEST

/* A batch of recomputes holds one link of a chain at a time: add's output
 * a3 (read by bwd fc, 8) dropped after fwd fc (5) and rebuilt before bwd
 * fc; its add reads a2 (conv2's output, no backward use), rebuilt there as
 * a transient and freed right after the add's recompute, before bwd fc
 * runs, since nothing else at that step reads it. */
START_TEST(test_lower_recompute_batch_frees)
{
  ooc_recompute r2 = { .act = 2, .free_after = 3, .before = 8 };
  ooc_recompute r3 = { .act = 3, .free_after = 5, .before = 8 };
  int32_t i, rc_add = -1, free_a2 = -1, bwd_fc = -1;

  ck_assert_int_eq(ooc_plan_add_recompute(&plan, &r2), OOC_OK);
  ck_assert_int_eq(ooc_plan_add_recompute(&plan, &r3), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
  for (i = prog.prologue_end; i < prog.n_instr; i++) {
    const ooc_instr *in = &prog.instr[i];
    if (in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_RECOMP &&
        in->layer == 4)
      rc_add = i;
    if (in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_BWD &&
        in->layer == 6)
      bwd_fc = i;
    if (in->kind == OOC_I_FREE && in->tensor == 5)
      free_a2 = i;
  }
  ck_assert_int_ge(rc_add, 0);
  ck_assert_int_gt(free_a2, rc_add);
  ck_assert_int_lt(free_a2, bwd_fc);
}
END_TEST

START_TEST(test_lower_reuses_capacity)
{
  ooc_swap s = { .act = 1, .out_after = 3, .out_wait = -1, .in_after = 9,
                 .in_before = 11 };
  ooc_instr *before;
  ck_assert_int_eq(ooc_plan_add_swap(&plan, &s), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  before = prog.instr;
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  ck_assert_ptr_eq(prog.instr, before);
  {
    ooc_plan cp = { 0 };
    ooc_program p2;
    plan.flags = OOC_PLAN_SYNC_LAYERS;
    ck_assert_int_eq(ooc_plan_copy(&cp, &plan), OOC_OK);
    ck_assert_int_eq(cp.n_swaps, 1);
    ck_assert_int_eq(cp.action[1], OOC_SWAP);
    ooc_program_init(&p2);
    ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
    ck_assert_int_eq(ooc_plan_lower(&cp, lv, &p2, &err), OOC_OK);
    ck_assert(ooc_program_equal(&prog, &p2));
    ooc_program_fini(&p2);
    ooc_plan_fini(&cp);
  }
  ooc_plan_reset(&plan);
  ck_assert_int_eq(plan.n_swaps, 0);
  ck_assert_int_eq(plan.action[1], OOC_KEEP);
  ck_assert_uint_eq(plan.flags, 0);
}
END_TEST

/* --- planner front end -------------------------------------------------------- */

static int
test_plan_fn(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
             ooc_err *e)
{
  int64_t v = 0;
  uint64_t sz = 0;
  int rc = ooc_planner_opt_int(ctx, "alpha", &v, e);
  if (rc < 0)
    return rc;
  rc = ooc_planner_opt_size(ctx, "beta", &sz, e);
  if (rc < 0)
    return rc;
  snprintf(pl->note, sizeof pl->note, "alpha=%lld beta=%llu",
           (long long)v, (unsigned long long)sz);
  return OOC_OK;
}

static const char *const test_opts[] = { "alpha", "beta", NULL };
static const ooc_planner_type test_planner = {
  .name = "test", .summary = "test", .cite = "-", .state_size = 16,
  .options = test_opts, .plan = test_plan_fn,
};

START_TEST(test_planner_front_end)
{
  ooc_kv kv[2] = { { "alpha", "7" }, { "beta", "1KiB" } };
  ooc_planner_ctx ctx = { .model = &model, .live = lv, .budget = 1 << 20,
                          .opts = kv, .n_opts = 2 };
  const ooc_planner_type *t;
  ooc_program direct;

  ck_assert_ptr_null(ooc_planner_find("nope", &err));
  ck_assert_int_eq(err.code, OOC_ENOTFOUND);
  ck_assert(strncmp(err.msg, "unknown planner 'nope' (valid: incore, naive",
                    44) == 0);
  t = ooc_planner_find("incore", &err);
  ck_assert_ptr_nonnull(t);
  ck_assert_str_eq(t->name, "incore");

  ck_assert_int_eq(ooc_planner_run(&test_planner, &ctx, &plan, &prog, &err),
                   OOC_OK);
  ck_assert_str_eq(plan.note, "alpha=7 beta=1024");
  ck_assert_uint_eq(plan.sched_budget, 1 << 20);

  kv[1] = (ooc_kv){ "gamma", "1" };
  ck_assert_int_eq(ooc_planner_run(&test_planner, &ctx, &plan, &prog, &err),
                   OOC_EINVAL);
  ck_assert_str_eq(err.msg, "planner 'test': unknown option 'gamma' "
                   "(valid: alpha, beta)");
  kv[1] = (ooc_kv){ "alpha", "1" };
  ck_assert_int_eq(ooc_planner_run(&test_planner, &ctx, &plan, &prog, &err),
                   OOC_EINVAL);
  ck_assert_str_eq(err.msg, "planner 'test': option 'alpha' given twice");
  kv[0] = (ooc_kv){ "alpha", "x7" };
  ctx.n_opts = 1;
  ck_assert_int_eq(ooc_planner_run(&test_planner, &ctx, &plan, &prog, &err),
                   OOC_EINVAL);
  ck_assert_str_eq(err.msg, "planner 'test': --opt alpha: 'x7' is not an "
                   "integer");
  ck_assert_int_eq(ooc_planner_run(t, &ctx, &plan, &prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "planner 'incore': unknown option 'alpha' (it "
                   "takes no options)");

  /* incore through the front end = the direct lowering of an empty plan. */
  ctx.n_opts = 0;
  ck_assert_int_eq(ooc_planner_run(t, &ctx, &plan, &prog, &err), OOC_OK);
  ck_assert_str_eq(render(&prog), incore_expected);
  ooc_program_init(&direct);
  ooc_plan_reset(&plan);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &direct, &err), OOC_OK);
  ck_assert(ooc_program_equal(&prog, &direct));
  ooc_program_fini(&direct);

  ctx.budget = 3000;
  ck_assert_int_eq(ooc_planner_run(t, &ctx, &plan, &prog, &err), OOC_EOOM);
  ck_assert_int_eq(err.code, OOC_EOOM);
  ck_assert_str_eq(err.msg, "budget 2.93 KiB is below the working set of "
                   "step 'fwd add' (persistent 190 B + 2.93 KiB)");
  t = ooc_planner_find("naive", &err);
  ctx.budget = 1 << 20;
  ck_assert_int_eq(ooc_planner_run(t, &ctx, &plan, &prog, &err), OOC_OK);
  ck_assert_uint_eq(plan.flags, OOC_PLAN_NO_FREE);
}
END_TEST

/* --- plan.json ------------------------------------------------------------------ */

static ooc_kv sets[1] = { { "depth", "50" } };
static ooc_hw_override hwsets[1] = {
  { .key = "link.h2d_GBps", .value = "32" }
};
static ooc_kv opts[1] = { { "window", "1GiB" } };

/* The lowered swap plan written as plan.json into a heap string. */
static char *
write_plan(size_t *len)
{
  ooc_swap s = { .act = 1, .out_after = 3, .out_wait = 4, .in_after = 9,
                 .in_before = 11 };
  ooc_plan_file pf = {
    .model = "toy", .model_path = "models/toy.json", .batch = 1,
    .dtype = OOC_FP16, .optimizer = OOC_OPT_ADAM, .sets = sets, .n_sets = 1,
    .hw = "v100-nvlink2", .hw_sets = hwsets, .n_hw_sets = 1,
    .planner = "window", .opts = opts, .n_opts = 1, .allocator = "va",
    .budget_bytes = 17179869184ull, .note = "a \"quoted\" note\n",
  };
  char *buf = NULL;
  FILE *f;

  ck_assert_int_eq(ooc_plan_add_swap(&plan, &s), OOC_OK);
  ck_assert_int_eq(ooc_plan_lower(&plan, lv, &prog, &err), OOC_OK);
  pf.program = prog;
  f = open_memstream(&buf, len);
  ck_assert_int_eq(ooc_plan_file_write(f, &pf, &err), OOC_OK);
  fclose(f);
  return buf;
}

START_TEST(test_plan_file_round_trip)
{
  size_t len;
  char *text = write_plan(&len);
  ooc_plan_file rd;

  ck_assert_int_eq(ooc_plan_file_read_string(text, len, "p.json", &rd, &err),
                   OOC_OK);
  ck_assert(ooc_program_equal(&rd.program, &prog));
  ck_assert_str_eq(rd.model, "toy");
  ck_assert_str_eq(rd.model_path, "models/toy.json");
  ck_assert_int_eq(rd.batch, 1);
  ck_assert_int_eq(rd.dtype, OOC_FP16);
  ck_assert_int_eq(rd.optimizer, OOC_OPT_ADAM);
  ck_assert_int_eq(rd.n_sets, 1);
  ck_assert_str_eq(rd.sets[0].key, "depth");
  ck_assert_str_eq(rd.sets[0].value, "50");
  ck_assert_str_eq(rd.hw_sets[0].key, "link.h2d_GBps");
  ck_assert_str_eq(rd.opts[0].value, "1GiB");
  ck_assert_str_eq(rd.planner, "window");
  ck_assert_str_eq(rd.allocator, "va");
  ck_assert_uint_eq(rd.budget_bytes, 17179869184ull);
  ck_assert_str_eq(rd.note, "a \"quoted\" note\n");
  ck_assert_str_eq(rd.path, "p.json");
  ck_assert_int_eq(ooc_plan_file_check_model(&rd, &model, &err), OOC_OK);
  model.fingerprint = 0x99;
  ck_assert_int_eq(ooc_plan_file_check_model(&rd, &model, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "p.json: plan was made for a different model "
                   "(fingerprint 000000001234abcd, 8 layers; 'toy' at batch "
                   "1 has 0000000000000099, 8 layers)");
  ooc_plan_file_fini(&rd);
  ooc_plan_file_fini(&rd);
  free(text);
}
END_TEST

/* Replace the first occurrence of `from` in text by `to` (new heap text). */
static char *
edit(const char *text, const char *from, const char *to)
{
  const char *p = strstr(text, from);
  size_t a, n;
  char *out;

  ck_assert_ptr_nonnull(p);
  a = (size_t)(p - text);
  n = strlen(text) - strlen(from) + strlen(to);
  out = malloc(n + 1);
  memcpy(out, text, a);
  memcpy(out + a, to, strlen(to));
  strcpy(out + a + strlen(to), p + strlen(from));
  return out;
}

static void
expect_bad(const char *text, int code, const char *msg)
{
  ooc_plan_file rd;

  ck_assert_int_eq(ooc_plan_file_read_string(text, strlen(text), "p.json",
                                             &rd, &err), code);
  ck_assert_str_eq(err.msg, msg);
  ck_assert_ptr_null(rd.store);
}

/* expect_bad on text with `from` replaced by `to` (edit). */
static void
bad_edit(const char *text, const char *from, const char *to, int code,
         const char *msg)
{
  char *t = edit(text, from, to);

  expect_bad(t, code, msg);
  free(t);
}

START_TEST(test_plan_file_errors)
{
  size_t len;
  char *text = write_plan(&len), *t;

  /* Truncated in the middle of the program. */
  t = strdup(text);
  t[len / 2] = '\0';
  {
    ooc_plan_file rd;
    ck_assert_int_eq(ooc_plan_file_read_string(t, strlen(t), "p.json", &rd,
                                               &err), OOC_EPARSE);
    ck_assert(strstr(err.msg, "p.json: not a complete JSON text: it ends "
                     "early at line ") == err.msg);
    ck_assert(strstr(err.msg, "(truncated file?)") != NULL);
  }
  free(t);
  expect_bad("", OOC_EPARSE, "p.json: not a complete JSON text: it ends "
             "early at line 1 (truncated file?)");
  expect_bad("{\"format\": oops}", OOC_EPARSE,
             "p.json: invalid JSON at line 1, column 12 (corrupt file?)");
  expect_bad("[1, 2]", OOC_EPARSE,
             "p.json: not a plan file (the top level must be an object)");
  expect_bad("{\"format\": \"other\"}", OOC_EPARSE,
             "p.json: not a plan file (field 'format' must be "
             "\"oocsim-plan\")");
  bad_edit(text, "\"version\": 2", "\"version\": 3",
           OOC_EPARSE, "p.json: version: plan format version 3 is not "
           "supported (this oocsim reads version 2)");
  bad_edit(text, "\"version\": 2", "\"version\": 1",
           OOC_EPARSE, "p.json: version: plan format version 1 "
           "predates kernel algorithms and out-of-memory ALLOCs (this "
           "oocsim reads version 2): write the plan again with 'oocsim "
           "plan'");
  bad_edit(text, "\"batch\":1", "\"batch\":\"1\"",
           OOC_EPARSE, "p.json: scenario.batch: must be an integer");
  /* Beyond 2^53 (and int64_t): an integer out of range, rejected before
   * any conversion. */
  bad_edit(text, "\"batch\":1", "\"batch\":1e300",
           OOC_EINVAL, "p.json: scenario.batch: 1e+300 is out of "
           "range [1, 9007199254740991]");
  bad_edit(text, "\"batch\":1", "\"batch\":1e999",
           OOC_EINVAL, "p.json: scenario.batch: a number beyond "
           "1e308 is out of range [1, 9007199254740991]");
  bad_edit(text, "\"batch\":1", "\"batch\":4611686018427387904",
           OOC_EINVAL, "p.json: scenario.batch: a number past 2^53 - 1 "
           "(read as 4611686018427387904) is out of range "
           "[1, 9007199254740991]");
  /* 2^53 + 1 reads as 2^53: refused, not taken as a number it is not. */
  bad_edit(text, "\"batch\":1", "\"batch\":9007199254740993",
           OOC_EINVAL, "p.json: scenario.batch: a number past 2^53 - 1 "
           "(read as 9007199254740992) is out of range "
           "[1, 9007199254740991]");
  bad_edit(text, "\"dtype\":\"fp16\"", "\"dtype\":\"fp64\"",
           OOC_EINVAL, "p.json: scenario.dtype: unknown value 'fp64' "
           "(valid: fp32, fp16, bf16)");
  bad_edit(text, "\"model_fingerprint\": \"000000001234abcd\"",
           "\"model_fingerprint\": \"xyz\"",
           OOC_EPARSE, "p.json: model_fingerprint: must be a string of "
           "1 to 16 hex digits");
  /* Keys the format does not have: a typo or a hand edit, named. */
  bad_edit(text, "\"batch\":1", "\"batch\":1,\"colour\":\"red\"",
           OOC_EPARSE, "p.json: scenario.colour: unknown key (valid: "
           "model, model_path, batch, dtype, precision, optimizer, set, "
           "hw, hw_set, planner, opts, allocator, budget_bytes, "
           "iterations, steady, note)");
  /* How the plan was simulated: iterations 1 to 1000, steady a bool. */
  bad_edit(text, "\"batch\":1", "\"batch\":1,\"iterations\":0",
           OOC_EINVAL, "p.json: scenario.iterations: 0 is out of range "
           "[1, 1000]");
  bad_edit(text, "\"batch\":1", "\"batch\":1,\"steady\":\"yes\"",
           OOC_EPARSE, "p.json: scenario.steady: must be true or false");
  bad_edit(text, "\"version\": 2", "\"version\": 2, \"extra\": 1",
           OOC_EPARSE, "p.json: extra: unknown key (valid: format, "
           "version, scenario, model_fingerprint, n_layers, prologue_end, "
           "tensors, program)");
  /* More layers than any model has: refused before anything is sized by
   * it. */
  bad_edit(text, "\"n_layers\": 8", "\"n_layers\": 2000000000",
           OOC_EINVAL, "p.json: n_layers: 2000000000 is out of range "
           "[1, 1048576]");
  /* Instruction 5 (the first timed one, ALLOC t4) on a stream 7. */
  bad_edit(text, "[\"alloc\",0,\"none\",\"device\",1,4,[],[]]",
           "[\"alloc\",7,\"none\",\"device\",1,4,[],[]]",
           OOC_EINVAL, "p.json: program[5] stream: 7 is out of range "
           "[0, 3]");
  bad_edit(text, "[\"alloc\",0,\"none\",\"device\",1,4,[],[]]",
           "[\"alloc\",0,\"none\",\"device\",1,4,[],[9]]",
           OOC_EINVAL, "p.json: program[5] waits: 9 is out of range "
           "[0, 4]");
  bad_edit(text, "[\"alloc\",0,\"none\",\"device\",1,4,[],[]]",
           "[\"alloc\",0,\"none\",\"device\",1,4,[]]",
           OOC_EPARSE, "p.json: program[5]: must be [kind, stream, "
           "phase, where, layer, tensor, [args], [waits] (, algorithm)]");
  /* A FREE turned into an ALLOC: the structure is fine, pairing is not. */
  bad_edit(text, "[\"free\",0,\"none\",\"device\",1,14,[],[]]",
           "[\"alloc\",0,\"none\",\"device\",1,14,[],[]]",
           OOC_EINVAL, "p.json: program: instruction 8 (ALLOC, layer "
           "1, tensor 14): allocates tensor 14 (layer 1) which is already "
           "live");
  free(text);
}
END_TEST

static Suite *
plan_suite(void)
{
  Suite *s = suite_create("plan");
  TCase *tc = tcase_create("liveness");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_schedule);
  tcase_add_test(tc, test_acts_and_uses);
  tcase_add_test(tc, test_grads);
  tcase_add_test(tc, test_grads_need_a_parameter);
  tcase_add_test(tc, test_step_bytes);
  tcase_add_test(tc, test_saved_state);
  tcase_add_test(tc, test_budget_check);
  suite_add_tcase(s, tc);

  tc = tcase_create("toolkit");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_first_last_uses);
  tcase_add_test(tc, test_memory_timeline);
  tcase_add_test(tc, test_timeline_matches_brute_force);
  tcase_add_test(tc, test_timeline_set_values);
  tcase_add_test(tc, test_segment_frontier_and_cost);
  tcase_add_test(tc, test_recomputable);
  tcase_add_test(tc, test_footprints);
  suite_add_tcase(s, tc);

  tc = tcase_create("lower");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_lower_incore);
  tcase_add_test(tc, test_lower_offload);
  tcase_add_test(tc, test_lower_naive);
  tcase_add_test(tc, test_lower_swap);
  tcase_add_test(tc, test_lower_swap_errors);
  tcase_add_test(tc, test_lower_grad_swap);
  tcase_add_test(tc, test_lower_recompute);
  tcase_add_test(tc, test_lower_recompute_errors);
  tcase_add_test(tc, test_lower_forced_recompute);
  tcase_add_test(tc, test_lower_recompute_transient);
  tcase_add_test(tc, test_lower_recompute_twice);
  tcase_add_test(tc, test_lower_recompute_batch_frees);
  tcase_add_test(tc, test_lower_reuses_capacity);
  suite_add_tcase(s, tc);

  tc = tcase_create("planner");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_planner_front_end);
  suite_add_tcase(s, tc);

  tc = tcase_create("plan_file");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_plan_file_round_trip);
  tcase_add_test(tc, test_plan_file_errors);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(plan_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
