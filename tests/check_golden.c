/* tests/check_golden.c — golden scenarios: a model, batch, profile,
 * planner and allocator each, with the summary object oocsim gave for it,
 * compared field by field (the .json files of tests/golden).
 *
 * Each file is {"scenario": {...}, "summary": {...}}: the scenario names
 * the model, batch, hw, planner and allocator (and optionally "set",
 * "hw_set", "opts", "budget", "dtype"); the summary is what `oocsim
 * simulate ... --json --no-timing` printed. Numbers must agree to a
 * relative 1e-9 (the simulator is integer nanoseconds; the margin only
 * absorbs the decimal printing of seconds), strings, booleans and nulls
 * exactly; every field of the file must be present in the run's summary.
 * The first field that differs is reported with both values.
 *
 * A deliberate change of results regenerates the files:
 *   OOCSIM_GOLDEN_WRITE=1 tests/check_golden
 * and the commit says what changed and why.
 */
#include "config.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scenario.h"
#include "base/util.h"

#define GOLDEN OOC_SRCDIR "/tests/golden"

/* Compare expected e with got g at path; returns 0 and fills why on the
 * first difference. */
static int
same(const cJSON *e, const cJSON *g, const char *path, char *why, size_t n)
{
  char sub[256];
  const cJSON *x;

  if (g == NULL) {
    snprintf(why, n, "%s: missing", path);
    return 0;
  }
  if (cJSON_IsNumber(e)) {
    double a = e->valuedouble, b;
    if (!cJSON_IsNumber(g)) {
      snprintf(why, n, "%s: expected %.17g, got a non-number", path, a);
      return 0;
    }
    b = g->valuedouble;
    if (fabs(a - b) > 1e-9 * fmax(fabs(a), fabs(b)) && fabs(a - b) > 1e-12) {
      snprintf(why, n, "%s: expected %.17g, got %.17g", path, a, b);
      return 0;
    }
    return 1;
  }
  if (cJSON_IsString(e)) {
    if (!cJSON_IsString(g) || strcmp(e->valuestring, g->valuestring) != 0) {
      snprintf(why, n, "%s: expected \"%s\", got %s%s%s", path,
               e->valuestring, cJSON_IsString(g) ? "\"" : "",
               cJSON_IsString(g) ? g->valuestring : "a non-string",
               cJSON_IsString(g) ? "\"" : "");
      return 0;
    }
    return 1;
  }
  if (cJSON_IsObject(e)) {
    if (!cJSON_IsObject(g)) {
      snprintf(why, n, "%s: expected an object", path);
      return 0;
    }
    cJSON_ArrayForEach(x, e) {
      snprintf(sub, sizeof sub, "%s.%s", path, x->string);
      if (!same(x, cJSON_GetObjectItemCaseSensitive(g, x->string), sub, why,
                n))
        return 0;
    }
    return 1;
  }
  if (e->type != g->type) {
    snprintf(why, n, "%s: expected %s, got another type", path,
             cJSON_IsNull(e) ? "null" : cJSON_IsTrue(e) ? "true" : "false");
    return 0;
  }
  return 1;
}

/* A string member of o, or NULL. */
static const char *
str(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Key/value pairs of object o into kv (at most n). */
static int
pairs(const cJSON *o, ooc_kv *kv, int n)
{
  const cJSON *x;
  int k = 0;

  cJSON_ArrayForEach(x, o) {
    ck_assert_int_lt(k, n);
    ck_assert_msg(cJSON_IsString(x), "%s must be a string", x->string);
    kv[k].key = x->string;
    kv[k].value = x->valuestring;
    k++;
  }
  return k;
}

/* Run the scenario of one golden file and compare (or rewrite it). */
static void
check_file(const char *path)
{
  char *text = NULL, why[512];
  size_t len = 0;
  cJSON *root, *sc, *want, *got;
  ooc_kv sets[8], opts[8], hwkv[8];
  ooc_hw_override hws[8];
  ooc_scenario_spec spec = { 0 };
  ooc_summary sum = { 0 };
  ooc_err err = { 0 };
  const char *v;
  int i, n_hw;

  ck_assert_msg(ooc_read_file(path, &text, &len, &err) == OOC_OK, "%s",
                err.msg);
  root = cJSON_Parse(text);
  ck_assert_msg(root != NULL, "%s: not JSON", path);
  sc = cJSON_GetObjectItemCaseSensitive(root, "scenario");
  want = cJSON_GetObjectItemCaseSensitive(root, "summary");
  ck_assert_msg(cJSON_IsObject(sc), "%s: no scenario object", path);
  spec.model = str(sc, "model");
  spec.hw = str(sc, "hw");
  spec.planner = str(sc, "planner");
  spec.allocator = str(sc, "allocator");
  spec.batch = (int64_t)cJSON_GetNumberValue(
      cJSON_GetObjectItemCaseSensitive(sc, "batch"));
  if ((v = str(sc, "dtype")) != NULL) {
    ck_assert_int_eq(ooc_dtype_parse(v, &spec.dtype), OOC_OK);
    spec.dtype_set = 1;
  }
  if ((v = str(sc, "budget")) != NULL)
    ck_assert_int_eq(ooc_parse_size(v, "budget", &spec.budget, &err),
                     OOC_OK);
  spec.sets = sets;
  spec.n_sets = pairs(cJSON_GetObjectItemCaseSensitive(sc, "set"), sets, 8);
  spec.opts = opts;
  spec.n_opts = pairs(cJSON_GetObjectItemCaseSensitive(sc, "opts"), opts, 8);
  n_hw = pairs(cJSON_GetObjectItemCaseSensitive(sc, "hw_set"), hwkv, 8);
  for (i = 0; i < n_hw; i++)
    hws[i] = (ooc_hw_override){ .key = hwkv[i].key, .value = hwkv[i].value };
  spec.hw_sets = hws;
  spec.n_hw_sets = n_hw;
  ck_assert_msg(ooc_scenario_run(&spec, &sum, NULL, &err) == OOC_OK,
                "%s: %s", path, err.msg);
  ooc_summary_clear_timing(&sum);
  got = ooc_summary_to_cjson(&sum);
  ck_assert_ptr_nonnull(got);
  if (getenv("OOCSIM_GOLDEN_WRITE") != NULL) {
    cJSON *out = cJSON_CreateObject();
    char *s;
    FILE *f;
    cJSON_AddItemToObject(out, "scenario", cJSON_Duplicate(sc, 1));
    cJSON_AddItemToObject(out, "summary", cJSON_Duplicate(got, 1));
    s = cJSON_Print(out);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s\n", s);
    ck_assert_int_eq(fclose(f), 0);
    cJSON_free(s);
    cJSON_Delete(out);
    fprintf(stderr, "rewrote %s\n", path);
  } else {
    ck_assert_msg(cJSON_IsObject(want), "%s: no summary object", path);
    ck_assert_msg(same(want, got, "summary", why, sizeof why), "%s: %s",
                  path, why);
  }
  cJSON_Delete(got);
  cJSON_Delete(root);
  ooc_summary_fini(&sum);
  free(text);
}

START_TEST(test_golden)
{
  DIR *d = opendir(GOLDEN);
  struct dirent *e;
  char path[1024];
  char **names = NULL;
  int n = 0, cap = 0, i;

  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      names = realloc(names, (size_t)cap * sizeof *names);
      ck_assert_ptr_nonnull(names);
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  /* About ten scenarios, so that a lost file does not go unnoticed. */
  ck_assert_int_ge(n, 10);
  for (i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s", GOLDEN, names[i]);
    check_file(path);
    free(names[i]);
  }
  free(names);
}
END_TEST

/* The comparison itself: it catches a changed number, string and a
 * missing field. */
START_TEST(test_compare)
{
  cJSON *a = cJSON_Parse("{\"x\": 1.5, \"s\": \"a\", \"o\": {\"y\": null}}");
  cJSON *b = cJSON_Parse("{\"x\": 1.5000000000001, \"s\": \"a\", "
                         "\"o\": {\"y\": null}, \"extra\": 3}");
  cJSON *c = cJSON_Parse("{\"x\": 1.6, \"s\": \"a\", \"o\": {\"y\": null}}");
  cJSON *d = cJSON_Parse("{\"x\": 1.5, \"s\": \"b\", \"o\": {}}");
  char why[256];

  ck_assert(same(a, b, "summary", why, sizeof why));
  ck_assert(!same(a, c, "summary", why, sizeof why));
  ck_assert_str_eq(why, "summary.x: expected 1.5, got 1.6000000000000001");
  ck_assert(!same(a, d, "summary", why, sizeof why));
  ck_assert_str_eq(why, "summary.s: expected \"a\", got \"b\"");
  cJSON_DeleteItemFromObject(d, "s");
  cJSON_AddStringToObject(d, "s", "a");
  ck_assert(!same(a, d, "summary", why, sizeof why));
  ck_assert_str_eq(why, "summary.o.y: missing");
  cJSON_Delete(a);
  cJSON_Delete(b);
  cJSON_Delete(c);
  cJSON_Delete(d);
}
END_TEST

static Suite *
golden_suite(void)
{
  Suite *s = suite_create("golden");
  TCase *tc = tcase_create("scenarios");

  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_compare);
  tcase_add_test(tc, test_golden);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(golden_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
