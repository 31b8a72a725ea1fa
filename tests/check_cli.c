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
