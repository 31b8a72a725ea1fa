/* tests/check_cli.c — the CLI library (cli/) and the trace writers the
 * commands print with (report/trace_out.h).
 *
 * Test case "args": shared options, K=V splitting, the error messages.
 * Test case "writers": the Chrome trace / CSV of a hand-built program and
 * trace, to the byte; the trace of a real run parsed as Perfetto reads the
 * Chrome trace event format.
 * The analyses themselves (bound, summary, scenario) are in
 * tests/check_analysis.c.
 */
#include "config.h"

#include <cJSON.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "analysis/scenario.h"
#include "report/trace_out.h"

#define MLP OOC_SRCDIR "/tests/data/cli_mlp.json"

/* --- args ---------------------------------------------------------------- */

static int
parse(ooc_cli_args *a, unsigned cmd, int positional, ooc_err *err, int argc,
      char **argv)
{
  ooc_cli_args_init(a);
  return ooc_cli_args_parse(a, argc, argv, cmd, positional, err);
}

START_TEST(args_shared)
{
  char *argv[] = { "simulate", "-m", "resnet50", "-b", "8", "--set",
                   "depth=101", "--set", "image=512", "--hw", "v100-pcie3",
                   "--hw-set", "link.h2d_GBps=32", "-p", "window",
                   "--budget", "1GiB", "--opt", "window=2GiB=x", "--json",
                   "--dtype", "fp16", NULL };
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_scenario_spec spec;

  ck_assert_int_eq(parse(&a, OOC_CMD_SIMULATE, 0, &err, 22, argv), 0);
  ck_assert_str_eq(a.model, "resnet50");
  ck_assert_int_eq(a.batch, 8);
  ck_assert_int_eq(a.n_sets, 2);
  ck_assert_str_eq(a.sets[1].key, "image");
  ck_assert_str_eq(a.sets[1].value, "512");
  ck_assert_str_eq(a.hw_sets[0].key, "link.h2d_GBps");
  ck_assert_str_eq(a.hw_sets[0].value, "32");
  ck_assert_str_eq(a.planner, "window");
  ck_assert_uint_eq(a.budget, 1073741824ULL);      /* 1 GiB = 2^30 */
  ck_assert_str_eq(a.opts[0].key, "window");       /* split at the first = */
  ck_assert_str_eq(a.opts[0].value, "2GiB=x");
  ck_assert_int_eq(a.json, 1);
  ck_assert_int_eq(a.dtype_set, 1);
  ck_assert_int_eq(a.dtype, OOC_FP16);
  ooc_cli_args_spec(&a, &spec);
  ck_assert_int_eq(spec.batch, 8);
  ck_assert_int_eq(spec.n_sets, 2);
  ck_assert_uint_eq(spec.budget, 1073741824ULL);
  ck_assert_ptr_null(spec.allocator);
  ooc_cli_args_fini(&a);
}
END_TEST

struct bad { const char *arg, *val; const char *msg; };

START_TEST(args_errors)
{
  static const struct bad cases[] = {
    { "-b", "0", "-b: batch 0 must be >= 1" },
    { "-b", "-2", "-b: batch -2 must be >= 1" },
    { "-b", "7x", "-b: '7x' is not a batch size" },
    { "--set", "depth", "--set 'depth': expected KEY=VALUE" },
    { "--set", "=4", "--set '=4': empty key" },
    { "--opt", "auto", "--opt 'auto': expected KEY=VALUE" },
    { "--hw-set", "link", "--hw-set 'link': expected KEY=VALUE" },
    { "--budget", "12 apples", "--budget" },
    { "--budget", "0", "--budget: '0' must be > 0" },
    { "--dtype", "fp64", "--dtype: unknown dtype 'fp64'" },
    { "--frob", "1", "compare: unknown option '--frob'" },
    { "--trace", "t.json", "compare: unknown option '--trace'" },
  };
  size_t i;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *argv[] = { "compare", (char *)cases[i].arg, (char *)cases[i].val,
                     NULL };
    ooc_cli_args a;
    ooc_err err = { 0 };
    ck_assert_int_lt(parse(&a, OOC_CMD_COMPARE, 0, &err, 3, argv), 0);
    ck_assert_msg(strstr(err.msg, cases[i].msg) != NULL,
                  "%s %s: got '%s'", cases[i].arg, cases[i].val, err.msg);
    ooc_cli_args_fini(&a);
  }
}
END_TEST

START_TEST(args_help_positional_require)
{
  char *help[] = { "info", "-m", "x", "--help", NULL };
  char *pos[] = { "simulate", "plan.json", "--json", NULL };
  ooc_cli_args a;
  ooc_err err = { 0 };

  ck_assert_int_eq(parse(&a, OOC_CMD_INFO, 0, &err, 4, help), 0);
  ck_assert_int_eq(a.help, 1);
  ooc_cli_args_fini(&a);

  ck_assert_int_lt(parse(&a, OOC_CMD_SIMULATE, 0, &err, 3, pos), 0);
  ck_assert_str_eq(err.msg, "simulate: unexpected argument 'plan.json'");
  ooc_cli_args_fini(&a);
  ck_assert_int_eq(parse(&a, OOC_CMD_SIMULATE, 1, &err, 3, pos), 0);
  ck_assert_int_eq(a.n_pos, 1);
  ck_assert_str_eq(a.pos[0], "plan.json");
  ck_assert_int_lt(ooc_cli_args_require(&a, OOC_CLI_MODEL, &err), 0);
  ck_assert_str_eq(err.msg, "missing -m MODEL");
  ooc_cli_args_fini(&a);
}
END_TEST

/* Every command's --help lists exactly the options its parser takes:
 * both come from the one table, and each long name (and short letter) of
 * a row appears in the help of every command the row names, and in no
 * other command's help (a name may be shared by another row). */
static const unsigned all_cmds[] = {
  OOC_CMD_LIST, OOC_CMD_INFO, OOC_CMD_PLAN, OOC_CMD_SIMULATE,
  OOC_CMD_COMPARE, OOC_CMD_MAXBATCH, OOC_CMD_MINBUDGET, OOC_CMD_SWEEP,
  OOC_CMD_PLOT, OOC_CMD_REPORT,
};

/* A handler that takes nothing: what is left is the parser's verdict. */
static int
reject_all(void *ctx, int id, const char *arg, ooc_err *err)
{
  (void)ctx; (void)arg;
  return ooc_err_set(err, OOC_EINVAL, "handled %d", id);
}

START_TEST(args_table_help)
{
  for (size_t c = 0; c < sizeof all_cmds / sizeof all_cmds[0]; c++) {
    ooc_cli_doc doc = { .name = "x", .cmd = all_cmds[c],
                        .usage = "Usage: x\n" };
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);

    ck_assert_ptr_nonnull(f);
    ooc_cli_usage(f, &doc);
    fclose(f);
    for (int i = 0; ooc_cli_options[i].name != NULL; i++) {
      const ooc_cli_option *o = &ooc_cli_options[i];
      char want[64], want_nl[64];
      int taken = 0;
      for (int j = 0; ooc_cli_options[j].name != NULL; j++)
        taken |= strcmp(ooc_cli_options[j].name, o->name) == 0 &&
                 (ooc_cli_options[j].cmds & all_cmds[c]);
      snprintf(want, sizeof want, "--%s ", o->name);
      snprintf(want_nl, sizeof want_nl, "--%s\n", o->name);
      ck_assert_msg((strstr(buf, want) != NULL ||
                     strstr(buf, want_nl) != NULL) == taken,
                    "command bit %x: --%s %s its help", all_cmds[c], o->name,
                    taken ? "missing from" : "wrongly in");
      /* The parser takes the option exactly when the help lists it. */
      {
        char opt[64];
        char *argv[] = { "x", opt, "1", NULL };
        int help = 0;
        ooc_err err = { 0 };
        snprintf(opt, sizeof opt, "--%s", o->name);
        int rc = ooc_cli_parse(all_cmds[c], o->arg ? 3 : 2, argv,
                               reject_all, NULL, NULL, 0, NULL, &help,
                               &err);
        ck_assert_msg(taken ? strstr(err.msg, "unknown option") == NULL
                            : rc < 0 && strstr(err.msg, "unknown option"),
                      "command bit %x, --%s: '%s'", all_cmds[c], o->name,
                      err.msg);
      }
    }
    free(buf);
  }
}
END_TEST

/* --- trace writers ------------------------------------------------------- */

START_TEST(trace_writers)
{
  ooc_model_opts mo = { .batch = 2 };
  ooc_model *m = NULL;
  ooc_err err = { 0 };
  ooc_program p;
  ooc_span spans[2];
  ooc_mem_sample mem[2] = {
    { .t_ns = 1000, .allocated = 100, .reserved = 200 },
    { .t_ns = 2500, .allocated = 164, .reserved = 200 },
  };
  ooc_trace t = { .n_spans = 2, .spans = spans, .n_mem = 2, .mem = mem };
  int32_t act, c, d;
  char *buf = NULL;
  size_t n = 0;
  FILE *f;

  ck_assert_int_eq(ooc_model_load(MLP, &mo, &m, &err), 0);
  ooc_program_init(&p);
  act = ooc_program_tensor(&p, OOC_T_ACT, 1, 64);
  ck_assert_int_ge(act, 0);
  c = ooc_program_emit(&p, OOC_I_COMPUTE, OOC_STREAM_COMPUTE, OOC_PH_FWD, 1,
                       -1, OOC_WHERE_DEVICE);
  d = ooc_program_emit(&p, OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, act,
                       OOC_WHERE_HOST);
  /* fwd fc1 from 1.0 to 2.5 us, its swap-out from 2.5 to 4.0 us; the
   * origin is the first span, so they start at 0 and 1.5 us. */
  spans[0] = (ooc_span){ .instr = c, .start_ns = 1000, .end_ns = 2500 };
  spans[1] = (ooc_span){ .instr = d, .start_ns = 2500, .end_ns = 4000 };

  f = open_memstream(&buf, &n);
  ck_assert_int_eq(ooc_trace_write_chrome(f, m, &p, &t), 0);
  fclose(f);
  ck_assert_msg(strstr(buf, "{\"name\":\"fwd fc1\",\"cat\":\"fwd\",\"ph\":\"X\","
                            "\"pid\":1,\"tid\":0,\"ts\":0.000,\"dur\":1.500,")
                != NULL, "%s", buf);
  ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"d2h fc1\",\"cat\":\"d2h\","
                                    "\"ph\":\"X\",\"pid\":1,\"tid\":2,"
                                    "\"ts\":1.500,\"dur\":1.500,\"args\":"
                                    "{\"instr\":1,\"tensor\":0,\"bytes\":64}}"));
  ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"memory\",\"ph\":\"C\","
                                    "\"pid\":1,\"tid\":0,\"ts\":1.500,\"args\":"
                                    "{\"allocated_bytes\":164,"
                                    "\"reserved_bytes\":200}}"));
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
  ooc_program_fini(&p);
  ooc_model_free(m);
}
END_TEST

/* The trace of a real run read back as Perfetto reads the Chrome trace
 * event format: one JSON object with a "traceEvents" array; "M"
 * thread_name metadata naming lanes 0, 1, 2 compute, H2D and D2H; "X"
 * spans with numeric ts and dur in microseconds, pid and tid, named
 * "<phase> <layer>" after their category; "C" memory counters. The span
 * durations per lane add up to the summary's busy times. */
static double
num_of(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  ck_assert_msg(cJSON_IsNumber(v), "field '%s' is not a number", key);
  return v->valuedouble;
}

static int
is_layer(const ooc_model *m, const char *name)
{
  int32_t i;

  for (i = 0; i < m->n_layers; i++)
    if (m->layers[i].name != NULL && strcmp(m->layers[i].name, name) == 0)
      return 1;
  return 0;
}

START_TEST(trace_perfetto)
{
  ooc_scenario_spec spec = { .model = MLP, .batch = 64, .hw = "v100-pcie3",
                             .planner = "vdnn" };
  ooc_summary s;
  ooc_program prog;
  ooc_trace tr;
  ooc_model *m = NULL;
  ooc_scenario_out out = { .program = &prog, .trace = &tr, .model = &m };
  ooc_err err = { 0 };
  const char *lane[3] = { NULL, NULL, NULL };
  double busy[3] = { 0, 0, 0 }, max_alloc = 0, end = 0;
  int n_x = 0, n_c = 0, n_copy[3] = { 0, 0, 0 };
  const cJSON *ev, *evs;
  cJSON *root;
  char *buf = NULL;
  size_t n = 0;
  FILE *f;

  ooc_program_init(&prog);
  ooc_trace_init(&tr);
  ck_assert_msg(ooc_scenario_run(&spec, &s, &out, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(s.feasible, 1);
  ck_assert_uint_gt(s.h2d_bytes, 0);      /* vdnn swaps here */
  f = open_memstream(&buf, &n);
  ck_assert_int_eq(ooc_trace_write_chrome(f, m, &prog, &tr), 0);
  fclose(f);
  root = cJSON_Parse(buf);
  ck_assert_msg(cJSON_IsObject(root), "trace is not one JSON object");
  evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
  ck_assert(cJSON_IsArray(evs));
  cJSON_ArrayForEach(ev, evs) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    int tid;

    ck_assert(cJSON_IsString(name) && cJSON_IsString(ph));
    ck_assert_int_eq(strlen(ph->valuestring), 1);
    ck_assert_double_eq(num_of(ev, "pid"), 1);
    tid = (int)num_of(ev, "tid");
    ck_assert(tid >= 0 && tid < 3);
    ck_assert(cJSON_IsObject(args));
    if (strcmp(ph->valuestring, "M") == 0) {
      if (strcmp(name->valuestring, "thread_name") == 0) {
        const cJSON *ln = cJSON_GetObjectItemCaseSensitive(args, "name");
        ck_assert(cJSON_IsString(ln));
        lane[tid] = ln->valuestring;
      }
    } else if (strcmp(ph->valuestring, "X") == 0) {
      const cJSON *cat = cJSON_GetObjectItemCaseSensitive(ev, "cat");
      double ts = num_of(ev, "ts"), dur = num_of(ev, "dur");
      const char *sp = strchr(name->valuestring, ' ');
      static const char *const want_cat[3][3] = {
        { "fwd", "bwd", "update" }, { "h2d", "h2d", "h2d" },
        { "d2h", "d2h", "d2h" } };

      ck_assert(cJSON_IsString(cat));
      ck_assert(ts >= 0 && dur >= 0);
      ck_assert_msg(strcmp(cat->valuestring, want_cat[tid][0]) == 0 ||
                    strcmp(cat->valuestring, want_cat[tid][1]) == 0 ||
                    strcmp(cat->valuestring, want_cat[tid][2]) == 0,
                    "category %s on lane %d", cat->valuestring, tid);
      if (strcmp(cat->valuestring, "update") == 0) {
        ck_assert_str_eq(name->valuestring, "update");
      } else {
        ck_assert_msg(sp != NULL && (size_t)(sp - name->valuestring) ==
                      strlen(cat->valuestring) &&
                      strncmp(name->valuestring, cat->valuestring,
                              (size_t)(sp - name->valuestring)) == 0 &&
                      is_layer(m, sp + 1), "span name '%s' (category %s)",
                      name->valuestring, cat->valuestring);
      }
      busy[tid] += dur;
      if (ts + dur > end)
        end = ts + dur;
      n_copy[tid]++;
      n_x++;
    } else if (strcmp(ph->valuestring, "C") == 0) {
      double a = num_of(args, "allocated_bytes");
      ck_assert_str_eq(name->valuestring, "memory");
      ck_assert(num_of(ev, "ts") >= 0);
      ck_assert(a <= num_of(args, "reserved_bytes"));
      if (a > max_alloc)
        max_alloc = a;
      n_c++;
    } else {
      ck_abort_msg("unexpected phase '%s'", ph->valuestring);
    }
  }
  ck_assert_str_eq(lane[0], "compute");
  ck_assert_str_eq(lane[1], "H2D");
  ck_assert_str_eq(lane[2], "D2H");
  ck_assert(n_x > 0 && n_c > 0 && n_copy[1] > 0 && n_copy[2] > 0);
  /* microseconds: the lanes' spans add up to the busy times (1 ns each) */
  ck_assert_msg(fabs(busy[0] - s.compute_busy_s * 1e6) <= 1e-3 * n_x,
                "compute %.3f us vs %.3f", busy[0], s.compute_busy_s * 1e6);
  ck_assert(fabs(busy[1] - s.h2d_busy_s * 1e6) <= 1e-3 * n_x);
  ck_assert(fabs(busy[2] - s.d2h_busy_s * 1e6) <= 1e-3 * n_x);
  ck_assert_msg(end <= s.iteration_s * 1e6 + 1e-3, "last span ends at %.3f "
                "us, iteration %.3f us", end, s.iteration_s * 1e6);
  ck_assert_double_eq(max_alloc, (double)s.peak_allocated_bytes);
  cJSON_Delete(root);
  free(buf);
  ooc_summary_fini(&s);
  ooc_model_free(m);
  ooc_trace_fini(&tr);
  ooc_program_fini(&prog);
}
END_TEST

static Suite *
cli_suite(void)
{
  Suite *s = suite_create("cli");
  TCase *tc;

  tc = tcase_create("args");
  tcase_add_test(tc, args_shared);
  tcase_add_test(tc, args_errors);
  tcase_add_test(tc, args_help_positional_require);
  tcase_add_test(tc, args_table_help);
  suite_add_tcase(s, tc);
  tc = tcase_create("writers");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, trace_writers);
  tcase_add_test(tc, trace_perfetto);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(cli_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
