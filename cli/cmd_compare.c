/* cli/cmd_compare.c — `oocsim compare -m M -b B --hw H [-p LIST|all]
 * [--budget SIZE] [--allocator A] [--opt K=V] [--format table|md|csv|json]`:
 * every chosen planner on one scenario, sorted by iteration time (infeasible
 * last). The model, profile, costs, liveness and the in-core baseline are
 * computed once (ooc_scenario_open) and shared by every planner. "all" (the
 * default) is every registered planner, the baselines incore and naive
 * included. An --opt goes to the planners that accept its key; a key no
 * chosen planner accepts is an error. Cost: one plan + simulation per
 * planner plus one in-core simulation.
 */
#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/args.h"
#include "planners/registry.h"
#include "analysis/scenario.h"
#include "base/strv.h"
#include "base/util.h"
#include "report/doc.h"
#include "report/table.h"

static const ooc_cli_doc doc = {
  .name = "compare", .cmd = OOC_CMD_COMPARE,
  .usage = "Usage: oocsim compare -m MODEL -b BATCH --hw HW [-p P1,P2,...|all]\n"
           "                      [--budget SIZE] [--allocator A] [--opt K=V ...]\n"
           "                      [--format table|md|csv|json]\n",
  .about =
    "Run several planners on one scenario and rank them by iteration\n"
    "time (infeasible plans last). For each: samples/s, slowdown against\n"
    "in-core training on an unlimited device, distance to the lower bound\n"
    "(iteration / bound), peak reserved memory, bytes moved each way,\n"
    "compute stall time, and feasibility or the out-of-memory reason. 'all'\n"
    "(the default) is every registered planner, the incore and naive\n"
    "baselines included (see 'oocsim list planners'). When no planner fits\n"
    "and no --budget was given, the table adds the smallest budget at\n"
    "which one does (oocsim minbudget). --format csv writes the rows of\n"
    "docs/output-schema.md, the columns of a sweep's results.csv.\n",
  .examples =
    "  oocsim compare -m resnet50 -b 512 --hw v100-nvlink2 -p all\n"
    "  oocsim compare -m resnet50 -b 256 --hw v100-pcie3 --format csv\n",
};

struct row {
  ooc_summary s;
  int order;          /* position in the planner list (tie break) */
};

static int
cmp_rows(const void *pa, const void *pb)
{
  const struct row *a = pa, *b = pb;
  if (a->s.feasible != b->s.feasible)
    return a->s.feasible ? -1 : 1;
  if (a->s.feasible && a->s.iteration_s != b->s.iteration_s)
    return a->s.iteration_s < b->s.iteration_s ? -1 : 1;
  return a->order - b->order;
}

/* "ok" or "OOM at OP: reason" into buf; commas and pipes are kept out so
 * the md form needs no quoting. */
static const char *
status(const ooc_summary *s, char *buf, size_t n)
{
  char *p;
  if (s->feasible)
    return "ok";
  snprintf(buf, n, "OOM at %s: %s", s->oom_op, s->oom.reason);
  for (p = buf; *p; p++)
    if (*p == ',' || *p == '|' || *p == '"' || *p == '\n')
      *p = ';';
  return buf;
}

static double
gib(uint64_t b)
{
  return (double)b / 1073741824.0;
}

/* The identity columns of a compare row (docs/output-schema.md), the
 * same as a sweep's coordinates: model, set, hw, one hw_set:KEY per
 * --hw-set, allocator, budget, planner, batch, dtype, optimizer. */
static int
csv_header(const ooc_cli_args *a, ooc_table *t)
{
  int n = 9 + a->n_hw_sets + OOC_SUMMARY_NCOLS, k = 0, i;
  char **c = calloc((size_t)n, sizeof *c), buf[300];

  if (c == NULL)
    return OOC_ENOMEM;
  t->cols = c;
  t->ncols = n;
  c[k++] = strdup("model");
  c[k++] = strdup("set");
  c[k++] = strdup("hw");
  for (i = 0; i < a->n_hw_sets; i++) {
    snprintf(buf, sizeof buf, "hw_set:%s", a->hw_sets[i].key);
    c[k++] = strdup(buf);
  }
  c[k++] = strdup("allocator");
  c[k++] = strdup("budget");
  c[k++] = strdup("planner");
  c[k++] = strdup("batch");
  c[k++] = strdup("dtype");
  c[k++] = strdup("optimizer");
  for (i = 0; ooc_summary_columns[i] != NULL; i++)
    c[k++] = strdup(ooc_summary_columns[i]);
  for (i = 0; i < n; i++)
    if (c[i] == NULL)
      return OOC_ENOMEM;
  return OOC_OK;
}

static int
csv_row(const ooc_cli_args *a, const ooc_summary *s, int ncols, char ***out)
{
  char **c = calloc((size_t)ncols, sizeof *c), buf[1024];
  size_t len = 0;
  int k = 0, i;

  *out = c;
  if (c == NULL)
    return OOC_ENOMEM;
  buf[0] = '\0';
  for (i = 0; i < a->n_sets && len < sizeof buf; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s=%s",
                            i ? ";" : "", a->sets[i].key, a->sets[i].value);
  c[k++] = strdup(a->model);
  c[k++] = strdup(buf);
  c[k++] = strdup(a->hw);
  for (i = 0; i < a->n_hw_sets; i++)
    c[k++] = strdup(a->hw_sets[i].value);
  c[k++] = strdup(s->allocator);
  c[k++] = strdup(a->budget_arg != NULL ? a->budget_arg : "default");
  c[k++] = strdup(s->planner);
  snprintf(buf, sizeof buf, "%lld", (long long)s->batch);
  c[k++] = strdup(buf);
  c[k++] = strdup(ooc_dtype_name(s->dtype));
  c[k++] = strdup(ooc_optimizer_name(s->optimizer));
  for (i = 0; i < k; i++)
    if (c[i] == NULL)
      return OOC_ENOMEM;
  return ooc_summary_cells(s, c + k);
}

/* The rows as CSV in the schema every table shares (a sweep's
 * results.csv has the same columns). */
static int
print_csv(const ooc_cli_args *a, const struct row *rows, int n)
{
  ooc_table t;
  int i, rc;

  ooc_table_init(&t);
  if ((rc = csv_header(a, &t)) < 0)
    goto out;
  for (i = 0; i < n; i++) {
    char **r;
    if ((rc = csv_row(a, &rows[i].s, t.ncols, &r)) < 0 ||
        (rc = ooc_table_push(&t, r)) < 0) {
      ooc_strv_free(r, t.ncols);
      goto out;
    }
  }
  rc = ooc_table_write_csv(stdout, &t);
out:
  ooc_table_fini(&t);
  return rc;
}

/* Table and Markdown share the columns; md adds the pipes. Memory is the
 * peak reserved by the allocator (what the device must hold). */
static void
print_table(const struct row *rows, int n, int md)
{
  static const char *const head[] = {
    "planner", "samples/s", "slowdown", "vs bound", "peak reserved GiB",
    "H2D GiB", "D2H GiB", "stall s", "status",
  };
  int width[] = { 10, 9, 9, 9, 17, 9, 9, 9, 0 };
  char cell[8][32], st[400];
  const char *sv;
  int i, c, unsteady = 0;

  /* The first column as wide as the longest planner name (checkpoint-dp,
   * zero-offload), so that the columns after it line up. */
  for (i = 0; i < n; i++)
    if ((int)strlen(rows[i].s.planner) + 1 > width[0])
      width[0] = (int)strlen(rows[i].s.planner) + 1;

  for (c = 0; c < 9; c++) {
    if (md)
      printf("| %s ", head[c]);
    else if (c == 0)
      printf("%-*s", width[c], head[c]);
    else if (c == 8)
      printf("  %s", head[c]);
    else
      printf(" %*s", width[c], head[c]);
  }
  puts(md ? "|\n|---|---:|---:|---:|---:|---:|---:|---:|---|" : "");
  for (i = 0; i < n; i++) {
    const ooc_summary *s = &rows[i].s;
    snprintf(cell[0], sizeof cell[0], "%s", s->planner);
    if (s->feasible) {
      snprintf(cell[1], sizeof cell[1], "%.1f", s->samples_per_s);
      snprintf(cell[2], sizeof cell[2], "%.3f", s->slowdown);
      snprintf(cell[3], sizeof cell[3], "%.3f", ooc_summary_vs_bound(s));
    } else {
      snprintf(cell[1], sizeof cell[1], "-");
      snprintf(cell[2], sizeof cell[2], "-");
      snprintf(cell[3], sizeof cell[3], "-");
    }
    snprintf(cell[4], sizeof cell[4], "%.2f", gib(s->peak_reserved_bytes));
    if (s->feasible) {
      snprintf(cell[5], sizeof cell[5], "%.2f", gib(s->h2d_bytes));
      snprintf(cell[6], sizeof cell[6], "%.2f", gib(s->d2h_bytes));
      snprintf(cell[7], sizeof cell[7], "%.4f", ooc_summary_stall_s(s));
    } else {
      /* An iteration's figures: it ran out before the end. */
      snprintf(cell[5], sizeof cell[5], "-");
      snprintf(cell[6], sizeof cell[6], "-");
      snprintf(cell[7], sizeof cell[7], "-");
    }
    if (s->feasible && !s->steady && !s->measured) {
      sv = "ok (not steady)";
      unsteady = 1;
    } else {
      sv = status(s, st, sizeof st);
    }
    if (md) {
      for (c = 0; c < 8; c++)
        printf("| %s ", cell[c]);
      /* A reason may name a layer: its '<' as text (status() made its
       * '|' a ';'). */
      fputs("| ", stdout);
      ooc_doc_md_cell(stdout, sv);
      puts(" |");
    } else {
      printf("%-*s", width[0], cell[0]);
      for (c = 1; c < 8; c++)
        printf(" %*s", width[c], cell[c]);
      printf("  %s\n", sv);
    }
  }
  if (unsteady)
    printf("\nnot steady: the allocator still took or gave back device "
           "memory in the last iteration simulated; a longer run may differ "
           "or run out of memory (--steady plans and simulates until it "
           "settles)\n");
}

static int
print_json(const struct row *rows, int n)
{
  cJSON *arr = cJSON_CreateArray();
  char *text;
  int i;

  if (arr == NULL)
    return OOC_ENOMEM;
  for (i = 0; i < n; i++) {
    cJSON *o = ooc_summary_to_cjson(&rows[i].s);
    if (o == NULL || !cJSON_AddItemToArray(arr, o)) {
      cJSON_Delete(o);
      cJSON_Delete(arr);
      return OOC_ENOMEM;
    }
  }
  text = cJSON_Print(arr);
  cJSON_Delete(arr);
  if (text == NULL)
    return OOC_ENOMEM;
  puts(text);
  free(text);
  return OOC_OK;
}


/* A row for a planner that returned an error instead of a plan: the
 * scenario's figures, feasible false, the planner's message as the reason. */
static int
error_row(ooc_scenario *sc, const ooc_scenario_spec *spec, const char *name,
          const char *msg, ooc_summary *s, ooc_err *err)
{
  const ooc_model *m = ooc_scenario_model(sc);
  const ooc_hw *hw = ooc_scenario_hw(sc);
  double incore, compute;
  int rc;

  ooc_summary_fini(s);
  if ((rc = ooc_scenario_baseline(sc, &incore, &compute, err)) < 0)
    return rc;
  s->model = strdup(m->name);
  s->hw = strdup(hw->name);
  s->planner = strdup(name);
  s->allocator = strdup(spec->allocator != NULL ? spec->allocator
                                                : "caching");
  s->oom_op = strdup("planning");
  s->plan_note = strdup("");
  if (!s->model || !s->hw || !s->planner || !s->allocator || !s->oom_op ||
      !s->plan_note) {
    ooc_summary_fini(s);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  s->batch = m->batch;
  s->dtype = m->dtype;
  s->optimizer = m->optimizer;
  s->budget_bytes = spec->budget != 0 ? spec->budget : hw->mem_usable;
  s->oom = (ooc_oom){ .instr = -1, .tensor = -1, .layer = -1 };
  snprintf(s->oom.reason, sizeof s->oom.reason, "%.*s",
           (int)sizeof s->oom.reason - 1, msg);
  s->incore_iteration_s = incore;
  s->compute_s = compute;
  s->lower_bound_s = ooc_scenario_lower_bound(sc, s->budget_bytes, compute);
  return OOC_OK;
}

int
ooc_cmd_compare(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_scenario_spec spec;
  ooc_scenario *sc = NULL;
  const ooc_planner_type **ts = NULL;
  struct row *rows = NULL;
  ooc_kv *opts = NULL;
  const char *fmt;
  int n = 0, nrows = 0, i, j, rc = 1;

  if (ooc_cli_args_start(&a, argc, argv, &doc, 0,
                         OOC_CLI_MODEL | OOC_CLI_BATCH | OOC_CLI_HW, &rc))
    goto done;
  fmt = a.json ? "json" : a.format != NULL ? a.format : "table";
  if (ooc_cli_parse_planners(a.planner != NULL ? a.planner : "all", &ts, &n, &err) < 0)
    goto fail;
  if (ooc_allocator_find(a.allocator != NULL ? a.allocator : "caching",
                         NULL, &err) == NULL) {
    ooc_err_prefix(&err, err.code, "--allocator: ");
    goto fail;
  }
  if (ooc_cli_check_opts(&a, ts, n, &err) < 0)
    goto fail;
  ooc_cli_args_spec(&a, &spec);
  if (ooc_scenario_open(&spec, &sc, &err) < 0)
    goto fail;
  for (i = 0, j = 0; i < n; i++)
    j |= (ts[i]->flags & OOC_PLANNER_OFFLOAD) != 0;
  if (ooc_scenario_check_budget_for(sc, spec.budget, j, &err) < 0) {
    ooc_err_prefix(&err, err.code, "--budget: ");
    goto fail;
  }
  rows = calloc((size_t)n, sizeof *rows);
  opts = calloc((size_t)a.n_opts + 1, sizeof *opts);
  if (rows == NULL || opts == NULL) {
    ooc_err_set(&err, OOC_ENOMEM, "out of memory");
    goto fail;
  }
  for (i = 0; i < n; i++) {
    ooc_scenario_spec ps = spec;
    ooc_err perr = { 0 };
    int k = ooc_planner_opts_for(ts[i], a.opts, a.n_opts, opts);

    ps.planner = ts[i]->name;
    ps.opts = opts;
    ps.n_opts = k;
    rows[i].order = i;
    /* A budget only an offloading planner of the list can meet (checked
     * above against the offload floor) is a result for the others, in the
     * words of their own check, as a sweep point's (report/sweep_runner.c). */
    ooc_err why = { 0 };
    if (j && !(ts[i]->flags & OOC_PLANNER_OFFLOAD) &&
        ooc_scenario_check_budget_for(sc, spec.budget, 0, &why) < 0) {
      if (ooc_scenario_no_fit(sc, &ps, why.msg, &rows[i].s, &err) < 0) {
        nrows = i;
        goto fail;
      }
    } else if (ooc_scenario_run_in(sc, &ps, &rows[i].s, NULL, &perr) < 0) {
      /* A planner that reports it cannot fit (OOC_EOOM) is a result, shown
       * as an infeasible row; anything else (a bad option value, a bug) is
       * an error, as in simulate. */
      if (perr.code != OOC_EOOM) {
        err = perr;
        nrows = i;
        goto fail;
      }
      if (error_row(sc, &spec, ts[i]->name, perr.msg, &rows[i].s, &err) < 0) {
        nrows = i;
        goto fail;
      }
    }
    if (a.no_timing)
      ooc_summary_clear_timing(&rows[i].s);
  }
  nrows = n;
  qsort(rows, (size_t)n, sizeof *rows, cmp_rows);
  if (strcmp(fmt, "json") == 0) {
    if (print_json(rows, n) < 0) {
      ooc_err_set(&err, OOC_ENOMEM, "out of memory");
      goto fail;
    }
  } else if (strcmp(fmt, "csv") == 0) {
    if (print_csv(&a, rows, n) < 0) {
      ooc_err_set(&err, OOC_ENOMEM, "cannot write the CSV");
      goto fail;
    }
  } else {
    const ooc_summary *s0 = &rows[0].s;
    char b1[32];
    if (strcmp(fmt, "table") == 0)
      printf("%s, batch %lld, %s on %s; %s allocator, budget %s\n"
             "in-core %.6f s/iteration on an unlimited device; lower bound "
             "%.6f s\n\n",
             s0->model, (long long)s0->batch, ooc_dtype_name(s0->dtype),
             s0->hw, s0->allocator,
             ooc_fmt_bytes(s0->budget_bytes, b1, sizeof b1),
             s0->incore_iteration_s, s0->lower_bound_s);
    print_table(rows, n, strcmp(fmt, "md") == 0);
    /* No planner fits the profile's memory: say what budget would. */
    if (!rows[0].s.feasible && a.budget == 0) {
      if (strcmp(fmt, "md") == 0)
        putchar('\n');
      if ((rc = ooc_cli_minbudget_hint(stdout, &spec, ts, n)) != 0)
        goto done;
    }
  }
  rc = 0;
  goto done;
fail:
  rc = ooc_cli_fail("%s", err.msg);
done:
  for (i = 0; i < nrows; i++)
    ooc_summary_fini(&rows[i].s);
  free(rows);
  free(opts);
  free(ts);
  ooc_scenario_close(sc);
  ooc_cli_args_fini(&a);
  return rc;
}
