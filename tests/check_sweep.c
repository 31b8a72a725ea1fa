/* tests/check_sweep.c — unit tests of the sweep (report/sweep*.c and
 * report/table.c): axis parsing, grid size and header, the CSV
 * reader/writer (quoting round trip), JSON typing, and a small real sweep
 * run twice (the second run resumes and runs nothing), and a parallel run
 * whose rows come out in grid order.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strv.h"
#include "report/sweep.h"

START_TEST(test_batches)
{
  ooc_sweep_grid g;
  ooc_err err = { 0 };

  ooc_sweep_grid_init(&g);
  ck_assert_int_eq(ooc_sweep_parse_batches(&g, "64:256:64", &err), OOC_OK);
  ck_assert_int_eq(g.n_batches, 4);
  ck_assert_int_eq(g.batches[0], 64);
  ck_assert_int_eq(g.batches[3], 256);
  ck_assert_int_eq(ooc_sweep_parse_batches(&g, "1,3", &err), OOC_OK);
  ck_assert_int_eq(g.n_batches, 6);
  ck_assert_int_eq(g.batches[5], 3);
  ck_assert_int_eq(ooc_sweep_parse_batches(&g, "64:1:64", &err), OOC_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "below its start 64"));
  ck_assert_int_eq(ooc_sweep_parse_batches(&g, "x", &err), OOC_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "-b"));
  ck_assert_int_eq(ooc_sweep_parse_batches(&g, "4,,5", &err), OOC_EINVAL);
  ck_assert_int_eq(ooc_sweep_parse_batches(&g, "0", &err), OOC_EINVAL);
  ck_assert_int_eq(ooc_sweep_parse_batches(&g, "8:16:0", &err), OOC_EINVAL);
  ck_assert_int_eq(g.n_batches, 6);
  ooc_sweep_grid_fini(&g);
}
END_TEST

START_TEST(test_grid_header)
{
  ooc_sweep_grid g;
  ooc_table t;
  ooc_err err = { 0 };

  ooc_sweep_grid_init(&g);
  ooc_table_init(&t);
  ck_assert_int_eq(ooc_sweep_set_model(&g, "alexnet", &err), OOC_OK);
  ck_assert_int_eq(ooc_sweep_parse_batches(&g, "32,64,128", &err), OOC_OK);
  ck_assert_int_eq(ooc_sweep_parse_hw(&g, "v100-pcie3,a100-pcie4", &err),
                   OOC_OK);
  ck_assert_int_eq(ooc_sweep_parse_planners(&g, "vdnn,window", &err), OOC_OK);
  ck_assert_int_eq(ooc_sweep_add_hwset(&g, "link.h2d_GBps+link.d2h_GBps=8,16",
                                       &err), OOC_OK);
  ck_assert_int_eq(g.hwsets[0].n_keys, 2);
  ck_assert_str_eq(g.hwsets[0].keys[1], "link.d2h_GBps");
  ck_assert_int_eq(ooc_sweep_add_hwset(&g, "link.h2d_GBps+link.d2h_GBps=1",
                                       &err), OOC_EINVAL);
  ck_assert_int_eq(ooc_sweep_add_hwset(&g, "novalue", &err), OOC_EINVAL);
  ck_assert_int_eq(ooc_sweep_parse_budgets(&g, "8GiB,default", &err), OOC_OK);
  ck_assert_uint_eq(g.budget_bytes[0], 8ULL << 30);
  ck_assert_uint_eq(g.budget_bytes[1], 0);
  ck_assert_int_eq(ooc_sweep_grid_check(&g, &err), OOC_OK);
  /* 2 hw x 2 link values x 1 allocator x 2 budgets x 2 planners x 3 */
  ck_assert_int_eq(ooc_sweep_npoints(&g), 48);
  /* ... and the dtype and optimizer axes, the model's and momentum */
  ck_assert_int_eq(ooc_sweep_ncoords(&g), 10);
  ck_assert_int_eq(ooc_sweep_header(&g, &t, &err), OOC_OK);
  ck_assert_str_eq(t.cols[0], "model");
  ck_assert_str_eq(t.cols[3], "hw_set:link.h2d_GBps+link.d2h_GBps");
  ck_assert_str_eq(t.cols[7], "batch");
  ck_assert_str_eq(t.cols[8], "dtype");
  ck_assert_str_eq(t.cols[9], "optimizer");
  ck_assert_str_eq(t.cols[10], "budget_bytes");
  ck_assert_str_eq(t.cols[t.ncols - 1], "sim_wall_s");
  ooc_table_fini(&t);
  ooc_sweep_grid_fini(&g);
}
END_TEST

START_TEST(test_grid_check_errors)
{
  ooc_sweep_grid g;
  ooc_err err = { 0 };

  ooc_sweep_grid_init(&g);
  ooc_sweep_set_model(&g, "alexnet", &err);
  ooc_sweep_parse_batches(&g, "32", &err);
  ooc_sweep_parse_hw(&g, "v100-pcie3", &err);
  ooc_sweep_parse_planners(&g, "vdnn", &err);
  ooc_sweep_add_hwset(&g, "link.nosuch_GBps=8", &err);
  ck_assert_int_ne(ooc_sweep_grid_check(&g, &err), OOC_OK);
  ck_assert_ptr_nonnull(strstr(err.msg, "nosuch_GBps"));
  ooc_sweep_grid_fini(&g);
}
END_TEST

static char *
tmp_path(const char *tag)
{
  static char buf[2][256];
  static int k;
  int fd;
  k ^= 1;
  snprintf(buf[k], sizeof buf[k], "/tmp/check_sweep_%s_XXXXXX", tag);
  fd = mkstemp(buf[k]);
  ck_assert_int_ge(fd, 0);
  close(fd);
  return buf[k];
}

/* Write text to path and read it back as CSV into r. */
static int
csv_text(const char *path, const char *text, ooc_table *r, ooc_err *err)
{
  FILE *f = fopen(path, "w");

  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  return ooc_table_read_csv(path, r, err);
}

START_TEST(test_csv_roundtrip)
{
  static const char *const cols[] = { "model", "oom_reason", "iteration_s" };
  static const char *const cells[2][3] = {
    { "a,b", "say \"hi\"\nthen go", "1.5" },
    { "", "plain", "" },
  };
  ooc_table t, r;
  ooc_err err = { 0 };
  char *path = tmp_path("csv");
  FILE *f;

  ooc_table_init(&t);
  t.ncols = 3;
  t.cols = calloc(3, sizeof *t.cols);
  t.rows = calloc(2, sizeof *t.rows);
  t.cap = 2;
  for (int i = 0; i < 3; i++)
    t.cols[i] = strdup(cols[i]);
  for (int j = 0; j < 2; j++) {
    t.rows[j] = calloc(3, sizeof *t.rows[j]);
    for (int i = 0; i < 3; i++)
      t.rows[j][i] = strdup(cells[j][i]);
  }
  t.nrows = 2;
  f = fopen(path, "w");
  ck_assert_int_eq(ooc_table_write_csv(f, &t), OOC_OK);
  fclose(f);
  ck_assert_int_eq(ooc_table_read_csv(path, &r, &err), OOC_OK);
  ck_assert_int_eq(r.ncols, 3);
  ck_assert_int_eq(r.nrows, 2);
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < 3; i++)
      ck_assert_str_eq(r.rows[j][i], cells[j][i]);
  ck_assert_int_eq(ooc_table_col(&r, "iteration_s"), 2);
  ck_assert_int_eq(ooc_table_col(&r, "nosuch"), -1);

  /* JSON: names stay strings, numbers are numbers, empty is null. */
  f = fopen(path, "w");
  ck_assert_int_eq(ooc_table_write_json(f, &r), OOC_OK);
  fclose(f);
  {
    char *text = NULL;
    size_t len;
    FILE *in = fopen(path, "r");
    text = calloc(1, 4096);
    len = fread(text, 1, 4095, in);
    fclose(in);
    ck_assert_uint_gt(len, 0);
    ck_assert_ptr_nonnull(strstr(text, "\"model\": \"a,b\""));
    ck_assert_ptr_nonnull(strstr(text, "\"iteration_s\": 1.5"));
    ck_assert_ptr_nonnull(strstr(text, "\"iteration_s\": null"));
    ck_assert_ptr_nonnull(strstr(text, "say \\\"hi\\\"\\nthen go"));
    free(text);
  }
  ooc_table_fini(&r);
  ooc_table_fini(&t);

  /* A row with the wrong number of fields names the line. */
  ck_assert_int_eq(csv_text(path, "a,b\n1,2\n3\n", &r, &err), OOC_EPARSE);
  ck_assert_ptr_nonnull(strstr(err.msg, ":3: 1 fields, the header has 2"));

  /* A quoted cell may hold line breaks: each row keeps the line it
   * starts on, and a bad row is named by it. */
  ck_assert_int_eq(csv_text(path, "a,b\n\"x\ny\",2\n\"3\n4\"\n", &r, &err), OOC_EPARSE);
  ck_assert_ptr_nonnull(strstr(err.msg, ":4: 1 fields, the header has 2"));
  ck_assert_int_eq(csv_text(path, "a,b\n\"x\ny\",\"1\n\n2\"\n3,4\n", &r, &err), OOC_OK);
  ck_assert_int_eq(r.nrows, 2);
  ck_assert_int_eq(ooc_table_row_line(&r, 0), 2);
  ck_assert_int_eq(ooc_table_row_line(&r, 1), 6);
  ooc_table_fini(&r);
  /* A row made in memory: the line it takes when written. */
  {
    char c1[] = "1", c2[] = "2", *v[] = { c1, c2 };
    char **row = ooc_strv_dup(v, 2);
    ooc_table_init(&r);
    r.ncols = 2;
    r.cols = ooc_strv_dup(v, 2);
    ck_assert_ptr_nonnull(row);
    ck_assert_ptr_nonnull(r.cols);
    ck_assert_int_eq(ooc_table_push(&r, row), OOC_OK);
    ck_assert_int_eq(ooc_table_row_line(&r, 0), 2);
    ooc_table_fini(&r);
  }

  /* A ',' at the very end of the file ends a last, empty field: the
   * record is checked, not dropped (and not leaked, under ASan). */
  ck_assert_int_eq(csv_text(path, "a,b,c\n1,2,3\n4,", &r, &err), OOC_EPARSE);
  ck_assert_ptr_nonnull(strstr(err.msg, ":3: 2 fields, the header has 3"));
  ck_assert_int_eq(csv_text(path, "a,b\n1,2\n4,", &r, &err), OOC_OK);
  ck_assert_int_eq(r.nrows, 2);
  ck_assert_str_eq(r.rows[1][0], "4");
  ck_assert_str_eq(r.rows[1][1], "");
  ooc_table_fini(&r);
  remove(path);
}
END_TEST

START_TEST(test_run_resume)
{
  ooc_sweep_grid g;
  ooc_sweep_opts o = { .jobs = 2, .resume = 1 };
  ooc_sweep_stats st;
  ooc_table t;
  ooc_err err = { 0 };
  char dir[] = "/tmp/check_sweep_run_XXXXXX";
  char path[300];

  ck_assert_ptr_nonnull(mkdtemp(dir));
  o.dir = dir;
  ooc_sweep_grid_init(&g);
  ooc_sweep_set_model(&g, "alexnet", &err);
  ooc_sweep_parse_batches(&g, "32,64", &err);
  ooc_sweep_parse_hw(&g, "v100-pcie3", &err);
  ooc_sweep_parse_planners(&g, "vdnn,window", &err);
  ck_assert_int_eq(ooc_sweep_grid_check(&g, &err), OOC_OK);
  ooc_table_init(&t);
  ck_assert_int_eq(ooc_sweep_run(&g, &o, &st, &t, &err), OOC_OK);
  ck_assert_int_eq(st.points, 4);
  ck_assert_int_eq(st.ran, 4);
  ck_assert_int_eq(st.failed, 0);
  ck_assert_int_eq(t.nrows, 4);
  /* grid order: planner, then batch */
  ck_assert_str_eq(t.rows[0][ooc_table_col(&t, "planner")], "vdnn");
  ck_assert_str_eq(t.rows[1][ooc_table_col(&t, "batch")], "64");
  ck_assert_str_eq(t.rows[2][ooc_table_col(&t, "planner")], "window");
  ck_assert_str_eq(t.rows[3][ooc_table_col(&t, "feasible")], "1");
  ooc_table_fini(&t);
  ck_assert_int_eq(ooc_sweep_run(&g, &o, &st, NULL, &err), OOC_OK);
  ck_assert_int_eq(st.skipped, 4);
  ck_assert_int_eq(st.ran, 0);
  ooc_sweep_grid_fini(&g);
  for (int i = 0; i < 3; i++) {
    static const char *const f[] = { "results.csv", "results.json",
                                     "grid.json" };
    snprintf(path, sizeof path, "%s/%s", dir, f[i]);
    ck_assert_int_eq(access(path, R_OK), 0);
    remove(path);
  }
  rmdir(dir);
}
END_TEST

/* Remove a run's files and its directory. */
static void
rm_run_dir(const char *dir)
{
  static const char *const f[] = { "results.csv", "results.json",
                                   "grid.json" };
  char path[300];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, f[i]);
    remove(path);
  }
  rmdir(dir);
}

/* Workers claim points unit by unit (hw, batch), not in grid order; the
 * rows still come out in grid order (hw, allocator, planner, batch, the
 * last fastest) and equal those of a one-thread run, wall times aside. */
START_TEST(test_run_parallel_order)
{
  static const char *const hws[] = { "v100-pcie3", "a100-pcie4" };
  static const char *const allocs[] = { "caching", "va" };
  static const char *const pls[] = { "vdnn", "window" };
  static const char *const bs[] = { "32", "64", "128" };
  ooc_sweep_grid g;
  ooc_sweep_opts o4 = { .jobs = 4, .resume = 0 };
  ooc_sweep_opts o1 = { .jobs = 1, .resume = 0 };
  ooc_sweep_stats st;
  ooc_table t4, t1;
  ooc_err err = { 0 };
  char d4[] = "/tmp/check_sweep_par_XXXXXX";
  char d1[] = "/tmp/check_sweep_one_XXXXXX";
  int hc, ac, pc, bc;

  ck_assert_ptr_nonnull(mkdtemp(d4));
  ck_assert_ptr_nonnull(mkdtemp(d1));
  o4.dir = d4;
  o1.dir = d1;
  ooc_sweep_grid_init(&g);
  ooc_sweep_set_model(&g, "alexnet", &err);
  ooc_sweep_parse_batches(&g, "32,64,128", &err);
  ooc_sweep_parse_hw(&g, "v100-pcie3,a100-pcie4", &err);
  ooc_sweep_parse_allocators(&g, "caching,va", &err);
  ooc_sweep_parse_planners(&g, "vdnn,window", &err);
  ck_assert_int_eq(ooc_sweep_grid_check(&g, &err), OOC_OK);
  ooc_table_init(&t4);
  ooc_table_init(&t1);
  ck_assert_int_eq(ooc_sweep_run(&g, &o4, &st, &t4, &err), OOC_OK);
  ck_assert_int_eq(st.ran, 24);
  ck_assert_int_eq(ooc_sweep_run(&g, &o1, &st, &t1, &err), OOC_OK);
  ck_assert_int_eq(t4.nrows, 24);
  ck_assert_int_eq(t1.nrows, 24);
  hc = ooc_table_col(&t4, "hw");
  ac = ooc_table_col(&t4, "allocator");
  pc = ooc_table_col(&t4, "planner");
  bc = ooc_table_col(&t4, "batch");
  ck_assert_str_eq(t4.cols[t4.ncols - 2], "plan_wall_s");
  for (int i = 0; i < 24; i++) {
    ck_assert_str_eq(t4.rows[i][hc], hws[i / 12]);
    ck_assert_str_eq(t4.rows[i][ac], allocs[i / 6 % 2]);
    ck_assert_str_eq(t4.rows[i][pc], pls[i / 3 % 2]);
    ck_assert_str_eq(t4.rows[i][bc], bs[i % 3]);
    for (int c = 0; c < t4.ncols - 2; c++)
      ck_assert_str_eq(t4.rows[i][c], t1.rows[i][c]);
  }
  ooc_table_fini(&t4);
  ooc_table_fini(&t1);
  ooc_sweep_grid_fini(&g);
  rm_run_dir(d4);
  rm_run_dir(d1);
}
END_TEST

static Suite *
sweep_suite(void)
{
  Suite *s = suite_create("sweep");
  TCase *tc = tcase_create("grid");
  tcase_add_test(tc, test_batches);
  tcase_add_test(tc, test_grid_header);
  tcase_add_test(tc, test_grid_check_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("table");
  tcase_add_test(tc, test_csv_roundtrip);
  suite_add_tcase(s, tc);
  tc = tcase_create("run");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_run_resume);
  tcase_add_test(tc, test_run_parallel_order);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(sweep_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
