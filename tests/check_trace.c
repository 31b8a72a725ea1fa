/* tests/check_trace.c — reading a trace (report/timeline.h) and writing it
 * (report/trace_out.h).
 *
 * Test case "timeline": for every registered planner on scenarios that
 * stall, the compute stream's stall spans add up per cause (swap-in,
 * swap-out, other) to the summary's stall_s to the nanosecond, never
 * overlap a compute-stream span, and every swap pair links a D2H to a
 * later H2D of the same tensor.
 * Test case "writers": the Chrome trace, memory CSV and timeline CSV of a
 * hand-built program and trace, to the byte; the Chrome trace of real runs
 * parsed with cJSON and checked as Perfetto reads it (lanes, spans named
 * after their category, FLOPs and bytes on compute spans, stall spans per
 * cause adding up to stall_s, every flow "s" paired with one "f" inside
 * the D2H and H2D slices of the same tensor, allocated and reserved as two
 * separate counters).
 */
#include "config.h"

#include <cJSON.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scenario.h"
#include "planners/registry.h"
#include "report/timeline.h"
#include "report/trace_out.h"

#define MLP OOC_SRCDIR "/tests/data/cli_mlp.json"

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

/* --- writers --------------------------------------------------------------- */

/* A hand-built iteration: fwd fc1 [1.0, 2.5] us, its swap-out [2.5, 4.0],
 * its swap-in [4.0, 5.0], then bwd fc1 [5.0, 6.0] waiting for the swap-in:
 * the compute lane stalls on the swap-in from 2.5 to 5.0 us. The origin is
 * the first span (1.0 us). */
START_TEST(writers_bytes)
{
  ooc_model_opts mo = { .batch = 2 };
  ooc_model *m = NULL;
  ooc_err err = { 0 };
  ooc_program p;
  ooc_span spans[4];
  ooc_mem_sample mem[2] = {
    { .t_ns = 1000, .allocated = 100, .reserved = 200 },
    { .t_ns = 2500, .allocated = 164, .reserved = 200 },
  };
  ooc_trace t = { .n_spans = 4, .spans = spans, .n_mem = 2, .mem = mem };
  const ooc_layer *fc1;
  int32_t act, c, d, h, b;
  char *buf = NULL, want[512];
  size_t n = 0;
  FILE *f;

  ck_assert_int_eq(ooc_model_load(MLP, &mo, &m, &err), 0);
  fc1 = &m->layers[1];
  ck_assert_str_eq(fc1->name, "fc1");
  ooc_program_init(&p);
  act = ooc_program_tensor(&p, OOC_T_ACT, 1, 64);
  ck_assert_int_ge(act, 0);
  c = ooc_program_emit(&p, OOC_I_COMPUTE, OOC_STREAM_COMPUTE, OOC_PH_FWD, 1,
                       -1, OOC_WHERE_DEVICE);
  d = ooc_program_emit(&p, OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, act,
                       OOC_WHERE_HOST);
  ooc_program_wait(&p, c);
  h = ooc_program_emit(&p, OOC_I_H2D, OOC_STREAM_H2D, OOC_PH_NONE, 1, act,
                       OOC_WHERE_DEVICE);
  ooc_program_wait(&p, d);
  b = ooc_program_emit(&p, OOC_I_COMPUTE, OOC_STREAM_COMPUTE, OOC_PH_BWD, 1,
                       -1, OOC_WHERE_DEVICE);
  ooc_program_wait(&p, h);
  spans[0] = (ooc_span){ .instr = c, .start_ns = 1000, .end_ns = 2500 };
  spans[1] = (ooc_span){ .instr = d, .start_ns = 2500, .end_ns = 4000 };
  spans[2] = (ooc_span){ .instr = h, .start_ns = 4000, .end_ns = 5000 };
  spans[3] = (ooc_span){ .instr = b, .start_ns = 5000, .end_ns = 6000 };

  f = open_memstream(&buf, &n);
  ck_assert_int_eq(ooc_trace_write_chrome(f, m, &p, &t), 0);
  fclose(f);
  snprintf(want, sizeof want, "{\"name\":\"fwd fc1\",\"cat\":\"fwd\","
           "\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":0.000,\"dur\":1.500,"
           "\"args\":{\"instr\":0,\"flops\":%.17g,\"bytes\":%.17g}}",
           fc1->fwd_flops, fc1->fwd_bytes_rw);
  ck_assert_msg(strstr(buf, want) != NULL, "want %s in\n%s", want, buf);
  snprintf(want, sizeof want, "{\"name\":\"bwd fc1\",\"cat\":\"bwd\","
           "\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":4.000,\"dur\":1.000,"
           "\"args\":{\"instr\":3,\"flops\":%.17g,\"bytes\":%.17g}}",
           fc1->bwd_data_flops + fc1->bwd_weight_flops, fc1->bwd_bytes_rw);
  ck_assert_msg(strstr(buf, want) != NULL, "want %s", want);
  ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"d2h fc1\",\"cat\":\"d2h\","
                                    "\"ph\":\"X\",\"pid\":1,\"tid\":2,"
                                    "\"ts\":1.500,\"dur\":1.500,\"args\":"
                                    "{\"instr\":1,\"tensor\":0,\"bytes\":64}}"));
  ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"stall swap-in\","
                                    "\"cat\":\"stall\",\"ph\":\"X\",\"pid\":1,"
                                    "\"tid\":0,\"ts\":1.500,\"dur\":2.500,"
                                    "\"args\":{\"cause\":\"swapin\","
                                    "\"waits_for_instr\":2,\"waits_for\":"
                                    "\"h2d fc1\",\"next_instr\":3}}"));
  ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"swap fc1\",\"cat\":\"swap\","
                                    "\"ph\":\"s\",\"id\":1,\"pid\":1,"
                                    "\"tid\":2,\"ts\":2.250,\"args\":"
                                    "{\"tensor\":0}}"));
  ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"swap fc1\",\"cat\":\"swap\","
                                    "\"ph\":\"f\",\"bp\":\"e\",\"id\":1,"
                                    "\"pid\":1,\"tid\":1,\"ts\":3.500,"
                                    "\"args\":{\"tensor\":0}}"));
  ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"allocated\",\"ph\":\"C\","
                                    "\"pid\":1,\"tid\":0,\"ts\":1.500,"
                                    "\"args\":{\"bytes\":164}}"));
  ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"reserved\",\"ph\":\"C\","
                                    "\"pid\":1,\"tid\":0,\"ts\":1.500,"
                                    "\"args\":{\"bytes\":200}}"));
  ck_assert_ptr_nonnull(strstr(buf, "\"args\":{\"name\":\"H2D\"}"));
  ck_assert_str_eq(buf + strlen(buf) - 4, "\n]}\n");
  free(buf);

  buf = NULL;
  f = open_memstream(&buf, &n);
  ck_assert_int_eq(ooc_trace_write_mem_csv(f, &t), 0);
  fclose(f);
  ck_assert_str_eq(buf, "time_s,allocated_bytes,reserved_bytes\n"
                        "0.000000000,100,200\n"
                        "0.000001500,164,200\n");
  free(buf);

  buf = NULL;
  f = open_memstream(&buf, &n);
  ck_assert_int_eq(ooc_trace_write_timeline(f, m, &p, &t), 0);
  fclose(f);
  ck_assert_str_eq(buf, "lane,start_s,end_s,phase,layer,cause\n"
                        "compute,0.000000000,0.000001500,fwd,fc1,\n"
                        "compute,0.000001500,0.000004000,stall,fc1,swapin\n"
                        "compute,0.000004000,0.000005000,bwd,fc1,\n"
                        "h2d,0.000003000,0.000004000,swapin,fc1,\n"
                        "d2h,0.000001500,0.000003000,swapout,fc1,\n");
  free(buf);
  ooc_program_fini(&p);
  ooc_model_free(m);
}
END_TEST

static double
num_of(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  ck_assert_msg(cJSON_IsNumber(v), "field '%s' is not a number", key);
  return v->valuedouble;
}

static const char *
str_of(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  ck_assert_msg(cJSON_IsString(v), "field '%s' is not a string", key);
  return v->valuestring;
}

static const ooc_layer *
layer_named(const ooc_model *m, const char *name)
{
  for (int32_t i = 0; i < m->n_layers; i++)
    if (m->layers[i].name != NULL && strcmp(m->layers[i].name, name) == 0)
      return &m->layers[i];
  return NULL;
}

/* An "X" event as read back. */
struct xev {
  int tid;
  double ts, dur;
  const char *cat;
  int tensor;
};

/* Is there an X event of category cat on tid, of tensor, strictly around
 * ts? */
static int
inside(const struct xev *x, int nx, int tid, const char *cat, int tensor,
       double ts)
{
  for (int i = 0; i < nx; i++)
    if (x[i].tid == tid && strcmp(x[i].cat, cat) == 0 &&
        x[i].tensor == tensor && x[i].ts < ts && ts < x[i].ts + x[i].dur)
      return 1;
  return 0;
}

/* The Chrome trace of a real run read back as Perfetto reads the trace
 * event format, and checked against the run's summary. */
static void
check_chrome(const char *model, int64_t batch, const char *planner)
{
  static const char *const causes[OOC_STALL_COUNT] = { "swapin", "swapout",
                                                       "other", "host" };
  struct run r;
  const char *lane[3] = { NULL, NULL, NULL };
  double busy[3] = { 0 }, stall[OOC_STALL_COUNT] = { 0 }, end = 0;
  double max_alloc = 0, last_alloc = -1;
  int n_x = 0, n_stall = 0, n_alloc = 0, n_res = 0, n_flow = 0;
  struct xev *x;
  struct { double ts; int tensor, seen; const char *name; } *flow_s, *flow_f;
  const cJSON *ev, *evs;
  cJSON *root;
  char *buf = NULL;
  size_t n = 0;
  int nev;
  FILE *f;

  run_scenario(&r, model, batch, "v100-pcie3", planner);
  ck_assert_int_eq(r.s.feasible, 1);
  f = open_memstream(&buf, &n);
  ck_assert_int_eq(ooc_trace_write_chrome(f, r.m, &r.prog, &r.tr), 0);
  fclose(f);
  root = cJSON_Parse(buf);
  ck_assert_msg(cJSON_IsObject(root), "trace is not one JSON object");
  evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
  ck_assert(cJSON_IsArray(evs));
  nev = cJSON_GetArraySize(evs);
  x = calloc((size_t)nev, sizeof *x);
  flow_s = calloc((size_t)nev + 1, sizeof *flow_s);
  flow_f = calloc((size_t)nev + 1, sizeof *flow_f);
  ck_assert(x != NULL && flow_s != NULL && flow_f != NULL);
  cJSON_ArrayForEach(ev, evs) {
    const char *name = str_of(ev, "name"), *ph = str_of(ev, "ph");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    int tid = (int)num_of(ev, "tid");

    ck_assert_int_eq(strlen(ph), 1);
    ck_assert_double_eq(num_of(ev, "pid"), 1);
    ck_assert(tid >= 0 && tid < 3);
    ck_assert(cJSON_IsObject(args));
    switch (ph[0]) {
    case 'M':
      if (strcmp(name, "thread_name") == 0)
        lane[tid] = str_of(args, "name");
      break;
    case 'X': {
      const char *cat = str_of(ev, "cat"), *sp = strchr(name, ' ');
      const cJSON *te = cJSON_GetObjectItemCaseSensitive(args, "tensor");
      double ts = num_of(ev, "ts"), dur = num_of(ev, "dur");
      int compute = !strcmp(cat, "fwd") || !strcmp(cat, "bwd") ||
                    !strcmp(cat, "recomp") || !strcmp(cat, "update");

      ck_assert(ts >= 0 && dur >= 0);
      ck_assert_msg(tid == 0 ? compute || !strcmp(cat, "stall") ||
                               !strcmp(cat, "alloc") || !strcmp(cat, "free")
                             : !strcmp(cat, tid == 1 ? "h2d" : "d2h") ||
                               !strcmp(cat, "alloc") || !strcmp(cat, "free"),
                    "category %s on lane %d", cat, tid);
      x[n_x] = (struct xev){ .tid = tid, .ts = ts, .dur = dur, .cat = cat,
                             .tensor = cJSON_IsNumber(te) ? te->valueint
                                                          : -1 };
      n_x++;
      if (!strcmp(cat, "stall")) {
        const char *cause = str_of(args, "cause");
        int c;
        for (c = 0; c < OOC_STALL_COUNT && strcmp(causes[c], cause); c++)
          ;
        ck_assert_msg(c < OOC_STALL_COUNT, "stall cause '%s'", cause);
        ck_assert_str_eq(name + 6, ooc_timeline_cause_label((ooc_stall)c));
        ck_assert(dur > 0);
        stall[c] += dur;
        n_stall++;
        break;
      }
      if (!strcmp(cat, "update")) {
        ck_assert_str_eq(name, "update");
      } else {
        ck_assert_msg(sp != NULL && (size_t)(sp - name) == strlen(cat) &&
                      !strncmp(name, cat, strlen(cat)) &&
                      layer_named(r.m, sp + 1) != NULL,
                      "span name '%s' (category %s)", name, cat);
      }
      if (compute && strcmp(cat, "update") != 0) {
        /* The model's work of the layer: recompute is a forward. */
        const ooc_layer *l = layer_named(r.m, sp + 1);
        int bwd = !strcmp(cat, "bwd");
        ck_assert_double_eq(num_of(args, "flops"),
                            bwd ? l->bwd_data_flops + l->bwd_weight_flops
                                : l->fwd_flops);
        ck_assert_double_eq(num_of(args, "bytes"),
                            bwd ? l->bwd_bytes_rw : l->fwd_bytes_rw);
      }
      if (compute || tid > 0) {
        if (compute || strcmp(cat, tid == 1 ? "h2d" : "d2h") == 0)
          busy[tid] += dur;
      }
      if (ts + dur > end)
        end = ts + dur;
      break;
    }
    case 's':
    case 'f': {
      int id = (int)num_of(ev, "id");
      ck_assert_str_eq(str_of(ev, "cat"), "swap");
      ck_assert_msg(id >= 1 && id <= nev, "flow id %d", id);
      if (ph[0] == 's') {
        ck_assert_msg(!flow_s[id].seen, "two \"s\" with id %d", id);
        ck_assert_int_eq(tid, 2);
        flow_s[id].seen = 1;
        flow_s[id].ts = num_of(ev, "ts");
        flow_s[id].tensor = (int)num_of(args, "tensor");
        flow_s[id].name = name;
        n_flow++;
      } else {
        ck_assert_msg(!flow_f[id].seen, "two \"f\" with id %d", id);
        ck_assert_int_eq(tid, 1);
        ck_assert_str_eq(str_of(ev, "bp"), "e");
        flow_f[id].seen = 1;
        flow_f[id].ts = num_of(ev, "ts");
        flow_f[id].tensor = (int)num_of(args, "tensor");
        flow_f[id].name = name;
      }
      break;
    }
    case 'C': {
      double v;
      /* One series per counter: two counters, not one with two series
       * (Perfetto would stack those). */
      ck_assert_int_eq(cJSON_GetArraySize(args), 1);
      v = num_of(args, "bytes");
      if (!strcmp(name, "allocated")) {
        if (v > max_alloc)
          max_alloc = v;
        last_alloc = v;
        n_alloc++;
      } else {
        ck_assert_str_eq(name, "reserved");
        ck_assert(v >= last_alloc);
        n_res++;
      }
      break;
    }
    default:
      ck_abort_msg("unexpected phase '%s'", ph);
    }
  }
  ck_assert_str_eq(lane[0], "compute");
  ck_assert_str_eq(lane[1], "H2D");
  ck_assert_str_eq(lane[2], "D2H");
  /* Every "s" has its "f", of the same name and tensor, later, each inside
   * the D2H and H2D slices of that tensor. */
  for (int id = 1; id <= nev; id++) {
    ck_assert_msg(flow_s[id].seen == flow_f[id].seen, "flow %d unpaired",
                  id);
    if (!flow_s[id].seen)
      continue;
    ck_assert_str_eq(flow_s[id].name, flow_f[id].name);
    ck_assert_int_eq(flow_s[id].tensor, flow_f[id].tensor);
    ck_assert(flow_s[id].ts < flow_f[id].ts);
    ck_assert_msg(inside(x, n_x, 2, "d2h", flow_s[id].tensor, flow_s[id].ts),
                  "flow %d starts outside a D2H of its tensor", id);
    ck_assert_msg(inside(x, n_x, 1, "h2d", flow_f[id].tensor, flow_f[id].ts),
                  "flow %d ends outside an H2D of its tensor", id);
  }
  ck_assert_int_gt(n_flow, 0);
  ck_assert_int_gt(n_stall, 0);
  ck_assert(n_alloc > 0 && n_alloc == n_res);
  ck_assert_double_eq(max_alloc, (double)r.s.peak_allocated_bytes);
  /* Microseconds: stalls per cause add up to stall_s, the lanes' spans to
   * the busy times. */
  for (int c = 0; c < OOC_STALL_COUNT; c++)
    ck_assert_msg(fabs(stall[c] - r.s.stall_s[c] * 1e6) <= 1e-6 * n_x,
                  "%s: %s stalls %.3f us, summary %.3f", planner, causes[c],
                  stall[c], r.s.stall_s[c] * 1e6);
  ck_assert_msg(fabs(busy[0] - r.s.compute_busy_s * 1e6) <= 1e-3 * n_x,
                "compute %.3f us vs %.3f", busy[0], r.s.compute_busy_s * 1e6);
  ck_assert(fabs(busy[1] - r.s.h2d_busy_s * 1e6) <= 1e-3 * n_x);
  ck_assert(fabs(busy[2] - r.s.d2h_busy_s * 1e6) <= 1e-3 * n_x);
  ck_assert_msg(end <= r.s.iteration_s * 1e6 + 1e-3, "last span ends at "
                "%.3f us, iteration %.3f us", end, r.s.iteration_s * 1e6);
  /* Stalls never overlap another span of the compute lane (times are
   * exact to 1 ns; the sums below are doubles). */
  for (int i = 0; i < n_x; i++)
    for (int j = 0; j < n_x && !strcmp(x[i].cat, "stall"); j++)
      ck_assert_msg(j == i || x[j].tid != 0 ||
                    x[j].ts + x[j].dur <= x[i].ts + 1e-6 ||
                    x[j].ts >= x[i].ts + x[i].dur - 1e-6,
                    "stall at %.3f us overlaps a %s span at %.3f", x[i].ts,
                    x[j].cat, x[j].ts);
  free(x);
  free(flow_s);
  free(flow_f);
  cJSON_Delete(root);
  free(buf);
  run_fini(&r);
}

START_TEST(chrome_as_perfetto_reads_it)
{
  check_chrome(MLP, 64, "vdnn");
  check_chrome("resnet50", 256, "vdnn");
  check_chrome("resnet50", 256, "window");
  check_chrome("resnet50", 256, "capacity");
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
  tc = tcase_create("writers");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, writers_bytes);
  tcase_add_test(tc, chrome_as_perfetto_reads_it);
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
