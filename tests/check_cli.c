/* tests/check_cli.c — the CLI library (cli/).
 *
 * Test case "args": shared options, K=V splitting, the error messages.
 * The analyses themselves (bound, summary, scenario) are in
 * tests/check_analysis.c; the trace writers the commands print with in
 * tests/check_trace.c.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "analysis/scenario.h"

/* --- args ---------------------------------------------------------------- */

static int
parse(ooc_cli_args *a, unsigned accept, ooc_err *err, int argc, char **argv)
{
  ooc_cli_args_init(a);
  return ooc_cli_args_parse(a, argc, argv, accept, NULL, err);
}

#define ALL (OOC_CLI_MODEL | OOC_CLI_BATCH | OOC_CLI_SET | OOC_CLI_HW |       \
             OOC_CLI_HW_SET | OOC_CLI_PLANNER | OOC_CLI_BUDGET | OOC_CLI_OPT | \
             OOC_CLI_JSON | OOC_CLI_DTYPE)

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

  ck_assert_int_eq(parse(&a, ALL, &err, 22, argv), 0);
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
    { "--frob", "1", "simulate: unknown option '--frob'" },
    { "--trace", "t.json", "simulate: unknown option '--trace'" },
  };
  size_t i;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *argv[] = { "simulate", (char *)cases[i].arg, (char *)cases[i].val,
                     NULL };
    ooc_cli_args a;
    ooc_err err = { 0 };
    ck_assert_int_lt(parse(&a, ALL, &err, 3, argv), 0);
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

  ck_assert_int_eq(parse(&a, ALL, &err, 4, help), 0);
  ck_assert_int_eq(a.help, 1);
  ooc_cli_args_fini(&a);

  ck_assert_int_lt(parse(&a, ALL, &err, 3, pos), 0);
  ck_assert_str_eq(err.msg, "simulate: unexpected argument 'plan.json'");
  ooc_cli_args_fini(&a);
  ck_assert_int_eq(parse(&a, ALL | OOC_CLI_POSITIONAL, &err, 3, pos), 0);
  ck_assert_int_eq(a.n_pos, 1);
  ck_assert_str_eq(a.pos[0], "plan.json");
  ck_assert_int_lt(ooc_cli_args_require(&a, OOC_CLI_MODEL, &err), 0);
  ck_assert_str_eq(err.msg, "missing -m MODEL");
  ooc_cli_args_fini(&a);
}
END_TEST

struct extra_ctx { int jobs; const char *shard; };

static int
extra_handle(void *ctx, int val, const char *arg, ooc_err *err)
{
  struct extra_ctx *c = ctx;
  if (val == 'j') {
    c->jobs = atoi(arg);
    return 0;
  }
  if (val == 1000) {
    c->shard = arg;
    return 0;
  }
  return ooc_err_set(err, OOC_EINVAL, "unexpected %d", val);
}

START_TEST(args_extra)
{
  static const struct option opts[] = {
    { "jobs", required_argument, NULL, 'j' },
    { "shard", required_argument, NULL, 1000 },
    { 0 },
  };
  struct extra_ctx c = { 0 };
  ooc_cli_extra ex = { .options = opts, .shortopts = "j:",
                       .handle = extra_handle, .ctx = &c };
  char *argv[] = { "sweep", "-j", "4", "--shard", "2/3", "-m", "m", NULL };
  ooc_cli_args a;
  ooc_err err = { 0 };

  ooc_cli_args_init(&a);
  ck_assert_int_eq(ooc_cli_args_parse(&a, 7, argv, OOC_CLI_MODEL, &ex, &err),
                   0);
  ck_assert_int_eq(c.jobs, 4);
  ck_assert_str_eq(c.shard, "2/3");
  ck_assert_str_eq(a.model, "m");
  ooc_cli_args_fini(&a);
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
  tcase_add_test(tc, args_extra);
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
