/* tests/check_trace.c — reading a trace (report/timeline.h) and writing it
 * (report/trace_out.h).
 *
 * Test case "timeline": for every registered planner on scenarios that
 * stall, the compute stream's stall spans add up per cause (swap-in,
 * swap-out, other) to the summary's stall_s to the nanosecond, never
 * overlap a compute-stream span, and every swap pair links a D2H to a
 * later H2D of the same tensor.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scenario.h"
#include "planners/registry.h"
#include "report/timeline.h"

/* One traced run; the caller frees with run_fini. */
struct run {
  ooc_summary s;
  ooc_program prog;
  ooc_trace tr;
  ooc_model *m;
};

static void
run_scenario(struct run *r, const char *model, int64_t batch, const char *hw,
             const char *planner)
{
  ooc_scenario_spec spec = { .model = model, .batch = batch, .hw = hw,
                             .planner = planner };
  ooc_scenario_out out = { .program = &r->prog, .trace = &r->tr,
                           .model = &r->m };
  ooc_err err = { 0 };

  r->m = NULL;
  ooc_program_init(&r->prog);
  ooc_trace_init(&r->tr);
  ck_assert_msg(ooc_scenario_run(&spec, &r->s, &out, &err) == 0, "%s %s: %s",
                model, planner, err.msg);
}

static void
run_fini(struct run *r)
{
  ooc_summary_fini(&r->s);
  ooc_model_free(r->m);
  ooc_trace_fini(&r->tr);
  ooc_program_fini(&r->prog);
}

/* Stall totals per cause against the summary, for one scenario. Returns
 * the total stall in ns. */
static int64_t
check_stalls(const char *model, int64_t batch, const char *hw,
             const char *planner)
{
  struct run r;
  ooc_stall_span *st = NULL;
  int32_t n = 0;
  int64_t sum[OOC_STALL_COUNT] = { 0 }, total = 0;

  run_scenario(&r, model, batch, hw, planner);
  if (!r.s.feasible) {
    run_fini(&r);
    return 0;
  }
  ck_assert_int_eq(ooc_timeline_stalls(&r.prog, &r.tr, &st, &n), OOC_OK);
  for (int32_t i = 0; i < n; i++) {
    ck_assert_msg(st[i].start_ns < st[i].end_ns, "empty stall span");
    ck_assert(st[i].cause >= 0 && st[i].cause < OOC_STALL_COUNT);
    ck_assert(i == 0 || st[i].start_ns >= st[i - 1].end_ns);
    sum[st[i].cause] += st[i].end_ns - st[i].start_ns;
    /* No compute-stream span overlaps a stall. */
    for (int32_t k = 0; k < r.tr.n_spans; k++) {
      const ooc_span *sp = &r.tr.spans[k];
      if (r.prog.instr[sp->instr].stream != OOC_STREAM_COMPUTE)
        continue;
      ck_assert_msg(sp->end_ns <= st[i].start_ns ||
                    sp->start_ns >= st[i].end_ns,
                    "%s: stall [%lld, %lld) overlaps instruction %d", planner,
                    (long long)st[i].start_ns, (long long)st[i].end_ns,
                    (int)sp->instr);
    }
  }
  for (int c = 0; c < OOC_STALL_COUNT; c++) {
    ck_assert_msg(sum[c] == llround(r.s.stall_s[c] * 1e9),
                  "%s %s b%lld: %s stalls %lld ns in spans, summary %.9f s",
                  model, planner, (long long)batch,
                  ooc_timeline_cause_label((ooc_stall)c), (long long)sum[c],
                  r.s.stall_s[c]);
    total += sum[c];
  }
  free(st);
  run_fini(&r);
  return total;
}

START_TEST(stalls_match_summary)
{
  int64_t any = 0;

  for (int i = 0; ooc_planner_types[i] != NULL; i++) {
    any += check_stalls("resnet50", 256, "v100-pcie3",
                        ooc_planner_types[i]->name);
    any += check_stalls("vgg16", 128, "k40-pcie3",
                        ooc_planner_types[i]->name);
  }
  ck_assert_int_gt(any, 0);
}
END_TEST

START_TEST(swap_pairs)
{
  struct run r;
  ooc_swap_pair *sw = NULL;
  int32_t n = 0;

  run_scenario(&r, "resnet50", 256, "v100-pcie3", "vdnn");
  ck_assert_int_eq(ooc_timeline_swaps(&r.prog, &r.tr, &sw, &n), OOC_OK);
  ck_assert_int_gt(n, 0);
  for (int32_t i = 0; i < n; i++) {
    const ooc_span *o = &r.tr.spans[sw[i].out_span];
    const ooc_span *in = &r.tr.spans[sw[i].in_span];
    ck_assert_int_eq(r.prog.instr[o->instr].kind, OOC_I_D2H);
    ck_assert_int_eq(r.prog.instr[in->instr].kind, OOC_I_H2D);
    ck_assert_int_eq(r.prog.instr[o->instr].tensor, sw[i].tensor);
    ck_assert_int_eq(r.prog.instr[in->instr].tensor, sw[i].tensor);
    ck_assert(o->start_ns < in->start_ns);
    ck_assert(i == 0 || r.tr.spans[sw[i - 1].in_span].start_ns <=
                        in->start_ns);
  }
  free(sw);
  run_fini(&r);
}
END_TEST

static Suite *
trace_suite(void)
{
  Suite *s = suite_create("trace");
  TCase *tc;

  tc = tcase_create("timeline");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, stalls_match_summary);
  tcase_add_test(tc, swap_pairs);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(trace_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
